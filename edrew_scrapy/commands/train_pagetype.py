"""`edrew train-pagetype [PATH] --out FILE [--cache FILE] [--folds 5] [--c C[,C...]] [--scaling std|maxabs]
[--forum-domains N]`.

Reads WCXB-format pages (`_internal.page_type.primary`), serialises each and reads what it declares
(metadata.read_tree on the serializer's tree, as a crawl does), computes pagetype.page_features, and caches
them as JSON lines in `--cache` (a second run reads the cache and serialises nothing). Reports accuracy
cross-validated by registrable domain (`--folds`, every page tested once by a classifier trained without
its domain), per type and overall, then trains on every page and writes the weights to `--out` (JSON, with
the cross-validated accuracy, the command and the dataset in it). Several `--c` values: the one that inner
folds by domain choose (pagetype.choose_c), inside each cross-validation fold and for the final weights.
`--forum-domains N` types a page "forum" only where it has forum evidence (pagetype.forum_evidence: forum
markup, or a URL token of the forums of N training domains). `--predictions FILE` writes each page's
cross-validated prediction (JSON lines).
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

from .options import CommandError, UsageError, report_errors, wcxb_root


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", nargs="?", default=None, help="the WCXB folder (default: $EDREW_WCXB)")
    parser.add_argument("--out", required=True, help="where to write the weights (models/default/pagetype.json)")
    parser.add_argument("--cache", default=None, help="JSON-lines file of each page's features: read when it "
                                                     "exists, written otherwise")
    parser.add_argument("--folds", type=int, default=5, help="cross-validation folds by registrable domain (default 5)")
    parser.add_argument("--c", default="0.1",
                        help="inverse L2 strength of the logistic regression; a comma list: the one that inner "
                             "folds by registrable domain choose, inside each cross-validation fold and for the "
                             "final weights (default 0.1)")
    parser.add_argument("--scaling", choices=("std", "maxabs"), default="std",
                        help="features centred and divided by their standard deviation (std, the default), or "
                             "only divided by their largest value (maxabs: words and URL tokens stay 0 or 1)")
    parser.add_argument("--min-domains", type=int, default=10,
                        help="a feature is kept when at least this many domains have it (default 10)")
    parser.add_argument("--forum-domains", type=int, default=0,
                        help="type a page forum only where it declares forum markup or has a URL token that the "
                             "forums of this many training domains share (pagetype.forum_evidence; default 0: off)")
    parser.add_argument("--predictions", default=None, help="write each page's cross-validated prediction here")
    parser.add_argument("--limit", type=int, default=0, help="read only the first N pages (smoke tests)")


def feature_rows(root: Path, limit: int = 0):
    """One {id, url, group, label, features} per page."""
    from ..data import domain_of, read_source, registrable_domain
    from ..data.wcxb import load_truth, page_ids
    from ..metadata import declared_of, read_tree
    from ..pagetype import page_features
    from ..serializer import serialize

    for page_id in page_ids(root)[: limit or None]:
        truth = load_truth(root, page_id)
        url = truth.get("url") or ""
        label = ((truth.get("_internal") or {}).get("page_type") or {}).get("primary") or "unknown"
        source = read_source(root / "html" / f"{page_id}.html.gz")
        # what the page declares as a crawl reads it: from the serializer's tree, else parsed apart
        page = serialize(source, encoding="utf-8", url=url, tree_reader=read_tree)
        yield {"id": page_id, "url": url, "group": registrable_domain(domain_of(url)), "label": label,
               "features": page_features(page, declared=declared_of(page, source, encoding="utf-8", url=url))}


def chosen_c(rows, cs, min_domains: int, scaling: str, forum_domains: int = 0) -> float:
    """The one C of `cs`, or the one that inner folds by domain choose on `rows` (pagetype.choose_c)."""
    from ..pagetype import choose_c

    if len(cs) == 1:
        return cs[0]
    best, _ = choose_c([r["features"] for r in rows], [r["label"] for r in rows], [r["group"] for r in rows], cs,
                       min_pages=min_domains, scaling=scaling, forum_domains=forum_domains)
    return best


def cross_validate(rows, folds: int, cs, min_domains: int, scaling: str = "std", forum_domains: int = 0):
    """Each row's prediction by a classifier trained on the folds without its domain (its C chosen inside
    those folds): (label, prob) lists, and each fold's C."""
    from types import SimpleNamespace

    from ..data.splits import group_kfold
    from ..pagetype import PageTypeClassifier, fit_spec

    pages = [SimpleNamespace(group=r["group"], domain=r["group"]) for r in rows]
    predicted = [None] * len(rows)
    chosen = []
    for train, test in group_kfold(pages, folds):
        c = chosen_c([rows[i] for i in train], cs, min_domains, scaling, forum_domains)
        chosen.append(c)
        spec = fit_spec([rows[i]["features"] for i in train], [rows[i]["label"] for i in train], c=c,
                        min_pages=min_domains, groups=[rows[i]["group"] for i in train], scaling=scaling,
                        forum_domains=forum_domains)
        classifier = PageTypeClassifier(spec)
        for i in test:
            p = classifier.probabilities(rows[i]["features"])
            best = int(p.argmax())
            predicted[i] = (classifier.classes[best], float(p[best]))
    return predicted, chosen


