"""Does a main-content model keep a detail page's facts on a vertical it never saw?

A proxy check, not a metric of the method: SWDE's ground truth names attribute values (a book's title,
author, ISBN, ...), not main content, and a main-content model is not asked to find them. But a reader
of a shop's product page would call its title and details content, so the share of pages whose
extracted text holds each value says how a WCXB-trained model carries over to pages of a kind and an
age (SWDE: 2011, nothing declared in schema.org or Open Graph) that it was never trained on.

    python experiments/swde_proxy.py --swde "$EDREW_SWDE" --pages 150 --model default --model /tmp/runs/other

Prints, per site and attribute, the share of the first N pages (page-id order) whose extraction holds
the value (case, accents and punctuation ignored), for each model and for trafilatura on the same pages.
"""
from __future__ import annotations

import argparse
import os
import re
import sys
import unicodedata
from collections import Counter
from pathlib import Path


def _norm(text: str) -> str:
    return " " + re.sub(r"\W+", " ", unicodedata.normalize("NFKC", text).lower()).strip() + " "


def holds(text: str, values) -> bool:
    """Whether `text` holds one of `values` as whole words, case, accents and punctuation aside."""
    haystack = _norm(text)
    return any(_norm(v).strip() and _norm(v) in haystack for v in values)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--swde", default=os.environ.get("EDREW_SWDE"), help="SWDE folder (default $EDREW_SWDE)")
    parser.add_argument("--pages", type=int, default=150, help="first N pages of each site (default %(default)s)")
    parser.add_argument("--model", action="append", default=None,
                        help="a main-content model directory or name; repeat to compare (default: default)")
    parser.add_argument("--no-trafilatura", action="store_true")
    args = parser.parse_args(argv)
    if not args.swde or not Path(args.swde, "pages").is_dir():
        parser.error("give the SWDE folder (--swde or $EDREW_SWDE): it must hold pages/ and groundtruth/")

    import torch
    from tqdm import tqdm

    from edrew_scrapy.data import read_source
    from edrew_scrapy.data.swde import load_groundtruth, page_files, site_folders
    from edrew_scrapy.extract import extract
    from edrew_scrapy.model.scorer import load_model
    from edrew_scrapy.serializer import serialize

    torch.set_num_threads(1)
    models = {name: load_model(name) for name in (args.model or ["default"])}
    extractors = list(models) + ([] if args.no_trafilatura else ["trafilatura"])
    if not args.no_trafilatura:
        import trafilatura
    for vertical, site, folder in site_folders(args.swde):
        truth = load_groundtruth(args.swde, vertical, site)
        hit, total = Counter(), Counter()
        files = [(pid, path) for pid, path in page_files(folder) if pid in truth][: args.pages]
        for pid, path in tqdm(files, desc=site, unit="page", file=sys.stderr):
            data = read_source(path)
            page = serialize(data)
            texts = {name: extract([page], scorer=scorer)[0].text for name, scorer in models.items()}
            if not args.no_trafilatura:
                texts["trafilatura"] = trafilatura.extract(data.decode("utf-8", "replace")) or ""
            for attr, values in truth[pid].items():
                if not values:
                    continue
                total[attr] += 1
                for name, text in texts.items():
                    hit[name, attr] += holds(text, values)
        print(f"{vertical}-{site}, {len(files)} pages: share of pages whose text holds the value")
        print("  " + "attribute".ljust(18) + "".join(name[-24:].rjust(26) for name in extractors))
        for attr in sorted(total):
            print("  " + attr.ljust(18) + "".join(f"{hit[name, attr] / total[attr]:26.2f}" for name in extractors))
    return 0


if __name__ == "__main__":
    sys.exit(main())
