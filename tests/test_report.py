"""report.py and `edrew inspect` without a browser: escaping, the command's errors, the crawl summary's
bounds, and the report extension's wiring (tests/test_report_browser.py renders them in chromium)."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from _model_helpers import tiny_model
from conftest import cli
from scrapy.exceptions import NotConfigured
from scrapy.settings import Settings
from scrapy.utils.test import get_crawler

from edrew_scrapy.report import (
    CSP,
    CrawlSummary,
    PageSummary,
    crawl_summary_html,
    page_report,
    page_view,
    report_name,
)
from edrew_scrapy.rules import explain
from edrew_scrapy.scrapy.addon import Addon
from edrew_scrapy.scrapy.reports import EdrewReports
from edrew_scrapy.serializer import serialize

ARTICLE = Path(__file__).resolve().parent.parent / "demo/site/news/council-approves-riverside-bike-lanes.html"
EVIL = "<script>alert(1)</script>\"'><img src=x onerror=alert(1)>"


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    path = tmp_path_factory.mktemp("model")
    tiny_model(path)
    return path


def test_everything_from_the_page_is_escaped():
    html = (f"<html><head><title>{EVIL.replace('<', '&lt;')}</title></head><body>"
            f"<div class='{EVIL.replace(chr(39), '&#39;').replace('<', '&lt;')}'><p>{EVIL.replace('<', '&lt;')} "
            f"words words words</p></div><p><img src='javascript:alert(1)'>Text with a picture.</p></body></html>")
    page = serialize(html, url=f"http://example.test/{EVIL}")
    scores = np.full(len(page.nodes), 0.9, dtype=np.float32)
    report, summary = page_report(page, scores, explain(page, scores, 0.5, 0.7), source=EVIL,
                                  model={"name": EVIL, "directory": EVIL}, compare=("trafilatura", EVIL))
    assert f'content="{CSP}"' in report
    # the page's markup is text: no element of it, and no attribute value it could close
    assert "<script" not in report and "<img" not in report and "\"'>" not in report
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in report
    assert summary.nodes == len(page.nodes) and summary.kept_nodes >= 1


def test_a_page_without_scores_says_why():
    page = serialize(b"")
    report, summary = page_report(page, None, None, source="empty.html")
    assert "Not scored: empty" in report and summary.nodes == 0 and summary.kept_share == 0.0


def test_report_names_are_safe():
    name = report_name(3, "http://a.test/x/../../etc/passwd?<script>")
    assert name == "page-0003-a-test-x-------etc-passwd--script.html"
    assert report_name(0, None) == "page-0000-page.html"
    assert "/" not in report_name(1, "http://a.test/" + "/" * 500)


def test_crawl_summary_is_bounded_and_escaped():
    summary = CrawlSummary(slowest=3)
    for i in range(1000):
        summary.add(f"http://a.test/{i}", PageSummary(nodes=4, kept_nodes=1, kept_words=i % 10, dropped_words=10),
                    seconds=i / 100)
    assert summary.pages == 1000 and sum(summary.share_counts) == 1000 and len(summary._slow) == 3
    assert [u for _, u in summary.slowest_pages()] == ["http://a.test/999", "http://a.test/998", "http://a.test/997"]
    summary.reports.append((f"http://a.test/{EVIL}", "page-0000-a.html", 0.5, 10))
    html = crawl_summary_html(summary, {"edrew/pages": 1000, f"edrew/skipped/{EVIL}": 2, "item_scraped_count": 5},
                              spider=EVIL, report_limit=1)
    assert "<script" not in html and "<img" not in html and 'href="page-0000-a.html"' in html
    assert '<div class="count kept" data-count="pages scored"><b>1000</b>' in html


def test_inspect_command(model_dir, tmp_path, capsys):
    out = tmp_path / "r.html"
    status, err = cli(capsys, "inspect", str(ARTICLE), "--model", str(model_dir), "-o", str(out))
    assert status == 0 and f"{out}:" in err and "nodes kept" in err
    text = out.read_text("utf-8")
    assert "Council approves protected bike lanes" in text and 'class="node ' in text
    status, err = cli(capsys, "inspect", str(tmp_path / "missing.html"), "--model", str(model_dir), "-o", str(out))
    assert status == 1 and "missing.html" in err
    status, err = cli(capsys, "inspect", str(ARTICLE), "--model", str(tmp_path / "nomodel"), "-o", str(out))
    assert status == 2 and "edrew inspect:" in err
    data = tmp_path / "data.json"
    data.write_text('{"a": 1}', encoding="utf-8")
    status, err = cli(capsys, "inspect", str(data), "--model", str(model_dir), "-o", str(out))
    assert status == 0 and "Not scored: not-html" in out.read_text("utf-8")
    torch.set_num_threads(3)  # torch's default is a thread per core; the command scores on one unless told
    try:
        assert cli(capsys, "inspect", str(ARTICLE), "--model", str(model_dir), "-o", str(out))[0] == 0
        assert torch.get_num_threads() == 1
        assert cli(capsys, "inspect", str(ARTICLE), "--model", str(model_dir), "-o", str(out), "--threads", "2")[0] == 0
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(1)


def test_inspect_compare_with_trafilatura(model_dir, tmp_path, capsys):
    pytest.importorskip("trafilatura", reason="the dev extras install trafilatura")
    out = tmp_path / "r.html"
    status, _ = cli(capsys, "inspect", str(ARTICLE), "--model", str(model_dir), "--compare", "trafilatura",
                    "-o", str(out))
    text = out.read_text("utf-8")
    assert status == 0 and "<h3>trafilatura (" in text and "Riverside council voted nine to four" in text


def test_inspect_compare_without_trafilatura(model_dir, tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "trafilatura", None)  # what `import trafilatura` meets where it is missing
    status, err = cli(capsys, "inspect", str(ARTICLE), "--model", str(model_dir), "--compare", "trafilatura",
                      "-o", str(tmp_path / "r.html"))
    assert status == 2 and "pip install 'edrew-scrapy[eval]'" in err and not (tmp_path / "r.html").exists()


def test_report_extension_needs_its_folder(tmp_path):
    with pytest.raises(NotConfigured):
        EdrewReports.from_crawler(get_crawler(settings_dict={}))
    with pytest.raises(NotConfigured):
        EdrewReports.from_crawler(get_crawler(settings_dict={"EDREW_REPORT_DIR": str(tmp_path),
                                                             "EDREW_ENABLED": False}))
    with pytest.raises(ValueError, match="EDREW_REPORT_PAGES"):
        EdrewReports.from_crawler(get_crawler(settings_dict={"EDREW_REPORT_DIR": str(tmp_path),
                                                             "EDREW_REPORT_PAGES": -1}))
    ext = EdrewReports.from_crawler(get_crawler(settings_dict={"EDREW_REPORT_DIR": str(tmp_path / "new"),
                                                               "EDREW_REPORT_PAGES": "3"}))
    assert ext.limit == 3 and (tmp_path / "new").is_dir() and ext.model["name"] == "default"


def test_addon_wires_the_report_extension():
    settings = Settings()
    Addon().update_settings(settings)
    assert EdrewReports in settings.getdict("EXTENSIONS")
    assert settings["EDREW_REPORT_DIR"] is None and settings["EDREW_REPORT_PAGES"] == 20


def test_page_view_keeps_text_and_safe_styles_only():
    html = ("<html><head><style>p{color:red}</style><style>body{background:url(http://x.test/t.png)}</style>"
            "<link rel=stylesheet href='http://x.test/s.css'></head><body><main><p style='color:blue' "
            "onclick='alert(1)'>First paragraph with words enough.</p><a href='javascript:alert(1)'>link</a>"
            "<p style='background:url(http://x.test/)'>Second <img src=x alt='a cat'> one.</p><custom-el>"
            "Custom text.</custom-el><template><p>hidden template</p></template><!-- a comment --></main>"
            "</body></html>")
    page = serialize(html)
    scores = np.full(len(page.nodes), 0.9, dtype=np.float32)
    view = page_view(html, "utf-8", page, scores, explain(page, scores, 0.5, 0.7).reasons)
    assert view.startswith("<!DOCTYPE html>") and f'content="{CSP}"' in view
    assert "p{color:red}" in view and "url(" not in view and "http://x.test" not in view
    assert 'style="color:blue"' in view and "onclick" not in view and "href" not in view
    assert "<img" not in view and "image: a cat" in view and "hidden template" not in view
    assert "<custom-el" not in view and "Custom text." in view
    assert view.count('data-edrew="kept"') == sum(r == "kept" for r in explain(page, scores, 0.5, 0.7).reasons)


@pytest.mark.parametrize("data", [
    b"", b"\x00\x01\x02binary\xff\xfe", "<div>" * 5000 + "deep text here" + "</div>" * 5000,
    "<p>" + "x" * 200_000 + "</p>", f"<p title='{'A' * 500_000}'>huge attribute</p>", "<p>nul \x00 char</p>",
    "<p>lone \ud800 surrogate</p>", b"<p>bad \xc3\x28 utf-8</p>", "<table><p>mis<li>nested</table></p>",
    "<?xml version='1.0'?><!DOCTYPE x><svg><p>in svg</p></svg>",
], ids=["empty", "binary", "deep", "long-text", "huge-attribute", "nul", "surrogate", "bad-utf8", "misnested",
        "xml"])
def test_bad_pages_give_a_report(data, tmp_path):
    page = serialize(data)
    scores = np.linspace(0, 1, len(page.nodes), dtype=np.float32)
    decision = explain(page, scores, 0.5, 0.7) if page.nodes else None
    view = page_view(data, page.encoding, page, scores, decision.reasons) if decision else None
    report, summary = page_report(page, scores if decision else None, decision, view=view)
    out = tmp_path / "r.html"
    out.write_text(report, encoding="utf-8", errors="replace")
    assert summary.nodes == len(page.nodes) and out.stat().st_size > 0
    assert "<script" not in report
