"""`edrew extract FILE_OR_URL... [--model DIR] [--format jsonl|text] [--threshold X]`: relevant content.

jsonl (a contract): one object per input, in input order, with `path` (the input as given), `url`,
`title`, `text` (relevant node contents in document order joined by "\\n") and `nodes`
(list of {content, score, path, images}); an input that fails gives {"path", "error"} instead.
The exit status is 1 when any input failed.
"""
from __future__ import annotations

import argparse
import json
import sys

from .options import add_region_share, apply_region_share, threshold


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("inputs", nargs="+", metavar="FILE_OR_URL",
                        help="HTML files (.gz read transparently), '-' for stdin, or http(s) URLs (fetched "
                             "only when given here)")
    parser.add_argument("--model", default=None, help="model directory (default: the shipped models/default)")
    parser.add_argument("--backend", choices=("native", "allennlp"), default="native")
    parser.add_argument("--format", choices=("jsonl", "text"), default="jsonl")
    parser.add_argument("--threshold", type=threshold, default=None,
                        help="a fixed threshold on every page instead of the model's, which a main-content "
                             "model caps on each page at half the page's best score")
    add_region_share(parser, "the model card's")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds per URL fetch")


def run(args: argparse.Namespace) -> int:
    from ..extract import extract
    from ..model.files import ModelError
    from ..model.scorer import load_model
    from ..serializer import serialize
    from ..sources import SourceError, read_source

    try:
        scorer = apply_region_share(load_model(args.model, backend=args.backend), args.region_share)
    except ModelError as exc:
        print(f"edrew extract: {exc}", file=sys.stderr)
        return 2
    out = sys.stdout
    failed = 0
    for source in args.inputs:
        try:
            data, content_type, url = read_source(source, timeout=args.timeout)
            page = serialize(data, encoding=content_type, url=url)
            result = extract([page], scorer=scorer, threshold=args.threshold)[0]
        except (SourceError, OSError, ValueError) as exc:
            failed += 1
            if args.format == "jsonl":
                out.write(json.dumps({"path": source, "error": str(exc)}, ensure_ascii=False) + "\n")
            print(f"edrew extract: {exc}" if source in str(exc) else f"edrew extract: {source}: {exc}", file=sys.stderr)
            continue
        if args.format == "jsonl":
            record = {"path": source, "url": result.url, "title": result.title, "text": result.text,
                      "nodes": [{"content": n.content, "score": n.score, "path": n.path, "images": n.images}
                                for n in result.nodes]}
            if result.skipped:
                record["skipped"] = result.skipped
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
        else:
            out.write(f"# {source}\n{result.text}\n\n" if len(args.inputs) > 1 else f"{result.text}\n")
        out.flush()
    return 1 if failed else 0
