"""rules: the standfirst beside the main region stays (standfirst_nodes) and a region is never one paragraph; a
share bar's heading (is_share_heading), the boxes of related posts (in_related_box) and newsletter sign-up boxes
(in_signup_box) leave an article's text. Pages written for these tests."""
from __future__ import annotations

import numpy as np
import pytest

from edrew_scrapy.rules import (
    OPTIONAL_RULES,
    REASONS,
    explain,
    in_related_box,
    in_signup_box,
    is_share_heading,
    relevant_mask,
    standfirst_nodes,
)
from edrew_scrapy.serializer import serialize

STANDFIRST = ("The council voted on Tuesday to rebuild the old bridge over the river, ending a dispute between "
              "the city and the region that had lasted for more than ten years.")
BODY = "".join(f"<p>{s}</p>" for s in (
    "Work starts in March and the road stays open to buses and bicycles during the works on the northern side.",
    "The mayor said the cost would be shared with the region and the national rail company, as agreed in May.",
    "Engineers found cracks in two of the five arches last winter and closed the bridge to lorries at once.",
    "The new bridge keeps the old stone piers, which the heritage office asked the council to preserve.",
    "Shops on both banks had lost customers since the closure, and their association welcomed the vote.",
    "A temporary footbridge will carry pedestrians while the deck is replaced, from April to September.",
))

ARTICLE = """<html><head><title>Council rebuilds the bridge | City News</title></head><body><main><article>
<header><h1>Council rebuilds the bridge</h1><p class="standfirst">{standfirst}</p>
<span class="byline">By Ann Smith</span></header>
<div class="entry-content">{body}
<h2>Sharing the cost</h2><p>The region pays two thirds of the bill and the city the rest of it.</p>
<div class="sharedaddy sd-sharing-enabled"><div class="sd-block sd-social"><h3 class="sd-title">Share this:</h3>
<a class="share-facebook" href="/s/fb">Facebook</a></div></div>
<div id="jp-relatedposts" class="jp-relatedposts"><h3 class="jp-relatedposts-headline">Related posts</h3>
<div class="jp-relatedposts-items"><p class="jp-relatedposts-post"><a href="/x">The old bridge closes for winter</a></p>
<p class="jp-relatedposts-post"><a href="/y">Buses take the long way round</a></p></div></div>
<div class="unrelated-note"><p>Note</p></div>
</div></article></main></body></html>"""


def _page(**parts):
    values = {"standfirst": STANDFIRST, "body": BODY}
    values.update(parts)
    return serialize(ARTICLE.format(**values))


def _kept(page, off=()):
    scores = np.full(len(page.nodes), 0.9, dtype=np.float32)
    mask = relevant_mask(page, scores, 0.5, region_share=0.7, off=off)
    return [n.content for n, k in zip(page.nodes, mask) if k]


def _node(page, text):
    return next(n for n in page.nodes if n.content.startswith(text))


def test_the_standfirst_beside_the_body_stays():
    page = _page()
    kept = _kept(page)
    assert STANDFIRST in kept
    # a byline between the headline and the body is short: it stays outside the region
    assert "By Ann Smith" not in kept and "Council rebuilds the bridge" not in kept
    # left out (edrew evaluate --rules-off standfirst): the region is the body alone
    assert STANDFIRST not in _kept(page, off=("standfirst",))


def test_no_standfirst_without_a_headline_or_from_link_text():
    page = serialize(ARTICLE.format(standfirst=STANDFIRST, body=BODY).replace("<h1>", "<h2>").replace("</h1>", "</h2>"))
    assert STANDFIRST not in _kept(page)  # no <h1> that the <title> names: nothing to start from
    linked = _page(standfirst=f'<a href="/more">{STANDFIRST}</a>')
    assert STANDFIRST not in _kept(linked)  # a linked teaser is not the article's lead
    keep = [True] * len(page.nodes)
    assert standfirst_nodes("/html[1]/body[1]", page, keep) == set()


