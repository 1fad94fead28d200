"""Dragnet's precision: what a page keeps that dragnet's reference leaves out, by kind, on a tuning slice (#35).

dragnet is AGPL: evaluation and ablations only. Three disjoint slices of its 1,381 pages, each evenly spaced
(`edrew evaluate`'s `_spread`): the 300 of `--limit 300` and dragnet-rest (300 of the other 1,081; both made by
snippet_leaks.py / news_precision.py, judging only), and **dragnet-tune** (this script: --count pages of the 781
left), the only dragnet pages whose errors are read.

    python experiments/dragnet_precision.py cache-tune --out DIR [--count 200]   # score the tuning slice
    python experiments/dragnet_precision.py cache-threads --out DIR               # training pages with long threads
    python experiments/dragnet_precision.py kinds --out DIR [--show KIND]       # kept words not in the reference
    python experiments/dragnet_precision.py judge --out DIR --rules R1,R2 [--article-words N] [--sets ...]

Builds on the caches of snippet_leaks.py (same --out).
"""
from __future__ import annotations

import argparse
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import snippet_leaks as sl  # noqa: E402

_WORD = re.compile(r"\w+")


def cache_tune(args) -> None:
    """dragnet pages in neither judging slice, evenly spaced, headline line dropped, scored."""
    from edrew_scrapy.cli import build_parser
    from edrew_scrapy.commands import evaluate as cmd

    opts = ["--dataset", f"dragnet=simple:{args.shared}/dragnet", "--split", "none", "--reference-title", "drop"]
    a = build_parser().parse_args(["evaluate", *opts, "--model", "default", "--no-progress"])
    cmd.resolve_datasets(a)
    pages = cmd.load_pages(a)
    out = Path(args.out)
    seen = {lp.page_id for name in ("dragnet", "dragnet-rest") for lp in sl._read(out, name)["pages"]}
    left = [p for p in pages if p.page_id not in seen]
    tune = cmd._spread(left, args.count)
    cmd.drop_reference_titles(tune)
    sl.write_cache(out, "dragnet-tune", tune)
    print(f"dragnet-tune: {len(tune)} pages of {len(left)} left", file=sys.stderr)


def _words(text: str):
    return [w.lower() for w in _WORD.findall(text)]


def kind_of(node, comment_words: Counter) -> str:
    """A kept node's kind, from what the page and the markup say about it (first match wins)."""
    from edrew_scrapy import rules

    w = _words(node.content)
    if comment_words and sum(x in comment_words for x in w) >= 0.8 * len(w) and len(w) >= 4:
        return "in dragnet's comments"
    if rules.in_comments(node):
        return "comment markup"
    if node.link_chars >= 0.5 * max(1, len(node.content)):
        return "link text"
    if node.tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
        return "heading"
    if len(w) <= 5:
        return "short (<= 5 words)"
    if node.tag in ("li", "dd", "dt", "td", "th"):
        return "list item / cell"
    return "prose"


def kinds(args) -> None:
    """Per kind: kept nodes whose words are mostly outside the reference, their words, and the pages they cost
    precision on; --show KIND prints those nodes."""
    from edrew_scrapy import rules
    from edrew_scrapy.data.align import word_f1
    from edrew_scrapy.training.evaluate import reference_text

    out = Path(args.out)
    off = tuple(r for r in args.off.split(",") if r)
    rec = sl._read(out, args.set)
    stats = defaultdict(Counter)
    per_page = []
    for lp, sc in zip(rec["pages"], rec["scores"]):
        d = sl.decide(rec, lp, sc, off)
        if d is None:
            continue
        ref_text = reference_text(lp)
        ref = Counter(_words(ref_text))
        comments = Counter(_words((lp.meta.get("record") or {}).get("comments") or ""))
        p, r, f = word_f1(sl.text_of(lp, d), ref_text)
        extra_words = Counter()
        for n, why in zip(lp.page.nodes, d.reasons):
            if why != rules.KEPT:
                continue
            w = _words(n.content)
            if not w:
                continue
            miss = sum(x not in ref for x in w)
            if miss < max(1, 0.5 * len(w)):
                continue
            k = kind_of(n, comments)
            stats[k]["nodes"] += 1
            stats[k]["words"] += len(w)
            extra_words[k] += len(w)
            if args.show and args.show in k:
                near = " ".join(rules.nodes._near_classes(n))[:70]
                print(f"  [{lp.page_id[-14:]} P{p:.2f}] {n.tag} {near} :: {n.content[:140]}")
        if extra_words:
            main = extra_words.most_common(1)[0][0]
            stats[main]["pages (most words)"] += 1
            stats[main]["1-P of those pages"] += round(1 - p, 4)
        per_page.append((1 - p, lp.page_id, lp.page.url, dict(extra_words)))
    for k, st in sorted(stats.items(), key=lambda kv: -kv[1]["words"]):
        print(f"{k:28s} " + ", ".join(f"{a} {b:.2f}" if isinstance(b, float) else f"{a} {b}" for a, b in st.items()))
    total = sum(x[0] for x in per_page)
    print(f"{len(per_page)} pages, mean P {1 - total / max(1, len(per_page)):.3f}; worst pages:")
    for loss, pid, url, ex in sorted(per_page, reverse=True)[:args.worst]:
        print(f"  1-P {loss:.2f} {pid[-14:]} {url[:70]} {ex}")


