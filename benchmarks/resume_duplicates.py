"""Stop a JOBDIR crawl midway and resume it, with and without the add-on: what is downloaded and
exported twice.

    nice -n 10 python benchmarks/resume_duplicates.py [--out output/resume]

The scenario of tests/test_crawl_resume.py (160 start URLs on 127.0.0.1, one item of the spider's own a
page, CONCURRENT_REQUESTS 4, a stop once 40 own items are in the feed, then the same command again), run
four times: Scrapy alone and with the add-on, each after one SIGINT and after SIGKILL. Prints one row
each: pages downloaded again, own items exported twice, page items exported twice. Scrapy alone is
served more slowly (0.15 s a page) so that it is still running when 40 items are in its feed.
"""
from __future__ import annotations

import argparse
import shutil
import signal
import sys
import textwrap
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
sys.path.insert(0, str(HERE.parent / "tests" / "fixtures" / "reliability"))

import test_crawl_resume as scenario  # noqa: E402
from reliability_support import RecordingServer, read_jsonl  # noqa: E402


def run(addon: bool, sig: signal.Signals, workdir: Path) -> str:
    workdir.mkdir(parents=True)
    spider = scenario.SPIDER if addon else scenario.SPIDER.replace('"ADDONS": {"edrew_scrapy.Addon": 500}, ', "")
    (workdir / "many.py").write_text(textwrap.dedent(spider), "utf-8")
    with RecordingServer(scenario.ROUTES, delay=0.02 if addon else 0.15) as server:
        scenario._stop_midway(workdir, server, sig)
        first = read_jsonl(workdir / "feed.jsonl")
        requested_first = Counter(server.paths())
        proc = scenario._resume(workdir, server)
        requested_again = Counter(server.paths()) - requested_first
    items = read_jsonl(workdir / "feed.jsonl")
    own, pages = Counter(scenario._own(items)), Counter(scenario._pages(items))
    return (f"| {'with the add-on' if addon else 'Scrapy alone'}, {sig.name} | {len(scenario._own(first))} | "
            f"{sum(requested_again[path] for path in requested_first)} | {sum(n - 1 for n in own.values())} | "
            f"{sum(n - 1 for n in pages.values())} | {len(own)} | {len(pages)} | {proc.returncode} |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("output/resume"))
    args = parser.parse_args()
    shutil.rmtree(args.out, ignore_errors=True)
    print("| run | own items in run 1 | pages downloaded again | own items twice | page items twice | "
          "own items | page items | exit |")
    print("|---|---|---|---|---|---|---|---|")
    for addon in (False, True):
        for sig in (signal.SIGINT, signal.SIGKILL):
            print(run(addon, sig, args.out / f"{'addon' if addon else 'plain'}-{sig.name}"), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
