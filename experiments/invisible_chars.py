"""Invisible characters, custom-element menus and the snippet check's cut words, each against main (issue #35).

Each set is loaded (as `edrew evaluate` loads it, through experiments/snippet_leaks.py) three times in one
process: with both serializer changes switched off (main's serializer: `_visible_text` as main's white-space
join, `_is_nav_element` never true), with only the invisible characters left out, with only custom-element
menus taken for navigation. Only pages whose nodes differ from main's are scored again (models/default); the
others have main's scores, so every difference is paired on the same pages. trafilatura-eval-pages' snippets
are counted with main's matching (whole words at both ends) and with this branch's (a snippet's cut first or
last word, as trafilatura's substring test allows; invisible characters left out of both texts), over the
cached scores of `snippet_leaks.py cache` run on main (--main-cache).

    python experiments/invisible_chars.py --main-cache output/leaks-main --shared ../shared/datasets \
        --mozilla-labels output/mix/mozilla-readability.jsonl
    python experiments/invisible_chars.py --main-cache - --trafilatura --shared ../shared/datasets  # trafilatura
"""
from __future__ import annotations

import argparse
import math
import pickle
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import snippet_leaks as sl  # noqa: E402


def _shape(lp):
    p = lp.page
    return p.title, [(n.content, n.retps, n.boilerplate, n.hidden, n.path) for n in p.nodes]


def _load(name, args, invisible: bool, nav: bool):
    from edrew_scrapy import serializer

    patches = {}
    if not invisible:
        patches["_visible_text"] = lambda text: " ".join(text.split())
    if not nav:
        patches["_is_nav_element"] = lambda name: False
    # each module of the serializer package that calls one of them holds its own name for it
    modules = [m for k, m in list(sys.modules.items()) if k.startswith(serializer.__name__ + ".")]
    saved = [(m, k, getattr(m, k)) for m in modules for k in patches if hasattr(m, k)]
    for m, k, _ in saved:
        setattr(m, k, patches[k])
    try:
        return sl._load(name, args.shared, args.mozilla_labels)
    finally:
        for m, k, f in saved:
            setattr(m, k, f)


def old_count(text, snippets):
    """main's matching: the snippet's words with whole words at both ends, invisible characters as they are."""
    from edrew_scrapy.data import words

    def padded(t):
        return " " + " ".join(words(t)) + " "

    whole = padded(text)
    return sum(padded(s) in whole for s in snippets)


def trafilatura_snippets(pages) -> None:
    """trafilatura's snippets kept and leaked on trafeval's halves, with main's matching and the new one."""
    from edrew_scrapy.training.evaluate import trafilatura_extractor
    from edrew_scrapy.training.snippets import count_snippets

    tune, judge = sl.halves(pages)
    for half, idx in (("tuning", tune), ("judging", judge)):
        t = np.zeros(4, dtype=int)
        nk = nd = 0
        for i, keep, drop in sl.snippet_pages(pages, idx):
            nk, nd = nk + len(keep), nd + len(drop)
            text, _ = trafilatura_extractor(pages[i])
            t += (old_count(text, keep), old_count(text, drop), count_snippets(text, keep), count_snippets(text, drop))
        print(f"trafilatura {half}: keep {nk} drop {nd}; main's matching kept {t[0]} ({t[0] / nk:.3f}) leaked {t[1]} "
              f"({t[1] / nd:.3f}); new matching kept {t[2]} ({t[2] / nk:.3f}) leaked {t[3]} ({t[3] / nd:.3f})")


def _se(d):
    return float(np.std(d, ddof=1) / math.sqrt(len(d))) if len(d) > 1 else math.nan


