"""rules' `block-vote` (blocks.py): a list of links whose items score on both sides of the threshold is decided
whole by its word-weighted mean score; it only drops, leaves lists of prose and tables of data alone, and
`--rules-off block-vote` ablates it. Pages written for these tests."""
from __future__ import annotations

import numpy as np

from edrew_scrapy import blocks
from edrew_scrapy.rules import OPTIONAL_RULES, REASONS, explain, relevant_mask
from edrew_scrapy.serializer import serialize

BODY = "".join(f"<p>{s}</p>" for s in (
    "The harbour board agreed on Monday to dredge the eastern basin before the summer season begins in June.",
    "Fishing boats had run aground twice this winter, and the ferry company warned it would cancel crossings.",
    "The dredging costs four million and the board will borrow half of it from the regional development bank.",
    "Sand from the basin goes to the beach north of the town, which lost much of its width in the storms.",
))

PAGE = """<html><head><title>Harbour to be dredged | Coast Times</title></head><body><div id="page">
<h1>Harbour to be dredged</h1>
<div class="entry">{body}{extra}</div></div></body></html>"""

# a blog's archive list inside the post's wrapper (no <aside>, no class a markup rule knows)
ARCHIVE = "<ul>" + "".join(f'<li><a href="/{m}">{m.title()} 2012 archive</a></li>' for m in (
    "march", "april", "may", "june", "july")) + "</ul>"


def _page(extra: str):
    return serialize(PAGE.format(body=BODY, extra=extra))


def _scores(page, items: dict) -> np.ndarray:
    """0.9 for every node, except the nodes whose text starts with a key of `items`."""
    out = np.full(len(page.nodes), 0.9, dtype=np.float32)
    for i, n in enumerate(page.nodes):
        for start, score in items.items():
            if n.content.startswith(start):
                out[i] = score
    return out


def _why(page, scores, off=()):
    decision = explain(page, scores, 0.5, region_share=0.7, off=off)
    assert decision.kept == relevant_mask(page, scores, 0.5, 0.7, off=off)
    return {n.content: r for n, r in zip(page.nodes, decision.reasons)}


def test_archive_list_with_mixed_scores_dropped_whole():
    page = _page(ARCHIVE)
    # two items pass the threshold (0.45: half the page's best), three do not; the mean (0.34) is below it
    scores = _scores(page, {"March": 0.6, "April": 0.6, "May": 0.2, "June": 0.2, "July": 0.2})
    why = _why(page, scores)
    assert why["March 2012 archive"] == why["April 2012 archive"] == "block-vote"
    assert why["May 2012 archive"] == "below-threshold"
    assert all(why[n.content] == "kept" for n in page.nodes if n.tag == "p")
    # left out, the two items stay as the model scored them
    off = _why(page, scores, off=("block-vote",))
    assert off["March 2012 archive"] == off["April 2012 archive"] == "kept"
    assert "block-vote" in OPTIONAL_RULES and "block-vote" in REASONS


def test_article_list_above_the_threshold_kept_whole():
    # the article's own list of sources: one item scores low, the block's mean stays above the threshold; the
    # vote only drops, so the three kept items stay and the low one is the threshold's
    page = _page(ARCHIVE)
    scores = _scores(page, {"March": 0.9, "April": 0.8, "May": 0.7, "June": 0.9, "July": 0.2})
    why = _why(page, scores)
    assert [why[f"{m} 2012 archive"] for m in ("March", "April", "May", "June")] == ["kept"] * 4
    assert why["July 2012 archive"] == "below-threshold"


def test_prose_list_and_short_list_do_not_vote():
    # items of plain text (not link text) are a guide's list, not a sidebar: left to their own scores
    step = "<li>Step {}: check the pump and write down its pressure</li>"
    steps = "<ul>" + "".join(step.format(k) for k in range(1, 6)) + "</ul>"
    page = _page(steps)
    why = _why(page, _scores(page, {"Step 1": 0.6, "Step 2": 0.2, "Step 3": 0.2, "Step 4": 0.2, "Step 5": 0.2}))
    assert why["Step 1: check the pump and write down its pressure"] == "kept"
    # three links are fewer than BLOCK_ITEMS like items: no block
    short = "<ul>" + "".join(f'<li><a href="/{m}">{m.title()} 2012 archive</a></li>' for m in ("march", "april",
                                                                                               "may")) + "</ul>"
    page = _page(short)
    why = _why(page, _scores(page, {"March": 0.6, "April": 0.2, "May": 0.2}))
    assert why["March 2012 archive"] == "kept"


def test_blocks_are_the_nearest_list():
    page = _page("<ul><li><a href='/x'>Outer</a><ul>" + "".join(f"<li><a href='/{k}'>Inner {k}</a></li>"
                                                                for k in range(4)) + "</ul></li></ul>")
    found = blocks.blocks(page.nodes)
    inner = [i for i, n in enumerate(page.nodes) if n.content.startswith("Inner")]
    assert sorted(i for members in found.values() for i in members) == inner
    [(parent, tag)] = found
    assert tag == "li" and parent.endswith("/li[1]/ul[1]")
