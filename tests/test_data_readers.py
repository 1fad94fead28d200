"""WCXB, SWDE and simple-format readers on tiny invented fixtures (tests/fixtures/data)."""
import json
import re
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
    assert pages[0].group == "p.html"   # ... and not cut to a registrable domain ("p.html" -> "p.html")
    (tmp_path / "list.json").write_text(json.dumps([{"file": "p.html", "relevant": ["Menu"], "id": "x"}]))
    pages = list(simple.iter_pages(tmp_path, labels=tmp_path / "list.json"))
    assert pages[0].page_id == "x" and _labelled(pages[0]) == ["Menu"]


def test_simple_group_keys(tmp_path):
    from edrew_scrapy.data.splits import by_domain

    (tmp_path / "p.html").write_text("<html><body><p>Some text here</p></body></html>")
    (tmp_path / "labels.jsonl").write_text(
        '{"file": "p.html", "id": "1", "url": "https://uk.shop.example.com/a", "relevant": ["x"]}\n'
        '{"file": "p.html", "id": "2", "url": "https://uk.shop.example.com/b", "group": "uk.shop", "relevant": ["x"]}\n'
        '{"file": "p.html", "id": "3", "relevant": ["x"]}\n')
    pages = list(simple.iter_pages(tmp_path))
    assert [p.domain for p in pages] == ["uk.shop.example.com", "uk.shop", "3"]
    assert [by_domain(p) for p in pages] == ["example.com", "uk.shop", "3"]


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


# Bad input: one DatasetError (a ValueError) whose message names the file (and line) and the problem.

def _wcxb_copy(tmp_path, page="0002", change=None, text=None):
    """The WCXB fixture in tmp_path/w, with page's ground truth changed (`change(truth)`) or replaced."""
    import shutil

    root = tmp_path / "w"
    shutil.copytree(DATA / "wcxb", root)
    path = root / "ground-truth" / f"{page}.json"
    if change:
        truth = json.loads(path.read_text())
        change(truth)
        path.write_text(json.dumps(truth))
    if text is not None:
        path.write_bytes(text)
    return root, path


@pytest.mark.parametrize("change, text, message", [
    (None, b"[]", "the ground truth must be an object, not a list []"),
    (lambda t: t.update(ground_truth="oops"), None, 'ground_truth must be an object, not a string "oops"'),
    (lambda t: t["ground_truth"].update(main_content=5), None,
     "ground_truth.main_content must be a string, not a number 5"),
    (lambda t: t["ground_truth"].update(without=["x", 3]), None, "ground_truth.without must be a list of strings"),
    (lambda t: t.update(url=["u"]), None, "url must be a string"),
    (lambda t: t.update(url="http://[x/"), None, "url: 'http://[x/' is not a URL"),
    (lambda t: t["_internal"].update(page_type="article"), None, "_internal.page_type must be an object"),
    (None, b'{"url": ', "not valid JSON (Expecting value: line 1 column 9"),
    (None, b'{"url": "\xff"}', "not UTF-8 text (byte 9)"),
])
def test_wcxb_bad_ground_truth_names_the_file(tmp_path, change, text, message):
    from edrew_scrapy.data import DatasetError

    root, path = _wcxb_copy(tmp_path, change=change, text=text)
    with pytest.raises(DatasetError) as caught:
        list(wcxb.iter_pages(root))
    assert str(caught.value).startswith(f"{path}: ") and message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_wcxb_broken_or_missing_html_names_the_file(tmp_path):
    from edrew_scrapy.data import DatasetError

    root, _ = _wcxb_copy(tmp_path)
    html = root / "html" / "0002.html.gz"
    html.write_bytes(html.read_bytes()[:100])  # truncated
    with pytest.raises(DatasetError, match=f"^{html}: broken gzip file"):
        list(wcxb.iter_pages(root))
    html.unlink()
    with pytest.raises(DatasetError, match="no 0002.html.gz or 0002.html"):
        list(wcxb.iter_pages(root))


def test_read_source_names_the_file(tmp_path):
    from edrew_scrapy.data import DatasetError

    (tmp_path / "x.html.gz").write_bytes(b"not gzip at all")
    with pytest.raises(DatasetError, match="x.html.gz: broken gzip file"):
        read_source(tmp_path / "x.html.gz")
    with pytest.raises(DatasetError, match="nosuch.html: cannot read: No such file"):
        read_source(tmp_path / "nosuch.html")


def _simple_copy(tmp_path, line2=None):
    """The simple fixture in tmp_path/s, its labels.jsonl with blank lines between the records and the
    second record (line 3) replaced by `line2`."""
    import shutil

    root = tmp_path / "s"
    shutil.copytree(DATA / "simple", root)
    lines = (root / "labels.jsonl").read_text().splitlines()
    if line2 is not None:
        lines[1] = line2 if isinstance(line2, str) else json.dumps(line2(json.loads(lines[1])))
    (root / "labels.jsonl").write_text("\n\n".join(lines) + "\n")
    return root


