"""`edrew nodes FILE_OR_URL... [--format jsonl|table]`: the serializer's view of pages."""
from __future__ import annotations

import argparse
import json
import sys

from ..sources import SourceError, read_source


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("inputs", nargs="+", metavar="FILE_OR_URL",
                        help="HTML files (.gz read transparently), '-' for stdin, or http(s) URLs")
    parser.add_argument("--format", choices=("jsonl", "table"), default="table")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds per URL fetch")


def run(args: argparse.Namespace) -> int:
    from ..serializer import serialize

    failed = 0
    out = sys.stdout
    for source in args.inputs:
        try:
            data, content_type, url = read_source(source, timeout=args.timeout)
        except SourceError as exc:
            failed += 1
            print(f"edrew: {exc}", file=sys.stderr)
            continue
        page = serialize(data, encoding=content_type, url=url)
        if args.format == "jsonl":
            for node in page.nodes:
                record = {"input": source, "index": node.index, "tag": node.tag, "content": node.content,
                          "retps": node.retps, "bucket": node.bucket, "parent": node.parent,
                          "path": node.path, "hidden": node.hidden, "images": node.images}
                out.write(json.dumps(record, ensure_ascii=False) + "\n")
        else:
            reason = f" (skipped: {page.skipped})" if page.skipped else ""
            out.write(f"# {source}: {len(page.nodes)} nodes, {page.count_tags} counted tags{reason}\n")
            for node in page.nodes:
                content = node.content if len(node.content) <= 60 else node.content[:57] + "..."
                out.write(f"{node.index:>5} {node.bucket:>3}  {content:<60}  {node.path}\n")
                out.write(f"{'':>10}{node.retps}\n")
    return 1 if failed else 0
