"""Distributed crawls through a real Redis server: several real `scrapy crawl` processes on one
machine share one queue and one dupefilter, each scores its own pages, and every page's EDREW item
reaches the feeds exactly once; also with one process killed by SIGKILL mid-crawl.

Redis is a real redis-server (tests/_redis_helpers.py), the site a server on 127.0.0.1. Waits are on
conditions (log lines, items in the feeds, Redis keys); timeouts only guard against hangs.
"""
from __future__ import annotations

import json
import signal
import sys
import threading
from collections import Counter
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "fixtures" / "reliability"))
from _redis_helpers import (  # noqa: E402
    CRAWL_SETTINGS,
    RedisServer,
    feed_lines,
    gated,
    log_has,
    require_redis_server,
    site_routes,
    start_crawl,
    wait_for,
)
from reliability_support import RecordingServer, crawl_env, model_missing_reason  # noqa: E402

from edrew_scrapy.distributed.merge import merge_feeds  # noqa: E402

pytestmark = [pytest.mark.crawl,
              pytest.mark.skipif(model_missing_reason() is not None, reason=str(model_missing_reason()))]

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "redis"
OPENED = "Spider opened"


@pytest.fixture
def redis_server(tmp_path):
    with RedisServer(require_redis_server(), tmp_path / "redis") as server:
        yield server


def env():
    environment = crawl_env()
    environment["PYTHONPATH"] = f"{FIXTURES}:{environment['PYTHONPATH']}"
    return environment


def stop(procs, sig=signal.SIGINT, timeout=120):
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(sig)
    for proc in procs:
        try:
            proc.wait(timeout=timeout)
        except Exception:
            proc.kill()
            proc.wait()


def page_counts(items, base):
    return Counter(item["url"][len(base):] for item in items if item.get("nodes"))


def test_scrapy_redis_scheduler_dupefilter_and_redis_spider_as_they_come(redis_server, tmp_path):
    """scrapy-redis's own Scheduler, RFPDupeFilter and RedisSpider, with the EDREW add-on: two worker
    processes take pages from one queue, each exports the items of the pages it crawled, and the
    two feeds together hold every article's item exactly once.

    The front page may come twice: scrapy-redis makes its start requests with dont_filter=True, so
    the articles' "Home" link fetches it again (EdrewRedisSpider's start requests go through the
    dupefilter)."""
    n = 120
    feeds = [tmp_path / f"p{k}.jsonl" for k in range(2)]
    logs = [tmp_path / f"p{k}.log" for k in range(2)]
    gate = threading.Event()
    with RecordingServer(gated(site_routes(n), gate)) as web:
        procs = [start_crawl(["runspider", str(FIXTURES / "plain_redis_spider.py"), "-o", str(feed),
                              "-s", f"REDIS_URL={redis_server.url}", *CRAWL_SETTINGS], log, env())
                 for feed, log in zip(feeds, logs)]
        try:
            wait_for(lambda: all(log_has(log, OPENED) for log in logs), "both spiders to open", procs=procs)
            redis = redis_server.client()
            redis.rpush("plain-redis:start_urls", json.dumps({"url": web.url + "/"}))
            # The articles wait until the second process has taken some from the shared queue: one
            # process has at most CONCURRENT_REQUESTS = 16 requests on the wire while their downloads
            # hang, so a 17th article reaching the server comes from the other (an idle one looks every
            # 5 s, as Scrapy's engine does). Counting the queue instead raced the first process's pushes
            # of the front page's links.
            wait_for(lambda: len({p for p in web.paths() if p.startswith("/a/")}) > 16,
                     "the second process to take requests", procs=procs)
            gate.set()
            pages = {"/"} | {f"/a/{i}" for i in range(n)}
            # Every page requested once (the shared dupefilter) and nothing left in the shared queue:
            # what is in flight, a graceful stop finishes.
            wait_for(lambda: pages <= set(web.paths()) and not redis_server.client().zcard("plain-redis:requests"),
                     "every page to be requested", procs=procs)
        finally:
            stop(procs)
    assert [proc.returncode for proc in procs] == [0, 0], [log.read_text()[-2000:] for log in logs]
    per_process = [page_counts(feed_lines(feed), web.url) for feed in feeds]
    assert all(per_process), f"a process scored no page: {[sum(c.values()) for c in per_process]}"
    union = per_process[0] + per_process[1]
    assert set(union) == pages, sorted(pages ^ set(union))[:10]
    assert max(count for page, count in union.items() if page != "/") == 1, union.most_common(3)
    assert Counter(web.paths())["/a/7"] == 1


