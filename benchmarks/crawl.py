"""A local crawl with the add-on on and off, side by side in one run.

    python benchmarks/crawl.py --pages 2000 [--html ../shared/datasets/wcxb-dev/html] [--workers 0,1] [--rounds 3]

Serves N pages on 127.0.0.1 (real pages from --html, cycled, each with links to the next pages so
the crawl discovers them; or generated article pages when --html is not given) and crawls them with
`scrapy runspider` twice: plain, then with ADDONS = {"edrew_scrapy.Addon": 500}. With --workers, the
add-on crawl runs once per listed EDREW_WORKERS value; with --rounds, all of it again, the order of
the crawls rotated each round so that no variant always runs first. Prints pages/s (over the whole
process, and over the crawl alone: spider opened to closed, so without the one-time start-up, where
the add-on loads its model), CPU seconds per page (the crawl process and its worker
processes) and peak RSS for each crawl, and the ratios to the plain crawl of the same round.
Peak RSS is that of the crawl process and its worker processes together: the sum of each process's
own peak (VmHWM), an upper bound, since their peaks need not coincide; "tree RSS" is the largest sum
of their current RSS (VmRSS) seen in samples 0.2 s apart.
Targets (issue #5): pages/s with the add-on >= 50 % of without; peak RSS <= 1 GB.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchmark_pages import load_pages, send_html_head  # noqa: E402

SPIDER = textwrap.dedent('''
    import scrapy

    class FollowSpider(scrapy.Spider):
        """Follows every link on the local site: the crawl a user's own spider would do."""
        name = "follow"
        custom_settings = {"ROBOTSTXT_OBEY": False, "LOG_LEVEL": "WARNING", "CONCURRENT_REQUESTS": 16,
                           "TELNETCONSOLE_ENABLED": False}

        def __init__(self, start=None, timing=None, **kw):
            super().__init__(**kw)
            self.start_urls = [start]
            self.timing = timing

        def closed(self, reason):
            # The crawl itself, from the engine opening the spider to its closing: process start-up,
            # imports and building the components (the model load) are not in it.
            import datetime, json
            start = self.crawler.stats.get_value("start_time")
            now = datetime.datetime.now(tz=start.tzinfo)
            with open(self.timing, "w") as f:
                json.dump({"crawl_s": (now - start).total_seconds()}, f)

        def parse(self, response):
            yield {"url": response.url, "status": response.status}
            for href in response.css("a.next::attr(href)").getall():
                yield response.follow(href, self.parse)
