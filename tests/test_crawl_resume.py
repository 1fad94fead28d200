"""A JOBDIR crawl with many start URLs, stopped (SIGINT or SIGKILL) and resumed: every page item exactly
once, the spider's own items no more often than Scrapy's own resume would give them, and after SIGKILL
only the pages in flight downloaded again.

Real `scrapy runspider` subprocesses against a server on 127.0.0.1, real signals. The crawl is stopped
once the feed holds STOP_AFTER of the spider's own items (an observable condition, no sleep).
"""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
import time
from collections import Counter
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "fixtures" / "reliability"))
from reliability_support import RecordingServer, crawl_env, model_missing_reason, read_jsonl  # noqa: E402

pytestmark = [pytest.mark.crawl,
              pytest.mark.skipif(model_missing_reason() is not None, reason=str(model_missing_reason()))]

N_PAGES = 160
STOP_AFTER = 40
CONCURRENT_REQUESTS = 4

SPIDER = '''
import scrapy


class ManySpider(scrapy.Spider):
    """Start URLs only, as Scrapy's own start() issues them (dont_filter), one item of its own a page."""

    name = "many"
    custom_settings = {"ADDONS": {"edrew_scrapy.Addon": 500}, "TELNETCONSOLE_ENABLED": False,
                       "CONCURRENT_REQUESTS": %d, "LOG_LEVEL": "INFO"}

    def __init__(self, base, n, **kwargs):
        super().__init__(**kwargs)
        self.start_urls = [f"{base}/p/{i}" for i in range(int(n))]

    def parse(self, response):
        yield {"kind": "own", "url": response.url, "h1": response.css("h1::text").get()}
''' % CONCURRENT_REQUESTS


def _page(i: int) -> bytes:
    return (f"<!DOCTYPE html><html><head><title>Page {i}</title></head><body>"
            f"<nav><a href='/'>Home</a> <a href='/about'>About</a></nav><main><article><h1>Story {i}</h1>"
            f"<p>Reporters found that story {i} was about the river, the bridge and the people of the town, "
            f"who met on Tuesday to talk about the flood defences for the coming winter.</p>"
            f"<p>The council said the work on story {i} would start in spring and last for two years.</p>"
            f"</article></main><footer>Copyright the Town Paper. All rights reserved.</footer></body></html>"
            ).encode()


ROUTES = {f"/p/{i}": (200, {"Content-Type": "text/html; charset=utf-8"}, _page(i)) for i in range(N_PAGES)}


def _command(tmp_path: Path, server, *args: str):
    return [sys.executable, "-m", "scrapy", "runspider", str(tmp_path / "many.py"), "-a", f"base={server.url}",
            "-a", f"n={N_PAGES}", "-s", f"JOBDIR={tmp_path / 'job'}", "-o", str(tmp_path / "feed.jsonl"), *args]


def _own(items):
    return [item["url"] for item in items if item.get("kind") == "own"]


def _pages(items):
    return [item["url"] for item in items if "nodes" in item]


def _stop_midway(tmp_path: Path, server, sig) -> int:
    """Start the crawl and send `sig` once STOP_AFTER own items are in the feed; its exit status."""
    with open(tmp_path / "first.log", "w") as log:
        proc = subprocess.Popen(_command(tmp_path, server), cwd=str(tmp_path), env=crawl_env(),
                                stdout=subprocess.DEVNULL, stderr=log)
    try:
        deadline = time.monotonic() + 300  # hang guard only
        while (len(_own(read_jsonl(tmp_path / "feed.jsonl"))) < STOP_AFTER and proc.poll() is None
               and time.monotonic() < deadline):
            time.sleep(0.02)
        assert proc.poll() is None, "the crawl ended before it could be stopped: " + \
            (tmp_path / "first.log").read_text()[-3000:]
        proc.send_signal(sig)
        return proc.wait(timeout=240)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _resume(tmp_path: Path, server) -> subprocess.CompletedProcess:
    return subprocess.run(_command(tmp_path, server), cwd=str(tmp_path), env=crawl_env(),
                          capture_output=True, text=True, timeout=600)


def _strict_feed(feed: Path):
    lines = feed.read_bytes().split(b"\n")
    assert lines[-1] == b"", f"the feed ends in a partial line: {lines[-1][:80]!r}"
    return [json.loads(line) for line in lines[:-1]]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL], ids=["sigint", "sigkill"])
def test_stop_and_resume_with_many_start_urls_exports_every_page_once(tmp_path, sig):
    (tmp_path / "many.py").write_text(textwrap.dedent(SPIDER), "utf-8")
    with RecordingServer(ROUTES, delay=0.02) as server:
        server_url = server.url
        urls = {f"{server.url}/p/{i}" for i in range(N_PAGES)}
        status = _stop_midway(tmp_path, server, sig)
        assert status == (0 if sig == signal.SIGINT else -signal.SIGKILL)
        first = read_jsonl(tmp_path / "feed.jsonl")
        finished = _finished_urls(tmp_path / "job" / "edrew-requests.jl")
        requested_first = Counter(server.paths())
        proc = _resume(tmp_path, server)
        requested_again = Counter(server.paths()) - requested_first
    assert proc.returncode == 0, proc.stderr[-4000:]
    items = _strict_feed(tmp_path / "feed.jsonl")

    # every page item exactly once, and every own item at least once
    pages = Counter(_pages(items))
    assert set(pages) == urls, sorted(urls - set(pages))[:5]
    assert max(pages.values()) == 1, [url for url, n in pages.items() if n > 1][:5]
    own = Counter(_own(items))
    assert set(own) == urls, sorted(urls - set(own))[:5]

    # Scrapy's own resume issues every start URL again: every own item of the first run twice
    own_first = len(_own(first))
    assert own_first >= STOP_AFTER
    downloaded_again = sum(requested_again[path] for path in requested_first)
    duplicated_own = sum(n - 1 for n in own.values())
    print(f"{sig.name}: own items in the first run {own_first}, requested {sum(requested_first.values())}, "
          f"downloaded again {downloaded_again}, own items twice {duplicated_own}")
    if sig == signal.SIGINT:
        # a graceful stop finished what was in flight: nothing is downloaded or exported twice
        assert downloaded_again == 0, downloaded_again
        assert duplicated_own == 0
    else:
        # Only the pages in flight at the kill: never one the journal had recorded as finished, and a few
        # (the downloads, at most CONCURRENT_REQUESTS, and responses whose output was still being handled)
        # against the whole first run that restarting would download again.
        again = {server_url + path for path in requested_again if path in requested_first}
        assert not again & finished, sorted(again & finished)[:5]
        assert downloaded_again <= 4 * CONCURRENT_REQUESTS < own_first, (downloaded_again, own_first)
        assert duplicated_own <= downloaded_again
        assert "continues from its journal" in proc.stderr
        assert "'edrew/resume/requeued'" in proc.stderr


def _finished_urls(journal: Path) -> set:
    """The URLs the journal records as finished (its q and d lines, see edrew_scrapy/scrapy/scheduler.py)."""
    queued, done = {}, set()
    for line in journal.read_bytes().splitlines():
        record = json.loads(line)
        if "q" in record:
            queued[record["q"]] = record["r"]["url"]
        else:
            done.update(record["d"])
    return {queued[rid] for rid in done}
