"""rules.explain: the rule that kept or dropped each node, always in agreement with relevant_mask."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from edrew_scrapy.rules import KEPT, REASONS, explain, relevant_mask
from edrew_scrapy.serializer import serialize

DEMO = Path(__file__).resolve().parent.parent / "demo" / "site"

PAGE = """<html><head><title>Rules</title></head><body>
<nav><a href="/">Home</a> <a href="/news">News</a></nav>
<form><label>Your e-mail address please</label><button>Subscribe to the letter</button></form>
<div id="main"><article><h1>The headline of the story</h1>
<p>First paragraph of the story with enough words in it.</p>
<span class="sr-only">Skip to the content of the page</span>
<p>Second paragraph of the story, also long enough to count.</p></article></div>
<div class="other"><p>A far paragraph.</p></div>
<footer>All rights reserved by nobody in particular</footer></body></html>"""


def _nodes(page, text):
    return next(i for i, n in enumerate(page.nodes) if n.content.startswith(text))


def test_each_rule_named():
    page = serialize(PAGE)
    scores = np.full(len(page.nodes), 0.9, dtype=np.float32)
    scores[_nodes(page, "Second paragraph")] = 0.2
    decision = explain(page, scores, 0.5, region_share=0.7)
    why = {n.content: r for n, r in zip(page.nodes, decision.reasons)}
    assert why["Home"] == "boilerplate" and why["All rights reserved by nobody in particular"] == "boilerplate"
    assert why["Your e-mail address please"] == "form-control"
    assert why["Skip to the content of the page"] == "screen-reader-only"
    assert why["Second paragraph of the story, also long enough to count."] == "below-threshold"
    assert why["First paragraph of the story with enough words in it."] == KEPT
    assert why["A far paragraph."] == "outside-main-region"
    assert decision.region == "/html[1]/body[1]/div[1]/article[1]"
    assert decision.threshold == pytest.approx(0.45) and decision.capped and decision.given == 0.5
    assert set(decision.reasons) <= set(REASONS)
    assert decision.kept == relevant_mask(page, scores, 0.5, 0.7)


def test_without_main_content_rules():
    page = serialize(PAGE)
    scores = np.full(len(page.nodes), 0.9, dtype=np.float32)
    decision = explain(page, scores, 0.5, region_share=None)
    why = {n.content: r for n, r in zip(page.nodes, decision.reasons)}
    # only the threshold and boilerplate markup apply to an attribute model
    assert why["Your e-mail address please"] == KEPT and why["Skip to the content of the page"] == KEPT
    assert why["Home"] == "boilerplate" and decision.region is None and not decision.capped
    assert decision.kept == relevant_mask(page, scores, 0.5, None)


def test_layout_duplicate_and_reviews():
    html = """<html><head><script type="application/ld+json">{"@type": "Product", "name": "Kettle"}</script>
    </head><body><main><div class="desc hidden-md-up"><p>A kettle that boils water quickly.</p></div>
    <div class="desc-mobile hidden-up-md"><p>A kettle that boils water quickly.</p></div>
    <div class="reviews"><p>Great kettle, five stars from me.</p></div></main></body></html>"""
    page = serialize(html)
    decision = explain(page, np.full(len(page.nodes), 0.9), 0.5, region_share=0.7)
    assert decision.reasons.count("layout-duplicate") == 1
    assert decision.reasons[_nodes(page, "Great kettle")] == "customer-reviews"
    assert decision.kept == relevant_mask(page, np.full(len(page.nodes), 0.9), 0.5, 0.7)


@pytest.mark.parametrize("name", sorted(str(p.relative_to(DEMO)) for p in DEMO.rglob("*.html")))
def test_agrees_with_relevant_mask(name):
    page = serialize((DEMO / name).read_bytes())
    rng = np.random.default_rng(len(name))
    for _ in range(5):
        scores = rng.random(len(page.nodes)).astype(np.float32) ** 2
        for region_share in (None, 0.7, 0.9):
            for threshold in (0.2, 0.5, 0.95):
                decision = explain(page, scores, threshold, region_share)
                assert decision.kept == relevant_mask(page, scores, threshold, region_share), (name, region_share)
                assert len(decision.reasons) == len(page.nodes)
