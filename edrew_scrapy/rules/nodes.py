"""What the rules read of a node beyond its score: its own id and class words, the class words of its
nearest elements on its reTPS, and the share of the kept words that lie in marked nodes."""
from __future__ import annotations

from typing import List, Sequence

from ..tokens import SEP
from ..words import count_words
from .settings import _NEAR_ELEMENTS


def _near_classes(node) -> List[str]:
    """The node's own id and class words and the class tokens of its reTPS up to _NEAR_ELEMENTS elements (the
    reTPS lists each element's classes, nearest first, then its "tag|bucket"), lower-case."""
    return _own_words(node).split() + _retps_classes(node.retps)


def _has_own(node) -> bool:
    """The node has an id or a class of its own (_own_words is not blank)."""
    return bool(node.attrs) and bool(node.attrs.get("id") or node.attrs.get("class"))


def _own_words(node) -> str:
    """The node's own id and class, lower-case, space-separated."""
    attrs = node.attrs or {}
    return f"{attrs.get('id') or ''} {attrs.get('class') or ''}".lower()


def _retps_classes(retps: str) -> List[str]:
    """_near_classes' words from the reTPS: its class tokens up to _NEAR_ELEMENTS elements."""
    words = []
    elements = 0
    for token in (retps.split(SEP) if retps else ()):
        if "|" in token:
            elements += 1
            if elements >= _NEAR_ELEMENTS:
                break
        elif not token.startswith("<#"):
            words.append(token)
    return words


def _word_share(nodes: Sequence, keep: Sequence[bool], marked: Sequence[bool]) -> float:
    """The share of the kept words that lie in `marked` nodes (0.0 when nothing is kept)."""
    inside = total = 0
    for node, kept, m in zip(nodes, keep, marked):
        if kept:
            n = count_words(node.content)
            total += n
            inside += n if m else 0
    return inside / total if total else 0.0