@pytest.mark.parametrize("line2, message", [
    ('{"file": "b.html.gz", "relevant": [', "not valid JSON (Expecting value at column 36)"),
    (lambda r: dict(r, selectors=["a)"]), "invalid CSS selector 'a)'"),
    (lambda r: dict(r, selectors=["h1::text"]), "CSS selector 'h1::text' must select elements"),
    (lambda r: dict(r, selectors=["ns|a"]), "invalid CSS selector 'ns|a'"),  # translates, fails when run
    (lambda r: dict(r, url="http://[x/"), "url: 'http://[x/' is not a URL"),
    (lambda r: dict(r, selectors="h1"), 'selectors must be a list of strings, not a string "h1"'),
    (lambda r: dict(r, relevant=5), "relevant must be a list of strings, not a number 5"),
    (lambda r: dict(r, relevant=["ok", None]), "relevant must be a list of strings, not a list holding null"),
    (lambda r: dict(r, file=5), "file must be a string, not a number 5"),
    (lambda r: dict(r, file=""), "file must name an HTML file"),
    (lambda r: dict(r, main_content=5), "main_content must be a string, not a number 5"),
    (lambda r: dict(r, url=5), "url must be a string"),
    (lambda r: dict(r, id=[1]), "id must be a string or a whole number"),
    (lambda r: dict(r, id=1.5), "id must be a string or a whole number, not a number 1.5"),
    (lambda r: [r], "a record must be an object, not a list"),
    (lambda r: {"relevant": ["x"]}, "the record has no 'file' key"),
])
def test_simple_bad_record_names_the_file_and_its_line(tmp_path, line2, message):
    from edrew_scrapy.data import DatasetError

    root = _simple_copy(tmp_path, line2)
    with pytest.raises(DatasetError) as caught:
        list(simple.iter_pages(root))
    assert str(caught.value).startswith(f"{root / 'labels.jsonl'}:3: ") and message in str(caught.value)


def test_simple_labels_json_errors_name_the_file(tmp_path):
    from edrew_scrapy.data import DatasetError

    root = _simple_copy(tmp_path)
    (root / "labels.jsonl").unlink()
    for text, message in [('{"a.html": 3}', "'a.html': a record must be an object, not a number 3"),
                          ("[5]", "record 1: a record must be an object"),
                          ("5", "must hold a list of records or an object of them by file name, not a number 5"),
                          ('{"a.html": {}', "not valid JSON (Expecting ',' delimiter: line 1 column 14")]:
        (root / "labels.json").write_text(text)
        with pytest.raises(DatasetError, match=re.escape(f"{root / 'labels.json'}: {message}")):
            list(simple.iter_pages(root))


def test_simple_missing_labels_and_html_are_named(tmp_path):
    from edrew_scrapy.data import DatasetError

    with pytest.raises(DatasetError, match=r"no labels.jsonl or labels.json \(give the label file with --labels\)"):
        list(simple.iter_pages(tmp_path))
    root = _simple_copy(tmp_path, lambda r: dict(r, file="gone.html"))
    with pytest.raises(DatasetError, match=f"{root / 'gone.html'}: cannot read"):
        list(simple.iter_pages(root))


def test_simple_jsonl_records_may_hold_line_separators(tmp_path):
    # U+2028 is valid unescaped in a JSON string; str.splitlines() would cut the record there
    root = _simple_copy(tmp_path, lambda r: dict(r, page_type="pro\u2028duct"))
    text = (root / "labels.jsonl").read_text().replace("\\u2028", "\u2028")
    (root / "labels.jsonl").write_text(text)
    assert "\u2028" in text
    assert [p.page_type_or_site for p in simple.iter_pages(root)][1] == "pro\u2028duct"


def test_swde_attributes_and_unreadable_groundtruth(tmp_path):
    import shutil

    from edrew_scrapy.data import DatasetError

    assert swde.attributes(DATA / "swde") == ["author", "isbn_13", "publisher", "title"]
    assert swde.attributes(DATA / "swde", ["nosuch"]) == []
    root = tmp_path / "swde"
    shutil.copytree(DATA / "swde", root)
    bad = root / "groundtruth" / "book-inkwell-title.txt"
    bad.write_bytes(bad.read_bytes() + b"\n0009\t1\t\xff\n")
    with pytest.raises(DatasetError, match=f"^{bad}: not UTF-8 text"):
        list(swde.iter_pages(root))


def test_simple_id_zero_is_an_id_not_the_file_name(tmp_path):
    root = _simple_copy(tmp_path, lambda r: dict(r, id=0))
    assert [p.page_id for p in simple.iter_pages(root)][1] == "0"
