"""Do page-level rules against news noise (reader comments, teaser lists) help on sets they were not tuned on?

`cache` scores each sampled page once with two models and runs trafilatura and readability on it, into one
pickle per set (our own cache files in --out, never a model file); `report` applies rules.relevant_mask to
the cached scores with each rule on and off and prints mean word P/R/F1 per set (and per WCXB page type).
Samples: WCXB dev's and fundus-news's training pages (tuning), WCXB dev's held-out test domains,
mozilla-readability's held-out pages and dragnet (judging; its headline line dropped as
`edrew evaluate --reference-title drop` does). The held-out split is the multi-dataset candidate's
(`--test-fraction 0.2 --val-fraction 0.1 --seed 1`, edrew_scrapy.data.mix). Results and decision:
docs/experiments/2026-11-27-news-rules.md.

    python experiments/news_rules.py cache --out output/news-rules --candidate /tmp/candidate-model \\
        --mozilla-labels output/mix/mozilla-readability.jsonl
    python experiments/news_rules.py report --out output/news-rules
"""
from __future__ import annotations

import argparse
import json
import pickle
from collections import defaultdict
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from edrew_scrapy import rules
from edrew_scrapy.declared import declared_kinds
from edrew_scrapy.tokens import retps_shape
from edrew_scrapy.words import count_words

SETS = ("tune-wcxb", "tune-fundus", "wcxb-test", "mozilla-test", "dragnet")
KIND = {"tune-wcxb": "wcxb", "wcxb-test": "wcxb", "tune-fundus": "fundus", "mozilla-test": "mozilla",
        "dragnet": "dragnet"}  # sets that share pages
MODELS = ("default", "candidate")


