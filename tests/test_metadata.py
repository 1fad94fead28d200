"""Page metadata (edrew_scrapy/metadata.py) on small pages: JSON-LD, Open Graph, microdata, none, hostile."""
from __future__ import annotations

import datetime as dt
import json
import logging

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from edrew_scrapy import metadata
from edrew_scrapy.extract import ExtractedNode, Extraction
from edrew_scrapy.metadata import (
    METADATA_FIELDS,
    Metadata,
    bcp47,
    describe,
    headline_from_title,
    page_metadata,
    read_declared,
)
from edrew_scrapy.serializer import serialize

TODAY = dt.date(2026, 11, 27)
URL = "https://news.example.com/2025/09/04/council-story"


def meta_of(html, **kw) -> Metadata:
    return page_metadata(html, url=kw.pop("url", URL), today=TODAY, **kw)


JSONLD = """<!doctype html><html lang="en-gb"><head><title>Council backs bike lanes | Riverside Gazette</title>
<script type="application/ld+json">{"@context": "https://schema.org", "@graph": [
 {"@type": "WebSite", "name": "Riverside Gazette"},
 {"@type": "NewsArticle", "headline": "Council backs bike lanes on Quay Road",
  "author": [{"@type": "Person", "name": "Maya Okonkwo"}, {"@type": "Person", "name": "Tom &amp; Jo"}],
  "datePublished": "2025-09-04T08:30:00+01:00", "dateModified": "2025-09-05",
  "description": "A two-way cycle track.", "publisher": {"@type": "Organization", "name": "Gazette Ltd"}}]}
</script></head><body><h1>Something else</h1><p>Body text of the article, long enough.</p></body></html>"""


def test_json_ld_article():
    m = meta_of(JSONLD)
    assert m.headline == "Council backs bike lanes on Quay Road"
    assert m.author == ["Maya Okonkwo", "Tom & Jo"]
    assert (m.date_published, m.date_modified) == ("2025-09-04", "2025-09-05")
    assert m.language == "en-GB" and m.site_name == "Riverside Gazette"
    assert m.description == "A two-way cycle track." and m.skipped == ()
    assert list(m.fields()) == list(METADATA_FIELDS)


OPENGRAPH = """<html><head><title>ignored</title>
<meta property="og:title" content="How to fix a puncture | Cycle Shop">
<meta property="og:site_name" content="Cycle Shop"><meta property="og:locale" content="de_DE">
<meta property="article:published_time" content="2024-03-01T10:00:00Z">
<meta name="description" content="Step by step."><meta name="author" content="By Jane Roe">
</head><body><p>Text</p></body></html>"""


def test_open_graph_and_meta():
    m = meta_of(OPENGRAPH)
    assert m.headline == "How to fix a puncture"  # the site's name after the separator is dropped
    assert m.site_name == "Cycle Shop" and m.language == "de-DE"
    assert m.date_published == "2024-03-01" and m.date_modified is None
    assert m.author == ["Jane Roe"] and m.description == "Step by step."


# several names in one attribute, as RDFa allows (Readability.js's test pages write them so)
SPACE_SEPARATED = """<html><head><meta charset="utf-8"><title>Title Element</title>
<meta property="x:title og:title" content="Tide tables explained">
<meta property="x:name og:site_name" content="Harbour Weekly">
<meta property="dc:description  og:description" content="When the water comes in.">
<meta property="x:creator author" content="Ana Pires">
<meta name="updated date" content="2020-01-02"><meta itemprop="dateCreated datePublished" content="2020-01-03">
</head><body><p>Text</p></body></html>"""


def test_each_of_several_names_in_a_meta_attribute_is_read():
    m = meta_of(SPACE_SEPARATED, url="https://harbour.example/tides")
    assert m.headline == "Tide tables explained" and m.site_name == "Harbour Weekly"
    assert m.description == "When the water comes in." and m.author == ["Ana Pires"]
    declared = read_declared(SPACE_SEPARATED, dates=False)
    assert declared.og["og:description"] == declared.meta["dc:description"] == "When the water comes in."
    assert "og:title" in declared.og and "x:title" not in declared.og  # Open Graph's own prefixes only
    # a name attribute is one name (HTML's), and so is an itemprop here: "updated date" names no "date"
    assert "updated date" in declared.meta and "date" not in declared.meta and "datepublished" not in declared.meta
    assert m.date_published is None
    # a hostile attribute costs a bounded number of names
    many = " ".join(f"og:k{i}" for i in range(10_000))
    declared = read_declared(f'<html><head><meta property="{many}" content="v"></head></html>', dates=False)
    assert len(declared.og) == metadata.MAX_META_NAMES == len(declared.meta)

MICRODATA = """<html lang="fr"><head><title>Recette | Cuisine</title></head><body>
<article itemscope itemtype="https://schema.org/Article">
<h1 itemprop="headline">La tarte aux pommes</h1>
<span itemprop="author" itemscope itemtype="https://schema.org/Person"><span itemprop="name">Marie Curie</span></span>
<time itemprop="datePublished" datetime="2023-10-01">1er octobre</time>
<div itemprop="articleBody"><p>Prenez des pommes.</p></div></article></body></html>"""


def test_microdata_article():
    m = meta_of(MICRODATA)
    assert m.headline == "La tarte aux pommes" and m.author == ["Marie Curie"]
    assert m.date_published == "2023-10-01" and m.language == "fr"


def test_microdata_is_read_only_where_it_could_change_a_field(monkeypatch):
    read = []
    shipped = metadata._microdata_items
    monkeypatch.setattr(metadata, "_microdata_items", lambda *a: read.append(1) or shipped(*a))
    crumbs = ('<ol itemscope itemtype="https://schema.org/BreadcrumbList"><li itemprop="itemListElement" itemscope '
              'itemtype="https://schema.org/ListItem"><span itemprop="name">Home</span></li></ol>'
              '<div itemscope itemtype="http://schema.org/Offer"><span itemprop="price">3</span></div>')
    m = meta_of(f"<html><head><title>Tarts</title></head><body>{crumbs}<p>Text</p></body></html>")
    assert read == [] and m.headline == "Tarts"  # breadcrumbs and offers alone change nothing
    assert meta_of(MICRODATA).headline == "La tarte aux pommes" and read == [1]  # an article's
    # a date on an item of any type (or of none) is read
    untyped = '<div itemscope><time itemprop="datePublished" datetime="2023-10-01">1 Oct</time></div>'
    m = meta_of(f"<html><body>{crumbs}{untyped}<p>Text</p></body></html>", url="https://example.com/a")
    assert m.date_published == "2023-10-01" and read == [1, 1]
    shop = ('<div itemscope itemtype="https://schema.org/Product https://schema.org/Thing">'
            '<h1 itemprop="name">Blue kettle</h1></div>')
    assert meta_of(f"<html><body>{shop}</body></html>").headline == "Blue kettle" and read == [1, 1, 1]


NONE = """<html><head><title>Opening hours - Town Library</title></head><body>
<nav><a href="/">Home</a></nav><h1>Opening hours</h1><p>We open at nine on weekdays and at ten on Saturdays.</p>
</body></html>"""


def test_a_page_that_declares_nothing():
    m = meta_of(NONE, url="https://library.example.org/hours")
    assert m.headline == "Opening hours"
    assert m.author == [] and m.date_published is None and m.language is None and m.site_name is None
    assert m.description is None and m.page_type is None  # no classifier given


def test_without_a_declared_headline_or_a_title_the_heading_nearest_the_kept_region_is_the_headline():
    html = """<html><head></head><body><h1>Acme Corp</h1><div><p>Menu entry</p></div>
    <main><h2>Quarterly results are in</h2><p>Revenue rose by a tenth over the quarter, the board said.</p></main>
    <footer><h2>Contact us</h2></footer></body></html>"""
    page = serialize(html, url="https://acme.example/q3")
    body = next(n for n in page.nodes if n.content.startswith("Revenue"))
    kept = Extraction(url=page.url, title=page.title, text=body.content,
                      nodes=[ExtractedNode(content=body.content, score=0.9, path=body.path, index=body.index)])
    assert metadata._heading_near_region(page, kept) == "Acme Corp"  # an h1 wins over an h2
    m = page_metadata(html, page, kept, today=TODAY)
    assert m.headline == "Acme Corp"
    no_h1 = html.replace("<h1>Acme Corp</h1>", "")
    page = serialize(no_h1, url="https://acme.example/q3")
    body = next(n for n in page.nodes if n.content.startswith("Revenue"))
    kept.nodes[0].index = body.index
    assert page_metadata(no_h1, page, kept, today=TODAY).headline == "Quarterly results are in"
    titled = html.replace("<head>", "<head><title>Q3 results - Acme</title>")
    assert page_metadata(titled, page, kept, today=TODAY).headline == "Q3 results"  # a <title> comes first


