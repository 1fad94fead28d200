"""Faults around a crawl: a damaged model, a page whose scoring fails, a crawl killed and resumed.

Every crawl is a real `scrapy crawl edrew` subprocess against a server on 127.0.0.1; subprocess
timeouts only guard against hangs.
"""
from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "fixtures" / "reliability"))
from reliability_support import (  # noqa: E402
    DEFAULT_MODEL,
    FAIL_MARKER,
    ROOT,
    RecordingServer,
    build_tiny_model,
    crawl_command,
    crawl_env,
    model_missing_reason,
    read_jsonl,
    run_crawl,
)

pytestmark = pytest.mark.crawl

needs_model = pytest.mark.skipif(model_missing_reason() is not None, reason=str(model_missing_reason()))

PAGE = (b"<!DOCTYPE html><html><head><title>A page</title></head><body><article><h1>A heading</h1>"
        b"<p>A paragraph with enough words in it to count as the content of the page.</p></article>"
        b"</body></html>")


@pytest.fixture(scope="module")
def source_model(tmp_path_factory) -> Path:
    """models/default when it exists; before that, an untrained model in the same format (the
    start-up checks never look at what the weights are worth)."""
    if (DEFAULT_MODEL / "card.json").is_file():
        return DEFAULT_MODEL
    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "model")


