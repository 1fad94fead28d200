"""The page-type classifier's recipe judged in `edrew evaluate --metadata`'s own folds (issue #36).

Two steps:

    # every labelled page of the sets serialised once, as evaluate --metadata does it (the serializer's tree
    # read by metadata.read_tree, metadata.declared_of), and pagetype.page_features cached as JSON lines
    python experiments/pagetype_choice.py cache --dataset wcxb-dev=wcxb:$S/wcxb-dev \
        --dataset fundus-news=simple:$S/fundus-news --out output/pagetype-choice/features.jsonl
    # each recipe cross-validated on the set with several page types in evaluate's folds (registrable domain,
    # seeds 1 and 2), and trained on all of it to type the held-out sets (all articles)
    python experiments/pagetype_choice.py cv --cache output/pagetype-choice/features.jsonl --recipes base,nested

The folds are training/metadata_eval.page_type_classifiers' (data.splits.group_kfold on the records' split
key, the feature threshold lowered as there); the baseline recipe reproduces its accuracy. Prints per recipe
and seed the accuracy, each fold's, the per-type accuracy and (with --confusion) the confusion matrix.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np


def cache(args) -> None:
    from edrew_scrapy.data import read_source
    from edrew_scrapy.metadata import declared_of, read_tree
    from edrew_scrapy.pagetype import FEATURE_VERSION, page_features
    from edrew_scrapy.serializer import serialize
    from edrew_scrapy.training import metadata_eval as me

    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    group_of = me._group("domain")
    start = time.time()
    with out.open("w", encoding="utf-8") as f:
        for spec in args.dataset:
            name, rest = spec.split("=", 1)
            kind, path = rest.split(":", 1)
            path, labels = Path(path), None
            if path.is_file():  # a simple set's label file
                path, labels = path.parent, path
            for n, record in enumerate(me.read_records(kind, path, name, labels)):
                data = read_source(record.source)
                page = serialize(data, encoding=record.encoding, url=record.url, tree_reader=read_tree)
                declared = declared_of(page, data, encoding=record.encoding, url=record.url)
                row = {"dataset": name, "id": record.page_id, "label": record.page_type, "group": group_of(record),
                       "feature_version": FEATURE_VERSION, "features": page_features(page, declared=declared),
                       "scorer_features": page_features(page)}
                f.write(json.dumps(row) + "\n")
                if n % 200 == 0:
                    print(f"{name} {n} {time.time() - start:.0f}s", file=sys.stderr)


# ---- recipes ----------------------------------------------------------------------------------------------

def _matrix(rows, names):
    """Sparse rows: centring is left to the intercept (L2 on the scaled weights, the same optimum)."""
    from edrew_scrapy.pagetype import _sparse_rows

    return _sparse_rows(rows, names)


def _kept(rows, groups, min_domains):
    seen = {}
    for feats, g in zip(rows, groups):
        for name, value in feats.items():
            if value:
                seen.setdefault(name, set()).add(g)
    return sorted(n for n, owners in seen.items() if len(owners) >= min_domains)


def interaction_features(feats):
    """The URL's shape (the site's root, a slug of 3+ dashes, another path) crossed with what the page
    declares (its declared kinds, an author, a day; or none of them)."""
    if feats.get("url_root"):
        shape = "root"
    elif feats.get("url_last_dashes", 0) >= 3:
        shape = "slug"
    else:
        shape = "path"
    evidence = [k for k in feats if k.startswith("k:")] + [k for k in ("d:author", "d:date", "u:year") if feats.get(k)]
    out = {f"x:{shape}&{e}": 1.0 for e in evidence}
    if not evidence:
        out[f"x:{shape}&none"] = 1.0
    out["x:" + shape] = 1.0
    return out


class Recipe:
    """fit(rows, labels, groups) -> predict(rows) -> list of (type, probability)."""

    def __init__(self, c=0.02, min_domains=10, scaling="std", nested=None, model="logreg", hidden=32,
                 alpha=1e-3, interactions=False, ws=1.0, choose=None, wnorm=None, ks=1.0, gate=0):
        self.c, self.min_domains, self.scaling, self.nested = c, min_domains, scaling, nested
        # choose: C candidates chosen by pagetype.choose_c inside each training fold, as evaluate --metadata does
        # wnorm: the page's words (w:, h:) valued min(1, sqrt(wnorm / their number)), a page's many words damped
        self.choose, self.wnorm = choose, wnorm
        # gate > 0: "forum" only with forum evidence (pagetype.forum_evidence); with choose or gate the recipe
        # is pagetype's own fit_spec / choose_c / PageTypeClassifier, exactly as evaluate --metadata trains it
        self.gate = gate
        self.ks = ks  # the declared types (k:, t:) divided by this after scaling: below 1, a weaker prior on them
        self.model, self.hidden, self.alpha, self.interactions = model, hidden, alpha, interactions
        self.ws = ws  # the page's words (w:, h:) divided by this after scaling: a stronger prior on them

    def _rows(self, rows):
        if not self.interactions and not self.wnorm:
            return rows
        out = []
        for feats in rows:
            feats = dict(feats)
            if self.interactions:
                feats.update(interaction_features(feats))
            if self.wnorm:
                words = [k for k in feats if k[:2] in ("w:", "h:")]
                value = min(1.0, (self.wnorm / max(1, len(words))) ** 0.5)
                for k in words:
                    feats[k] = value
            out.append(feats)
        return out

    def fit(self, rows, labels, groups):
        rows = self._rows(rows)
        needed = min(self.min_domains, max(1, len(set(groups)) // 4))
        self.spec = None
        if self.choose or self.gate:
            from edrew_scrapy.pagetype import PageTypeClassifier, choose_c, fit_spec

            c = self.c
            if self.choose:
                c, _ = choose_c(rows, list(labels), list(groups), self.choose, min_pages=needed,
                                scaling=self.scaling, forum_domains=int(self.gate))
            self.chosen_c = c
            self.spec = PageTypeClassifier(fit_spec(rows, list(labels), c=c, min_pages=needed, groups=list(groups),
                                                    scaling=self.scaling, forum_domains=int(self.gate)))
            return self
        self.names = _kept(rows, groups, needed)
        x = _matrix(rows, self.names)
        mean = np.asarray(x.mean(axis=0)).ravel()
        std = np.sqrt(np.maximum(np.asarray(x.multiply(x).mean(axis=0)).ravel() - mean ** 2, 0))
        if self.scaling == "std":
            scale = std
        elif self.scaling == "maxabs":  # binary features keep 0/1, counts divided by their largest value
            scale = np.asarray(abs(x).max(axis=0).todense()).ravel()
        elif self.scaling == "std-dense":  # binary (0/1) features not scaled, the rest standardised
            nz = x.copy()
            nz.data = ((nz.data != 0) & (nz.data != 1)).astype(float)
            binary = np.asarray(nz.max(axis=0).todense()).ravel() == 0
            scale = np.where(binary, 1.0, std)
        else:
            raise ValueError(self.scaling)
        scale[scale < 1e-6] = 1.0
        if self.ws != 1.0:
            scale = scale * np.array([self.ws if n[:2] in ("w:", "h:") else 1.0 for n in self.names])
        if self.ks != 1.0:
            scale = scale * np.array([self.ks if n[:2] in ("k:", "t:") else 1.0 for n in self.names])
        self.scale = scale
        z = self._scaled(x)
        c = self.c
        if self.nested:
            c = self._nested_c(z, labels, groups)
        self.chosen_c = c
        self.clf = self._new(c)
        self.clf.fit(z, list(labels))
        return self

    def _new(self, c):
        if self.model == "logreg":
            from sklearn.linear_model import LogisticRegression

            return LogisticRegression(C=c, max_iter=3000)
        from sklearn.neural_network import MLPClassifier

        return MLPClassifier(hidden_layer_sizes=(self.hidden,), alpha=self.alpha if c is None else 1 / c,
                             max_iter=400, early_stopping=False, random_state=1)

    def _nested_c(self, z, labels, groups):
        from types import SimpleNamespace

        from edrew_scrapy.data.splits import group_kfold

        items = [SimpleNamespace(group=g, domain=g) for g in groups]
        labels = np.asarray(labels)
        best = None
        for c in self.nested:
            right = 0
            for train, test in group_kfold(items, 4, key=lambda p: p.group, seed=7):
                clf = self._new(c)
                clf.fit(z[train], labels[train])
                right += int((clf.predict(z[test]) == labels[test]).sum())
            if best is None or right > best[0]:
                best = (right, c)
        return best[1]

    def _scaled(self, x):
        from scipy.sparse import diags

        return (x @ diags(1 / self.scale)).tocsr()

    def predict(self, rows):
        rows = self._rows(rows)
        if self.spec is not None:
            out = []
            for feats in rows:
                p = self.spec.probabilities(feats)
                out.append((self.spec.classes[int(p.argmax())], float(p.max())))
            return out
        z = self._scaled(_matrix(rows, self.names))
        p = self.clf.predict_proba(z)
        return [(self.clf.classes_[int(i)], float(p[r, i])) for r, i in enumerate(p.argmax(axis=1))]


RECIPES = {
    "base": dict(),
    "c01": dict(c=0.01), "c05": dict(c=0.05), "c1": dict(c=0.1),
    "nested": dict(nested=(0.005, 0.01, 0.02, 0.05, 0.1)),
    "maxabs": dict(scaling="maxabs", c=1.0),
    "maxabs-nested": dict(scaling="maxabs", nested=(0.1, 0.3, 1.0, 3.0, 10.0)),
    "stdd-nested": dict(scaling="std-dense", nested=(0.02, 0.05, 0.1, 0.3, 1.0)),
    "inter": dict(interactions=True),
    "inter-nested": dict(interactions=True, nested=(0.005, 0.01, 0.02, 0.05, 0.1)),
    "mlp": dict(model="mlp", c=None, alpha=1.0),
}


def _parse_recipe(name):
    """A named recipe, or key=value,key=value (c, min_domains, scaling, model, hidden, alpha, interactions)."""
    if name in RECIPES:
        return Recipe(**RECIPES[name])
    kw = {}
    for part in name.split(";"):
        k, v = part.split("=")
        if k in ("c", "alpha", "ws", "wnorm", "ks"):
            kw[k] = None if v == "none" else float(v)
        elif k in ("min_domains", "hidden", "gate"):
            kw[k] = int(v)
        elif k == "interactions":
            kw[k] = v == "1"
        elif k in ("nested", "choose"):
            kw[k] = tuple(float(x) for x in v.split("/"))
        else:
            kw[k] = v
    return Recipe(**kw)


def cv(args) -> None:
    from types import SimpleNamespace

    from edrew_scrapy.data.splits import group_kfold
    from edrew_scrapy.pagetype import PAGE_TYPES

    rows = [json.loads(line) for line in Path(args.cache).read_text(encoding="utf-8").splitlines() if line]
    key = "scorer_features" if args.scorer else "features"
    main = [r for r in rows if r["dataset"] == args.main and r["label"]]
    held = [r for r in rows if r["dataset"] != args.main]
    for name in args.recipes.split(","):
        for seed in args.seeds:
            recipe = _parse_recipe(name)
            items = [SimpleNamespace(group=r["group"]) for r in main]
            predicted = [None] * len(main)
            folds, chosen = [], []
            for train, test in group_kfold(items, 5, key=lambda p: p.group, seed=seed):
                recipe.fit([main[i][key] for i in train], [main[i]["label"] for i in train],
                           [main[i]["group"] for i in train])
                chosen.append(recipe.chosen_c)
                for i, got in zip(test, recipe.predict([main[i][key] for i in test])):
                    predicted[i] = got[0]
                folds.append(np.mean([predicted[i] == main[i]["label"] for i in test]))
            acc = np.mean([p == r["label"] for p, r in zip(predicted, main)])
            line = f"{name:<28} seed {seed}: {acc:.4f}  folds " + " ".join(f"{f:.3f}" for f in folds)
            if recipe.nested or recipe.choose:
                line += f"  C {chosen}"
            if seed == args.seeds[0] and held:
                recipe.fit([r[key] for r in main], [r["label"] for r in main], [r["group"] for r in main])
                for dataset in dict.fromkeys(r["dataset"] for r in held):
                    these = [r for r in held if r["dataset"] == dataset]
                    got = recipe.predict([r[key] for r in these])
                    right = np.mean([g[0] == (r["label"] or "article") for g, r in zip(got, these)])
                    line += f"  {dataset} {right:.3f}"
            print(line, flush=True)
            if args.confusion and seed == args.seeds[0]:
                total = Counter(r["label"] for r in main)
                print("true\\pred " + " ".join(f"{t[:5]:>5}" for t in PAGE_TYPES))
                for t in PAGE_TYPES:
                    c = Counter(p for p, r in zip(predicted, main) if r["label"] == t)
                    print(f"{t[:9]:<9} " + " ".join(f"{c[u]:>5}" for u in PAGE_TYPES) + f"  {c[t] / total[t]:.3f}")
            if args.predictions and seed == args.seeds[0]:
                with open(f"{args.predictions}-{name}.jsonl", "w") as f:
                    for p, r in zip(predicted, main):
                        f.write(json.dumps({"id": r["id"], "label": r["label"], "predicted": p}) + "\n")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("cache")
    p.add_argument("--dataset", action="append", required=True, help="NAME=KIND:PATH")
    p.add_argument("--out", required=True)
    p = sub.add_parser("cv")
    p.add_argument("--cache", required=True)
    p.add_argument("--main", default="wcxb-dev")
    p.add_argument("--recipes", default="base")
    p.add_argument("--seeds", type=int, nargs="+", default=[1, 2])
    p.add_argument("--confusion", action="store_true")
    p.add_argument("--scorer", action="store_true", help="the features as the scorer computes them (no declared)")
    p.add_argument("--predictions", default=None)
    args = parser.parse_args(argv)
    {"cache": cache, "cv": cv}[args.cmd](args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
