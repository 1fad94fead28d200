"""CPU time of a page's metadata next to serialising and scoring it, on WCXB pages (or a simple set's,
`--kind simple`); and against another revision's metadata.py and pagetype.py, side by side, as ratios.

Each page is serialised, scored (extract) and described (metadata.page_metadata with the shipped page-type
classifier) in turn. The serializer reads the page's declared metadata from its tree (metadata.read_tree,
as a crawl does): that time is counted as metadata, not as serialising. With `--against REV` the metadata.py
and pagetype.py of git revision REV are loaded beside this checkout's (REV's metadata with REV's page-type
features and the same shipped weights, or REV's own where its features are of another version). Where REV's
metadata has a `read_tree` of its own, the serializer's one tree is read by both (in alternating order), each
revision describes the page with what its own reader read, and each is charged its own reading: the same work
on both sides. A REV without `read_tree` parses the page itself, as it did. Both
describe every page twice, A B B A on even pages and B A A B on odd ones; the ratios (this / REV) and how
many pages get the same fields from both are printed. One warm-up pass first, not counted: it holds one-time
costs (dateparser, which htmldate's text search loads, takes seconds to initialise; the scorer's caches fill).
htmldate's cache of parsed date texts is emptied before each description, so every page pays its date parses
as a new one.

    nice -n 10 python benchmarks/metadata_cost.py /work/shared/datasets/wcxb-dev --every 15 --pages 100 --against main
    nice -n 10 python benchmarks/metadata_cost.py $S/fundus-news --kind simple --every 2 --against main
"""
from __future__ import annotations

import argparse
import copy
import importlib.util
import inspect
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import htmldate.extractors
import torch

from edrew_scrapy.data import read_source
from edrew_scrapy.extract import extract
from edrew_scrapy.metadata import page_metadata, read_tree
from edrew_scrapy.model.scorer import load_model
from edrew_scrapy.pagetype import default_classifier
from edrew_scrapy.serializer import serialize

ROOT = Path(__file__).resolve().parent.parent


def module_of_revision(rev: str, name: str = "metadata"):
    """edrew_scrapy/NAME.py as it is at git revision `rev`, imported as a module of the package (its
    relative imports resolve against this checkout)."""
    source = subprocess.run(["git", "show", f"{rev}:edrew_scrapy/{name}.py"], cwd=ROOT, check=True,
                            capture_output=True, text=True).stdout
    path = Path(tempfile.mkdtemp(prefix="edrew-metadata-")) / f"{name}_against.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(f"edrew_scrapy._{name}_against", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def classifier_of_revision(rev: str):
    """REV's page-type classifier: its pagetype.py with the shipped weights, or with REV's own
    models/default/pagetype.json where the shipped ones are of another feature version."""
    module = module_of_revision(rev, "pagetype")
    try:
        return module.default_classifier(None)
    except module.PageTypeError:
        weights = subprocess.run(["git", "show", f"{rev}:models/default/pagetype.json"], cwd=ROOT, check=True,
                                 capture_output=True).stdout
        path = Path(tempfile.mkdtemp(prefix="edrew-pagetype-")) / "pagetype.json"
        path.write_bytes(weights)
        return module.PageTypeClassifier.load(path)


