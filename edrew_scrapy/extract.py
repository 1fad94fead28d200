"""The one function the CLI and the Scrapy components call: pages (or HTML) + model -> relevant content.

Pure: no Scrapy, no I/O beyond loading the default model once when no scorer is given.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import List, Optional, Sequence, Union

from .page import Page

__all__ = ["Extraction", "ExtractedNode", "extract", "is_relevant"]


def is_relevant(node, score: float, threshold: float) -> bool:
    """The decision for one node: its score reaches the threshold and it is not in boilerplate markup.

    Node.boilerplate marks text inside dialog boxes (consent banners, terms of service, sign-up boxes that
    sit closed in the HTML: a WCXB product page held a whole terms of service), <nav> and page-level
    <footer>. The reTPS is cut at 20 tokens, so the model rarely sees these ancestors; dropping their
    text raised cross-validated word-F1 on every page type (docs/evaluation.md).
    """
    return score >= threshold and not node.boilerplate


@dataclass
class ExtractedNode:
    content: str
    score: float
    path: str
    images: List[str] = field(default_factory=list)
    index: int = -1


@dataclass
class Extraction:
    """The relevant nodes of one page in document order; `text` is their contents joined by newlines."""

    url: Optional[str]
    title: str
    text: str
    nodes: List[ExtractedNode] = field(default_factory=list)
    images: List[str] = field(default_factory=list)
    skipped: Optional[str] = None


@functools.lru_cache(maxsize=1)
def _default_scorer():
    from .model.scorer import load_model

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
            threshold: Optional[float] = None) -> List[Extraction]:
    """One Extraction per input, in input order. Nodes with P(relevant) >= threshold are kept
    (the model's own threshold unless given). A single Page or HTML string counts as a list of one."""
    if isinstance(pages_or_html, (Page, str, bytes, bytearray)):
        pages_or_html = [pages_or_html]
    pages = [_as_page(item) for item in pages_or_html]
    scorer = scorer if scorer is not None else _default_scorer()
    cut = scorer.threshold if threshold is None else float(threshold)
    scored = [p for p in pages if p.nodes]
    scores = iter(scorer.score(scored)) if scored else iter(())
    results = []
    for page in pages:
        if not page.nodes:
            results.append(Extraction(url=page.url, title=page.title, text="", skipped=page.skipped or "no-text"))
            continue
        probs = next(scores)
        kept = [ExtractedNode(content=n.content, score=round(float(s), 6), path=n.path, images=list(n.images),
                              index=n.index)
                for n, s in zip(page.nodes, probs) if is_relevant(n, s, cut)]
        images = list(dict.fromkeys(img for n in kept for img in n.images))
        results.append(Extraction(url=page.url, title=page.title, text="\n".join(n.content for n in kept),
                                  nodes=kept, images=images))
    return results
