"""Snippet leaks and lost keeps on trafilatura-eval-pages, and rule variants judged on held-out sets (issue #35).

Scores every page of four evaluation configurations once with a model (the pages exactly as `edrew evaluate`
loads them: trafilatura-eval-pages with snippets, the MIX holdout, dragnet 300 with its headline line dropped)
and caches pages and scores under --out; then re-applies the decision rules offline, with and without the rules
named, so that every comparison is paired on the same pages and scores.

    python experiments/snippet_leaks.py cache --out output/leaks [--shared DIR --mozilla-labels FILE]  # minutes
    python experiments/snippet_leaks.py dump --out output/leaks           # tuning half: what leaks, what is lost
    python experiments/snippet_leaks.py report --out output/leaks --rules RULE[,RULE]  # with vs without

trafilatura-eval-pages is split into two halves by its `group` (group_kfold, k=2, seed 1): fold 1 is the
tuning half (read its leaks), fold 2 the judging half (read only its numbers).
"""
from __future__ import annotations

import argparse
import csv
import math
import pickle
import sys
from pathlib import Path

import numpy as np


def configs(shared: str, mozilla: str) -> dict:
    """Each set's `edrew evaluate` options (mozilla: the label file without its synthetic pages, models/default's
    card `mozilla_labels`)."""
    return {
        "trafeval": ["--dataset", f"trafeval=simple:{shared}/trafilatura-eval-pages/pages.jsonl", "--split", "none"],
        "holdout": ["--dataset", f"wcxb-dev=wcxb:{shared}/wcxb-dev", "--dataset",
                    f"fundus-news=simple:{shared}/fundus-news", "--dataset", f"mozilla-readability=simple:{mozilla}",
                    "--split", "holdout"],
        "dragnet": ["--dataset", f"dragnet=simple:{shared}/dragnet", "--split", "none", "--limit", "300",
                    "--reference-title", "drop"],
    }


def _load(name: str, shared: str, mozilla: str):
    from edrew_scrapy.cli import build_parser
    from edrew_scrapy.commands import evaluate as cmd

    options = configs(shared, mozilla)[name]
    args = build_parser().parse_args(["evaluate", *options, "--model", "default", "--no-progress"])
    cmd.resolve_datasets(args)
    if args.dataset != "mix":
        cmd.check_dataset(args)
    pages = cmd.load_pages(args)
    if args.reference_title == "drop":
        cmd.drop_reference_titles(pages)
    [(_split, _train, test)] = cmd.make_splits(pages, args)
    return [pages[i] for i in test]


def score_in_groups(scorer, pages):
    """Each labelled page's node scores (None for a page without nodes), scored 8 pages a call."""
    from edrew_scrapy.extract import score_pages

    out = []
    for i in range(0, len(pages), 8):
        batch = [lp.page for lp in pages[i:i + 8] if lp.page.nodes]
        it = iter(score_pages(scorer, batch) if batch else ())
        out.extend(next(it) if lp.page.nodes else None for lp in pages[i:i + 8])
    return out


def write_cache(out, name: str, pages) -> None:
    """`out`/NAME.pkl, what _read gives back: the labelled pages, models/default's scores of them
    (score_in_groups), and its threshold and region share, which decide() applies."""
    from edrew_scrapy.model.scorer import load_model

    scorer = load_model("default")
    with open(Path(out) / f"{name}.pkl", "wb") as f:
        pickle.dump({"pages": pages, "scores": score_in_groups(scorer, pages), "threshold": scorer.threshold,
                     "region_share": scorer.region_share}, f)


def cache(args) -> None:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for name in args.sets.split(","):
        pages = _load(name, args.shared, args.mozilla_labels)
        write_cache(out, name, pages)
        print(f"{name}: {len(pages)} pages", file=sys.stderr)


def _read(out: Path, name: str):
    with open(out / f"{name}.pkl", "rb") as f:  # our own cache of this script, never a model file
        return pickle.load(f)