@pytest.mark.parametrize("title,site,host,expected", [
    ("How to X | Acme", None, None, "How to X"),
    ("Acme - How to bake bread at home", None, "www.acme.com", "How to bake bread at home"),
    ("How to bake bread at home — Acme Bakery", "Acme Bakery", None, "How to bake bread at home"),
    ("No separator here", None, None, "No separator here"),
    ("Spider-Man review", None, None, "Spider-Man review"),  # a hyphen inside a word is no separator
    ("Acme", "Acme", None, "Acme"),
])
def test_headline_from_title(title, site, host, expected):
    assert headline_from_title(title, site, host) == expected


@pytest.mark.parametrize("value,expected", [("en_us", "en-US"), ("zh-hant-tw", "zh-Hant-TW"), ("EN", "en"),
                                            ("es-419", "es-419"), ("", None), ("english please", None),
                                            ("en-US,en;q=0.9", "en-US")])
def test_bcp47(value, expected):
    assert bcp47(value) == expected


def test_dates_in_the_future_or_before_1990_are_dropped():
    for day in ("2027-01-01", "1989-12-31", "2025-13-40"):
        html = (f'<html><head><meta property="article:published_time" content="{day}"></head>'
                '<body><p>x</p></body></html>')
        assert meta_of(html, url="https://example.com/a").date_published is None, day
    html = '<html><head><meta property="article:published_time" content="1990-01-01"></head><body>x</body></html>'
    assert meta_of(html, url="https://example.com/a").date_published == "1990-01-01"


def test_bylines_give_the_author_where_none_is_declared():
    html = ('<html><body><h1>T</h1><p class="byline">By <a rel="author" href="/m">Maya Okonkwo</a></p>'
            '<p>Body</p></body></html>')
    assert meta_of(html).author == ["Maya Okonkwo"]
    assert describe(read_declared(html, today=TODAY), bylines=False).author == []


# ---- hostile and broken input: never raises, each skipped part named -------------------------------

def test_a_broken_json_ld_block_costs_only_itself():
    broken = '<script type="application/ld+json">{"@type": "Product", broken</script>'
    html = JSONLD.replace("<script", broken + "<script", 1)
    m = meta_of(html)
    assert m.headline == "Council backs bike lanes on Quay Road" and "jsonld" in m.skipped


def test_deeply_nested_json_ld_and_microdata():
    deep = "[" * 100_000 + "]" * 100_000
    html = f'<html><head><script type="application/ld+json">{deep}</script></head><body><p>x</p></body></html>'
    assert "jsonld" in meta_of(html).skipped
    # 400 levels: within what browsers build, past what extruct's recursion reads
    nested = '<div itemscope itemtype="https://schema.org/WebPage" itemprop="x">' * 400 + "</div>" * 400
    m = meta_of(f"<html><body>{nested}<p>text</p></body></html>")
    assert "microdata" in m.skipped  # extruct's recursion gives up; the rest of the page is read
    assert m.date_published == "2025-09-04"  # from the URL, through htmldate
    deeper = '<div itemscope itemtype="https://schema.org/WebPage" itemprop="x">' * 3000 + "</div>" * 3000
    m = meta_of(f"<html><body>{deeper}<p>text</p></body></html>")
    assert m.skipped == ("too-deep",) and m.date_published == "2025-09-04"  # the body is not parsed
    many = '<span itemscope itemtype="https://schema.org/Product"><b itemprop="name">n</b></span>' * 3000
    assert "microdata-too-many" in meta_of(f"<html><body>{many}</body></html>").skipped


def test_oversized_input_is_cut_and_counted(monkeypatch):
    monkeypatch.setattr(metadata, "MAX_JSONLD_CHARS", 100)
    monkeypatch.setattr(metadata, "MAX_HTML_CHARS", 5_000)
    block = json.dumps({"@type": "Article", "headline": "x" * 200})
    html = (f'<html><head><script type="application/ld+json">{block}</script></head>'
            f'<body>{"<p>a</p>" * 2000}</body></html>')
    m = meta_of(html)
    assert {"too-large", "jsonld-too-large"} <= set(m.skipped) and m.headline is None or m.headline != "x" * 200


def test_a_page_nested_past_browsers_depth_keeps_its_head_and_counts_the_body_as_too_deep():
    # lexbor's time grows with depth x tags: a body 20,000 <div>s deep is not parsed (the serializer
    # reads such a page with its own tokenizer); what <head> declares is still read
    deep = "<div>" * 20_000 + "<p>Deep text</p>" + "</div>" * 20_000
    m = meta_of('<html lang="de"><head><title>Deep | Site</title><meta property="og:title" content="Deep page">'
                f"</head><body>{deep}</body></html>")
    assert "too-deep" in m.skipped
    assert (m.headline, m.language) == ("Deep page", "de")


def test_the_serializers_depth_verdict_travels_with_the_page_and_spares_a_second_check():
    import pickle

    from edrew_scrapy.serializer import serialize

    deep = '<html><head><meta property="og:title" content="Deep page"></head><body>' + "<div>" * 20_000 + \
        "<p>Deep text at the bottom</p>" + "</div>" * 20_000 + "</body></html>"
    page = pickle.loads(pickle.dumps(serialize(deep)))  # as a worker process sends it
    assert page.too_deep and page.nodes
    m = page_metadata(deep, page, url=URL, today=TODAY)
    assert "too-deep" in m.skipped and m.headline == "Deep page"
    shallow = serialize(JSONLD)
    assert not shallow.too_deep and "too-deep" not in page_metadata(JSONLD, shallow, url=URL, today=TODAY).skipped


def test_a_head_nested_past_browsers_depth_gives_no_metadata_and_counts_it():
    m = meta_of("<html><head><title>T</title>" + "<div>" * 20_000 + "</head><body><p>text</p></body></html>")
    assert "too-deep" in m.skipped and m.headline is None


@pytest.mark.parametrize("data", [b"", "", b"\x00\x01\x02", "\x0b\x0c", b"\xff\xfe<html>\x00<p>x",
                                  "<html><head><meta property='og:title' content=''></head></html>",
                                  '<script type="application/ld+json">null</script>',
                                  '<script type="application/ld+json">'
                                  '[1, "a", {"@type": 5, "author": {"name": []}}]</script>',
                                  '<script type="application/ld+json">'
                                  '{"@graph": {"a": 1}, "author": [[["x"]]]}</script>',
                                  '<html prefix="og: %%%"><head><meta property="og:title" content="T"></head></html>'])
def test_hostile_input_never_raises(data):
    m = page_metadata(data, url="not a url", today=TODAY)
    assert isinstance(m, Metadata) and set(m.fields()) == set(METADATA_FIELDS)


def test_bytes_are_decoded_with_the_declared_charset():
    html = "<html><head><title>Café crème | Bistro</title></head><body><p>x</p></body></html>".encode("latin-1")
    assert meta_of(html, encoding="text/html; charset=ISO-8859-1").headline == "Café crème"
    assert meta_of(html, encoding="text/html; charset=no-such-codec").headline is not None


# ---- `edrew extract`'s JSON keys -----------------------------------------------------------------------

@pytest.fixture(scope="module")
def tiny_model_dir(tmp_path_factory):
    from _model_helpers import tiny_model

    path = tmp_path_factory.mktemp("model")
    tiny_model(path)
    return path


