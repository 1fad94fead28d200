"""`scrapy crawl articles` over real HTTP on 127.0.0.1: a listing page whose links are PDFs, a PDF sent as
application/octet-stream, an HTML page named .pdf, HTML served as application/pdf, a redirect to a PDF,
an encrypted PDF, a 404, a PDF that robots.txt forbids and a PDF one listing further away."""
from __future__ import annotations

import csv
import hashlib
import json
import re
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from _pdf_helpers import AUTHORS, TITLE, article_pdf
from conftest import run_scrapy

pytestmark = pytest.mark.crawl

LISTING = """<html><body><h1>Papers</h1><ul>
<li><a href="/papers/one.pdf">One</a></li>
<li><a href="/papers/two.pdf">Two (two columns)</a></li>
<li><a href="/download?id=3">Three, served as octet-stream</a></li>
<li><a href="/old/four.pdf">Four, moved</a></li>
<li><a href="/fake.pdf">An HTML page named .pdf</a></li>
<li><a href="/served-as.pdf">HTML served as application/pdf</a></li>
<li><a href="/locked.pdf">Encrypted</a></li>
<li><a href="/missing.pdf">Gone</a></li>
<li><a href="/private/secret.pdf">Forbidden by robots.txt</a></li>
<li><a href="/more.html">More papers</a></li>
<li><a href="FLAKY/paper.pdf">On another host, gone when downloaded</a></li>
</ul></body></html>"""
MORE = '<html><body><a href="/papers/deep.pdf">Deep</a></body></html>'
STAT = r"'((?:edrew/|item_|robotstxt/|file_|downloader/response_bytes)[^']*)': (\d+)"
FOUND = {"/papers/one.pdf", "/papers/two.pdf", "/download?id=3", "/old/four.pdf"}