def halves(pages):
    """trafeval's (tuning, judging) page indices: two folds by `group`, seed 1."""
    from edrew_scrapy.data.splits import group_kfold

    (_, a), (_, b) = group_kfold(pages, k=2, seed=1)
    return sorted(a), sorted(b)


def snippet_pages(pages, idx):
    """(i, must-keep, must-drop snippets) of each page of `idx` that has any."""
    from edrew_scrapy.training.snippets import snippets_of

    for i in idx:
        keep, drop = snippets_of(pages[i])
        if keep or drop:
            yield i, keep, drop


def decide(rec, lp, scores, off=()):
    from edrew_scrapy import rules

    if scores is None:
        return None
    return rules.explain(lp.page, scores, rec["threshold"], rec["region_share"], off=off)


def text_of(lp, decision) -> str:
    if decision is None:
        return ""
    return "\n".join(n.content for n, r in zip(lp.page.nodes, decision.reasons) if r == "kept")


def dump(args) -> None:
    """The tuning half's leaked must-drop and lost must-keep snippets, each with the node(s) holding it."""
    from edrew_scrapy.data import words
    from edrew_scrapy.training.snippets import count_snippets, snippets_of

    out = Path(args.out)
    rec = _read(out, "trafeval")
    pages, scores = rec["pages"], rec["scores"]
    tune, _judge = halves(pages)
    rows = []
    for i in tune:
        lp, sc = pages[i], scores[i]
        keep, drop = snippets_of(lp)
        if not keep and not drop:
            continue
        decision = decide(rec, lp, sc, off=tuple(args.off.split(",")) if args.off else ())
        text = text_of(lp, decision)
        kept_share = (sum(count_snippets(text, [s]) for s in keep) / len(keep)) if keep else 1.0
        for kind, snips in (("leaked", drop), ("lost", keep)):
            for s in snips:
                present = count_snippets(text, [s]) == 1
                if present != (kind == "leaked"):
                    continue
                sw = " ".join(words(s))
                hits = [j for j, n in enumerate(lp.page.nodes)
                        if sw and (sw in " ".join(words(n.content)) or " ".join(words(n.content)) in sw)
                        and len(words(n.content)) > 0]
                hits = [j for j in hits if len(words(lp.page.nodes[j].content)) >= min(3, len(words(s)))] or hits
                desc = []
                for j in hits[:3]:
                    n = lp.page.nodes[j]
                    reason = decision.reasons[j] if decision else "no-nodes"
                    desc.append(f"{reason} s={float(sc[j]) if sc is not None else 0:.2f} tag={n.tag} "
                                f"path={n.path[-60:]} retps={' '.join(n.tokens[:8])}")
                rows.append({"page": lp.page_id, "url": lp.page.url, "kind": kind, "kept_share": f"{kept_share:.2f}",
                             "region": decision.region if decision else "", "snippet": s[:120],
                             "nodes": " || ".join(desc)})
    path = out / (f"dump-{args.name}.csv")
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print(f"{path}: {sum(r['kind'] == 'leaked' for r in rows)} leaked, {sum(r['kind'] == 'lost' for r in rows)} lost")


def _se(d) -> float:
    a = np.asarray(d, dtype=np.float64)
    return float(a.std(ddof=1) / math.sqrt(len(a))) if len(a) > 1 else math.nan


def holdout_training_side(shared: str, mozilla_labels: str):
    """WCXB dev, fundus-news and mozilla-readability loaded as `edrew evaluate --split holdout` loads them, and
    the indices of the split's training side: (pages, train)."""
    from edrew_scrapy.cli import build_parser
    from edrew_scrapy.commands import evaluate as cmd

    opts = ["--dataset", f"wcxb-dev=wcxb:{shared}/wcxb-dev", "--dataset", f"fundus-news=simple:{shared}/fundus-news",
            "--dataset", f"mozilla-readability=simple:{mozilla_labels}", "--split", "holdout"]
    a = build_parser().parse_args(["evaluate", *opts, "--model", "default", "--no-progress"])
    cmd.resolve_datasets(a)
    pages = cmd.load_pages(a)
    [(_s, train, _test)] = cmd.make_splits(pages, a)
    return pages, train


