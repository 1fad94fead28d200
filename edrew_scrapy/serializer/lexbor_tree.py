"""Pass 1 on lexbor's HTML5 tree (the tree a browser builds): the element records in document order, with an
explicit stack; and the cheap, linear check that sends a page nested too deep for lexbor's linear time to
our own tokenizer instead (too_deep_for_lexbor)."""
from __future__ import annotations

import re
from collections import Counter
from itertools import accumulate
from operator import sub
from typing import Optional

from selectolax.lexbor import LexborHTMLParser

from ..page import Page
from .images import _resolve
from .landmarks import _CTX_ATTRS, _CTX_TAGS, _ROOT_CTX, _attrs_ctx, _is_nav_element, _tag_ctx
from .nodes import _NodeBuilder
from .records import _Records, _TooLarge
from .settings import _CHECK_CHUNK, _FLAT_TAGS, _IMG_SRC_ATTRS, _LEXBOR_ANY_SHAPE_TAGS, _LEXBOR_MAX_DEPTH
from .text import _not_blank, _text_in, _visible_text


class _LexborPass(_Records):
    """Pass 1 on lexbor's HTML5 tree (build_tree)."""

    def build_tree(self, text: str) -> Page:
        """Pass 1 from the tree lexbor builds, the tree a browser builds: the same element records as
        build(), read in document order. Entities come decoded, implied end tags are lexbor's.
        One loop with _append inlined: it runs for every node of the page."""
        self.decoded = True
        cfg = self.cfg
        names, parents, attrs_of, segs_of = self.names, self.parents, self.attrs, self.segs
        positions, depths, ctxs, has_text, ks = self.positions, self.depths, self.ctxs, self.has_text, self.ks
        special = self.special_tags
        skip_with_content, skip_tags = cfg.skip_with_content, cfg.skip_tags
        wrapper_tags, repeating = cfg.wrapper_tags, cfg.repeating_tags
        max_elements = cfg.max_elements
        count_tags = 0
        text_left = self._text_left
        self.tree = LexborHTMLParser(_close_self_closed_raw_text(text))
        node = self.tree.root
        # the record the next nodes belong to, and what its children read of it (`counts`: its children
        # so far by name, for their XPath index)
        parent, segs, ctx, depth, counts = 0, segs_of[0], _ROOT_CTX, 0, {}
        todo: list = []  # for each node being descended into: its next sibling and the state above
        overflow = False
        while node is not None:
            tag = node.tag
            child = None
            if tag == "-text":
                value = node.text_content
                text_left -= len(value)
                if text_left < 0:
                    raise _TooLarge("too-much-text")
                segs.append(value)
                # a no-break space counts as text: our tokenizer saw `&nbsp;` undecoded, and it joins
                # inline siblings into one sentence ("Advertiser:&nbsp;<span>name</span>")
                if not has_text[parent] and (not value.isspace() or "\xa0" in value):
                    has_text[parent] = True
            elif not tag or tag[0] == "-" or tag[0] == "!":  # comments, processing instructions
                pass
            elif overflow:
                if tag not in skip_with_content:
                    segs.append(" ")
                    child = node.first_child
            elif tag not in special:  # an element that is a record (special names are all below)
                child = node.first_child
                attrs = node.attributes
                if tag in wrapper_tags and (child is None or not (
                        # the CONTENT group: text (not only white space) first inside the element
                        _not_blank(child.text_content) if child.tag == "-text" else _starts_with_text(child))):
                    wrapper = True
                else:
                    wrapper = False
                    if tag not in repeating:
                        count_tags += 1
                c = ctx
                if tag in _CTX_TAGS or ("-" in tag and _is_nav_element(tag)):
                    c = _tag_ctx(tag, c)
                if attrs and not _CTX_ATTRS.isdisjoint(attrs):
                    c = _attrs_ctx(attrs, c)
                idx = len(names)
                names.append(tag)
                parents.append(parent)
                attrs_of.append(attrs)  # bare attributes (`<p hidden>`) have None: read as "" later
                # a childless element shares one empty tuple: nothing is ever added to its segments
                own = [] if child is not None else ()
                segs_of.append(own)
                positions.append(count_tags)
                depths.append(depth + 1)
                ctxs.append(c)
                has_text.append(False)
                k = counts[tag] = counts.get(tag, 0) + 1
                ks.append(k)
                if wrapper:
                    self.wrappers.add(idx)
                segs.append(idx)
                if idx >= max_elements:
                    self.count_tags = count_tags
                    rest = self._overflow_record(1)  # under the first element (<html>)
                    # everything from here on is the #overflow record's text, at every level
                    overflow = True
                    todo = [(nxt, rest, segs_of[rest], _ROOT_CTX, 0, {}) for nxt, *_ in todo]
                    parent, segs = rest, segs_of[rest]
                elif child is not None:
                    todo.append((node.next, parent, segs, ctx, depth, counts))
                    node, parent, segs, ctx, depth, counts = child, idx, own, c, depth + 1, {}
                    continue
            elif tag in skip_with_content:
                pass
            elif tag == "title":
                if not self.title:
                    title = node.text(deep=True)
                    text_left -= len(title)
                    if text_left < 0:
                        raise _TooLarge("too-much-text")
                    self.title = _visible_text(title)
                count_tags += 1
            elif tag in skip_tags:  # transparent (noscript), or void (link, meta, base, input, area)
                if tag == "base":
                    self._base_href(node.attributes.get("href"))
                child = node.first_child
            elif tag == "br":  # a void element: no level, no tag for countTags; it separates words
                segs.append(" ")
            elif tag != "wbr":  # the other void elements
                count_tags += 1
                if tag == "img":
                    attrs = node.attributes
                    src = next((attrs[a] for a in _IMG_SRC_ATTRS if attrs.get(a)), None)
                    if src:
                        self._add_image(src.strip(), parent)
            if child is not None:  # into a node that opens no record (noscript, or past max_elements)
                todo.append((node.next, parent, segs, ctx, depth, counts))
                node = child
            else:
                node = node.next
            while node is None and todo:
                node, parent, segs, ctx, depth, counts = todo.pop()
        self.count_tags = count_tags
        if overflow:
            has_text[self.overflow] = _text_in(segs_of[self.overflow])
        return _NodeBuilder(self).run()

    def _base_href(self, href: Optional[str]) -> None:
        """_base for lexbor's tree (the href comes decoded)."""
        if href and not self._base_seen:
            self._base_seen = True
            href = href.strip()
            base = _resolve(self.url, href) if self.url else href
            if base is not None:
                self.base = base


