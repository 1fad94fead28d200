"""`edrew_scrapy.EdrewPipeline` in ITEM_PIPELINES, for crawlers that keep each page's HTML in their own items:
in a real `scrapy runspider` crawl against a server on 127.0.0.1, the HTML field of dicts and of
dataclass items becomes (or gets beside it) the page's relevant content; other items pass untouched.
Alone it starts its own scoring stage; with the add-on it scores through the add-on's (one model load,
one worker pool).
"""
from __future__ import annotations

import json
import re
import textwrap

import pytest
from conftest import DEMO_SITE, run_scrapy

pytestmark = pytest.mark.crawl

ARTICLE = "news/council-approves-riverside-bike-lanes.html"

SPIDER = '''
from dataclasses import dataclass
from typing import Any

import scrapy


@dataclass
class Stored:
    url: str
    html: Any
    html_relevant: Any = None


class StoringSpider(scrapy.Spider):
    """A crawler that stores the HTML of each page for later cleaning, in two item types."""

    name = "storing"
    custom_settings = {"ITEM_PIPELINES": {"edrew_scrapy.EdrewPipeline": 300}, "TELNETCONSOLE_ENABLED": False}

    def __init__(self, base, raw="1", **kwargs):
        super().__init__(**kwargs)
        self.raw = raw == "1"  # the dataclass item stores the body's bytes (a JSON feed cannot hold them)
        self.start_urls = [f"{base}/%s", f"{base}/news/library-extends-weekend-hours.html"]

    def parse(self, response):
        yield {"kind": "dict", "url": response.url, "html": response.text}
        yield Stored(url=response.url, html=response.body if self.raw else response.text)
        yield {"kind": "other", "url": response.url, "note": "no html field"}
        yield {"kind": "number", "url": response.url, "html": 42}
''' % ARTICLE


def _crawl(tmp_path, base, *args):
    (tmp_path / "storing.py").write_text(textwrap.dedent(SPIDER), "utf-8")
    proc = run_scrapy(["runspider", "storing.py", "-a", f"base={base}", "-O", "out.jsonl", *args], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-4000:]
    items = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text("utf-8").splitlines()]
    stats = {k: int(v) for k, v in re.findall(r"'(edrew/[^']+)': (\d+)", proc.stderr)}
    return proc, items, stats


def _check_relevant(content, url):
    assert set(content) >= {"title", "text", "nodes", "images"}, content
    assert content["nodes"] and all(set(n) == {"content", "score", "path"} for n in content["nodes"])
    assert content["text"] == "\n".join(n["content"] for n in content["nodes"])
    assert "Accept all cookies" not in content["text"] and "All rights reserved" not in content["text"]
    if url.endswith(ARTICLE):
        assert "voted nine to four" in content["text"], content["text"][:300]


def test_pipeline_alone_replaces_the_html_field_of_any_item_type(serve, tmp_path):
    base = serve(DEMO_SITE)
    proc, items, stats = _crawl(tmp_path, base)
    with_html = [i for i in items if i.get("kind") in ("dict", None)]
    assert len(with_html) == 4  # a dict and a dataclass item per page
    for item in with_html:
        _check_relevant(item["html"], item["url"])
        assert item.get("html_relevant") is None
    # untouched: no field, and a field that holds no HTML (counted)
    assert sorted(i["url"].rsplit("/", 1)[1] for i in items if i.get("kind") == "other") == \
        ["council-approves-riverside-bike-lanes.html", "library-extends-weekend-hours.html"]
    assert [i["html"] for i in items if i.get("kind") == "number"] == [42, 42]
    assert stats["edrew/pipeline/fields"] == 4
    assert stats["edrew/skipped/pipeline-not-html"] == 2
    assert "edrew/errors" not in stats
    assert not any("text" in i and "nodes" in i for i in items)  # no add-on: no page items of its own
    assert proc.stderr.count("EDREW scoring with the model") == 1


def test_pipeline_with_the_addon_adds_beside_and_shares_its_scoring_stage(serve, tmp_path):
    base = serve(DEMO_SITE)
    proc, items, stats = _crawl(tmp_path, base, "-s", 'ADDONS={"edrew_scrapy.Addon": 500}',
                                "-s", "EDREW_PIPELINE_REPLACE=False", "-a", "raw=0")
    stored = [i for i in items if i.get("kind") in ("dict", None) and "html" in i]
    assert len(stored) == 4
    for item in stored:
        assert item["html"].startswith("<!DOCTYPE html>")  # kept
        _check_relevant(item["html_relevant"], item["url"])
    pages = [i for i in items if "nodes" in i and "text" in i]
    assert len(pages) == 2  # the add-on's own page items, beside
    by_url = {p["url"]: p["text"] for p in pages}
    for item in stored:
        assert item["html_relevant"]["text"] == by_url[item["url"]]  # the same scoring, the same content
    # and the same metadata and comments, which the scoring stage reads for the pipeline's pages too
    fields = ("comments", "headline", "author", "date_published", "language", "page_type")
    by_url = {p["url"]: {f: p[f] for f in fields} for p in pages}
    for item in stored:
        assert {f: item["html_relevant"][f] for f in fields} == by_url[item["url"]]
    article = next(i["html_relevant"] for i in stored if i["url"].endswith(ARTICLE))
    assert article["headline"] == "Council approves protected bike lanes on Quay Road"
    assert article["author"] == ["Maya Okonkwo"] and article["date_published"] == "2026-03-03"
    # one scoring stage in the crawl: one model load, one worker pool
    assert proc.stderr.count("EDREW scoring with the model") == 1
    assert stats["edrew/pipeline/fields"] == 4
