"""The rules against an article's surroundings (ARTICLE_RULES), in order, each on what the one before left
kept; and the reader comments given apart from the page's text (reader_comment_nodes)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Collection, List, Optional, Sequence

from ..declared import declared_kinds
from ..page import Page
from .bylines import _byline_lines
from .comments import comments_are_content
from .facts import _Facts
from .nodes import _word_share
from .settings import _SETTLED_REASONS, ARTICLE_RULES

if TYPE_CHECKING:
    from .decision import Decision


def _captions(page: Page, keep: Sequence[bool], facts: "_Facts") -> Optional[List[bool]]:
    """Which kept nodes are photo captions to drop (in_caption), or None when there are none or when they hold at
    least half of the kept words: a photo story or a gallery page is its captions (as comments_are_content reads
    a thread that holds half of a page)."""
    captions = [k and (page.nodes[i].tag == "figcaption" or facts.in_box("captions", i)) for i, k in enumerate(keep)]
    if not any(captions) or _word_share(page.nodes, keep, captions) >= 0.5:
        return None
    return captions


def _reader_comments(page: Page, keep: Sequence[bool], facts: "_Facts") -> Optional[List[bool]]:
    """Which kept nodes are reader comments to drop (in_comments), or None when there are none, when they
    are the page's content (comments_are_content) or when the page declares a product or a collection
    (a course page's "testimonials-comment" quotes; customer reviews have their own rule there)."""
    product, _article, _discussion, collection = declared_kinds(page.declared)
    if product or collection:
        return None
    comments = [k and facts.in_comments(i) for i, k in enumerate(keep)]
    if not any(comments) or comments_are_content(page, page.nodes, keep, comments):
        return None
    return comments


def _article_rules(page: Page, keep: Sequence[bool], off: Collection[str]):
    """(reason, nodes to drop) of the rules against an article's surroundings, in order, each on what the
    one before left kept: reader comments, comment reply forms, share and gallery chrome, like buttons, share bars'
    headings, related posts, sign-up boxes, credit lines, consent notices, paywall pitches, author boxes, captions."""
    keep = list(keep)
    facts = _Facts(page.nodes)
    # the boxes any kept node is in: a rule whose box no kept node is in drops nothing (keep only shrinks)
    named = frozenset().union(*(facts.boxes(i) for i, k in enumerate(keep) if k))
    for reason in ARTICLE_RULES:
        if reason in off:
            continue
        if reason == "reader-comments":
            drop = _reader_comments(page, keep, facts)
        elif reason == "captions":
            drop = _captions(page, keep, facts)
        elif reason == "byline-lines":
            drop = _byline_lines(page, keep)
        elif reason in named:
            drop = [k and facts.in_box(reason, i) for i, k in enumerate(keep)]
        else:
            continue
        if drop is not None and any(drop):
            keep = [k and not d for k, d in zip(keep, drop)]
            yield reason, drop


def reader_comment_nodes(page: Page, decision: "Decision") -> List[bool]:
    """The page's reader comments, given apart from its text (an item's `comments`): every node in a
    reader-comment section (in_comments) that no markup rule settles, whatever its score (the model learnt
    to score comments low), on a page where the reader-comment rule applies: none where they are the
    page's content (then they are in its text), where the page declares a product or a collection, or where
    `decision` (explain's, for a main-content model) left the rule off."""
    nodes = page.nodes
    if decision.region_share is None or "reader-comments" in decision.off:
        return [False] * len(nodes)
    product, _article, discussion, collection = declared_kinds(page.declared)
    if product or collection or discussion:
        return [False] * len(nodes)
    facts = _Facts(nodes)
    candidates = [r not in _SETTLED_REASONS and facts.in_comments(i) for i, r in enumerate(decision.reasons)]
    if not any(candidates):
        return candidates
    # the share of comment words among the nodes that passed the threshold, as _reader_comments measures it
    passed = [r not in _SETTLED_REASONS and r != "below-threshold" for r in decision.reasons]
    if any(c and p for c, p in zip(candidates, passed)) and comments_are_content(page, nodes, passed, candidates):
        return [False] * len(nodes)
    return candidates
