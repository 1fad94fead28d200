"""`edrew merge -o all.jsonl a.jsonl b.jsonl`: the JSON Lines feeds of a distributed crawl's processes
as one feed, each page (or node) item once (edrew_scrapy.distributed.merge)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("feeds", nargs="+", type=Path, help="JSON Lines feeds, one per crawl process")
    parser.add_argument("-o", "--output", type=Path, required=True, help="the merged JSON Lines feed")


def run(args) -> int:
    from ..distributed.merge import merge_feeds
    from ..escape import printable

    missing = [str(path) for path in args.feeds if not path.is_file()]
    if missing:
        print(f"edrew merge: no such feed: {printable(', '.join(missing))}", file=sys.stderr)
        return 2
    if any(path.resolve() == args.output.resolve() for path in args.feeds):
        print("edrew merge: the output must not be one of the feeds", file=sys.stderr)
        return 2
    result = merge_feeds(args.feeds, args.output)
    print(f"{result.records} records from {len(args.feeds)} feeds in {args.output}; "
          f"{result.duplicates} duplicate page/node items dropped, {result.partial_lines} partial last lines "
          f"and {result.unreadable_lines} unreadable lines skipped", file=sys.stderr)
    return 0
