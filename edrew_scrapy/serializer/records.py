"""Pass 1's state, whichever reads the page (lexbor_tree or tokenizer_tree): the thesis's countTags and
the element records of one page, each an index into parallel lists (name, parent, attributes, text
segments and children, position, depth, inherited context), the page's images and title."""
from __future__ import annotations

import sys
from typing import List, Optional

from selectolax.lexbor import LexborHTMLParser

from ..tokens import VOID_TAGS, SerializerConfig
from .groups import _TokenGroups
from .images import _IMAGE_URLS, _image_schemes, _plain_image_url, _resolve, _web_image
from .landmarks import _ROOT_CTX, _Ctx
from .settings import _SHARED_MAX_CHARS, _SHARED_MAX_ENTRIES


class _TooLarge(Exception):
    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class _Records(_TokenGroups):
    """Pass 1: keeps the thesis's state (countTags, current node, level) and the element records of one
    page. A record is an index into parallel lists, not an object: a page has thousands of elements, and
    an object each (its fields, its construction, its freeing) was most of pass 1's time."""

    def __init__(self, config: SerializerConfig, url: Optional[str]):
        self.cfg = config
        self.url = url
        self.base = url
        self.image_schemes = _image_schemes(url)
        # the records; 0 is the document
        self.names: List[str] = ["#document"]
        self.parents: List[int] = [-1]
        self.attrs: list = [""]         # lexbor's dict, or our tokenizer's attribute text (parsed on demand)
        self.segs: List[list] = [[]]    # text (str) and child record indexes (int), in document order
        self.positions: List[int] = [0]  # countTags when it was opened
        self.depths: List[int] = [0]
        self.ctxs: List[_Ctx] = [_ROOT_CTX]
        self.has_text: List[bool] = [False]  # a text segment that is not all whitespace
        self.ks: List[int] = [0]  # index among the same-name children of its parent, from 1 (XPath)
        self._child_counts: dict = {}  # parent -> {name: children so far}, for _append
        self.wrappers: set = set()       # wrapper tags with no content of their own (#WT)
        self.images_of: dict = {}        # record -> the image URLs of its own <img> children
        self.img_below: set = set()      # records with an <img> here or in a descendant
        self.overflow = -1               # the #overflow record, past max_elements
        self.count_tags = 0
        self.title = ""
        self.tree: Optional[LexborHTMLParser] = None  # lexbor's tree, where build_tree read one
        self.images: list = []
        self.special_tags = _special_tags(config)
        self.keywords = tuple(config.keyword_tokens.items())
        self._base_seen = False
        self.truncated = False
        self.decoded = False  # text and attribute values arrive with their entities decoded
        self._text_left = config.max_text_chars or sys.maxsize  # characters of text still allowed

    def _count_text(self, value: str) -> None:
        self._text_left -= len(value)
        if self._text_left < 0:
            raise _TooLarge("too-much-text")

    def _append(self, name: str, parent: int, attrs, ctx: _Ctx, wrapper: bool) -> int:
        """Record an element under `parent` (countTags already advanced for it); its index."""
        idx = len(self.names)
        self.names.append(name)
        self.parents.append(parent)
        self.attrs.append(attrs)
        self.segs.append([])
        self.positions.append(self.count_tags)
        self.depths.append(self.depths[parent] + 1)
        self.ctxs.append(ctx)
        self.has_text.append(False)
        counts = self._child_counts.get(parent)
        if counts is None:
            counts = self._child_counts[parent] = {}
        k = counts[name] = counts.get(name, 0) + 1
        self.ks.append(k)
        if wrapper:
            self.wrappers.add(idx)
        self.segs[parent].append(idx)
        return idx

    def _overflow_record(self, parent: int) -> int:
        """Past max_elements the page is hostile or broken: its remaining text (no markup, no scripts)
        goes into one element under `parent`, whose tokens are `#overflow|bucket` alone."""
        self.truncated = True
        self.overflow = idx = self._append("#overflow", parent, "", _ROOT_CTX, False)
        return idx

    def _add_image(self, src: str, parent: int) -> None:
        """An <img> of the record `parent`, its URL as written (entities decoded)."""
        key = (self.base, src, self.image_schemes)
        url = _IMAGE_URLS.get(key)
        if url is None:
            # a plain URL's result is http(s), which every page allows
            url = _plain_image_url(self.base, src) if self.base else None
            if url is None:
                url = (_resolve(self.base, src) or src) if self.base else src  # unresolvable: as written
                if not _web_image(url, self.image_schemes):
                    url = ""
            if len(src) <= _SHARED_MAX_CHARS:
                if len(_IMAGE_URLS) >= _SHARED_MAX_ENTRIES:
                    _IMAGE_URLS.clear()
                _IMAGE_URLS[key] = url
        if not url:
            return
        src = url
        self.images.append(src)
        self.images_of.setdefault(parent, []).append(src)
        # flag the ancestors, so that pass 2 looks for images only where there are some
        img_below, parents = self.img_below, self.parents
        k = parent
        while k > 0 and k not in img_below:
            img_below.add(k)
            k = parents[k]


_SPECIAL_TAGS: dict = {}


def _special_tags(cfg: SerializerConfig) -> frozenset:
    """The start tags pass 1 treats apart from the rest (no record of their own, or a void one), shared
    by the pages of one tag configuration."""
    key = (cfg.skip_with_content, cfg.skip_tags)
    got = _SPECIAL_TAGS.get(key)
    if got is None:
        if len(_SPECIAL_TAGS) > 16:
            _SPECIAL_TAGS.clear()
        got = _SPECIAL_TAGS[key] = cfg.skip_with_content | cfg.skip_tags | VOID_TAGS | {"base", "title"}
    return got
