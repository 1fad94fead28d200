"""Peak RSS of the crawl process: the add-on with worker processes against the plain crawl, side by side.

    nice -n 10 python benchmarks/crawl_rss.py [--pages 1000] [--rounds 2] [--in-process]

Serves the soak benchmark's generated pages (benchmarks/soak.py: articles, blog posts, products, help
pages in varied boilerplate, behind hub pages) on 127.0.0.1 and crawls them with `scrapy crawl edrew`,
in each round once without the add-on's work (EDREW_ENABLED=False: the same spider, middlewares off)
and once with it and EDREW_WORKERS=1 (the default), the order alternating between rounds. Each crawl
reports, from inside its own process (reliability_support.StatsToJson), its peak RSS
(getrusage(RUSAGE_SELF): the crawl process alone) and whether it imported torch. The process tree's
peak, as wait4() gives it to a parent (and /usr/bin/time prints it), is shown next to it: on Linux it
is the largest of the process and the children it reaped, i.e. a worker with the model loaded, which
is not the crawl process's memory. `--in-process` adds a crawl with EDREW_WORKERS=0 for comparison.

Prints one row per crawl and the median difference workers - plain; exits 1 when that difference is
over --budget-mb (150) or when the crawl process imported torch with workers.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "fixtures" / "reliability"))
sys.path.insert(0, str(ROOT / "benchmarks"))
from reliability_support import RecordingServer, crawl_command, crawl_env  # noqa: E402
from soak import make_routes  # noqa: E402

MODES = {
    "plain": ["-s", "EDREW_ENABLED=False"],
    "workers": ["-s", "EDREW_WORKERS=1"],
    "in-process": ["-s", "EDREW_WORKERS=0"],
}


def crawl(url: str, mode: str, workdir: Path, timeout: float) -> dict:
    stats_file = workdir / f"{mode}-stats.json"
    feed = workdir / f"{mode}.jsonl"
    command = crawl_command(url, stats_file, *MODES[mode], "-s", "LOG_LEVEL=WARNING", "-o", str(feed))
    started = time.monotonic()
    with open(workdir / f"{mode}.log", "wb") as log:
        proc = subprocess.Popen(command, cwd=str(ROOT), env=crawl_env(), stdout=log, stderr=log)
        deadline = started + timeout
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                proc.kill()
                raise SystemExit(f"{mode}: no end within {timeout:g} s (see {workdir / (mode + '.log')})")
            time.sleep(0.2)
        proc.returncode = os.waitstatus_to_exitcode(status)
    stats = json.loads(stats_file.read_text("utf-8")) if stats_file.is_file() else {}
    items = sum(1 for _ in feed.open("rb")) if feed.is_file() else 0
    return {"mode": mode, "status": proc.returncode, "seconds": round(time.monotonic() - started, 1),
            "pages": stats.get("response_received_count"), "items": items,
            "crawl_peak_mib": round(stats.get("reliability/maxrss_kb", 0) / 1024, 1),
            "tree_peak_mib": round(usage.ru_maxrss / 1024, 1),
            "torch_in_crawl": stats.get("reliability/torch_imported")}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=1000, help="content pages to serve (default 1000)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--in-process", action="store_true", help="also crawl with EDREW_WORKERS=0")
    parser.add_argument("--budget-mb", type=float, default=150.0)
    parser.add_argument("--timeout", type=float, default=3600.0, help="hang guard per crawl, seconds")
    args = parser.parse_args(argv)

    rows = []
    with RecordingServer(make_routes(args.pages)) as site, tempfile.TemporaryDirectory(prefix="edrew-rss-") as tmp:
        for r in range(args.rounds):
            modes = ["plain", "workers"] if r % 2 == 0 else ["workers", "plain"]
            if args.in_process:
                modes.append("in-process")
            for mode in modes:
                workdir = Path(tmp) / f"round{r}"
                workdir.mkdir(exist_ok=True)
                row = crawl(site.url + "/", mode, workdir, args.timeout)
                row["round"] = r
                rows.append(row)
                print(json.dumps(row), flush=True)
                if row["status"] != 0:
                    print((workdir / f"{mode}.log").read_text("utf-8", "replace")[-3000:], file=sys.stderr)
                    return 1

    print("\n| round | mode | status | pages | items | crawl process peak MiB | process tree peak MiB "
          "| torch in crawl | s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        print(f"| {row['round']} | {row['mode']} | {row['status']} | {row['pages']} | {row['items']} | "
              f"{row['crawl_peak_mib']} | {row['tree_peak_mib']} | {row['torch_in_crawl']} | {row['seconds']} |")
    by_round = {}
    for row in rows:
        by_round.setdefault(row["round"], {})[row["mode"]] = row["crawl_peak_mib"]
    differences = [modes["workers"] - modes["plain"] for modes in by_round.values()]
    median = statistics.median(differences)
    torch_seen = any(row["torch_in_crawl"] for row in rows if row["mode"] == "workers")
    print(f"\ncrawl process peak, workers - plain: {', '.join(f'{d:+.1f}' for d in differences)} MiB "
          f"(median {median:+.1f}; budget {args.budget_mb:g}); torch imported by the crawl process with "
          f"workers: {torch_seen}")
    return 0 if median <= args.budget_mb and not torch_seen else 1


if __name__ == "__main__":
    sys.exit(main())