''')


def make_pages(n: int, html_dir: Path | None) -> list:
    """N page bodies; page i links to pages 2i+1 and 2i+2 so the crawl is a breadth-first tree."""
    sources = []
    if html_dir:
        sources = load_pages(html_dir, 300, progress=False)
    else:
        para = ("The council met on Tuesday to discuss the new cycling lanes, which residents have asked "
                "for since the bridge closed. Several speakers described the daily commute in detail. ")
        for k in range(20):
            body = "".join(f"<p>{para * (1 + k % 3)}</p>" for _ in range(8))
            sources.append((
                "<html><head><title>Story</title></head><body><nav><a href='/'>Home</a> <a href='/news'>News</a>"
                f"</nav><article><h1>Story {k}</h1>{body}</article><footer>Contact us | Privacy</footer>"
                "</body></html>").encode())
    pages = []
    for i in range(n):
        links = "".join(f"<a class='next' href='/p/{j}'>next {j}</a>" for j in (2 * i + 1, 2 * i + 2) if j < n)
        src = sources[i % len(sources)]
        cut = src.lower().rfind(b"</body>")
        cut = cut if cut >= 0 else len(src)
        pages.append(src[:cut] + links.encode() + src[cut:])
    return pages


def serve(pages: list) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            try:
                body = pages[int(self.path.rsplit("/", 1)[-1] or 0)]
            except (ValueError, IndexError):
                self.send_error(404)
                return
            send_html_head(self, body)
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    class Server(ThreadingHTTPServer):
        # The default listen backlog of 5 overflows under 16 concurrent connects, and each dropped SYN
        # stalls its request for a 1 s retransmit: the plain crawl measured 7 to 17 s for the same CPU.
        request_queue_size = 128

    httpd = Server(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


def _descendants(pid: int) -> list:
    """pid and every process below it, from /proc/<pid>/task/<tid>/children."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            for task in Path(f"/proc/{p}/task").iterdir():
                todo += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            pass
    return out


def _status_kb(pid: int) -> dict:
    try:
        lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    except OSError:
        return {}
    return {k: int(v.split()[0]) for k, _, v in (ln.partition(":") for ln in lines) if k in ("VmHWM", "VmRSS")}


def crawl(url: str, addon: bool, workdir: Path, workers: int | None = None) -> dict:
    spider = workdir / "follow.py"
    spider.write_text(SPIDER)
    name = "off" if not addon else f"on-{workers}"
    feed = workdir / f"items-{name}.jsonl"
    timing = workdir / f"timing-{name}.json"
    cmd = [sys.executable, "-m", "scrapy", "runspider", str(spider), "-a", f"start={url}/p/0",
           "-a", f"timing={timing}", "-O", str(feed), "-s", "DEPTH_PRIORITY=1"]
    if addon:
        cmd += ["-s", 'ADDONS={"edrew_scrapy.Addon": 500}']
        if workers is not None:
            cmd += ["-s", f"EDREW_WORKERS={workers}"]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    log = workdir / "crawl.log"
    t0 = time.perf_counter()
    with open(log, "w") as err:
        proc = subprocess.Popen(cmd, cwd=workdir, env=env, stdout=subprocess.DEVNULL, stderr=err)
        hwm_kb: dict = {}   # pid -> its own peak RSS (VmHWM), read while it lives
        tree_kb = 0         # the largest sum of current RSS over the process tree
        while proc.poll() is None:
            rss = 0
            for pid in _descendants(proc.pid):
                status = _status_kb(pid)
                hwm_kb[pid] = max(hwm_kb.get(pid, 0), status.get("VmHWM", 0))
                rss += status.get("VmRSS", 0)
            tree_kb = max(tree_kb, rss)
            time.sleep(0.2)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"crawl failed ({name}):\n{log.read_text()[-3000:]}")
    items = [json.loads(line) for line in feed.read_text().splitlines() if line.strip()]
    pages = sum(1 for it in items if "status" in it)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall": wall, "crawl": json.loads(timing.read_text())["crawl_s"], "cpu": cpu,
            "peak_rss_mb": sum(hwm_kb.values()) / 1024, "tree_rss_mb": tree_kb / 1024,
            "processes": len(hwm_kb), "each_mb": "+".join(f"{kb / 1024:.0f}" for kb in hwm_kb.values()),
            "pages": pages,
            "edrew_items": sum(1 for it in items if "status" not in it)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pages", type=int, default=2000)
    ap.add_argument("--html", type=Path, default=None, help="folder of real pages to serve (cycled)")
    ap.add_argument("--workers", default=None,
                    help="comma-separated EDREW_WORKERS values, one add-on crawl each (default: the add-on's own)")
    ap.add_argument("--rounds", type=int, default=1, help="run everything this many times, order rotated")
    args = ap.parse_args()
    variants = [None] if args.workers is None else [int(w) for w in args.workers.split(",")]
    pages = make_pages(args.pages, args.html)
    httpd = serve(pages)
    url = f"http://127.0.0.1:{httpd.server_address[1]}"
    print(f"serving {len(pages)} pages ({sum(map(len, pages)) / len(pages) / 1024:.0f} KB mean) at {url}")
    runs = [("plain", None)] + [("add-on" if w is None else f"add-on w={w}", w) for w in variants]
    readings = []  # (round, name, result, plain result of that round)
    with tempfile.TemporaryDirectory() as tmp:
        for rnd in range(args.rounds):
            k = rnd % len(runs)
            order = runs[k:] + runs[:k]
            results = {}
            for name, w in order:
                r = crawl(url, name != "plain", Path(tmp), w)
                results[name] = r
                print(f"round {rnd + 1}: {name} done: {r['pages']} pages, {r['edrew_items']} EDREW items "
                      f"in {r['wall']:.1f} s")
            readings += [(rnd + 1, name, results[name], results["plain"]) for name, _ in runs]
    httpd.shutdown()
    print(f"\n{'round':<6}{'crawl':<12}{'pages':>6}{'pages/s':>9}{'crawl p/s':>10}{'ratio':>7}{'crawl ratio':>12}"
          f"{'CPU s/page':>11}{'peak RSS MB':>12}{'tree RSS MB':>12}  each process's peak MB")
    fails = []
    for rnd, name, r, plain in readings:
        ratio = (r["pages"] / r["wall"]) / (plain["pages"] / plain["wall"])
        crawl_ratio = (r["pages"] / r["crawl"]) / (plain["pages"] / plain["crawl"])
        print(f"{rnd:<6}{name:<12}{r['pages']:>6}{r['pages'] / r['wall']:>9.1f}{r['pages'] / r['crawl']:>10.1f}"
              f"{ratio:>7.2f}{crawl_ratio:>12.2f}{r['cpu'] / max(r['pages'], 1):>11.4f}{r['peak_rss_mb']:>12.0f}"
              f"{r['tree_rss_mb']:>12.0f}  {r['each_mb']}")
        if name != "plain" and (ratio < 0.5 or r["peak_rss_mb"] > 1024):
            fails.append(f"round {rnd} {name}")
    print("(pages/s: over the whole process, start-up included; crawl p/s: from the spider's opening to its "
          "closing, without start-up, imports and the model load; ratio: to the plain crawl of the same round; "
          "peak RSS: the crawl process and its workers, the sum of each one's own peak)")
    print(f"\ntargets: add-on pages/s >= 0.50 x plain, peak RSS <= 1024 MB -> "
          f"{'PASS' if not fails else 'FAIL: ' + ', '.join(fails)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