def test_cli_json_has_the_metadata_keys(tiny_model_dir, tmp_path, capsys):
    from edrew_scrapy.cli import main
    from edrew_scrapy.pagetype import PAGE_TYPES

    page = tmp_path / "article.html"
    page.write_text(JSONLD, encoding="utf-8")
    empty = tmp_path / "empty.html"
    empty.write_bytes(b"")
    # a model folder without a pagetype.json: the shipped page-type classifier answers
    assert main(["extract", str(page), str(empty), "--model", str(tiny_model_dir), "--threshold", "0"]) == 0
    record, skipped = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert record["title"] == "Council backs bike lanes | Riverside Gazette"  # the raw <title> stays
    assert record["headline"] == "Council backs bike lanes on Quay Road"
    assert record["author"] == ["Maya Okonkwo", "Tom & Jo"] and record["date_published"] == "2025-09-04"
    assert record["date_modified"] == "2025-09-05" and record["language"] == "en-GB"
    assert record["site_name"] == "Riverside Gazette" and record["description"] == "A two-way cycle track."
    assert record["page_type"] in PAGE_TYPES and 0 < record["page_type_probability"] <= 1
    assert skipped["skipped"] == "empty" and skipped["headline"] is None and skipped["author"] == []
    assert main(["extract", str(page), "--model", str(tiny_model_dir), "--no-metadata"]) == 0
    bare = json.loads(capsys.readouterr().out)
    assert all(bare[k] in (None, []) for k in METADATA_FIELDS)


_KEYS = st.sampled_from(["@type", "@graph", "@value", "author", "creator", "name", "headline", "datePublished",
                         "dateModified", "publisher", "inLanguage", "description", "text"]) | st.text(max_size=5)
_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30),
                     lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_KEYS, inner, max_size=5),
                     max_leaves=25)


@given(value=_JSON, junk=st.text(max_size=200), itemprop=st.sampled_from(["author", "name", "headline", "x"]))
@settings(max_examples=80, deadline=None)
def test_fuzzed_json_ld_and_markup_are_read_without_an_error(value, junk, itemprop):
    html = (f'<html lang="{junk[:8]}"><head><script type="application/ld+json">{json.dumps(value)}</script>'
            f'<meta property="og:title" content="{junk[:40]}"></head><body>'
            f'<div itemscope itemtype="https://schema.org/Article"><span itemprop="{itemprop}">{junk}</span></div>'
            f'</body></html>')
    declared = read_declared(html, url="https://example.com/a", today=TODAY)
    m = describe(declared, url="https://example.com/a", today=TODAY)  # raises on a bug: not hidden as "error"
    assert all(isinstance(name, str) and name for name in m.author)
    assert m.date_published is None or TODAY >= dt.date.fromisoformat(m.date_published) >= dt.date(1990, 1, 1)


# ---- rules that differ by page type, and names that are no one's --------------------------------------

SERVICE = """<html><head><title>Payroll Software for Small Business | Acme</title>
<meta property="og:title" content="The #1 way to run payroll in minutes">
<meta name="twitter:title" content="Payroll Software for Small Business">
</head><body><h1>Run payroll in three clicks</h1><p>Run payroll in three clicks, every month.</p>
<p class="byline">By Jane Doe</p></body></html>"""


def test_a_service_page_takes_the_headline_its_sources_agree_on_an_article_its_declared_one():
    declared = read_declared(SERVICE, url="https://acme.example/payroll", today=TODAY, dates=False)
    assert describe(declared, url="https://acme.example/payroll", page_type="service").headline == \
        "Payroll Software for Small Business"  # the title and twitter:title agree, og:title stands alone
    assert describe(declared, url="https://acme.example/payroll", page_type="article").headline == \
        "The #1 way to run payroll in minutes"
    assert describe(declared, url="https://acme.example/payroll").headline == "The #1 way to run payroll in minutes"


@pytest.mark.parametrize("h1,expected", [
    # the heading words the declared headline differently: the heading
    ("Top 10 Health and Nutrition Trends to Watch", "Top 10 Health and Nutrition Trends to Watch"),
    # a heading that shares few words with any declared title (a logo, a section name): the declared one
    ("Our blog", "Health And Nutrition Trends For 2026"),
    ("", "Health And Nutrition Trends For 2026"),
])
def test_the_visible_heading_is_the_headline_where_it_agrees_with_a_declared_title(h1, expected):
    html = (f'<html><head><title>Health And Nutrition Trends For 2026 - Tastewise</title></head><body>'
            f'<h1></h1><h1>{h1}</h1><p>Ten trends, each with what it means for a menu.</p></body></html>')
    for page_type in ("article", "service", None):
        declared = read_declared(html, url="https://tastewise.example/trends", today=TODAY, dates=False)
        assert describe(declared, url="https://tastewise.example/trends", page_type=page_type).headline == expected


def test_a_description_declared_as_the_headline_gives_way_to_the_heading_it_contains():
    html = ('<html><head><script type="application/ld+json">{"@type": "BlogPosting", "headline": "The meeting '
            'brought experts to Orlando; I compiled 5 trends from Nutrition 2025 that stood out"}</script>'
            '<title>5 Trends from Nutrition 2025</title></head><body><h1>5 Trends from Nutrition 2025</h1>'
            '<p>Text of the post.</p></body></html>')
    assert meta_of(html).headline == "5 Trends from Nutrition 2025"


def test_a_by_line_in_the_text_names_the_author_of_an_article_only():
    html = ("<html><head><title>Trail notes</title></head><body><h1>Trail notes</h1><div>By Jane van Doe</div>"
            "<p>We walked the ridge at dawn and came down before the rain started.</p></body></html>")
    page = serialize(html, url="https://walks.example/notes")
    declared = read_declared(html, url=page.url, today=TODAY, dates=False)
    assert describe(declared, page, page_type="article").author == ["Jane van Doe"]
    assert describe(declared, page, page_type="product").author == []
    assert describe(declared, page).author == []  # no page type known: markup only


@pytest.mark.parametrize("value,expected", [
    ("BySummer Swann", ["Summer Swann"]), ("Written by Al Jones", ["Al Jones"]), ("Byron Smith", ["Byron Smith"]),
    ("Name *", []), ("page.head.extra.author", []), ("262588213843476", []), ("undefined", []),
    ("Florence says", []), ("View all posts", []), ("Full Bio", []), ("See profile", []),
    ("Saysha Jones", ["Saysha Jones"]), ("Von", []), ("Par", []),
])
def test_author_texts_that_name_no_one_are_dropped(value, expected):
    html = f'<html><head><meta name="author" content="{value}"></head><body><p>x</p></body></html>'
    assert meta_of(html).author == expected


def test_only_a_declared_date_or_one_in_the_url_on_a_product_page():
    class Fixed:
        def predict(self, page):
            return "product", 0.9

    html = ('<html><head><title>Kettle</title></head><body><h1>Kettle</h1>'
            '<p>Posted <time datetime="2024-02-03">3 Feb 2024</time></p><p>$24.90, steel.</p></body></html>')
    page = serialize(html, url="https://shop.example/kettle")
    assert page_metadata(html, page, None, Fixed(), url=page.url, today=TODAY).date_published is None
    assert page_metadata(html, page, None, None, url=page.url, today=TODAY).date_published == "2024-02-03"
    dated = serialize(html, url="https://shop.example/2024/02/03/kettle")
    assert page_metadata(html, dated, None, Fixed(), url=dated.url, today=TODAY).date_published == "2024-02-03"


def test_a_page_that_starts_like_a_url_is_never_fetched(monkeypatch):
    import htmldate.utils

    fetched = []
    monkeypatch.setattr(htmldate.utils, "fetch_url", lambda url, *a, **k: fetched.append(url))
    m = page_metadata("http://127.0.0.1:9/never", url="https://example.com/a", today=TODAY)
    assert fetched == [] and isinstance(m, Metadata)


def test_the_text_search_parses_dates_in_the_declared_language():
    import htmldate.extractors

    class Article:
        def predict(self, page):
            return "article", 0.9

    shipped = htmldate.extractors.get_external_parser
    for lang, text in (("es", "martes 3 de febrero de 2024"), ("en", "Feb. 3, 2024"), ("", "Feb. 3, 2024"),
                       ("es-MX", "martes 3 de febrero de 2024"), ("zz", "Feb. 3, 2024")):
        html = (f'<html lang="{lang}"><head><title>Council</title></head><body><h1>Council</h1>'
                f"<div><p>{text}</p></div><p>The council met on a rainy evening to vote.</p></body></html>")
        page = serialize(html, url="https://news.example/council")
        assert page_metadata(html, page, None, Article(), url=page.url, today=TODAY).date_published == "2024-02-03"
        assert htmldate.extractors.get_external_parser is shipped  # htmldate's own parser is put back
    assert metadata._date_parser("es") is metadata._date_parser("es")
    assert metadata._date_parser("zz") is None  # a language dateparser lacks: English (below)


