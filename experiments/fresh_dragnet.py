"""dragnet-fresh: the dragnet pages in none of the three slices used so far, as a label file `edrew evaluate` reads.

dragnet is AGPL: evaluation only. Its 1,381 pages, in label-file order, were cut into three evenly spaced slices
(`edrew evaluate`'s `_spread`): dragnet 300 (`--limit 300`), dragnet-rest (300 of the other 1,081,
news_precision.py) and dragnet-tune (200 of the 781 left, dragnet_precision.py). The 581 left were never scored
for a decision; this script writes them (all of them, or `--count N` evenly spaced) as a .jsonl label file whose
`file` entries point into the dataset folder, so a judging run is

    python experiments/fresh_dragnet.py --shared DIR --out output/fresh/dragnet-fresh.jsonl
    edrew evaluate --dataset dragnet-fresh=simple:output/fresh/dragnet-fresh.jsonl --split none \
        --reference-title drop --model ... --extractors none

The slices are drawn from the label records' ids, which is what the other scripts' page lists are (every dragnet
record yields a page), so no page needs to be serialized to draw them.
"""
from __future__ import annotations

import argparse
import json
import sys
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


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", required=True, help="the shared datasets folder (holds dragnet/)")
    ap.add_argument("--out", required=True, help="the label file to write (.jsonl)")
    ap.add_argument("--count", type=int, default=0, help="evenly spaced N of the fresh pages (default: all)")
    args = ap.parse_args(argv)

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
