"""dragnet-fresh: the dragnet pages in none of the three slices used so far, as a label file `edrew evaluate` reads.

dragnet is AGPL: evaluation only. Its 1,381 pages, in label-file order, were cut into three evenly spaced slices
(`edrew evaluate`'s `_spread`): dragnet 300 (`--limit 300`), dragnet-rest (300 of the other 1,081,
news_precision.py) and dragnet-tune (200 of the 781 left, dragnet_precision.py). The 581 left were never scored
for a decision; this script writes them (all of them, or `--count N` evenly spaced) as a .jsonl label file whose
`file` entries point into the dataset folder, so a judging run is

    python experiments/fresh_dragnet.py --shared DIR --out output/fresh/dragnet-fresh.jsonl
    edrew evaluate --dataset dragnet-fresh=simple:output/fresh/dragnet-fresh.jsonl --split none \
        --reference-title drop --model ... --extractors none
    python experiments/fresh_dragnet.py --judge output/fresh/dragnet-fresh/pages.csv   # W - C, paired, per dataset

`--judge` reads a run's pages.csv with the heads `weak1`, `weak2`, `control1`, `control2` (`--also-model`) and
models/default (`edrew`): per dataset, each head's mean word-F1, W - C (W, C the means of the two weak seeds and
of the two controls) and the paired mean and standard error of (w1 + w2) / 2 - (c1 + c2) / 2 over the pages.

The slices are drawn from the label records' ids, which is what the other scripts' page lists are (every dragnet
record yields a page), so no page needs to be serialized to draw them.
"""
from __future__ import annotations

import argparse
import csv
import json
import math
import sys
from collections import defaultdict
from pathlib import Path

from edrew_scrapy.commands.evaluate import _spread
from edrew_scrapy.data import simple


def page_id(record: dict) -> str:
    return record["file"] if record.get("id") in (None, "") else str(record["id"])


def slices(records: list) -> dict:
    """page ids of each slice: dragnet (300), dragnet-rest (300), dragnet-tune (200), dragnet-fresh (the rest)."""
    ids = [page_id(r) for r in records]
    first = set(_spread(ids, 300))
    rest = set(_spread([i for i in ids if i not in first], 300))
    left = [i for i in ids if i not in first and i not in rest]
    tune = set(_spread(left, 200))
    fresh = [i for i in left if i not in tune]
    return {"dragnet": first, "dragnet-rest": rest, "dragnet-tune": tune, "dragnet-fresh": fresh}


HEADS = ("edrew", "weak1", "weak2", "control1", "control2")


def mean_se(xs: list) -> tuple:
    m = sum(xs) / len(xs)
    return m, math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1) / len(xs)) if len(xs) > 1 else 0.0


def judge(pages_csv: str) -> None:
    """Per dataset of one run: each head's word-F1 (P / R), W - C, and the paired weak - control difference."""
    rows = defaultdict(dict)  # (dataset, page) -> extractor -> row
    with open(pages_csv, encoding="utf-8") as f:
        for r in csv.DictReader(f):
            rows[(r.get("dataset", ""), r["page_id"])][r["extractor"]] = r
    for ds in sorted({k[0] for k in rows}):
        keys = [k for k in rows if k[0] == ds and all(h in rows[k] for h in HEADS)]
        f1 = {h: [float(rows[k][h]["word_f1"]) for k in keys] for h in HEADS}
        mean = {h: sum(v) / len(v) for h, v in f1.items()}
        print(f"== {ds}: {len(keys)} pages")
        for h in HEADS:
            p = sum(float(rows[k][h]["word_p"]) for k in keys) / len(keys)
            r = sum(float(rows[k][h]["word_r"]) for k in keys) / len(keys)
            print(f"  {h:9} F1 {mean[h]:.4f}  P {p:.4f}  R {r:.4f}")
        w, c = (mean["weak1"] + mean["weak2"]) / 2, (mean["control1"] + mean["control2"]) / 2
        d = [(a + b) / 2 - (x + y) / 2 for a, b, x, y in zip(f1["weak1"], f1["weak2"], f1["control1"], f1["control2"])]
        m, se = mean_se(d)
        print(f"  W {w:.4f}  C {c:.4f}  W-C {w - c:+.4f}  |C1-C2| {abs(mean['control1'] - mean['control2']):.4f}  "
              f"|W1-W2| {abs(mean['weak1'] - mean['weak2']):.4f}  paired {m:+.4f} SE {se:.4f} "
              f"({m / se if se else 0:.2f} SE), up {sum(x > 1e-9 for x in d)} down {sum(x < -1e-9 for x in d)}")
        for h in HEADS[1:]:
            m, se = mean_se([a - b for a, b in zip(f1[h], f1["edrew"])])
            print(f"  {h} - default {m:+.4f} SE {se:.4f}")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--judge", metavar="PAGES_CSV", help="judge a run's pages.csv instead of writing the slice")
    ap.add_argument("--shared", help="the shared datasets folder (holds dragnet/)")
    ap.add_argument("--out", help="the label file to write (.jsonl)")
    ap.add_argument("--count", type=int, default=0, help="evenly spaced N of the fresh pages (default: all)")
    args = ap.parse_args(argv)
    if args.judge:
        judge(args.judge)
        return
    if not (args.shared and args.out):
        ap.error("--shared and --out are required to write the slice")

    root = (Path(args.shared) / "dragnet").resolve()
    records = simple.load_labels(root / "labels.jsonl")
    cut = slices(records)
    fresh = set(_spread(cut["dragnet-fresh"], args.count or None))
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", encoding="utf-8") as f:
        for r in records:
            if page_id(r) in fresh:
                r = dict(r, file=str(root / r["file"]), id=page_id(r))  # absolute: the label file lives elsewhere
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
    sizes = ", ".join(f"{k} {len(v)}" for k, v in cut.items())
    print(f"{len(records)} dragnet pages: {sizes}; wrote {len(fresh)} to {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
