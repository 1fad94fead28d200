"""`edrew evaluate --metadata --dataset KIND PATH` (or a mix): page metadata scored against labels.

Headline, author, publication date and page type of every page (metadata.page_metadata, as a crawl
computes them) against what each set labels, next to trafilatura's metadata when --extractors names it;
one table, one block of rows per dataset (never only pooled). Writes metadata-summary.json and
metadata-pages.jsonl under --out (default output/evaluate-metadata-DATASET). The metrics and the page
type's cross-validation: edrew_scrapy/training/metadata_eval.py.
"""
from __future__ import annotations

import argparse
import os
import shlex
import sys
from pathlib import Path

from .options import CommandError, UsageError, check_dataset, out_problem


def run_metadata(args: argparse.Namespace) -> int:
    from ..training import metadata_eval as me

    if args.dataset == "swde":
        raise UsageError("--metadata reads wcxb or simple sets (SWDE labels attribute values, not page metadata)")
    if args.folds < 2:
        raise UsageError("--folds must be 2 or more")
    names = [n.strip() for n in args.extractors.split(",") if n.strip()]
    systems = ["edrew"] + (["trafilatura"] if "trafilatura" in names else [])
    out = Path(args.out or os.path.join("output", f"evaluate-metadata-{args.dataset}"))
    problem = out_problem(out)
    if problem:
        raise UsageError(f"--out {out}: {problem}")
    if args.dataset == "mix":
        specs = [(s.kind, s.path, s.name, s.labels) for s in args.datasets]
    else:
        path = Path(check_dataset(args))
        specs = [(args.dataset, path, path.name or args.dataset, args.labels)]
    records = []
    try:
        for kind, path, name, labels in specs:
            found = me.read_records(kind, path, name, labels, args.limit)
            if not found:
                raise CommandError(f"no labelled pages in {path}")
            records.extend(found)
    except (ValueError, OSError) as exc:  # DatasetError names the file
        raise CommandError(str(exc)) from None
    shipped = _shipped_classifier(args.model)
    chooser = None if getattr(args, "date_rules", False) else _shipped_chooser()
    try:
        results = me.evaluate_metadata(records, systems=systems, folds=args.folds, seed=args.seed,
                                       group_by=args.group_by, scorer_loader=lambda: _scorer(args.model),
                                       shipped_classifier=shipped, progress=not args.no_progress,
                                       date_chooser=chooser)
    except ValueError as exc:  # more folds than domains; a dataset file that broke mid-read
        raise CommandError(str(exc)) from None
    rows = me.summarize_metadata(results)
    print(f"metadata: {len(records)} pages; page type cross-validated by {args.group_by} ({args.folds} folds) on "
          "sets of several types, else the shipped classifier")
    print(me.format_metadata_table(rows))
    if chooser is not None:
        print(me.format_date_folds(results))
    for row in rows:
        if row["system"] == "edrew":
            print(f"{row['dataset']}: our metadata's CPU time a page: mean {row['cpu_ms_mean']:.1f} ms, median "
                  f"{row['cpu_ms_median']:.1f} ms")
    settings = {k: v for k, v in vars(args).items() if k not in ("func", "datasets")}
    settings["datasets"] = [{"kind": k, "path": str(p), "name": n} for k, p, n, _ in specs]
    settings["command_line"] = shlex.join(["edrew"] + sys.argv[1:])
    try:
        paths = me.write_metadata_report(rows, results, out, settings)
    except OSError as exc:
        raise CommandError(f"cannot write the report in {out}: {exc}") from None
    print(f"wrote {', '.join(str(p) for p in paths.values())}")
    return 0


def _shipped_classifier(model):
    from ..model.files import model_directory
    from ..pagetype import PageTypeError, default_classifier

    try:
        return default_classifier(None if model in (None, "default") else str(model_directory(model)))
    except PageTypeError as exc:
        raise UsageError(str(exc)) from None


def _shipped_chooser():
    """The shipped date chooser, the one page_metadata uses (None without one: the rules' day)."""
    from ..dates import DateChooserError, default_chooser

    try:
        return default_chooser()
    except DateChooserError as exc:
        raise UsageError(str(exc)) from None


def _scorer(model):
    from ..model.files import ModelError
    from ..model.scorer import load_model

    try:
        return load_model(None if model in (None, "default") else model)
    except ModelError as exc:
        raise UsageError(str(exc)) from None
