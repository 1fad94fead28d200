"""How much of the WCXB mean word-F1 the pages without a reference text decide.

A WCXB page whose `main_content` holds no word scores 1 for an extractor that returns nothing and 0 for
any other (word_f1: both empty is a match). On WCXB dev 21 of the 1,497 pages are such pages, and most
of them show plenty of content (IMDb's top 250, a shop's category page): the annotation is missing, not
the content. This prints those pages with each extractor's score from an `edrew evaluate` run's
pages.csv, then every extractor's mean word-F1 over all pages (the benchmark's number, which the targets
use) and over the pages with a reference text, so that the two can be read side by side.

    python experiments/empty_references.py --wcxb "$EDREW_WCXB" --pages output/cv-dom/all/pages.csv \\
        [--pages output/cv-dom/onese/pages.csv ...]

Several --pages files are read in turn; a later file's rows replace an earlier file's for the same
extractor and page.

With --models (a cross-validation's fold models, MODELS/fold1 ... foldK) it also tries the rule "keep
nothing on a page whose best score is under a floor": each fold model scores its validation pages
(redrawn as `edrew train` drew them) and its test pages, and the mean word-F1 with each floor is printed
against the shipped decision at the card's threshold (about 10 minutes on one core for WCXB dev).
"""
from __future__ import annotations

import argparse
import csv
import os
import sys
from collections import defaultdict
from pathlib import Path
from typing import Dict, List


def reference_less(wcxb_root) -> List[str]:
    """The page ids whose main content holds no word, in id order."""
    from edrew_scrapy.data import wcxb, words

    return [pid for pid in wcxb.page_ids(wcxb_root)
            if not words(wcxb.load_truth(wcxb_root, pid).get("ground_truth", {}).get("main_content") or "")]


def read_scores(paths) -> Dict[str, Dict[str, dict]]:
    """{extractor: {page_id: row}} from pages.csv files, later files winning."""
    scores: Dict[str, Dict[str, dict]] = defaultdict(dict)
    for path in paths:
        with open(path, newline="", encoding="utf-8") as f:
            for row in csv.DictReader(f):
                scores[row["extractor"]][row["page_id"]] = row
    return scores


def means(scores: Dict[str, Dict[str, dict]], empty: List[str]) -> Dict[str, dict]:
    """Per extractor: pages, mean word-F1 over all of them, and over those with a reference text."""
    out = {}
    skip = set(empty)
    for extractor, rows in scores.items():
        f1 = {pid: float(r["word_f1"]) for pid, r in rows.items()}
        rest = [v for pid, v in f1.items() if pid not in skip]
        out[extractor] = {"pages": len(f1), "all": sum(f1.values()) / len(f1),
                          "with_reference": sum(rest) / len(rest) if rest else float("nan"),
                          "reference_less_scored_1": sum(1 for pid in empty if f1.get(pid) == 1.0)}
    return out


FLOORS = (0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4)


def page_f1s(page, probs, reference: str, threshold: float, region_share: float, floors) -> List[float]:
    """The page's word-F1 as extract() decides, then with each floor (nothing kept under it)."""
    from edrew_scrapy.data.align import word_f1
    from edrew_scrapy.rules.decision import _best_unsettled
    from edrew_scrapy.training.thresholds import page_word_f1s

    shipped = float(page_word_f1s([probs], [page], [reference], threshold, region_share)[0])
    empty = word_f1("", reference)[2]
    best = _best_unsettled(page.nodes, probs)
    return [shipped] + [empty if best < floor else shipped for floor in floors]


def floor_check(wcxb_root, models: Path, folds: int = 5, seed: int = 1, val_fraction: float = 0.1,
                region_share: float = 0.7) -> Dict[str, List[float]]:
    """{"val"|"test": mean word-F1 shipped, then per floor} over every fold's pages."""
    import numpy as np

    from edrew_scrapy.commands.evaluate import validation_pages
    from edrew_scrapy.data import splits, wcxb
    from edrew_scrapy.model.files import read_card
    from edrew_scrapy.training.evaluate import reference_text
    from edrew_scrapy.training.train import shipped_probs

    key = splits.group_key("domain")
    pages = list(wcxb.iter_pages(wcxb_root, wcxb.page_ids(wcxb_root)))
    rows: Dict[str, list] = {"val": [], "test": []}
    for f, (train, test) in enumerate(splits.group_kfold(pages, k=folds, key=key, seed=seed), 1):
        model = models / f"fold{f}"
        threshold = float(read_card(model, verify=False)["threshold"])
        val = validation_pages(pages, train, "domain", val_fraction, seed)
        for part, chosen in (("val", val), ("test", [pages[i] for i in test])):
            probs = shipped_probs(model, [lp.page for lp in chosen])
            rows[part] += [page_f1s(lp.page, p, reference_text(lp), threshold, region_share, FLOORS)
                           for lp, p in zip(chosen, probs)]
    return {part: list(np.mean(np.asarray(r), axis=0)) for part, r in rows.items()}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wcxb", default=os.environ.get("EDREW_WCXB"), help="WCXB folder (default $EDREW_WCXB)")
    parser.add_argument("--pages", action="append", required=True, help="an edrew evaluate run's pages.csv")
    parser.add_argument("--models", default=None, help="fold models (fold1 ...): also try a floor on the best score")
    args = parser.parse_args(argv)
    if not args.wcxb:
        parser.error("give --wcxb or set EDREW_WCXB")
    empty = reference_less(Path(args.wcxb))
    scores = read_scores(args.pages)
    names = sorted(scores)
    print(f"{len(empty)} pages without a reference text")
    print("page  type          " + "  ".join(f"{n:>12}" for n in names))
    for pid in empty:
        row = next((scores[n][pid] for n in names if pid in scores[n]), None)
        if row is None:
            continue
        cells = "  ".join(f"{scores[n][pid]['word_f1'][:5] if pid in scores[n] else '-':>12}" for n in names)
        print(f"{pid}  {row['group']:<12}  {cells}")
    print("\nmean word-F1    pages   all pages   pages with a reference   reference-less pages scored 1")
    for name, m in means(scores, empty).items():
        print(f"{name:<14} {m['pages']:6d}   {m['all']:.4f}      {m['with_reference']:.4f}"
              f"                   {m['reference_less_scored_1']}")
    if args.models:
        print("\nkeep nothing where the page's best score is under a floor: mean word-F1 minus the shipped decision's")
        print("pages  shipped  " + "  ".join(f"{floor:>7}" for floor in FLOORS))
        for part, values in floor_check(Path(args.wcxb), Path(args.models)).items():
            print(f"{part:<5}  {values[0]:.4f}   " + "  ".join(f"{v - values[0]:+.4f}" for v in values[1:]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
