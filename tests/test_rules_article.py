"""rules.in_byline / bylines and rules.in_page_chrome: an article's byline, dateline, share bar and gallery
controls leave its text; a thread's authors, a long author biography and a gallery's captions stay."""
from __future__ import annotations

import numpy as np
import pytest

from edrew_scrapy.rules import (
    BYLINE_NODES,
    OPTIONAL_RULES,
    bylines,
    explain,
    in_byline,
    in_page_chrome,
    relevant_mask,
)
from edrew_scrapy.serializer import serialize

STORY = ("<p>The council voted on Tuesday to rebuild the old bridge over the river by next spring.</p>"
         "<p>Work starts in March and the road stays open to buses and bicycles during the works.</p>"
         "<p>The mayor said the cost would be shared with the region and the national rail company.</p>")

ARTICLE = """<html><head><title>Bridge</title>{head}</head><body><main><article>
<h1 class="article-title">Council rebuilds the bridge</h1>
<div class="article-meta"><span class="byline">By <a rel="author" href="/ann">Ann Smith</a>, City desk</span>
<time datetime="2024-03-05">5 March 2024, 09:41</time></div>
<p class="dateline" itemprop="datePublished">Updated 6 March 2024</p>
<div class="share-bar"><span>Share</span><a href="/s/fb">Facebook</a><a href="/s/mail">Email</a>
<a class="print-button" href="#print">Print</a></div>
""" + STORY + """
<div class="gallery"><figure><img src="/a.jpg"><figcaption>The old bridge seen from the east bank at dawn
</figcaption></figure><span class="gallery-counter">Image 1 of 4</span><button class="close">Close</button>
<a class="next">Next</a></div>
<div class="author-bio"><p>Ann Smith has covered the city council and its budgets for the paper since
2009, and before that wrote about schools and transport for the regional radio.</p></div>
</article></main></body></html>"""

THREAD = """<html><head><title>Bridge thread</title></head><body><main><h1>Is the bridge safe?</h1>{posts}
</main></body></html>"""
POST = """<div class="post"><span class="post-author">user{i}</span><span class="post-date">3 March 2024</span>
<p>Post number {i}: I cross the bridge every morning and the deck shakes when the lorries go over it.</p></div>"""


def _kept(html, off=()):
    page = serialize(html)
    scores = np.full(len(page.nodes), 0.9, dtype=np.float32)
    mask = relevant_mask(page, scores, 0.5, region_share=0.7, off=off)
    return page, scores, [n.content for n, k in zip(page.nodes, mask) if k]


def _node(page, text):
    return next(n for n in page.nodes if n.content.startswith(text))


def test_byline_and_dateline_leave_the_text():
    page, scores, kept = _kept(ARTICLE.format(head=""))
    text = "\n".join(kept)
    for line in ("By Ann Smith, City desk", "5 March 2024, 09:41", "Updated 6 March 2024"):
        assert line not in kept
    assert "Council rebuilds the bridge" in kept  # a heading is never a byline
    assert "Work starts in March and the road stays open to buses and bicycles during the works." in kept
    assert "Ann Smith has covered the city council" in text  # a biography is a paragraph, not a byline
    decision = explain(page, scores, 0.5, region_share=0.7)
    assert decision.kept == relevant_mask(page, scores, 0.5, 0.7)
    why = {n.content: r for n, r in zip(page.nodes, decision.reasons)}
    assert why["By Ann Smith, City desk"] == "byline" and why["Updated 6 March 2024"] == "byline"


def test_share_bar_and_gallery_controls_leave_the_text():
    page, scores, kept = _kept(ARTICLE.format(head=""))
    for control in ("Share", "Facebook", "Email", "Print", "Image 1 of 4", "Close", "Next"):
        assert control not in kept
    # a caption of five words or more under a gallery class is left to the model
    assert "The old bridge seen from the east bank at dawn" in kept
    why = {n.content: r for n, r in zip(page.nodes, explain(page, scores, 0.5, region_share=0.7).reasons)}
    assert why["Image 1 of 4"] == "page-chrome" and why["Facebook"] == "page-chrome"