class _Flaky(BaseHTTPRequestHandler):
    """Another host: /paper.pdf is a PDF the first time it is asked for, then 503 (the spider's probe
    gets it; FilesPipeline's download and its retry do not); no robots.txt."""

    body = b""
    asked: Counter = Counter()

    def do_GET(self):  # noqa: N802 (http.server's naming)
        self.asked[self.path] += 1
        first = self.asked[self.path] == 1 and self.path == "/paper.pdf"
        body = self.body if first else b"busy"
        self.send_response(200 if first else 404 if self.path == "/robots.txt" else 503)
        self.send_header("Content-Type", "application/pdf" if first else "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def flaky():
    handler = type("Handler", (_Flaky,), {"body": article_pdf(1), "asked": Counter()})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", handler.asked
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def site(tmp_path_factory, flaky):
    root = tmp_path_factory.mktemp("site")
    pdfs = {"one.pdf": article_pdf(1), "two.pdf": article_pdf(2, noise_kib=1024), "four.pdf": article_pdf(2),
            "deep.pdf": article_pdf(1), "secret.pdf": article_pdf(1)}
    (root / "papers").mkdir()
    (root / "private").mkdir()
    for name, data in pdfs.items():
        (root / ("private" if name == "secret.pdf" else "papers") / name).write_bytes(data)
    (root / "index.html").write_text(LISTING.replace("FLAKY", flaky[0]), "utf-8")
    (root / "more.html").write_text(MORE, "utf-8")
    (root / "robots.txt").write_text("User-agent: *\nDisallow: /private/\n", "utf-8")
    html = {"Content-Type": "text/html; charset=utf-8"}
    routes = {
        "/download": (200, {"Content-Type": "application/octet-stream"}, pdfs["one.pdf"]),
        "/old/four.pdf": (301, {"Location": "/papers/four.pdf"}, b""),
        "/fake.pdf": (200, html, b"<html><body><a href='/papers/deep.pdf'>x</a></body></html>"),
        "/served-as.pdf": (200, {"Content-Type": "application/pdf"}, b"<html><body>sorry</body></html>"),
        "/locked.pdf": (200, {"Content-Type": "application/pdf"}, article_pdf(1, encrypt=True)),
    }
    return root, routes, pdfs


def crawl(serve, site, tmp_path, *args):
    root, routes, _ = site
    base = serve(root, routes)
    proc = run_scrapy(["crawl", "articles", "-a", f"urls={base}/index.html", *args,
                       "-s", f"FILES_STORE={tmp_path / 'store'}", "-s", "AUTOTHROTTLE_ENABLED=0",
                       "-O", f"{tmp_path}/items.jsonl", "-O", f"{tmp_path}/items.csv"])
    assert proc.returncode == 0, proc.stderr[-4000:]
    # no exception from the project's code (FilesPipeline logs its own failed download with a trace, as
    # it should), and none in the spider or a pipeline
    assert not re.search(r'File "[^"]*edrew_scrapy', proc.stderr), proc.stderr[-4000:]
    assert "Error processing" not in proc.stderr and "spider_exceptions" not in proc.stderr
    items = [json.loads(line) for line in (tmp_path / "items.jsonl").read_text("utf-8").splitlines()]
    with open(tmp_path / "items.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    stats = {k: int(v) for k, v in re.findall(STAT, proc.stderr)}
    return base, items, rows, stats


def path_of(url: str, base: str) -> str:
    return url[len(base):]


def test_articles_from_a_listing(serve, site, tmp_path):
    base, items, rows, stats = crawl(serve, site, tmp_path)
    _, _, pdfs = site
    assert {path_of(i["url"], base) for i in items} == FOUND
    moved = next(i for i in items if i["url"].endswith("/old/four.pdf"))
    assert moved["pdf_url"] == f"{base}/papers/four.pdf"
    for item in items:
        assert item["listing"] == f"{base}/index.html"
        assert item["title"] == TITLE and item["authors"] == AUTHORS and item["pages"] >= 2
        stored = (tmp_path / "store" / item["path"]).read_bytes()
        assert item["checksum"] == hashlib.md5(stored).hexdigest()
        name = path_of(item["pdf_url"], base).rsplit("/", 1)[-1]
        assert stored == pdfs.get(name, pdfs["one.pdf"])
        # nested structure in JSON: sections inside sections, paragraphs with their sentences
        method = item["sections"][1]
        assert method["title"] == "Method" and method["sections"][0]["number"] == "2.1"
        assert method["sections"][0]["sections"][0]["level"] == 3
        assert all(b["sentences"] for s in item["sections"] for b in s["blocks"] if b["kind"] == "paragraph")
        assert len(item["references"]) == 3
    assert stats["edrew/pdf/found"] == 6  # the four articles, the encrypted one, the one gone when downloaded
    assert stats["edrew/pdf/articles"] == stats["item_scraped_count"] == 4
    assert stats["edrew/pdf/skipped/encrypted"] == 1
    assert stats["edrew/pdf/skipped/download-failed"] == 1
    assert stats["edrew/pdf/skipped/not-pdf"] == 1  # HTML served as application/pdf
    assert stats["edrew/pdf/not-pdf"] == 3  # that one, /fake.pdf and /more.html
    assert stats["edrew/pdf/link-errors"] == 1  # the 404
    assert stats["robotstxt/forbidden"] == 1
    assert stats["file_count"] == 5
    # a link that is no HTML is read only as far as its first bytes: the 1 MiB PDF travels once in full
    big = len(pdfs["two.pdf"])
    assert big > 1024 * 1024 and stats["downloader/response_bytes"] < big * 1.5
    # CSV: one row per sentence (list items, footnotes, captions and equations one row each)
    expected = 0
    for item in items:
        expected += sum(len(b["sentences"]) for b in item["abstract"])

        def count(section):
            own = sum(len(b["sentences"]) if b["kind"] == "paragraph" else
                      len(b["items"]) if b["kind"] == "list" else 1 for b in section["blocks"])
            return own + sum(count(s) for s in section["sections"])
        expected += sum(count(s) for s in item["sections"])
    assert len(rows) == expected
    assert set(rows[0]) == {"url", "title", "year", "section_number", "section_title", "level", "kind",
                            "sentence"}
    assert {"abstract", "paragraph", "item", "footnote", "caption", "equation"} <= {r["kind"] for r in rows}
    assert any(r["section_number"] == "2.1.1" and r["level"] == "3" for r in rows)


def test_depth_reads_linked_pages_as_listings_and_csv_rows_per_section(serve, site, tmp_path):
    base, items, rows, stats = crawl(serve, site, tmp_path, "-a", "depth=2", "-s", "EDREW_PDF_CSV_ROWS=sections")
    assert {path_of(i["url"], base) for i in items} == FOUND | {"/papers/deep.pdf"}
    assert stats["edrew/pdf/articles"] == 5
    assert set(rows[0]) == {"url", "title", "authors", "year", "section_number", "section_title", "level", "text"}
    assert len(rows) == 6 * 5  # six sections in each article
    assert rows[0]["authors"] == "; ".join(AUTHORS)


def test_bad_arguments_fail_before_crawling(tmp_path):
    proc = run_scrapy(["crawl", "articles", "-a", "urls=ftp://example.org/x"])
    assert proc.returncode != 0 and "not an http(s) URL" in proc.stderr
    proc = run_scrapy(["crawl", "articles", "-a", "urls=http://127.0.0.1:9/", "-a", "depth=0"])
    assert proc.returncode != 0 and "depth must be 1 or more" in proc.stderr
    for setting, message in [("EDREW_PDF_MAX_PAGES=x", "EDREW_PDF_MAX_PAGES must be 0"),
                             ("EDREW_PDF_CSV_ROWS=rows", "EDREW_PDF_CSV_ROWS must be one of sentences, sections")]:
        proc = run_scrapy(["crawl", "articles", "-a", "urls=http://127.0.0.1:9/", "-s", setting,
                           "-s", f"FILES_STORE={tmp_path}"])
        assert message in proc.stderr and "Crawled 0 pages" not in proc.stderr, setting
