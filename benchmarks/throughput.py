"""Extraction throughput on one core, side by side on the same pages in one run.

    python benchmarks/throughput.py --pages ../shared/datasets/wcxb-dev/html [--limit 200] [--model DIR]
                                    [--batch N]

Measures pages/s for: the bare HTML parse (lxml, the floor), the EDREW serializer, serializer +
scoring with the model, up to the extracted nodes as `edrew_scrapy.extract.extract` returns them (each
page scored on its own, after 20 warm-up pages; then the same pages a
second time, every cache warm), and `trafilatura.extract`. Prints the ratios, and writes a PNG of
ms/page against nodes/page (--plot, default output/throughput.png) to show the cost is linear.
Target (issue #5): serializer + scoring >= 3 x trafilatura's pages/s.

--batch N scores N pages per extract() call, as a crawl does (EDREW_BATCH_PAGES, default 8): the biLM's
sequential steps and the model calls are then shared by N pages. Every page is still serialized on its
own, and the per-page times of the plot are the batch's time shared equally among its pages.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmark_pages import load_pages, one_core  # noqa: E402


def rate(name: str, fn, pages: list, batch: int = 1) -> tuple:
    """(pages/s, per-page seconds) over one pass; `fn` takes a list of `batch` pages (the last one
    may be shorter) when batch > 1, else one page."""
    from tqdm import tqdm

    per_page = []
    t_all = time.perf_counter()
    if batch <= 1:
        for page in tqdm(pages, desc=name, unit="page", leave=False):
            t0 = time.perf_counter()
            fn(page)
            per_page.append(time.perf_counter() - t0)
    else:
        for start in tqdm(range(0, len(pages), batch), desc=name, unit="batch", leave=False):
            chunk = pages[start:start + batch]
            t0 = time.perf_counter()
            fn(chunk)
            per_page.extend([(time.perf_counter() - t0) / len(chunk)] * len(chunk))
    return len(pages) / (time.perf_counter() - t_all), per_page


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pages", type=Path, default=os.environ.get("EDREW_WCXB_HTML"))
    ap.add_argument("--limit", type=int, default=200)
    ap.add_argument("--model", default=None, help="model directory (default: models/default)")
    ap.add_argument("--plot", type=Path, default=Path("output/throughput.png"))
    ap.add_argument("--no-trafilatura", action="store_true")
    ap.add_argument("--batch", type=int, default=1,
                    help="pages per extract() call, as a crawl's EDREW_BATCH_PAGES (default: 1)")
    args = ap.parse_args()
    if not args.pages:
        ap.error("--pages is required (or EDREW_WCXB_HTML)")

    one_core()
    from edrew_scrapy.model.scorer import load_model
    from edrew_scrapy.serializer import serialize

    pages = load_pages(args.pages, args.limit)
    scorer = load_model(args.model)
    batch = max(1, args.batch)
    print(f"{len(pages)} pages, mean {sum(map(len, pages)) / len(pages) / 1024:.0f} KB; one core; "
          f"model {scorer.directory}; {batch} page(s) per extract() call")

    from edrew_scrapy.extract import extract as edrew_extract

    # warm-up: the caches a crawl would have after its first pages
    for data in pages[:20]:
        edrew_extract([serialize(data)], scorer=scorer)

    rows = []
    try:
        import lxml.etree as etree

        parser = etree.HTMLParser()
        rows.append(("lxml parse (floor)",) + rate("lxml", lambda d: etree.fromstring(d, parser), pages))
    except ImportError:
        pass
    rows.append(("edrew serializer",) + rate("serializer", serialize, pages))
    node_counts = [len(serialize(d).nodes) for d in pages]

    def extract(data):
        # what a user gets, as trafilatura.extract returns its text: the page's relevant nodes after the
        # model card's threshold, boilerplate rule and main-region step
        batch_of = data if batch > 1 else [data]
        edrew_extract([serialize(d) for d in batch_of], scorer=scorer)

    label = "edrew serializer + scoring" if batch == 1 else f"edrew ser. + scoring, x{batch}"
    edrew = (label,) + rate("edrew", extract, pages, batch)
    rows.append(edrew)
    # The same pages again: every reTPS, word and text is cached, as for the recurring templates,
    # menus and footers of a crawl of one site (a lower bound on the cost there, not a typical one).
    rows.append(("  same, caches warm",) + rate("edrew warm", extract, pages, batch))
    if not args.no_trafilatura:
        try:
            import trafilatura

            rows.append(("trafilatura.extract",) + rate("trafilatura", lambda d: trafilatura.extract(d), pages))
        except ImportError:
            pass
    base = dict((r[0], r[1]) for r in rows)
    print(f"\n{'':<30}{'pages/s':>10}{'ms/page':>10}{'edrew / this':>15}")
    for name, pps, _ in rows:
        print(f"{name:<30}{pps:>10.1f}{1000 / pps:>10.1f}{edrew[1] / pps:>15.2f}")
    if "trafilatura.extract" in base:
        ratio = edrew[1] / base["trafilatura.extract"]
        print(f"target: serializer + scoring >= 3 x trafilatura -> {ratio:.2f} x "
              f"({'PASS' if ratio >= 3 else 'FAIL'})")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        args.plot.parent.mkdir(parents=True, exist_ok=True)
        fig, ax = plt.subplots(figsize=(6, 4))
        ax.scatter(node_counts, [1000 * t for t in edrew[2]], s=8, alpha=0.6)
        ax.set_xlabel("text nodes per page")
        ax.set_ylabel("serializer + scoring, ms per page")
        ax.set_title("EDREW cost per page (one core)")
        fig.tight_layout()
        fig.savefig(args.plot, dpi=120)
        print(f"plot: {args.plot}")
    except ImportError:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
