"""Accuracy gate: the shipped model's word-F1 on 36 article pages written for this project must not fall
below floors, per page layout and over all pages.

The pages (tests/fixtures/gate, written by make_pages.py there) put six stories in six layouts with the
boilerplate news crawls are made of: WordPress comment threads and widgets, bylines and share buttons,
photo-gallery chrome, "top rated comments" and teaser lists, a 2000s table layout with comments in the
article's cell, a portal with "latest news" sidebars. The reference is the story's text without its
headline, byline, captions, comments or lists. The floors sit a little under what models/default scores
(docs/experiments/2026-11-27-multi-dataset-model.md): a model or rule change that loses more is a
regression to look at, not noise.
"""
from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest
import torch

from edrew_scrapy.data import simple
from edrew_scrapy.data.align import word_f1
from edrew_scrapy.extract import extract
from edrew_scrapy.model.scorer import load_model
from edrew_scrapy.training.evaluate import reference_text

torch.set_num_threads(1)

GATE = Path(__file__).parent / "fixtures" / "gate"

# mean word-F1 floors per layout, and over all 36 pages
FLOORS = {"wordpress": 0.95, "news": 0.95, "gallery": 0.83, "magazine": 0.95, "tables": 0.77, "portal": 0.95}
MEAN_FLOOR = 0.92
PAGE_FLOOR = 0.70  # no single page below


@pytest.fixture(scope="module")
def scores():
    scorer = load_model("default")
    pages = list(simple.iter_pages(GATE))
    out = []
    for lp in pages:
        [result] = extract([lp.page], scorer=scorer)
        out.append((lp.page_id, lp.page_type_or_site, word_f1(result.text, reference_text(lp))))
    return out


def test_the_gate_holds_every_layout_and_story(scores):
    assert len(scores) == 36
    assert {layout for _, layout, _ in scores} == set(FLOORS)


def test_each_layout_keeps_its_floor(scores):
    by = defaultdict(list)
    for _, layout, (_p, _r, f) in scores:
        by[layout].append(f)
    means = {layout: sum(fs) / len(fs) for layout, fs in by.items()}
    low = {layout: round(m, 3) for layout, m in means.items() if m < FLOORS[layout]}
    assert not low, f"below the floor: {low} (floors {FLOORS})"


def test_no_page_falls_through_and_the_mean_holds(scores):
    f1s = {page: f for page, _, (_p, _r, f) in scores}
    low = {page: round(f, 3) for page, f in f1s.items() if f < PAGE_FLOOR}
    assert not low, f"pages below {PAGE_FLOOR}: {low}"
    mean = sum(f1s.values()) / len(f1s)
    assert mean >= MEAN_FLOOR, f"mean word-F1 {mean:.3f} < {MEAN_FLOOR}"


def test_every_story_is_kept_whole(scores):
    """Recall on every page: a model that drops paragraphs of the story is a regression even where the
    boilerplate it also drops keeps its F1 above the floors."""
    low = {page: round(r, 3) for page, _, (_p, r, _f) in scores if r < 0.95}
    assert not low, f"pages whose story is not kept whole: {low}"
