"""`edrew extract FILE_OR_URL... [--model DIR] [--format jsonl|text] [--threshold X] [--batch N]`: relevant content.

jsonl (a contract): one object per input, in input order, with `path` (the input as given), `url`, `title`
(the raw <title>), `text` (relevant node contents in document order joined by "\\n"), `nodes` (list of
{content, score, path, images}), `comments` (the page's reader comments, kept out of `text`, one per line; ""
where there are none) and the page's metadata (docs/metadata.md): `headline`, `author` (a list),
`date_published`, `date_modified`, `language`, `site_name`, `description`, `page_type`,
`page_type_probability` (null, or [] for `author`, where the page gives none, and for every page with
--no-metadata); a page with nothing to score also has `skipped` (why: empty, binary, no-text, not-html) and an
empty text, and a URL that was redirected has `redirects` (every URL it was sent to, in order; `url` is the
last); an input that cannot be read gives {"path", "error"} instead. The exit status is 1 when any input
failed, 2 when the model (or the page-type classifier) cannot be loaded. Messages on stderr are one line each,
with control characters from inputs escaped (escape.printable).
"""
from __future__ import annotations

import argparse
import json
import sys

from .options import (
    add_backend,
    add_region_share,
    add_threads,
    apply_region_share,
    apply_threads,
    int_at_least,
    seconds,
    threshold,
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("inputs", nargs="+", metavar="FILE_OR_URL",
                        help="HTML files (.gz read transparently), '-' for stdin, or http(s) URLs (fetched "
                             "only when given here)")
    parser.add_argument("--model", default=None,
                        help="model directory; 'default' (the default) is the shipped models/default")
    add_backend(parser)
    parser.add_argument("--format", choices=("jsonl", "text"), default="jsonl",
                        help="jsonl (the default): one JSON object per input, in input order; text: the "
                             "relevant text alone")
    parser.add_argument("--threshold", type=threshold, default=None,
                        help="a fixed threshold on every page instead of the model's, which a main-content "
                             "model caps on each page at half the page's best score")
    add_region_share(parser, "the model card's")
    parser.add_argument("--no-metadata", dest="metadata", action="store_false",
                        help="leave the metadata keys empty (headline, author, dates, ..., page type) and save "
                             "their cost")
    parser.add_argument("--timeout", type=seconds, default=30.0,
                        help="seconds a URL has to be fetched in, whole (default: 30)")
    add_threads(parser)
    parser.add_argument("--batch", type=int_at_least(1), default=8,
                        help="inputs read ahead and scored together (default: 8, and at most 8 MB of them; "
                             "1: each input scored before the next is read)")


def run(args: argparse.Namespace) -> int:
    from ..collector import BetweenUnits
    from ..escape import printable
    from ..model.base import load_model
    from ..model.files import ModelError
    from ..pagetype import PageTypeError, default_classifier

    apply_threads(args)
    try:
        scorer = apply_region_share(load_model(args.model, backend=args.backend), args.region_share)
        classifier = default_classifier(args.model) if args.metadata else None
    except (ModelError, PageTypeError) as exc:
        print(f"edrew extract: {printable(exc)}", file=sys.stderr)
        return 2
    with BetweenUnits.around() as between:  # garbage collected between groups of inputs (collector.py)
        return _extract_all(args, scorer, classifier, between)


# Inputs scored together, up to --batch of them and until they hold BATCH_BYTES: one scoring call for a few
# pages costs less a page than a call each (the biLM's steps, the character CNN and the caches run once for
# their new reTPS and words), and the byte bound keeps few large inputs in memory at once.
BATCH_BYTES = 8 * 1024 * 1024


def _extract_all(args: argparse.Namespace, scorer, classifier, between) -> int:
    group: list = []
    held = failed = 0
    for source in args.inputs:
        if not group:
            between.collect()  # a unit is a group of inputs
        item = _prepare(source, args)
        group.append((source, item))
        held += 0 if isinstance(item, Exception) else len(item[0])
        if len(group) >= args.batch or held >= BATCH_BYTES:
            failed += _finish(group, args, scorer, classifier)
            group, held = [], 0
    if group:
        failed += _finish(group, args, scorer, classifier)
    return 1 if failed else 0


def _prepare(source: str, args: argparse.Namespace):
    """(data, content type, url, redirects, page) of one input, or the error that reading it raised."""
    from ..page import Page
    from ..serializer import serialize
    from ..sources import SourceError, is_html, read_input, type_from_name

    try:
        data, content_type, url, redirects = read_input(source, timeout=args.timeout)
        said = content_type if content_type is not None else type_from_name(source)
        if said is not None and not is_html(said, data):
            # a URL that serves a PDF, JSON or an image, or a file named so: as the add-on does,
            # skipped, not scored (a .txt file is read as HTML only when it starts like a page)
            page = Page(url=url, nodes=[], skipped="not-html")
        else:
            reader = None
            if args.metadata:  # the declared metadata read from the serializer's tree
                from ..metadata import read_tree as reader
            page = serialize(data, encoding=content_type, url=url, tree_reader=reader)
    except (SourceError, OSError, ValueError) as exc:
        return exc
    return data, content_type, url, redirects, page


def _finish(group: list, args: argparse.Namespace, scorer, classifier) -> int:
    """Score a group's pages in one call, then write each input's line in input order; the failures."""
    from ..extract import extract
    from ..metadata import page_metadata
    from ..sources import SourceError

    ready = [i for i, (_, item) in enumerate(group) if not isinstance(item, Exception)]
    results: dict = {}
    try:
        extracted = extract([group[i][1][4] for i in ready], scorer=scorer, threshold=args.threshold)
        results = dict(zip(ready, extracted))
    except (SourceError, OSError, ValueError):
        for i in ready:  # each page again on its own, so that one page's failure is its own
            try:
                results[i] = extract([group[i][1][4]], scorer=scorer, threshold=args.threshold)[0]
            except (SourceError, OSError, ValueError) as exc:
                results[i] = exc
    failed = 0
    for i, (source, item) in enumerate(group):
        result = results.get(i, item)
        if not isinstance(result, Exception) and args.metadata and item[4].nodes:
            data, content_type, url, _, page = item
            try:
                result.metadata = page_metadata(data, page, result, classifier, encoding=content_type, url=url)
            except (SourceError, OSError, ValueError) as exc:
                result = exc
        if isinstance(result, Exception):
            failed += 1
            _write_error(args, source, result)
        else:
            _write(args, source, result, item[3])
    return failed


def _write_error(args: argparse.Namespace, source: str, exc: Exception) -> None:
    from ..escape import printable

    if args.format == "jsonl":
        sys.stdout.write(json.dumps({"path": source, "error": str(exc)}, ensure_ascii=False) + "\n")
    elif len(args.inputs) > 1:  # every input keeps its section, in input order
        sys.stdout.write(f"# {printable(source)} (error: see stderr)\n\n")
    message = str(exc) if source in str(exc) else f"{source}: {exc}"
    print(f"edrew extract: {printable(message)}", file=sys.stderr)
    sys.stdout.flush()


def _write(args: argparse.Namespace, source: str, result, redirects) -> None:
    from ..escape import printable
    from ..metadata import Metadata

    out = sys.stdout
    if args.format == "jsonl":
        record = {"path": source, "url": result.url, "title": result.title, "text": result.text,
                  "nodes": [{"content": n.content, "score": n.score, "path": n.path, "images": n.images}
                            for n in result.nodes],
                  "comments": result.comments_text}
        record.update((result.metadata or Metadata()).fields())
        if result.skipped:
            record["skipped"] = result.skipped
        if redirects:
            record["redirects"] = list(redirects)
        out.write(json.dumps(record, ensure_ascii=False) + "\n")
    else:
        moved = f"redirected to {redirects[-1]}" if redirects else ""
        if len(args.inputs) > 1:
            notes = [moved] * bool(moved) + [f"skipped: {result.skipped}"] * bool(result.skipped)
            said = f" ({'; '.join(notes)})" if notes else ""
            out.write(f"# {printable(source)}{printable(said)}\n{result.text}\n\n")
        else:  # stdout stays the page's text alone; where it came from and why it is empty go to stderr
            out.write(f"{result.text}\n")
            notes = [moved] * bool(moved) + [f"skipped ({result.skipped})"] * bool(result.skipped)
            for note in notes:
                print(f"edrew extract: {printable(source)}: {printable(note)}", file=sys.stderr)
    out.flush()
