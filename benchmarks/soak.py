"""Soak test: crawl thousands of generated pages with the add-on and watch the crawler's memory.

    nice -n 10 python benchmarks/soak.py --pages 10000 [--out output/soak] [--warmup 0.1]

Serves `--pages` generated content pages (news articles, blog posts with comments, product pages,
help pages; each wrapped in varied boilerplate: navigation, cookie banner, ads, related links, footer)
plus hub pages that link to them, all on 127.0.0.1 from this process. Then runs
`scrapy crawl edrew` (the bundled spider, the add-on on) as a subprocess, samples its RSS from
/proc/<pid>/status every second (with its worker processes' RSS added: the model and its caches live
there with EDREW_WORKERS >= 1) together with the scorer's cache bytes (the edrew/cache/<name>/bytes
stats, which the crawl writes to OUT/edrew-stats.json every second), and prints progress. At the end
it checks that

* every content page was requested once and yielded exactly one page item (the hubs are link lists:
  the items they give, if any, are counted apart), and
* RSS after warm-up (the first --warmup share of the content pages exported), less what the scorer's
  caches grew by meanwhile, grows less than 10 %. The caches are bounded (entries, and EDREW_CACHE_MB
  bytes): filling them up is not a leak, and they fill up over a soak of generated pages, whose texts
  are new on every page. The raw RSS growth and the caches' own are reported next to it.

Writes OUT/feed.jsonl, OUT/crawl.log, OUT/rss.csv and OUT/summary.json; exits 1 when a check fails.
`--no-scoring` runs the same crawl with the scoring stage off (serialising only), e.g. without a model.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List, Optional, Tuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "fixtures" / "reliability"))
from reliability_support import RecordingServer, crawl_command, crawl_env  # noqa: E402

PER_HUB = 100
WORDS = ("river bridge council water school market library museum garden harbour railway festival "
         "weather forest village budget election station hospital theatre football orchestra bakery "
         "museum volunteers flood engineers students farmers tourists residents officials workers "
         "announced reported discovered approved opened restored delayed celebrated measured repaired "
         "quietly yesterday tonight recently finally carefully early late new old small large local").split()
SECTIONS = ["news", "blog", "shop", "help", "sport", "culture"]


def sentence(rng: random.Random, n: Optional[int] = None) -> str:
    words = [rng.choice(WORDS) for _ in range(n or rng.randint(8, 22))]
    return " ".join(words).capitalize() + "."


def boilerplate(rng: random.Random, i: int) -> Tuple[str, str, str]:
    """(top, side, bottom) chrome around the content, different from page to page."""
    nav = "".join(f"<li><a href='/hub/{rng.randrange(100)}'>{rng.choice(WORDS).title()}</a></li>"
                  for _ in range(rng.randint(6, 18)))
    top = (f"<header class='site-header'><a class='logo' href='/'>The {rng.choice(WORDS).title()} Post</a>"
           f"<nav class='{rng.choice(['menu', 'main-nav', 'navbar'])}'><ul>{nav}</ul></nav></header>")
    if rng.random() < 0.7:
        top = ("<div class='cookie-banner' id='cookies'><p>We use cookies to improve your experience. "
               "<button>Accept all</button> <a href='/privacy'>Settings</a></p></div>") + top
    side = ""
    if rng.random() < 0.8:
        related = "".join(f"<li><a href='/hub/{rng.randrange(100)}'>{sentence(rng, 6)}</a></li>"
                          for _ in range(rng.randint(3, 8)))
        side = f"<aside class='related'><h3>Related stories</h3><ul>{related}</ul></aside>"
    if rng.random() < 0.5:
        side += (f"<div class='ad ad-slot-{rng.randrange(9)}'><a href='/ads/{i}'>Spring sale at the "
                 f"{rng.choice(WORDS)} shop: twenty percent off</a></div>")
    bottom = ("<footer><p>Copyright 2024 The Post. All rights reserved.</p><p><a href='/privacy'>Privacy "
              "policy</a> | <a href='/contact'>Contact the newsroom</a></p>"
              "<form class='newsletter'><label>Get our newsletter</label><input type='email'>"
              "<button>Subscribe</button></form></footer>")
    return top, side, bottom


def content(rng: random.Random, kind: str, i: int) -> Tuple[str, str]:
    """(title, main content HTML)."""
    title = sentence(rng, rng.randint(4, 9))[:-1]
    paragraphs = "".join(f"<p>{' '.join(sentence(rng) for _ in range(rng.randint(2, 5)))}</p>"
                         for _ in range(rng.randint(3, 10)))
    if kind == "product":
        price = f"${rng.randint(5, 400)}.{rng.randint(0, 99):02d}"
        body = (f"<div class='product'><h1 itemprop='name'>{title}</h1><span class='price'>{price}</span>"
                f"<div class='description'>{paragraphs}</div><table class='specs'>"
                + "".join(f"<tr><th>{rng.choice(WORDS)}</th><td>{rng.randint(1, 99)} {rng.choice(WORDS)}</td></tr>"
                          for _ in range(rng.randint(2, 6)))
                + "</table><button>Add to basket</button></div>")
    elif kind == "help":
        steps = "".join(f"<li>{sentence(rng)}</li>" for _ in range(rng.randint(3, 8)))
        body = f"<main class='docs'><h1>{title}</h1>{paragraphs}<h2>Steps</h2><ol>{steps}</ol></main>"
    else:
        byline = f"<p class='byline'>By {rng.choice(WORDS).title()} {rng.choice(WORDS).title()}</p>"
        body = f"<article><h1>{title}</h1>{byline}{paragraphs}</article>"
        if kind == "blog" and rng.random() < 0.7:
            comments = "".join(f"<li class='comment'><b>{rng.choice(WORDS)}{rng.randrange(99)}</b> "
                               f"{sentence(rng)}</li>" for _ in range(rng.randint(1, 6)))
            body += f"<section class='comments'><h3>Comments</h3><ul>{comments}</ul></section>"
    return title, body


def content_page(i: int) -> bytes:
    rng = random.Random(i)
    kind = rng.choice(["news", "news", "blog", "product", "help"])
    title, main = content(rng, kind, i)
    top, side, bottom = boilerplate(rng, i)
    scripts = "<script>window.dataLayer = [{'page': '%d'}];</script>" % i if rng.random() < 0.6 else ""
    return (f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{title}</title>"
            f"<link rel='stylesheet' href='/static/site.css'>{scripts}</head><body>{top}"
            f"<div class='layout'><div class='content'>{main}</div>{side}</div>{bottom}</body></html>").encode()


def hub_page(h: int, pages: int) -> bytes:
    first = h * PER_HUB
    links = "".join(f"<li><a href='/p/{i}'>Story {i}</a></li>" for i in range(first, min(first + PER_HUB, pages)))
    return (f"<!DOCTYPE html><html><head><title>Section {h}</title></head><body>"
            f"<h1>Section {h}</h1><ul class='index'>{links}</ul></body></html>").encode()


def make_routes(pages: int):
    hubs = (pages + PER_HUB - 1) // PER_HUB
    html = {"Content-Type": "text/html; charset=utf-8"}

    def route(path: str):
        if path == "/":
            links = "".join(f"<li><a href='/hub/{h}'>Section {h}</a></li>" for h in range(hubs))
            return 200, html, f"<html><head><title>Home</title></head><body><ul>{links}</ul></body></html>".encode()
        if path == "/robots.txt":
            return 200, {"Content-Type": "text/plain"}, b"User-agent: *\nDisallow: /ads/\n"
        kind, _, number = path.strip("/").partition("/")
        if not number.isdigit():
            return None
        n = int(number)
        if kind == "p" and n < pages:
            return 200, html, content_page(n)
        if kind == "hub" and n < hubs:
            return 200, html, hub_page(n, pages)
        return None

    return route


def _own_rss_bytes(pid: int) -> Optional[int]:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def rss_bytes(pid: int) -> Optional[int]:
    """RSS of the crawl process and of every process below it (the EDREW_WORKERS workers) together."""
    own = _own_rss_bytes(pid)
    if own is None:
        return None
    total, todo = own, []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children", encoding="ascii") as fh:
                todo += [int(c) for c in fh.read().split()]
    except OSError:
        pass
    for child in todo:
        total += rss_bytes(child) or 0
    return total


class FeedCounter:
    """Count complete lines of a growing JSON Lines file without re-reading it."""

    def __init__(self, path: Path):
        self.path = path
        self.offset = 0
        self.lines = 0

    def poll(self) -> int:
        try:
            with open(self.path, "rb") as fh:
                fh.seek(self.offset)
                chunk = fh.read()
        except OSError:
            return self.lines
        end = chunk.rfind(b"\n") + 1
        self.lines += chunk[:end].count(b"\n")
        self.offset += end
        return self.lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=10000, help="content pages to serve (default 10000)")
    parser.add_argument("--out", type=Path, default=ROOT / "output" / "soak")
    parser.add_argument("--warmup", type=float, default=0.1,
                        help="share of the content pages exported before RSS is taken as the baseline")
    parser.add_argument("--no-scoring", action="store_true", help="scoring stage off (no model needed)")
    parser.add_argument("--timeout", type=float, default=6 * 3600, help="hang guard, seconds")
    parser.add_argument("scrapy_args", nargs="*", help="more `scrapy crawl` arguments, after --")
    args = parser.parse_args(argv)

    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    feed = out / "feed.jsonl"
    feed.unlink(missing_ok=True)
    snapshot = out / "edrew-stats.json"
    snapshot.unlink(missing_ok=True)
    extensions = {"reliability_support.StatsToJson": 0, "reliability_support.StatsSnapshots": 0}
    extra = ["-o", str(feed), "-s", "LOG_LEVEL=INFO", "-s", "LOG_FILE=" + str(out / "crawl.log"),
             "-s", "MEMUSAGE_ENABLED=False", "-s", "EXTENSIONS=" + json.dumps(extensions),
             "-s", f"RELIABILITY_STATS_SNAPSHOT={snapshot}", *args.scrapy_args]
    if args.no_scoring:
        extra += ["-s", 'SPIDER_MIDDLEWARES={"edrew_scrapy.scrapy.EdrewSpiderMiddleware": null}']

    # (seconds, content pages fetched, items, rss, bytes in the scorer's caches)
    samples: List[Tuple[float, int, int, int, int]] = []
    with RecordingServer(make_routes(args.pages)) as server:
        cmd = crawl_command(server.url + "/", out / "stats.json", *extra)
        print(f"[soak] serving {args.pages} pages at {server.url}; crawling...", flush=True)
        start = time.monotonic()
        proc = subprocess.Popen(cmd, cwd=str(ROOT), env=crawl_env(), stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True)
        counter = FeedCounter(feed)
        last_print = 0.0
        try:
            while proc.poll() is None:
                now = time.monotonic() - start
                if now > args.timeout:
                    proc.kill()
                    raise SystemExit(f"[soak] hang guard: no end after {args.timeout:.0f} s")
                rss = rss_bytes(proc.pid)
                fetched = sum(1 for p in server.paths() if p.startswith("/p/"))
                caches = cache_bytes(read_snapshot(snapshot))
                if rss is not None:
                    samples.append((now, fetched, counter.poll(), rss, caches))
                if now - last_print >= 15:
                    last_print = now
                    print(f"[soak] {now:6.0f} s  content pages fetched {fetched:6d}/{args.pages}  "
                          f"items {counter.lines:6d}  RSS {rss / 2**20 if rss else 0:7.1f} MiB  "
                          f"caches {caches / 2**20:5.1f} MiB", flush=True)
                time.sleep(1.0)
        finally:
            if proc.poll() is None:
                proc.kill()
        stderr = proc.stderr.read() if proc.stderr else ""
        elapsed = time.monotonic() - start
        requests = server.paths()

    summary = check(args, out, feed, requests, samples, elapsed, proc.returncode, stderr)
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    with open(out / "rss.csv", "w", encoding="utf-8") as fh:
        fh.write("seconds,content_pages_fetched,items,rss_bytes,cache_bytes\n")
        fh.writelines(f"{t:.1f},{f},{i},{r},{c}\n" for t, f, i, r, c in samples)
    print(json.dumps(summary, indent=2), flush=True)
    return 0 if summary["ok"] else 1


def check(args, out: Path, feed: Path, requests: List[str], samples, elapsed: float, returncode: int,
          stderr: str) -> Dict:
    items = []
    for line in feed.read_text("utf-8").splitlines() if feed.is_file() else []:
        items.append(json.loads(line))
    per_url: Dict[str, int] = {}
    for item in items:
        path = "/" + item["url"].split("/", 3)[3]
        per_url[path] = per_url.get(path, 0) + 1
    content_paths = [f"/p/{i}" for i in range(args.pages)]
    requested = {}
    for path in requests:
        requested[path] = requested.get(path, 0) + 1
    zero = [p for p in content_paths if per_url.get(p, 0) == 0]
    many = [p for p in content_paths if per_url.get(p, 0) > 1]
    not_once = [p for p in content_paths if requested.get(p, 0) != 1]
    stats = json.loads((out / "stats.json").read_text("utf-8")) if (out / "stats.json").is_file() else {}

    # RSS: baseline once the warm-up share of content items is out (or, without scoring, of pages fetched)
    progress_col = 1 if args.no_scoring else 2
    warm_at = max(1, int(args.warmup * args.pages))
    after = [s for s in samples if s[progress_col] >= warm_at]
    rss_growth = rest_growth = None
    baseline = peak = final = cache_base = cache_at_peak = None
    if len(after) >= 2:
        baseline, cache_base = after[0][3], after[0][4]
        top = max(after, key=lambda s: s[3])
        peak, cache_at_peak = top[3], top[4]
        final = after[-1][3]
        rss_growth = (peak - baseline) / baseline
        # The peak less what the caches grew by up to then: any other growth (a leak) is left in it.
        rest_growth = max((s[3] - baseline) - (s[4] - cache_base) for s in after) / baseline
    curve = []
    for tenth in range(1, 11):
        reached = [s for s in samples if s[progress_col] >= tenth * args.pages // 10]
        if reached:
            curve.append({"progress": f"{tenth * 10}%", "seconds": round(reached[0][0]),
                          "rss_mib": round(reached[0][3] / 2**20, 1),
                          "cache_mib": round(reached[0][4] / 2**20, 1)})
    checks = {
        "crawl_exit_0": returncode == 0,
        "every_content_page_requested_once": not not_once,
        "rss_growth_after_warmup_besides_caches_below_10pct": rest_growth is not None and rest_growth < 0.10,
    }
    if not args.no_scoring:
        checks["every_content_page_one_item"] = not zero and not many
    return {
        "pages": args.pages, "scoring": not args.no_scoring, "elapsed_s": round(elapsed, 1),
        "pages_per_s": round(args.pages / elapsed, 2) if elapsed else None,
        "returncode": returncode, "finish_reason": stats.get("finish_reason"),
        "items": len(items), "content_pages_with_0_items": len(zero), "content_pages_with_2plus_items": len(many),
        "examples_0_items": zero[:10], "examples_2plus_items": many[:10],
        "hub_and_home_items": sum(n for p, n in per_url.items() if not p.startswith("/p/")),
        "content_pages_not_requested_once": len(not_once),
        "edrew_stats": {k: v for k, v in stats.items() if k.startswith("edrew/")},
        "rss_baseline_mib": baseline and round(baseline / 2**20, 1),
        "rss_peak_after_warmup_mib": peak and round(peak / 2**20, 1),
        "rss_final_mib": final and round(final / 2**20, 1),
        "rss_growth_after_warmup_pct": None if rss_growth is None else round(100 * rss_growth, 2),
        "cache_mib_at_baseline": _mib(cache_base), "cache_mib_at_peak": _mib(cache_at_peak),
        "rss_growth_after_warmup_besides_caches_pct": None if rest_growth is None else round(100 * rest_growth, 2),
        "rss_curve": curve, "checks": checks, "ok": all(checks.values()),
        "log_tail": _tail(out / "crawl.log") + stderr[-2000:] if returncode else "",
    }


def read_snapshot(path: Path) -> Dict:
    """The crawl's edrew/ stats as last written by reliability_support.StatsSnapshots ({} before)."""
    try:
        return json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return {}


def cache_bytes(stats: Dict) -> int:
    """Bytes in the scorer's caches: the sum of the edrew/cache/<name>/bytes stats."""
    return sum(int(v) for k, v in stats.items() if k.startswith("edrew/cache/") and k.endswith("/bytes"))


def _mib(value: Optional[int]) -> Optional[float]:
    return None if value is None else round(value / 2**20, 1)


def _tail(path: Path) -> str:
    return path.read_text("utf-8", errors="replace")[-3000:] if path.is_file() else ""


if __name__ == "__main__":
    sys.exit(main())