def run_leased(redis_server, tmp_path, n, delay, name, gate=None, extra=()):
    """Start two `scrapy crawl edrew-redis` processes (they wait for the start URL)."""
    feeds = [tmp_path / f"{name}{k}.jsonl" for k in range(2)]
    logs = [tmp_path / f"{name}{k}.log" for k in range(2)]
    routes = site_routes(n)
    web = RecordingServer(gated(routes, gate) if gate else routes, delay=delay).__enter__()
    procs = [start_crawl(["crawl", "edrew-redis", "-s", f"REDIS_URL={redis_server.url}", "-o", str(feed),
                          "-s", "EDREW_REDIS_LEASE_TIMEOUT=3", "-s", "EDREW_REDIS_PROCESS=" + feed.stem,
                          *CRAWL_SETTINGS, *extra], log, env())
             for feed, log in zip(feeds, logs)]
    return web, procs, feeds, logs


def test_leased_crawl_two_processes_each_page_once_and_stats_in_redis(redis_server, tmp_path):
    """The EDREW Redis add-on: two processes share the crawl, both end on their own once nothing is
    pending or leased, every page's item is in exactly one feed, and the crawl-wide stats in Redis
    add up."""
    n = 150
    gate = threading.Event()
    web, procs, feeds, logs = run_leased(redis_server, tmp_path, n, 0, "p", gate)
    redis = redis_server.client()
    try:
        wait_for(lambda: all(log_has(log, OPENED) for log in logs), "both spiders to open", procs=procs)
        redis.rpush("edrew-redis:start_urls", web.url + "/")
        # Both processes hold leases before the articles are served (one holds at most 16 + 1).
        wait_for(lambda: redis.zcard("edrew-redis:requests:leases") > 17, "both processes to lease requests",
                 procs=procs)
        gate.set()
        for proc in procs:
            proc.wait(timeout=180)
    finally:
        stop(procs, signal.SIGKILL)
        web.__exit__(None, None, None)
    assert [proc.returncode for proc in procs] == [0, 0], [log.read_text()[-3000:] for log in logs]
    pages = {"/"} | {f"/a/{i}" for i in range(n)}
    per_process = [page_counts(feed_lines(feed), web.url) for feed in feeds]
    assert all(per_process), f"a process scored no page: {[sum(c.values()) for c in per_process]}"
    union = per_process[0] + per_process[1]
    assert set(union) == pages and max(union.values()) == 1, (sorted(pages ^ set(union))[:10], union.most_common(3))
    stats = {k.decode(): float(v) for k, v in redis.hgetall("edrew-redis:edrew:stats").items()}
    assert stats["items"] == len(pages) and stats["pages"] == len(pages), stats
    assert stats["redis/leases/acked"] == stats["redis/leases/taken"] >= len(pages), stats
    assert not redis.zcard("edrew-redis:requests:leases") and not redis.zcard("edrew-redis:requests")
    assert redis.scard("edrew-redis:edrew:exported") == len(pages)
    for feed in feeds:  # each process's own stats, by its EDREW_REDIS_PROCESS name
        own = redis.hgetall(f"edrew-redis:edrew:stats:{feed.stem}")
        assert float(own[b"items"]) == sum(page_counts(feed_lines(feed), web.url).values())


