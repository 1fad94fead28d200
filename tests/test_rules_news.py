"""rules: photo credits and copyright lines (in_credit_line), consent notices and embed placeholders
(in_consent_notice), a paywall's pitch (in_paywall_prompt), author boxes (in_author_box) and photo captions
(in_caption, with the photo-story guard) leave an article's text, each with its `--rules-off` switch. Pages written
for these tests."""
from __future__ import annotations

import numpy as np

from edrew_scrapy.rules import (
    OPTIONAL_RULES,
    REASONS,
    explain,
    in_author_box,
    in_caption,
    in_consent_notice,
    in_credit_line,
    in_paywall_prompt,
    relevant_mask,
)
from edrew_scrapy.serializer import serialize

BODY = "".join(f"<p>{s}</p>" for s in (
    "The harbour board agreed on Monday to dredge the eastern basin before the summer season begins in June.",
    "Fishing boats had run aground twice this winter, and the ferry company warned it would cancel crossings.",
    "The dredging costs four million and the board will borrow half of it from the regional development bank.",
    "Sand from the basin goes to the beach north of the town, which lost much of its width in the storms.",
    "Work is done at night so that the ferries keep their timetable, the harbour master told the council.",
    "Residents of the quay asked for a noise limit, and the board promised to stop the pumps at midnight.",
    "A second phase, deepening the channel for larger cargo ships, will be decided after an environmental study.",
))

PAGE = """<html><head><title>Harbour to be dredged | Coast Times</title></head><body><main><article>
<h1>Harbour to be dredged</h1>
<div class="article-body">{body}{extra}</div></article></main></body></html>"""


def _page(extra: str = "", body: str = BODY):
    return serialize(PAGE.format(body=body, extra=extra))


def _kept(page, off=()):
    scores = np.full(len(page.nodes), 0.9, dtype=np.float32)
    return [n.content for n, k in zip(page.nodes, relevant_mask(page, scores, 0.5, region_share=0.7, off=off)) if k]


def _reasons(page):
    scores = np.full(len(page.nodes), 0.9, dtype=np.float32)
    decision = explain(page, scores, 0.5, region_share=0.7)
    assert decision.kept == relevant_mask(page, scores, 0.5, region_share=0.7)
    return {n.content: r for n, r in zip(page.nodes, decision.reasons)}


def _node(page, text):
    return next(n for n in page.nodes if n.content.startswith(text))


def test_new_rules_are_optional_and_explained():
    for rule in ("credit-lines", "consent-notices", "paywall-prompts", "author-boxes", "captions"):
        assert rule in OPTIONAL_RULES and rule in REASONS


def test_a_photo_credit_and_a_copyright_line_leave_the_text():
    extra = ('<figure><img src="/dredger.jpg"><span class="image-credit">Foto: dpa / Jan Berg</span></figure>'
             '<div class="copyright">© Coast Times Media GmbH 2026</div>'
             '<p class="credits-note">' + " ".join(["The dredger was built in the town's own yard in 1978."] * 3)
             + '</p>')
    page = _page(extra)
    kept = _kept(page)
    assert "Foto: dpa / Jan Berg" not in kept and "© Coast Times Media GmbH 2026" not in kept
    assert "Foto: dpa / Jan Berg" in _kept(page, off=("credit-lines",))
    # longer than CREDIT_WORDS: left to the model
    assert _node(page, "The dredger was built").content in kept
    assert _reasons(page)["Foto: dpa / Jan Berg"] == "credit-lines"
    # "source" alone (a code sample's class) is not a credit; a picture's source is
    code = serialize('<div class="source"><p>x = 1</p></div><div class="picture-source"><p>Bild: AP</p></div>')
    assert not in_credit_line(_node(code, "x = 1")) and in_credit_line(_node(code, "Bild: AP"))


def test_a_consent_placeholder_leaves_the_text():
    notice = ("To show embedded content we need your revocable consent to transmit and process personal data, "
              "since the provider of the embedded content needs it as a third party.")
    extra = f'<div class="c-oembed-placeholder"><p class="c-oembed-placeholder__description">{notice}</p></div>'
    page = _page(extra)
    assert notice not in _kept(page) and notice in _kept(page, off=("consent-notices",))
    assert _reasons(page)[notice] == "consent-notices"
    recipe = serialize('<div class="cookie-recipe"><p>Mix the butter and sugar.</p></div>')
    assert not in_consent_notice(_node(recipe, "Mix the butter"))  # a cookie is not a cookie notice


def test_a_paywall_pitch_leaves_the_text_and_the_walled_body_stays():
    pitch = ('<div class="ia-paywall__checkout"><h2 class="ia-paywall__title">Read on now!</h2>'
             '<p class="ia-paywall__description">For 0.99 € you can buy this article.</p>'
             '<a class="ia-paywall__login__button" href="/login">Log in</a></div>')
    # sites put "paywall" on the body that the wall covers: those paragraphs stay
    page = _page(body=f'<div class="paywall">{BODY}{pitch}</div>')
    kept = _kept(page)
    for text in ("Read on now!", "For 0.99 € you can buy this article.", "Log in"):
        assert text not in kept and text in _kept(page, off=("paywall-prompts",))
    assert _node(page, "The harbour board agreed").content in kept
    assert not in_paywall_prompt(_node(page, "The harbour board agreed"))
    assert _reasons(page)["Read on now!"] == "paywall-prompts"


def test_an_author_box_leaves_the_text():
    bio = "Maria Olsen writes about the coast, its ports and its weather for the Coast Times since 2015."
    extra = f'<div class="saboxplugin-wrap"><div class="saboxplugin-desc"><p>{bio}</p></div></div>'
    page = _page(extra)
    assert bio not in _kept(page) and bio in _kept(page, off=("author-boxes",))
    assert in_author_box(_node(page, "Maria Olsen")) and not in_author_box(_node(page, "The harbour board"))
    assert _reasons(page)[bio] == "author-boxes"


def test_captions_leave_an_article_but_a_photo_story_keeps_them():
    extra = ('<figure><img src="/basin.jpg"><figcaption>The eastern basin at low tide.</figcaption></figure>'
             '<div class="wp-caption"><img src="/ferry.jpg">'
             '<p class="wp-caption-text">The ferry at the quay.</p></div>')
    page = _page(extra)
    kept = _kept(page)
    assert "The eastern basin at low tide." not in kept and "The ferry at the quay." not in kept
    assert "The eastern basin at low tide." in _kept(page, off=("captions",))
    assert in_caption(_node(page, "The ferry at the quay.")) and not in_caption(_node(page, "The harbour board"))
    assert _reasons(page)["The eastern basin at low tide."] == "captions"
    # a gallery whose captions hold half of the kept words is its captions: they stay
    story = "".join(f'<figure><img src="/{i}.jpg"><figcaption>Photo {i}: boats leave the basin at dawn before the '
                    f'dredger arrives, seen from the northern pier.</figcaption></figure>' for i in range(8))
    gallery = _page(story, body="<p>The harbour in pictures, on the last morning before the works.</p>")
    assert sum("boats leave the basin" in t for t in _kept(gallery)) == 8
