"""How well does a fold model's threshold, chosen on its validation domains, carry to its test domains?

`edrew train` picks the grid threshold with the best mean word-F1 on its validation pages (about 120
pages from a dozen or so domains in a WCXB fold). Each fold model of a cross-validation is scored here on
its own validation pages (redrawn as `edrew train` drew them: the fold's training pages with text nodes,
grouped by --group-by, --train-seed, --val-fraction) and on its test pages, at every grid threshold, through
extract()'s scoring path and decision (region share 0.7). Printed per fold and over all test pages:

- chosen: the rule `edrew train` applied until 27 Nov 2026 (best validation mean; ties nearest 0.5),
  which gives back the thresholds of cards written before then;
- 0.5: one fixed threshold for every fold;
- one-SE: the threshold nearest 0.5 whose validation mean is within one standard error of the best
  (the standard error of the per-page differences to the best threshold), the rule `edrew train`
  applies since (`thresholds.choose_threshold_within_noise`);
- test-best: the best threshold on the test pages themselves (a ceiling, not a rule).

    python experiments/threshold_choice.py --wcxb "$EDREW_WCXB" --models output/cv-dom/all/models

Reads the models under MODELS/fold1 ... foldK; about 15 minutes on one core for the 1,497 pages.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Dict, List, Sequence

import numpy as np

from edrew_scrapy.data.splits import GROUP_KEYS


def per_page_f1(probs: Sequence[np.ndarray], pages, references, thresholds, region_share, desc: str) -> np.ndarray:
    """(thresholds, pages) word-F1 of each page at each threshold, as extract() decides."""
    from tqdm import tqdm

    from edrew_scrapy.training.thresholds import page_word_f1s

    return np.stack([page_word_f1s(probs, pages, references, t, region_share)
                     for t in tqdm(thresholds, desc=desc, leave=False)])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wcxb", default=os.environ.get("EDREW_WCXB"), help="WCXB folder (default $EDREW_WCXB)")
    parser.add_argument("--models", required=True, help="folder with one fold model per split (fold1 ...)")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1, help="the folds' seed (edrew evaluate --seed)")
    parser.add_argument("--train-seed", type=int, default=None,
                        help="the models' training seed, which drew their validation domains (edrew evaluate "
                             "--train-seed; default: --seed)")
    parser.add_argument("--val-fraction", type=float, default=0.1)
    parser.add_argument("--group-by", choices=GROUP_KEYS, default="domain")
    parser.add_argument("--region-share", type=float, default=0.7)
    parser.add_argument("--out", default=None, help="write the per-threshold means as JSON here")
    args = parser.parse_args(argv)
    if not args.wcxb:
        parser.error("give --wcxb or set EDREW_WCXB")

    from edrew_scrapy.commands.evaluate import check_held_out, held_out, validation_pages
    from edrew_scrapy.data import splits, wcxb
    from edrew_scrapy.model.files import read_card
    from edrew_scrapy.training.evaluate import reference_text
    from edrew_scrapy.training.thresholds import THRESHOLDS, choose_threshold, choose_threshold_within_noise
    from edrew_scrapy.training.train import shipped_probs

    key = splits.group_key(args.group_by)
    pages = list(wcxb.iter_pages(args.wcxb, wcxb.page_ids(args.wcxb)))
    folds = splits.group_kfold(pages, k=args.folds, key=key, seed=args.seed)
    rules = ("chosen", "0.5", "one-SE", "test-best")
    totals: Dict[str, List[float]] = {r: [] for r in rules}
    report = {"thresholds": THRESHOLDS, "folds": {}}
    print("fold  val  test  card   chosen        0.5           one-SE        test-best")
    for f, (train, test) in enumerate(folds, 1):
        name = f"fold{f}"
        model = Path(args.models) / name
        check_held_out(model, held_out(args, name, [pages[i] for i in test]))
        card = read_card(model, verify=False)
        val = validation_pages(pages, train, args.group_by, args.val_fraction,
                               args.seed if args.train_seed is None else args.train_seed)
        sets = {}
        for part, chosen in (("val", val), ("test", [pages[i] for i in test])):
            probs = shipped_probs(model, [lp.page for lp in chosen])
            sets[part] = per_page_f1(probs, [lp.page for lp in chosen], [reference_text(lp) for lp in chosen],
                                     THRESHOLDS, args.region_share, f"{name} {part}")
        val_means, test_means = sets["val"].mean(axis=1), sets["test"].mean(axis=1)
        val_at = {t: sets["val"][i] for i, t in enumerate(THRESHOLDS)}
        picks = {"chosen": THRESHOLDS.index(choose_threshold(lambda t, at=val_at: float(at[t].mean()))[0]),
                 "0.5": THRESHOLDS.index(0.5),
                 "one-SE": THRESHOLDS.index(choose_threshold_within_noise(val_at.__getitem__)[0]),
                 "test-best": int(np.argmax(test_means))}
        cells = []
        for r in rules:
            totals[r].extend(sets["test"][picks[r]])
            cells.append(f"{THRESHOLDS[picks[r]]:.2f} {test_means[picks[r]]:.4f}")
        print(f"{name} {len(val):4d} {len(test):5d}  {card.get('threshold'):.2f}   " + "   ".join(cells))
        report["folds"][name] = {"val_pages": len(val), "test_pages": len(test),
                                 "card_threshold": card.get("threshold"),
                                 "val_means": [round(x, 4) for x in val_means],
                                 "test_means": [round(x, 4) for x in test_means],
                                 "picks": {r: THRESHOLDS[i] for r, i in picks.items()}}
    print("all test pages: " + ", ".join(f"{r} {np.mean(totals[r]):.4f}" for r in rules))
    report["all"] = {r: round(float(np.mean(totals[r])), 4) for r in rules}
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