def print_paired(by: dict, names: list, ref: str, prefix: str = "") -> None:
    """Per dataset: each variant's mean word-F1 (P / R), then `ref` minus each other variant, paired by page
    (mean, SE, pages up and down). `by` maps a dataset to rows of pages x variants x (P, R, F1)."""
    for ds, rows in sorted(by.items()):
        a = np.array(rows)
        line = [f"{prefix}{ds}: {len(rows)} pages"]
        for j, v in enumerate(names):
            line.append(f"{v} {a[:, j, 2].mean():.4f} (P {a[:, j, 0].mean():.3f} / R {a[:, j, 1].mean():.3f})")
        b = a[:, names.index(ref), 2]
        for j, v in enumerate(names):
            if v == ref:
                continue
            d = b - a[:, j, 2]
            line.append(f"{ref}-({v}) {d.mean():+.4f} SE {_se(d):.4f} up {(d > 1e-9).sum()} down {(d < -1e-9).sum()}")
        print("\n    ".join(line))


def judge_variants(name: str, rec: dict, variants, text_fn, wanted_halves, ref: str, prefix: str = "") -> None:
    """One cached set judged under each variant of the rules: `text_fn(lp, scores, v)` is a page's kept text
    under variant v. trafeval: must-keep snippets kept and must-drop leaked per half named in `wanted_halves`;
    a labelled set: print_paired's table of word-F1, `ref` against each other variant."""
    from edrew_scrapy.data.align import word_f1
    from edrew_scrapy.training.evaluate import reference_text
    from edrew_scrapy.training.snippets import count_snippets

    pages, scores = rec["pages"], rec["scores"]
    if name == "trafeval":
        tune, judge_ = halves(pages)
        for half, idx in (("tuning", tune), ("judging", judge_), ("all", sorted(tune + judge_))):
            if half not in wanted_halves:
                continue
            tot = {v: [0, 0] for v in variants}
            nk = nd = 0
            for i, keep, drop in snippet_pages(pages, idx):
                nk, nd = nk + len(keep), nd + len(drop)
                for v in variants:
                    t = text_fn(pages[i], scores[i], v)
                    tot[v][0] += count_snippets(t, keep)
                    tot[v][1] += count_snippets(t, drop)
            print(f"trafeval {half} ({nk} keep / {nd} drop): " + "; ".join(
                f"{v} kept {k} ({k / nk:.3f}) leaked {d} ({d / nd:.3f})" for v, (k, d) in tot.items()))
        return
    by = {}
    for lp, sc in zip(pages, scores):
        reference = reference_text(lp)
        vals = [word_f1(text_fn(lp, sc, v), reference) for v in variants]
        ds = lp.meta.get("dataset", "") or name
        by.setdefault(ds, []).append(vals)
        if ds == "wcxb-dev" and lp.page_type_or_site:
            by.setdefault(f"{ds}/{lp.page_type_or_site}", []).append(vals)
    print_paired(by, list(variants), ref, prefix)


