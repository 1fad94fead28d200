"""News precision: what an article page keeps that its reference leaves out, and rules judged on other sets (#35).

Builds on snippet_leaks.py's cache (trafilatura-eval-pages, the MIX holdout, dragnet 300, each page scored once):

    python experiments/news_precision.py refresh --out DIR        # re-serialize; re-score only pages that changed
    python experiments/news_precision.py cache-train --out DIR    # fundus-news / WCXB dev training pages (tuning)
    python experiments/news_precision.py extra --out DIR          # tuning pages' kept text not in the reference
    python experiments/news_precision.py cand --out DIR [--show KIND]   # what each class-word candidate would drop
    python experiments/news_precision.py judge --out DIR [--sets ...]   # main's rules, all, each new rule left out
    python experiments/news_precision.py cache-dragnet-rest --out DIR   # dragnet pages outside the 300, scored

The tuning sets are trafilatura-eval-pages' tuning half (snippet_leaks.halves) and the training side of the
holdout split of fundus-news and WCXB dev (the model learnt from them; here only their leftovers are read). The
judging sets (held-out fundus-news, mozilla-readability, WCXB dev, dragnet 300 and the 300 other dragnet pages,
trafeval's judging half) are only reported (docs/experiments/2026-11-28-news-precision.md).
"""
from __future__ import annotations

import argparse
import pickle
import re
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import snippet_leaks as sl  # noqa: E402


def _shape(lp):
    p = lp.page
    return p.title, [(n.content, n.retps, n.boilerplate, n.hidden, n.path) for n in p.nodes]


def refresh(args) -> None:
    """Serialize every cached set again with this checkout's serializer; score again the pages whose nodes
    changed, keep the cached scores of the others."""
    from edrew_scrapy.model.scorer import load_model

    out = Path(args.out)
    scorer = load_model("default")
    for name in args.sets.split(","):
        rec = sl._read(out, name)
        pages = sl._load(name, args.shared, args.mozilla_labels)
        assert [lp.page_id for lp in pages] == [lp.page_id for lp in rec["pages"]], name
        changed = [i for i, (a, b) in enumerate(zip(rec["pages"], pages)) if _shape(a) != _shape(b)]
        scores = list(rec["scores"])
        for i, s in zip(changed, sl.score_in_groups(scorer, [pages[i] for i in changed])):
            scores[i] = s
        rec.update(pages=pages, scores=scores, threshold=scorer.threshold, region_share=scorer.region_share)
        with open(out / f"{name}.pkl", "wb") as f:
            pickle.dump(rec, f)
        print(f"{name}: {len(pages)} pages, {len(changed)} scored again", file=sys.stderr)


