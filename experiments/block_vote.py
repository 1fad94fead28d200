"""Block votes (rules' `block-vote`, blocks.py): variants tuned and judged on the cached scores of models/default (#35).

edrew_scrapy/blocks.py was reverted after the decision (not kept): run this on the commit "rules: block-vote, a
list of links decided whole by its mean score" or after it (docs/experiments/2026-11-28-block-vote.md).
Re-applies the decision rules to snippet_leaks.py's and dragnet_precision.py's caches (same --out) with the rule
off (main's decision) and with each variant of it, paired on the same pages and scores. A variant names the
blocks.py settings it sets: K (BLOCK_ITEMS), the item tags (lists: li, tr, dt, dd; any: every tag), the
direction (drop: votes only to drop; both: also keeps a block's dropped items) and the vote (mean: word-weighted
mean score; share: share of words kept).

    python experiments/block_vote.py tune --out output/np --sets dragnet-tune,train,trafeval   # the grid, tuning
    python experiments/block_vote.py show --out output/np --set dragnet-tune --variant 3-lists-drop-mean
    python experiments/fresh_dragnet.py --shared DIR --out output/fresh/dragnet-fresh.jsonl
    python experiments/block_vote.py cache-fresh --out output/np --labels output/fresh/dragnet-fresh.jsonl
    python experiments/block_vote.py cost --out output/np --sets holdout,dragnet     # CPU of the rule
    python experiments/block_vote.py judge --out output/np --variant 3-lists-drop-mean \
        --sets dragnet,dragnet-rest,holdout,trafeval                                          # once

trafeval: must-keep snippets kept and must-drop snippets leaked on the half named (tuning for `tune`, judging for
`judge`); a labelled set: word-F1 (P / R) per dataset and WCXB page type, and the paired difference variant − main
(mean, SE, pages up / down).
"""
from __future__ import annotations

import argparse
import itertools
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import snippet_leaks as sl  # noqa: E402


def parse_variant(name: str) -> dict:
    """'3-lists-drop-mean[-links]' -> the blocks.py settings (links: only blocks of half link text or more vote)."""
    k, tags, direction, vote, *links = name.split("-")
    return {"BLOCK_ITEMS": int(k), "BLOCK_TAGS": {"lists": LIST_TAGS, "any": None}[tags],
            "BLOCK_RAISES": {"drop": False, "both": True}[direction],
            "BLOCK_BY_SHARE": {"mean": False, "share": True}[vote],
            "BLOCK_LINKS": 0.5 if links == ["links"] else None}


# blocks.BLOCK_TAGS as shipped, taken before any variant changes it
LIST_TAGS = frozenset({"li", "tr", "dt", "dd"})


def set_variant(name: str) -> None:
    from edrew_scrapy import blocks

    for key, value in parse_variant(name).items():
        setattr(blocks, key, value)


def text(rec, lp, sc, variant: str) -> str:
    if variant == "main":
        return sl.text_of(lp, sl.decide(rec, lp, sc, ("block-vote",)))
    set_variant(variant)
    return sl.text_of(lp, sl.decide(rec, lp, sc))


def run(out: Path, sets, variants, half: str) -> None:
    """Each set's table: main and each variant, paired."""
    from edrew_scrapy.data.align import word_f1
    from edrew_scrapy.training.evaluate import reference_text
    from edrew_scrapy.training.snippets import count_snippets

    names = ["main", *variants]
    for name in sets:
        rec = sl._read(out, name)
        pages, scores = rec["pages"], rec["scores"]
        if name == "trafeval":
            tune, judge_ = sl.halves(pages)
            idx = {"tuning": tune, "judging": judge_, "all": sorted(tune + judge_)}[half]
            tot = {v: [0, 0] for v in names}
            changed = {v: 0 for v in names}
            nk = nd = 0
            for i, keep, drop in sl.snippet_pages(pages, idx):
                nk, nd = nk + len(keep), nd + len(drop)
                base = None
                for v in names:
                    t = text(rec, pages[i], scores[i], v)
                    base = t if v == "main" else base
                    changed[v] += t != base
                    tot[v][0] += count_snippets(t, keep)
                    tot[v][1] += count_snippets(t, drop)
            print(f"trafeval {half} ({nk} keep / {nd} drop):")
            for v, (k, d) in tot.items():
                print(f"    {v:24s} kept {k} ({k / nk:.3f}) leaked {d} ({d / nd:.3f}) pages changed {changed[v]}")
            continue
        by = {}
        for lp, sc in zip(pages, scores):
            reference = reference_text(lp)
            vals = [word_f1(text(rec, lp, sc, v), reference) for v in names]
            ds = lp.meta.get("dataset", "") or name
            by.setdefault(ds, []).append(vals)
            if ds == "wcxb-dev" and lp.page_type_or_site:
                by.setdefault(f"{ds}/{lp.page_type_or_site}", []).append(vals)
        for ds, rows in sorted(by.items()):
            a = np.array(rows, dtype=np.float64)
            print(f"{name}:{ds}: {len(rows)} pages; main {a[:, 0, 2].mean():.4f} (P {a[:, 0, 0].mean():.3f} / "
                  f"R {a[:, 0, 1].mean():.3f})")
            for j, v in enumerate(names[1:], start=1):
                d = a[:, j, 2] - a[:, 0, 2]
                se = sl._se(d)
                print(f"    {v:24s} {a[:, j, 2].mean():.4f} (P {a[:, j, 0].mean():.3f} / R {a[:, j, 1].mean():.3f}) "
                      f"diff {d.mean():+.5f} SE {se:.5f} ({d.mean() / se if se > 0 else 0:+.2f} SE) "
                      f"up {(d > 1e-9).sum()} down {(d < -1e-9).sum()}")
        sys.stdout.flush()


