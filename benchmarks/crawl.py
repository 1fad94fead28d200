"""A local crawl with the add-on on and off, side by side in one run.

    python benchmarks/crawl.py --pages 2000 [--html ../shared/datasets/wcxb-dev/html]

Serves N pages on 127.0.0.1 (real pages from --html, cycled, each with links to the next pages so
the crawl discovers them; or generated article pages when --html is not given) and crawls them with
`scrapy runspider` twice: plain, then with ADDONS = {"edrew_scrapy.Addon": 500}. Prints pages/s
(over the whole process, and over the crawl alone: spider opened to closed, so without the one-time
start-up, where the add-on imports torch and loads its model), CPU seconds per page and peak RSS of
the crawl process for both, and the ratios.
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

from benchmark_pages import load_pages  # noqa: E402

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
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
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


def crawl(url: str, addon: bool, workdir: Path) -> dict:
    spider = workdir / "follow.py"
    spider.write_text(SPIDER)
    feed = workdir / f"items-{'on' if addon else 'off'}.jsonl"
    timing = workdir / f"timing-{'on' if addon else 'off'}.json"
    cmd = [sys.executable, "-m", "scrapy", "runspider", str(spider), "-a", f"start={url}/p/0",
           "-a", f"timing={timing}", "-O", str(feed), "-s", "DEPTH_PRIORITY=1"]
    if addon:
        cmd += ["-s", 'ADDONS={"edrew_scrapy.Addon": 500}']
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    log = workdir / "crawl.log"
    t0 = time.perf_counter()
    with open(log, "w") as err:
        proc = subprocess.Popen(cmd, cwd=workdir, env=env, stdout=subprocess.DEVNULL, stderr=err)
        peak_kb = 0
        while proc.poll() is None:  # VmHWM: the process's own peak RSS, read while it lives
            try:
                for line in Path(f"/proc/{proc.pid}/status").read_text().splitlines():
                    if line.startswith("VmHWM:"):
                        peak_kb = max(peak_kb, int(line.split()[1]))
            except OSError:
                pass
            time.sleep(0.2)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"crawl failed ({'add-on' if addon else 'plain'}):\n{log.read_text()[-3000:]}")
    items = [json.loads(line) for line in feed.read_text().splitlines() if line.strip()]
    pages = sum(1 for it in items if "status" in it)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall": wall, "crawl": json.loads(timing.read_text())["crawl_s"], "cpu": cpu,
            "peak_rss_mb": peak_kb / 1024, "pages": pages,
            "edrew_items": sum(1 for it in items if "status" not in it)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pages", type=int, default=2000)
    ap.add_argument("--html", type=Path, default=None, help="folder of real pages to serve (cycled)")
    args = ap.parse_args()
    pages = make_pages(args.pages, args.html)
    httpd = serve(pages)
    url = f"http://127.0.0.1:{httpd.server_address[1]}"
    print(f"serving {len(pages)} pages ({sum(map(len, pages)) / len(pages) / 1024:.0f} KB mean) at {url}")
    with tempfile.TemporaryDirectory() as tmp:
        plain = crawl(url, False, Path(tmp))
        print(f"plain crawl done: {plain['pages']} pages in {plain['wall']:.1f} s")
        edrew = crawl(url, True, Path(tmp))
        print(f"add-on crawl done: {edrew['pages']} pages, {edrew['edrew_items']} EDREW items in {edrew['wall']:.1f} s")
    httpd.shutdown()
    print(f"\n{'':<12}{'pages':>8}{'pages/s':>10}{'crawl pages/s':>15}{'CPU s/page':>12}{'peak RSS MB':>13}")
    for name, r in (("plain", plain), ("add-on", edrew)):
        print(f"{name:<12}{r['pages']:>8}{r['pages'] / r['wall']:>10.1f}{r['pages'] / r['crawl']:>15.1f}"
              f"{r['cpu'] / max(r['pages'], 1):>12.3f}{r['peak_rss_mb']:>13.0f}")
    print("(pages/s: over the whole process, start-up included; crawl pages/s: from the spider's opening "
          "to its closing, without start-up, imports and the model load)")
    ratio = (edrew["pages"] / edrew["wall"]) / (plain["pages"] / plain["wall"])
    crawl_ratio = (edrew["pages"] / edrew["crawl"]) / (plain["pages"] / plain["crawl"])
    print(f"\nadd-on pages/s / plain pages/s = {ratio:.2f} (target >= 0.50 -> {'PASS' if ratio >= 0.5 else 'FAIL'})")
    print(f"the same over the crawl alone = {crawl_ratio:.2f} "
          f"(start-up: plain {plain['wall'] - plain['crawl']:.1f} s, add-on {edrew['wall'] - edrew['crawl']:.1f} s)")
    print(f"add-on peak RSS {edrew['peak_rss_mb']:.0f} MB (target <= 1024 -> "
          f"{'PASS' if edrew['peak_rss_mb'] <= 1024 else 'FAIL'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
