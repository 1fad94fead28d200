"""Is there information left outside a model's scores? A stacking check on cross-validation fold models.

Every WCXB page is scored by the fold model that did not see it (`extract.score_pages`, as extraction
scores). Then a gradient-boosted classifier is trained, fold by fold on the other folds' nodes, on the
fold model's score plus the 20 shallow features the head reads, and again with candidate inputs added:

- tree: the share of the page's text under the node's own element, its parent and its grandparent, and
  each one's link density (what readability and boilerplate detectors score blocks by; the head sees
  the page as a sequence of nodes, not as a tree);
- title: how many of the node's words are in the page's <title>, and how many of the title's words it holds;
- scores around: the mean and the largest score of the 3 nodes on each side, the word-weighted mean score
  of the nodes under the parent and the grandparent element, the node's score over the page's best, and
  the page's best (a second pass over the first pass's scores);
- far ancestors: the tag names, classes and ids of the ancestors that the 20-token reTPS cuts off (the
  page serialized again with `retps_max_tokens=400`: the same nodes, longer reTPS), hashed, through a
  logistic regression trained on the other folds (and, for the nodes the stacker trains on, on the
  folds other than theirs and the test fold), whose output is the one added input;
- page type (oracle): the page's true WCXB page type, one-hot. Not an input a model could have, but a
  ceiling: what a perfect page-type classifier in front of the head would be worth.

Each stacked score goes through `extract.relevant_mask` as extraction decides (thresholds 0.4 and 0.5,
region share 0.7), and page word-F1 is reported per page type, next to the fold models' own scores with
their own thresholds. A candidate that does not raise the stacked score over the stacked baseline holds
nothing the model's score lacks, and is not worth training a head on.

    python experiments/stacking_check.py --wcxb "$EDREW_WCXB" --models output/eval-wcxb-cv-heads30-b/models

Needs the `eval` extra (scikit-learn). About 15 minutes on one core for the 1,497 pages.
"""
from __future__ import annotations

import argparse
import math
import os
import re
import sys
from collections import defaultdict
from pathlib import Path
from typing import Dict, List

import numpy as np

from edrew_scrapy.data.splits import GROUP_KEYS

WORD = re.compile(r"\w+")
GROUPS = ("tree", "title", "scores around", "page type (oracle)", "far ancestors")
FAR_FROM = 20  # the reTPS tokens the model reads (DEFAULT_RETPS_MAX_TOKENS)


def _ancestors(path: str, levels: int) -> List[str]:
    """The element's own path and those of its `levels - 1` nearest ancestors (absolute paths only)."""
    out = []
    while path.startswith("/") and len(out) < levels:
        out.append(path)
        path = path[:path.rfind("/")]
    return out


def tree_features(page) -> np.ndarray:
    """(nodes, 6): text share and link density of the subtree of the node's element, parent, grandparent."""
    chars: Dict[str, int] = defaultdict(int)
    links: Dict[str, int] = defaultdict(int)
    total = 0
    for node in page.nodes:
        n = len(node.content)
        total += n
        path = node.path
        while path.startswith("/"):
            chars[path] += n
            links[path] += node.link_chars
            path = path[:path.rfind("/")]
    total = max(total, 1)
    out = np.zeros((len(page.nodes), 6), dtype=np.float32)
    for i, node in enumerate(page.nodes):
        own = min(node.link_chars / max(len(node.content), 1), 1.0)
        ups = _ancestors(node.path, 3)
        for k in range(3):
            if k < len(ups):
                c = chars[ups[k]]
                out[i, 2 * k: 2 * k + 2] = (c / total, min(links[ups[k]] / max(c, 1), 1.0))
            else:  # a node whose path is in document-order form: its own values
                out[i, 2 * k: 2 * k + 2] = (len(node.content) / total, own)
    return out


def title_features(page) -> np.ndarray:
    title = {w.lower() for w in WORD.findall(page.title or "") if len(w) > 2}
    out = np.zeros((len(page.nodes), 2), dtype=np.float32)
    for i, node in enumerate(page.nodes):
        words = [w.lower() for w in WORD.findall(node.content)]
        out[i] = (sum(w in title for w in words) / max(len(words), 1),
                  len(title.intersection(words)) / max(len(title), 1))
    return out