def test_the_text_search_never_builds_htmldates_every_locale_parser(monkeypatch):
    import htmldate.extractors

    class Article:
        def predict(self, page):
            return "article", 0.9

    built = []
    monkeypatch.setattr(htmldate.extractors, "get_external_parser", lambda: built.append(1))
    for lang in ("", "zz", "en"):  # none declared, one dateparser lacks, one it knows
        html = (f'<html lang="{lang}"><head><title>Council</title></head><body><h1>Council</h1>'
                "<div><p>Feb. 3, 2024</p></div><p>The council met on a rainy evening to vote.</p></body></html>")
        page = serialize(html, url="https://news.example/council")
        assert page_metadata(html, page, None, Article(), url=page.url, today=TODAY).date_published == "2024-02-03"
    assert built == []


def test_the_text_search_does_not_guess_a_day_from_a_bare_year(monkeypatch):
    import htmldate
    import htmldate.core

    class Article:
        def predict(self, page):
            return "article", 0.9

    shipped = htmldate.core.search_page
    html = ('<html lang="en"><head><title>Council</title></head><body><h1>Council</h1><p>The council met on a '
            "rainy evening to vote on the plan.</p><footer><p>Copyright 2019 Acme Ltd.</p></footer></body></html>")
    # htmldate's last resort reads "2019" as January 1st; metadata gives no date rather than that one
    assert htmldate.find_date(html, extensive_search=True, original_date=True) == "2019-01-01"
    page = serialize(html, url="https://news.example/council")
    assert page_metadata(html, page, None, Article(), url=page.url, today=TODAY).date_published is None
    assert htmldate.core.search_page is shipped  # put back
    dated = html.replace("<p>Copyright", "<p>Updated 12/03/2019 by the team</p><p>Copyright")
    page = serialize(dated, url="https://news.example/council")
    assert page_metadata(dated, page, None, Article(), url=page.url, today=TODAY).date_published == "2019-03-12"


QA_JSONLD = """<html><head><title>Why is RAID not a backup? - Server Fault</title><script type="application/ld+json">
{"@context": "https://schema.org", "@type": "QAPage", "name": "Why is RAID not a backup?",
 "mainEntity": {"@type": "Question", "name": "Why is RAID not a backup?", "dateCreated": "2009-05-02 00:01:21Z",
  "author": {"@type": "Person", "name": "Vader"},
  "acceptedAnswer": {"@type": "Answer", "dateCreated": "2014-08-01", "author": {"@type": "Person", "name": "pcurry"}}}}
</script></head><body><h1>Why is RAID not a backup?</h1><p>When someone mentions RAID ...</p>
<span class="user-details author">pcurry</span></body></html>"""

QA_MICRODATA = """<html><head><title>Why is RAID not a backup?</title></head>
<body itemscope itemtype="https://schema.org/QAPage"><div itemprop="mainEntity" itemscope
 itemtype="https://schema.org/Question"><h1 itemprop="name">Why is RAID not a backup?</h1>
<time itemprop="dateCreated" datetime="2009-05-02T00:01:21Z">May 2, 2009</time>
<div itemprop="author" itemscope itemtype="https://schema.org/Person"><span itemprop="name">Vader</span></div>
<div itemprop="suggestedAnswer" itemscope itemtype="https://schema.org/Answer">
<time itemprop="dateCreated" datetime="2014-08-01">Aug 1, 2014</time>
<div itemprop="author" itemscope itemtype="https://schema.org/Person"><span itemprop="name">pcurry</span></div>
</div></div></body></html>"""


@pytest.mark.parametrize("html", [QA_JSONLD, QA_MICRODATA], ids=["json-ld", "microdata"])
def test_a_question_page_is_dated_and_authored_by_its_main_entity(html):
    m = meta_of(html, url="https://serverfault.example/questions/2888/why-is-raid-not-a-backup")
    assert (m.author, m.date_published) == (["Vader"], "2009-05-02")
    assert m.headline == "Why is RAID not a backup?"


NESTED_MICRODATA = """<html><body><div itemscope itemtype="https://schema.org/QAPage" itemprop="x">
<div><span itemprop="name">Page</span></div><div itemprop="mainEntity" itemscope itemtype="https://schema.org/Question">
<h1 itemprop="name headline">Q</h1><div class="post"><div itemprop="suggestedAnswer acceptedAnswer" itemscope
 itemtype="https://schema.org/Answer"><p itemprop="text">An <b itemprop="keywords">answer</b></p><div itemprop="author"
 itemscope><span itemprop="name">Ann</span><a itemprop="url" href="/u/1">profile</a></div></div></div>
<div itemprop="comment" itemscope itemtype="https://schema.org/Comment"><span itemprop="text">Hm</span>
<div itemscope itemtype="https://schema.org/Thing"><i itemprop="name">loose</i></div></div>
<time itemprop="dateCreated" datetime="2020-01-02">2 Jan</time></div><meta itemprop="inLanguage" content="en">
<div itemprop="about" itemscope itemref="r"></div></div><p id="r" itemprop="name">Referred</p></body></html>"""


def test_extruct_with_its_properties_found_by_climbing_finds_what_its_xpath_finds():
    import lxml.html
    from extruct.w3cmicrodata import MicrodataExtractor

    faster = metadata._microdata_extractor(MicrodataExtractor)
    assert faster is not MicrodataExtractor
    for html in (NESTED_MICRODATA, QA_MICRODATA, MICRODATA):
        tree = lxml.html.fromstring(html)
        for item in tree.xpath("//*[@itemscope]"):
            assert metadata._own_properties(item) == MicrodataExtractor._xp_prop(item)
        items = MicrodataExtractor(nested=True).extract_items(tree, URL)
        assert items and faster(nested=True).extract_items(tree, URL) == items
    # an extruct whose reader finds properties otherwise is used as it is
    assert metadata._microdata_extractor(type("Other", (), {})).__name__ == "Other"


def test_an_items_properties_deep_below_it_are_found_climbing_each_ancestor_once():
    import lxml.html
    from extruct.w3cmicrodata import MicrodataExtractor

    # thousands of properties under a deep chain of plain elements: climbing each one to the item alone would
    # take some 1,000,000 steps; each ancestor is climbed once. Props inside a nested item deep down are its.
    deep = ("<html><body><div itemscope>" + "<div>" * 250 + '<span itemprop="a">x</span>' * 4000
            + '<p itemprop="b" itemscope><i itemprop="c">y</i></p>' + "</div>" * 250 + "</div></body></html>")
    item = lxml.html.fromstring(deep).xpath("//*[@itemscope]")[0]
    own = metadata._own_properties(item)
    assert len(own) == 4001 and own == MicrodataExtractor._xp_prop(item)
    assert [el.get("itemprop") for el in own[-2:]] == ["a", "b"]


def test_a_list_of_main_entities_speaks_for_no_one():
    html = ("""<html><head><title>Shipping FAQ</title><script type="application/ld+json">{"@type": "FAQPage",
    "mainEntity": [{"@type": "Question", "name": "How long?", "dateCreated": "2020-01-01",
    "author": {"@type": "Person", "name": "Ann Lee"}}]}</script></head><body><h1>Shipping FAQ</h1>
    <p>Answers.</p></body></html>""")
    m = meta_of(html, url="https://shop.example/faq")
    assert (m.headline, m.author, m.date_published) == ("Shipping FAQ", [], None)


