"""`edrew nodes FILE_OR_URL... [--format jsonl|table]`: the serializer's view of pages."""
from __future__ import annotations

import argparse
import json
import sys

from ..escape import printable
from ..sources import SourceError, read_source
from .options import seconds


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("inputs", nargs="+", metavar="FILE_OR_URL",
                        help="HTML files (.gz read transparently), '-' for stdin, or http(s) URLs")
    parser.add_argument("--format", choices=("jsonl", "table"), default="table",
                        help="table (the default): one aligned row per node; jsonl: one JSON object per node")
    parser.add_argument("--timeout", type=seconds, default=30.0,
                        help="seconds a URL has to be fetched in, whole (default: 30)")


def run(args: argparse.Namespace) -> int:
    from ..serializer import serialize

    failed = 0
    out = sys.stdout
    for source in args.inputs:
        try:
            data, content_type, url = read_source(source, timeout=args.timeout)
            page = serialize(data, encoding=content_type, url=url)
        except (SourceError, OSError, ValueError) as exc:
            failed += 1
            print(f"edrew nodes: {printable(exc)}", file=sys.stderr)
            continue
        if args.format == "jsonl":
            if page.skipped:  # no node to write: one record says why
                out.write(json.dumps({"input": source, "skipped": page.skipped}) + "\n")
            for node in page.nodes:
                record = {"input": source, "index": node.index, "tag": node.tag, "content": node.content,
                          "retps": node.retps, "bucket": node.bucket, "parent": node.parent,
                          "path": node.path, "hidden": node.hidden, "images": node.images}
                out.write(json.dumps(record, ensure_ascii=False) + "\n")
        else:
            reason = f" (skipped: {page.skipped})" if page.skipped else ""
            out.write(f"# {printable(source)}: {len(page.nodes)} nodes, {page.count_tags} counted tags{reason}\n")
            for node in page.nodes:
                content = node.content if len(node.content) <= 60 else node.content[:57] + "..."
                out.write(f"{node.index:>5} {node.bucket:>3}  {content:<60}  {node.path}\n")
                out.write(f"{'':>10}{node.retps}\n")
    return 1 if failed else 0
