"""WCXB, SWDE and simple-format readers on tiny invented fixtures (tests/fixtures/data)."""
import json
from pathlib import Path

import pytest

from edrew_scrapy.data import LabelledPage, domain_of, normalize_text, read_source, simple, swde, wcxb

DATA = Path(__file__).parent / "fixtures" / "data"


def _labelled(lp: LabelledPage):
    return [n.content for n, y in zip(lp.page.nodes, lp.labels) if y]


def test_wcxb_reads_pages_and_labels_main_content():
    pages = list(wcxb.iter_pages(DATA / "wcxb"))
    assert [p.page_id for p in pages] == ["0001", "0002", "0003"]
    article = pages[0]
    assert article.page_type_or_site == "article"
    assert article.domain == "gardenweekly.example"
    assert len(article.labels) == len(article.page.nodes)
    assert _labelled(article)[0] == "Why tomatoes split after heavy rain"
    texts = dict(zip((n.content for n in article.page.nodes), article.labels))
    for boilerplate in ("Home", "News", "Share this article", "Related", "Contact", "By Ada Green"):
        assert texts[boilerplate] == 0
    assert texts["Water evenly"] == 1
    assert article.meta["main_content"].startswith("Why tomatoes")
    assert article.meta["without"] == ["Share this article", "Copyright 2025 Garden Weekly. All rights reserved."]
    assert Path(article.meta["source"]).exists()


def test_wcxb_ids_select_and_order():
    pages = list(wcxb.iter_pages(DATA / "wcxb", ids=["0003", "0001"]))
    assert [p.page_id for p in pages] == ["0003", "0001"]
    assert pages[0].page_type_or_site == "product"
    assert "$24.90" in _labelled(pages[0])


def test_wcxb_relevant_text_reaches_the_reference():
    from edrew_scrapy.data.align import word_f1

    for lp in wcxb.iter_pages(DATA / "wcxb"):
        assert word_f1(lp.relevant_text, lp.meta["main_content"])[2] > 0.95


def test_swde_reads_sites_values_and_attributes():
    pages = list(swde.iter_pages(DATA / "swde"))
    assert [p.page_id for p in pages] == ["inkwell/0000", "inkwell/0001", "paperhouse/0000",
                                          "paperhouse/0001", "paperhouse/0002"]
    first = pages[0]
    assert first.url == "http://www.inkwell.example/product/9780000000031"
    assert first.domain == first.page_type_or_site == "inkwell"
    assert first.meta["values"]["isbn_13"] == [": 9780000000031"]
    by_text = {n.content: (y, a) for n, y, a in zip(first.page.nodes, first.labels, first.meta["node_attrs"])}
    assert by_text["River Maps"] == (1, ["title"])
    assert by_text["ISBN-13: 9780000000031"] == (1, ["isbn_13"])
    assert by_text["by Ines Vale"] == (1, ["author"])
    assert by_text["Home | Books"][0] == 0
    # <NULL> publisher: the publisher node of that page is not relevant
    second = pages[1]
    assert second.meta["values"]["publisher"] == []
    assert "Publisher: Northwind" not in _labelled(second)


def test_swde_sites_and_attrs_filters():
    pages = list(swde.iter_pages(DATA / "swde", sites=["paperhouse"], attrs=["title"]))
    assert {p.page_type_or_site for p in pages} == {"paperhouse"}
    assert all(set(p.meta["values"]) == {"title"} for p in pages)
    assert all(len(_labelled(p)) == 1 for p in pages)


def test_swde_groundtruth_strips_bom_and_null():
    truth = swde.load_groundtruth(DATA / "swde", "book", "inkwell")
    assert truth["0000"]["title"] == ["River Maps"]
    assert truth["0001"]["publisher"] == []


def test_simple_format_strings_selectors_and_main_content():
    pages = {p.page_id: p for p in simple.iter_pages(DATA / "simple")}
    assert set(pages) == {"a.html", "b.html.gz", "c.html"}
    a = pages["a.html"]
    assert a.page_type_or_site == "article" and a.domain == "gardenweekly.example"
    labelled = _labelled(a)
    assert labelled[0] == "Why tomatoes split after heavy rain"
    assert "Water evenly" in labelled and "By Ada Green" not in labelled and "Home" not in labelled
    assert _labelled(pages["b.html.gz"]) == ["Terracotta pot, 30 cm", "$24.90"]
    c = _labelled(pages["c.html"])
    assert c[0] == "Bike chain keeps slipping on the small cog" and "Popular threads" not in c


def test_simple_json_list_and_mapping(tmp_path):
    (tmp_path / "p.html").write_text("<html><body><h1>Title here</h1><p>Menu</p></body></html>")
    (tmp_path / "labels.json").write_text(json.dumps({"p.html": {"relevant": ["Title here"]}}))
    pages = list(simple.iter_pages(tmp_path))
    assert _labelled(pages[0]) == ["Title here"]
    assert pages[0].domain == "p.html"  # no URL: the file is its own group
    (tmp_path / "list.json").write_text(json.dumps([{"file": "p.html", "relevant": ["Menu"], "id": "x"}]))
    pages = list(simple.iter_pages(tmp_path, labels=tmp_path / "list.json"))
    assert pages[0].page_id == "x" and _labelled(pages[0]) == ["Menu"]


def test_simple_missing_file_key_is_an_error(tmp_path):
    (tmp_path / "labels.jsonl").write_text('{"relevant": ["x"]}\n')
    with pytest.raises(ValueError, match="file"):
        list(simple.iter_pages(tmp_path))


def test_selected_text_document_order_without_repeats():
    html = "<div id=a><h2>Two</h2><p>three</p></div><h1>One</h1><script>var x</script>"
    assert simple.selected_text(html, ["h1", "#a", "p"]).split("\n") == ["Two three", "One"]


def test_helpers():
    assert normalize_text("  Lantern &amp;\n Sons ") == "lantern & sons"
    assert domain_of("https://www.Example.com/x") == "example.com"
    assert domain_of(None) == ""
    assert read_source(DATA / "wcxb" / "html" / "0001.html.gz").startswith(b"<!DOCTYPE html>")


def test_simple_selectors_with_unknown_charset_label(tmp_path):
    (tmp_path / "p.html").write_bytes("<html><body><h1>Café menu</h1><p>Footer</p></body></html>".encode())
    (tmp_path / "labels.jsonl").write_text(json.dumps({"file": "p.html", "encoding": "no-such-codec",
                                                       "selectors": ["h1"]}) + "\n")
    pages = list(simple.iter_pages(tmp_path))
    assert _labelled(pages[0]) == ["Café menu"]
