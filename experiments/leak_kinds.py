"""What still leaks on trafilatura-eval-pages after the news-precision rules, and one rule judged (issue #35).

Reads the caches of snippet_leaks.py / news_precision.py (trafeval, holdout, dragnet, dragnet-rest, train) and
applies one candidate rule after the whole decision (rules.explain), since it reads what the other rules kept:

    python experiments/leak_kinds.py count --out DIR          # tuning half: each candidate's stopped / lost snippets
    python experiments/leak_kinds.py judge --out DIR --sets trafeval,holdout,dragnet,dragnet-rest

The candidate, `empty-headings`: a kept heading (<h1>..<h6>, at most 10 words) under which nothing is kept
before the next heading of the same or a higher level. The others counted are class words: a comment form's
heading, a like button, "copyright" inside a longer class word. Results:
docs/experiments/2026-11-28-leak-kinds.md.
"""
from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import snippet_leaks as sl  # noqa: E402

_HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
EMPTY_HEADING_WORDS = 10


def empty_headings(nodes, keep, most=EMPTY_HEADING_WORDS):
    """Kept short headings with no kept non-heading node before the next heading of the same or a higher level."""
    from edrew_scrapy.words import count_words

    out = [False] * len(nodes)
    for i, node in enumerate(nodes):
        if not keep[i] or node.tag not in _HEADINGS or count_words(node.content) > most:
            continue
        heads = True
        for j in range(i + 1, len(nodes)):
            tag = nodes[j].tag
            if tag in _HEADINGS:
                if tag <= node.tag:  # "h2" <= "h3": the same or a higher level ends the section
                    break
            elif keep[j]:
                heads = False
                break
        out[i] = heads
    return out


def _class_rule(pattern: str, most: int):
    from edrew_scrapy import rules
    from edrew_scrapy.words import count_words

    pat = re.compile(pattern)
    return lambda nodes, keep: [k and count_words(n.content) <= most and any(pat.search(t) for t in
                                                                              rules.nodes._near_classes(n))
                                for n, k in zip(nodes, keep)]


def candidates():
    return {"empty-headings": empty_headings,
            "comment-forms": _class_rule(r"comment-?respond|comment-?form|reply-?title|^respond$", 30),
            "likes": _class_rule(r"(?:^|[-_])(?:likes?|likebox|like-?button|wpl-likebox)(?:[-_]|$)", 6),
            "copyright-inside": _class_rule(r"copyright", 20)}


def _texts(lp, d, drop):
    kept = d.kept
    t0 = sl.text_of(lp, d)
    t1 = "\n".join(n.content for n, k, x in zip(lp.page.nodes, kept, drop) if k and not x)
    return t0, t1


def count(args) -> None:
    """Tuning half only: each candidate's must-drop snippets stopped and must-keep snippets lost; train pages
    (news_precision.py cache-train): the words it drops, relevant or not by the labels."""
    from edrew_scrapy import rules
    from edrew_scrapy.training.snippets import count_snippets, snippets_of
    from edrew_scrapy.words import count_words

    out = Path(args.out)
    cands = candidates()
    st = {c: Counter() for c in cands}
    rec = sl._read(out, "trafeval")
    tune, _judge = sl.halves(rec["pages"])
    for i in tune:
        lp, sc = rec["pages"][i], rec["scores"][i]
        keep, drop = snippets_of(lp)
        d = sl.decide(rec, lp, sc)
        if d is None or not (keep or drop):
            continue
        for c, f in cands.items():
            e = f(lp.page.nodes, d.kept)
            if not any(e):
                continue
            t0, t1 = _texts(lp, d, e)
            st[c]["nodes"] += sum(e)
            st[c]["keep-lost"] += count_snippets(t0, keep) - count_snippets(t1, keep)
            st[c]["drop-stopped"] += count_snippets(t0, drop) - count_snippets(t1, drop)
            if args.show == c:
                for n, x in zip(lp.page.nodes, e):
                    if x:
                        near = " ".join(rules.nodes._near_classes(n))
                        print(f"  [trafeval] {lp.page_id[-12:]} {n.tag} {near[:50]} :: {n.content[:70]!r}")
    if (out / "train.pkl").exists():
        rec = sl._read(out, "train")
        for lp, sc in zip(rec["pages"], rec["scores"]):
            d = sl.decide(rec, lp, sc)
            if d is None:
                continue
            for c, f in cands.items():
                for j, x in enumerate(f(lp.page.nodes, d.kept)):
                    if x:
                        rel = "rel" if lp.labels[j] else "irr"
                        st[c][f"{lp.meta.get('dataset')} words-{rel}"] += count_words(lp.page.nodes[j].content)
    for c, s in st.items():
        print(c, dict(sorted(s.items())))


