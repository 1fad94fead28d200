"""rules: a comment reply form's heading and notes (in_comment_form) and a like button's line (in_like_button)
leave the text, even where a thread is the page's content, each with its `--rules-off` switch. Pages written for
these tests."""
from __future__ import annotations

import numpy as np
import pytest

from edrew_scrapy.rules import (
    OPTIONAL_RULES,
    REASONS,
    explain,
    in_comment_form,
    in_like_button,
    reader_comment_nodes,
    relevant_mask,
)
from edrew_scrapy.serializer import serialize

# A forum thread: the posts are its content (the reader-comment rule keeps them), the reply form is not.
FORUM = """<html><head><title>Bridge thread</title></head><body><div class="thread">
<h1>Is the bridge safe to cross by bicycle?</h1>
<div class="comment-list"><div class="comment"><p class="comment-author">cyclist42</p>
<p>I cross it every morning and the deck shakes when the lorries go over it, is that normal?</p></div>
<div class="comment"><p class="comment-author">engineer_bob</p>
<p>Some movement is normal for a bridge of that age; the council inspected it last year and found it sound.</p>
</div><div class="comment"><p class="comment-author">cyclist42</p>
<p>Thanks, that is good to hear, I will keep using it until the works start in March.</p></div></div>
<div id="respond" class="comment-respond"><h3 id="reply-title" class="comment-reply-title">Kommentieren</h3>
<p class="comment-notes">Deine E-Mail-Adresse wird nicht veröffentlicht.</p>{long}</div>
</div></body></html>"""

LONG_NOTE = ('<p class="comment-notes">' + " ".join(
    "Posts are read by a moderator before they appear here, and we keep a post that is on topic however sharp "
    "its tone, since the thread is for the people who cross the bridge every day and know it best.".split())
    + "</p>")

BODY = "".join(f"<p>{s}</p>" for s in (
    "The harbour board agreed on Monday to dredge the eastern basin before the summer season begins in June.",
    "Fishing boats had run aground twice this winter, and the ferry company warned it would cancel crossings.",
    "The dredging costs four million and the board will borrow half of it from the regional development bank.",
    "Sand from the basin goes to the beach north of the town, which lost much of its width in the storms.",
))

ARTICLE = """<html><head><title>Harbour to be dredged | Coast Times</title></head><body><main><article>
<h1>Harbour to be dredged</h1><div class="entry-content">{body}{extra}</div></article></main></body></html>"""

LIKES = ('<div class="sharedaddy sd-block sd-like"><div class="likes-widget-placeholder">'
         '<div class="likes-text">12 Bloggern gefällt das:</div></div></div>')


def _scores(page):
    return np.full(len(page.nodes), 0.9, dtype=np.float32)


def _why(page, off=()):
    scores = _scores(page)
    decision = explain(page, scores, 0.5, region_share=0.7, off=off)
    assert decision.kept == relevant_mask(page, scores, 0.5, region_share=0.7, off=off)
    return {n.content: r for n, r in zip(page.nodes, decision.reasons)}


def _node(page, text):
    return next(n for n in page.nodes if n.content.startswith(text))


def test_rules_are_optional_and_explained():
    for rule in ("comment-forms", "like-buttons"):
        assert rule in OPTIONAL_RULES and rule in REASONS


def test_a_threads_reply_form_goes_its_posts_stay():
    page = serialize(FORUM.format(long=""))
    why = _why(page)
    assert why["Kommentieren"] == "comment-forms"
    assert why["Deine E-Mail-Adresse wird nicht veröffentlicht."] == "comment-forms"
    assert why["engineer_bob"] == "kept"
    assert why["Thanks, that is good to hear, I will keep using it until the works start in March."] == "kept"
    # the thread is the page's content, so it is not given apart as comments
    assert not any(reader_comment_nodes(page, explain(page, _scores(page), 0.5, region_share=0.7)))
    # off: the rule no longer decides it (the main region, here the posts' list, leaves it out instead)
    assert _why(page, off=("comment-forms",))["Kommentieren"] != "comment-forms"


def test_a_long_text_in_the_form_is_left_to_the_model():
    page = serialize(FORUM.format(long=LONG_NOTE))
    note = _node(page, "Posts are read by a moderator")
    assert not in_comment_form(note)
    assert in_comment_form(_node(page, "Kommentieren"))
    assert _why(page)[note.content] == "kept"


def test_an_articles_reply_form_still_goes_as_a_comment():
    # on an article the reader-comment rule, which comes first, already takes the form with the thread
    html = ARTICLE.format(body=BODY, extra="").replace(
        "</article>", '</article><div id="respond" class="comment-respond"><h3 class="comment-reply-title">'
                      "Leave a Comment</h3></div>")
    assert _why(serialize(html))["Leave a Comment"] == "reader-comments"


def test_a_like_line_goes():
    page = serialize(ARTICLE.format(body=BODY, extra=LIKES))
    why = _why(page)
    assert why["12 Bloggern gefällt das:"] == "like-buttons"
    assert why[_node(page, "The harbour board agreed").content] == "kept"
    assert _why(page, off=("like-buttons",))["12 Bloggern gefällt das:"] == "kept"


@pytest.mark.parametrize("cls, expected", [
    ("likes-text", True), ("wpl-likebox", True), ("post-like-button", True), ("you-may-also-like", True),
    ("likely-outcome", False), ("unlikely", False), ("dislike-free", False), ("bike-lanes", False),
])
def test_like_class_words(cls, expected):
    page = serialize(ARTICLE.format(body=BODY, extra=f'<div class="{cls}">Twelve people like this</div>'))
    assert in_like_button(_node(page, "Twelve people like this")) is expected


def test_a_long_text_under_a_like_class_is_left_to_the_model():
    text = "Readers who liked this story about the harbour also asked how the dredging will change the beach"
    page = serialize(ARTICLE.format(body=BODY, extra=f'<div class="likes-text">{text}</div>'))
    assert not in_like_button(_node(page, "Readers who liked"))
    assert _why(page)[text] == "kept"
