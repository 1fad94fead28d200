"""Two models' extraction time on the same pages, each page through both in turn.

    python benchmarks/models.py --pages "$EDREW_WCXB/html" --model-a DIR --model-b DIR [--skip 300] [--limit 100]

For an ablation that changes the model (a wider biLM, a head with DOM context): `extract()` (scoring and
the decision rules) of each serialized page with model A and with model B, one after the other in an
order that alternates from page to page, one core, CPU time (time.process_time), so that whatever else
runs on the machine falls on both alike. Each model keeps its own caches, as a crawl would; pages are
seen once (first sight). Prints ms a page for each and B/A.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmark_pages import load_pages, one_core  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=Path, default=os.environ.get("EDREW_WCXB_HTML"))
    ap.add_argument("--model-a", required=True)
    ap.add_argument("--model-b", required=True)
    ap.add_argument("--skip", type=int, default=0, help="leave out the folder's first N pages")
    ap.add_argument("--limit", type=int, default=100)
    args = ap.parse_args(argv)
    if args.pages is None:
        ap.error("--pages (or EDREW_WCXB_HTML) is required")
    one_core()
    from tqdm import tqdm

    from edrew_scrapy.extract import extract
    from edrew_scrapy.model.scorer import load_model
    from edrew_scrapy.serializer import serialize

    models = (load_model(args.model_a), load_model(args.model_b))
    pages = [serialize(body) for body in load_pages(args.pages, args.skip + args.limit)[args.skip:]]
    spent = [0.0, 0.0]
    for i, page in enumerate(tqdm(pages, desc="pages", unit="page")):
        for k in ((0, 1) if i % 2 == 0 else (1, 0)):
            t0 = time.process_time()
            extract([page], scorer=models[k])
            spent[k] += time.process_time() - t0
    n = max(len(pages), 1)
    print(f"{len(pages)} pages: A {1000 * spent[0] / n:.2f} ms, B {1000 * spent[1] / n:.2f} ms a page, "
          f"B/A {spent[1] / max(spent[0], 1e-9):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
