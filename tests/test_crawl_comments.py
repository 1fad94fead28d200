"""`scrapy crawl edrew` over real HTTP on 127.0.0.1: a blog post's reader comments leave the item's `text` and
come in its `comments` field (EDREW_COMMENTS = "field", the default); "text" keeps them in the text, in
document order, as trafilatura's include_comments does; "none" leaves them out of both."""
from __future__ import annotations

import json

import pytest
from conftest import run_scrapy

pytestmark = pytest.mark.crawl

POST = "blog/sourdough-at-the-farmers-market.html"
STORY = "Ewan Gallagher starts work at ten o'clock on Friday night"
COMMENTS = ["Great piece, the Saturday loaves are the best thing about the market.",
            "Does anyone know if they take card payments now?", "They do, Joanne, since last summer."]


def _item(demo_url, tmp_path, mode, *settings):
    out = tmp_path / f"{mode}.jsonl"
    proc = run_scrapy(["crawl", "edrew", "-a", f"urls={demo_url}/{POST}", "-a", "max_pages=1", "-a", "sitemaps=0",
                       "-O", str(out), "-s", f"EDREW_COMMENTS={mode}", *settings])
    assert proc.returncode == 0, proc.stderr[-4000:]
    [item] = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
    return item


def test_comments_come_apart_from_the_text(demo_url, tmp_path):
    item = _item(demo_url, tmp_path, "field")  # in the worker process (EDREW_WORKERS = 1, the default)
    assert STORY in item["text"]
    assert item["comments"].splitlines()[:2] == ["3 comments", "breadhead_77 · 2 days ago"]
    for comment in COMMENTS:
        assert comment in item["comments"] and comment not in item["text"]
    assert item["text"].splitlines() == [n["content"] for n in item["nodes"]]
    # the share bar under the story is chrome, not text
    assert "Share this story" not in item["text"] and "Facebook" not in item["text"]


def test_comments_in_the_text_or_nowhere(demo_url, tmp_path):
    item = _item(demo_url, tmp_path, "text", "-s", "EDREW_WORKERS=0")
    lines = item["text"].splitlines()
    assert item["comments"] == "" and lines == [n["content"] for n in item["nodes"]]
    assert all(comment in lines for comment in COMMENTS)
    assert lines.index(COMMENTS[0]) < lines.index(COMMENTS[1]) < lines.index(COMMENTS[2])
    assert any(STORY in line for line in lines[:lines.index(COMMENTS[0])])  # the story first, as on the page
    item = _item(demo_url, tmp_path, "none", "-s", "EDREW_WORKERS=0")
    assert item["comments"] == "" and not any(comment in item["text"] for comment in COMMENTS)