def judge(args) -> None:
    """Per set: main's decision against main's + the candidate (paired): word P / R / F1, or trafeval's snippets
    kept / leaked per half."""
    from edrew_scrapy.data.align import word_f1
    from edrew_scrapy.training.evaluate import reference_text
    from edrew_scrapy.training.snippets import count_snippets, snippets_of

    f = candidates()[args.rule]
    out = Path(args.out)
    for name in args.sets.split(","):
        rec = sl._read(out, name)
        pages, scores = rec["pages"], rec["scores"]
        if name == "trafeval":
            for half, idx in zip(("tuning", "judging"), sl.halves(pages)):
                tot = np.zeros(4, dtype=int)
                nk = nd = 0
                for i in idx:
                    keep, drop = snippets_of(pages[i])
                    d = sl.decide(rec, pages[i], scores[i])
                    nk, nd = nk + len(keep), nd + len(drop)
                    if d is None or not (keep or drop):
                        continue
                    t0, t1 = _texts(pages[i], d, f(pages[i].page.nodes, d.kept))
                    tot += [count_snippets(t0, keep), count_snippets(t0, drop), count_snippets(t1, keep),
                            count_snippets(t1, drop)]
                print(f"trafeval {half} ({nk} keep / {nd} drop): main kept {tot[0]} ({tot[0] / nk:.3f}) leaked "
                      f"{tot[1]} ({tot[1] / nd:.3f}); +{args.rule} kept {tot[2]} ({tot[2] / nk:.3f}) leaked {tot[3]} "
                      f"({tot[3] / nd:.3f})")
            continue
        by = {}
        for lp, sc in zip(pages, scores):
            d = sl.decide(rec, lp, sc)
            ref = reference_text(lp)
            if d is None:
                vals = [word_f1("", ref)] * 2
            else:
                t0, t1 = _texts(lp, d, f(lp.page.nodes, d.kept))
                vals = [word_f1(t0, ref), word_f1(t1, ref)]
            ds = lp.meta.get("dataset", "") or name
            ds = "dragnet-rest" if name == "dragnet-rest" else ds
            by.setdefault(ds, []).append(vals)
            if ds == "wcxb-dev" and lp.page_type_or_site:
                by.setdefault(f"{ds}/{lp.page_type_or_site}", []).append(vals)
        for ds, rows in sorted(by.items()):
            a = np.array(rows)  # pages x (main, +rule) x (P, R, F1)
            dd = a[:, 1, 2] - a[:, 0, 2]
            print(f"{ds}: {len(rows)} pages; main {a[:, 0, 2].mean():.4f} (P {a[:, 0, 0].mean():.3f} / R "
                  f"{a[:, 0, 1].mean():.3f}); +{args.rule} {a[:, 1, 2].mean():.4f} (P {a[:, 1, 0].mean():.3f} / R "
                  f"{a[:, 1, 1].mean():.3f}); diff {dd.mean():+.4f} SE {sl._se(dd):.4f} up {(dd > 1e-9).sum()} "
                  f"down {(dd < -1e-9).sum()}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("count")
    c.add_argument("--out", required=True)
    c.add_argument("--show", default="")
    j = sub.add_parser("judge")
    j.add_argument("--out", required=True)
    j.add_argument("--sets", default="trafeval,holdout,dragnet,dragnet-rest")
    j.add_argument("--rule", default="empty-headings", choices=sorted(candidates()))
    args = p.parse_args()
    {"count": count, "judge": judge}[args.cmd](args)


if __name__ == "__main__":
    main()
