"""Where a crawl's worker process spends a page: serialise, score, decide, metadata, pickle, garbage collection.

    python benchmarks/worker_path.py --pages "$EDREW_WCXB/html" [--limit 96] [--batch 8] [--no-metadata]
                                     [--rounds 3] [--gc-ab]

Runs what a worker of `EDREW_WORKERS >= 1` runs (edrew_scrapy.scrapy.worker: `init`, then `process` on
batches of `--batch` pages, each page once, after a few warm-up batches: first sight, as a crawl meets
pages) in this process, on one core, and times in CPU seconds each step of the path: `serialize`,
`Scorer.score` with its parts (the biLM over new reTPS, the text vectors, the shallow features, the head),
the decision rules (`relevant_mask`), `page_metadata`, the pickling of the results (what the worker sends
back) and the cyclic garbage collector. With --gc-ab each round also runs the worker with the collector's
automatic runs left on (as before worker.init turned them off), interleaved, each run in a process of its
own, and prints the ratio.
The steps nest (score is part of extract); read shares and ratios, not absolute times, on a shared machine.
"""
from __future__ import annotations

import argparse
import functools
import gc
import importlib
import json
import pickle
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchmark_pages import add_pages_option, one_core  # noqa: E402
from peers import spread_pages  # noqa: E402

_T: dict = defaultdict(float)
_GC = [0.0, 0, 0.0]  # seconds, collections, start of the running one


def _timed(owner, name: str, label: str) -> None:
    f = getattr(owner, name)

    @functools.wraps(f)
    def timed(*args, **kwargs):
        t0 = time.process_time()
        try:
            return f(*args, **kwargs)
        finally:
            _T[label] += time.process_time() - t0

    setattr(owner, name, timed)


def _on_gc(phase: str, info: dict) -> None:
    if phase == "start":
        _GC[2] = time.process_time()
    else:
        _GC[0] += time.process_time() - _GC[2]
        _GC[1] += 1


# (module or class, function, label), in the order printed; indented labels are parts of the one above
_STEPS = [
    ("serializer", "serialize", "serialize"), ("extract", "extract", "extract (score + rules + items)"),
    ("Scorer", "score", "  score"), ("Scorer", "_sequence_vectors", "    biLM over reTPS"),
    ("Scorer", "_text_vectors", "    text vectors"), ("CharacterEncoder", "forward", "    (character CNN, in both)"),
    ("scorer", "page_features", "    shallow features"), ("Head", "forward", "    head"),
    ("extract", "relevant_mask", "  decision rules"), ("metadata", "page_metadata", "page_metadata"),
]


def instrument() -> None:
    from edrew_scrapy import serializer
    from edrew_scrapy.model import elmo, scorer

    extract = importlib.import_module("edrew_scrapy.extract")
    metadata = importlib.import_module("edrew_scrapy.metadata")
    owners = {"serializer": serializer, "extract": extract, "Scorer": scorer.Scorer, "scorer": scorer,
              "Head": scorer.Head, "CharacterEncoder": elmo.CharacterEncoder, "metadata": metadata}
    for owner, name, label in _STEPS:
        _timed(owners[owner], name, label)
    gc.callbacks.append(_on_gc)


def run(pages: list, batch: int, metadata: bool, automatic_gc: bool) -> dict:
    """One fresh worker over `pages` (the first 3 batches warm it up): CPU ms a page by step."""
    from edrew_scrapy.scrapy import worker

    worker.init(None, "native", 1, None, 128.0, None, metadata)
    if "error" in worker._state:
        raise SystemExit(f"the worker could not start: {worker._state['error']}")
    if automatic_gc:
        gc.enable()
        del worker._state["collector"]
    warm, timed = pages[:3 * batch], pages[3 * batch:]
    for i in range(0, len(warm), batch):
        worker.process([(d, None, f"https://example.com/{i}") for d in warm[i:i + batch]])
    _T.clear()
    _GC[:2] = [0.0, 0]
    t_all = time.process_time()
    for i in range(0, len(timed), batch):
        out = worker.process([(d, None, f"https://example.com/{i}") for d in timed[i:i + batch]])
        t0 = time.process_time()
        pickle.dumps(out, protocol=pickle.HIGHEST_PROTOCOL)
        _T["pickle the results"] += time.process_time() - t0
        del out  # as the pool does once the results are sent
    total = time.process_time() - t_all
    n = len(timed)
    out = {k: 1000 * v / n for k, v in _T.items()}
    out["garbage collection"] = 1000 * _GC[0] / n
    out["collections"] = _GC[1]
    out["worker path"] = 1000 * total / n
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_pages_option(ap)
    ap.add_argument("--limit", type=int, default=96, help="pages timed (plus 3 batches of warm-up)")
    ap.add_argument("--batch", type=int, default=8, help="pages a batch (EDREW_BATCH_PAGES)")
    ap.add_argument("--no-metadata", action="store_true", help="as with EDREW_METADATA=False")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--gc-ab", action="store_true",
                    help="each round, also a worker with the collector's automatic runs on, order alternating")
    ap.add_argument("--one", choices=["shipped", "automatic"], help=argparse.SUPPRESS)  # a run, in a child
    args = ap.parse_args()
    if not args.pages:
        ap.error("--pages is required (or EDREW_WCXB)")
    if args.one:
        one_core()
        instrument()
        pages = [data for _, data in spread_pages(Path(args.pages), args.limit + 3 * args.batch)]
        print(json.dumps(run(pages, args.batch, not args.no_metadata, args.one == "automatic")))
        return 0
    variants = [("as shipped", "shipped")] + ([("automatic gc", "automatic")] if args.gc_ab else [])
    results: dict = {name: [] for name, _ in variants}
    for rnd in range(args.rounds):
        order = variants if rnd % 2 == 0 else variants[::-1]
        for name, one in order:
            # each run in a fresh process: nothing one leaves warm (caches, lazy imports) helps the next
            cmd = [sys.executable, __file__, "--pages", str(args.pages), "--limit", str(args.limit),
                   "--batch", str(args.batch), "--one", one] + ["--no-metadata"] * args.no_metadata
            r = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.splitlines()[-1])
            results[name].append(r)
            print(f"round {rnd + 1}, {name}: {r['worker path']:.1f} ms/page", flush=True)
    print(f"\n{args.limit} pages, batches of {args.batch}, metadata {'off' if args.no_metadata else 'on'}; CPU ms a "
          f"page, median of {args.rounds} round(s)")
    keys = ["worker path"] + [label for *_, label in _STEPS] + ["pickle the results", "garbage collection"]
    print(f"{'':<36}" + "".join(f"{name:>16}" for name, _ in variants))
    for k in keys:
        cells = "".join(f"{statistics.median(r.get(k, 0.0) for r in results[name]):>16.2f}" for name, _ in variants)
        print(f"{k:<36}{cells}")
    print(f"{'collections':<36}" + "".join(f"{statistics.median(r['collections'] for r in results[name]):>16.0f}"
                                            for name, _ in variants))
    if args.gc_ab:
        ratios = [a["worker path"] / b["worker path"] for b, a in zip(results["as shipped"], results["automatic gc"])]
        print(f"\nautomatic gc / as shipped, CPU a page: {', '.join(f'{r:.2f}' for r in ratios)} "
              f"(median {statistics.median(ratios):.2f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