@pytest.mark.parametrize("items", ["page", "node"])
def test_sigkill_mid_crawl_loses_nothing_and_the_merged_feeds_hold_each_page_once(redis_server, tmp_path, items):
    """One of two processes is killed with SIGKILL mid-crawl, holding leases; the survivor puts them
    back once they expire and, with the killed process restarted on its own feed, the crawl ends:
    no page lost, and the merged feeds hold each page's item (or each node item) exactly once.

    The site holds its articles from the kill until the restarted process has opened, so that the
    restarted process takes part in the crawl (started late, it used to find it over) and exports pages
    into the feed it read back (issue #38: it acknowledged each page before its feed wrote it)."""
    n = 200
    # no download times out while the site holds the articles
    mode = ["-s", f"EDREW_ITEMS={items}", "-s", "DOWNLOAD_TIMEOUT=180"]
    gate = threading.Event()
    gate.set()
    web, procs, feeds, logs = run_leased(redis_server, tmp_path, n, 0.1, "p", gate, extra=mode)
    redis = redis_server.client()
    victim = procs[0]
    try:
        wait_for(lambda: all(log_has(log, OPENED) for log in logs), "both spiders to open", procs=procs)
        redis.rpush("edrew-redis:start_urls", web.url + "/")
        wait_for(lambda: len({r["url"] for r in feed_lines(feeds[0])}) >= 20, "the first process to export 20 pages",
                 procs=procs)
        held = redis.zcard("edrew-redis:requests:leases")
        victim.send_signal(signal.SIGKILL)
        victim.wait(timeout=30)
        gate.clear()
        killed_lines = feed_lines(feeds[0])
        killed_with = len({r["url"] for r in killed_lines})
        assert killed_with < n, "the crawl was over before the kill"
        # The killed process comes back on the same feed (appended to, as `-o` does).
        restarted = start_crawl(["crawl", "edrew-redis", "-s", f"REDIS_URL={redis_server.url}", "-o", str(feeds[0]),
                                 "-s", "EDREW_REDIS_LEASE_TIMEOUT=3", "-s", "EDREW_REDIS_PROCESS=restarted",
                                 *CRAWL_SETTINGS, *mode], tmp_path / "restarted.log", env())
        procs.append(restarted)
        wait_for(lambda: log_has(tmp_path / "restarted.log", OPENED), "the restarted process to open",
                 procs=procs[1:])
        gate.set()
        for proc in procs[1:]:
            proc.wait(timeout=180)
    finally:
        gate.set()
        stop(procs, signal.SIGKILL)
        web.__exit__(None, None, None)
    assert victim.returncode == -signal.SIGKILL and held > 0
    assert [proc.returncode for proc in procs[1:]] == [0, 0], \
        [p.read_text()[-3000:] for p in (logs[1], tmp_path / "restarted.log")]
    stats = {k.decode(): float(v) for k, v in redis.hgetall("edrew-redis:edrew:stats").items()}
    assert stats.get("redis/leases/requeued", 0) >= 1, stats  # the killed process's leases came back
    # the restarted process read its feed back: what the killed one had exported is in the exported set
    restarted_stats = redis.hgetall("edrew-redis:edrew:stats:restarted")
    assert float(restarted_stats[b"redis/feed-items-read-back"]) >= killed_with, restarted_stats
    # and it exported pages of its own after them (the bug of #38 left its feed as the kill had)
    appended = len(feed_lines(feeds[0])) - len(killed_lines)
    assert appended > 0, restarted_stats
    merged = tmp_path / "merged.jsonl"
    result = merge_feeds(feeds, merged)
    pages = {"/"} | {f"/a/{i}" for i in range(n)}
    records = feed_lines(merged)
    if items == "page":
        counts = page_counts(records, web.url)
    else:  # every page gives node items; each node once
        counts = Counter(record["url"][len(web.url):] for record in records)
        nodes = Counter((record["url"], record["index"], record["path"]) for record in records)
        assert max(nodes.values()) == 1, nodes.most_common(3)
    assert set(counts) == pages, f"lost: {sorted(pages - set(counts))[:10]}"
    assert items == "node" or max(counts.values()) == 1
    # Duplicates in the raw feeds can only be items written after the last acknowledgement and before
    # the kill: pages of leases the killed process held, at most.
    raw = Counter((r["url"], r.get("index"), r.get("path")) for feed in feeds for r in feed_lines(feed))
    pages_twice = {key[0] for key, count in raw.items() if count > 1}
    assert len(pages_twice) <= held, (pages_twice, held)
    print(f"killed with {killed_with} pages exported and {held} leases held; "
          f"{stats.get('redis/leases/requeued')} leases requeued; the restarted process exported {appended} items; "
          f"{result.duplicates} duplicates merged away")


