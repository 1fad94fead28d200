"""An article's top lines: its headline (headline_node), and its byline and dateline lines as the metadata
reads them, which the item gives in fields of their own."""
from __future__ import annotations

import re
from typing import Collection, List, Optional, Sequence

from ..declared import declared_kinds
from ..metadata import byline_lines
from ..page import Page
from .settings import BYLINE_KINDS

_TITLE_WORD = re.compile(r"\w+")


def headline_node(page: Page) -> int:
    """The index of the page's headline: the first node inside an <h1> whose words lie at least 80 % in the
    page's <title> (which adds the site's name); -1 when there is none."""
    title = set(_TITLE_WORD.findall(page.title.lower()))
    if not title:
        return -1
    for node in page.nodes:
        if "/h1[" in node.path or node.tag == "h1":
            w = _TITLE_WORD.findall(node.content.lower())
            if w and sum(t in title for t in w) >= 0.8 * len(w):
                return node.index
    return -1


def byline_line_nodes(page: Page, kinds: Collection[str] = BYLINE_KINDS) -> List[bool]:
    """The page's headline node (headline_node) and its byline and dateline lines as the metadata reads them
    (metadata.byline_lines: the first short "By ..." line, short texts by the `<h1>` that show a day), of
    `kinds`; none on a page that declares a product, a discussion or a collection (an article's top only)."""
    out = [False] * len(page.nodes)
    product, _article, discussion, collection = declared_kinds(page.declared)
    if product or discussion or collection:
        return out
    if "headline" in kinds:
        head = headline_node(page)
        if head >= 0:
            out[head] = True
    for i, kind in byline_lines(page).items():
        if kind in kinds:
            out[i] = True
    return out


def _byline_lines(page: Page, keep: Sequence[bool]) -> Optional[List[bool]]:
    """Which kept nodes are the article's headline, byline or dateline lines (byline_line_nodes)."""
    lines = byline_line_nodes(page, BYLINE_KINDS)
    drop = [k and b for k, b in zip(keep, lines)]
    return drop if any(drop) else None