def score_features(page, scores: np.ndarray, scored: np.ndarray) -> np.ndarray:
    """(nodes, 6) from the first pass's scores of the scored nodes (see the module docstring)."""
    out = np.zeros((len(page.nodes), 6), dtype=np.float32)
    at = np.flatnonzero(scored)
    if not len(at):
        return out
    own = scores[at]
    best = float(own.max())
    sums: Dict[str, float] = defaultdict(float)
    weights: Dict[str, float] = defaultdict(float)
    for i in at:
        w = len(page.nodes[i].content.split()) + 1.0
        for path in _ancestors(page.nodes[i].path, 3)[1:]:
            sums[path] += scores[i] * w
            weights[path] += w
    for j, i in enumerate(at):
        around = np.concatenate([own[max(0, j - 3): j], own[j + 1: j + 4]])
        ups = _ancestors(page.nodes[i].path, 3)[1:]
        block = [sums[p] / weights[p] for p in ups if weights.get(p)] + [scores[i]] * 2
        out[i] = (around.mean() if len(around) else scores[i], around.max() if len(around) else scores[i],
                  block[0], block[1], scores[i] / max(best, 1e-6), best)
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wcxb", default=os.environ.get("EDREW_WCXB"), help="WCXB folder (default $EDREW_WCXB)")
    parser.add_argument("--models", required=True, type=Path, help="folder of fold1 ... foldK model folders")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1, help="the folds' seed, as edrew evaluate --seed")
    parser.add_argument("--group-by", choices=GROUP_KEYS, default="domain",
                        help="the folds' key, as edrew evaluate --group-by (host for fold models trained "
                             "before 27 Nov 2026)")
    args = parser.parse_args(argv)
    if args.folds < 3:
        parser.error("--folds must be at least 3: the far-ancestor group nests a cross-validation in each fold")
    if not args.wcxb:
        parser.error("give the WCXB folder (--wcxb PATH or $EDREW_WCXB)")
    missing = [k for k in range(1, args.folds + 1) if not (args.models / f"fold{k}").is_dir()]
    if missing:
        parser.error(f"{args.models} has no fold{missing[0]} model folder")

    import torch
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.feature_extraction import FeatureHasher
    from sklearn.linear_model import SGDClassifier
    from tqdm import tqdm

    from edrew_scrapy.commands.evaluate import check_held_out, held_out
    from edrew_scrapy.data import read_source, wcxb
    from edrew_scrapy.data.align import word_f1
    from edrew_scrapy.data.splits import group_key, group_kfold
    from edrew_scrapy.extract import score_pages
    from edrew_scrapy.model.features import page_features
    from edrew_scrapy.model.scorer import load_model
    from edrew_scrapy.rules import relevant_mask, settled
    from edrew_scrapy.serializer import serialize
    from edrew_scrapy.tokens import SerializerConfig
    from edrew_scrapy.training.evaluate import predicted_text, reference_text

    torch.set_num_threads(1)
    sys.setrecursionlimit(100_000)  # very deep pages, as edrew evaluate allows
    pages = list(tqdm(wcxb.iter_pages(args.wcxb, wcxb.page_ids(args.wcxb)), desc="read pages", unit="page"))
    scores: List[np.ndarray] = [np.zeros(0, dtype=np.float32)] * len(pages)
    fold_of = [0] * len(pages)
    thresholds = {}
    for f, (_train, test) in enumerate(group_kfold(pages, k=args.folds, key=group_key(args.group_by),
                                                   seed=args.seed)):
        # a fold model of other folds would be scored on pages it was trained on
        model_dir = args.models / f"fold{f + 1}"
        check_held_out(model_dir, held_out(args, f"fold{f + 1}", [pages[i] for i in test]))
        scorer = load_model(model_dir)
        thresholds[f] = scorer.threshold
        for i in tqdm(test, desc=f"score fold {f + 1}", unit="page"):
            fold_of[i] = f
            if pages[i].page.nodes:
                scores[i] = np.asarray(score_pages(scorer, [pages[i].page])[0], dtype=np.float64)

    header = sorted({"all"} | {lp.page_type_or_site for lp in pages})
    # the far-ancestor group adds one column to the baseline rows, computed per fold below
    inputs: Dict[str, List[List[float]]] = {name: [] for name in ("baseline",) + GROUPS[:-1]}
    far_tokens: List[Dict[str, float]] = []
    long_paths = SerializerConfig(retps_max_tokens=400)
    labels, weights, folds, where = [], [], [], []
    for p, lp in enumerate(tqdm(pages, desc="features", unit="page")):
        page = lp.page
        scored = np.array([not settled(n) for n in page.nodes], dtype=bool)
        if not scored.any():
            continue
        shallow = page_features(page)
        extra = {"tree": tree_features(page), "title": title_features(page),
                 "scores around": score_features(page, scores[p], scored),
                 "page type (oracle)": np.array([[float(t == lp.page_type_or_site) for t in header[1:]]]
                                                * len(page.nodes), dtype=np.float32)}
        whole = serialize(read_source(lp.meta["source"]), encoding="utf-8", url=lp.url, config=long_paths)
        if len(whole.nodes) != len(page.nodes):
            raise SystemExit(f"{lp.page_id}: longer reTPS changed the nodes")
        for i in np.flatnonzero(scored):
            s = min(max(float(scores[p][i]), 1e-4), 1 - 1e-4)
            row = [math.log(s / (1 - s))] + shallow[i].tolist()
            inputs["baseline"].append(row)
            for name in GROUPS[:-1]:
                inputs[name].append(row + extra[name][i].tolist())
            far_tokens.append({t.split("|")[0]: 1.0 for t in whole.nodes[i].tokens[FAR_FROM:]
                               if not t.startswith("<#")})
            labels.append(lp.labels[i])
            weights.append(0.5 + math.log1p(len(page.nodes[i].content.split())))  # as the head's loss
            folds.append(fold_of[p])
            where.append((p, i))
    y, w, fold = np.asarray(labels), np.asarray(weights), np.asarray(folds)
    hashed = FeatureHasher(2 ** 18, input_type="dict").transform(far_tokens).tocsr()

    def far_score(train: np.ndarray, apply: np.ndarray) -> np.ndarray:
        model = SGDClassifier(loss="log_loss", alpha=1e-5, max_iter=20, tol=None, random_state=0)
        model.fit(hashed[train], y[train], sample_weight=w[train])
        return model.decision_function(hashed[apply])
    references = [reference_text(lp) for lp in pages]

    def report(name: str, page_scores, threshold=None) -> None:
        by: Dict[str, List[float]] = defaultdict(list)
        for p, lp in enumerate(pages):
            t = thresholds[fold_of[p]] if threshold is None else threshold
            mask = relevant_mask(lp.page, page_scores[p], t, 0.7) if lp.page.nodes else []
            f1 = word_f1(predicted_text(lp, mask), references[p])[2]
            by["all"].append(f1)
            by[lp.page_type_or_site].append(f1)
        print(f"| {name} | " + " | ".join(f"{np.mean(by[k]):.4f}" for k in header) + " |", flush=True)

    rows = []
    for name in ("baseline",) + GROUPS:
        x = np.asarray(inputs["baseline" if name == "far ancestors" else name], dtype=np.float32)
        stacked = np.zeros(len(y))
        for f in tqdm(range(args.folds), desc=f"stack {name}", unit="fold"):
            xf = x
            if name == "far ancestors":  # nested, so that no node's input saw its own label
                far = np.zeros(len(y))
                for g in range(args.folds):
                    if g != f:
                        far[fold == g] = far_score((fold != f) & (fold != g), fold == g)
                far[fold == f] = far_score(fold != f, fold == f)
                xf = np.column_stack([x, far])
            model = HistGradientBoostingClassifier(max_iter=200, max_leaf_nodes=31, random_state=0)
            model.fit(xf[fold != f], y[fold != f], sample_weight=w[fold != f])
            stacked[fold == f] = model.predict_proba(xf[fold == f])[:, 1]
        per_page = [np.zeros(len(lp.page.nodes), dtype=np.float32) for lp in pages]
        for (p, i), s in zip(where, stacked):
            per_page[p][i] = s
        rows.append((name, per_page))
    print("| word-F1 | " + " | ".join(header) + " |")
    print("|" + "---|" * (len(header) + 1))
    report("fold models, their thresholds", scores)
    for name, per_page in rows:
        for t in (0.4, 0.5):
            report(f"stacked: score + 20 features{'' if name == 'baseline' else ' + ' + name}, threshold {t}",
                   per_page, t)
    return 0


if __name__ == "__main__":
    sys.exit(main())
