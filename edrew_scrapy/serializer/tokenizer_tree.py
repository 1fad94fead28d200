"""Pass 1 with our own tokenizer (tokenizer.tokenize): element records from tokens, with an explicit stack
and HTML's implied end tags simplified (an open <p> closes before a <div>, <li> before the next <li>, ...).
The fallback for pages nested deeper than lexbor parses in linear time (lexbor_tree.too_deep_for_lexbor),
and for pages lexbor reads as empty."""
from __future__ import annotations

import html as _html

from ..page import Page
from ..tokenizer import END, START, TEXT, parse_attributes, tokenize
from ..tokens import VOID_TAGS
from .images import _resolve
from .landmarks import _CTX_TAGS, _is_nav_element, _raw_attrs_ctx, _tag_ctx
from .nodes import _NodeBuilder
from .records import _Records
from .settings import _CLOSES_P, _HEAD_CONTENT, _HEADINGS, _IMG_SRC_ATTRS, _IMPLIED, _IMPLIES, _P_SCOPE, _SCOPE_LOOKBACK
from .text import _text_in, _visible_text


class _TokenizerPass(_Records):
    """Pass 1 on our tokenizer's events: tokens -> element records (build)."""

    def build(self, text: str) -> Page:
        cfg = self.cfg
        names, segs_of, has_text = self.names, self.segs, self.has_text
        stack = [0]
        open_counts: dict = {}
        skip_with_content = cfg.skip_with_content
        skip_tags = cfg.skip_tags
        events = tokenize(text)
        pending = None  # a START waiting to know whether text follows it (the thesis's CONTENT group)
        max_elements = cfg.max_elements
        special = self.special_tags
        over = len(names) > max_elements  # checked per event as before; only _open adds records
        for kind, value, raw_attrs, closed in events:
            if over:
                self._overflow(kind, value, events, stack)
                break
            if kind == TEXT:
                blank = value.isspace()
                if not blank:
                    self._count_text(value)
                if pending is not None:
                    self._open(pending, not blank, stack, open_counts)
                    pending = None
                    over = len(names) > max_elements
                top = stack[-1]
                segs_of[top].append(value)
                if not blank:
                    has_text[top] = True
                continue
            if pending is not None:
                self._open(pending, False, stack, open_counts)
                pending = None
                over = len(names) > max_elements
            if kind == START:
                name = value
                if name not in special:  # the common case: skips the five checks below
                    if name in _IMPLIES or open_counts.get("head"):  # most tags close nothing
                        self._close_implied(name, stack, open_counts)
                    pending = (name, raw_attrs, closed)
                    continue
                if name == "base":
                    self._base(raw_attrs)
                if name in skip_with_content:
                    self._skip_raw(events)
                    continue
                if name == "title":
                    self._read_title(events)
                    continue
                if name in skip_tags:
                    continue
                if name in VOID_TAGS:
                    self._void(name, raw_attrs, stack)
                    continue
                if name in _IMPLIES or open_counts.get("head"):  # most tags close nothing
                    self._close_implied(name, stack, open_counts)
                pending = (name, raw_attrs, closed)
            else:  # END
                name = value
                if open_counts.get(name):
                    while True:
                        top = names[stack.pop()]
                        open_counts[top] -= 1
                        if top == name:
                            break
                elif name == "br":  # browsers read </br> as <br>
                    segs_of[stack[-1]].append(" ")
        if pending is not None:
            self._open(pending, False, stack, open_counts)
        return _NodeBuilder(self).run()

    def _overflow(self, kind: int, value: str, events, stack: list) -> None:
        """_overflow_record for our tokenizer: the rest of the page's text at the cost of the tokenizer
        alone."""
        rest = self._overflow_record(stack[1] if len(stack) > 1 else 0)
        segs = self.segs[rest]
        if kind == TEXT:
            self._count_text(value)
            segs.append(value)
        skip = self.cfg.skip_with_content
        for kind, value, _attrs, _closed in events:
            if kind == TEXT:
                self._count_text(value)
                segs.append(value)
            elif kind == START:
                if value in skip:
                    self._skip_raw(events)
                else:
                    segs.append(" ")
        self.has_text[rest] = _text_in(segs)

    def _skip_raw(self, events) -> None:
        """Drop a raw-text body (script, style, ...) the tokenizer delivered as TEXT + END."""
        for kind, _value, _attrs, _closed in events:
            if kind == END:
                return

    def _read_title(self, events) -> None:
        parts = []
        for kind, value, _attrs, _closed in events:
            if kind == END:
                break
            self._count_text(value)
            parts.append(value)
        if not self.title:
            self.title = _visible_text(_html.unescape("".join(parts)))
        self.count_tags += 1  # <title> is a regular tag for countTags, but its text is Page.title

    def _void(self, name: str, raw_attrs: str, stack: list) -> None:
        if name == "br":  # does not open a level nor advance countTags; it separates words
            self.segs[stack[-1]].append(" ")
            return
        if name == "wbr":
            return
        self.count_tags += 1
        if name == "img":
            attrs = parse_attributes(raw_attrs)
            src = next((attrs[a] for a in _IMG_SRC_ATTRS if attrs.get(a)), None)
            if src:
                self._add_image(_html.unescape(src.strip()), stack[-1])

    def _base(self, raw_attrs: str) -> None:
        """<base href> sets the URL images resolve against (SWDE pages start with one)."""
        href = parse_attributes(raw_attrs).get("href")
        if href and not self._base_seen:
            self._base_seen = True
            href = _html.unescape(href.strip())
            base = _resolve(self.url, href) if self.url else href
            if base is not None:  # as browsers do, a <base href> that is no URL is ignored
                self.base = base

    def _close_implied(self, name: str, stack: list, open_counts: dict) -> None:
        names = self.names
        if open_counts.get("head") and name not in _HEAD_CONTENT:
            # browsers end an unclosed <head> at <body> or at the first element of the page's body
            while open_counts.get("head"):
                self._pop(stack, open_counts)
        if name in _CLOSES_P and open_counts.get("p"):
            self._close_to("p", _P_SCOPE, stack, open_counts)
        if name in _HEADINGS and names[stack[-1]] in _HEADINGS:
            self._pop(stack, open_counts)
        rule = _IMPLIED.get(name)
        if rule is not None:
            targets, scope = rule
            for t in targets:
                if open_counts.get(t):
                    self._close_to(t, scope, stack, open_counts)

    def _close_to(self, target: str, scope: frozenset, stack: list, open_counts: dict) -> None:
        names = self.names
        for k in range(len(stack) - 1, max(0, len(stack) - _SCOPE_LOOKBACK), -1):
            n = names[stack[k]]
            if n == target:
                while len(stack) > k:
                    self._pop(stack, open_counts)
                return
            if n in scope:
                return

    def _pop(self, stack: list, open_counts: dict) -> None:
        open_counts[self.names[stack.pop()]] -= 1

    def _open(self, pending: tuple, has_content: bool, stack: list, open_counts: dict) -> None:
        name, raw_attrs, closed = pending
        cfg = self.cfg
        parent = stack[-1]
        wrapper = name in cfg.wrapper_tags and not has_content
        if not wrapper and name not in cfg.repeating_tags:
            self.count_tags += 1
        ctx = self.ctxs[parent]
        if name in _CTX_TAGS or ("-" in name and _is_nav_element(name)):
            ctx = _tag_ctx(name, ctx)
        if raw_attrs:
            ctx = _raw_attrs_ctx(raw_attrs, ctx)
        idx = self._append(name, parent, raw_attrs, ctx, wrapper)
        if not closed:
            stack.append(idx)
            open_counts[name] = open_counts.get(name, 0) + 1
