"""Cross-validate the date chooser on cached candidates (experiments only; docs/experiments/2026-11-28-date-chooser.md).

`--build` runs evaluate_metadata with the rules on WCXB dev, fundus-news and mozilla-readability (as
`edrew evaluate --metadata` does, page types cross-validated) and writes each page's inputs to
dates.candidates as JSON lines; then (or from that file) the features are recomputed with dates.candidates
and per fold (registrable domain, seeds 1 and 2) the exact day and "date where none" of the rules and of a
chooser trained on the other folds are printed.
"""
import argparse
import json
import statistics

from edrew_scrapy import dates
from edrew_scrapy.data.splits import group_kfold

S = "/work/shared/datasets"
SETS = [("wcxb", S + "/wcxb-dev", "wcxb-dev", None), ("simple", S + "/fundus-news", "fundus-news", None),
        ("simple", "/work/main/output/mix", "mozilla-readability", "/work/main/output/mix/mozilla-readability.jsonl")]


def build(path):
    from edrew_scrapy.commands.evaluate_metadata import _shipped_classifier
    from edrew_scrapy.training import metadata_eval as me

    records = [r for kind, root, name, labels in SETS for r in me.read_records(kind, root, name, labels, None)]
    # "cv": the candidates read as the chooser reads them (htmldate where it dates the page)
    results = me.evaluate_metadata(records, systems=["edrew"], shipped_classifier=_shipped_classifier(None),
                                   date_chooser="cv")
    with open(path, "w", encoding="utf-8") as f:
        for r in results:
            c = r.date_candidates
            f.write(json.dumps({"dataset": r.record.dataset, "id": r.record.page_id, "url": r.record.url,
                                "truth": r.record.date, "group": me._group("domain")(r.record),
                                "inputs": None if c is None else [c.inputs[0], c.inputs[1],
                                                                  [list(s) for s in c.inputs[2]],
                                                                  *c.inputs[3:]]}) + "\n")


def load(path):
    rows = [json.loads(line) for line in open(path, encoding="utf-8")]
    for r in rows:
        if r["inputs"]:
            sources, h1, shown, *rest = r["inputs"]
            r["inputs"] = [[tuple(s) for s in sources], h1, [dates.Shown(*s) for s in shown], *rest]
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cache", help="JSON lines of each page's candidates' inputs (written with --build)")
    ap.add_argument("--build", action="store_true", help="run the rules on the three sets and write the cache")
    ap.add_argument("--l2", type=float, default=1.0)
    ap.add_argument("--seeds", default="1,2")
    ap.add_argument("--misses", action="store_true")
    ap.add_argument("--none-margin", type=float, default=None, help="the no-date option's margin (default never)")
    ap.add_argument("--days-only", action="store_true", help="abstain where the rules do, else the best day")
    args = ap.parse_args()
    if args.build:
        build(args.cache)
    rows = [r for r in load(args.cache) if r["dataset"] == "wcxb-dev" and r["inputs"]]
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
            for name, choose in (("rules", lambda c: c.rules), ("chooser", chooser.choose)):
                dated = [choose(rows[i]["cand"]) == rows[i]["truth"] for i in test if rows[i]["truth"]]
                none = [choose(rows[i]["cand"]) is not None for i in test if rows[i]["truth"] == ""]
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
