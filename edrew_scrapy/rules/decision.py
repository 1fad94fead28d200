"""The decision on one page: relevant_mask (the kept nodes, for extraction, evaluation and training's
threshold choice) and explain (the same decision with the rule that decided each node, for reports)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Collection, Dict, List, Optional, Sequence

import numpy as np

from ..page import Page
from .articles import _article_rules
from .duplicates import layout_duplicates
from .markup import _for_screen_readers_only, in_form_control, is_relevant, settled
from .products import in_customer_reviews, is_product_page
from .region import _region
from .settings import KEPT, OPTIONAL_RULES, PAGE_BEST_SHARE


def relevant_mask(page: Page, scores: Sequence[float], threshold: float, region_share: Optional[float] = None,
                  best_share: Optional[float] = PAGE_BEST_SHARE, off: Collection[str] = ()) -> List[bool]:
    """Which nodes of a page are relevant content.

    `is_relevant` per node; then, for a main-content model (`region_share` given): the threshold capped at
    `best_share` of the page's best score outside the `settled` nodes (scores are not calibrated alike on
    every kind of page; None or 0 turns the cap off, as extract() does for a threshold the caller gives), no
    `settled` node, no customer reviews on a declared product page, no reader comments where they are not the
    page's content and the page declares no product or collection (`in_comments`, `comments_are_content`),
    no share, print or gallery chrome (`in_page_chrome`), no text in the boxes ARTICLE_RULES names (credits,
    consent notices, paywall pitches, author boxes; captions unless they hold half of the kept words),
    only the nodes of the page's main region (`main_region`) and each text once where the page repeats it in
    another layout (`layout_duplicates`). Attribute models keep nothing when nothing qualifies: a page need
    not hold the attribute. `off` names OPTIONAL_RULES left out (ablations: `edrew evaluate --rules-off`).
    Why each rule, with its measurements: docs/method-choices.md, "Decision rules after scoring".
    """
    if region_share is not None and best_share:
        best = _best_unsettled(page.nodes, scores)
        if best > 0.0:
            threshold = min(threshold, best_share * best)
    return _decide(page, scores, threshold, region_share, _check_off(off))


def _best_unsettled(nodes: Sequence, scores: Sequence[float]) -> float:
    """The highest score of a node that is not `settled`, 0.0 if none scores above 0."""
    values = np.asarray(scores, dtype=np.float64)
    # highest first, so that `settled` is asked of one node or a few rather than every node of the page
    # (score_pages gives settled nodes 0.0)
    for i in np.argsort(-values, kind="stable"):
        if values[i] <= 0.0:
            break
        if not settled(nodes[i]):
            return float(values[i])
    return 0.0


def _decide(page: Page, scores: Sequence[float], threshold: float, region_share: Optional[float],
            off: Collection[str] = ()) -> List[bool]:
    """relevant_mask at one threshold, without the page's best score."""
    nodes = page.nodes
    keep = [is_relevant(n, s, threshold) for n, s in zip(nodes, scores)]
    if region_share is None:
        return keep
    # the same rules that let score_pages leave these nodes unscored (is_relevant already dropped boilerplate)
    keep = [k and not settled(n) for n, k in zip(nodes, keep)]
    if is_product_page(page):
        keep = [k and not in_customer_reviews(n) for n, k in zip(nodes, keep)]
    for _reason, drop in _article_rules(page, keep, off):
        keep = [k and not d for k, d in zip(keep, drop)]
    region, lead = _region(page, scores, keep, region_share, off)
    if region is not None:
        inside = region + "/"
        keep = [k and (not n.path.startswith("/") or n.path == region or n.path.startswith(inside) or i in lead)
                for i, (n, k) in enumerate(zip(nodes, keep))]
    return [k and not d for k, d in zip(keep, layout_duplicates(nodes, keep))]


def _check_off(off: Collection[str]) -> frozenset:
    off = frozenset(off or ())
    unknown = off - set(OPTIONAL_RULES)
    if unknown:
        raise ValueError(f"unknown rule(s) {', '.join(sorted(unknown))}; choose from {', '.join(OPTIONAL_RULES)}")
    return off


@dataclass(frozen=True)
class Decision:
    """What relevant_mask decided on one page, and why: `reasons[i]` is KEPT or the rule (a key of REASONS)
    that dropped node i; `threshold` is the one applied on this page (`given` capped at the page's best
    score when `capped`); `region` is the main region's path (None: step off or nothing kept); `off` the
    OPTIONAL_RULES left out."""

    threshold: float
    given: float
    capped: bool
    region: Optional[str]
    region_share: Optional[float]
    reasons: List[str]
    off: frozenset = frozenset()  # the OPTIONAL_RULES left out

    @property
    def kept(self) -> List[bool]:
        return [r == KEPT for r in self.reasons]


def explain(page: Page, scores: Sequence[float], threshold: float, region_share: Optional[float] = None,
            best_share: Optional[float] = PAGE_BEST_SHARE, off: Collection[str] = ()) -> Decision:
    """relevant_mask's decision with the rule that decided each node, for reports (`edrew inspect`).

    The same rules in the same order as relevant_mask and _decide, so `explain(...).kept` equals
    `relevant_mask(...)` (tests/test_rules_explain.py checks it); a node that several rules drop gets the
    first: boilerplate markup, form control and screen-reader text before the threshold, since a main-content
    model leaves those nodes unscored (score_pages).
    """
    off = _check_off(off)
    given = float(threshold)
    cut = given
    if region_share is not None and best_share:
        best = _best_unsettled(page.nodes, scores)
        if best > 0.0:
            cut = min(cut, best_share * best)
    nodes = page.nodes
    reasons: List[str] = []
    screen_reader: Dict[str, bool] = {}  # reTPS -> for_screen_readers_only: siblings share their reTPS
    for node, score in zip(nodes, scores):
        if node.boilerplate:
            reasons.append("boilerplate")
        elif region_share is not None and in_form_control(node):
            reasons.append("form-control")
        elif region_share is not None and _for_screen_readers_only(node.retps, screen_reader):
            reasons.append("screen-reader-only")
        elif not score >= cut:
            reasons.append("below-threshold")
        else:
            reasons.append(KEPT)
    region = None
    if region_share is not None:
        if is_product_page(page):
            reasons = [("customer-reviews" if r == KEPT and in_customer_reviews(n) else r)
                       for n, r in zip(nodes, reasons)]
        for reason, drop in _article_rules(page, [r == KEPT for r in reasons], off):
            reasons = [reason if d else r for r, d in zip(reasons, drop)]
        keep = [r == KEPT for r in reasons]
        region, lead = _region(page, scores, keep, region_share, off)
        if region is not None:
            inside = region + "/"
            reasons = [("outside-main-region" if r == KEPT and n.path.startswith("/") and n.path != region
                        and not n.path.startswith(inside) and i not in lead else r)
                       for i, (n, r) in enumerate(zip(nodes, reasons))]
        duplicates = layout_duplicates(nodes, [r == KEPT for r in reasons])
        reasons = ["layout-duplicate" if d else r for r, d in zip(reasons, duplicates)]
    return Decision(threshold=cut, given=given, capped=cut < given, region=region, region_share=region_share,
                    reasons=reasons, off=off)