def cache_train(args) -> None:
    """The training side of the holdout split of fundus-news and WCXB dev, evenly spaced, scored."""

    pages, train = sl.holdout_training_side(args.shared, args.mozilla_labels)
    chosen = []
    for ds, n in (("fundus-news", args.fundus), ("wcxb-dev", args.wcxb)):
        side = [i for i in train if pages[i].meta.get("dataset") == ds]
        chosen += [side[(k * len(side)) // n] for k in range(min(n, len(side)))]
    chosen = [pages[i] for i in chosen]
    sl.write_cache(args.out, "train", chosen)
    print(f"train: {len(chosen)} pages", file=sys.stderr)


def cache_dragnet_rest(args) -> None:
    """dragnet pages outside the 300 evenly spaced ones (`--limit 300`), evenly spaced, headline line dropped, scored:
    a set no rule was tuned or judged on before."""
    from edrew_scrapy.cli import build_parser
    from edrew_scrapy.commands import evaluate as cmd

    opts = ["--dataset", f"dragnet=simple:{args.shared}/dragnet", "--split", "none", "--reference-title", "drop"]
    a = build_parser().parse_args(["evaluate", *opts, "--model", "default", "--no-progress"])
    cmd.resolve_datasets(a)
    pages = cmd.load_pages(a)
    seen = {lp.page_id for lp in sl._read(Path(args.out), "dragnet")["pages"]}
    rest = [p for p in pages if p.page_id not in seen]
    rest = cmd._spread(rest, args.count)
    cmd.drop_reference_titles(rest)
    sl.write_cache(args.out, "dragnet-rest", rest)
    print(f"dragnet-rest: {len(rest)} pages", file=sys.stderr)


_WORD = re.compile(r"\w+")


def extra(args) -> None:
    """Kept nodes of the tuning pages whose words are mostly not in the reference (training pages) or that hold
    a must-drop snippet (trafeval's tuning half), with their near classes: the kinds, to be read by eye."""
    from edrew_scrapy import rules
    from edrew_scrapy.training.evaluate import reference_text
    from edrew_scrapy.training.snippets import count_snippets, snippets_of

    out = Path(args.out)
    off = tuple(r for r in args.off.split(",") if r)
    rows = []
    rec = sl._read(out, "train")
    for lp, sc in zip(rec["pages"], rec["scores"]):
        if args.dataset and lp.meta.get("dataset") != args.dataset:
            continue
        d = sl.decide(rec, lp, sc, off)
        if d is None:
            continue
        ref = Counter(w.lower() for w in _WORD.findall(reference_text(lp)))
        for n, r in zip(lp.page.nodes, d.reasons):
            if r != rules.KEPT:
                continue
            w = [x.lower() for x in _WORD.findall(n.content)]
            if not w:
                continue
            miss = sum(x not in ref for x in w)
            if miss >= max(1, 0.5 * len(w)):
                rows.append((lp.meta.get("dataset"), lp.page_id, len(w), n.tag,
                             " ".join(rules.nodes._near_classes(n))[:80], n.content[:110]))
    if "trafeval" in args.sets:
        rec = sl._read(out, "trafeval")
        tune, _ = sl.halves(rec["pages"])
        for i in tune:
            lp, sc = rec["pages"][i], rec["scores"][i]
            _keep, drop = snippets_of(lp)
            d = sl.decide(rec, lp, sc, off)
            if d is None or not drop:
                continue
            for n, r in zip(lp.page.nodes, d.reasons):
                if r == rules.KEPT and count_snippets(n.content, drop):
                    rows.append(("trafeval", lp.page_id, len(n.content.split()), n.tag,
                                 " ".join(rules.nodes._near_classes(n))[:80], n.content[:110]))
    for row in rows:
        print(" | ".join(str(x) for x in row))
    print(f"{len(rows)} nodes, {sum(r[2] for r in rows)} words", file=sys.stderr)


# Candidate kinds, each a class-word pattern on the node's near classes (rules.nodes._near_classes) and a word limit:
# what each would drop is counted on the tuning pages before any is written as a rule.
CANDIDATES = {
    "credits": (r"(?:^|[-_])(?:copyright|copyrights|credit|credits|captioncredit|photocredit|imagecredit|fotocredit|"
                r"bildquelle|bildnachweis|(?:picture|image|photo|foto|bild|img|caption)[-_]*(?:source|quelle))(?:[-_]|$)",
                20),
    "consent": (r"(?:^|[-_])(?:consent|gdpr|cookie-?(?:banner|notice|consent|bar|policy|law|message|popup|hint)|"
                r"content-?blocker|_?brlbs|embed-?privacy|two-?click|(?:oembed|embed|social|external|iframe|privacy)"
                r"-?placeholder)(?:[-_]|$)", 120),
    "paywall": (r"(?:paywall|regwall|premium|subscriber|registration|register)[-_]+(?:header|footer|title|headline|"
                r"description|checkout|form|button|login|cta|offer|box|banner|promo|message|prompt|modal|overlay|"
                r"benefits?|note|hint|info|text|inner|link|meta)|(?:^|[-_])(?:paywall|regwall)(?:[-_]|$)", 40),
    "byline": (r"(?:^|[-_])(?:byline|bylines|dateline|author|authors|autor|posted-?on|post-?meta|entry-?meta|"
               r"postmetadata|article-?meta|meta|timestamp|publish|published|date|datetime|time)(?:[-_]|$)", 15),
    "teaser": (r"(?:^|[-_])(?:teaser|teasers|teaserinner|tsr|tile|tiles|card|cards|storyitem|media-?box|promo|"
               r"more|latest|popular|trending|most-?read|mostread|read-?more|readmore|read-?also|see-?also)"
               r"(?:[-_]|$)", 25),
    "caption": (r"(?:^|[-_])(?:caption|captions|figcaption|figure-?caption|image-?caption|wp-caption-text|"
                r"bildunterschrift|legende|legend)(?:[-_]|$)", 60),
    "author-bio": (r"(?:^|[-_])(?:(?:author|autor|autorin|writer)[-_]*(?:bio|box|info|desc|description|about|profile|"
                   r"details|short[-_]desc|card)|about[-_]*(?:the[-_]*)?author|saboxplugin|sabox)(?:[-_]|$)", 80),
}


def cand(args) -> None:
    """For each candidate: kept nodes it would drop on the tuning pages, their words labelled relevant / not
    (training pages), and the must-keep / must-drop snippets in them (trafeval's tuning half); --show prints
    the nodes of the candidate named."""
    from edrew_scrapy import rules
    from edrew_scrapy.training.snippets import count_snippets, snippets_of

    out = Path(args.out)
    pats = {k: (re.compile(p), w) for k, (p, w) in CANDIDATES.items()}
    stats = {k: Counter() for k in pats}
    rec = sl._read(out, "train")
    items = [(rec, lp, sc, None) for lp, sc in zip(rec["pages"], rec["scores"])]
    tr = sl._read(out, "trafeval")
    tune, _ = sl.halves(tr["pages"])
    items += [(tr, tr["pages"][i], tr["scores"][i], "trafeval") for i in tune]
    for r, lp, sc, kind in items:
        d = sl.decide(r, lp, sc)
        if d is None:
            continue
        ds = kind or lp.meta.get("dataset")
        keep, drop = snippets_of(lp) if kind else ((), ())
        for j, (n, why) in enumerate(zip(lp.page.nodes, d.reasons)):
            if why != rules.KEPT:
                continue
            near = rules.nodes._near_classes(n)
            nw = len(_WORD.findall(n.content))
            for k, (pat, most) in pats.items():
                if nw > most or not any(pat.search(t) for t in near):
                    continue
                st = stats[k]
                if kind:
                    st[f"{ds} nodes"] += 1
                    st[f"{ds} keep-lost"] += count_snippets(n.content, keep)
                    st[f"{ds} drop-stopped"] += count_snippets(n.content, drop)
                else:
                    st[f"{ds} nodes"] += 1
                    st[f"{ds} words-rel" if lp.labels[j] else f"{ds} words-irr"] += nw
                if args.show == k:
                    tag = kind or ("REL" if lp.labels[j] else "irr")
                    print(f"  [{tag} {ds}] {lp.page_id[-28:]} {n.tag} {' '.join(near)[:70]} :: {n.content[:100]}")
    for k, st in stats.items():
        print(k, dict(sorted(st.items())))


NEW_RULES = ("credit-lines", "consent-notices", "paywall-prompts", "author-boxes", "captions")


def judge(args) -> None:
    """Per set: word P / R / F1 with main's rules (NEW_RULES off), with every rule, and each new rule's paired
    difference (all on minus that one off); trafeval: snippets kept / leaked per half, the same variants."""

    out = Path(args.out)
    new = tuple(r for r in args.rules.split(",") if r) or NEW_RULES
    variants = {"main": new, "all": ()} | {f"-{r}": (r,) for r in new}
    for name in args.sets.split(","):
        rec = sl._read(out, name)
        def text(lp, sc, v, rec=rec):
            return sl.text_of(lp, sl.decide(rec, lp, sc, variants[v]))

        sl.judge_variants(name, rec, variants, text, args.halves, "all")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    for name in ("refresh", "cache-train", "cache-dragnet-rest"):
        c = sub.add_parser(name)
        c.add_argument("--out", required=True)
        c.add_argument("--sets", default="trafeval,holdout,dragnet")
        c.add_argument("--shared", default="../shared/datasets")
        c.add_argument("--mozilla-labels", default="output/mix/mozilla-readability.jsonl")
        c.add_argument("--fundus", type=int, default=100)
        c.add_argument("--wcxb", type=int, default=100)
        c.add_argument("--count", type=int, default=300)
    e = sub.add_parser("extra")
    e.add_argument("--out", required=True)
    e.add_argument("--sets", default="train,trafeval")
    e.add_argument("--dataset", default="")
    e.add_argument("--off", default="")
    c = sub.add_parser("cand")
    c.add_argument("--out", required=True)
    c.add_argument("--show", default="")
    j = sub.add_parser("judge")
    j.add_argument("--out", required=True)
    j.add_argument("--sets", default="trafeval,holdout,dragnet")
    j.add_argument("--rules", default="")
    j.add_argument("--halves", default="tuning,judging", help="trafeval's halves to report")
    r = sub.add_parser("report")
    r.add_argument("--out", required=True)
    r.add_argument("--sets", default="trafeval,holdout,dragnet")
    r.add_argument("--rules", default="")
    r.add_argument("--verbose", action="store_true")
    r.add_argument("--standfirst-words", type=int, default=0)
    args = p.parse_args()
    commands = {"refresh": refresh, "cache-train": cache_train, "cache-dragnet-rest": cache_dragnet_rest,
                "extra": extra, "cand": cand, "judge": judge, "report": sl.report}
    commands[args.cmd](args)


if __name__ == "__main__":
    main()
