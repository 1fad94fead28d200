"""Do several heads on one fold biLM, averaged, score better on the fold's test pages than one?

Each model folder scores the fold's test pages through extract()'s scoring path; the mean of their
probabilities is then decided as extract() decides (threshold, region share 0.7), and each model's and
each combination's mean word-F1 printed, the combinations growing in the order the models are given.
The heads should share their biLM (`edrew evaluate --train-bilm`), as a shipped ensemble would have to
for its cost to stay that of the heads.

    python experiments/head_ensemble.py --wcxb "$EDREW_WCXB" --fold 4 \\
        output/cv-dom/onese/models/fold4 output/long/fold4/models/fold4 output/noref/fold4/models/fold4

About 1.5 minutes a model on one core for a WCXB fold's 300 test pages.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import List, Sequence

import numpy as np


def mean_probs(runs: Sequence[List[np.ndarray]]) -> List[np.ndarray]:
    """Per page, the mean over runs of each node's probability."""
    return [np.mean([run[i] for run in runs], axis=0) for i in range(len(runs[0]))]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("models", nargs="+", help="model folders trained for this fold")
    parser.add_argument("--wcxb", default=os.environ.get("EDREW_WCXB"), help="WCXB folder (default $EDREW_WCXB)")
    parser.add_argument("--fold", type=int, required=True, help="which fold's test pages (1 ... --folds)")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--threshold", type=float, default=0.5)
    parser.set_defaults(group_by="domain")  # the folds of every measurement since 27 Nov 2026
    args = parser.parse_args(argv)
    if not args.wcxb:
        parser.error("give --wcxb or set EDREW_WCXB")
    if not 1 <= args.fold <= args.folds:
        parser.error(f"--fold must be 1..{args.folds}")

    from edrew_scrapy.commands.evaluate import check_held_out, held_out
    from edrew_scrapy.data import splits, wcxb
    from edrew_scrapy.training.evaluate import reference_text
    from edrew_scrapy.training.thresholds import page_word_f1s
    from edrew_scrapy.training.train import shipped_probs

    key = splits.group_key(args.group_by)
    pages = list(wcxb.iter_pages(args.wcxb, wcxb.page_ids(args.wcxb)))
    _train, test = splits.group_kfold(pages, k=args.folds, key=key, seed=args.seed)[args.fold - 1]
    chosen = [pages[i] for i in test]
    held = held_out(args, f"fold{args.fold}", chosen)
    page_list, refs = [lp.page for lp in chosen], [reference_text(lp) for lp in chosen]
    runs = []
    for model in args.models:
        check_held_out(Path(model), held)
        runs.append(shipped_probs(Path(model), page_list))
        f1 = page_word_f1s(runs[-1], page_list, refs, args.threshold, 0.7)
        print(f"{model}: {f1.mean():.4f}", flush=True)
    for k in range(2, len(runs) + 1):
        f1 = page_word_f1s(mean_probs(runs[:k]), page_list, refs, args.threshold, 0.7)
        print(f"mean of the first {k}: {f1.mean():.4f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
