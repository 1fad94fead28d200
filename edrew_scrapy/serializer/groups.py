"""The reTPS token group of an element's attributes (Table 3: <#ID>, classes, <#CLSS>, <#PROP>, keyword
tokens, <#HIDE>), and the per-process caches of the groups and parsed attributes that a site's pages
repeat."""
from __future__ import annotations

from ..tokens import CLSS, HIDE, ID, PROP
from .settings import _NO_KEYWORD_ATTRS, _SHARED_MAX_CHARS, _SHARED_MAX_ENTRIES


class _TokenGroups:
    """Pass 1's token groups, a part of the page's builder (records._Records): reads its `cfg` and
    `keywords`."""

    def group_tail(self, attrs: dict, hidden: bool) -> tuple:
        """The tokens after <tag> in an element's group, reversed: <#HIDE>, keywords, <#PROP>,
        classes, <#CLSS>, <#ID> (the <tag|bucket> token and the content tokens come per node).
        Called for each attribute set a page shows first (~300 a page), hence the plain loops."""
        if not attrs:
            return (HIDE,) if hidden else ()
        cfg = self.cfg
        tokens: list = []
        words = []
        ident = attrs.get("id")
        if ident:
            tokens.append(ID)
            words.append(ident)
        cls = attrs.get("class")
        if cls:
            names = cls.split()
            if names:
                tokens.append(CLSS)
                limit = cfg.max_token_chars
                tokens += [c.lower()[:limit] for c in names[: cfg.max_classes]]
                words.append(cls)
        if len(attrs) > ("id" in attrs) + ("class" in attrs) + ("style" in attrs):
            tokens.append(PROP)
            for k, v in attrs.items():
                if v and k not in _NO_KEYWORD_ATTRS:
                    words.append(v)
        if words and self.keywords:
            hay = " ".join(words).lower()
            for kw, tok in self.keywords:
                if kw in hay:
                    tokens.append(tok)
        if hidden:
            tokens.append(HIDE)
        tokens.reverse()
        return tuple(tokens)


_HIDE_TAIL = (HIDE,)


# Token-group tails and parsed attributes, shared by the pages of a process: a site's pages repeat the
# same attribute texts. Bounded: entries for long attribute texts are not kept, and the caches are
# emptied when they pass _SHARED_MAX_ENTRIES. Plain dict get/set only, so threads can share them.
_SHARED: dict = {}


def _shared_caches(keywords: tuple, max_classes: int, max_token_chars: int) -> tuple:
    key = (keywords, max_classes, max_token_chars)
    got = _SHARED.get(key)
    if got is None or len(got[0]) + len(got[1]) > _SHARED_MAX_ENTRIES or len(got[2]) > _SHARED_MAX_ENTRIES:
        if len(_SHARED) > 8:
            _SHARED.clear()
        got = _SHARED[key] = ({}, {}, {})  # tails of shown elements, of hidden ones, parsed attributes
    return got


def _cacheable(raw) -> bool:
    """Whether an element's attribute key (markup text, or lexbor's (name, value) pairs) is short enough to
    be kept in the per-process caches."""
    if type(raw) is str:
        return len(raw) <= _SHARED_MAX_CHARS
    if len(raw) > 16:
        return False
    chars = 0
    for k, v in raw:  # a plain loop: sum() over a generator cost a quarter of a cache miss
        chars += len(k) + (len(v) if v else 0)
    return chars <= _SHARED_MAX_CHARS
