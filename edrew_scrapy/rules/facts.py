"""What the article rules read of one page's nodes, worked out once a page (_Facts): each node's words, the
boxes its near class words name (_BOX_RULES) and whether it is in a comment section."""
from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

from ..words import count_words
from .boxes import _chrome_word, _share_word
from .comments import _own_in_comments, _retps_in_comments
from .nodes import _has_own, _own_words, _retps_classes
from .settings import (
    _AUTHOR_BOX_TOKEN,
    _CAPTION_TOKEN,
    _COMMENT_FORM_TOKEN,
    _CONSENT_TOKEN,
    _CREDIT_TOKEN,
    _HEADINGS,
    _LIKE_TOKEN,
    _PAYWALL_TOKEN,
    _RELATED_TOKEN,
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

# The box rules of ARTICLE_RULES (each also a per-node test: in_related_box, in_page_chrome, ...) and the
# caption class, as _Facts reads them: (the test of one class word, the most words a node may have); page-chrome
# also wants a node that is not a heading, share-headings one that is.
_BOX_RULES = {
    "comment-forms": (_COMMENT_FORM_TOKEN.search, COMMENT_FORM_WORDS), "page-chrome": (_chrome_word, CHROME_WORDS),
    "like-buttons": (_LIKE_TOKEN.search, LIKE_WORDS), "share-headings": (_share_word, CHROME_WORDS),
    "related-boxes": (_RELATED_TOKEN.search, RELATED_WORDS), "signup-boxes": (_SIGNUP_TOKEN.search, SIGNUP_WORDS),
    "credit-lines": (_CREDIT_TOKEN.search, CREDIT_WORDS), "consent-notices": (_CONSENT_TOKEN.search, CONSENT_WORDS),
    "paywall-prompts": (_PAYWALL_TOKEN.search, PAYWALL_WORDS),
    "author-boxes": (_AUTHOR_BOX_TOKEN.search, AUTHOR_BOX_WORDS), "captions": (_CAPTION_TOKEN.search, CAPTION_WORDS),
}


def _boxes_named(word: str) -> frozenset:
    """The _BOX_RULES whose class-word test `word` passes."""
    return frozenset(r for r, (test, _most) in _BOX_RULES.items() if test(word))


class _Facts:
    """What the article rules read of one page's nodes, each worked out once a page rather than once a node and
    rule: a node's words, the boxes (_BOX_RULES) its near class words (_near_classes) name and whether it is in a
    comment section, each class word and each distinct reTPS (siblings share theirs) looked at once.
    in_box and in_comments answer as the per-node tests (in_related_box, in_page_chrome, ..., in_comments) do."""

    __slots__ = ("nodes", "_words", "_boxes", "_comments", "_by_word", "_boxes_of", "_comments_of")

    def __init__(self, nodes: Sequence):
        self.nodes = nodes
        self._words: List[Optional[int]] = [None] * len(nodes)
        self._boxes: List[Optional[frozenset]] = [None] * len(nodes)
        self._comments: List[Optional[bool]] = [None] * len(nodes)
        self._by_word: Dict[str, frozenset] = {}
        # [0] of a reTPS, [1] of a node's own id and class (_own_words): its boxes; whether in_comments' test of
        # it passes
        self._boxes_of: Tuple[Dict[str, frozenset], Dict[str, frozenset]] = ({}, {})
        self._comments_of: Tuple[Dict[str, bool], Dict[str, bool]] = ({}, {})

    def _named(self, own: bool, text: str) -> frozenset:
        boxes = self._boxes_of[own].get(text)
        if boxes is None:
            boxes = frozenset()
            for w in (text.split() if own else _retps_classes(text)):
                of_word = self._by_word.get(w)
                if of_word is None:
                    of_word = self._by_word[w] = _boxes_named(w)
                boxes |= of_word
            self._boxes_of[own][text] = boxes
        return boxes

    def _commented(self, own: bool, text: str) -> bool:
        comments = self._comments_of[own].get(text)
        if comments is None:
            comments = self._comments_of[own][text] = (_own_in_comments if own else _retps_in_comments)(text)
        return comments

    def words(self, i: int) -> int:
        """count_words of node i's text."""
        n = self._words[i]
        if n is None:
            n = self._words[i] = count_words(self.nodes[i].content)
        return n

    def boxes(self, i: int) -> frozenset:
        """The _BOX_RULES whose class words node i's near classes hold, whatever its words and tag."""
        boxes = self._boxes[i]
        if boxes is None:
            node = self.nodes[i]
            boxes = self._named(False, node.retps)
            if _has_own(node):
                boxes = boxes | self._named(True, _own_words(node))
            self._boxes[i] = boxes
        return boxes

    def in_box(self, reason: str, i: int) -> bool:
        """Node i is a short text in the box `reason` (a key of _BOX_RULES) names."""
        if reason not in self.boxes(i):
            return False
        tag = self.nodes[i].tag
        if reason == "page-chrome" and tag in _HEADINGS:
            return False
        if reason == "share-headings" and tag not in _HEADINGS:
            return False
        return self.words(i) <= _BOX_RULES[reason][1]

    def in_comments(self, i: int) -> bool:
        """in_comments(node i)."""
        comments = self._comments[i]
        if comments is None:
            node = self.nodes[i]
            comments = self._commented(False, node.retps) or (_has_own(node)
                                                               and self._commented(True, _own_words(node)))
            self._comments[i] = comments
        return comments