def run(args: argparse.Namespace) -> int:
    return report_errors("train-pagetype", _run, args)


def _run(args: argparse.Namespace) -> int:
    from ..pagetype import FEATURE_VERSION, fit_spec

    root = wcxb_root(args)
    if args.forum_domains < 0:
        raise UsageError("--forum-domains must be 0 (off) or more")
    try:
        cs = [float(c) for c in str(args.c).split(",") if c.strip()]
    except ValueError:
        raise UsageError(f"--c {args.c}: a number or a comma list of numbers") from None
    if not cs or not all(c > 0 and c < float("inf") for c in cs):
        raise UsageError(f"--c {args.c}: each C must be a positive number")
    rows = None
    cache = Path(args.cache) if args.cache else None
    if cache is not None and cache.exists():
        rows = [json.loads(line) for line in cache.read_text(encoding="utf-8").splitlines() if line.strip()]
        if rows and rows[0].get("feature_version") != FEATURE_VERSION:
            raise CommandError(f"{cache}: features of version {rows[0].get('feature_version')}, this code computes "
                               f"{FEATURE_VERSION}; delete the cache")
        rows = rows[: args.limit or None]
    if rows is None:
        rows = []
        for row in feature_rows(root, args.limit):
            row["feature_version"] = FEATURE_VERSION
            rows.append(row)
        if cache is not None:
            cache.parent.mkdir(parents=True, exist_ok=True)
            cache.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    predicted, fold_cs = cross_validate(rows, args.folds, cs, args.min_domains, args.scaling, args.forum_domains)
    right = Counter()
    total = Counter()
    for row, (label, _) in zip(rows, predicted):
        total[row["label"]] += 1
        right[row["label"]] += label == row["label"]
    accuracy = sum(right.values()) / max(1, len(rows))
    print(f"page type accuracy, {args.folds}-fold by registrable domain: {accuracy:.4f} ({len(rows)} pages)")
    for label in sorted(total, key=lambda k: -total[k]):
        print(f"  {label:<14} {right[label] / total[label]:.3f} of {total[label]}")
    if args.predictions:
        with open(args.predictions, "w", encoding="utf-8") as f:
            for row, (label, p) in zip(rows, predicted):
                f.write(json.dumps({"id": row["id"], "label": row["label"], "predicted": label, "p": round(p, 4)})
                        + "\n")
    c = chosen_c(rows, cs, args.min_domains, args.scaling, args.forum_domains)
    print(f"C {c:g} (chosen in each fold: {', '.join(f'{x:g}' for x in fold_cs)})")
    spec = fit_spec([r["features"] for r in rows], [r["label"] for r in rows], c=c,
                    min_pages=args.min_domains, groups=[r["group"] for r in rows], scaling=args.scaling,
                    forum_domains=args.forum_domains)
    spec["card"] = {
        "what": "WCXB page type of a page from its URL, declared types and metadata, node statistics and words "
                "(edrew_scrapy/pagetype.py)",
        "pages": len(rows),
        "cross_validated_accuracy": round(accuracy, 4),
        "folds": args.folds, "group_by": "registrable domain",
        "per_type_accuracy": {k: round(right[k] / total[k], 4) for k in sorted(total)},
        "c": c, "c_candidates": cs, "scaling": args.scaling, "min_domains": args.min_domains,
        "forum_domains": args.forum_domains,
        "command": "edrew train-pagetype " + " ".join(sys.argv[2:]) if len(sys.argv) > 2 else "edrew train-pagetype",
        "dataset": "WCXB v1.0 development split", "credit": "WCXB, Murrough Foley, 2026, CC-BY-4.0",
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(spec, separators=(",", ":")) + "\n", encoding="utf-8")
    print(f"wrote {out} ({len(spec['features'])} features, {len(spec['classes'])} types)")
    return 0
