"""Block-level votes: the text nodes of one block of like items (a list, a table, a run of sibling cards) kept or
dropped together, on their word-weighted mean score (the `block-vote` rule of rules.py).

The model scores each text node alone, and a sidebar's link list or an archive leaks item by item where some items
reach the threshold and their siblings do not; a guide's list or table loses some of its items the same way.
Boilerpipe- and CETD-style extractors decide per block. A block here is the nearest element, at most
BLOCK_REACH elements above a text node, with BLOCK_ITEMS or more children of one tag (BLOCK_TAGS) that hold text
nodes; the whole block's free nodes follow its word-weighted mean score against the page's threshold.
Pure: no Scrapy, no torch.
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Callable, Dict, List, Optional, Sequence, Set, Tuple

from .words import count_words

__all__ = ["BLOCK_ITEMS", "BLOCK_REACH", "BLOCK_TAGS", "blocks", "block_votes"]

# A block has at least this many like items (children of one tag under one parent holding text nodes).
BLOCK_ITEMS = 4
# How far above a text node its item may be: the node itself (a <li> with its text), its parent (<li><a>) or up
# to two more (<tr><td><a>, <li><div><p>).
BLOCK_REACH = 4
# The item tags that make a block: list items and table rows. None: any tag (sibling <p>s and <div>s too).
BLOCK_TAGS: Optional[frozenset] = frozenset({"li", "tr", "dt", "dd"})
# Whether a block votes by the share of its words that are kept (at least half: keep) instead of its mean score.
BLOCK_BY_SHARE = False
# The least share of a block's characters that is link text for it to vote (a list of links: a sidebar, an archive,
# a blogroll; a table of data or a list of prose items does not vote); None: every block votes.
BLOCK_LINKS: Optional[float] = 0.5
# Whether a block whose mean reaches the threshold also keeps its items below it (True), or votes only to drop.
BLOCK_RAISES = False


@lru_cache(maxsize=4)
def _item_steps(tags: frozenset) -> "re.Pattern":
    """A step of one of `tags` anywhere in a path."""
    return re.compile("/(?:" + "|".join(sorted(map(re.escape, tags))) + r")\[")


def _levels(path: str) -> List[Tuple[str, str, str]]:
    """(parent path, item tag, item step) of each item level of a node at `path`: its own element and its
    BLOCK_REACH - 1 nearest ancestors whose tag is one of BLOCK_TAGS, nearest first."""
    tags = BLOCK_TAGS
    if tags is not None and not _item_steps(tags).search(path):
        return []  # many nodes of a page are in no list or table: one scan of the path in C
    out = []
    end = len(path)
    for step in reversed(path.rsplit("/", BLOCK_REACH)[1:]):
        cut = end - len(step) - 1
        if cut <= 0:
            break
        tag = step[:step.find("[")]
        if tags is None or tag in tags:
            out.append((path[:cut], tag, step))
        end = cut
    return out


def blocks(nodes: Sequence, keep: Optional[Sequence[bool]] = None) -> Dict[Tuple[str, str], List[int]]:
    """(parent path, item tag) -> the indices of the nodes of each block: for each node, the nearest item level
    (its own element or one of its BLOCK_REACH - 1 nearest ancestors, of a BLOCK_TAGS tag) under a parent that
    has BLOCK_ITEMS or more such items holding text nodes. Nodes whose path is not a plain XPath ("(//div)[7]/...",
    very deep elements) are in no block. With `keep`, an empty answer when no kept node is at an item level (no
    block could hold a kept node)."""
    if keep is not None and not any(k and n.path.startswith("/") and _levels(n.path) for n, k in zip(nodes, keep)):
        return {}
    levels: List[Tuple[int, List[Tuple[str, str]]]] = []  # (node, its (parent, tag) levels, nearest first)
    items: Dict[Tuple[str, str], Set[str]] = {}  # (parent, tag) -> the item steps that hold text nodes
    for i, node in enumerate(nodes):
        path = node.path
        if not path.startswith("/"):
            continue
        mine = []
        for parent, tag, step in _levels(path):
            key = (parent, tag)
            mine.append(key)
            items.setdefault(key, set()).add(step)
        if mine:
            levels.append((i, mine))
    out: Dict[Tuple[str, str], List[int]] = {}
    for i, mine in levels:
        for key in mine:
            if len(items[key]) >= BLOCK_ITEMS:
                out.setdefault(key, []).append(i)
                break
    return out


def block_votes(nodes: Sequence, scores: Sequence[float], threshold: float, keep: Sequence[bool],
                free: Callable[[int], bool]) -> Tuple[List[int], List[int]]:
    """(kept nodes to drop, dropped nodes to keep): in each block (`blocks`) that holds both kept nodes and dropped
    ones that no markup rule settled (`free(i)`), the word-weighted mean score of those nodes against `threshold`
    decides them all: a block below it drops its kept nodes, one at or above it keeps its dropped ones when
    BLOCK_RAISES. A node of no words weighs as one word."""
    drop: List[int] = []
    lift: List[int] = []
    for members in blocks(nodes, keep).values():
        if not any(keep[i] for i in members):
            continue
        # free is asked only here: most blocks are all kept or all dropped
        voters = [i for i in members if keep[i] or free(i)]
        if len(voters) == sum(keep[i] for i in members):
            continue
        if BLOCK_LINKS is not None and (sum(nodes[i].link_chars for i in voters)
                                        < BLOCK_LINKS * sum(len(nodes[i].content) for i in voters)):
            continue
        weights = [max(1, count_words(nodes[i].content)) for i in voters]
        if BLOCK_BY_SHARE:
            low = 2 * sum(w for w, i in zip(weights, voters) if keep[i]) < sum(weights)
        else:
            low = sum(w * float(scores[i]) for w, i in zip(weights, voters)) < threshold * sum(weights)
        if low:
            drop.extend(i for i in voters if keep[i])
        elif BLOCK_RAISES:
            lift.extend(i for i in voters if not keep[i])
    return sorted(drop), sorted(lift)