@pytest.mark.parametrize("url,expected", [
    ("https://blog.example/2025/12/18/comfort-watches", "2025-12-18"),  # the site's day, a UTC time past midnight
    ("https://blog.example/2025/12/10/comfort-watches", "2025-12-19"),  # days apart: the declared one
    ("https://blog.example/comfort-watches", "2025-12-19"),
])
def test_a_declared_time_one_day_off_the_urls_date_takes_the_urls_day(url, expected):
    html = ('<html><head><meta property="article:published_time" content="2025-12-19T02:10:00+00:00">'
            '<title>Comfort watches</title></head><body><p>Day eighteen.</p></body></html>')
    assert meta_of(html, url=url).date_published == expected


@pytest.mark.parametrize("byline,expected", [
    ("Text by Hunter Dukes", ["Hunter Dukes"]), ("Posted by:Idle Cartulary", ["Idle Cartulary"]),
    ("Author Isaiah Shelton", ["Isaiah Shelton"]), ("Matteo Laratta| Author", ["Matteo Laratta"]),
    ("David Jackson - FullStack Editorial Team", ["David Jackson"]),
    ("Keith Barry Senior Autos Reporter", ["Keith Barry"]), ("Mateusz HabernyFounder at Oakywood", ["Mateusz Haberny"]),
    ("Meghan Holmes Meghan Holmes", ["Meghan Holmes"]), ("Jane Writer", ["Jane Writer"]),  # one word left: kept
    ("window.dataLayer = window.dataLayer || []", []),
])
def test_a_bylines_cue_separators_and_role_are_not_the_name(byline, expected):
    html = f'<html><head><title>Notes</title></head><body><span class="author">{byline}</span><p>x</p></body></html>'
    assert meta_of(html, url="https://blog.example/notes").author == expected


def test_an_author_referenced_by_id_in_a_jsonld_graph_is_that_nodes_name():
    html = ('<html><head><title>Trends</title><meta name="author" content="kffjdoe">'
            '<script type="application/ld+json">{"@context": "https://schema.org", "@graph": ['
            '{"@type": "Article", "headline": "Trends", "author": {"@id": "https://k.example/#/person/1"}},'
            '{"@type": "Person", "@id": "https://k.example/#/person/1", "name": "Nirmita Panchal"}]}</script>'
            '</head><body><p>x</p></body></html>')
    assert meta_of(html).author == ["Nirmita Panchal"]
    # a reference to no node of the page names no one: the <meta> author is next
    assert meta_of(html.replace('"@id": "https://k.example/#/person/1", ', '')).author == ["kffjdoe"]


@pytest.mark.parametrize("tags,expected", [
    ('<meta name="twitter:label1" content="Written by"><meta name="twitter:data1" content="Chase Bernath">'
     '<meta name="twitter:label2" content="Est. reading time"><meta name="twitter:data2" content="9 minutes">',
     ["Chase Bernath"]),
    ('<meta name="twitter:label1" content="Est. reading time"><meta name="twitter:data1" content="9 minutes">', []),
    ('<meta property="cXenseParse:author" content="Harry Rabinowitz">', ["Harry Rabinowitz"]),
])
def test_a_twitter_cards_written_by_and_cxenses_author_name_the_author(tags, expected):
    html = f"<html><head><title>Hubs</title>{tags}</head><body><p>x</p></body></html>"
    assert meta_of(html).author == expected


FORUM = ('<html><head><title>ISO size</title></head><body><form><input class="username" name="username"></form>'
         '<div class="post"><a href="/u/1" class="username">chunix64</a><p>Why did the ISO grow so much?</p></div>'
         '<div class="post"><span class="author">Jane Roe</span><a href="/u/2" class="username">nl6720</a>'
         '<p>More firmware.</p></div></body></html>')


def test_a_forum_threads_author_is_its_first_poster():
    page = serialize(FORUM, url="https://bbs.example/viewtopic.php?id=1")
    declared = read_declared(FORUM, url=page.url, today=TODAY, dates=False)
    assert declared.posters == ["chunix64", "nl6720"]
    assert describe(declared, page, page_type="forum").author == ["chunix64"]
    # elsewhere the poster markup is not read: the byline markup names the author
    assert describe(declared, page, page_type="article").author == ["Jane Roe"]


@pytest.mark.parametrize("label", ["Topic Author", "Thread starter", "Sign In"])
def test_forum_and_login_labels_in_author_markup_are_not_names(label):
    html = f'<html><head><title>Q</title></head><body><span class="author">{label}</span><p>x</p></body></html>'
    assert meta_of(html).author == []


def _text_byline_of(line, markup="div"):
    """(authors on an article, on a service page, byline_lines) of a page whose byline is `line`."""
    html = (f"<html><head><title>Trail notes</title></head><body><h1>Trail notes</h1><{markup}>{line}</{markup}>"
            "<p>We walked the ridge at dawn and came down before the rain started.</p></body></html>")
    page = serialize(html, url="https://walks.example/notes")
    declared = read_declared(html, url=page.url, today=TODAY, dates=False)
    return (describe(declared, page, page_type="article").author, describe(declared, page, page_type="service").author,
            metadata.byline_lines(page))


@pytest.mark.parametrize("line,expected", [
    ("Par Jeanne Dupont, le 3 mars 2025", ["Jeanne Dupont"]),
    ("Par Jeanne Dupont le 3 mars 2025", ["Jeanne Dupont"]),  # "le" before a day is not a particle of the name
    ("Von Max Muster und Erika Muster", ["Max Muster", "Erika Muster"]),
    ("Por Ana García | 3 de marzo de 2025", ["Ana García"]),
    ("Door Jan de Vries, 3 maart 2025", ["Jan de Vries"]),
    ("Von Max Muster, 3. März 2025", ["Max Muster"]),
    ("By Jane Doe and John Roe", ["Jane Doe", "John Roe"]),
    ("By Jane van Doe", ["Jane van Doe"]),
    ("Written by Dr Marna van der Merwe, Dr Dieter Veldsman", ["Dr Marna van der Merwe"]),
    ("By Jonathan Sayers Jan. 31, 2026 7:47 am EST", ["Jonathan Sayers"]),  # a month before a day: no name's
    ("By Sofia Gonzalez December 2, 2025", ["Sofia Gonzalez"]),
    ("Von Max Muster März 2025", ["Max Muster"]),
])
def test_a_byline_line_in_other_languages_names_its_authors_and_leaves_the_text(line, expected):
    article, _service, lines = _text_byline_of(line)
    assert article == expected and lines == {1: "byline"}


@pytest.mark.parametrize("line", [
    "Par ailleurs, le gouvernement a annoncé une réforme",
    "Von den 300 Teilnehmern kamen viele aus Bayern",
    "Von Berliner Schulen wurden Proben genommen",
    "Por favor, lea las instrucciones",
    "Door de regen bleef het feest thuis",
])
def test_a_sentence_that_opens_with_a_bylines_cue_names_no_one(line):
    for markup in ("div", 'span class="byline"'):
        article, service, lines = _text_byline_of(line, markup)
        assert article == service == [] and lines == {}


def test_a_cue_alone_then_the_name_in_the_next_element_names_the_author():
    html = ('<html><head><title>Catering trends</title></head><body><h1>Catering trends</h1><div><p>Written by</p>'
            '<p>Edzel Tabing</p></div><p>Catering is changing fast, and here is what we saw this year.</p>'
            '</body></html>')
    page = serialize(html, url="https://blog.example/catering")
    declared = read_declared(html, url=page.url, today=TODAY, dates=False)
    assert describe(declared, page, page_type="article").author == ["Edzel Tabing"]
    # the name must be the whole of the next element's text
    longer = html.replace("<p>Edzel Tabing</p>", "<p>Edzel Tabing and the team at our kitchen</p>")
    page = serialize(longer, url="https://blog.example/catering")
    declared = read_declared(longer, url=page.url, today=TODAY, dates=False)
    assert describe(declared, page, page_type="article").author == []


DATELINE = """<html><head><title>Seven SEO predictions</title><script type="application/ld+json">{"@type": "Article",
"headline": "Seven SEO predictions", "datePublished": "2024-04-10T19:30:39Z"}</script></head><body>
<nav><a href="/">Home</a></nav><h1>Seven SEO predictions</h1><p>{dateline}</p>
<p>Search changes every year, and this is a long paragraph of the article's body with enough words in it.</p>
{footer}</body></html>"""


