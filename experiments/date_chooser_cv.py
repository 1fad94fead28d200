"""Cross-validate the date chooser on cached candidates (experiments only; docs/experiments/2026-11-28-date-chooser.md).

Reads the pickle written by a run of evaluate_metadata with the rules (each page's candidates' inputs),
recomputes the features with dates.candidates, and prints per fold (registrable domain, seeds 1 and 2) the
exact day and "date where none" of the rules and of a chooser trained on the other folds.
"""
import argparse
import pickle
import statistics

from edrew_scrapy import dates
from edrew_scrapy.data.splits import group_kfold


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cache")
    ap.add_argument("--l2", type=float, default=1.0)
    ap.add_argument("--seeds", default="1,2")
    ap.add_argument("--misses", action="store_true")
    ap.add_argument("--none-margin", type=float, default=None, help="the no-date option's margin (default never)")
    ap.add_argument("--days-only", action="store_true", help="abstain where the rules do, else the best day")
    args = ap.parse_args()
    rows = [r for r in pickle.load(open(args.cache, "rb")) if r["dataset"] == "wcxb-dev" and r["inputs"]]
    for r in rows:
        r["cand"] = dates.candidates(*r["inputs"])
    for seed in [int(s) for s in args.seeds.split(",")]:
        splits = group_kfold(rows, 5, key=lambda r: r["group"], seed=seed)
        table = {"rules": [], "chooser": []}
        for fold, (train, test) in enumerate(splits, 1):
            spec = dates.fit_chooser([(rows[i]["cand"], rows[i]["truth"]) for i in train
                                      if rows[i]["truth"] is not None], l2=args.l2)
            chooser = dates.DateChooser(spec)
            chooser.none_margin = None if args.days_only else args.none_margin
            for name, pick in (("rules", lambda r: r["cand"].rules), ("chooser", lambda r: chooser.choose(r["cand"]))):
                dated = [pick(rows[i]) == rows[i]["truth"] for i in test if rows[i]["truth"]]
                none = [pick(rows[i]) is not None for i in test if rows[i]["truth"] == ""]
                table[name].append((statistics.fmean(dated), statistics.fmean(none), len(dated), sum(dated)))
            if args.misses and seed == 1:
                for i in test:
                    r = rows[i]
                    a, b = r["cand"].rules, chooser.choose(r["cand"])
                    if a != b and r["truth"] is not None:
                        print(f"  f{fold} {r['id']} truth={r['truth']!r} rules={a} chooser={b} "
                              f"{'WON' if b == r['truth'] else 'LOST' if a == r['truth'] else 'other'} {r['url']}")
        for name, t in table.items():
            dated = sum(x[3] for x in t) / sum(x[2] for x in t)
            print(f"seed {seed} {name:8s} exact {dated:.4f} folds " + " ".join(f"{x[0]:.3f}" for x in t)
                  + " | none " + " ".join(f"{x[1]:.3f}" for x in t))
    spec = dates.fit_chooser([(r["cand"], r["truth"]) for r in rows if r["truth"] is not None], l2=args.l2)
    print(" ".join(f"{n}={w:+.2f}" for n, w in zip(spec["features"], spec["weights"]) if abs(w) > 0.05))


if __name__ == "__main__":
    main()
