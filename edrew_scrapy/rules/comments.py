"""Reader comments: the nodes in a reader-comment section, and whether they are the page's content (a forum
thread) or below it (an article's thread)."""
from __future__ import annotations

from typing import Sequence

from ..declared import declared_kinds
from ..page import Page
from ..tokens import SEP
from ..words import count_words
from .nodes import _own_words, _word_share
from .settings import _COMMENT_TOKEN, _NOT_COMMENT, _THREAD_START_WORDS, ARTICLE_WORDS, COMMENT_WORDS


def _comment_token(token: str) -> bool:
    return bool(_COMMENT_TOKEN.search(token)) and not _NOT_COMMENT.search(token)


def in_comments(node) -> bool:
    """The node sits in a reader-comment section: a class or custom tag on its reTPS (the nearest ancestors,
    about 20 tokens) or its own class or id names one (COMMENT_WORDS). Classes are lower-case in the reTPS."""
    return _retps_in_comments(node.retps) or _own_in_comments(_own_words(node))


def _retps_in_comments(retps: str) -> bool:
    """in_comments' test of the reTPS."""
    return (any(w in retps for w in COMMENT_WORDS)
            and any(_comment_token(t.split("|", 1)[0]) for t in retps.split(SEP)))


def _own_in_comments(own: str) -> bool:
    """in_comments' test of the node's own id and class (_own_words)."""
    return any(w in own for w in COMMENT_WORDS) and any(_comment_token(t) for t in own.split())


def comments_are_content(page: Page, nodes: Sequence, keep: Sequence[bool], comments: Sequence[bool]) -> bool:
    """Whether the page's comment-marked nodes are its content: the page declares a forum post or Q&A page
    (declared.py), or they hold at least half of its kept words (a forum thread or a link aggregator whose
    markup calls each post a comment, whatever type it declares: such pages often say "article") and fewer
    than ARTICLE_WORDS kept words come before them (a blog post whose thread outgrew it is still an article)."""
    if declared_kinds(page.declared)[2]:  # discussion
        return True
    return _word_share(nodes, keep, comments) >= 0.5 and _words_before(nodes, keep, comments) < ARTICLE_WORDS


def _words_before(nodes: Sequence, keep: Sequence[bool], comments: Sequence[bool]) -> int:
    """The kept words outside `comments` that come before the thread's first comment (the first kept comment
    node of at least _THREAD_START_WORDS words), in document order."""
    words = 0
    for node, kept, c in zip(nodes, keep, comments):
        if not kept:
            continue
        n = count_words(node.content)
        if not c:
            words += n
        elif n >= _THREAD_START_WORDS:
            break
    return words
