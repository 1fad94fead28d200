"""`edrew train-dates [PATH] --out FILE [--folds 5] [--l2 1.0] [--none-margin M]`: the publication day's chooser.

Reads WCXB-format pages (`publish_date`: a day, or empty where the page is undated), computes each page's
metadata as `edrew evaluate --metadata` does (page types cross-validated by registrable domain, the rules'
day and every candidate day: dates.candidates), reports the exact day and the share of undated pages
given a day, per fold by registrable domain (each fold dated by a chooser trained on the other folds)
beside the rules', then trains on every page and writes the weights to `--out` (plain JSON, with the
cross-validated numbers, the command and the dataset in it).
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

from .options import CommandError, report_errors, wcxb_root


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", nargs="?", default=None, help="the WCXB folder (default: $EDREW_WCXB)")
    parser.add_argument("--out", required=True, help="where to write the weights (models/default/dates.json)")
    parser.add_argument("--folds", type=int, default=5, help="cross-validation folds by registrable domain (default 5)")
    parser.add_argument("--seed", type=int, default=1, help="assignment of domains to folds (default 1)")
    parser.add_argument("--l2", type=float, default=1.0, help="L2 penalty of the conditional logistic regression")
    parser.add_argument("--none-margin", type=float, default=None,
                        help="leave a page the rules date undated where the no-date option scores this much above "
                             "the best day (pages typed neither article nor forum, without a day in the URL; "
                             "default: never)")
    parser.add_argument("--limit", type=int, default=0, help="read only the first N pages (smoke tests)")


def run(args: argparse.Namespace) -> int:
    return report_errors("train-dates", _run, args)


def _run(args: argparse.Namespace) -> int:
    from ..commands.evaluate_metadata import _shipped_classifier
    from ..dates import FEATURES
    from ..training import metadata_eval as me

    root = wcxb_root(args)
    try:
        records = me.read_records("wcxb", root, root.name or "wcxb", None, args.limit or None)
        results = me.evaluate_metadata(records, systems=["edrew"], folds=args.folds, seed=args.seed,
                                       shipped_classifier=_shipped_classifier(None), date_chooser="cv",
                                       date_l2=args.l2, date_none_margin=args.none_margin)
    except ValueError as exc:  # too few domains for the folds, no labelled day among the candidates
        raise CommandError(str(exc)) from None
    folded = [r for r in results if r.date_fold is not None]
    dated = [r for r in folded if r.record.date]
    undated = [r for r in folded if r.record.date == ""]
    if not dated or not undated:
        raise CommandError(f"{root}: too few pages labelled with a date and undated for {args.folds} folds")
    print(me.format_date_folds(results))
    summary = {
        "exact_day": statistics.fmean(r.fields["edrew"]["date_published"] == r.record.date for r in dated),
        "exact_day_rules": statistics.fmean(r.date_candidates.rules == r.record.date for r in dated),
        "date_where_none": statistics.fmean(r.fields["edrew"]["date_published"] is not None for r in undated),
        "date_where_none_rules": statistics.fmean(r.date_candidates.rules is not None for r in undated),
        "dated_pages": len(dated), "undated_pages": len(undated)}
    summary = {k: round(v, 4) for k, v in summary.items()}
    print(f"exact day {summary['exact_day']:.4f} (rules {summary['exact_day_rules']:.4f}) over {len(dated)} dated "
          f"pages; date where none {summary['date_where_none']:.4f} (rules {summary['date_where_none_rules']:.4f}) "
          f"over {len(undated)} undated pages")
    per_fold = [round(statistics.fmean(r.fields["edrew"]["date_published"] == r.record.date for r in dated
                                       if r.date_fold == fold), 4) for fold in sorted({r.date_fold for r in dated})]
    spec = me.fit_chooser_on(results, args.l2, args.none_margin)
    spec["card"] = {
        "what": "the publication day among a page's candidate days, or none (edrew_scrapy/dates.py)",
        "cross_validated": summary, "per_fold_exact_day": per_fold,
        "folds": args.folds, "seed": args.seed, "group_by": "registrable domain", "features": len(FEATURES),
        "command": "edrew train-dates " + " ".join(sys.argv[2:]) if len(sys.argv) > 2 else "edrew train-dates",
        "dataset": "WCXB v1.0 development split", "credit": "WCXB, Murrough Foley, 2026, CC-BY-4.0",
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(spec, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {out} ({spec['pages']} pages trained on)")
    return 0
