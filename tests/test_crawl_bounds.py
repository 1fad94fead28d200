"""`scrapy crawl edrew -a max_pages=N` bounds the crawl's page requests, 404s included, and
`-a max_depth=N` how far links are followed, as CLOSESPIDER_PAGECOUNT and DEPTH_LIMIT would.

Real `scrapy crawl edrew` subprocesses against a server on 127.0.0.1 that records every request. The
scoring stage is off (EDREW_ENABLED=False): what is bounded is the spider's crawling, not the add-on.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "fixtures" / "reliability"))
from reliability_support import RecordingServer, run_crawl  # noqa: E402

pytestmark = pytest.mark.crawl

HTML = {"Content-Type": "text/html; charset=utf-8"}


def _routes(path: str):
    """Every page links to 30 pages that do not exist (relative links gone wrong: 404) and to the next
    page of a chain, /d/0 -> /d/1 -> ... -> /d/20."""
    if path == "/robots.txt":
        return 200, {"Content-Type": "text/plain"}, b"User-agent: *\nAllow: /\n"
    if not path.startswith("/d/") or "/missing/" in path:
        return None  # 404
    n = int(path.rsplit("/", 1)[1])
    broken = "".join(f"<a href='/d/{n}/missing/{i}'>x</a>" for i in range(30))
    body = f"<html><body><p>Page {n}</p>{broken}<a href='/d/{n + 1}'>next</a></body></html>"
    return (200, HTML, body.encode()) if n <= 20 else None


def _pages_requested(server) -> list:
    return [path for path in server.paths() if path != "/robots.txt"]


@pytest.mark.parametrize("argument, bound", [("max_pages=10", 10), ("max_depth=2", None)])
def test_max_pages_and_max_depth_bound_the_crawl(tmp_path, argument, bound):
    with RecordingServer(_routes) as server:
        proc, stats = run_crawl(server.url + "/d/0", tmp_path, "-a", argument, "-s", "EDREW_ENABLED=False",
                                "-s", "AUTOTHROTTLE_ENABLED=False", "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=8",
                                timeout=300)
        requested = _pages_requested(server)
    assert proc.returncode == 0, proc.stderr[-3000:]
    if bound is not None:
        # every request counts, the 404s too: no more than max_pages, whatever they got
        assert len(requested) == bound, requested
        assert stats.get("downloader/response_status_count/404", 0) >= 1
    else:
        # depth 0, 1 and 2: the start page, its links, and theirs; nothing linked from depth 2
        assert {"/d/0", "/d/1", "/d/2"} <= set(requested) and "/d/3" not in requested
        assert len(requested) == 3 + 30 + 30, len(requested)