def test_a_raising_callbacks_page_item_is_written_before_its_lease_ends(redis_server, tmp_path):
    """A callback that raises before any output: the add-on sends its page's item to the item pipelines
    from process_spider_exception. The page's lease must wait for that item as for a yielded one. The
    first process holds one such item in its pipelines (not yet in its feed) and is killed with SIGKILL
    there: the lease is still held, expires, and a second process fetches the page again and exports it.
    Acknowledged before the feed wrote the item (issue #38), the page was in no feed."""
    n, hold = 6, "/a/3"
    marker = tmp_path / "held"
    feeds = [tmp_path / f"p{k}.jsonl" for k in range(2)]
    logs = [tmp_path / f"p{k}.log" for k in range(2)]

    def crawl(k, *extra):
        return start_crawl(["runspider", str(FIXTURES / "raising_redis_spider.py"), "-o", str(feeds[k]),
                            "-s", f"REDIS_URL={redis_server.url}", "-s", "EDREW_REDIS_LEASE_TIMEOUT=3",
                            "-s", f"EDREW_REDIS_PROCESS=p{k}", *CRAWL_SETTINGS, *extra], logs[k], env())

    pages = {"/"} | {f"/a/{i}" for i in range(n)}
    redis = redis_server.client()
    web = RecordingServer(site_routes(n)).__enter__()
    procs = [crawl(0, "-s", f"HOLD_URL_SUFFIX={hold}", "-s", f"HOLD_MARKER={marker}")]
    try:
        wait_for(lambda: log_has(logs[0], OPENED), "the first spider to open", procs=procs)
        redis.rpush("raising-redis:start_urls", web.url + "/")
        # the held item is in the pipelines and every other page's item in the feed: nothing else is left
        wait_for(lambda: marker.is_file() and set(page_counts(feed_lines(feeds[0]), web.url)) == pages - {hold}
                 and not redis.zcard("raising-redis:requests"), "every page but the held one to be exported",
                 procs=procs)
        held = redis.zcard("raising-redis:requests:leases")
        procs[0].send_signal(signal.SIGKILL)
        procs[0].wait(timeout=30)
        procs.append(crawl(1))
        procs[1].wait(timeout=120)
    finally:
        stop(procs, signal.SIGKILL)
        web.__exit__(None, None, None)
    assert procs[1].returncode == 0, logs[1].read_text()[-3000:]
    per_process = [page_counts(feed_lines(feed), web.url) for feed in feeds]
    union = per_process[0] + per_process[1]
    assert set(union) == pages, f"lost: {sorted(pages - set(union))}; leases held at the kill: {held}"
    assert max(union.values()) == 1 and set(per_process[1]) == {hold}, per_process
    assert held == 1  # the held page's lease waited for its item
    assert log_has(logs[1], "Spider error processing") and "ValueError" in logs[1].read_text()
    stats = {k.decode(): float(v) for k, v in redis.hgetall("raising-redis:edrew:stats").items()}
    assert stats["redis/leases/requeued"] == 1, stats
    assert redis.scard("raising-redis:edrew:exported") == len(pages)


def test_the_one_command_demo(tmp_path):
    """scripts/redis-demo.sh: its own Redis and demo site, two crawl processes, the feeds merged."""
    root = Path(__file__).resolve().parent.parent
    import subprocess

    proc = subprocess.run(["bash", "scripts/redis-demo.sh", *CRAWL_SETTINGS[:2]], cwd=str(root), env=env(),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, (proc.stdout[-2000:], proc.stderr[-2000:])
    merged = feed_lines(root / "output" / "redis-demo" / "pages.jsonl")
    urls = Counter(item["url"].split("/", 3)[3] for item in merged)
    assert max(urls.values()) == 1 and {"", "news/council-approves-riverside-bike-lanes.html"} <= set(urls)
    assert "merged: " in proc.stdout and "crawl-wide stats in Redis" in proc.stdout
