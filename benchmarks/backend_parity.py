"""The numpy backend against the PyTorch one on real pages: every node's score, and the extracted texts.

    python benchmarks/backend_parity.py --pages "$S/wcxb-dev/html" --pages "$S/fundus-news/html" \
        --pages "$S/mozilla-readability/html" [--limit 300] [--model default] [--batch 8]

Serialises up to --limit pages of each folder (evenly spread over its files), scores them with both backends
in groups of --batch pages (as a crawl's worker and `edrew extract` do; the numpy head steps through a
group's pages together), and prints per folder the pages, the nodes, the largest absolute difference of a
node's score, and how many pages' extracted texts (`edrew_scrapy.extract.extract`, the model's threshold
and rules) differ. Exits 1 when a difference is over --tolerance (1e-5) or a text differs.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pages", action="append", required=True, type=Path, help="a folder of pages (repeatable)")
    ap.add_argument("--limit", type=int, default=300, help="pages of each folder at most (default: 300)")
    ap.add_argument("--model", default="default", help="model directory (default: the shipped models/default)")
    ap.add_argument("--batch", type=int, default=8, help="pages a score call (default: 8)")
    ap.add_argument("--tolerance", type=float, default=1e-5)
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import numpy as np
    from peers import spread_pages

    from edrew_scrapy.extract import extract, score_pages
    from edrew_scrapy.model.base import load_model, set_threads
    from edrew_scrapy.serializer import serialize

    set_threads(1, "native")
    scorers = {name: load_model(args.model, backend=name) for name in ("native", "numpy")}
    worst_all, failed = 0.0, False
    for folder in args.pages:
        pages = [p for p in (serialize(data, url=f"http://parity.test/{name}")
                             for name, data in spread_pages(folder, args.limit)) if p.nodes]
        worst, nodes, texts_differ = 0.0, 0, 0
        for start in range(0, len(pages), args.batch):
            group = pages[start: start + args.batch]
            scores = {name: score_pages(scorer, group) for name, scorer in scorers.items()}
            for a, b in zip(scores["native"], scores["numpy"]):
                worst = max(worst, float(np.abs(a - b).max()))
                nodes += len(a)
            texts = {name: [e.text for e in extract(group, scorer=scorer)] for name, scorer in scorers.items()}
            texts_differ += sum(a != b for a, b in zip(texts["native"], texts["numpy"]))
        print(f"{folder}: {len(pages)} pages, {nodes:,} nodes, largest score difference {worst:.3g}, "
              f"{texts_differ} pages whose extracted text differs", flush=True)
        worst_all = max(worst_all, worst)
        failed |= worst > args.tolerance or texts_differ > 0
    print(f"largest difference over all pages {worst_all:.3g} (tolerance {args.tolerance:g})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
