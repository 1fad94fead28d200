"""Mix a second head's probabilities into models/default's, per node, and judge the mix on cached pages (#35).

    # pages of one `edrew evaluate --dataset` spec, scored by each model (the first is the base: its threshold
    # and region share decide every variant)
    python experiments/news_mix.py cache --out DIR --name fresh --dataset dragnet-fresh=simple:FILE \
        --reference-title drop base=default news1=NEWS_DIR news2=NEWS_DIR_SEED2
    # word-F1 (P / R) of the base and of base * (1 - w) + other * w, paired per page, pooled over the caches named
    # (WCXB folds: per page type too); a cache named trafeval is judged by its snippets instead
    python experiments/news_mix.py judge --out DIR --names cv1,cv2,cv3,cv4,cv5 --weights 0.3

A WCXB fold's base is that fold's honest-metric head (`--dataset wcxb-dev=wcxb:FOLDS/cvK` with base=MODELS/cvK),
the other head one that never saw WCXB, so every page is judged by heads that never saw its domain.
"""
from __future__ import annotations

import argparse
import pickle
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import snippet_leaks as sl  # noqa: E402


def cache(args) -> None:
    from edrew_scrapy.cli import build_parser
    from edrew_scrapy.commands import evaluate as cmd
    from edrew_scrapy.model.scorer import load_model

    a = build_parser().parse_args(["evaluate", "--dataset", args.dataset, "--split", "none", "--reference-title",
                                   args.reference_title, "--model", "default", "--no-progress"])
    cmd.resolve_datasets(a)
    pages = cmd.load_pages(a)
    if args.reference_title == "drop":
        cmd.drop_reference_titles(pages)
    rec = {"pages": pages, "scores": {}}
    for spec in args.models:
        key, directory = spec.split("=", 1)
        scorer = load_model(directory)
        if not rec["scores"]:
            rec["base"], rec["threshold"], rec["region_share"] = key, scorer.threshold, scorer.region_share
        rec["scores"][key] = sl.score_in_groups(scorer, pages)
        print(f"{args.name}: {key} scored {len(pages)} pages", file=sys.stderr)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with open(out / f"{args.name}.pkl", "wb") as f:
        pickle.dump(rec, f)


def _mixed_text(rec, i: int, other: str, w: float) -> str:
    lp, base = rec["pages"][i], rec["scores"][rec["base"]][i]
    if base is None:
        return ""
    s = np.asarray(base, dtype=np.float64)
    if other != rec["base"]:
        s = (1.0 - w) * s + w * np.asarray(rec["scores"][other][i], dtype=np.float64)
    return sl.text_of(lp, sl.decide(rec, lp, list(s)))


def judge(args) -> None:
    from edrew_scrapy.data.align import word_f1
    from edrew_scrapy.training.evaluate import reference_text
    from edrew_scrapy.training.snippets import count_snippets

    weights = [float(x) for x in args.weights.split(",")]
    by: dict = {}
    names = None
    for name in args.names.split(","):
        with open(Path(args.out) / f"{name}.pkl", "rb") as f:  # this script's own cache, never a model file
            rec = pickle.load(f)
        others = [k for k in rec["scores"] if k != rec["base"]]
        variants = [(rec["base"], 0.0)] + [(k, w) for k in others for w in weights]
        names = ["base"] + [f"{k}@{w}" for k, w in variants[1:]]
        if name == "trafeval":
            tot = [[0, 0] for _ in variants]
            nk = nd = 0
            for i, keep, drop in sl.snippet_pages(rec["pages"], range(len(rec["pages"]))):
                nk, nd = nk + len(keep), nd + len(drop)
                for j, (k, w) in enumerate(variants):
                    t = _mixed_text(rec, i, k, w)
                    tot[j][0] += count_snippets(t, keep)
                    tot[j][1] += count_snippets(t, drop)
            print(f"trafeval ({nk} must-keep / {nd} must-drop): " + "; ".join(
                f"{v} kept {k} ({k / nk:.4f}) leaked {d} ({d / nd:.4f})" for v, (k, d) in zip(names, tot)))
            continue
        for i, lp in enumerate(rec["pages"]):
            ref = reference_text(lp)
            vals = [word_f1(_mixed_text(rec, i, k, w), ref) for k, w in variants]
            ds = args.label or lp.meta.get("dataset", "") or name
            by.setdefault(ds, []).append(vals)
            if args.types and lp.page_type_or_site:
                by.setdefault(f"{ds}/{lp.page_type_or_site}", []).append(vals)
    if by:
        sl.print_paired(by, names, "base")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("cache")
    c.add_argument("--out", required=True)
    c.add_argument("--name", required=True)
    c.add_argument("--dataset", required=True)
    c.add_argument("--reference-title", choices=("keep", "drop"), default="keep")
    c.add_argument("models", nargs="+", help="KEY=MODEL_DIR, the base first")
    j = sub.add_parser("judge")
    j.add_argument("--out", required=True)
    j.add_argument("--names", required=True)
    j.add_argument("--weights", default="0.3")
    j.add_argument("--label", default="", help="pool the caches' pages under this name (e.g. wcxb-cv)")
    j.add_argument("--types", action="store_true", help="also per page type (WCXB)")
    a = p.parse_args()
    {"cache": cache, "judge": judge}[a.cmd](a)


if __name__ == "__main__":
    main()
