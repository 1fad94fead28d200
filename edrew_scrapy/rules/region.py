"""The page's main region: the deepest element that holds most of the kept words, never one paragraph,
widened to hold the page's most confident node and, from a list of teasers, the lead; and the standfirst
kept beside it."""
from __future__ import annotations

import re
from collections import defaultdict
from typing import Collection, Dict, List, Optional, Sequence, Tuple

from ..page import Page
from ..words import count_words
from .bylines import headline_node
from .settings import _PARAGRAPH_TAGS, LEAD_WORDS, STANDFIRST_WORDS, TEASER_ITEMS


def main_region(nodes: Sequence, keep: Sequence[bool], share: float) -> Optional[str]:
    """The path of the deepest element whose subtree holds at least `share` of the kept words
    (words.count_words: a Chinese or Japanese paragraph counts as many words as it holds, not one).

    With share > 0.5 the elements that qualify lie on one chain from the root, so the deepest is
    unique. Nodes whose path has the document-order form of very deep elements ("(//div)[7]/...")
    have no known ancestors and are left out of the count. None when nothing is kept.
    """
    words: Dict[str, int] = defaultdict(int)
    total = 0
    for node, kept in zip(nodes, keep):
        if kept and node.path.startswith("/"):
            n = count_words(node.content)
            words[node.path] += n
            total += n
    if total == 0:
        return None
    # Each element's words go to its parent once, deepest elements first, so an ancestor shared by many
    # nodes is visited once rather than once per node below it.
    by_depth: Dict[int, List[str]] = defaultdict(list)
    for path in words:
        by_depth[path.count("/")].append(path)
    need = share * total
    deepest = None
    for depth in range(max(by_depth), 0, -1):
        for path in by_depth.get(depth, ()):
            if deepest is None and words[path] >= need:
                deepest = path
            parent = path[:path.rfind("/")]
            if parent:
                if parent not in words:
                    by_depth[depth - 1].append(parent)
                words[parent] += words[path]
    return deepest


def _region(page: Page, scores: Sequence[float], keep: Sequence[bool], region_share: float,
            off: Collection[str]) -> Tuple[Optional[str], set]:
    """(the page's main region, the indices of the kept nodes outside it that stay): main_region, never one
    paragraph, widened to hold the best kept node and, from a list of teasers, the lead; then the standfirst
    beside it. (None, empty) when the page has no main region. Both relevant_mask and explain read it."""
    region = main_region(page.nodes, keep, region_share)
    if region is None:
        return None, set()
    if "paragraph-region" not in off:
        region = _beyond_paragraph(region, page.nodes)
    region = _holding_best(region, page.nodes, scores, keep)
    if "headline-lead" not in off:
        region = _holding_lead(region, page, keep)
    return region, (set() if "standfirst" in off else standfirst_nodes(region, page, keep))


def _beyond_paragraph(region: str, nodes: Sequence) -> str:
    """The main region, widened to its parent when it is one paragraph (a node of its own with a _PARAGRAPH_TAGS
    tag): a post of three paragraphs whose first holds 70 % of its words is the post, not its first paragraph."""
    if region.rsplit("/", 1)[-1].split("[", 1)[0] not in _PARAGRAPH_TAGS:
        return region
    if not any(n.path == region for n in nodes):
        return region
    parent = region[:region.rfind("/")]
    return parent or region


def _holding_best(region: str, nodes: Sequence, scores: Sequence[float], keep: Sequence[bool]) -> str:
    """The main region, widened to the nearest element that also holds the page's most confident kept
    node when it lies outside.

    The region follows the kept words, and on a shop page a long list of recommended products can outweigh
    the description the model was surest of. Widening keeps what the region held (docs/method-choices.md,
    "Decision rules after scoring").
    """
    inside = region + "/"
    best_in, best_out, path = -1.0, -1.0, ""
    for node, s, k in zip(nodes, scores, keep):
        if not k:
            continue
        if not node.path.startswith("/") or node.path == region or node.path.startswith(inside):
            best_in = max(best_in, float(s))
        elif s > best_out:
            best_out, path = float(s), node.path
    # a tie is not a reason to widen: the region already holds a node the model is as sure of
    if best_out <= best_in:
        return region
    return _common_ancestor(region, path)


def _common_ancestor(a: str, b: str) -> str:
    """The path of the nearest element that holds both paths; "" (no element in common) is the whole document."""
    x, y = a.split("/"), b.split("/")
    common = 0
    while common < min(len(x), len(y)) and x[common] == y[common]:
        common += 1
    return "/".join(x[:common])


def _holding_lead(region: str, page: Page, keep: Sequence[bool]) -> str:
    """The main region, widened to the nearest element that also holds the lead, when the region is a list of
    other pages (teasers: TEASER_ITEMS or more of its children hold a kept linked heading) and leaves out the
    lead: the first kept node of LEAD_WORDS words or more after the page's headline (headline_node).

    On an article with a short text, a list of teasers after it (headline, summary, "read the rest", five
    times over) outweighs the article in words, and the region chose the list alone. The text that follows
    the headline is what the page is about; widening keeps what the region held (docs/method-choices.md). A
    region that is not such a list stays as it is: a standfirst above an article's body is not its lead."""
    head = headline_node(page)
    if head < 0:
        return region
    inside = region + "/"
    for node, kept in zip(page.nodes[head + 1:], keep[head + 1:]):
        if kept and node.path.startswith("/") and count_words(node.content) >= LEAD_WORDS:
            if node.path == region or node.path.startswith(inside) or not _lists_teasers(region, page, keep):
                return region
            return _common_ancestor(region, node.path)
    return region


_HEADING = re.compile(r"/h[2-6]\[")


def _lists_teasers(region: str, page: Page, keep: Sequence[bool]) -> bool:
    """TEASER_ITEMS or more children of the region hold a kept node that is all link text inside an <h2>-<h6>."""
    inside = region + "/"
    items = set()
    for node, kept in zip(page.nodes, keep):
        if (kept and node.path.startswith(inside) and node.link_chars >= len(node.content)
                and _HEADING.search(node.path, len(region))):
            items.add(node.path[len(inside):].split("/", 1)[0])
    return len(items) >= TEASER_ITEMS


def standfirst_nodes(region: str, page: Page, keep: Sequence[bool]) -> set:
    """The indices of the kept nodes that the main region leaves out but that stay: the prose between the page's
    headline (headline_node) and the region's first kept node, in document order (the standfirst, or a short
    article above a footer of related items), each of STANDFIRST_WORDS words or more and mostly not link text.

    News pages put the standfirst in the article's header, beside the body that holds most of the words, and
    the region is the body alone. Only long prose is kept: a byline, a share bar or a date between the
    headline and the body stays out, and the region itself is not widened (docs/method-choices.md)."""
    head = headline_node(page)
    if head < 0:
        return set()
    inside = region + "/"
    nodes = page.nodes
    first = next((i for i, (n, k) in enumerate(zip(nodes, keep))
                  if k and (n.path == region or n.path.startswith(inside))), -1)
    return {i for i in range(head + 1, first) if keep[i] and nodes[i].path.startswith("/")
            and 2 * nodes[i].link_chars < len(nodes[i].content) and count_words(nodes[i].content) >= STANDFIRST_WORDS}
