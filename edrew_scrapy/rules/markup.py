"""The markup that settles a node whatever its score: boilerplate containers (Node.boilerplate), form
controls and text for screen readers only. A main-content model leaves such nodes unscored (`settled`)."""
from __future__ import annotations

from typing import Dict

from ..tokens import SEP
from .settings import FORM_CONTROL_TAGS, SCREEN_READER_CLASSES


def is_relevant(node, score: float, threshold: float) -> bool:
    """The decision for one node: its score reaches the threshold and it is not in boilerplate markup.

    Node.boilerplate marks text inside dialog boxes, <nav>, <aside> and page-level <footer> (or their ARIA
    roles): the reTPS, cut at 20 tokens, rarely shows the model these ancestors. Evidence:
    docs/method-choices.md, "Decision rules after scoring".
    """
    return score >= threshold and not node.boilerplate


def for_screen_readers_only(node) -> bool:
    """A class on the node's reTPS is one of SCREEN_READER_CLASSES."""
    return not SCREEN_READER_CLASSES.isdisjoint(node.tokens)


def _for_screen_readers_only(retps: str, seen: Dict[str, bool]) -> bool:
    """for_screen_readers_only of a node with this reTPS, remembered in `seen`."""
    hit = seen.get(retps)
    if hit is None:
        hit = seen[retps] = not SCREEN_READER_CLASSES.isdisjoint(retps.split(SEP) if retps else ())
    return hit


def in_form_control(node) -> bool:
    """The node is a form control's text (FORM_CONTROL_TAGS), or sits inside a <select>."""
    return node.tag in FORM_CONTROL_TAGS or (
        "select|" in node.retps and any(t.startswith("select|") for t in node.tokens))


def settled(node) -> bool:
    """A main-content model's rules keep the node out whatever its score: boilerplate markup
    (`is_relevant`), a form control (`in_form_control`) or text for screen readers only."""
    return bool(node.boilerplate) or in_form_control(node) or for_screen_readers_only(node)