def damaged_copy(source: Path, target: Path, damage: str) -> Path:
    """A copy of `source` with one defect; returns the file the error message must name."""
    target.mkdir(parents=True)
    for item in source.iterdir():
        # Copied, not linked: a link that leaves the model directory is refused when the model loads.
        shutil.copy2(item, target / item.name)
    card = target / "card.json"
    if damage == "missing-weights":
        (target / "elmo_weights.hdf5").unlink()
        return target / "elmo_weights.hdf5"
    if damage == "truncated-weights":
        weights = target / "elmo_weights.hdf5"
        with open(weights, "r+b") as fh:
            fh.truncate(weights.stat().st_size // 2)
        return weights
    if damage == "corrupt-head":
        head = target / "head.safetensors"
        data = bytearray(head.read_bytes())
        data[len(data) // 2] ^= 0xFF  # same size: only the checksum can tell
        head.write_bytes(bytes(data))
        return head
    if damage == "wrong-version":
        meta = json.loads(card.read_text("utf-8"))
        meta["format_version"] = 99
        card.write_text(json.dumps(meta), "utf-8")
        return card
    if damage == "card-not-json":
        card.write_text(card.read_text("utf-8")[:40], "utf-8")
        return card
    raise ValueError(damage)


# what each defect must be called in the message
PROBLEMS = {
    "missing-weights": "missing",
    "truncated-weights": "truncated",
    "corrupt-head": "checksum",
    "wrong-version": "version",
    "card-not-json": "JSON",
}


@pytest.fixture(scope="module")
def one_page_site():
    with RecordingServer({"/": (200, {"Content-Type": "text/html; charset=utf-8"}, PAGE)}) as server:
        yield server


def error_lines(stderr: str):
    return [line for line in stderr.splitlines() if re.search(r"\] ERROR: EDREW", line)]


# A subprocess crawl per defect costs ~10 s of start-up on a shared machine; three go through
# `scrapy crawl`, the other two through the component's own start-up in this process.
CRAWLED = ("corrupt-head", "truncated-weights", "wrong-version")


@pytest.mark.parametrize("damage", sorted(set(PROBLEMS) - set(CRAWLED)))
def test_damaged_model_fails_the_scoring_stage_start(damage, source_model, tmp_path, caplog):
    from scrapy.utils.test import get_crawler

    from edrew_scrapy.model.files import ModelError
    from edrew_scrapy.scrapy import EdrewSpiderMiddleware

    culprit = damaged_copy(source_model, tmp_path / "model", damage)
    crawler = get_crawler(settings_dict={"EDREW_MODEL": str(tmp_path / "model")})
    with pytest.raises(ModelError, match=re.escape(str(culprit))) as raised:
        EdrewSpiderMiddleware.from_crawler(crawler)
    assert PROBLEMS[damage].lower() in str(raised.value).lower()
    # (an earlier test's worker reaper can log "still busy ... terminating it" during this one on a loaded
    # machine: it runs in a thread of its own; only this start-up's records count here)
    assert [r.levelname for r in caplog.records
            if "EDREW" in r.getMessage() and r.threadName != "edrew-worker-reaper"] == ["ERROR"]


@pytest.mark.parametrize("damage", CRAWLED)
def test_damaged_model_stops_the_crawl_at_start_naming_the_file(damage, source_model, one_page_site, tmp_path):
    broken = tmp_path / "model"
    culprit = damaged_copy(source_model, broken, damage)
    before = len(one_page_site.paths())
    proc, _ = run_crawl(one_page_site.url + "/", tmp_path, "-s", f"EDREW_MODEL={broken}",
                        "-o", str(tmp_path / "out.jsonl"), timeout=180)
    assert proc.returncode == 1, proc.stderr[-3000:]
    errors = error_lines(proc.stderr)
    assert len(errors) == 1, proc.stderr[-3000:]
    assert str(culprit) in errors[0] and PROBLEMS[damage].lower() in errors[0].lower(), errors[0]
    # Stopped before the first request: the server saw nothing (not even robots.txt).
    assert one_page_site.paths()[before:] == []
    assert not (tmp_path / "out.jsonl").exists() or not (tmp_path / "out.jsonl").read_text().strip()


def test_missing_model_directory_stops_the_crawl(one_page_site, tmp_path):
    missing = tmp_path / "no-such-model"
    proc, _ = run_crawl(one_page_site.url + "/", tmp_path, "-s", f"EDREW_MODEL={missing}", timeout=180)
    assert proc.returncode == 1
    errors = error_lines(proc.stderr)
    assert len(errors) == 1 and str(missing) in errors[0] and "does not exist" in errors[0], proc.stderr[-3000:]


@pytest.mark.xfail(strict=True, reason=(
    "edrew_scrapy/scrapy/scoring.py ScoringService.from_crawler logs the ModelError and re-raises it; "
    "Scrapy 2.19's AsyncCrawlerRunner then prints 'ERROR: Task exception was never retrieved' and a "
    "~35-line traceback after the one clear ERROR line (scrapy/crawler.py _crawl_and_track re-raises on purpose "
    "so that asyncio logs it; upstream: scrapy/scrapy#6047, open PR #7919). Not worked around: only leaving "
    "the interpreter (SystemExit) would hide it, which would also end the program of a user who runs crawls "
    "from their own code"))
def test_damaged_model_error_comes_without_a_traceback(source_model, one_page_site, tmp_path):
    broken = tmp_path / "model"
    damaged_copy(source_model, broken, "corrupt-head")
    proc, _ = run_crawl(one_page_site.url + "/", tmp_path, "-s", f"EDREW_MODEL={broken}", timeout=180)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]


# ------------------------------------------------------------------ one page fails, the rest go on

def _article(n: int, marker: str = "") -> bytes:
    return (f"<!DOCTYPE html><html><head><title>Story {n}</title></head><body>"
            f"<nav><a href='/'>Home</a> <a href='/about'>About</a></nav><main><article><h1>Story number {n}</h1>"
            f"<p>Reporters found that story {n} {marker} was about the river, the bridge and the people of "
            f"the town, who met on Tuesday to talk about the flood defences for the coming winter.</p>"
            f"<p>The council said the work on story {n} would start in spring and last for two years.</p>"
            f"</article></main><footer>Copyright the Town Paper. All rights reserved.</footer></body></html>"
            ).encode()


@needs_model
def test_one_page_failing_is_counted_and_logged_and_no_other_item_is_lost(tmp_path):
    # EDREW_BUILDER is the documented per-page hook: "an exception in the builder counts as an error for
    # that page only". The builder fails for the page whose URL carries the marker, whatever the model
    # makes of its text (it is called for every scored page).
    n_pages = 12
    bad = 5

    def path(i):
        return f"/story/{i}-{FAIL_MARKER}" if i == bad else f"/story/{i}"

    routes = {path(i): (200, {"Content-Type": "text/html; charset=utf-8"}, _article(i)) for i in range(n_pages)}
    links = "".join(f"<a href='{path(i)}'>story {i}</a> " for i in range(n_pages))
    routes["/"] = (200, {"Content-Type": "text/html"},
                   f"<html><body><p>{links}</p></body></html>".encode())
    with RecordingServer(routes) as server:
        proc, stats = run_crawl(server.url + "/", tmp_path, "-s",
                                "EDREW_BUILDER=reliability_support.failing_builder",
                                "-o", str(tmp_path / "out.jsonl"), timeout=240)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert stats.get("edrew/errors") == 1, stats
    bad_url = server.url + path(bad)
    logged = [line for line in proc.stderr.splitlines() if "ERROR: EDREW" in line]
    assert len(logged) == 1 and bad_url in logged[0], logged
    urls = [item["url"] for item in read_jsonl(tmp_path / "out.jsonl")]
    # The builder exports every other page, relevant text or not, so no page depends on the model here.
    expected = {server.url + path(i) for i in range(n_pages) if i != bad} | {server.url + "/"}
    assert sorted(urls) == sorted(expected), set(urls) ^ expected
    assert stats.get("edrew/items") == len(expected)


# ------------------------------------------------------------------ SIGKILL, then resume with JOBDIR

# Scrapy's dupefilter appends 22 bytes per request (2-byte length + 20-byte fingerprint) to
# JOBDIR/requests.seen through an 8 KB buffer, so the file only gets fingerprints once about 372
# requests are scheduled. A front page that links to every article schedules them all at once: the
# first ~372 fingerprints, the front page's own among them, reach the disk long before those pages
# are exported. Without the resume guard a run resumed after SIGKILL finds the front page "seen" and
# exports nothing more (measured: 449 of 500 articles lost).
N_SITE_PAGES = 500
KILL_AFTER_ITEMS = 30


def _site_routes():
    """/ links to N_SITE_PAGES articles: N_SITE_PAGES + 1 HTML pages."""
    routes = {"/robots.txt": (200, {"Content-Type": "text/plain"}, b"User-agent: *\nAllow: /\n")}
    links = "".join(f"<li><a href='/a/{i}'>Article {i}</a></li>" for i in range(N_SITE_PAGES))
    routes["/"] = (200, {"Content-Type": "text/html"},
                   f"<html><head><title>Front</title></head><body><ul>{links}</ul></body></html>".encode())
    for i in range(N_SITE_PAGES):
        routes[f"/a/{i}"] = (200, {"Content-Type": "text/html; charset=utf-8"}, _article(i))
    return routes


def _start_and_stop(server, tmp_path, args, sig, name):
    """Start a crawl, send `sig` once KILL_AFTER_ITEMS items are in the feed, wait for it to end."""
    feed = tmp_path / "feed.jsonl"
    # The log goes to a file: an unread pipe would block the crawler once it filled up.
    with open(tmp_path / f"{name}.log", "w") as log:
        proc = subprocess.Popen(crawl_command(server.url + "/", tmp_path / f"{name}-stats.json", *args),
                                cwd=str(ROOT), env=crawl_env(), stdout=subprocess.DEVNULL, stderr=log)
    try:
        deadline = time.monotonic() + 240  # hang guard only
        while len(read_jsonl(feed)) < KILL_AFTER_ITEMS and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert proc.poll() is None, "the crawl ended before it could be stopped"
        proc.send_signal(sig)
        proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode


def _strict_feed(feed: Path):
    """The feed's items; every line must be a complete JSON object."""
    lines = feed.read_bytes().split(b"\n")
    assert lines[-1] == b"", f"the feed ends in a partial line: {lines[-1][:80]!r}"
    return [json.loads(line) for line in lines[:-1]]


def _article_counts(items):
    counts = {}
    for item in items:
        path = "/" + item["url"].split("/", 3)[3]
        counts[path] = counts.get(path, 0) + 1
    return counts


@needs_model
def test_sigkill_then_resume_with_jobdir_continues_and_exports_every_article_exactly_once(tmp_path):
    """SIGKILL mid-crawl, then the same command again: the crawl continues where it stopped and the feed
    ends with every article exactly once.

    The killed run leaves requests.seen with fingerprints of pages it never exported (the front
    page's among them) and no saved queue; the resume guard sees its marker and deletes both, the
    scheduler queues again what its journal holds as unfinished, and the feed filter skips a page
    whose item reached the feed before its end reached the journal."""
    feed = tmp_path / "feed.jsonl"
    jobdir = tmp_path / "job"
    articles = {f"/a/{i}" for i in range(N_SITE_PAGES)}
    args = ["-s", f"JOBDIR={jobdir}", "-o", str(feed), "-s", "LOG_LEVEL=INFO"]
    with RecordingServer(_site_routes()) as server:
        assert _start_and_stop(server, tmp_path, args, signal.SIGKILL, "first") == -signal.SIGKILL
        before = read_jsonl(feed)
        assert KILL_AFTER_ITEMS <= len(before) < N_SITE_PAGES
        # The loss scenario is real: the disk holds more fingerprints (22 bytes each) than pages were
        # exported, and no queue state.
        assert (jobdir / "requests.seen").stat().st_size // 22 > len(before) + 100
        assert not (jobdir / "requests.queue" / "active.json").exists()
        first_run = len(server.paths())
        requested_before = set(server.paths())
        proc, stats = run_crawl(server.url + "/", tmp_path, *args, timeout=300)
        again = [path for path in server.paths()[first_run:] if path in requested_before]
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert stats.get("edrew/resume/unclean-stop") == 1, stats
    assert "edrew/resume/unclean-restart" not in stats
    assert "continues from its journal" in proc.stderr
    # Not the whole site again: not the front page, and of the articles only those in flight at the
    # kill (the bundled project's CONCURRENT_REQUESTS is 16), robots.txt aside.
    repeated = [path for path in again if path != "/robots.txt"]
    assert "/" not in repeated and len(repeated) <= 16 < len(before), (repeated, len(before))
    assert stats.get("edrew/resume/already-exported", 0) <= len(repeated), stats
    counts = _article_counts(_strict_feed(feed))
    assert set(counts) >= articles, f"lost after resume: {sorted(articles - set(counts))[:10]}"
    assert max(counts.values()) == 1, sorted(p for p, n in counts.items() if n > 1)[:10]
    assert not (jobdir / "edrew-crawl-running").exists()


@needs_model
def test_graceful_stop_then_resume_with_jobdir_keeps_the_queue_and_exports_every_article_once(tmp_path):
    """One SIGINT: Scrapy saves its queue and the guard sees a clean close, so the resumed run goes on
    from the saved queue (no restart) and the feed ends with every article exactly once."""
    feed = tmp_path / "feed.jsonl"
    jobdir = tmp_path / "job"
    articles = {f"/a/{i}" for i in range(N_SITE_PAGES)}
    args = ["-s", f"JOBDIR={jobdir}", "-o", str(feed), "-s", "LOG_LEVEL=INFO"]
    with RecordingServer(_site_routes()) as server:
        assert _start_and_stop(server, tmp_path, args, signal.SIGINT, "first") == 0
        assert (jobdir / "requests.queue" / "active.json").exists()
        assert not (jobdir / "edrew-crawl-running").exists()
        before = _strict_feed(feed)
        assert len(before) < N_SITE_PAGES
        requested_before = len(server.paths())
        proc, stats = run_crawl(server.url + "/", tmp_path, *args, timeout=300)
        requested_after = len(server.paths()) - requested_before
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Resuming crawl" in proc.stderr
    assert "edrew/resume/unclean-restart" not in stats
    # Only the rest of the site is fetched again (robots.txt aside), not the whole site.
    assert requested_after <= N_SITE_PAGES + 2 - len(before), (requested_after, len(before))
    counts = _article_counts(_strict_feed(feed))
    assert set(counts) >= articles, f"lost after resume: {sorted(articles - set(counts))[:10]}"
    assert max(counts.values()) == 1, sorted(p for p, n in counts.items() if n > 1)[:10]