def test_share_heading_and_related_posts_leave_the_text():
    page = _page()
    kept = _kept(page)
    for text in ("Share this:", "Facebook", "Related posts", "The old bridge closes for winter",
                 "Buses take the long way round"):
        assert text not in kept
    # an article's own heading with a share word, and a class that only contains "related", stay
    assert "Sharing the cost" in kept and "Note" in kept
    scores = np.full(len(page.nodes), 0.9, dtype=np.float32)
    why = {n.content: r for n, r in zip(page.nodes, explain(page, scores, 0.5, region_share=0.7).reasons)}
    assert why["Share this:"] == "share-headings" and why["Related posts"] == "related-boxes"
    assert why["Facebook"] == "page-chrome"
    assert set(why.values()) <= set(REASONS)


def test_each_new_rule_can_be_left_out():
    page = _page()
    assert "Share this:" in _kept(page, off=("share-headings",))
    no_related = _kept(page, off=("related-boxes",))
    assert "Related posts" in no_related and "The old bridge closes for winter" in no_related
    assert "Share this:" not in no_related
    scores = np.full(len(page.nodes), 0.9, dtype=np.float32)
    for off in ((), ("standfirst",), ("share-headings", "related-boxes"), OPTIONAL_RULES):
        assert explain(page, scores, 0.5, 0.7, off=off).kept == relevant_mask(page, scores, 0.5, 0.7, off=off)
    with pytest.raises(ValueError, match="unknown rule"):
        relevant_mask(page, scores, 0.5, 0.7, off=("related",))


def test_box_markup_words():
    page = serialize('<html><body><div class="widget_recent_entries widget"><h2 class="widget-title">Recent Posts'
                     '</h2></div><div class="yarpp-related"><p>More from the archive:</p></div>'
                     '<div class="recently-viewed"><p>Lamp</p></div><div class="entry-content related-content">'
                     '<div class="inner"><div class="text"><p>Deep inside a wrapper whose class names related content'
                     '</p></div></div></div><div class="yarpp-related"><p>' + " ".join(["word"] * 13) + '</p></div>'
                     '<div class="share-price"><h3>Price</h3></div><div class="gallery"><h3>Photos</h3></div>'
                     '</body></html>')
    assert in_related_box(_node(page, "Recent Posts")) and in_related_box(_node(page, "More from the archive"))
    assert not in_related_box(_node(page, "Lamp"))  # "recently-viewed" is not a box of recent posts
    assert not in_related_box(_node(page, "Deep inside"))  # a class three elements up is the whole post's
    assert not in_related_box(_node(page, "word word"))  # longer than RELATED_WORDS: left to the model
    assert not is_share_heading(_node(page, "Price")) and not is_share_heading(_node(page, "Photos"))


def test_a_region_is_never_one_paragraph():
    long = " ".join(["The new timetable adds an early train on weekdays and a late one on Saturdays."] * 4)
    page = serialize("<html><head><title>Timetable</title></head><body><div class='sidebar'><p>Menu</p></div>"
                     f"<article><p>{long}</p><p>Tickets stay at the old price.</p><p>See you on board.</p>"
                     "</article></body></html>")
    # the first paragraph holds 70 % of the kept words: the region is the article around it, not the paragraph
    assert _kept(page) == [long, "Tickets stay at the old price.", "See you on board."]
    assert _kept(page, off=("paragraph-region",)) == [long]


def test_a_newsletter_signup_box_leaves_the_text():
    issue = " ".join(["This week the council met twice and the river rose above the old quay again."] * 3)
    body = BODY + ('<div class="newsletter-box"><h4>Stay informed</h4><p>Get the city news in your inbox every '
                   'Friday morning.</p><form class="signup-form"><p>I agree that my address is stored for the '
                   'newsletter.</p></form></div>'
                   f'<div class="newsletter-issue"><p>{issue}</p></div>')
    page = _page(body=body)
    kept = _kept(page)
    for text in ("Stay informed", "Get the city news in your inbox every Friday morning.",
                 "I agree that my address is stored for the newsletter."):
        assert text not in kept and text in _kept(page, off=("signup-boxes",))
    assert issue in kept  # longer than SIGNUP_WORDS: a newsletter's own text is left to the model
    assert in_signup_box(_node(page, "Stay informed")) and not in_signup_box(_node(page, "This week"))
    scores = np.full(len(page.nodes), 0.9, dtype=np.float32)
    why = {n.content: r for n, r in zip(page.nodes, explain(page, scores, 0.5, region_share=0.7).reasons)}
    assert why["Stay informed"] == "signup-boxes"