def main() -> None:
    from edrew_scrapy.data.align import word_f1
    from edrew_scrapy.model.scorer import load_model
    from edrew_scrapy.training.evaluate import reference_text
    from edrew_scrapy.training.snippets import count_snippets, snippets_of

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--main-cache", required=True)
    p.add_argument("--sets", default="trafeval,holdout,dragnet")
    p.add_argument("--shared", default="../shared/datasets")
    p.add_argument("--mozilla-labels", default="output/mix/mozilla-readability.jsonl")
    p.add_argument("--trafilatura", action="store_true", help="trafilatura's snippets on trafeval, both matchings")
    args = p.parse_args()
    if args.trafilatura:
        trafilatura_snippets(_load("trafeval", args, False, False))
        return
    scorer = load_model("default")
    rec = {"threshold": scorer.threshold, "region_share": scorer.region_share}
    for name in args.sets.split(","):
        base = _load(name, args, False, False)
        cached = Path(args.main_cache) / f"{name}.pkl"
        main_scores = None
        if cached.exists():
            with open(cached, "rb") as f:  # snippet_leaks.py's own cache, never a model file
                c = pickle.load(f)
            if [_shape(lp) for lp in c["pages"]] == [_shape(lp) for lp in base]:
                main_scores = c["scores"]
            else:
                print(f"{name}: the main cache's pages differ from main's serializer here; not used")
        variants = {}
        for label, inv, nav in (("invisible", True, False), ("nav", False, True)):
            pages = _load(name, args, inv, nav)
            changed = [i for i, (a, b) in enumerate(zip(base, pages)) if _shape(a) != _shape(b)]
            variants[label] = (pages, changed)
            print(f"{name} {label}: {len(changed)} of {len(pages)} pages change", flush=True)
        need = sorted(set().union(*(set(ch) for _, ch in variants.values())))
        if main_scores is None:
            base_scores = dict(zip(need, sl.score_in_groups(scorer, [base[i] for i in need])))
        else:
            base_scores = {i: main_scores[i] for i in range(len(base))}
        for label, (pages, changed) in variants.items():
            new_scores = dict(zip(changed, sl.score_in_groups(scorer, [pages[i] for i in changed])))
            if name == "trafeval":
                tune, judge = sl.halves(base)
                for half, idx in (("tuning", tune), ("judging", judge)):
                    if main_scores is None:
                        idx = [i for i in idx if i in new_scores]
                    tot = np.zeros((3, 2), dtype=int)  # rows: main+old matching, main+new, branch+new
                    nk = nd = 0
                    for i in idx:
                        keep, drop = snippets_of(base[i])
                        if not keep and not drop:
                            continue
                        nk, nd = nk + len(keep), nd + len(drop)
                        t_main = sl.text_of(base[i], sl.decide(rec, base[i], base_scores[i]))
                        lp = pages[i] if i in new_scores else base[i]
                        t_new = sl.text_of(lp, sl.decide(rec, lp, new_scores.get(i, base_scores[i])))
                        tot[0] += (old_count(t_main, keep), old_count(t_main, drop))
                        tot[1] += (count_snippets(t_main, keep), count_snippets(t_main, drop))
                        tot[2] += (count_snippets(t_new, keep), count_snippets(t_new, drop))
                    rows = ("main, main's matching", "main, new matching", f"{label}, new matching")
                    for r, t in zip(rows, tot):
                        print(f"trafeval {half} ({nk} keep / {nd} drop{'' if main_scores else ', changed pages'}): "
                              f"{r}: kept {t[0]} ({t[0] / max(nk, 1):.3f}) leaked {t[1]} ({t[1] / max(nd, 1):.3f})")
                continue
            by = {}
            for i, lp in enumerate(base):
                ds = lp.meta.get("dataset", "") or name
                if i in new_scores:
                    ref = reference_text(lp)
                    a = word_f1(sl.text_of(lp, sl.decide(rec, lp, base_scores[i])), ref)
                    b = word_f1(sl.text_of(pages[i], sl.decide(rec, pages[i], new_scores[i])), ref)
                    by.setdefault(ds, []).append(b[2] - a[2])
                    if abs(b[2] - a[2]) > 1e-9:
                        print(f"    {ds} {lp.page_id} {a[2]:.3f} -> {b[2]:.3f}")
                else:
                    by.setdefault(ds, []).append(0.0)
            for ds, d in sorted(by.items()):
                d = np.asarray(d)
                print(f"{name}/{ds} {label}: {len(d)} pages, word-F1 diff {d.mean():+.4f} SE {_se(d):.4f} "
                      f"up {(d > 1e-9).sum()} down {(d < -1e-9).sum()}", flush=True)


if __name__ == "__main__":
    main()