def _starts_with_text(child) -> bool:
    """The thesis's CONTENT group: text (not only white space) comes first inside the element."""
    while child is not None:
        tag = child.tag
        if tag == "-text":
            return _not_blank(child.text_content)
        if tag != "-comment":
            return False
        child = child.next
    return False


_TAG_NAME = re.compile(r"<(/?[A-Za-z][^\s/>]*+)")


def _depth_step(name: str) -> int:
    if name[0] == "/":
        return 0 if name[1:].lower() in _FLAT_TAGS else -1
    return 0 if name.lower() in _FLAT_TAGS else 1


# `<iframe .../>`: HTML5 ignores the slash, and an iframe's content is raw text up to `</iframe>`, so
# one such tag swallows the rest of the page. Pages write it inside <noscript> (the Google Tag Manager
# snippet, as JSX renders it), which a browser with scripts never parses and which we read as markup
# (docs/method-choices.md): closed there, as its authors meant and as our tokenizer reads it.
_SELF_CLOSED_RAW_TEXT = re.compile(r"<(iframe|noembed|noframes|xmp)(?=[\s/])((?:[^<>/]++|/(?!>))*+)/>", re.I)


def _close_self_closed_raw_text(text: str) -> str:
    return _SELF_CLOSED_RAW_TEXT.sub(r"<\1\2></\1>", text)


def too_deep_for_lexbor(text: str) -> bool:
    """A cheap, linear check (a regex and C-level iteration) that the page could nest past
    _LEXBOR_MAX_DEPTH: start tags open a level, end tags close one, never below the top; end tags of a
    name that has fewer start tags (which lexbor ignores) count as not closing anything. Read in chunks,
    so that a hostile page stops the check at its first deep megabyte."""
    if text.count("<") <= _LEXBOR_ANY_SHAPE_TAGS:
        return False
    steps: dict = {}
    counts: Counter = Counter()
    level = low = depth = 0
    pos, n = 0, len(text)
    while pos < n:
        end = text.find("<", pos + _CHECK_CHUNK)  # chunks end before a tag, never inside one
        end = n if end < 0 else end
        names = _TAG_NAME.findall(text, pos, end)
        pos = end
        if not names:
            continue
        for name in set(names).difference(steps):
            steps[name] = _depth_step(name)
        levels = list(accumulate(map(steps.__getitem__, names), initial=level))
        lows = list(accumulate(levels, min, initial=low))[1:]
        depth = max(depth, max(map(sub, levels, lows)))  # the walk clamped at its lowest point so far
        if depth > _LEXBOR_MAX_DEPTH:
            return True
        level, low = levels[-1], lows[-1]
        counts.update(names)
    by_name: Counter = Counter()
    for name, k in counts.items():
        by_name[name.lower()] += k
    stray = sum(max(0, k - by_name.get(name[1:], 0)) for name, k in by_name.items() if name[0] == "/")
    return depth + stray > _LEXBOR_MAX_DEPTH
