"""The shipped models/default on its validation pages, split by whether their registrable domain has
training pages: its validation domains were drawn by host (edrew train --group-by host), before splits
grouped hosts by registrable domain, so uk.shop.com could validate a model trained on shop.com.

    python experiments/validation_leak.py --wcxb "$EDREW_WCXB" [--model models/default]

Prints the mean page word-F1 of the validation pages, of those whose registrable domain is among the
training pages' and of the others. It redraws the split as `edrew train` drew it for the shipped model
(seed 1, --val-fraction 0.1, pages without text nodes left out, groups by host).
"""
from __future__ import annotations

import argparse
import os
import sys


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wcxb", default=os.environ.get("EDREW_WCXB"), help="WCXB folder (default $EDREW_WCXB)")
    parser.add_argument("--model", default="models/default")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--val-fraction", type=float, default=0.1)
    args = parser.parse_args()
    if not args.wcxb:
        parser.error("give --wcxb or set EDREW_WCXB")

    from edrew_scrapy.data import registrable_domain, wcxb
    from edrew_scrapy.data.splits import by_host
    from edrew_scrapy.model.scorer import load_model
    from edrew_scrapy.training.evaluate import evaluate_pages, scorer_extractor
    from edrew_scrapy.training.train import split_by_group

    pages = [lp for lp in wcxb.iter_pages(args.wcxb, wcxb.page_ids(args.wcxb)) if lp.page.nodes]
    train, val, _ = split_by_group([by_host(lp) for lp in pages], args.val_fraction, 0.0, args.seed)
    seen = {registrable_domain(pages[i].domain) for i in train if pages[i].domain}
    results = evaluate_pages([pages[i] for i in val], {"edrew": scorer_extractor(load_model(args.model))},
                             progress=False)
    f1 = {r.page_id: r.word_f1 for r in results}
    leaked = sorted(pages[i].page_id for i in val if pages[i].domain and registrable_domain(pages[i].domain) in seen)
    others = [p for p in f1 if p not in set(leaked)]

    def mean(ids):
        return sum(f1[p] for p in ids) / len(ids) if ids else float("nan")

    print(f"validation pages: {len(f1)}, word-F1 {mean(list(f1)):.4f}")
    print(f"  whose registrable domain has training pages: {len(leaked)}, word-F1 {mean(leaked):.4f} "
          f"({', '.join(leaked)})")
    print(f"  the others: {len(others)}, word-F1 {mean(others):.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
