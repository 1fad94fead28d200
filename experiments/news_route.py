"""Route by page type: the news head where the page-type classifier says `article`, another model elsewhere.

Two steps, both on results other runs already wrote:

    # each page's page type, computed as the crawl's metadata path computes it (the serializer's tree read by
    # metadata.read_tree, pagetype.PageTypeClassifier.predict on the page and what it declares)
    python experiments/news_route.py types --simple $S/dragnet/labels.jsonl --out types-dragnet.csv
    python experiments/news_route.py types --wcxb $S/wcxb-dev --folds R/m-cv1,...,R/m-cv5 --out types-wcxb.csv
    # routed word-F1 / P / R against the other model, paired per page
    python experiments/news_route.py route --news run1/pages.csv:control --base run2/pages.csv:default \
        --types types-dragnet.csv --thresholds 0.5,0.8

`types` writes per page the shipped classifier's type and probability (models/default/pagetype.json, trained on
all of WCXB dev) and, with `--folds` (edrew evaluate output folders whose pages.csv lists one WCXB test fold
each), the type from a classifier trained the shipped way (`c` 0.02, features seen on 10 domains) on the other
folds only: on WCXB the shipped classifier has seen every page, the fold one has not seen the page's domain.

`route` reads per-page rows (`pages.csv:EXTRACTOR`; several `--base` files are joined, each page taken from the
one that holds it; several `--news` rows are averaged per page, for two trainings of one head) and, for each
threshold, takes the news head's row where the page's type is `article` with probability >= threshold and the
base's row elsewhere; it prints the means of word-F1, P and R and the paired difference routed - base (mean,
standard error, pages up / down), overall and per `group` (the dataset's own page type where it has one) or,
`--group-by type`, per type the classifier gave (`prob`: articles per band of probability). No page is
serialised or scored here.
"""
from __future__ import annotations

import argparse
import csv
import json
import math
import sys
import time
from collections import defaultdict
from pathlib import Path

METRICS = ("word_f1", "word_p", "word_r")


# ---- page types ---------------------------------------------------------------------------------------------

def _simple_rows(labels: Path, wanted=None):
    """{id, url, group, label, features, seconds} per record of a simple label file, as the crawl reads it."""
    from edrew_scrapy.data import domain_of, read_source, registrable_domain, simple

    root = labels.parent
    for r in simple.load_labels(labels):
        page_id = r["file"] if r.get("id") in (None, "") else str(r["id"])
        if wanted is not None and page_id not in wanted:
            continue
        url = r.get("url") or ""
        yield _row(page_id, url, registrable_domain(domain_of(url)) if url else page_id, r.get("page_type") or "",
                   read_source(root / r["file"]), r.get("encoding"))


def _wcxb_rows(root: Path):
    from edrew_scrapy.data import domain_of, read_source, registrable_domain
    from edrew_scrapy.data.wcxb import load_truth, page_ids

    for page_id in page_ids(root):
        truth = load_truth(root, page_id)
        url = truth.get("url") or ""
        label = ((truth.get("_internal") or {}).get("page_type") or {}).get("primary") or ""
        yield _row(page_id, url, registrable_domain(domain_of(url)), label,
                   read_source(root / "html" / f"{page_id}.html.gz"), "utf-8")


def _row(page_id, url, group, label, source, encoding):
    """The page's page-type features the way a crawl gets them (train_pagetype.feature_rows does the same), and
    the CPU seconds of the features alone (the serializer's work is paid by extraction anyway)."""
    from edrew_scrapy.metadata import declared_of, read_tree
    from edrew_scrapy.pagetype import page_features
    from edrew_scrapy.serializer import serialize

    page = serialize(source, encoding=encoding, url=url or None, tree_reader=read_tree)
    declared = declared_of(page, source, encoding=encoding or "utf-8", url=url or None)
    start = time.process_time()
    features = page_features(page, declared=declared)
    return {"id": page_id, "url": url, "group": group, "label": label, "features": features,
            "seconds": time.process_time() - start}


def _fold_ids(folder: Path) -> set:
    with open(folder / "pages.csv", newline="", encoding="utf-8") as f:
        return {row["page_id"] for row in csv.DictReader(f)}