def _line(name: str, values) -> str:
    return f"{name} mean {1000 * statistics.fmean(values):.2f} ms (median {1000 * statistics.median(values):.2f})"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root")
    parser.add_argument("--kind", choices=("wcxb", "simple"), default="wcxb", help="the set's format")
    parser.add_argument("--every", type=int, default=15, help="every Nth page id")
    parser.add_argument("--pages", type=int, default=100)
    parser.add_argument("--against", default=None, help="a git revision whose metadata.py to time beside this one")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    root = Path(args.root)
    scorer, classifier = load_model(None), default_classifier(None)
    other = module_of_revision(args.against) if args.against else None
    # the revision's page-type features (its classifier's predict), with the same shipped weights, or its own
    # where it computes another version of the features
    other_classifier = (classifier_of_revision(args.against) if other and classifier is not None else classifier)
    if other_classifier is not classifier and "declared" in inspect.signature(getattr(other, "_page_type",
                                                                                        lambda c, p: None)).parameters:
        # REV's metadata imports this checkout's pagetype module (relative imports), whose PageTypeClassifier
        # its `_page_type` checks for: REV's own classifier class would be handed the page without `declared`
        other._page_type = lambda types, page, declared: types.predict(page, declared)
    from edrew_scrapy.training.metadata_eval import read_records

    records = read_records(args.kind, root, root.name, None, None)[:: args.every][: args.pages]
    inputs = [(r.url, read_source(r.source), r.encoding) for r in records]
    ids = records
    reading = {"metadata": 0.0, "against": 0.0}
    readers = [("metadata", read_tree)] + ([("against", other.read_tree)] if hasattr(other, "read_tree") else [])
    theirs = [None]

    def timed_read_tree(*a):
        # both revisions read the serializer's one tree, in alternating order; this one's result is the
        # page's from_tree, REV's is kept for its description
        read = {}
        for name, reader in (readers if timed_read_tree.n % 2 == 0 else readers[::-1]):
            start = time.process_time()
            try:
                read[name] = reader(*a)
            finally:
                reading[name] += time.process_time() - start
        theirs[0] = read.get("against")
        return read["metadata"]
    timed_read_tree.n = 0
    for run in ("warm-up pass (not counted)", "measured pass"):
        times = {"serialise": [], "extract": [], "metadata": [], "against": []}
        same = 0
        for n, (url, body, encoding) in enumerate(inputs):
            reading.update(metadata=0.0, against=0.0)
            timed_read_tree.n, theirs[0] = n, None
            a = time.process_time()
            page = serialize(body, encoding=encoding, url=url, tree_reader=timed_read_tree)
            b = time.process_time()
            extraction = extract([page], scorer=scorer)[0] if page.nodes else None
            c = time.process_time()
            times["serialise"].append(b - a - reading["metadata"] - reading["against"])
            times["extract"].append(c - b)
            their_page = copy.copy(page)  # the same nodes, with what REV's reader read
            their_page.from_tree = theirs[0]
            order = [("metadata", page_metadata, classifier, page)] + (
                [("against", other.page_metadata, other_classifier, their_page)] if other else [])
            found = {}
            spent = {name: 0.0 for name, _, _, _ in order}
            # each revision describes the page twice, A B B A on even pages and B A A B on odd ones: the one
            # described first after extract meets colder caches (and the collections the serializer's paused
            # GC left due), which one description a page in alternating order does not cancel where heavy
            # pages fall on one parity
            if other:
                order = order + order[::-1] if n % 2 == 0 else order[::-1] + order
            for name, describe, types, described in order:
                # htmldate caches each date text's parse (dateparser's included) by the text: without this the
                # measured pass, and whichever revision goes second, would get the warm-up's parses for free
                htmldate.extractors.try_date_expr.cache_clear()
                start = time.process_time()
                found.setdefault(name, describe(body, described, extraction, types, encoding=encoding, url=url))
                spent[name] += time.process_time() - start
            for name, seconds in spent.items():
                times[name].append(seconds / (2 if other else 1) + reading[name])
            if other:
                same += found["metadata"].fields() == found["against"].fields()
        if run.startswith("warm"):
            continue
        print(f"{len(ids)} {args.kind} pages, CPU time (time.process_time, torch on one thread): "
              + ", ".join(_line(k, v) for k, v in times.items() if v))
        if other:
            new, old = times["metadata"], times["against"]
            base = [s + e for s, e in zip(times["serialise"], times["extract"])]
            whole = statistics.fmean([b + m for b, m in zip(base, new)]) / statistics.fmean(
                [b + m for b, m in zip(base, old)])
            print(f"metadata this / {args.against}: mean {statistics.fmean(new) / statistics.fmean(old):.3f}, "
                  f"median {statistics.median(new) / statistics.median(old):.3f}; serialise + extract + metadata "
                  f"{whole:.3f}; the same fields on {same} of {len(ids)} pages")
    return 0


if __name__ == "__main__":
    sys.exit(main())
