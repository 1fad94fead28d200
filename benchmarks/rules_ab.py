"""The decision rules of a git ref against the working tree's: identical output, and the CPU-time ratio.

    python benchmarks/rules_ab.py --pages "$EDREW_WCXB/html" [MORE_FOLDERS ...] [--ref main] [--limit 300]
        [--repeats 2]      # --repeats 0: the identity check alone

For work on the rules that must not change what they decide: `git archive REF edrew_scrapy` is unpacked into
a temporary folder as the package `edrew_scrapy_ref` (serializer_ab.py's way). Each page is serialized and
scored once, by the working tree's serializer and shipped model; both packages' extract() then run on those
Pages with a scorer that hands back the scores already computed, so that they differ in their rules alone.
The run fails (exit 1) and names the first differing field when any Extraction differs (text, kept nodes
with score, path and images, comments, `rule`), also with each optional rule left out in turn (`rules_off`).
Then the two are timed page by page in an order that alternates, in CPU time of this process, so that a
shared machine's load falls on both alike; read the ratio, not the absolute times.
"""
from __future__ import annotations

import argparse
import dataclasses
import gc
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmark_pages import alternating_cpu_ms, load_pages  # noqa: E402
from serializer_ab import ref_serialize  # noqa: E402

from edrew_scrapy.extract import extract, score_pages  # noqa: E402
from edrew_scrapy.model.base import load_model  # noqa: E402
from edrew_scrapy.rules import OPTIONAL_RULES  # noqa: E402
from edrew_scrapy.serializer import serialize  # noqa: E402


class Replay:
    """A scorer that gives back each page's scores as the real scorer computed them before (looked up by the
    Page object), with the real scorer's threshold and region share."""

    def __init__(self, scorer, pages):
        self.threshold = scorer.threshold
        self.region_share = getattr(scorer, "region_share", None)
        self._scores = {id(p): s for p, s in zip(pages, score_pages(scorer, pages))}

    def add_twins(self, twins):
        """The scores of page p for twins[id(p)] too."""
        for key, twin in twins.items():
            self._scores[id(twin)] = self._scores[key]

    def score(self, pages, skip=None):
        return [self._scores[id(p)] for p in pages]


def as_ref_page(page, ref_page, ref_node):
    """`page` as a Page of the ref's package: every field the same (the nodes too)."""
    values = {f.name: getattr(page, f.name) for f in dataclasses.fields(page)}
    values["nodes"] = [ref_node(**{f.name: getattr(n, f.name) for f in dataclasses.fields(n)}) for n in page.nodes]
    return ref_page(**{k: v for k, v in values.items() if k in {f.name for f in dataclasses.fields(ref_page)}})


def first_difference(a, b) -> str:
    """The first field (of every field but the replayed scores) in which two Extractions, of the ref's package and
    of the tree's, differ; "" if none."""
    x, y = dataclasses.asdict(a), dataclasses.asdict(b)
    if set(x) != set(y):
        return f"fields: {sorted(x)} != {sorted(y)}"
    for key in x:
        if key != "scores" and x[key] != y[key]:
            if key in ("nodes", "comments"):
                at = next((i for i, (p, q) in enumerate(zip(x[key], y[key])) if p != q), min(len(x[key]), len(y[key])))
                return f"{key}: {len(x[key])} != {len(y[key])} nodes, or node {at} differs"
            return f"{key}: {x[key]!r:.120} != {y[key]!r:.120}"
    return ""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pages", type=Path, nargs="+", required=True, help="folders of .html / .html.gz pages")
    ap.add_argument("--ref", default="main", help="git ref whose rules are the reference (default: main)")
    ap.add_argument("--limit", type=int, default=300, help="pages from each folder")
    ap.add_argument("--repeats", type=int, default=2,
                    help="timed passes over the pages (0: only the identity check)")
    ap.add_argument("--no-off", action="store_true", help="skip the identity check with each rule left out")
    args = ap.parse_args()
    raw = [page for folder in args.pages for page in load_pages(folder, args.limit, progress=False)]
    pages = [p for p in (serialize(r, url="https://example.com/a/") for r in raw) if p.nodes]
    replay = Replay(load_model(), pages)
    with tempfile.TemporaryDirectory(prefix="rules-ab-") as folder:
        ref_serialize(args.ref, folder)  # unpacks the ref as edrew_scrapy_ref and puts it on sys.path
        from edrew_scrapy_ref.extract import extract as ref_extract
        from edrew_scrapy_ref.page import Node as RefNode
        from edrew_scrapy_ref.page import Page as RefPage

        # the same pages as the ref's own Page objects (its extract() takes no other), with the same scores
        twins = {id(p): as_ref_page(p, RefPage, RefNode) for p in pages}
        replay.add_twins(twins)
        differ = 0
        for off in [()] + ([] if args.no_off else [(r,) for r in OPTIONAL_RULES]):
            for n, page in enumerate(pages):
                a = ref_extract([twins[id(page)]], replay, rules_off=off)[0]
                b = extract([page], replay, rules_off=off)[0]
                why = first_difference(a, b)
                if why:
                    differ += 1
                    if differ <= 5:
                        print(f"differs (page {n} of the folders' order, off={off}): {why}")
            if not off:
                print(f"{len(pages)} pages: {differ} differ from {args.ref}'s output")
        print(f"{len(pages)} pages x {1 + (0 if args.no_off else len(OPTIONAL_RULES))} rule sets: "
              f"{differ} extractions differ from {args.ref}'s")
        if args.repeats <= 0:
            return 1 if differ else 0
        gc.collect()
        gc.freeze()  # the pages and the model stay: each collection below then looks at the calls' garbage alone
        fns = {"ref": ref_extract, "tree": extract}
        ms = alternating_cpu_ms(pages, args.repeats,
                                lambda who, page: fns[who]([twins[id(page)] if who == "ref" else page], replay))
        ref_ms, tree_ms = ms["ref"], ms["tree"]
        print(f"CPU ms/page of extract() with scores given (the rules): {args.ref} {ref_ms:.2f}, "
              f"working tree {tree_ms:.2f}; {args.ref}/working tree {ref_ms / tree_ms:.2f}x")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