def types(args) -> int:
    from edrew_scrapy.pagetype import PageTypeClassifier, default_classifier, fit_spec

    shipped = default_classifier(None)
    wanted = set().union(*(_fold_ids(Path(f)) for f in args.ids.split(","))) if args.ids else None
    rows = list(_wcxb_rows(Path(args.wcxb)) if args.wcxb else _simple_rows(Path(args.simple), wanted))
    folds = [_fold_ids(Path(f)) for f in args.folds.split(",")] if args.folds else []
    held_out = {}
    for test in folds:
        train = [r for r in rows if r["id"] not in test]
        spec = fit_spec([r["features"] for r in train], [r["label"] for r in train], c=args.c, min_pages=10,
                        groups=[r["group"] for r in train])
        classifier = PageTypeClassifier(spec)
        for r in rows:
            if r["id"] in test:
                p = classifier.probabilities(r["features"])
                held_out[r["id"]] = (classifier.classes[int(p.argmax())], round(float(p.max()), 4))
    with open(args.out, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["page_id", "label", "type", "prob", "fold_type", "fold_prob"])
        for r in rows:
            p = shipped.probabilities(r["features"])
            fold = held_out.get(r["id"], ("", ""))
            w.writerow([r["id"], r["label"], shipped.classes[int(p.argmax())], round(float(p.max()), 4), *fold])
    seconds = sorted(r["seconds"] for r in rows)
    print(f"{len(rows)} pages; page-type features {1000 * sum(seconds) / len(rows):.2f} ms a page CPU "
          f"(median {1000 * seconds[len(seconds) // 2]:.2f}); {len(held_out)} with a fold type; wrote {args.out}")
    return 0


# ---- routing ------------------------------------------------------------------------------------------------

