"""The validation metrics that choose a model's threshold and kept epoch."""
from __future__ import annotations

from typing import Callable, Optional, Sequence, Tuple

import numpy as np

from ..page import Page


def page_word_f1(probs: Sequence[np.ndarray], pages: Sequence[Page], references: Sequence[str],
                 threshold: float, region_share: Optional[float] = None) -> float:
    from ..data.align import word_f1
    from ..extract import relevant_mask

    scores = []
    for p, page, ref in zip(probs, pages, references):
        mask = relevant_mask(page, p, threshold, region_share)
        text = "\n".join(n.content for n, k in zip(page.nodes, mask) if k)
        scores.append(word_f1(text, ref)[2])
    return float(np.mean(scores)) if scores else 0.0


def node_prf(probs: Sequence[np.ndarray], labels: Sequence[Sequence[int]], threshold: float) -> Tuple[float, float, float]:
    p = np.concatenate([np.asarray(x) for x in probs]) >= threshold if probs else np.zeros(0, bool)
    t = np.concatenate([np.asarray(y) for y in labels]).astype(bool) if labels else np.zeros(0, bool)
    tp, fp, fn = int((p & t).sum()), int((p & ~t).sum()), int((~p & t).sum())
    prec = tp / (tp + fp) if tp + fp else 0.0
    rec = tp / (tp + fn) if tp + fn else 0.0
    return prec, rec, (2 * prec * rec / (prec + rec) if prec + rec else 0.0)


THRESHOLDS = [round(0.05 * i, 2) for i in range(1, 20)]


def choose_threshold(score: Callable[[float], float]) -> Tuple[float, float]:
    """The threshold of the grid with the best validation score (ties: the one nearest 0.5)."""
    best = max(THRESHOLDS, key=lambda t: (round(score(t), 6), -abs(t - 0.5)))
    return best, score(best)
