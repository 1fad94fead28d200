"""`edrew extract` against trafilatura and rs-trafilatura on first-seen pages, one core, in one run.

    # rs-trafilatura (Rust) ships a cp312 wheel only: a Python 3.12 venv of its own, a benchmark
    # peer and never a dependency of this project
    bash scripts/rs-trafilatura-venv.sh     # builds .venv-rs from a Python 3.12 (pyenv's, or EDREW_PYTHON312)
    python benchmarks/peers.py --pages "$EDREW_WCXB/html" [--limit 200] [--rs-python .venv-rs/bin/python]
                               [--batch 8]
                               [--plot docs/img/peers-ms-per-page.png]

Each group of --batch pages goes through every extractor in turn, in an order that rotates from group
to group, so that the load of a shared machine falls on all alike; the ratios are the numbers to read,
not the absolute times. Extractors: ours as `edrew extract` runs its inputs (serialize each page's bytes,
then extract() with the shipped model on the group in one call, 8 pages as the command's default; the
group's time shared out evenly over its pages, so the plot shows group means for ours), the same with the
serializer on our own tokenizer (the serializer before issue #34), trafilatura.extract, and
rs_trafilatura.extract_bytes in a worker process on the same core (only the call is timed there). First
sight: 20 warm-up pages first, as benchmarks/interleaved.py does, then each page once. Prints ms/page and
pages/s ratios, and writes a PNG of ms/page against page size.
Target (issue #34): >= 4x trafilatura's pages/s, >= 1.5x rs-trafilatura's.
"""
from __future__ import annotations

import argparse
import gc
import gzip
import os
import struct
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmark_pages import add_pages_option, one_core  # noqa: E402

_RS_WORKER = r"""
import os, struct, sys, time
import rs_trafilatura
os.sched_setaffinity(0, {int(sys.argv[1])})
inp, out = sys.stdin.buffer, sys.stdout
while True:
    head = inp.read(4)
    if len(head) < 4:
        break
    data = inp.read(struct.unpack("<I", head)[0])
    t0 = time.perf_counter()
    rs_trafilatura.extract_bytes(data)
    out.write(f"{time.perf_counter() - t0!r}\n")
    out.flush()
"""


