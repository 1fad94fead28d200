"""`edrew inspect FILE_OR_URL [--model DIR] [-o report.html] [--compare trafilatura]`: see what the model kept.

Writes one self-contained HTML report (report.py): the page's text nodes in document order coloured by
score, the rule that kept or dropped each (rules.explain), its XPath and reTPS on click, and the page's
counts; with --compare, trafilatura's text beside the kept text. Exit status 1 when the input cannot be
read, 2 when the model cannot be loaded or the comparison's extractor is not installed.
"""
from __future__ import annotations

import argparse
import sys
import time

from .options import (
    add_backend,
    add_region_share,
    add_threads,
    apply_region_share,
    apply_threads,
    seconds,
    threshold,
)

COMPARE = ("trafilatura",)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("input", metavar="FILE_OR_URL",
                        help="an HTML file (.gz read transparently), '-' for stdin, or an http(s) URL")
    parser.add_argument("-o", "--out", default="report.html", help="the report to write (default: report.html)")
    parser.add_argument("--model", default=None,
                        help="model directory; 'default' (the default) is the shipped models/default")
    add_backend(parser)
    parser.add_argument("--threshold", type=threshold, default=None,
                        help="a fixed threshold instead of the model's (as `edrew extract --threshold`)")
    add_region_share(parser, "the model card's")
    parser.add_argument("--compare", choices=COMPARE, default=None,
                        help="show this extractor's text beside EDREW's (trafilatura: pip install "
                             "'edrew-scrapy[eval]')")
    parser.add_argument("--timeout", type=seconds, default=30.0,
                        help="seconds a URL has to be fetched in, whole (default: 30)")
    add_threads(parser)


def run(args: argparse.Namespace) -> int:
    from ..escape import printable
    from ..extract import extract
    from ..model.base import load_model
    from ..model.files import ModelError
    from ..page import Page
    from ..report import page_report_html
    from ..serializer import serialize
    from ..sources import SourceError, is_html, read_source, type_from_name

    compare_with = None
    if args.compare == "trafilatura":
        try:
            import trafilatura
        except ImportError:
            print("edrew inspect: --compare trafilatura needs trafilatura, which is not installed: "
                  "pip install 'edrew-scrapy[eval]'", file=sys.stderr)
            return 2
        compare_with = trafilatura
    apply_threads(args)
    try:
        scorer = apply_region_share(load_model(args.model, backend=args.backend), args.region_share)
    except ModelError as exc:
        print(f"edrew inspect: {printable(exc)}", file=sys.stderr)
        return 2
    try:
        data, content_type, url = read_source(args.input, timeout=args.timeout)
    except (SourceError, OSError) as exc:
        message = str(exc) if args.input in str(exc) else f"{args.input}: {exc}"
        print(f"edrew inspect: {printable(message)}", file=sys.stderr)
        return 1
    started = time.perf_counter()
    said = content_type if content_type is not None else type_from_name(args.input)
    if said is not None and not is_html(said, data):
        page = Page(url=url, nodes=[], skipped="not-html")
    else:
        page = serialize(data, encoding=content_type, url=url)
    extraction = extract([page], scorer=scorer, threshold=args.threshold)[0] if page.nodes else None
    elapsed = time.perf_counter() - started
    compare = None
    if compare_with is not None:
        text = compare_with.extract(data.decode(page.encoding or "utf-8", "replace"), url=url,
                                    include_comments=False, include_tables=True) or ""
        compare = ("trafilatura", text)
    card = getattr(scorer, "card", None) or {}
    model = {"name": card.get("name"), "directory": str(getattr(scorer, "directory", "") or args.model or "")}
    report, summary = page_report_html(page, extraction, data=data, source=args.input, model=model, compare=compare,
                                       seconds=elapsed)
    with open(args.out, "w", encoding="utf-8", errors="replace") as out:
        out.write(report)
    print(f"edrew inspect: {printable(args.out)}: {summary.kept_nodes} of {summary.nodes} nodes kept, "
          f"{summary.kept_words} words kept, {summary.dropped_words} dropped", file=sys.stderr)
    return 0