@pytest.mark.parametrize("dateline,footer,expected", [
    ("Last updated: Sep 4, 2025", "", "2025-09-04"),  # the declared day shown nowhere: the dateline's
    ("24 Apr 2000 · 3 min read", "", "2000-04-24"),
    ("Last updated: Sep 4, 2025", "<p>First published April 10, 2024</p>", "2024-04-10"),  # shown: declared
    ("Sep 4, 2025 – Dec 1, 2025", "", "2024-04-10"),  # two days near the heading: no one dateline
    ("On 2 Dec 2024, the council met in the town hall and voted on the new budget for the years to come.", "",
     "2024-04-10"),  # a sentence's date is what it tells
    ("Updated March 9, 2027", "", "2024-04-10"),  # in the future
    ("Updated Sep 4, 2025", "<p>This article was originally published on 26 Sep 2019 at 4:12pm.</p>", "2019-09-26"),
    ("Sep 4, 2025", "<p>Last published Apr 8, 2024 by the editors, after a review of every figure in it.</p>",
     "2025-09-04"),  # "Last published" is no publication day
    # a day and an "Updated" day near the heading: the first is the publication
    ("April 26, 2024</p><p>Updated on: October 28, 2024", "", "2024-04-26"),
    ("March 2, 2024</p><p>Last updated April 10, 2024", "", "2024-03-02"),  # the declared day shown as the update
    ("Updated on: October 28, 2024</p><p>Reviewed: Nov 2, 2024", "", "2024-04-10"),  # two updates: no one
])
def test_the_day_a_pages_dateline_shows_where_it_shows_the_declared_day_nowhere(dateline, footer, expected):
    html = DATELINE.replace("{dateline}", dateline).replace("{footer}", footer)
    url = "https://seo.example/academy/predictions"
    assert meta_of(html, page=serialize(html, url=url), url=url).date_published == expected


def test_without_a_page_or_a_heading_the_declared_day_stays():
    html = DATELINE.replace("{dateline}", "Last updated: Sep 4, 2025").replace("{footer}", "")
    assert meta_of(html, url="https://seo.example/p").date_published == "2024-04-10"
    no_h1 = html.replace("<h1>", "<h2>").replace("</h1>", "</h2>")
    url = "https://seo.example/p"
    assert meta_of(no_h1, page=serialize(no_h1, url=url), url=url).date_published == "2024-04-10"


@pytest.mark.parametrize("text,expected", [
    ("Updated Dec. 18th, 2025 · 12 min read", ["2025-12-18"]), ("24 Apr 2000", ["2000-04-24"]),
    ("Last Updated: 2025-02-22", ["2025-02-22"]), ("Sept 4 2025", ["2025-09-04"]),
    ("February 30, 2025", []), ("May 1, 1989", []), ("March 9, 2027", []), ("in 2025 and 12 May", []),
])
def test_shown_days(text, expected):
    assert metadata._shown_days(text, TODAY) == expected


@pytest.mark.parametrize("title,headings,host,expected", [
    # the site's logo is an <h1>: the part that names the site, or a last part shorter than the first, is not
    # the headline for being a heading
    ("Discuss the VirtualBox 7.1.0 release here - virtualbox.org", ["virtualbox.org"], "forums.virtualbox.org",
     "Discuss the VirtualBox 7.1.0 release here"),
    ("Best Yoga Retreat Travel Insurance Options | Ambuja Yoga", ["Ambuja Yoga"], "www.ambujayoga.com",
     "Best Yoga Retreat Travel Insurance Options"),
    ("A brief intro to git • Cory Dransfeldt", ["Cory Dransfeldt"], "www.coryd.dev", "A brief intro to git"),
    ("Webcams - Yosemite National Park (U.S. National Park Service)", ["Webcams"], "www.nps.gov", "Webcams"),
    ("Introduction | Docusaurus", ["Introduction"], "docusaurus.io", "Introduction"),
])
def test_a_title_part_that_is_a_heading_is_the_headline_unless_it_is_the_sites_logo(title, headings, host, expected):
    assert headline_from_title(title, None, host, headings) == expected


def test_a_title_or_heading_escaped_twice_reads_as_text():
    html = ("<html><head><title>Ten data tools | Python, SQL &amp;amp; AI | Splunk</title>"
            "<meta property='og:title' content='The Cream with TFC8&amp;reg; Face Moisturizer | Sephora'></head>"
            "<body><h1>Ten data tools | Python, SQL &amp;#x26; AI</h1><p>Body.</p></body></html>")
    url = "https://www.splunk.example/tools"
    assert meta_of(html, url=url).headline == "Ten data tools | Python, SQL & AI"
    no_h1 = html.replace("<h1>", "<p>").replace("</h1>", "</p>")
    assert meta_of(no_h1, url=url).headline == "The Cream with TFC8® Face Moisturizer"


def test_a_day_shown_as_published_wins_without_a_heading():
    html = ("<html><head><title>Fasting</title><meta property='article:published_time' content='2026-09-03'>"
            "</head><body><p>By Daryl Austin</p><p>Published March 9, 2026</p><p>Long enough body text of the "
            "article for the page to have one.</p></body></html>")
    url = "https://health.example/fasting"
    assert meta_of(html, page=serialize(html, url=url), url=url).date_published == "2026-03-09"


def test_a_declared_day_that_is_the_urls_full_date_is_not_replaced_by_a_dateline():
    html = DATELINE.replace("{dateline}", "By Steven Solomon July 29, 2016").replace("{footer}", "")
    html = html.replace("2024-04-10T19:30:39Z", "2016-07-30T01:00:00Z")
    for url, expected in (("https://news.example/2016/07/30/yahoo-sale", "2016-07-30"),
                          ("https://news.example/yahoo-sale", "2016-07-29")):
        assert meta_of(html, page=serialize(html, url=url), url=url).date_published == expected


def test_htmldate_reads_the_head_and_the_markup_around_the_first_heading_only():
    class Article:
        def predict(self, page):
            return "article", 0.9

    filler = "<p>The council met on a rainy evening to vote on the plan for the quay.</p>" * 1_500  # ~100,000
    near = ('<html lang="en"><head><title>Council</title></head><body><nav>' + filler + "</nav><h1>Council</h1>"
            "<div><p>Feb. 3, 2024</p></div>" + filler + "<div><p>Jan. 9, 2023</p></div></body></html>")
    far = near.replace("<div><p>Feb. 3, 2024</p></div>", "")
    for html, expected in ((near, "2024-02-03"), (far, None)):  # a comment's day far below is not the page's
        page = serialize(html, url="https://news.example/council")
        assert page_metadata(html, page, None, Article(), url=page.url, today=TODAY).date_published == expected
    region = metadata._date_region(near)
    assert region.startswith('<html lang="en"><head><title>Council</title></head>')
    assert "Feb. 3, 2024" in region and "Jan. 9, 2023" not in region
    assert len(region) < metadata.DATE_REGION_BEFORE + metadata.DATE_REGION_AFTER + 100
    # a small page, one without <body> or <h1>: all of it, or what follows the head from its start
    small = "<html><head><title>T</title></head><body><p>Posted Feb. 3, 2024</p></body></html>"
    assert metadata._date_region(small) == small
    bare = "<title>T</title></head>" + "<p>x</p>" * 20_000 + "<p>Posted Feb. 3, 2024</p>"
    assert metadata._date_region(bare).startswith("<title>T</title></head><p>x</p>")
    assert "Posted" not in metadata._date_region(bare)


def test_htmldate_reads_less_below_the_heading_of_a_page_whose_text_it_does_not_search():
    class Typed:
        def __init__(self, kind, probability=0.9):
            self.kind, self.probability = kind, probability

        def predict(self, page):
            return self.kind, self.probability

    filler = "<p>The guide explains each setting of the tool in the order the menu lists them.</p>" * 300  # ~26,000
    day = '<p>Updated <time datetime="2024-02-03">Feb. 3, 2024</time></p>'
    head = '<html lang="en"><head><title>Settings</title></head><body><h1>Settings</h1>'
    near, far = head + day + filler + "</body></html>", head + filler + day + "</body></html>"
    # an article's region reaches further, and so does that of a page the classifier is less sure of
    for html, typed, expected in ((near, Typed("documentation"), "2024-02-03"), (far, Typed("documentation"), None),
                                  (far, Typed("article"), "2024-02-03"), (far, Typed("service", 0.4), "2024-02-03")):
        page = serialize(html, url="https://docs.example/settings")
        assert page_metadata(html, page, None, typed, url=page.url, today=TODAY).date_published == expected
    region = metadata._date_region(far, metadata.DATE_REGION_AFTER_UNSEARCHED)
    assert "Feb. 3, 2024" not in region and "Feb. 3, 2024" in metadata._date_region(far)