def show(args) -> None:
    """The nodes a variant decides otherwise than main on one set, page by page, with their scores and whether
    the reference holds them (word share)."""
    import re

    from edrew_scrapy.training.evaluate import reference_text

    word = re.compile(r"\w+")
    rec = sl._read(Path(args.out), args.set)
    for lp, sc in zip(rec["pages"], rec["scores"]):
        a = sl.decide(rec, lp, sc, ("block-vote",))
        if a is None:
            continue
        set_variant(args.variant)
        b = sl.decide(rec, lp, sc)
        diff = [j for j, (x, y) in enumerate(zip(a.kept, b.kept)) if x != y]
        if not diff:
            continue
        ref = set(w.lower() for w in word.findall(reference_text(lp)))
        print(f"== {lp.page_id[-30:]} {lp.page.url[:80]} cut {b.threshold:.2f}")
        for j in diff[:args.lines]:
            n = lp.page.nodes[j]
            w = [x.lower() for x in word.findall(n.content)]
            inref = sum(x in ref for x in w) / max(1, len(w))
            print(f"   {'+' if b.kept[j] else '-'} s={float(sc[j]):.2f} ref={inref:.1f} {n.path[-45:]} :: "
                  f"{n.content[:70]}")


def cache_fresh(args) -> None:
    """dragnet-fresh (fresh_dragnet.py's label file: the 581 dragnet pages no slice used), headline line dropped,
    scored by models/default, cached as the other sets are (--out/dragnet-fresh.pkl)."""

    from edrew_scrapy.cli import build_parser
    from edrew_scrapy.commands import evaluate as cmd

    opts = ["--dataset", f"dragnet-fresh=simple:{args.labels}", "--split", "none", "--reference-title", "drop"]
    a = build_parser().parse_args(["evaluate", *opts, "--model", "default", "--no-progress"])
    cmd.resolve_datasets(a)
    pages = cmd.load_pages(a)
    cmd.drop_reference_titles(pages)
    sl.write_cache(args.out, "dragnet-fresh", pages)
    print(f"dragnet-fresh: {len(pages)} pages", file=sys.stderr)


def cost(args) -> None:
    """CPU ms a page of rules.explain (what extract() runs after scoring) with the rule and without it, on the cached
    pages and scores of the sets named, timed page by page in an alternating order (benchmarks/benchmark_pages.py)."""
    import gc

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    from benchmark_pages import alternating_cpu_ms

    from edrew_scrapy import rules

    if args.variant:
        set_variant(args.variant)
    work = []
    for name in args.sets.split(","):
        rec = sl._read(Path(args.out), name)
        work += [(lp.page, sc, rec["threshold"], rec["region_share"]) for lp, sc in zip(rec["pages"], rec["scores"])
                 if sc is not None]
    gc.collect()
    gc.freeze()  # the cached pages stay: each collection looks at the calls' garbage alone
    off = {"ref": ("block-vote",), "tree": ()}
    ms = alternating_cpu_ms(work, args.repeats, lambda who, w: rules.explain(w[0], w[1], w[2], w[3], off=off[who]))
    print(f"{len(work)} pages x {args.repeats}: CPU ms/page of rules.explain without block-vote {ms['ref']:.3f}, "
          f"with {ms['tree']:.3f} (+{ms['tree'] - ms['ref']:.3f} ms, {ms['tree'] / ms['ref']:.3f}x)")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("tune")
    t.add_argument("--out", required=True)
    t.add_argument("--sets", default="dragnet-tune,train,trafeval")
    t.add_argument("--k", default="3,4,5")
    t.add_argument("--variants", default="", help="comma list; default: the grid of --k x lists/any x drop/both x "
                                                  "mean/share")
    j = sub.add_parser("judge")
    j.add_argument("--out", required=True)
    j.add_argument("--sets", default="dragnet,dragnet-rest,holdout,trafeval")
    j.add_argument("--variant", required=True)
    j.add_argument("--half", default="judging")
    s = sub.add_parser("show")
    s.add_argument("--out", required=True)
    s.add_argument("--set", default="dragnet-tune")
    s.add_argument("--variant", required=True)
    s.add_argument("--lines", type=int, default=12)
    c = sub.add_parser("cost")
    c.add_argument("--out", required=True)
    c.add_argument("--sets", default="holdout,dragnet")
    c.add_argument("--variant", default="", help="default: blocks.py as it is")
    c.add_argument("--repeats", type=int, default=2)
    f = sub.add_parser("cache-fresh")
    f.add_argument("--out", required=True)
    f.add_argument("--labels", required=True, help="fresh_dragnet.py's label file")
    args = p.parse_args()
    if args.cmd == "cache-fresh":
        cache_fresh(args)
    elif args.cmd == "cost":
        cost(args)
    elif args.cmd == "show":
        show(args)
    elif args.cmd == "tune":
        variants = [v for v in args.variants.split(",") if v] or [
            f"{k}-{t}-{d}-{v}" for k, t, d, v in itertools.product(args.k.split(","), ("lists", "any"),
                                                                   ("drop", "both"), ("mean", "share"))]
        run(Path(args.out), args.sets.split(","), variants, "tuning")
    else:
        run(Path(args.out), args.sets.split(","), [args.variant], args.half)


if __name__ == "__main__":
    main()
