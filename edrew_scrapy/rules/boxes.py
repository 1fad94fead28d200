"""The boxes around an article that are not its text, each a test of one node: share, print and gallery
chrome and share bars' headings, related posts, comment reply forms, like buttons, sign-up boxes, credit
lines, consent notices, paywall pitches, author boxes and captions; a short text under a class word of the
box (settings) on the node or its two nearest elements."""
from __future__ import annotations

import re

from ..words import count_words
from .nodes import _near_classes
from .settings import (
    _AUTHOR_BOX_TOKEN,
    _CAPTION_TOKEN,
    _CHROME_TOKEN,
    _COMMENT_FORM_TOKEN,
    _CONSENT_TOKEN,
    _CREDIT_TOKEN,
    _HEADINGS,
    _LIKE_TOKEN,
    _NOT_CHROME,
    _PAYWALL_TOKEN,
    _RELATED_TOKEN,
    _SHARE_TOKEN,
    _SIGNUP_TOKEN,
    AUTHOR_BOX_WORDS,
    CAPTION_WORDS,
    CHROME_WORDS,
    COMMENT_FORM_WORDS,
    CONSENT_WORDS,
    CREDIT_WORDS,
    LIKE_WORDS,
    PAYWALL_WORDS,
    RELATED_WORDS,
    SIGNUP_WORDS,
)


def in_page_chrome(node) -> bool:
    """The node is a short text (at most CHROME_WORDS words, not a heading) in share, print or photo-gallery
    markup (_CHROME_TOKEN on a class of its own or of its two nearest ancestors)."""
    if node.tag in _HEADINGS or count_words(node.content) > CHROME_WORDS:
        return False
    return any(_chrome_word(t) for t in _near_classes(node))


def _chrome_word(word: str) -> bool:
    """A class word of share, print or gallery chrome (not a share price)."""
    return bool(_CHROME_TOKEN.search(word)) and not _NOT_CHROME.search(word)


def in_related_box(node) -> bool:
    """The node is a short text (at most RELATED_WORDS words) in a box of related, recommended or recent posts
    (_RELATED_TOKEN on a class of its own or of its two nearest ancestors): the box's heading ("Ähnliche
    Beiträge", "Related Coverage") and its teasers' titles."""
    return _short_in_box(node, _RELATED_TOKEN, RELATED_WORDS)


def _short_in_box(node, token: "re.Pattern", most_words: int) -> bool:
    """The node has at most `most_words` words and `token` matches a class of its own or of its two nearest
    ancestors."""
    if count_words(node.content) > most_words:
        return False
    return any(token.search(t) for t in _near_classes(node))


def in_comment_form(node) -> bool:
    """The node is a text of at most COMMENT_FORM_WORDS words in a comment reply form (_COMMENT_FORM_TOKEN on a
    class of its own or of its two nearest ancestors)."""
    return _short_in_box(node, _COMMENT_FORM_TOKEN, COMMENT_FORM_WORDS)


def in_like_button(node) -> bool:
    """The node is a text of at most LIKE_WORDS words in a like button or likes counter (_LIKE_TOKEN on a class of
    its own or of its two nearest ancestors)."""
    return _short_in_box(node, _LIKE_TOKEN, LIKE_WORDS)


def in_signup_box(node) -> bool:
    """The node is a text of at most SIGNUP_WORDS words in a newsletter or subscription sign-up box (_SIGNUP_TOKEN
    on a class of its own or of its two nearest ancestors)."""
    return _short_in_box(node, _SIGNUP_TOKEN, SIGNUP_WORDS)


def in_credit_line(node) -> bool:
    """The node is a text of at most CREDIT_WORDS words in a photo credit or copyright line (_CREDIT_TOKEN on a
    class of its own or of its two nearest ancestors): "Foto: dpa", "© Frankfurter Allgemeine Zeitung GmbH"."""
    return _short_in_box(node, _CREDIT_TOKEN, CREDIT_WORDS)


def in_consent_notice(node) -> bool:
    """The node is a text of at most CONSENT_WORDS words in a consent notice or an embed's consent placeholder
    (_CONSENT_TOKEN on a class of its own or of its two nearest ancestors)."""
    return _short_in_box(node, _CONSENT_TOKEN, CONSENT_WORDS)


def in_paywall_prompt(node) -> bool:
    """The node is a text of at most PAYWALL_WORDS words in a paywall's or registration wall's own parts
    (_PAYWALL_TOKEN on a class of its own or of its two nearest ancestors)."""
    return _short_in_box(node, _PAYWALL_TOKEN, PAYWALL_WORDS)


def in_author_box(node) -> bool:
    """The node is a text of at most AUTHOR_BOX_WORDS words in an author box (_AUTHOR_BOX_TOKEN on a class of its
    own or of its two nearest ancestors)."""
    return _short_in_box(node, _AUTHOR_BOX_TOKEN, AUTHOR_BOX_WORDS)


def in_caption(node) -> bool:
    """The node is a <figcaption>'s text, or a text of at most CAPTION_WORDS words under a caption class
    (_CAPTION_TOKEN on a class of its own or of its two nearest ancestors)."""
    return node.tag == "figcaption" or _short_in_box(node, _CAPTION_TOKEN, CAPTION_WORDS)


def is_share_heading(node) -> bool:
    """The node is a heading of at most CHROME_WORDS words in share markup (_SHARE_TOKEN on a class of its own
    or of its two nearest ancestors): a share bar's title, never an article's section heading."""
    if node.tag not in _HEADINGS or count_words(node.content) > CHROME_WORDS:
        return False
    return any(_share_word(t) for t in _near_classes(node))


def _share_word(word: str) -> bool:
    """A class word of share markup (not a share price)."""
    return bool(_SHARE_TOKEN.search(word)) and not _NOT_CHROME.search(word)