# main's guard for comments_are_content, before this entry
MAIN_ARTICLE_WORDS = 200


def _variants(new_rules):
    """name -> (rules left out, ARTICLE_WORDS): main's decision, the branch's, and each change left out alone."""
    from edrew_scrapy import rules

    out = {"main": (tuple(new_rules), MAIN_ARTICLE_WORDS), "branch": ((), rules.ARTICLE_WORDS),
           "-article-words": ((), MAIN_ARTICLE_WORDS)}
    out.update({f"-{r}": ((r,), rules.ARTICLE_WORDS) for r in new_rules})
    return out


def judge(args) -> None:
    """Per set: word P / R / F1 of main's decision, the branch's, and each change left out (paired: the same pages
    and scores); trafeval: must-keep kept / must-drop leaked per half."""

    from edrew_scrapy import rules

    out = Path(args.out)
    if args.article_words:
        rules.ARTICLE_WORDS = args.article_words
    variants = _variants([r for r in args.rules.split(",") if r])
    branch_words = rules.ARTICLE_WORDS

    def text(rec, lp, sc, v):
        off, words = variants[v]
        rules.ARTICLE_WORDS = words
        try:
            return sl.text_of(lp, sl.decide(rec, lp, sc, off))
        finally:
            rules.ARTICLE_WORDS = branch_words

    for name in args.sets.split(","):
        rec = sl._read(out, name)
        sl.judge_variants(name, rec, variants, lambda lp, sc, v, rec=rec: text(rec, lp, sc, v), args.halves,
                          "branch", prefix=f"{name}:")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("cache-tune")
    c.add_argument("--out", required=True)
    c.add_argument("--shared", default="../shared/datasets")
    c.add_argument("--count", type=int, default=200)
    k = sub.add_parser("kinds")
    k.add_argument("--out", required=True)
    k.add_argument("--set", default="dragnet-tune")
    k.add_argument("--off", default="")
    k.add_argument("--show", default="")
    k.add_argument("--worst", type=int, default=30)
    t = sub.add_parser("cache-threads")
    t.add_argument("--out", required=True)
    t.add_argument("--shared", default="../shared/datasets")
    t.add_argument("--mozilla-labels", default="output/mix/mozilla-readability.jsonl")
    t.add_argument("--share", type=float, default=0.3)
    j = sub.add_parser("judge")
    j.add_argument("--out", required=True)
    j.add_argument("--sets", default="dragnet-tune")
    j.add_argument("--rules", default="", help="the rules the branch adds (main: left out)")
    j.add_argument("--article-words", type=int, default=0, help="the branch's rules.ARTICLE_WORDS (default: as is)")
    j.add_argument("--halves", default="tuning,judging,all", help="trafeval's halves to report")
    args = p.parse_args()
    {"cache-tune": cache_tune, "kinds": kinds, "cache-threads": cache_threads, "judge": judge}[args.cmd](args)



def cache_threads(args) -> None:
    """The training side of the holdout split (WCXB dev, fundus-news, mozilla-readability) where comment-marked nodes
    hold --share or more of the unsettled words, scored: the pages on which the comments guard can decide anything."""
    from edrew_scrapy import rules

    pages, train = sl.holdout_training_side(args.shared, args.mozilla_labels)
    chosen = []
    for i in train:
        nodes = pages[i].page.nodes
        free = [not rules.settled(n) for n in nodes]
        comments = [f and rules.in_comments(n) for n, f in zip(nodes, free)]
        if any(comments) and rules.nodes._word_share(nodes, free, comments) >= args.share:
            chosen.append(pages[i])
    sl.write_cache(args.out, "train-threads", chosen)
    print(f"train-threads: {len(chosen)} of {len(train)} training pages", file=sys.stderr)


if __name__ == "__main__":
    main()
