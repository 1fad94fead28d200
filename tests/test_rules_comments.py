"""rules.in_comments / comments_are_content: reader comments leave an article's text; a forum keeps its posts."""
from __future__ import annotations

import numpy as np

from edrew_scrapy.rules import comments_are_content, explain, in_comments, reader_comment_nodes, relevant_mask
from edrew_scrapy.serializer import serialize

STORY = ("<p>The council voted on Tuesday to rebuild the old bridge over the river by next spring.</p>"
         "<p>Work starts in March and the road stays open to buses and bicycles during the works.</p>"
         "<p>The mayor said the cost would be shared with the region and the national rail company.</p>")

ARTICLE = """<html><head><title>Bridge</title>{head}</head><body><div class="page"><article class="post">
<h1>Council rebuilds the bridge</h1>""" + STORY + """</article>
<div id="comments" class="comments-area"><h2 class="comments-title">34 responses to Council rebuilds the bridge</h2>
<ol class="comment-list"><li class="comment"><div class="comment-body"><p class="comment-author">river_fan</p>
<p>About time, the old bridge has been shaking for years when the lorries cross it.</p></div></li>
<li class="comment"><div class="comment-body"><p class="comment-author">Anne</p>
<p>Who pays for the buses while the works go on, the region or the town itself?</p></div></li></ol>
</div><p class="commentary-note">This story is part of our commentary on the region's roads.</p></div></body></html>"""

FORUM = """<html><head><title>Bridge thread</title>{head}</head><body><div class="thread">
<h1>Is the bridge safe to cross by bicycle?</h1>
<div class="comment-list"><div class="comment"><p class="comment-author">cyclist42</p>
<p>I cross it every morning and the deck shakes when the lorries go over it, is that normal?</p></div>
<div class="comment"><p class="comment-author">engineer_bob</p>
<p>Some movement is normal for a bridge of that age; the council inspected it last year and found it sound.</p>
</div><div class="comment"><p class="comment-author">cyclist42</p>
<p>Thanks, that is good to hear, I will keep using it until the works start in March.</p></div></div>
</div></body></html>"""

NEWS_ARTICLE = '<script type="application/ld+json">{"@type": "NewsArticle", "headline": "Bridge"}</script>'
FORUM_POSTING = '<script type="application/ld+json">{"@type": "DiscussionForumPosting", "headline": "Bridge"}</script>'


def _kept(html):
    page = serialize(html)
    scores = np.full(len(page.nodes), 0.9, dtype=np.float32)
    mask = relevant_mask(page, scores, 0.5, region_share=0.7)
    return page, scores, {n.content for n, k in zip(page.nodes, mask) if k}


def test_an_article_drops_its_comments():
    for head in ("", NEWS_ARTICLE):
        page, scores, kept = _kept(ARTICLE.format(head=head))
        assert "About time, the old bridge has been shaking for years when the lorries cross it." not in kept
        assert "river_fan" not in kept and "34 responses to Council rebuilds the bridge" not in kept
        assert "Work starts in March and the road stays open to buses and bicycles during the works." in kept
        decision = explain(page, scores, 0.5, region_share=0.7)
        assert decision.kept == relevant_mask(page, scores, 0.5, 0.7)
        why = {n.content: r for n, r in zip(page.nodes, decision.reasons)}
        assert why["Anne"] == "reader-comments"


def test_commentary_is_not_a_comment_section():
    page = serialize(ARTICLE.format(head=""))
    note = next(n for n in page.nodes if n.content.startswith("This story is part"))
    story = next(n for n in page.nodes if n.content.startswith("The council voted"))
    assert not in_comments(note) and not in_comments(story)
    assert in_comments(next(n for n in page.nodes if n.content == "Anne"))


def test_a_forum_keeps_its_replies():
    # a link aggregator's thread declares an article (og:type): the replies still hold most of its words
    for head in ("", FORUM_POSTING, NEWS_ARTICLE, '<meta property="og:type" content="article">'):
        _page, _scores, kept = _kept(FORUM.format(head=head))
        assert "Some movement is normal for a bridge of that age; the council inspected it last year and found it " \
               "sound." in kept
        assert "engineer_bob" in kept


def test_declared_discussion_keeps_comments_whatever_their_share():
    page = serialize(ARTICLE.format(head=FORUM_POSTING))
    keep = [True] * len(page.nodes)
    comments = [in_comments(n) for n in page.nodes]
    assert any(comments) and comments_are_content(page, page.nodes, keep, comments)
    # the same page undeclared: the story outweighs its comments, so they go
    plain = serialize(ARTICLE.format(head=""))
    assert not comments_are_content(plain, plain.nodes, keep, [in_comments(n) for n in plain.nodes])



def test_a_declared_product_or_collection_keeps_its_comment_classes():
    # a course page quoting its students under "testimonials-comment": customer reviews have their own rule
    for kind in ("product", "product.group"):
        _page, _scores, kept = _kept(ARTICLE.format(head=f'<meta property="og:type" content="{kind}">'))
        assert "About time, the old bridge has been shaking for years when the lorries cross it." in kept


def _comment_nodes(html, comment_score=0.9):
    page = serialize(html)
    scores = np.array([comment_score if in_comments(n) else 0.9 for n in page.nodes], dtype=np.float32)
    decision = explain(page, scores, 0.5, region_share=0.7)
    return [n.content for n, c in zip(page.nodes, reader_comment_nodes(page, decision)) if c]


def test_comments_are_given_apart_whatever_their_score():
    for score in (0.9, 0.1):  # the model learnt to score comments low: they are given apart all the same
        comments = _comment_nodes(ARTICLE.format(head=NEWS_ARTICLE), score)
        assert comments == ["34 responses to Council rebuilds the bridge", "river_fan",
                            "About time, the old bridge has been shaking for years when the lorries cross it.", "Anne",
                            "Who pays for the buses while the works go on, the region or the town itself?"]


