"""The one function the CLI and the Scrapy components call: pages (or HTML) + model -> relevant content.

Pure: no Scrapy, no I/O beyond loading the default model once when no scorer is given. The decision
rules that turn scores into kept nodes live in rules/.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, Iterable, List, Optional, Sequence, Tuple, Union

from .page import Page
from .rules import (
    FALLBACK_SHARE,
    FORM_CONTROL_TAGS,
    MAIN_REGION_SHARE,
    PAGE_BEST_SHARE,
    SCREEN_READER_CLASSES,
    explain,
    for_screen_readers_only,
    in_customer_reviews,
    in_form_control,
    is_product_page,
    is_relevant,
    layout_duplicates,
    main_region,
    reader_comment_nodes,
    relevant_mask,
    settled,
)

# The rules' names stay importable from here, where they lived before the rules had a module of their own.
__all__ = ["FALLBACK_SHARE", "FORM_CONTROL_TAGS", "MAIN_REGION_SHARE", "PAGE_BEST_SHARE", "SCREEN_READER_CLASSES",
           "Extraction", "ExtractedNode", "extract", "for_screen_readers_only", "in_customer_reviews",
           "in_form_control", "is_product_page", "is_relevant", "layout_duplicates", "main_region",
           "override_region_share", "relevant_mask", "score_pages", "settled"]


def override_region_share(scorer, share: Optional[float]):
    """Replace the scorer's main-region share (from its model card) when `share` is given; 0 turns the
    step off. Returns the scorer."""
    if share is not None:
        scorer.region_share = float(share) or None
    return scorer


def score_pages(scorer, pages: Sequence[Page]) -> List:
    """`scorer.score(pages)`; for a main-content model (a region share set) the `settled` nodes, which
    the rules drop whatever their score, are not scored (0.0) and the head reads each page without them
    (Scorer.score; docs/method-choices.md). Attribute models score every node."""
    if getattr(scorer, "region_share", None) is None:
        return scorer.score(pages)
    return scorer.score(pages, skip=settled)


@dataclass
class ExtractedNode:
    content: str
    score: float
    path: str
    images: List[str] = field(default_factory=list)
    index: int = -1


@dataclass
class Extraction:
    """The relevant nodes of one page in document order; `text` is their contents joined by newlines.
    `comments` are the page's reader comments, kept out of `text` (rules.reader_comment_nodes), in document
    order; `comments_text` joins them as `text` joins the nodes."""

    url: Optional[str]
    title: str
    text: str
    nodes: List[ExtractedNode] = field(default_factory=list)
    images: List[str] = field(default_factory=list)
    skipped: Optional[str] = None
    # Every node's P(relevant), aligned with page.nodes, and relevant_mask's other arguments (threshold,
    # region_share, best_share): what rules.explain needs to say why each node was kept or dropped (reports).
    scores: Any = field(default=None, compare=False, repr=False)
    rule: Optional[Tuple[float, Optional[float], Optional[float]]] = field(default=None, compare=False,
                                                                            repr=False)
    metadata: Optional[Any] = None  # a metadata.Metadata, where the caller reads it (metadata.page_metadata)
    comments: List[ExtractedNode] = field(default_factory=list)

    @property
    def comments_text(self) -> str:
        return "\n".join(n.content for n in self.comments)


@functools.lru_cache(maxsize=1)
def _default_scorer():
    from .model.base import load_model

    return load_model()


PageInput = Union[Page, str, bytes]


def _as_page(item: PageInput) -> Page:
    if isinstance(item, Page):
        return item
    if isinstance(item, (str, bytes, bytearray)):
        from .serializer import serialize

        return serialize(bytes(item) if isinstance(item, bytearray) else item)
    raise TypeError(f"extract() takes Page objects or HTML str/bytes, not {type(item).__name__}")


def extract(pages_or_html: Union[PageInput, Sequence[PageInput]], scorer=None,
            threshold: Optional[float] = None, rules_off: Sequence[str] = ()) -> List[Extraction]:
    """One Extraction per input, in input order. Nodes with P(relevant) >= threshold are kept: the model's
    own threshold, which a main-content model caps on each page at PAGE_BEST_SHARE of the page's best score
    (relevant_mask), or the `threshold` given, as given on every page. A single Page or HTML string counts
    as a list of one. `rules_off` names rules.OPTIONAL_RULES to leave out (ablations)."""
    if isinstance(pages_or_html, (Page, str, bytes, bytearray)):
        pages_or_html = [pages_or_html]
    elif not isinstance(pages_or_html, Iterable):
        raise TypeError(f"extract() takes a Page, HTML str/bytes or a list of them, not "
                        f"{type(pages_or_html).__name__}")
    if threshold is not None:
        threshold = float(threshold)
        if not 0.0 <= threshold <= 1.0:  # also NaN: a probability threshold outside [0, 1] keeps all or nothing
            raise ValueError(f"threshold must lie in [0, 1], not {threshold}")
    pages = [_as_page(item) for item in pages_or_html]
    scorer = scorer if scorer is not None else _default_scorer()
    cut = scorer.threshold if threshold is None else threshold
    best_share = PAGE_BEST_SHARE if threshold is None else None
    scored = [p for p in pages if p.nodes]
    scores = iter(score_pages(scorer, scored)) if scored else iter(())
    results = []
    for page in pages:
        if not page.nodes:
            results.append(Extraction(url=page.url, title=page.title, text="", skipped=page.skipped or "no-text"))
            continue
        probs = next(scores)
        region_share = getattr(scorer, "region_share", None)
        decision = explain(page, probs, cut, region_share, best_share, off=rules_off)
        kept = _extracted(page, probs, decision.kept)
        comments = _extracted(page, probs, reader_comment_nodes(page, decision))
        images = list(dict.fromkeys(img for n in kept for img in n.images))
        results.append(Extraction(url=page.url, title=page.title, text="\n".join(n.content for n in kept),
                                  nodes=kept, images=images, scores=probs,
                                  rule=(float(cut), region_share, best_share), comments=comments))
    return results


def _extracted(page: Page, probs, mask: Sequence[bool]) -> List[ExtractedNode]:
    return [ExtractedNode(content=n.content, score=round(float(s), 6), path=n.path, images=list(n.images),
                          index=n.index)
            for n, s, k in zip(page.nodes, probs, mask) if k]
