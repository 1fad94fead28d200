"""An existing spider, unchanged but for ADDONS: its own items and the relevant-content items both arrive."""
from __future__ import annotations

import json
import re
import textwrap

import pytest
from conftest import DEMO_SITE, run_scrapy

pytestmark = pytest.mark.crawl

SPIDER = '''
import scrapy
from scrapy.http import TextResponse


class ShopSpider(scrapy.Spider):
    """A crawler written before EDREW existed: it knows nothing of it."""

    name = "shop"
    custom_settings = {
        "ADDONS": {"edrew_scrapy.Addon": 500},
        "EDREW_MAX_PAGE_BYTES": 200_000,
        "TELNETCONSOLE_ENABLED": False,
    }

    def __init__(self, base, **kwargs):
        super().__init__(**kwargs)
        self.base = base

    async def start(self):
        for request in self.start_requests():
            yield request

    def start_requests(self):
        for path in ["/shop/riverside-through-the-seasons.html", "/news/library-extends-weekend-hours.html",
                     "/api/stock.json", "/media/cover.png", "/no-type", "/huge.html"]:
            yield scrapy.Request(self.base + path)
        yield scrapy.Request(self.base + "/about.html", meta={"edrew": False})

    def parse(self, response):
        if isinstance(response, TextResponse):
            if response.headers.get("Content-Type", b"").startswith(b"application/json"):
                yield {"kind": "stock", "url": response.url, "in_stock": response.json()["in_stock"]}
                return
            yield {"kind": "own", "url": response.url, "h1": response.css("h1::text").get()}
        else:
            yield {"kind": "binary", "url": response.url, "size": len(response.body)}
'''


def test_existing_spider_gets_relevant_content_next_to_its_own_items(serve, tmp_path):
    article = (DEMO_SITE / "news/volunteers-clear-two-tons-from-river.html").read_bytes()
    huge = article.replace(b"</body>", b"<!--" + b"x" * 300_000 + b"--></body>")
    base = serve(DEMO_SITE, routes={
        "/api/stock.json": (200, {"Content-Type": "application/json"}, b'{"in_stock": true}'),
        "/media/cover.png": (200, {"Content-Type": "image/png"}, b"\x89PNG\r\n\x1a\n" + bytes(64)),
        "/no-type": (200, {}, article),       # HTML without a Content-Type: sniffed
        "/huge.html": (200, {"Content-Type": "text/html"}, huge),
    })
    (tmp_path / "shop.py").write_text(textwrap.dedent(SPIDER), "utf-8")
    out = tmp_path / "out.jsonl"
    # runspider outside the repository: no project settings, only the spider's own custom_settings
    proc = run_scrapy(["runspider", "shop.py", "-a", f"base={base}", "-O", str(out)], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-4000:]
    items = [json.loads(line) for line in out.read_text("utf-8").splitlines()]

    own = [i for i in items if i.get("kind") == "own"]
    assert {i["url"].split("/", 3)[3] for i in own} == {
        "shop/riverside-through-the-seasons.html", "news/library-extends-weekend-hours.html",
        "no-type", "huge.html", "about.html"}
    assert {"kind": "stock", "url": f"{base}/api/stock.json", "in_stock": True} in items
    assert {"kind": "binary", "url": f"{base}/media/cover.png", "size": 72} in items

    pages = {i["url"].split("/", 3)[3]: i for i in items if "kind" not in i}
    # opt-out (about.html), not HTML (json, png), too large (huge.html): no relevant-content item
    assert set(pages) == {"shop/riverside-through-the-seasons.html",
                          "news/library-extends-weekend-hours.html", "no-type"}
    assert "Riverside Through the Seasons follows the town" in pages["shop/riverside-through-the-seasons.html"]["text"]
    assert "Sunday opening" in pages["news/library-extends-weekend-hours.html"]["text"] or \
        "open on Sundays" in pages["news/library-extends-weekend-hours.html"]["text"]
    assert "More than three hundred volunteers" in pages["no-type"]["text"]
    for page in pages.values():
        assert "Accept all cookies" not in page["text"] and "All rights reserved" not in page["text"]

    stats = {k: int(v) for k, v in re.findall(r"'(edrew/[^']+)': (\d+)", proc.stderr)}
    assert stats["edrew/pages"] == 3 and stats["edrew/items"] == 3
    assert stats["edrew/skipped/opt-out"] == 1
    assert stats["edrew/skipped/not-html"] == 2
    assert stats["edrew/skipped/too-large"] == 1
    assert "edrew/errors" not in stats


RAISING_SPIDER = '''
import scrapy


class RaisingSpider(scrapy.Spider):
    name = "raising"
    custom_settings = {"ADDONS": {"edrew_scrapy.Addon": 500}, "TELNETCONSOLE_ENABLED": False}

    def __init__(self, base, **kwargs):
        super().__init__(**kwargs)
        self.base = base

    async def start(self):
        yield scrapy.Request(self.base + "/news/council-approves-riverside-bike-lanes.html", callback=self.parse_gen)
        yield scrapy.Request(self.base + "/news/library-extends-weekend-hours.html", callback=self.parse_plain)
        yield scrapy.Request(self.base + "/news/regatta-returns-after-five-years.html", callback=self.parse_async)

    def parse_gen(self, response):  # raises while its output is read
        yield {"own": response.url}
        raise ValueError("generator boom")

    def parse_plain(self, response):  # raises before returning any output
        raise ValueError("plain boom")

    async def parse_async(self, response):
        raise ValueError("coroutine boom")
'''


@pytest.mark.parametrize("workers", ["0", "1"])
def test_a_callback_that_raises_keeps_its_page_item_however_it_raises(serve, tmp_path, workers):
    base = serve(DEMO_SITE)
    (tmp_path / "raising.py").write_text(textwrap.dedent(RAISING_SPIDER), "utf-8")
    out = tmp_path / "out.jsonl"
    proc = run_scrapy(["runspider", "raising.py", "-a", f"base={base}", "-s", f"EDREW_WORKERS={workers}",
                       "-O", str(out)], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-4000:]
    items = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
    pages = sorted(i["url"].rsplit("/", 1)[1] for i in items if "text" in i)
    # each page's item exactly once, next to the one item the generator yielded before it raised
    assert pages == ["council-approves-riverside-bike-lanes.html", "library-extends-weekend-hours.html",
                     "regatta-returns-after-five-years.html"]
    assert [i for i in items if "own" in i] == [{"own": f"{base}/news/council-approves-riverside-bike-lanes.html"}]
    # and Scrapy still handles each exception as its own: logged, counted
    assert proc.stderr.count("Spider error processing") == 3
    assert "'spider_exceptions/ValueError': 3" in proc.stderr
