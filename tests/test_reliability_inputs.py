"""Bad input: every kind of hostile or broken page, through the real downloader middleware with real
Scrapy responses, and all of them batched into one real crawl over HTTP on 127.0.0.1.

Without models/default the crawl runs with the scoring stage switched off (the downloader middleware
still serialises and counts every page); with it, the whole add-on runs and the items are checked too.
"""
from __future__ import annotations

import codecs
import logging
import random
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Dict, Optional, Tuple

import pytest
from scrapy import Request
from scrapy.http import Headers
from scrapy.responsetypes import responsetypes
from scrapy.utils.test import get_crawler

from edrew_scrapy.scrapy import EdrewDownloaderMiddleware
from edrew_scrapy.scrapy.meta import META_KEY
from edrew_scrapy.serializer import serialize

sys.path.insert(0, str(Path(__file__).resolve().parent / "fixtures" / "reliability"))
from reliability_support import RecordingServer, model_missing_reason, read_jsonl, run_crawl  # noqa: E402

HTML = {"Content-Type": "text/html"}
HTML_UTF8 = {"Content-Type": "text/html; charset=utf-8"}
SCRIPT_MARKER = "SCRIPTMARKER"
STYLE_MARKER = "STYLEMARKER"
COMMENT_MARKER = "COMMENTMARKER"
MB = 1024 * 1024


def _random_bytes(n: int, seed: int) -> bytes:
    return random.Random(seed).randbytes(n)


def _doc(body: str, head: str = "") -> bytes:
    return f"<!DOCTYPE html><html><head>{head}<title>Bad input</title></head><body>{body}</body></html>".encode()


TEXT = "<p>This paragraph holds enough ordinary words to be read as the text of the page.</p>"