def test_no_comments_apart_where_they_are_the_content():
    # a forum's replies are its text; a product's or a declared thread's comment classes are left alone
    assert _comment_nodes(FORUM.format(head="")) == []
    assert _comment_nodes(ARTICLE.format(head=FORUM_POSTING)) == []
    assert _comment_nodes(ARTICLE.format(head='<meta property="og:type" content="product">')) == []
    # nor for an attribute model, nor with the rule left out
    page = serialize(ARTICLE.format(head=""))
    scores = np.full(len(page.nodes), 0.9, dtype=np.float32)
    assert not any(reader_comment_nodes(page, explain(page, scores, 0.5)))
    assert not any(reader_comment_nodes(page, explain(page, scores, 0.5, 0.7, off=("reader-comments",))))


def test_extract_gives_comments_apart_with_the_shipped_model():
    from edrew_scrapy.extract import extract

    [result] = extract(ARTICLE.format(head=NEWS_ARTICLE))
    assert "Who pays for the buses while the works go on, the region or the town itself?" in result.comments_text
    assert "Who pays for the buses" not in result.text and "river_fan" not in result.text
    assert "Work starts in March and the road stays open to buses and bicycles during the works." in result.text
    assert [n.index for n in result.comments] == sorted(n.index for n in result.comments)
    [plain] = extract(ARTICLE.format(head=NEWS_ARTICLE), rules_off=("reader-comments",))
    assert plain.comments == []


def test_cli_extract_writes_the_comments_apart(tmp_path, capsys):
    import json

    from edrew_scrapy.cli import main

    page = tmp_path / "bridge.html"
    page.write_text(ARTICLE.format(head=NEWS_ARTICLE), encoding="utf-8")
    assert main(["extract", str(page), "--no-metadata"]) == 0
    [record] = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert "Who pays for the buses while the works go on" in record["comments"]
    assert "Who pays for the buses" not in record["text"] and "Work starts in March" in record["text"]


# A blog post of some length whose reader thread outgrew it: the thread holds most of the page's words.
POST_PARAGRAPHS = "".join(
    f"<p>On day {day} of the trip we walked from the harbour to the old mill, stopped for bread at the bakery by "
    f"the church, crossed the river on the rebuilt bridge and reached the campsite before the evening rain.</p>"
    for day in range(1, 8))
REPLIES = "".join(
    f'<li class="comment"><div class="comment-body"><p class="comment-author">reader{i}</p><p>Thanks for the '
    f"write-up ({i}), we did the same walk last summer and the bakery by the church was closed on Sundays, so take "
    f"bread the day before; the campsite also fills up early in August, book it ahead.</p></div></li>"
    for i in range(12))
LONG_THREAD = ("<html><head><title>Walk</title>{head}</head><body><div class=\"page\"><article class=\"post\">"
               "<h1>Seven days on foot along the river</h1>" + POST_PARAGRAPHS + "</article>"
               '<div id="comments"><h2>12 responses</h2><ol class="comment-list">' + REPLIES + "</ol></div>"
               "</div></body></html>")


def test_a_long_thread_under_an_article_is_still_comments():
    # the replies outweigh the post, but the post's own text comes first and is long: an article, not a forum
    for head in ("", NEWS_ARTICLE):
        page, scores, kept = _kept(LONG_THREAD.format(head=head))
        assert not any(t.startswith("Thanks for the write-up") for t in kept)
        assert any(t.startswith("On day 3 of the trip") for t in kept)
        assert _comment_nodes(LONG_THREAD.format(head=head))[0] == "reader0"
    # declared a discussion, the thread is the page's content again
    _page, _scores, kept = _kept(LONG_THREAD.format(head=FORUM_POSTING))
    assert any(t.startswith("Thanks for the write-up") for t in kept)


def test_a_link_aggregator_keeps_its_thread():
    # a submitted link and one line of text, then the discussion its markup calls comments: the thread is the page
    html = ('<html><head><title>Link</title></head><body><div class="story"><h1><a href="https://example.org/b">'
            "The bridge report is out</a></h1><p>Submitted by cyclist42, the council's full inspection report.</p>"
            '</div><ol class="comment-list">' + REPLIES + "</ol></body></html>")
    _page, _scores, kept = _kept(html)
    assert sum(t.startswith("Thanks for the write-up") for t in kept) == 12
    assert _comment_nodes(html) == []


def test_a_short_post_under_a_long_thread_is_still_an_article():
    # one paragraph of a post (a workout, a photo's story) under twelve replies: the post says more than a
    # link aggregator's title and line, so the replies are comments, given apart, and the post is the text
    post = ("<p>Today's workout: run ten miles, then one hundred and fifty burpee pull-ups, split as you need. "
            "It honours a soldier who fell this month; his family asked us to share it with the gym, and the "
            "coaches will be there from six in the morning to keep time for everyone.</p>")
    html = ('<html><head><title>Workout</title></head><body><div class="post"><h1>Sunday workout</h1>' + post +
            '</div><div id="comments"><ol class="comment-list">' + REPLIES + "</ol></div></body></html>")
    page, scores, kept = _kept(html)
    assert any(t.startswith("Today's workout: run ten miles") for t in kept)
    assert not any(t.startswith("Thanks for the write-up") for t in kept)
    comments = _comment_nodes(html)
    assert comments[0] == "reader0" and sum(t.startswith("Thanks for the write-up") for t in comments) == 12
    keep = [True] * len(page.nodes)
    assert not comments_are_content(page, page.nodes, keep, [in_comments(n) for n in page.nodes])
