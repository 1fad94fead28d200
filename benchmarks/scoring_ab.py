"""First-sight scoring of a git ref against the working tree's: the CPU-time ratio, and whether the scores agree.

    python benchmarks/scoring_ab.py --pages "$EDREW_WCXB/html" [--ref main] [--limit 100] [--rounds 6] [--batch 1]
                                    [--backend numpy] [--model DIR | --models BEFORE,AFTER]
    python benchmarks/scoring_ab.py --pages "$EDREW_WCXB/html" --backends native,numpy [--limit 100] [--rounds 6]

For work on the scorer (edrew_scrapy/model, the skip of settled nodes) that should make scoring cheaper:
`git archive REF edrew_scrapy` is unpacked into a temporary folder, the pages are serialised once (by the
working tree), and each round runs `extract.score_pages` of both packages over the same pages, each in a
fresh process on one core (nothing one run leaves in the scorer's caches helps the other), the order
alternating from round to round so that a shared machine's load falls on both alike. Each run warms up
on 24 pages, then scores every other page once, `--batch` pages a call (1: as `edrew extract` runs a
file), and reports the CPU time of those calls. Both read the working tree's models/default (`--model DIR`:
that model folder instead; `--models BEFORE,AFTER`: the ref scores with BEFORE, the working tree with AFTER,
e.g. `--ref HEAD --models single-head-copy,models/default` for what a model's second head costs).
Prints CPU ms a page per run, the ratio ref / working tree by round and its median, and the largest
difference between the two packages' scores (0 when the change leaves the arithmetic as it was).

`--backends A,B` compares two backends of the working tree instead (e.g. native, PyTorch, against numpy):
the same rounds, each backend in a fresh process on one core with one intra-op thread, and each run's
peak RSS (the process that loaded the model and scored: with numpy it never imports torch). Without it,
both sides run the PyTorch scorer (`edrew_scrapy.model.scorer.load_model`), as every ref has one, or with
`--backend NAME` that backend of each package (`edrew_scrapy.model.base.load_model`, in refs that have it).
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
    import resource

    import numpy as np

    try:
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    except (AttributeError, OSError):
        pass
    if args.backend:
        from edrew_scrapy.model.base import load_model, set_threads

        set_threads(1, args.backend)
        scorer = load_model(args.model, backend=args.backend)
    else:
        import torch

        torch.set_num_threads(1)
        from edrew_scrapy.model.scorer import load_model

        scorer = load_model(args.model)
    extract = importlib.import_module("edrew_scrapy.extract")
    with open(args.child, "rb") as f:
        pages = pickle.load(f)
    for i in range(0, WARM, args.batch):
        extract.score_pages(scorer, pages[i:i + args.batch])
    timed = pages[WARM:]
    scores = []
    t0 = time.process_time()
    for i in range(0, len(timed), args.batch):
        scores += extract.score_pages(scorer, timed[i:i + args.batch])
    ms = 1000 * (time.process_time() - t0) / len(timed)
    np.save(args.out, np.concatenate(scores))
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"ms": ms, "package": str(Path(extract.__file__).parent), "rss_mb": rss_mb,
                      "torch": "torch" in sys.modules}))
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
    ap.add_argument("--backends", help="A,B: two backends of the working tree (e.g. native,numpy) instead of a ref")
    ap.add_argument("--backend", help="the backend both packages score with (e.g. numpy; a ref's own "
                    "edrew_scrapy.model.base.load_model); default: the PyTorch scorer")
    ap.add_argument("--model", default=str(ROOT / "models" / "default"),
                    help="the model folder both sides score with (default: the working tree's models/default)")
    ap.add_argument("--models", help="BEFORE,AFTER: the ref's model folder and the working tree's, instead of --model")
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
    backends = args.backends.split(",") if args.backends else None
    if backends is not None and len(backends) != 2:
        ap.error("--backends takes two backends, e.g. native,numpy")
    if backends and args.backend:
        ap.error("--backend is for a ref against the working tree; --backends names both sides' backends")
    models = args.models.split(",") if args.models else [args.model, args.model]
    if len(models) != 2:
        ap.error("--models takes two model folders, the ref's and the working tree's")
    with tempfile.TemporaryDirectory(prefix="scoring-ab-") as tmp:
        if backends:
            sides = {name: ROOT for name in backends}
        else:
            tar = subprocess.run(["git", "-C", str(ROOT), "archive", args.ref, "edrew_scrapy"], check=True,
                                 capture_output=True).stdout
            ref_dir = Path(tmp) / "ref"
            with tarfile.open(fileobj=io.BytesIO(tar)) as t:
                t.extractall(ref_dir, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
            sides = {args.ref: ref_dir, "working tree": ROOT}
        pickled = Path(tmp) / "pages.pkl"
        pickled.write_bytes(pickle.dumps(pages, protocol=pickle.HIGHEST_PROTOCOL))
        times: dict = {name: [] for name in sides}
        rss: dict = {name: [] for name in sides}
        outs = {name: Path(tmp) / f"scores-{i}.npy" for i, name in enumerate(sides)}
        model_of = dict(zip(sides, models))
        for rnd in range(args.rounds):
            order = list(sides) if rnd % 2 == 0 else list(sides)[::-1]
            for name in order:
                env = dict(os.environ, PYTHONPATH=str(sides[name]))
                command = [sys.executable, __file__, "--child", str(pickled), "--out", str(outs[name]),
                           "--batch", str(args.batch), "--model", model_of[name]]
                if backends or args.backend:
                    command += ["--backend", name if backends else args.backend]
                run = subprocess.run(command, env=env, capture_output=True, text=True)
                if run.returncode:
                    raise SystemExit(f"the run of {name} failed:\n{run.stderr[-3000:]}")
                result = json.loads(run.stdout.splitlines()[-1])
                if Path(result["package"]).resolve() != (sides[name] / "edrew_scrapy").resolve():
                    raise SystemExit(f"the run of {name} imported {result['package']}, not its own package")
                times[name].append(result["ms"])
                rss[name].append(result["rss_mb"])
                if backends and name == "numpy" and result["torch"]:
                    raise SystemExit("the numpy backend's run imported torch")
            print(f"round {rnd + 1}: " + ", ".join(f"{name} {times[name][-1]:.2f}" for name in sides) + " CPU ms/page",
                  flush=True)
        first, second = sides
        ref_scores, new_scores = (np.load(outs[name]) for name in sides)
    ratios = [a / b for a, b in zip(times[first], times[second])]
    print(f"\n{len(pages) - WARM} pages, first sight, {args.batch} a call, one core; CPU ms/page, "
          f"median of {args.rounds}: " + ", ".join(f"{name} {statistics.median(times[name]):.2f}" for name in sides))
    print(f"{first} / {second}, by round: {', '.join(f'{r:.2f}' for r in ratios)} "
          f"(median {statistics.median(ratios):.2f}x: above 1, {second} scores faster)")
    print("peak RSS of the scoring process, median: "
          + ", ".join(f"{name} {statistics.median(rss[name]):.0f} MB" for name in sides))
    same = ref_scores.shape == new_scores.shape
    diff = float(np.abs(ref_scores - new_scores).max()) if same and ref_scores.size else 0.0
    verdict = "identical" if same and np.array_equal(ref_scores, new_scores) else "differ"
    detail = f", largest difference {diff:.3g}" if same else f" in shape ({ref_scores.shape}, {new_scores.shape})"
    print(f"scores: {verdict}{detail}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