# name -> (headers, body, the skip reason expected, or None: serialised into nodes)
PAGES: Dict[str, Tuple[Dict[str, str], bytes, Optional[str]]] = {
    "empty": (HTML, b"", "empty"),
    "blank": (HTML_UTF8, b" \r\n\t  \n", "empty"),
    "pdf": ({"Content-Type": "application/pdf"}, b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj<<>>endobj\n", "not-html"),
    "png": ({"Content-Type": "image/png"}, b"\x89PNG\r\n\x1a\n" + _random_bytes(3000, 1), "not-html"),
    "json": ({"Content-Type": "application/json"}, b'{"html": "<p>not a page</p>"}', "not-html"),
    "css": ({"Content-Type": "text/css"}, b"body { color: red } /* <p>x</p> */", "not-html"),
    "plain-text": ({"Content-Type": "text/plain"}, b"Just a text file.\nNot HTML at all.\n", "not-html"),
    "no-content-type-html": ({}, _doc(TEXT), None),
    "octet-stream-html": ({"Content-Type": "application/octet-stream"}, _doc(TEXT), None),
    "wrong-charset": (HTML_UTF8, _doc("<p>Caf\xe9 cr\xe8me br\xfbl\xe9e, a menu written in windows-1252 "
                                      "but served as UTF-8.</p>").decode("latin-1").encode("latin-1"), None),
    "missing-charset": (HTML, _doc("<p>Gr\u00fc\u00dfe aus K\u00f6ln, a UTF-8 page that declares no "
                                   "charset anywhere.</p>"), None),
    "unknown-charset": ({"Content-Type": "text/html; charset=x-no-such-charset"}, _doc(TEXT), None),
    "unknown-meta-charset": (HTML, _doc(TEXT, "<meta charset='klingon-8'>"), None),
    "utf16-bom": (HTML, codecs.BOM_UTF16_LE + _doc("<p>UTF-16 text: \u00e9t\u00e9 \u4e2d\u6587 with a "
                                                     "byte order mark and no declared charset.</p>")
                  .decode("utf-8").encode("utf-16-le"), None),
    "utf16-bom-declared-utf8": (HTML_UTF8, codecs.BOM_UTF16_BE + _doc(TEXT).decode().encode("utf-16-be"), None),
    "nested-200k": (HTML, b"<html><body>" + b"<div>" * 200_000 + b"<p>Deep text at the bottom of two "
                    b"hundred thousand elements.</p>" + b"</div>" * 1000, None),
    "unterminated-tags": (HTML, b"<html><body><div><p>Open paragraph with words<span>and a span<a href='#top'"
                          b">a link<table><tr><td>a cell with text<li>an item", None),
    "unterminated-comment": (HTML, _doc(TEXT + f"<!-- a comment that never ends <p>{COMMENT_MARKER}</p>"), None),
    "unterminated-attribute-quote": (HTML, b"<html><body><p class=\"lead>The quote never closes and this "
                                     b"text sits in the attribute</p><p title='x>more</p></body></html>", None),
    "script-style-html-strings": (HTML, _doc(
        f"<script>var s = '<p>{SCRIPT_MARKER}</p>'; document.write(\"</div><h1>{SCRIPT_MARKER}</h1>\");"
        f"if (a < b && c > d) {{ x = '<!--'; }}</script>"
        f"<style>p::after {{ content: '<div>{STYLE_MARKER}</div>' }}</style>" + TEXT
        + f"<script type='text/template'><article><p>{SCRIPT_MARKER}</p></article></script>"), None),
    "megabyte-attributes": (HTML, b"<html><body><div data-blob=\"" + b"x" * MB + b"\" class='" + b"c " * (MB // 2)
                            + b"'><p title=\"" + b"t" * MB + b"\">Text next to three megabytes of attributes."
                            b"</p></div><img src=\"data:image/png;base64," + b"A" * MB + b"\"></body></html>", None),
    "no-text": (HTML, _doc("<div><img src='/a.png'><br><hr><div><span></span></div></div>"
                           "<script>var text = 'not text';</script><style>p{}</style>"), "no-text"),
    "all-text": (HTML, b"Only words and no markup at all. " * 3000, None),
    "server-error": ({"Content-Type": "text/html", "Retry-After": "0"}, _doc(TEXT), "http-status"),
}
STATUS = {"server-error": 500}
# Binary bytes served as text/html: skipped as "binary" (docs/scrapy.md).
BINARY_PAGES = {
    "binary-as-html": (HTML, _random_bytes(20000, 2), "binary"),
    "png-as-html": (HTML, b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + _random_bytes(5000, 3), "binary"),
}
TOO_LARGE = "fifty-megabytes"


def fifty_megabytes() -> bytes:
    row = b"<p>A row of a page that is far too large to serialise: fifty megabytes of it.</p>\n"
    return b"<!DOCTYPE html><html><body>" + row * (50 * MB // len(row) + 1) + b"</body></html>"


def downloaded(name: str, headers: Dict[str, str], body: bytes, status: int = 200):
    """A response as Scrapy's HTTP download handler builds it: class chosen from headers and body."""
    url = f"http://bad.example/bad/{name}"
    request = Request(url)
    headers = Headers(headers)
    cls = responsetypes.from_args(headers=headers, url=url, body=body)
    return request, cls(url=url, status=status, headers=headers, body=body, request=request)


def resolve(coro):
    try:
        coro.send(None)
    except StopIteration as stop:
        return stop.value
    raise AssertionError("process_response waited although EDREW_THREADS=0")


@pytest.fixture(scope="module")
def middleware_run():
    """Every bad page through one downloader middleware; returns (pages by name, crawler, log records)."""
    crawler = get_crawler(settings_dict={"EDREW_THREADS": 0})
    mw = EdrewDownloaderMiddleware.from_crawler(crawler)
    handler = _Collect()
    logger = logging.getLogger("edrew_scrapy.scrapy.downloadermiddleware")
    logger.addHandler(handler)
    level = logger.level
    logger.setLevel(logging.INFO)
    pages = {}
    try:
        cases = dict(PAGES, **{TOO_LARGE: (HTML, fifty_megabytes(), "too-large")})
        for name, (headers, body, _) in cases.items():
            request, response = downloaded(name, headers, body, STATUS.get(name, 200))
            assert resolve(mw.process_response(request, response)) is response
            pages[name] = request.meta.get(META_KEY)
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    return pages, crawler, handler.records


class _Collect(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.records = []

    def emit(self, record):
        self.records.append(record)


def expected_reasons() -> Counter:
    counts = Counter(reason for _, _, reason in PAGES.values() if reason)
    counts["too-large"] += 1
    return counts


def test_each_bad_page_gets_its_skip_reason_or_nodes(middleware_run):
    pages, crawler, _ = middleware_run
    for name, (_, _, reason) in PAGES.items():
        page = pages[name]
        if reason in (None, "empty", "binary", "no-text"):
            assert page is not None, name
            assert page.skipped == reason, (name, page.skipped)
            assert bool(page.nodes) == (reason is None), name
        else:  # skipped before serialising
            assert page is None, name
    assert pages[TOO_LARGE] is None
    assert crawler.stats.get_value("edrew/errors") is None


def test_each_skip_is_counted_with_its_reason_and_logged_once(middleware_run):
    _, crawler, records = middleware_run
    stats = crawler.stats.get_stats()
    for reason, count in expected_reasons().items():
        assert stats.get(f"edrew/skipped/{reason}") == count, reason
    assert stats.get("edrew/pages") == sum(1 for *_, r in PAGES.values() if r is None)
    logged = Counter(re.search(r"\((\S+?)[:)]", r.getMessage()).group(1) for r in records
                     if r.getMessage().startswith("EDREW skipped"))
    assert logged == Counter({reason: 1 for reason in expected_reasons()}), logged
    too_large = next(r.getMessage() for r in records if "(too-large" in r.getMessage())
    assert "EDREW_MAX_PAGE_BYTES" in too_large and f"/bad/{TOO_LARGE}" in too_large


def test_bad_pages_keep_their_text_and_nothing_else(middleware_run):
    pages, _, _ = middleware_run

    def text(name):
        return "\n".join(n.content for n in pages[name].nodes)

    assert "Caf\u00e9 cr\u00e8me" in text("wrong-charset") or "Caf\ufffd cr\ufffdme" in text("wrong-charset")
    assert "Gr\u00fc\u00dfe aus K\u00f6ln" in text("missing-charset")
    assert "\u00e9t\u00e9 \u4e2d\u6587" in text("utf16-bom")
    assert "ordinary words" in text("utf16-bom-declared-utf8")
    assert "Deep text at the bottom" in text("nested-200k")
    for marker in (SCRIPT_MARKER, STYLE_MARKER):
        assert marker not in text("script-style-html-strings")
    assert "ordinary words" in text("script-style-html-strings")
    assert COMMENT_MARKER not in text("unterminated-comment") and "ordinary words" in text("unterminated-comment")
    assert "Open paragraph with words" in text("unterminated-tags") and "a cell with text" in text("unterminated-tags")
    assert "Text next to three megabytes" in text("megabyte-attributes")
    assert all(len(n.path) < 10_000 and len(n.retps) < 10_000 for n in pages["megabyte-attributes"].nodes)
    assert "Only words and no markup" in text("all-text")


@pytest.mark.parametrize("name", sorted(BINARY_PAGES))
def test_binary_bytes_served_as_html_are_skipped_as_binary(name):
    crawler = get_crawler(settings_dict={"EDREW_THREADS": 0})
    mw = EdrewDownloaderMiddleware.from_crawler(crawler)
    headers, body, _ = BINARY_PAGES[name]
    request, response = downloaded(name, headers, body)
    resolve(mw.process_response(request, response))
    assert crawler.stats.get_value("edrew/skipped/binary") == 1
    assert crawler.stats.get_value("edrew/pages") is None


# Charset labels that name Python codecs which are not text encodings (or not ones a web page can
# use). Browsers ignore such labels (WHATWG Encoding: an unknown label means the default).
BOGUS_CODEC_LABELS = ["base64", "rot13", "hex", "zlib", "punycode", "undefined", "idna", "uu", "quopri"]


@pytest.mark.parametrize("where", ["argument", "content-type", "meta"])
def test_serializer_ignores_charset_labels_that_are_not_text_encodings(where):
    failures = []
    for label in BOGUS_CODEC_LABELS:
        if where == "meta":
            data, encoding = _doc(TEXT, f"<meta charset='{label}'>"), None
        else:
            data, encoding = _doc(TEXT), label if where == "argument" else f"text/html; charset={label}"
        try:
            page = serialize(data, encoding=encoding)
            if "ordinary words" not in "".join(n.content for n in page.nodes):
                failures.append(f"{label}: text lost")
        except Exception as exc:  # the contract: never raises on bytes
            failures.append(f"{label}: {type(exc).__name__}: {exc}")
    assert not failures, failures


def test_a_page_with_a_bogus_codec_charset_is_still_serialised():
    crawler = get_crawler(settings_dict={"EDREW_THREADS": 0})
    mw = EdrewDownloaderMiddleware.from_crawler(crawler)
    request, response = downloaded("b64", {"Content-Type": "text/html; charset=base64"}, _doc(TEXT))
    resolve(mw.process_response(request, response))
    assert crawler.stats.get_value("edrew/errors") is None
    page = request.meta.get(META_KEY)
    assert page is not None and any("ordinary words" in n.content for n in page.nodes)


def test_bundled_spider_ignores_a_json_page():
    from edrew_scrapy.spiders import EdrewSpider

    spider = EdrewSpider(urls="http://bad.example/")
    headers, body, _ = PAGES["json"]
    _, response = downloaded("json", headers, body)
    assert list(spider.parse(response)) == []


# ------------------------------------------------------------------ all of it in one real crawl

def _routes():
    routes = {f"/bad/{name}": (STATUS.get(name, 200), headers, body) for name, (headers, body, _) in PAGES.items()}
    routes.update({f"/bad/{name}": (200, headers, body) for name, (headers, body, _) in BINARY_PAGES.items()})
    routes[f"/bad/{TOO_LARGE}"] = (200, HTML, fifty_megabytes())
    routes["/bad/bogus-codec-charset"] = (200, {"Content-Type": "text/html; charset=base64"}, _doc(TEXT))
    links = "".join(f"<a href='{path}'>{path}</a>\n" for path in routes)
    routes["/"] = (200, HTML_UTF8, _doc(f"<nav>{links}</nav>"))
    routes["/robots.txt"] = (200, {"Content-Type": "text/plain"}, b"User-agent: *\nAllow: /\n")
    return routes


@pytest.mark.crawl
def test_one_crawl_over_every_bad_page_finishes_and_counts_them(tmp_path):
    missing = model_missing_reason()
    args = ["-o", str(tmp_path / "items.jsonl"), "-s", "RETRY_ENABLED=False"]
    if missing:
        # Without a model the scoring stage cannot start; the downloader middleware still runs.
        args += ["-s", 'SPIDER_MIDDLEWARES={"edrew_scrapy.scrapy.EdrewSpiderMiddleware": null}']
    routes = _routes()
    with RecordingServer(routes) as server:
        proc, stats = run_crawl(server.url + "/", tmp_path, *args, timeout=300)
        requested = Counter(server.paths())
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert stats.get("finish_reason") == "finished", stats
    # Scrapy's own MetaRefreshMiddleware reads response.text, which w3lib cannot decode with
    # charset=base64: that download fails before EDREW sees it (logged with its URL; the crawl goes on).
    # No other record carries a traceback.
    unexpected = [first for first in traceback_records(proc.stderr)
                  if not re.search(r"Error downloading .*/bad/bogus-codec-charset", first)]
    assert not unexpected, unexpected
    for path in routes:
        if path.startswith("/bad/"):
            assert requested[path] == 1, (path, requested[path])

    counts = expected_reasons()
    counts["not-html"] += 1   # robots.txt goes through the downloader middleware too
    for reason, count in counts.items():
        assert stats.get(f"edrew/skipped/{reason}") == count, (reason, stats)
    assert stats.get("edrew/skipped/binary") == len(BINARY_PAGES), stats
    # serialised: the pages without a reason, "/" itself, and the bogus-charset page should Scrapy's
    # MetaRefreshMiddleware let it through one day
    serialised = sum(1 for *_, r in PAGES.values() if r is None) + 1
    assert stats.get("edrew/pages") in (serialised, serialised + 1), stats
    assert not stats.get("edrew/errors") and not stats.get("spider_exceptions/count"), stats

    skipped_lines = Counter(m.group(1) for m in re.finditer(r"EDREW skipped \S+ \(([\w-]+)", proc.stderr))
    assert all(n == 1 for n in skipped_lines.values()), skipped_lines
    assert set(skipped_lines) == {key.split("/", 2)[2] for key in stats if key.startswith("edrew/skipped/")}, \
        skipped_lines

    if missing:
        return
    items = read_jsonl(tmp_path / "items.jsonl")
    urls = [item["url"] for item in items]
    assert len(urls) == len(set(urls)), "a page exported twice"
    skipped_paths = {f"/bad/{name}" for name, (_, _, r) in PAGES.items() if r} | {f"/bad/{TOO_LARGE}"}
    skipped_paths |= {f"/bad/{name}" for name in BINARY_PAGES}
    for item in items:
        path = "/" + item["url"].split("/", 3)[3]
        assert path not in skipped_paths, path
        for marker in (SCRIPT_MARKER, STYLE_MARKER, COMMENT_MARKER):
            assert marker not in item["text"], (path, marker)
    assert stats.get("edrew/items", 0) == len(items)


def traceback_records(stderr: str):
    """The first line of every log record that carries a traceback."""
    records, first = [], None
    for line in stderr.splitlines():
        if re.match(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d ", line):
            first = line
        elif line.startswith("Traceback") and first is not None:
            records.append(first)
    return records
