"""Classic node classifiers on a bag of reTPS tokens: how far the serialization alone goes.

The classifiers compared by Radilova et al. (Appl. Sci. 2022, seed 002): linear SVM, decision tree,
naive Bayes and k-NN. Each node is a bag of its reTPS tokens (split on `<#SEP>`, so `div|21`,
`<#CLSS>` and class names are whole tokens); the node's text is not used.
"""
from __future__ import annotations

import random
import warnings
from typing import Dict, List, Optional, Sequence

import numpy as np

from ..tokens import SEP

__all__ = ["BASELINES", "ReTPSBaseline", "split_retps"]

BASELINES = ("svm", "tree", "nb", "knn")


def split_retps(retps: str) -> List[str]:
    """The tokenizer handed to CountVectorizer (module level, so a fitted vectorizer pickles)."""
    return [t for t in retps.split(SEP) if t]


def _classifier(name: str, seed: int):
    from sklearn.linear_model import SGDClassifier
    from sklearn.naive_bayes import MultinomialNB
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.tree import DecisionTreeClassifier

    if name == "svm":
        # hinge loss = a linear SVM; SGD because liblinear does not converge within minutes on
        # count-weighted WCXB rows, while SGD fits them in seconds
        return SGDClassifier(loss="hinge", alpha=1e-5, class_weight="balanced", max_iter=50, tol=1e-4,
                             random_state=seed)
    if name == "tree":
        return DecisionTreeClassifier(min_samples_leaf=2, class_weight="balanced", random_state=seed)
    if name == "nb":
        return MultinomialNB(alpha=0.1)
    if name == "knn":
        return KNeighborsClassifier(n_neighbors=5, metric="cosine", algorithm="brute", n_jobs=1)
    raise ValueError(f"unknown baseline {name!r}; choose from {', '.join(BASELINES)}")


class ReTPSBaseline:
    """fit(labelled pages) then predict(page) -> 0/1 per node.

    k-NN keeps every training node in memory and compares each test node with all of them, so it is
    trained on at most `max_train_nodes` distinct (reTPS, label) rows, sampled with `seed` (a WCXB
    fold has ~1.3*10^5). The other classifiers use every node, duplicates as sample weights.
    """

    def __init__(self, name: str, seed: int = 1, max_train_nodes: Optional[int] = None, min_df: int = 2):
        if name not in BASELINES:
            raise ValueError(f"unknown baseline {name!r}; choose from {', '.join(BASELINES)}")
        self.name = name
        self.seed = seed
        self.max_train_nodes = max_train_nodes if max_train_nodes is not None else (
            30_000 if name == "knn" else None)
        self.min_df = min_df
        self.vectorizer = None
        self.model = None
        self.constant: Optional[int] = None
        self.train_rows = 0

    def fit(self, pages: Sequence) -> "ReTPSBaseline":
        from collections import Counter

        from sklearn.exceptions import ConvergenceWarning
        from sklearn.feature_extraction.text import CountVectorizer

        rows: Counter = Counter()
        for lp in pages:
            for node, label in zip(lp.page.nodes, lp.labels):
                rows[(node.retps, int(label))] += 1
        # identical (reTPS, label) rows become one row weighted by its count: the same fit for
        # SVM, tree and naive Bayes, at a third of the rows on WCXB
        items = sorted(rows.items())
        if self.max_train_nodes is not None and len(items) > self.max_train_nodes:
            keep = sorted(random.Random(self.seed).sample(range(len(items)), self.max_train_nodes))
            items = [items[i] for i in keep]
        docs = [retps for (retps, _), _ in items]
        y = np.asarray([label for (_, label), _ in items])
        weight = np.asarray([count for _, count in items], dtype=np.float64)
        self.train_rows = len(items)
        if len(set(y.tolist())) < 2:
            # one class only (tiny data): every classifier would fail; predicting it is the fit
            self.constant = int(y[0]) if len(y) else 0
            return self
        self.constant = None
        self.vectorizer = CountVectorizer(tokenizer=split_retps, lowercase=False, token_pattern=None,
                                          binary=True, min_df=min(self.min_df, max(1, len(docs) // 2)))
        x = self.vectorizer.fit_transform(docs)
        self.model = _classifier(self.name, self.seed)
        with warnings.catch_warnings():
            # SGD's iteration cap is deliberate (see _classifier); tiny fits trip it harmlessly
            warnings.simplefilter("ignore", ConvergenceWarning)
            if self.name == "knn":
                self.model.fit(x, y)  # k-NN takes no weights: each distinct (reTPS, label) votes once
            else:
                self.model.fit(x, y, sample_weight=weight)
        return self

    def predict(self, page) -> np.ndarray:
        nodes = page.nodes
        if not nodes:
            return np.zeros(0, dtype=np.int8)
        if self.constant is not None:
            return np.full(len(nodes), self.constant, dtype=np.int8)
        if self.model is None:
            raise RuntimeError("ReTPSBaseline.predict before fit")
        x = self.vectorizer.transform([n.retps for n in nodes])
        return np.asarray(self.model.predict(x), dtype=np.int8)


def describe() -> Dict[str, str]:
    """One line per baseline for reports."""
    return {
        "svm": "linear SVM: SGDClassifier(hinge, alpha=1e-5, class_weight=balanced)",
        "tree": "DecisionTreeClassifier(min_samples_leaf=2, class_weight=balanced)",
        "nb": "MultinomialNB(alpha=0.1)",
        "knn": "KNeighborsClassifier(k=5, cosine), <=30k training nodes",
    }