# ---- the serializer's tree, read once ------------------------------------------------------------------

class _Typed:
    """A stand-in page-type classifier: one type for every page (the rules that differ by type run)."""

    def __init__(self, kind):
        self.kind = kind

    def predict(self, page):
        return self.kind, 0.9


@pytest.mark.parametrize("html", [JSONLD, OPENGRAPH, MICRODATA, NONE, SERVICE, QA_JSONLD, QA_MICRODATA, FORUM,
                                  DATELINE.replace("{dateline}", "Updated Sep 4, 2025").replace("{footer}", "")])
@pytest.mark.parametrize("kind", ["article", "forum", "service"])
def test_metadata_read_from_the_serializers_tree_is_the_metadata_read_from_the_page(html, kind):
    for data in (html, html.encode("utf-8")):
        shared = serialize(data, url=URL, tree_reader=metadata.read_tree)
        alone = serialize(data, url=URL)
        assert isinstance(shared.from_tree, metadata.Declared) and alone.from_tree is None
        first = page_metadata(data, shared, None, _Typed(kind), url=URL, today=TODAY)
        assert first == page_metadata(data, alone, None, _Typed(kind), url=URL, today=TODAY)
        assert first == page_metadata(data, shared, None, _Typed(kind), url=URL, today=TODAY)  # from_tree unchanged


def test_with_the_serializers_tree_the_page_is_not_parsed_again(monkeypatch):
    page = serialize(JSONLD, url=URL, tree_reader=metadata.read_tree)
    expected = page_metadata(JSONLD, page, url=URL, today=TODAY)

    def parse_again(*args, **kwargs):
        raise AssertionError("parsed a second time")

    monkeypatch.setattr(metadata, "_read", parse_again)
    assert page_metadata(JSONLD, page, url=URL, today=TODAY) == expected
    assert expected.headline == "Council backs bike lanes on Quay Road" and expected.skipped == ()


def test_what_the_tree_gave_stays_in_the_process_a_pickled_page_is_read_again():
    import pickle

    page = serialize(JSONLD, url=URL, tree_reader=metadata.read_tree)
    sent = pickle.loads(pickle.dumps(page))  # as a worker process sends it
    assert page.from_tree is not None and sent.from_tree is None
    assert [n.content for n in sent.nodes] == [n.content for n in page.nodes]
    assert page_metadata(JSONLD, sent, url=URL, today=TODAY) == page_metadata(JSONLD, page, url=URL, today=TODAY)


def test_a_page_the_serializer_decoded_otherwise_is_read_as_metadata_decodes_it():
    # a page saved as UTF-8 whose <meta> still says gb2312: the serializer follows the <meta>, metadata
    # reads bytes as the given encoding or UTF-8; its fields come from its own reading, as without the tree
    html = ('<html><head><meta http-equiv="Content-Type" content="text/html; charset=gb2312">'
            "<title>新电脑已可利用记忆自学</title></head><body><h1>新电脑已可利用记忆自学</h1><p>正文。</p></body></html>")
    data = html.encode("utf-8")
    page = serialize(data, url=URL, tree_reader=metadata.read_tree)
    assert page.encoding == "gb2312" and page.from_tree is not None
    assert page_metadata(data, page, url=URL, today=TODAY).headline == "新电脑已可利用记忆自学"
    assert page_metadata(data, page, url=URL, today=TODAY) == page_metadata(data, serialize(data, url=URL), url=URL,
                                                                            today=TODAY)


def test_no_tree_is_read_on_a_page_too_deep_for_lexbor_or_too_large_and_a_failing_reader_costs_nothing(monkeypatch):
    deep = '<html><head><meta property="og:title" content="Deep page"></head><body>' + "<div>" * 20_000 + \
        "<p>Deep text</p>" + "</div>" * 20_000 + "</body></html>"
    page = serialize(deep, url=URL, tree_reader=metadata.read_tree)
    assert page.too_deep and page.nodes and page.from_tree is None
    m = page_metadata(deep, page, url=URL, today=TODAY)
    assert "too-deep" in m.skipped and m.headline == "Deep page"

    def broken(tree, text, url):
        raise RuntimeError("a reader's bug")

    page = serialize(JSONLD, url=URL, tree_reader=broken)
    assert page.nodes and page.from_tree is None
    assert page_metadata(JSONLD, page, url=URL, today=TODAY).headline == "Council backs bike lanes on Quay Road"
    monkeypatch.setattr(metadata, "MAX_HTML_CHARS", 200)  # read from the page's start, as without the tree
    page = serialize(JSONLD, url=URL, tree_reader=metadata.read_tree)
    assert page.from_tree is None and "too-large" in page_metadata(JSONLD, page, url=URL, today=TODAY).skipped


@given(value=_JSON, junk=st.text(max_size=200), itemprop=st.sampled_from(["author", "name", "headline", "x"]))
@settings(max_examples=60, deadline=None)
def test_fuzzed_pages_give_the_same_metadata_with_and_without_the_serializers_tree(value, junk, itemprop):
    html = (f'<html lang="{junk[:8]}"><head><title>{junk[:30]}</title><script type="application/ld+json">'
            f'{json.dumps(value)}</script><meta property="og:title" content="{junk[:40]}"></head><body><h1>{junk}</h1>'
            f'<div itemscope itemtype="https://schema.org/Article"><span itemprop="{itemprop}">{junk}</span></div>'
            f'<p class="byline">By {junk[:20]}</p><p>{junk}</p></body></html>')
    shared = serialize(html, url="https://example.com/a", tree_reader=metadata.read_tree)
    alone = serialize(html, url="https://example.com/a")
    kind = _Typed("article")
    assert page_metadata(html, shared, None, kind, today=TODAY) == page_metadata(html, alone, None, kind, today=TODAY)


@pytest.mark.parametrize("html", [
    '<!-- first --><HTML lang="de" prefix="my: http://example.com/ns#"><head><meta property="my:title" content="T">'
    "</head><body><p>x</p></body></HTML>",
    "<p>no html tag</p>", "<svg><html></html></svg>", "\x00<html><head></head></html>"])
def test_the_document_element_is_the_first_html_element_a_selector_finds(html):
    from selectolax.lexbor import LexborHTMLParser

    tree = LexborHTMLParser(html)
    assert metadata._html_element(tree).mem_id == tree.css_first("html").mem_id
    declared = metadata.read_tree(tree, html)
    if "prefix" in html:  # <html>'s attributes still read: its language and its Open Graph prefixes
        assert declared.lang == "de" and declared.og == {"my:title": "T"}


def _microdata_source_of(html):
    from selectolax.lexbor import LexborHTMLParser

    tree = LexborHTMLParser(html)
    return metadata._microdata_source(tree, html, metadata._Selected(tree))


def test_extruct_reads_the_outermost_items_markup_and_finds_the_items_it_finds_in_the_page():
    filler = "<div class='nav'><a href='/x'>A link</a><p>Some text of the page around the items.</p></div>" * 300
    page = MICRODATA.replace("<body>", f"<body>{filler}").replace("</body>", f"{filler}</body>")
    source = _microdata_source_of(page)
    assert len(source) < len(page) / 10 and source.count("itemscope") == page.count("itemscope")
    for html in (page, QA_MICRODATA, MICRODATA):
        whole, outer = [], []
        items = metadata._microdata_items(html, URL, whole)
        assert items and items == metadata._microdata_items(_microdata_source_of(html), URL, outer)
        assert whole == outer == []
    assert meta_of(page).author == ["Marie Curie"]
    # the page itself where an item is the whole page, or refers to markup elsewhere by id
    for html in (QA_MICRODATA, '<html><body><div itemscope itemref="a"></div><p id="a" itemprop="name">N</p></body>'
                               "</html>"):
        assert _microdata_source_of(html) is html
    # properties without an item: nothing for extruct to find, lxml does not parse the page
    loose = '<html><body><time itemprop="datePublished" datetime="2023-10-01">1 Oct</time></body></html>'
    assert _microdata_source_of(loose) is None


