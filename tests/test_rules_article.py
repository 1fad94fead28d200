"""rules.in_page_chrome: an article's share bar and gallery controls leave its text; a gallery's captions are
not chrome (the captions rule takes them) and a class on a whole post stays."""
from __future__ import annotations

import numpy as np
import pytest

from edrew_scrapy.rules import OPTIONAL_RULES, explain, in_page_chrome, relevant_mask
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


COMMENTS = ('<div id="comments" class="comments-area"><ol class="comment-list"><li class="comment">'
            '<p>Who pays for the buses?</p></li></ol></div>')


def _kept(html, off=()):
    page = serialize(html)
    scores = np.full(len(page.nodes), 0.9, dtype=np.float32)
    mask = relevant_mask(page, scores, 0.5, region_share=0.7, off=off)
    return page, scores, [n.content for n, k in zip(page.nodes, mask) if k]


def _node(page, text):
    return next(n for n in page.nodes if n.content.startswith(text))



def test_share_bar_and_gallery_controls_leave_the_text():
    page, scores, kept = _kept(ARTICLE.format(head=""))
    for control in ("Share", "Facebook", "Email", "Print", "Image 1 of 4", "Close", "Next"):
        assert control not in kept
    # a caption of five words or more under a gallery class is not chrome: the captions rule takes it
    assert "The old bridge seen from the east bank at dawn" not in kept
    assert "The old bridge seen from the east bank at dawn" in _kept(ARTICLE.format(head=""), off=("captions",))[2]
    why = {n.content: r for n, r in zip(page.nodes, explain(page, scores, 0.5, region_share=0.7).reasons)}
    assert why["Image 1 of 4"] == "page-chrome" and why["Facebook"] == "page-chrome"
    assert why["The old bridge seen from the east bank at dawn"] == "captions"


def test_rules_can_be_left_out_one_by_one():
    html = ARTICLE.format(head="").replace("<div class=\"author-bio\">", COMMENTS + "<div class=\"author-bio\">")
    _page, _scores, with_all = _kept(html)
    _page, _scores, no_comments = _kept(html, off=("reader-comments",))
    _page, _scores, no_chrome = _kept(html, off=("page-chrome",))
    assert "Image 1 of 4" in no_chrome and "Image 1 of 4" not in no_comments
    assert "Who pays for the buses?" in no_comments and "Who pays for the buses?" not in no_chrome
    assert set(with_all) < set(no_comments) and set(with_all) < set(no_chrome)
    page = serialize(html)
    scores = np.full(len(page.nodes), 0.9, dtype=np.float32)
    for off in (("page-chrome",), OPTIONAL_RULES):
        assert explain(page, scores, 0.5, 0.7, off=off).kept == relevant_mask(page, scores, 0.5, 0.7, off=off)
    with pytest.raises(ValueError, match="unknown rule"):
        relevant_mask(page, scores, 0.5, 0.7, off=("byline",))


def test_chrome_markup_words():
    page = serialize('<html><body><article class="post social-article"><div class="entry-content">'
                     '<div class="entry-body"><p>Read on</p></div></div></article><article>'
                     '<p class="share-price">12.40</p><p class="social-links">Follow us</p>'
                     '<p class="sharepoint">Files</p><h2 class="gallery-title">Photos</h2></article></body></html>')
    assert in_page_chrome(_node(page, "Follow us"))
    assert not in_page_chrome(_node(page, "Read on"))  # a class three elements up is the whole post's
    assert not in_page_chrome(_node(page, "Files"))  # "sharepoint" is not a share bar
    assert not in_page_chrome(_node(page, "12.40"))  # nor a stock's "share-price"
    assert not in_page_chrome(_node(page, "Photos"))  # a heading is never chrome