class RsWorker:
    """rs_trafilatura in its own (3.12) interpreter: a page in, the seconds its extraction took out."""

    def __init__(self, python: str, cpu: int):
        self.proc = subprocess.Popen([python, "-c", _RS_WORKER, str(cpu)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=False)

    def __call__(self, data: bytes) -> float:
        self.proc.stdin.write(struct.pack("<I", len(data)) + data)
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit("the rs-trafilatura worker stopped (is rs-trafilatura installed in --rs-python?)")
        return float(line)

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def spread_pages(folder: Path, count: int) -> list:
    """`count` pages evenly spaced over the folder's sorted .html / .gz files, as (name, bytes)."""
    files = sorted(p for p in folder.iterdir() if p.name.endswith((".html", ".htm", ".gz")))
    if not files:
        raise SystemExit(f"{folder}: no .html, .htm or .gz pages")
    step = max(1, len(files) // count)
    out = []
    for f in files[::step][:count]:
        raw = f.read_bytes()
        out.append((f.name, gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw))
    return out


def plot(path: Path, sizes: list, times: dict) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    style = {"edrew extract": ("tab:blue", "o"), "trafilatura": ("tab:orange", "s"),
             "rs-trafilatura": ("tab:green", "^"), "edrew extract, tokenizer serializer": ("tab:gray", ".")}
    kb = [s / 1024 for s in sizes]
    for name, ms in times.items():
        color, marker = style.get(name, ("black", "x"))
        ax.scatter(kb, ms, s=10, alpha=0.6, color=color, marker=marker,
                   label=f"{name} (mean {sum(ms) / len(ms):.0f} ms)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("page size (KB)")
    ax.set_ylabel("ms per page (one core, first sight)")
    ax.set_title(f"{len(sizes)} WCXB pages, each through every extractor in turn")
    ax.legend(fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_pages_option(ap)
    ap.add_argument("--limit", type=int, default=200)
    ap.add_argument("--rs-python", default=".venv-rs/bin/python",
                    help="a Python 3.12 with rs-trafilatura installed ('' to leave it out)")
    ap.add_argument("--plot", type=Path, default=Path("docs/img/peers-ms-per-page.png"))
    ap.add_argument("--backend", default=None,
                    help="scoring backend (numpy, native, allennlp; default: `edrew extract`'s default)")
    ap.add_argument("--batch", type=int, default=8,
                    help="pages a scoring call, as `edrew extract --batch` (default: 8, the command's default)")
    args = ap.parse_args()
    if not args.pages:
        ap.error("--pages is required (or EDREW_WCXB)")
    if args.batch < 1:
        ap.error("--batch must be at least 1")

    import trafilatura

    one_core()
    from edrew_scrapy import serializer as serializer_module
    from edrew_scrapy.collector import BetweenUnits
    from edrew_scrapy.extract import extract
    from edrew_scrapy.model.base import DEFAULT_BACKEND, load_model
    from edrew_scrapy.serializer import serialize

    # one scorer each: a scorer's caches (words, sequences, texts) would hand the second of the two the
    # first's work on the same page, which is no longer a first sight
    backend = args.backend or DEFAULT_BACKEND
    scorer, scorer_tokenizer = load_model(backend=backend), load_model(backend=backend)
    print(f"ours: the {backend} backend")

    between = BetweenUnits()

    def ours(group: list, scorer=scorer) -> list:
        # as `edrew extract` runs its inputs: garbage collected before each group, not during it
        # (collector.py), the group's pages scored in one call
        t0 = time.perf_counter()
        enabled = gc.isenabled()
        gc.disable()
        try:
            between.collect()
            extract([serialize(data) for data in group], scorer=scorer)
        finally:
            if enabled:
                gc.enable()
        return [(time.perf_counter() - t0) / len(group)] * len(group)

    def ours_tokenizer(group: list) -> list:
        build = serializer_module._build
        serializer_module._build = serializer_module._build_with_tokenizer
        try:
            return ours(group, scorer_tokenizer)
        finally:
            serializer_module._build = build

    def traf(group: list) -> list:
        out = []
        for data in group:
            t0 = time.perf_counter()
            trafilatura.extract(data)
            out.append(time.perf_counter() - t0)
        return out

    extractors = {"edrew extract": ours, "edrew extract, tokenizer serializer": ours_tokenizer,
                  "trafilatura": traf}
    worker = None
    if args.rs_python:
        cpu = min(os.sched_getaffinity(0))
        worker = RsWorker(args.rs_python, cpu)
        extractors["rs-trafilatura"] = lambda group: [worker(data) for data in group]
    pages = spread_pages(args.pages, args.limit + 20)
    warm, pages = pages[:20], pages[20:]
    for start in range(0, len(warm), args.batch):
        for fn in extractors.values():
            fn([data for _, data in warm[start:start + args.batch]])
    names = list(extractors)
    times = {name: [] for name in names}
    from tqdm import tqdm

    groups = [[data for _, data in pages[start:start + args.batch]] for start in range(0, len(pages), args.batch)]
    for i, group in enumerate(tqdm(groups, desc=f"groups of {args.batch} pages", unit="group")):
        k = i % len(names)
        for name in names[k:] + names[:k]:
            times[name].extend(1000 * seconds for seconds in extractors[name](group))
    if worker is not None:
        worker.close()

    n = len(pages)
    mean = {name: sum(ms) / n for name, ms in times.items()}
    print(f"\n{n} pages (evenly spaced over {args.pages}, mean {sum(len(d) for _, d in pages) / n / 1024:.0f} KB), "
          f"one core, first sight; each group of {args.batch} through every extractor in turn")
    print(f"{'':<38}{'ms/page':>10}{'pages/s':>10}{'edrew extract x':>18}")
    for name in names:
        print(f"{name:<38}{mean[name]:>10.1f}{1000 / mean[name]:>10.1f}{mean[name] / mean['edrew extract']:>18.2f}")
    ours_ms = mean["edrew extract"]
    print(f"target: >= 4x trafilatura's pages/s -> {mean['trafilatura'] / ours_ms:.2f}x "
          f"{'PASS' if mean['trafilatura'] / ours_ms >= 4 else 'FAIL'}")
    if "rs-trafilatura" in mean:
        print(f"target: >= 1.5x rs-trafilatura's pages/s -> {mean['rs-trafilatura'] / ours_ms:.2f}x "
              f"{'PASS' if mean['rs-trafilatura'] / ours_ms >= 1.5 else 'FAIL'}")
    if args.plot:
        plot(args.plot, [len(d) for _, d in pages], times)
        print(f"plot: {args.plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