def _spread(items, n):
    return list(items) if n >= len(items) else [items[(i * len(items)) // n] for i in range(n)]


def _plan(shared: Path, mozilla: Path, sizes: dict, skip: set) -> dict:
    from edrew_scrapy.data import domain_of, simple
    from edrew_scrapy.data.mix import split_per_dataset
    from edrew_scrapy.data.splits import by_domain

    pages = []
    for pid in sorted(p.name[:-5] for p in (shared / "wcxb-dev/ground-truth").glob("*.json")):
        url = json.loads((shared / f"wcxb-dev/ground-truth/{pid}.json").read_text()).get("url")
        pages.append(SimpleNamespace(page_id=pid, meta={"dataset": "wcxb-dev"}, group="", domain=domain_of(url)))
    for name, labels in (("fundus-news", shared / "fundus-news/labels.jsonl"), ("mozilla-readability", mozilla)):
        for r in simple.load_labels(labels):
            host = domain_of(r.get("url"))
            pid = r["file"] if r.get("id") in (None, "") else str(r["id"])
            pages.append(SimpleNamespace(page_id=pid, meta={"dataset": name},
                                         group=r.get("group") or ("" if host else pid),
                                         domain=r.get("group") or host or pid))
    # edrew train splits the pages that have text nodes: the same pages, or the held-out domains differ
    pages = [p for p in pages if p.page_id not in skip]
    train, val, test = split_per_dataset(pages, by_domain, 0.1, 0.2, 1)

    def ids(idx, name):
        return [pages[i].page_id for i in idx if pages[i].meta["dataset"] == name]

    dragnet = [r["file"] if r.get("id") in (None, "") else str(r["id"])
               for r in simple.load_labels(shared / "dragnet/labels.jsonl")]
    return {"tune-wcxb": _spread(ids(train + val, "wcxb-dev"), sizes["tune-wcxb"]),
            "tune-fundus": _spread(ids(train + val, "fundus-news"), sizes["tune-fundus"]),
            "wcxb-test": _spread(ids(test, "wcxb-dev"), sizes["wcxb-test"]),
            "mozilla-test": ids(test, "mozilla-readability"),
            "dragnet": _spread(dragnet, sizes["dragnet"])}


def _without_nodes(shared: Path, mozilla: Path) -> set:
    """The ids of the WCXB dev, fundus-news and mozilla pages that serialize to no text node."""
    from edrew_scrapy.data import read_source, simple
    from edrew_scrapy.serializer import serialize

    empty = set()
    for path in sorted((shared / "wcxb-dev/html").glob("*.html*")):
        if not serialize(read_source(path)).nodes:
            empty.add(path.name.split(".")[0])
    for root, labels in ((shared / "fundus-news", shared / "fundus-news/labels.jsonl"), (mozilla.parent, mozilla)):
        for r in simple.load_labels(labels):
            path = Path(r["file"]) if Path(r["file"]).is_absolute() else root / r["file"]
            if not serialize(read_source(path)).nodes:
                empty.add(r["file"] if r.get("id") in (None, "") else str(r["id"]))
    return empty


def cache(args) -> None:
    from edrew_scrapy.data import simple, wcxb
    from edrew_scrapy.data.mix import drop_title_line
    from edrew_scrapy.extract import score_pages
    from edrew_scrapy.model.scorer import load_model
    from edrew_scrapy.training.evaluate import readability_extractor, reference_text, trafilatura_extractor

    shared = Path(args.shared)
    sizes = {"tune-wcxb": 100, "tune-fundus": 60, "wcxb-test": 200, "dragnet": 300}
    plan = _plan(shared, Path(args.mozilla_labels), sizes, _without_nodes(shared, Path(args.mozilla_labels)))
    out_dir = Path(args.out)
    # pages already scored (an earlier run): read again only what is missing
    done = {}
    for old in out_dir.glob("cache-*.pkl"):
        with open(old, "rb") as f:
            done.update({(KIND[old.stem[6:]], r["id"]): r for r in pickle.load(f)})
    models = {"default": load_model("default"), "candidate": load_model(args.candidate)}
    out_dir.mkdir(parents=True, exist_ok=True)
    for name in args.sets:
        kind = KIND[name]
        wanted = [i for i in plan[name] if (kind, i) not in done]
        records = [done[(kind, i)] for i in plan[name] if (kind, i) in done]
        if name.endswith("wcxb") or name == "wcxb-test":
            it = wcxb.iter_pages(shared / "wcxb-dev", wanted)
        elif name == "tune-fundus":
            it = simple.iter_pages(shared / "fundus-news", None, wanted)
        elif name == "mozilla-test":
            it = simple.iter_pages(Path(args.mozilla_labels).parent, Path(args.mozilla_labels), wanted)
        else:
            it = simple.iter_pages(shared / "dragnet", None, wanted)
        for lp in it:
            if not lp.page.nodes:
                continue
            ref = reference_text(lp)
            if name == "dragnet":
                ref = drop_title_line(ref, lp.page.title)
            rec = {"id": lp.page_id, "type": lp.page_type_or_site, "ref": ref, "page": lp.page,
                   "trafilatura": trafilatura_extractor(lp)[0], "readability": readability_extractor(lp)[0]}
            for m, scorer in models.items():
                rec["scores_" + m] = [float(s) for s in score_pages(scorer, [lp.page])[0]]
                rec["thr_" + m], rec["share_" + m] = scorer.threshold, scorer.region_share
            records.append(rec)
        with open(out_dir / f"cache-{name}.pkl", "wb") as f:
            pickle.dump(records, f)
        print(name, len(records), "pages,", len(wanted), "scored now", flush=True)


def teaser_lists(page, keep, words=20, link_share=0.6, run=4):
    """The rule tried and not kept: on a page that declares an article (no collection, no discussion), `run`
    or more kept nodes of at most `words` words, at least `link_share` link text, under one reTPS shape, unless
    they hold half of the kept words."""
    nodes = page.nodes
    out = [False] * len(nodes)
    _product, article, discussion, collection = declared_kinds(page.declared)
    if not article or discussion or collection:
        return out
    runs = defaultdict(list)
    for i, (node, kept) in enumerate(zip(nodes, keep)):
        if kept and node.link_chars >= link_share * len(node.content) and count_words(node.content) <= words:
            runs[retps_shape(node.retps)].append(i)
    for members in runs.values():
        if len(members) >= run:
            for i in members:
                out[i] = True
    if rules.nodes._word_share(nodes, keep, out) >= 0.5:
        return [False] * len(nodes)
    return out


def _mask(rec, model, comments: bool, teasers: bool):
    original = rules.in_comments
    if not comments:
        rules.in_comments = lambda node: False
    try:
        keep = rules.relevant_mask(rec["page"], rec["scores_" + model], rec["thr_" + model], rec["share_" + model])
    finally:
        rules.in_comments = original
    if teasers:
        drop = teaser_lists(rec["page"], keep)
        keep = [k and not d for k, d in zip(keep, drop)]
    return keep


def report(args) -> None:
    from edrew_scrapy.data.align import word_f1

    variants = {"base": (False, False), "comments": (True, False), "teasers": (False, True), "both": (True, True)}
    for name in args.sets:
        with open(Path(args.out) / f"cache-{name}.pkl", "rb") as f:
            records = pickle.load(f)
        res = defaultdict(list)
        for rec in records:
            groups = ["ALL"] + ([rec["type"]] if "wcxb" in name else [])
            for peer in ("trafilatura", "readability"):
                for g in groups:
                    res[(g, peer)].append(word_f1(rec[peer], rec["ref"]))
            for m in MODELS:
                for v, (c, t) in variants.items():
                    keep = _mask(rec, m, c, t)
                    f = word_f1("\n".join(n.content for n, k in zip(rec["page"].nodes, keep) if k), rec["ref"])
                    for g in groups:
                        res[(g, f"{m}/{v}")].append(f)
        for (g, ext), vals in sorted(res.items(), key=lambda kv: (kv[0][0] != "ALL", kv[0])):
            a = np.array(vals)
            print(f"{name:13s} {g:13s} {ext:20s} n={len(a):4d} P={a[:, 0].mean():.3f} R={a[:, 1].mean():.3f} "
                  f"F1={a[:, 2].mean():.3f}")
        for m in MODELS:  # pages the comment rule changed, better / worse by word-F1
            diff = np.array(res[("ALL", f"{m}/comments")])[:, 2] - np.array(res[("ALL", f"{m}/base")])[:, 2]
            print(f"{name:13s} comments vs base, {m}: {int((diff > 1e-9).sum())} pages better, "
                  f"{int((diff < -1e-9).sum())} worse")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("cache")
    c.add_argument("--shared", default="../shared/datasets")
    c.add_argument("--mozilla-labels", required=True, help="the candidate's mozilla label file (its 94 pages)")
    c.add_argument("--candidate", required=True, help="the multi-dataset candidate model directory")
    r = sub.add_parser("report")
    for p in (c, r):
        p.add_argument("--out", default="output/news-rules")
        p.add_argument("--sets", nargs="+", default=list(SETS), choices=SETS)
    args = parser.parse_args()
    cache(args) if args.command == "cache" else report(args)


if __name__ == "__main__":
    main()