def report(args) -> None:
    """Per set: word P / R / F1 with every rule and without those named (paired); trafeval's halves: snippets
    kept and leaked with and without, and trafilatura's where --peer-cache holds its texts."""
    from edrew_scrapy import rules
    from edrew_scrapy.data.align import word_f1
    from edrew_scrapy.training.evaluate import reference_text
    from edrew_scrapy.training.snippets import count_snippets, snippets_of

    if args.standfirst_words:
        rules.STANDFIRST_WORDS = args.standfirst_words
    out = Path(args.out)
    off = tuple(r for r in args.rules.split(",") if r)
    for name in args.sets.split(","):
        rec = _read(out, name)
        pages, scores = rec["pages"], rec["scores"]
        if name == "trafeval":
            tune, judge = halves(pages)
            for half, idx in (("tuning", tune), ("judging", judge)):
                tot = {"with": [0, 0], "without": [0, 0]}
                nk = nd = 0
                changed = []
                for i in idx:
                    lp, sc = pages[i], scores[i]
                    keep, drop = snippets_of(lp)
                    if not keep and not drop:
                        continue
                    nk += len(keep)
                    nd += len(drop)
                    res = {}
                    for label, o in (("with", ()), ("without", off)):
                        text = text_of(lp, decide(rec, lp, sc, o))
                        k, l_ = count_snippets(text, keep), count_snippets(text, drop)
                        tot[label][0] += k
                        tot[label][1] += l_
                        res[label] = (k, l_)
                    if res["with"] != res["without"]:
                        changed.append((lp.page_id, res["without"], res["with"]))
                print(f"trafeval {half}: keep {nk} drop {nd}; with: kept {tot['with'][0] / nk:.3f} "
                      f"leaked {tot['with'][1] / nd:.3f} ({tot['with'][0]}/{tot['with'][1]}); without {off}: "
                      f"kept {tot['without'][0] / nk:.3f} leaked {tot['without'][1] / nd:.3f} "
                      f"({tot['without'][0]}/{tot['without'][1]}); pages changed {len(changed)}")
                if args.verbose:
                    for c in changed:
                        print("   ", c)
            continue
        by = {}
        for lp, sc in zip(pages, scores):
            ref = reference_text(lp)
            ds = lp.meta.get("dataset", "") or name
            vals = []
            for o in ((), off):
                vals.append(word_f1(text_of(lp, decide(rec, lp, sc, o)), ref))
            by.setdefault(ds, []).append((lp.page_id, vals))
            if lp.page_type_or_site and ds == "wcxb-dev":
                by.setdefault(f"{ds}/{lp.page_type_or_site}", []).append((lp.page_id, vals))
        for ds, rows in sorted(by.items()):
            w = np.array([r[1][0] for r in rows])
            wo = np.array([r[1][1] for r in rows])
            d = w[:, 2] - wo[:, 2]
            print(f"{ds}: {len(rows)} pages; with F1 {w[:, 2].mean():.4f} (P {w[:, 0].mean():.3f} / R "
                  f"{w[:, 1].mean():.3f}); without F1 {wo[:, 2].mean():.4f} (P {wo[:, 0].mean():.3f} / R "
                  f"{wo[:, 1].mean():.3f}); diff {d.mean():+.4f} SE {_se(d):.4f} up {(d > 1e-9).sum()} "
                  f"down {(d < -1e-9).sum()}")
            if args.verbose:
                for (pid, _), x in zip(rows, d):
                    if abs(x) > 1e-9:
                        print(f"    {pid} {x:+.3f}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("cache")
    c.add_argument("--out", required=True)
    c.add_argument("--sets", default="trafeval,holdout,dragnet")
    c.add_argument("--shared", default="../shared/datasets")
    c.add_argument("--mozilla-labels", default="output/mix/mozilla-readability.jsonl")
    d = sub.add_parser("dump")
    d.add_argument("--out", required=True)
    d.add_argument("--name", default="main")
    d.add_argument("--off", default="")
    r = sub.add_parser("report")
    r.add_argument("--out", required=True)
    r.add_argument("--sets", default="trafeval,holdout,dragnet")
    r.add_argument("--rules", default="")
    r.add_argument("--verbose", action="store_true")
    r.add_argument("--standfirst-words", type=int, default=0, help="rules.STANDFIRST_WORDS for this report")
    args = p.parse_args()
    {"cache": cache, "dump": dump, "report": report}[args.cmd](args)


if __name__ == "__main__":
    main()