MICRODATA_PAGE = """<html><head><title>Kettle | Shop</title></head><body><div itemscope
itemtype="https://schema.org/Product"><h1 itemprop="name">Steel kettle</h1><span itemprop="brand">Acme</span>
</div><p>A kettle that boils water quickly and quietly.</p></body></html>"""


def _deep_jsonld(depth: int) -> str:
    inner = '{"a":' * depth + "1" + "}" * depth
    return (f'<html><head><script type="application/ld+json">{{"@type": "NewsArticle", "headline": "Deep one",'
            f' "datePublished": "2025-09-04", "x": {inner}}}</script></head><body><h1>Deep</h1>'
            "<p>Body text of the page.</p></body></html>")


@pytest.mark.parametrize("html", [JSONLD, MICRODATA_PAGE, _deep_jsonld(500), _deep_jsonld(900)])
def test_what_a_worker_read_from_its_tree_travels_as_json_and_gives_the_same_metadata(html):
    # A crawl's worker sends the page pickled (Page.from_tree left out) and what it read from its tree as
    # a JSON string: pickle itself refuses JSON-LD nested some 500 deep, which json writes and reads.
    import pickle

    from edrew_scrapy.metadata import Declared, declared_from_json, declared_to_json, read_tree
    from edrew_scrapy.pagetype import default_classifier

    classifier = default_classifier()
    page = serialize(html, url=URL, tree_reader=read_tree)
    assert isinstance(page.from_tree, Declared)
    here, sent = pickle.loads(pickle.dumps((page, declared_to_json(page.from_tree))))
    assert here.from_tree is None and isinstance(sent, str)
    here.from_tree = declared_from_json(sent)
    assert here.from_tree == page.from_tree
    assert (page_metadata(html, here, classifier=classifier, url=URL, today=TODAY)
            == page_metadata(html, page, classifier=classifier, url=URL, today=TODAY)
            == page_metadata(html, serialize(html, url=URL), classifier=classifier, url=URL, today=TODAY))


def test_declared_of_is_the_tree_reading_else_the_page_read_apart_without_dates():
    from edrew_scrapy.metadata import declared_of, read_declared, read_tree

    html = JSONLD
    read = serialize(html, url=URL, tree_reader=read_tree)
    assert declared_of(read, html, url=URL) is read.from_tree
    apart = declared_of(serialize(html, url=URL), html, url=URL)
    assert apart == read_declared(html, url=URL, dates=False) and apart.items


def test_what_cannot_travel_as_json_is_none_and_the_page_is_parsed_again(monkeypatch):
    from edrew_scrapy.metadata import Declared, declared_from_json, declared_to_json, read_tree

    assert declared_to_json(None) is None and declared_to_json({"items": []}) is None
    assert declared_to_json(Declared(items=[{"@type": "Thing", "x": object()}])) is None  # not JSON's types
    assert declared_from_json(None) is None and declared_from_json("{broken") is None
    assert declared_from_json('{"unknown": 1}') is None and declared_from_json("[1, 2]") is None
    page = serialize(JSONLD, url=URL, tree_reader=read_tree)
    monkeypatch.setattr(metadata, "MAX_SENT_CHARS", 100)  # over the bound: not sent
    assert declared_to_json(page.from_tree) is None
    # where nothing came, page_metadata parses the page itself: the same fields
    page_without = serialize(JSONLD, url=URL)
    assert meta_of(JSONLD, page=page_without) == meta_of(JSONLD, page=page)


UNDECLARED = DATELINE.replace(', "datePublished": "2024-04-10T19:30:39Z"', "")


@pytest.mark.parametrize("dateline,footer,decides", [
    ("Sep 4, 2025 · 3 min read", "", True),  # one dateline by the heading, no other day shown
    ("Updated on: October 28, 2024", "", True),  # an "Updated" day alone
    ("Sep 4, 2025", "<p>Published Apr 8, 2024</p>", True),  # shown as the publication
    ("Sep 4, 2025", "<p>Last updated: Oct 1, 2025</p>", True),  # another day, shown only as an update
    ("Sep 4, 2025", "<p>Event on Oct 1, 2025</p>", False),  # another day shown: htmldate's may be it
    ("Sep 4, 2025 – Dec 1, 2025", "", False),  # two days by the heading
    ("no day here", "", False),  # no day shown
    ("no day here", "<time datetime='2023-05-06'>May 6, 2023</time>", True),  # the one day by the heading
])
def test_htmldate_is_not_run_where_the_days_the_page_shows_decide_its_date(monkeypatch, dateline, footer, decides):
    html = UNDECLARED.replace("{dateline}", dateline).replace("{footer}", footer)
    url = "https://seo.example/academy/predictions"
    page = serialize(html, url=url)
    assert metadata._shown_decides(page, TODAY) is decides
    calls = []
    shipped = metadata._htmldate
    monkeypatch.setattr(metadata, "_htmldate", lambda *a, **k: calls.append(a) or shipped(*a, **k))
    # the rules' day (date_chooser=None): htmldate's day is one more candidate for the chooser, which picks
    # among what was read
    for kind in ("article", "listing"):
        got = page_metadata(html, page, None, _Typed(kind), url=url, today=TODAY, date_chooser=None)
        assert len(calls) == (0 if decides else 1)
        calls.clear()
        with monkeypatch.context() as always:  # htmldate run: the same fields
            always.setattr(metadata, "_shown_decides", lambda *a: False)
            assert page_metadata(html, page, None, _Typed(kind), url=url, today=TODAY, date_chooser=None) == got
        assert len(calls) == 1
        calls.clear()
    # where it decides, the day given is the same whatever day htmldate would have found
    if decides:
        shown = {s.day for s in metadata.page_shown(page, TODAY)[1]}
        results = {metadata._shown_day(day, page, TODAY, url) for day in (None, "2001-01-01", *shown)}
        assert len(results) == 1 and results != {None}


def test_a_pages_own_full_date_in_the_url_is_read_before_what_it_shows():
    html = UNDECLARED.replace("{dateline}", "Sep 4, 2025").replace("{footer}", "")
    url = "https://seo.example/2016/07/30/predictions"
    page = serialize(html, url=url)
    assert metadata._shown_decides(page, TODAY)
    # the rules' day (the chooser weighs the URL's day against the dateline as it learnt to)
    assert page_metadata(html, page, None, _Typed("article"), url=url, today=TODAY,
                         date_chooser=None).date_published == "2016-07-30"


@pytest.mark.parametrize("encoding", [None, "utf-8", "utf-16"])
def test_a_page_with_nuls_gives_the_same_metadata_with_and_without_the_serializers_tree(encoding):
    # the serializer parses the text without its NULs; lexbor reads a NUL in an attribute as U+FFFD
    html = ('<html><head><title>\x00</title><meta property="og:title" content="Quay\x00 Road"></head><body>'
            '<p>Body text of the page.</p></body></html>')
    data = html if encoding is None else html.encode(encoding)
    shared = serialize(data, encoding=encoding, url=URL, tree_reader=metadata.read_tree)
    alone = serialize(data, encoding=encoding, url=URL)
    assert shared.from_tree is not None
    kind = _Typed("article")
    got = page_metadata(data, shared, None, kind, encoding=encoding, today=TODAY)
    assert got == page_metadata(data, alone, None, kind, encoding=encoding, today=TODAY)
    assert got.headline == "Quay\ufffd Road"


def test_htmldates_logger_goes_to_info_unless_a_level_was_set_for_it():
    logger = logging.getLogger("htmldate")
    saved = logger.level
    try:
        for level, expected in ((logging.NOTSET, logging.INFO), (logging.DEBUG, logging.DEBUG)):
            logger.setLevel(level)
            metadata._quiet_logger.cache_clear()
            assert metadata._htmldate(metadata._NO_PAGE, "https://n.example/2025/09/04/a", TODAY, False) == "2025-09-04"
            assert logger.level == expected
    finally:
        logger.setLevel(saved)
        metadata._quiet_logger.cache_clear()
