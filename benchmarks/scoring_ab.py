"""First-sight scoring of a git ref against the working tree's: the CPU-time ratio, and whether the scores agree.

    python benchmarks/scoring_ab.py --pages "$EDREW_WCXB/html" [--ref main] [--limit 100] [--rounds 6] [--batch 1]

For work on the scorer (edrew_scrapy/model, the skip of settled nodes) that should make scoring cheaper:
`git archive REF edrew_scrapy` is unpacked into a temporary folder, the pages are serialised once (by the
working tree), and each round runs `extract.score_pages` of both packages over the same pages, each in a
fresh process on one core (nothing one run leaves in the scorer's caches helps the other), the order
alternating from round to round so that a shared machine's load falls on both alike. Each run warms up
on 24 pages, then scores every other page once, `--batch` pages a call (1: as `edrew extract` runs a
file), and reports the CPU time of those calls. Both read the working tree's models/default.
Prints CPU ms a page per run, the ratio ref / working tree by round and its median, and the largest
difference between the two packages' scores (0 when the change leaves the arithmetic as it was).
"""
from __future__ import annotations

import argparse
import io
import json
import os
import pickle
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WARM = 24


def child(args: argparse.Namespace) -> int:
    """One run, in the package that PYTHONPATH puts first: CPU ms a page, the scores to --out."""
    import importlib

    import numpy as np
    import torch

    torch.set_num_threads(1)
    try:
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    except (AttributeError, OSError):
        pass
    from edrew_scrapy.model.scorer import load_model

    extract = importlib.import_module("edrew_scrapy.extract")
    with open(args.child, "rb") as f:
        pages = pickle.load(f)
    scorer = load_model(ROOT / "models" / "default")
    for i in range(0, WARM, args.batch):
        extract.score_pages(scorer, pages[i:i + args.batch])
    timed = pages[WARM:]
    scores = []
    t0 = time.process_time()
    for i in range(0, len(timed), args.batch):
        scores += extract.score_pages(scorer, timed[i:i + args.batch])
    ms = 1000 * (time.process_time() - t0) / len(timed)
    np.save(args.out, np.concatenate(scores))
    print(json.dumps({"ms": ms, "package": str(Path(extract.__file__).parent)}))
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from benchmark_pages import add_pages_option

    add_pages_option(ap)
    ap.add_argument("--ref", default="main", help="the git ref to compare against (default: main)")
    ap.add_argument("--limit", type=int, default=100, help="pages timed (plus 24 of warm-up)")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--batch", type=int, default=1, help="pages a score call (1: as `edrew extract` runs a file)")
    ap.add_argument("--child", help=argparse.SUPPRESS)  # a pickle of the pages: run once, in this process
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if min(args.batch, args.rounds, args.limit) < 1:
        ap.error("--batch, --rounds and --limit must be at least 1")
    if args.child:
        return child(args)
    if not args.pages:
        ap.error("--pages is required (or EDREW_WCXB)")

    import numpy as np
    from peers import spread_pages

    sys.path.insert(0, str(ROOT))
    from edrew_scrapy.serializer import serialize

    pages = [page for page in (serialize(data) for _, data in spread_pages(Path(args.pages), args.limit + WARM))
             if page.nodes]
    if len(pages) <= WARM:
        raise SystemExit(f"{args.pages}: {len(pages)} pages with text; more than {WARM} are needed")
    with tempfile.TemporaryDirectory(prefix="scoring-ab-") as tmp:
        tar = subprocess.run(["git", "-C", str(ROOT), "archive", args.ref, "edrew_scrapy"], check=True,
                             capture_output=True).stdout
        ref_dir = Path(tmp) / "ref"
        with tarfile.open(fileobj=io.BytesIO(tar)) as t:
            t.extractall(ref_dir, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
        pickled = Path(tmp) / "pages.pkl"
        pickled.write_bytes(pickle.dumps(pages, protocol=pickle.HIGHEST_PROTOCOL))
        sides = {args.ref: ref_dir, "working tree": ROOT}
        times: dict = {name: [] for name in sides}
        outs = {name: Path(tmp) / f"scores-{i}.npy" for i, name in enumerate(sides)}
        for rnd in range(args.rounds):
            order = list(sides) if rnd % 2 == 0 else list(sides)[::-1]
            for name in order:
                env = dict(os.environ, PYTHONPATH=str(sides[name]))
                run = subprocess.run([sys.executable, __file__, "--child", str(pickled), "--out", str(outs[name]),
                                      "--batch", str(args.batch)], env=env, capture_output=True, text=True)
                if run.returncode:
                    raise SystemExit(f"the run of {name} failed:\n{run.stderr[-3000:]}")
                result = json.loads(run.stdout.splitlines()[-1])
                if Path(result["package"]).resolve() != (sides[name] / "edrew_scrapy").resolve():
                    raise SystemExit(f"the run of {name} imported {result['package']}, not its own package")
                times[name].append(result["ms"])
            print(f"round {rnd + 1}: " + ", ".join(f"{name} {times[name][-1]:.2f}" for name in sides) + " CPU ms/page",
                  flush=True)
        ref_scores, new_scores = (np.load(outs[name]) for name in sides)
    ratios = [a / b for a, b in zip(times[args.ref], times["working tree"])]
    print(f"\n{len(pages) - WARM} pages, first sight, {args.batch} a call, one core; CPU ms/page, "
          f"median of {args.rounds}: " + ", ".join(f"{name} {statistics.median(times[name]):.2f}" for name in sides))
    print(f"{args.ref} / working tree, by round: {', '.join(f'{r:.2f}' for r in ratios)} "
          f"(median {statistics.median(ratios):.2f}x: above 1, the working tree scores faster)")
    same = ref_scores.shape == new_scores.shape
    diff = float(np.abs(ref_scores - new_scores).max()) if same and ref_scores.size else 0.0
    verdict = "identical" if same and np.array_equal(ref_scores, new_scores) else "differ"
    detail = f", largest difference {diff:.3g}" if same else f" in shape ({ref_scores.shape}, {new_scores.shape})"
    print(f"scores: {verdict}{detail}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
