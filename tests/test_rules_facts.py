"""rules: the article rules read each page's box facts once (rules.facts._Facts) and decide exactly as the
per-node tests (in_related_box, in_page_chrome, in_caption, in_comments, ...) applied node by node, rule by rule,
do: on the fixture pages and on a page written for this test with every kind of box, own classes, headings and texts at
each rule's word limit."""
from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

from edrew_scrapy import rules
from edrew_scrapy.declared import declared_kinds
from edrew_scrapy.serializer import serialize

FIXTURES = Path(__file__).parent / "fixtures"


def _words(n: int) -> str:
    return " ".join(f"w{i}" for i in range(n))


def _box_page() -> str:
    """Each box class on a wrapper, on a parent and on the node itself, with texts at, under and over its limit."""
    parts = []
    classes = {"comment-respond": 30, "share-bar": 4, "likes-text": 6, "jp-relatedposts": 12, "newsletter-box": 30,
               "image-credit": 20, "cookie-notice": 120, "paywall-checkout": 40, "author-bio": 80,
               "wp-caption-text": 60, "sharedaddy": 4, "share-price": 4, "commentary": 10}
    for cls, most in classes.items():
        for n in (1, most, most + 1):
            parts.append(f'<div class="{cls}"><p>{_words(n)}</p><h3>{_words(n)}</h3></div>')
            parts.append(f'<div class="{cls}"><div class="a"><div class="b"><p>{_words(n)}</p></div></div></div>')
            parts.append(f'<p class="{cls} x">{_words(n)}</p><p id="{cls}">{_words(n)}</p>')
    parts.append(f"<figure><img src='a.jpg'><figcaption>{_words(70)}</figcaption></figure>")
    parts.append('<div class="image-caption"><p>河畔市议会周二投票重建旧桥河畔市议会周二投票重建旧桥</p></div>')
    parts.append('<ol class="comment-list"><li class="comment"><p>' + _words(40) + "</p></li></ol>")
    parts.append('<div id="comments"><p>' + _words(8) + '</p></div><div id="respond"><p>Leave a reply</p></div>')
    return ("<html><head><title>Boxes</title></head><body><main><article><h1>Boxes</h1>"
            + "".join(f"<p>{_words(30)} body {i}.</p>" for i in range(12)) + "".join(parts)
            + "</article></main></body></html>")


def _pages():
    pages = [serialize(_box_page())]
    for path in sorted((FIXTURES / "gate").glob("*.html"))[:12]:
        pages.append(serialize(path.read_bytes()))
    for path in sorted((FIXTURES / "data").glob("*/*.html*")) + sorted((FIXTURES / "data").glob("*/html/*.html*")):
        raw = path.read_bytes()
        pages.append(serialize(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw))
    return [p for p in pages if p.nodes]


PAGES = _pages()
# Each box rule of ARTICLE_RULES as its per-node test: what rules.facts._Facts must answer as.
ARTICLE_TESTS = {"comment-forms": rules.in_comment_form, "like-buttons": rules.in_like_button,
                 "page-chrome": rules.in_page_chrome, "share-headings": rules.is_share_heading,
                 "related-boxes": rules.in_related_box, "signup-boxes": rules.in_signup_box,
                 "credit-lines": rules.in_credit_line, "consent-notices": rules.in_consent_notice,
                 "paywall-prompts": rules.in_paywall_prompt, "author-boxes": rules.in_author_box}


def test_facts_answer_as_the_per_node_tests():
    assert len(PAGES) >= 10
    seen = set()
    for page in PAGES:
        facts = rules.facts._Facts(page.nodes)
        for i, node in enumerate(page.nodes):
            for reason, test in ARTICLE_TESTS.items():
                got = facts.in_box(reason, i)
                assert got == test(node), (reason, node.content[:60], node.retps[:80])
                if got:
                    seen.add(reason)
            caption, comment = rules.in_caption(node), rules.in_comments(node)
            assert (node.tag == "figcaption" or facts.in_box("captions", i)) == caption
            assert facts.in_comments(i) == comment, (node.content[:60], node.retps[:80])
            seen.update(name for name, yes in (("captions", caption), ("comments", comment)) if yes)
    # every box kind was found somewhere, so the comparison covers each rule's yes as well as its no
    assert seen >= set(ARTICLE_TESTS) | {"captions", "comments"}, set(ARTICLE_TESTS) - seen


def _article_rules_node_by_node(page, keep, off):
    """The article rules as the per-node tests say them: each test asked of every kept node, rule by rule."""
    keep = list(keep)
    product, _article, _discussion, collection = declared_kinds(page.declared)
    for reason in rules.ARTICLE_RULES:
        if reason in off:
            continue
        if reason == "reader-comments":
            drop = [k and rules.in_comments(n) for n, k in zip(page.nodes, keep)]
            if product or collection or not any(drop) or rules.comments_are_content(page, page.nodes, keep, drop):
                drop = None
        elif reason == "captions":
            drop = [k and rules.in_caption(n) for n, k in zip(page.nodes, keep)]
            if not any(drop) or rules.nodes._word_share(page.nodes, keep, drop) >= 0.5:
                drop = None
        elif reason == "byline-lines":
            drop = [k and b for k, b in zip(keep, rules.byline_line_nodes(page))]
        else:
            drop = [k and ARTICLE_TESTS[reason](n) for n, k in zip(page.nodes, keep)]
        if drop is not None and any(drop):
            keep = [k and not d for k, d in zip(keep, drop)]
            yield reason, drop


@pytest.mark.parametrize("off", [(), *[(r,) for r in rules.ARTICLE_RULES]])
def test_article_rules_drop_what_the_per_node_tests_drop(off):
    rng = np.random.default_rng(7)
    dropped = 0
    for page in PAGES:
        for share in (1.0, 0.7, 0.3):
            keep = list(rng.random(len(page.nodes)) < share)
            want = list(_article_rules_node_by_node(page, keep, off))
            assert list(rules.articles._article_rules(page, keep, off)) == want
            dropped += len(want)
    assert dropped > 0