def test_rules_can_be_left_out_one_by_one():
    html = ARTICLE.format(head="")
    _page, _scores, with_all = _kept(html)
    _page, _scores, no_byline = _kept(html, off=("byline",))
    _page, _scores, no_chrome = _kept(html, off=("page-chrome",))
    assert "Updated 6 March 2024" in no_byline and "Updated 6 March 2024" not in no_chrome
    assert "Image 1 of 4" in no_chrome and "Image 1 of 4" not in no_byline
    assert set(with_all) < set(no_byline) and set(with_all) < set(no_chrome)
    page = serialize(html)
    scores = np.full(len(page.nodes), 0.9, dtype=np.float32)
    for off in (("byline",), OPTIONAL_RULES):
        assert explain(page, scores, 0.5, 0.7, off=off).kept == relevant_mask(page, scores, 0.5, 0.7, off=off)
    with pytest.raises(ValueError, match="unknown rule"):
        relevant_mask(page, scores, 0.5, 0.7, off=("bylines",))


def test_attribute_models_keep_bylines():
    page = serialize(ARTICLE.format(head=""))
    kept = relevant_mask(page, np.full(len(page.nodes), 0.9, dtype=np.float32), 0.5)
    assert all(kept)


def test_a_thread_keeps_its_authors_and_dates():
    # one author and date line per post: a thread's or a listing's, not an article's byline
    html = THREAD.format(posts="".join(POST.format(i=i) for i in range(BYLINE_NODES)))
    page, _scores, kept = _kept(html)
    assert in_byline(_node(page, "user1"))
    assert "user1" in kept and "user3" in kept
    assert bylines(page, [True] * len(page.nodes)) is None
    # a declared discussion keeps them however few
    few = serialize(THREAD.format(posts=POST.format(i=1)).replace(
        "<head>", '<head><script type="application/ld+json">{"@type": "DiscussionForumPosting"}</script>'))
    assert bylines(few, [True] * len(few.nodes)) is None


def test_byline_markup_words():
    page = serialize('<html><body><article><p class="candidate-update">Vote</p><p class="post-date">Today</p>'
                     '<p itemprop="author">Ann Smith</p><time>Monday</time><h2 class="byline">A heading</h2>'
                     '<p class="share-price">12.40</p><p class="social-links">Follow us</p>'
                     '<p class="sharepoint">Files</p></article></body></html>')
    assert not in_byline(_node(page, "Vote"))  # "candidate", "update": not the word "date"
    assert in_byline(_node(page, "Today")) and in_byline(_node(page, "Ann Smith")) and in_byline(_node(page, "Monday"))
    assert not in_byline(_node(page, "A heading"))
    assert in_page_chrome(_node(page, "Follow us"))
    assert not in_page_chrome(_node(page, "Files"))  # "sharepoint" is not a share bar
    assert not in_page_chrome(_node(page, "12.40"))  # nor a stock's "share-price"


def test_a_class_on_the_whole_post_is_no_byline():
    # WordPress themes put the author's name in a class on the whole post ("entry-author-NAME"): a short
    # paragraph of the post is not a byline, nor is a line three elements below a share or byline class
    page = serialize('<html><body><article class="post entry-author-eddie_ross"><div class="entry-content">'
                     '<div class="entry-body"><p>What flowers are you loving this summer?</p></div></div>'
                     '<div class="byline"><div class="row"><div class="col"><p>Far below</p></div></div></div>'
                     '<div class="social-article"><div><div><p>Read on</p></div></div></div>'
                     '<span class="c-byline__author-name">Ann Smith</span><span class="author-bio-link">Ann</span>'
                     '</article></body></html>')
    assert not in_byline(_node(page, "What flowers")) and not in_byline(_node(page, "Far below"))
    assert not in_page_chrome(_node(page, "Read on"))
    assert in_byline(_node(page, "Ann Smith"))
    bio = next(n for n in page.nodes if n.content == "Ann")
    assert not in_byline(bio)  # "author-bio-link": a biography's link, not the byline
