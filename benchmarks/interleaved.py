"""Scoring speed before/after a change, and against trafilatura, with every step of a page timed in turn.

    python benchmarks/interleaved.py --pages ../shared/datasets/wcxb-dev/html [--limit 100]
                                     [--baseline DIR] [--batch 1]

On a machine shared with other jobs, benchmarks/throughput.py's passes (one per extractor) see
different loads, and its ratios moved by +-40 % between runs of the same code. Here each page goes
through trafilatura.extract, the serializer, the baseline's scoring (optional) and this checkout's
scoring one after the other, in an order that rotates from page to page, so the load falls on all
alike. Same pages, warm-up (20 pages) and passes (first sight, then every cache warm) as throughput.py.

--baseline DIR: a folder holding another version's `edrew_scrapy` package, e.g. made with
`git archive <rev> edrew_scrapy | tar -x -C DIR`; it is imported under another name (a copy in a
temporary folder) and scores the same serialized pages with the same model files. --batch N scores N
pages per call, as a crawl does with EDREW_BATCH_PAGES (trafilatura and the serializer stay per page).
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmark_pages import load_pages, one_core  # noqa: E402


def _baseline_scoring(folder: Path, model: Path):
    """Scoring as the edrew_scrapy package under `folder` (imported as `edrew_baseline`) does it for
    extract(): its `extract.score_pages` where it has one, else its Scorer.score."""
    import importlib

    tmp = Path(tempfile.mkdtemp(prefix="edrew-baseline-"))
    shutil.copytree(folder / "edrew_scrapy", tmp / "edrew_baseline")
    sys.path.insert(0, str(tmp))
    scorer = importlib.import_module("edrew_baseline.model.scorer").load_model(model)
    score_pages = getattr(importlib.import_module("edrew_baseline.extract"), "score_pages", None)
    return (lambda pages: score_pages(scorer, pages)) if score_pages else scorer.score


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pages", type=Path, default=os.environ.get("EDREW_WCXB_HTML"))
    ap.add_argument("--limit", type=int, default=100)
    ap.add_argument("--baseline", type=Path, default=None)
    ap.add_argument("--batch", type=int, default=1)
    args = ap.parse_args()
    if not args.pages:
        ap.error("--pages is required (or EDREW_WCXB_HTML)")

    import trafilatura

    one_core()
    from edrew_scrapy.extract import score_pages
    from edrew_scrapy.model.scorer import DEFAULT_MODEL_DIR, load_model
    from edrew_scrapy.serializer import serialize

    warm_up = load_pages(args.pages, args.limit + 20, progress=False)
    data, warm_up = warm_up[20:], warm_up[:20]
    # scoring as extract() does it (for a main-content model, without the nodes its rules settle)
    scorer = load_model()
    scorers = {"after": lambda pages: score_pages(scorer, pages)}
    if args.baseline:
        scorers = {"before": _baseline_scoring(args.baseline, DEFAULT_MODEL_DIR), **scorers}
    for page in map(serialize, warm_up):
        for score in scorers.values():
            score([page])
    for phase in ("first sight", "caches warm"):
        total = dict.fromkeys(["trafilatura", "serializer", *scorers], 0.0)
        for start in range(0, len(data), args.batch):
            chunk = data[start: start + args.batch]
            steps = list(total)
            rounds, k = divmod(start // args.batch, len(steps))
            if rounds % 2:
                # the scorers in the other order every other round, so that each one comes right after
                # the other as often: oneDNN's primitive cache is the process's, and the second of two
                # identical versions found the context LSTM's primitive for the page's length ready
                steps[2:] = steps[:1:-1]
            for step in steps[k:] + steps[:k]:
                if step == "trafilatura":
                    total[step] += sum(_timed(lambda d=d: trafilatura.extract(d)) for d in chunk)
                elif step == "serializer":
                    total[step] += sum(_timed(lambda d=d: serialize(d)) for d in chunk)
                else:
                    # each scorer gets pages of its own, serialized outside the timers: pages shared with
                    # the scorer before it came with the strings' hashes already computed (Python keeps
                    # them), and identical versions measured 1.0 ms/page apart at first sight
                    own = [serialize(d) for d in chunk]
                    total[step] += _timed(lambda score=scorers[step], b=own: score(b))
        n = len(data)
        traf = total["trafilatura"] / n
        print(f"{phase}: trafilatura {1000 * traf:.1f} ms/page, serializer {1000 * total['serializer'] / n:.1f}, "
              + ", ".join(f"scoring {v} {1000 * total[v] / n:.1f}" for v in scorers) + f" (batches of {args.batch})")
        for v in scorers:
            both = (total["serializer"] + total[v]) / n
            print(f"  serializer + scoring {v}: {1 / both:.1f} pages/s = {traf / both:.2f} x trafilatura")
    return 0


if __name__ == "__main__":
    sys.exit(main())
