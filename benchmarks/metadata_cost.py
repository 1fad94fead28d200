"""CPU time of a page's metadata next to serialising and scoring it, on WCXB pages, in one process.

Each page is serialised, scored (extract) and described (metadata.page_metadata with the shipped page-type
classifier) in turn; two passes, the second printed separately: the first holds one-time costs (dateparser,
which htmldate's text search loads, takes seconds to initialise; the scorer's caches fill).

    nice -n 10 python benchmarks/metadata_cost.py /work/shared/datasets/wcxb-dev --every 15 --pages 100
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch

from edrew_scrapy.data import read_source
from edrew_scrapy.data.wcxb import load_truth, page_ids
from edrew_scrapy.extract import extract
from edrew_scrapy.metadata import page_metadata
from edrew_scrapy.model.scorer import load_model
from edrew_scrapy.pagetype import default_classifier
from edrew_scrapy.serializer import serialize


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root")
    parser.add_argument("--every", type=int, default=15, help="every Nth page id")
    parser.add_argument("--pages", type=int, default=100)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    root = Path(args.root)
    scorer, classifier = load_model(None), default_classifier(None)
    ids = page_ids(root)[:: args.every][: args.pages]
    for run in ("first pass", "second pass"):
        times = {"serialise": [], "extract": [], "metadata": []}
        for page_id in ids:
            url = load_truth(root, page_id)["url"]
            body = read_source(root / "html" / f"{page_id}.html.gz")
            a = time.process_time()
            page = serialize(body, encoding="utf-8", url=url)
            b = time.process_time()
            extraction = extract([page], scorer=scorer)[0] if page.nodes else None
            c = time.process_time()
            page_metadata(body, page, extraction, classifier, encoding="utf-8", url=url)
            d = time.process_time()
            times["serialise"].append(b - a)
            times["extract"].append(c - b)
            times["metadata"].append(d - c)
        print(f"{run}, {len(ids)} pages: " + ", ".join(
            f"{name} mean {1000 * statistics.fmean(v):.1f} ms (median {1000 * statistics.median(v):.1f})"
            for name, v in times.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