def _read(spec: str) -> dict:
    """page_id -> row of one extractor in a pages.csv (`PATH:EXTRACTOR`)."""
    path, _, extractor = spec.rpartition(":")
    out = {}
    with open(path, newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            if row["extractor"] == extractor:
                if row.get("failed"):
                    raise SystemExit(f"{path}: {row['page_id']} failed ({row['failed']}); not routed")
                out[row["page_id"]] = row
    if not out:
        raise SystemExit(f"{path}: no rows of extractor {extractor!r}")
    return out


def _mean_se(values):
    n = len(values)
    mean = sum(values) / n
    var = sum((v - mean) ** 2 for v in values) / (n - 1) if n > 1 else 0.0
    return mean, math.sqrt(var / n)


def _bucket(kind: str, prob: float, thresholds, by: str) -> str:
    """The page's row label: its type (`type`), or for `prob` whether it is an article and in which band of
    probability between the thresholds."""
    if by == "type" or kind != "article":
        return "typed " + kind if by == "type" else "typed other"
    edges = sorted(thresholds)
    low = max([e for e in edges if e <= prob], default=None)
    high = min([e for e in edges if e > prob], default=None)
    band = [f">= {low:g}"] if low is not None else []
    band += [f"< {high:g}"] if high is not None else []
    return "article p " + ", ".join(band)


def route(args) -> int:
    runs = [_read(spec) for spec in args.news]
    news = {}
    for p in set.intersection(*(set(r) for r in runs)):
        # several news heads (trainings): each metric averaged per page
        news[p] = dict(runs[0][p], **{m: sum(float(r[p][m]) for r in runs) / len(runs) for m in METRICS})
    base = {}
    for spec in args.base:
        base.update(_read(spec))
    with open(args.types, newline="", encoding="utf-8") as f:
        kinds = {row["page_id"]: row for row in csv.DictReader(f)}
    column = "fold_" if args.fold_types else ""
    pages = sorted(set(news) & set(base))
    missing = [p for p in pages if p not in kinds or not kinds[p][column + "type"]]
    if missing or len(pages) != len(news) or len(pages) != len(base):
        raise SystemExit(f"pages do not agree: news {len(news)}, base {len(base)}, both {len(pages)}, "
                         f"without a type {len(missing)}")
    # the two runs must have scored the same nodes against the same reference words
    differ = [p for p in pages if (news[p]["nodes"], int(news[p]["tp"]) + int(news[p]["fn"]))
              != (base[p]["nodes"], int(base[p]["tp"]) + int(base[p]["fn"]))]
    print(f"{len(pages)} pages; {len(differ)} whose nodes or reference words differ between the two runs")
    result = {"pages": len(pages), "differ": len(differ), "thresholds": {}}
    thresholds = [float(t) for t in args.thresholds.split(",")]
    print("| threshold | group | pages | routed to news | routed F1 (P / R) | base F1 (P / R) | "
          "routed - base F1 (SE; up / down) | P (SE) | R (SE) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for t in [None] + thresholds:  # None: the news head on every page
        by_group = defaultdict(list)
        for p in pages:
            kind = kinds[p]
            to_news = t is None or (kind[column + "type"] == "article" and float(kind[column + "prob"]) >= t)
            row = news[p] if to_news else base[p]
            key = base[p]["group"] if args.group_by == "group" else _bucket(kind[column + "type"],
                                                                              float(kind[column + "prob"]),
                                                                              thresholds, args.group_by)
            by_group[key].append((to_news, row, base[p]))
            by_group["all"].append((to_news, row, base[p]))
        out = {}
        for group in ["all"] + sorted(g for g in by_group if g != "all"):
            items = by_group[group]
            if group != "all" and len(by_group) <= 2:
                continue  # one group only: the same as all
            stats = {"pages": len(items), "to_news": sum(1 for x in items if x[0])}
            for m in METRICS:
                stats[m] = sum(float(r[m]) for _, r, _ in items) / len(items)
                stats["base_" + m] = sum(float(b[m]) for _, _, b in items) / len(items)
                stats["diff_" + m] = _mean_se([float(r[m]) - float(b[m]) for _, r, b in items])
            d = [float(r["word_f1"]) - float(b["word_f1"]) for _, r, b in items]
            stats["up"], stats["down"] = sum(x > 1e-12 for x in d), sum(x < -1e-12 for x in d)
            out[group] = stats
            label = "news everywhere" if t is None else f"{t:g}"
            print(f"| {label} | {group} | {stats['pages']} | {stats['to_news']} | {stats['word_f1']:.4f} "
                  f"({stats['word_p']:.3f} / {stats['word_r']:.3f}) | {stats['base_word_f1']:.4f} "
                  f"({stats['base_word_p']:.3f} / {stats['base_word_r']:.3f}) | "
                  f"{stats['diff_word_f1'][0]:+.4f} ({stats['diff_word_f1'][1]:.4f}; "
                  f"{stats['up']} / {stats['down']}) | "
                  f"{stats['diff_word_p'][0]:+.4f} ({stats['diff_word_p'][1]:.4f}) | "
                  f"{stats['diff_word_r'][0]:+.4f} ({stats['diff_word_r'][1]:.4f}) |")
        result["thresholds"]["news" if t is None else str(t)] = out
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    t = sub.add_parser("types", help="each page's page type, as the crawl computes it")
    source = t.add_mutually_exclusive_group(required=True)
    source.add_argument("--simple", help="a simple-format label file (.jsonl)")
    source.add_argument("--wcxb", help="a WCXB folder")
    t.add_argument("--folds", help="comma-separated evaluate output folders, one WCXB test fold each")
    t.add_argument("--ids", help="comma-separated evaluate output folders: only the pages their pages.csv lists")
    t.add_argument("--c", type=float, default=0.02, help="the fold classifiers' C (the shipped one's)")
    t.add_argument("--out", required=True)
    r = sub.add_parser("route", help="routed word-F1 against the base model, paired per page")
    r.add_argument("--news", required=True, action="append",
                   help="PATH/pages.csv:EXTRACTOR of the news head (repeated: the heads averaged per page)")
    r.add_argument("--base", required=True, action="append", help="PATH/pages.csv:EXTRACTOR (repeatable)")
    r.add_argument("--types", required=True, help="the CSV `types` wrote")
    r.add_argument("--fold-types", action="store_true", help="route by the fold classifier's type")
    r.add_argument("--group-by", choices=("group", "type", "prob"), default="group",
                   help="break down by the dataset's own page type (group), the classifier's (type) or "
                   "articles by probability band (prob)")
    r.add_argument("--thresholds", default="0.5,0.8")
    r.add_argument("--json", help="also write the numbers here")
    args = parser.parse_args(argv)
    return types(args) if args.command == "types" else route(args)


if __name__ == "__main__":
    sys.exit(main())
