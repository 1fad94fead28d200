"""rules.in_sidebar (`sidebars`) and the declared article's threshold cap (`article-threshold`)."""
from __future__ import annotations

import numpy as np
import pytest

from edrew_scrapy.rules import (
    ARTICLE_BEST_SHARE,
    OPTIONAL_RULES,
    PAGE_BEST_SHARE,
    REASONS,
    explain,
    in_sidebar,
    relevant_mask,
)
from edrew_scrapy.serializer import serialize

POST = ("<p>We walked from the harbour to the old mill on the first morning, stopped for bread at the bakery by the "
        "church and crossed the river on the rebuilt bridge before the rain.</p>"
        "<p>The second day took us along the cliffs to the lighthouse, where the keeper showed us the lamp and told "
        "us how the light was kept burning through the war years.</p>")

# an old blog theme: the sidebar is a <div>, not an <aside>, so no markup rule settles it
BLOG = """<html><head><title>Two days on the coast</title>{head}</head><body><div class="{wrap}">
<div class="post"><h1>Two days on the coast</h1>""" + POST + """</div>
<div id="sidebar" class="sidebar"><h2 class="widgettitle">Categories</h2>
<ul><li class="cat-item cat-item-3"><a href="/c/walks">Walks (14)</a></li>
<li class="cat-item cat-item-7"><a href="/c/food">Food (9)</a></li></ul>
<div class="widget widget_archive"><h2 class="widget-title">Archives</h2>
<ul><li><a href="/2012/10">October 2012</a></li></ul></div>
<p>I write about long walks along the coast and the food we find on the way.</p>
</div></div></body></html>"""

SIDEBAR_TEXTS = ("Categories", "Walks (14)", "Food (9)", "Archives",
                 "I write about long walks along the coast and the food we find on the way.")


def _decide(html, scores=None, **kw):
    page = serialize(html)
    if scores is None:
        scores = np.full(len(page.nodes), 0.9, dtype=np.float32)
    decision = explain(page, scores, 0.5, region_share=0.7, **kw)
    assert decision.kept == relevant_mask(page, scores, 0.5, 0.7, **kw)
    return page, {n.content: r for n, r in zip(page.nodes, decision.reasons)}, decision


def test_a_blog_sidebar_and_its_lists_go():
    _page, why, _ = _decide(BLOG.format(head="", wrap="page"))
    for text in SIDEBAR_TEXTS:
        assert why[text] == "sidebars", text
    assert why["Two days on the coast"] == "kept"
    assert all(r == "kept" for t, r in why.items() if t.startswith(("We walked", "The second day")))


def test_the_switch_and_its_reason():
    assert "sidebars" in OPTIONAL_RULES and "sidebars" in REASONS
    _page, why, _ = _decide(BLOG.format(head="", wrap="page"), off=("sidebars",))
    assert all(why[t] != "sidebars" for t in SIDEBAR_TEXTS)


@pytest.mark.parametrize("wrap", ["content-sidebar-wrap", "has-sidebar", "sidebar-1", "elementor-widget"])
def test_layout_classes_are_not_a_sidebar(wrap):
    # a layout class on the content's own wrapper: the post under it stays
    html = (f'<html><head><title>Coast</title></head><body><div class="{wrap}"><div><p>Short note on the walk.</p>'
            "</div></div></body></html>")
    page = serialize(html)
    [node] = [n for n in page.nodes if n.content == "Short note on the walk."]
    assert not in_sidebar(node)


def test_a_long_text_under_a_sidebar_class_is_left_to_the_model():
    long_text = " ".join(["word"] * 31)
    page = serialize(f'<html><body><div class="sidebar"><p>{long_text}</p><p>Archives</p></div></body></html>')
    by_text = {n.content: n for n in page.nodes}
    assert not in_sidebar(by_text[long_text]) and in_sidebar(by_text["Archives"])


NEWS = '<script type="application/ld+json">{{"@type": "{kind}", "headline": "Two days on the coast"}}</script>'
# no sidebar markup here: a list of other stories the model scores barely half as high as the article
STORY = """<html><head><title>Two days on the coast</title>{head}</head><body><div class="page">
<div class="story"><h1>Two days on the coast</h1>""" + POST + """
<p class="more">More stories: the harbour festival returns, a new ferry timetable for the islands.</p></div>
</div></body></html>"""


def _story_scores(page):
    # a page the model is unsure of: the article 0.7, the list of other stories 0.4, above PAGE_BEST_SHARE x 0.7
    # and below ARTICLE_BEST_SHARE x 0.7 (both caps below the card's 0.5)
    assert PAGE_BEST_SHARE * 0.7 <= 0.4 < ARTICLE_BEST_SHARE * 0.7 < 0.5
    return np.array([0.4 if n.content.startswith("More stories") else 0.7 for n in page.nodes], dtype=np.float32)


def test_a_declared_article_caps_its_threshold_higher():
    html = STORY.format(head=NEWS.format(kind="NewsArticle"))
    page = serialize(html)
    scores = _story_scores(page)
    _page, why, decision = _decide(html, scores)
    assert why["More stories: the harbour festival returns, a new ferry timetable for the islands."] == \
        "below-threshold"
    assert decision.threshold == pytest.approx(ARTICLE_BEST_SHARE * 0.7)
    assert all(r == "kept" for t, r in why.items() if t.startswith(("We walked", "The second day")))
    # left out, or on a page that declares no article (or a collection too), the list stays
    for head, off in ((NEWS.format(kind="NewsArticle"), ("article-threshold",)), ("", ()),
                      (NEWS.format(kind="CollectionPage") + NEWS.format(kind="NewsArticle"), ())):
        _page, why, decision = _decide(STORY.format(head=head), scores, off=off)
        assert why["More stories: the harbour festival returns, a new ferry timetable for the islands."] == "kept"
        assert decision.threshold == pytest.approx(PAGE_BEST_SHARE * 0.7)


def test_a_threshold_the_caller_gives_is_not_capped():
    html = STORY.format(head=NEWS.format(kind="NewsArticle"))
    page = serialize(html)
    scores = _story_scores(page)
    decision = explain(page, scores, 0.3, region_share=0.7, best_share=None)
    assert decision.threshold == pytest.approx(0.3) and not decision.capped
    assert decision.kept == relevant_mask(page, scores, 0.3, 0.7, best_share=None)
    assert "More stories: the harbour festival returns, a new ferry timetable for the islands." in \
        {n.content for n, k in zip(page.nodes, decision.kept) if k}
