"""HTML -> Page of text nodes, each with its reTPS: the EDREW Extractor (Algorithms 2-12).

Pure: no Scrapy, no torch. Two linear passes and no recursion, so 200,000 nested elements or a
million unclosed tags cost what their size costs:

1. lexbor's HTML5 tree (the tree a browser builds) -> element records (name, parent, attributes,
   position `countTags`, text segments), in document order with an explicit stack. Pages nested
   deeper than lexbor handles in linear time (a cheap check, `_too_deep_for_lexbor`) are read with
   our own tokenizer instead, with an explicit stack and HTML's implied end tags simplified (an open
   <p> closes before a <div>, <li> before the next <li>, ...);
2. records -> nodes: formatter children (and inline children of mixed text) are merged into their
   parent's content, every element with content becomes a Node, and its reTPS is the chain of
   token groups from the element up to the root, reversed and cut at `retps_max_tokens`.

Every choice where the thesis is ambiguous is written in docs/method-choices.md.
"""
from __future__ import annotations

import gc
import html as _html
import re
import threading
from collections import Counter
from contextlib import contextmanager
from dataclasses import fields
from itertools import accumulate
from operator import sub
from typing import List, Optional, Union
from urllib.parse import urljoin

from selectolax.lexbor import LexborHTMLParser

from .declared import declared_types
from .decoding import charset_from_content_type, decode_html, looks_binary, looks_binary_text
from .page import Node, Page
from .tokenizer import END, START, TEXT, parse_attributes, tokenize
from .tokens import (
    CLSS,
    CNT,
    DEFAULT_CONFIG,
    HIDE,
    ID,
    MONEY,
    PROP,
    SEP,
    VOID_TAGS,
    WT_PREFIX,
    SerializerConfig,
    fibonacci_bucket,
)

_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.I)
_XML_NAME = re.compile(r"[A-Za-z_][\w.-]*\Z")
# Attributes whose values are URLs or code: words in them ("wp-content") say nothing about the element.
_NO_KEYWORD_ATTRS = frozenset({"href", "src", "srcset", "action", "style", "data-src", "poster", "cite",
                               "background", "formaction", "xmlns", "content"})
_IMG_SRC_ATTRS = ("src", "data-src", "data-lazy-src", "data-original")
# Implied end tags (HTML's "optional end tags"), simplified: opening KEY closes an open element of
# the listed names if it is found before a scope boundary, looking at most _SCOPE_LOOKBACK levels down.
_CLOSES_P = frozenset(
    {"address", "article", "aside", "blockquote", "center", "details", "dialog", "dir", "div", "dl",
     "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header",
     "hgroup", "hr", "main", "menu", "nav", "ol", "p", "pre", "section", "summary", "table", "ul", "li",
     "dd", "dt", "listing", "plaintext", "xmp"}
)
_IMPLIED = {
    # as in HTML's tree construction, a <div> (or <p>) between two <li> does not stop the close
    "li": (frozenset({"li"}), frozenset({"ul", "ol", "menu", "table", "nav", "section", "body"})),
    "dt": (frozenset({"dt", "dd"}), frozenset({"dl", "table", "body"})),
    "dd": (frozenset({"dt", "dd"}), frozenset({"dl", "table", "body"})),
    "option": (frozenset({"option"}), frozenset({"select", "datalist", "optgroup", "body"})),
    "optgroup": (frozenset({"option", "optgroup"}), frozenset({"select", "body"})),
    "tr": (frozenset({"tr", "td", "th"}), frozenset({"table", "tbody", "thead", "tfoot", "body"})),
    "td": (frozenset({"td", "th"}), frozenset({"tr", "table", "body"})),
    "th": (frozenset({"td", "th"}), frozenset({"tr", "table", "body"})),
    "tbody": (frozenset({"tbody", "thead", "tfoot", "tr", "td", "th"}), frozenset({"table", "body"})),
    "thead": (frozenset({"tbody", "thead", "tfoot", "tr", "td", "th"}), frozenset({"table", "body"})),
    "tfoot": (frozenset({"tbody", "thead", "tfoot", "tr", "td", "th"}), frozenset({"table", "body"})),
}
_P_SCOPE = frozenset({"table", "td", "th", "button", "html", "body", "caption", "object", "applet", "marquee"})
_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
_HEAD_CONTENT = frozenset({"title", "meta", "link", "style", "script", "base", "noscript", "template", "head"})
# names for which _close_implied can close something (besides an open <head>)
_IMPLIES = _CLOSES_P | _HEADINGS | frozenset(_IMPLIED)
_SCOPE_LOOKBACK = 12
_MAX_MERGE_HEIGHT = 8  # inline subtrees deeper than this stay separate nodes (bounds text copying)
_NO_NODE = frozenset({"title", "head", "#document"})



# A URL's scheme as browsers read it: after leading C0 controls and spaces, with tabs and line breaks
# anywhere removed ("java\tscript:" is javascript:).
_SCHEME = re.compile(r"[\x00-\x20]*([A-Za-z][A-Za-z0-9+.\-]*):")
_URL_NOISE = re.compile(r"[\t\n\r]")


def _scheme(url: Optional[str]) -> Optional[str]:
    match = _SCHEME.match(_URL_NOISE.sub("", url or ""))
    return match.group(1).lower() if match else None


def _image_schemes(page_url: Optional[str]) -> frozenset:
    """The schemes an image URL may have on a page at `page_url`: http(s), and file: too on a page read
    from a file (the CLI's saved pages, whose images are files beside them). javascript:, data: and the
    rest never: a hostile <base> makes any of them absolute, and a Scrapy FilesPipeline fed file: URLs
    from a web page would read local files."""
    return frozenset({"http", "https", "file"} if _scheme(page_url) == "file" else {"http", "https"})


def _web_image(src: str, schemes: frozenset) -> bool:
    """`src` has one of `schemes`, or none (relative, left so only when it could not be resolved)."""
    scheme = _scheme(src)
    return scheme is None or scheme in schemes


def _resolve(base: str, ref: str) -> Optional[str]:
    """`ref` resolved against `base`, or None: urljoin raises ValueError on a malformed host
    ("http://[x/"), and one bad src or base href must not cost the page its text."""
    try:
        return urljoin(base, ref)
    except ValueError:
        return None


def _landmark(role: str, boilerplate: str, in_main: bool) -> tuple[str, bool]:
    """(boilerplate, in_main) after an element's ARIA role: main/article mark the main content, the
    other landmarks boilerplate unless the element already is."""
    if role == "main" or role == "article":
        return ("" if boilerplate == "footer" else boilerplate), True
    if not boilerplate:
        boilerplate = _ARIA_BOILERPLATE.get(role, "")
        if boilerplate == "footer" and in_main:
            boilerplate = ""  # as for <footer>: an article's own
    return boilerplate, in_main


class _El:
    """One element of the document while it is being built (the thesis's tree node)."""

    __slots__ = ("name", "parent", "raw", "attrs", "segs", "tokens", "position", "depth", "hidden",
                 "path", "step", "child_counts", "images", "wrapper", "in_head", "in_link", "boilerplate", "in_main",
                 "has_text", "img_below")

    def __init__(self, name, parent, raw, position, depth, hidden, step, wrapper, in_head,
                 attrs=None, boilerplate="", in_main=False, in_link=False):
        self.name = name
        self.parent = parent          # index of the parent record, -1 for the document
        self.raw = raw                # attribute text as written; parsed only for elements that matter
        self.attrs: Optional[dict] = attrs
        self.segs: list = []          # text (str) and child record indexes (int), in document order
        self.tokens: Optional[list] = None  # set for the root and #overflow; other groups come per node
        self.position = position      # countTags when it was opened
        self.depth = depth
        self.hidden = hidden
        self.path: Optional[str] = None  # XPath, built when a node needs it
        self.step = step              # (XPath name, index among same-name siblings)
        self.child_counts: Optional[dict] = None
        self.images: Optional[list] = None
        self.wrapper = wrapper        # a wrapper tag with no content of its own (#WT)
        self.in_head = in_head
        self.in_link = in_link        # inside an <a>: all its text is link text
        self.boilerplate = boilerplate  # "dialog", "nav", "footer" or "aside": such a container, here or above
        self.in_main = in_main        # an <article> or <main>, here or above
        self.has_text = False         # a text segment that is not all whitespace
        self.img_below = False        # an <img> here or in a descendant


def serialize(data: Union[bytes, bytearray, memoryview, str], *, encoding: Optional[str] = None,
              url: Optional[str] = None, config: SerializerConfig = DEFAULT_CONFIG) -> Page:
    """Serialize an HTML document into its text nodes.

    `encoding` is the declared charset (an HTTP Content-Type value or a bare name), used after a BOM
    and before <meta charset>. Never raises on str or bytes: non-HTML input gives a Page with no
    nodes and `skipped` set to "empty", "binary" or "no-text"; a page over the config's max_text_chars
    or max_nodes gives "too-much-text" or "too-many-nodes" (the text is counted as it is read, so an
    oversized page costs its tokenizing, not its nodes).
    """
    if isinstance(data, (bytes, bytearray, memoryview)):
        raw = bytes(data)
        if not raw or raw.isspace():  # as `not raw.strip()`, without copying the page
            return Page(url=url, nodes=[], skipped="empty")
        if looks_binary(raw) and not raw.startswith((b"\xff\xfe", b"\xfe\xff")):
            return Page(url=url, nodes=[], skipped="binary")
        declared = charset_from_content_type(encoding) if encoding and "=" in encoding else encoding
        text, codec = decode_html(raw, declared)
    elif isinstance(data, str):
        text, codec = data, "utf-8"
        # Scrapy hands us response.text: binary bodies served as text/html arrive decoded
        if looks_binary_text(text):
            return Page(url=url, nodes=[], encoding=codec, skipped="binary")
    else:
        raise TypeError(f"serialize() takes str or bytes, not {type(data).__name__}")
    if not text or text.isspace():
        return Page(url=url, nodes=[], encoding=codec, skipped="empty")
    if "\x00" in text:  # NUL never renders; removing it keeps the text searchable
        text = text.replace("\x00", "")
    with _gc_paused():
        try:
            page = _build(text, config, url)
        except _TooLarge as exc:
            return Page(url=url, nodes=[], encoding=codec, skipped=exc.reason)
    if config.max_nodes and len(page.nodes) > config.max_nodes:
        return Page(url=url, nodes=[], encoding=codec, skipped="too-many-nodes")
    page.encoding = codec
    page.declared = declared_types(text)
    if not page.nodes and page.skipped is None:
        page.skipped = "no-text"
    return page


def _build(text: str, config: SerializerConfig, url: Optional[str]) -> Page:
    """The page from lexbor's tree, or from our tokenizer where lexbor would not be linear."""
    if _too_deep_for_lexbor(text):
        return _Builder(config, url).build(text)
    page = _Builder(config, url).build_tree(text)
    if not page.nodes:
        # Browsers drop everything after an attribute quote that never closes (often the whole page);
        # our tokenizer reads on, and a page with text should not come out empty.
        page = _Builder(config, url).build(text)
    return page


def _build_with_tokenizer(text: str, config: SerializerConfig, url: Optional[str]) -> Page:
    """The page from our tokenizer alone (the fallback; benchmarks/serializer.py compares the two)."""
    return _Builder(config, url).build(text)


class _TooLarge(Exception):
    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


_gc_lock = threading.Lock()
_gc_users = 0


@contextmanager
def _gc_paused():
    """Pause the cyclic GC while a page is built: the records hold no cycles, and collections
    triggered by their allocation make big pages superlinear (measured 2.2x slower at 400k
    elements). Counted, because Scrapy serializes pages in several threads at once."""
    global _gc_users
    with _gc_lock:
        if _gc_users == 0:
            was_enabled = gc.isenabled()
            gc.disable()
            _gc_paused.was_enabled = was_enabled
        _gc_users += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_users -= 1
            if _gc_users == 0 and _gc_paused.was_enabled:
                gc.enable()


_gc_paused.was_enabled = True


class _Builder:
    """Pass 1: keeps the thesis's state (countTags, current node, level) in one object per page."""

    def __init__(self, config: SerializerConfig, url: Optional[str]):
        self.cfg = config
        self.url = url
        self.base = url
        self.image_schemes = _image_schemes(url)
        self.els: List[_El] = []
        self.count_tags = 0
        self.title = ""
        self.images: list = []
        self.name_info, self.special_tags = _name_infos(config)
        self.keywords = tuple(config.keyword_tokens.items())
        self._base_seen = False
        self.truncated = False
        self.decoded = False  # text and attribute values arrive with their entities decoded
        self._text_left = config.max_text_chars or -1  # characters of text still allowed; -1: no limit

    def _count_text(self, value: str) -> None:
        if self._text_left >= 0:
            self._text_left -= len(value)
            if self._text_left < 0:
                raise _TooLarge("too-much-text")

    # ---- pass 1: tokens -> element records ---------------------------------------------------
    def build(self, text: str) -> Page:
        cfg = self.cfg
        els = self.els
        root = _El("#document", -1, "", 0, 0, False, None, False, False)
        root.tokens, root.path = [], ""
        els.append(root)
        stack = [0]
        open_counts: dict = {}
        skip_with_content = cfg.skip_with_content
        skip_tags = cfg.skip_tags
        events = tokenize(text)
        pending = None  # a START waiting to know whether text follows it (the thesis's CONTENT group)
        max_elements = cfg.max_elements
        special = self.special_tags
        over = len(els) > max_elements  # checked per event as before; only _open adds records
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
                    over = len(els) > max_elements
                el = els[stack[-1]]
                el.segs.append(value)
                if not blank:
                    el.has_text = True
                continue
            if pending is not None:
                self._open(pending, False, stack, open_counts)
                pending = None
                over = len(els) > max_elements
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
                        top = els[stack.pop()].name
                        open_counts[top] -= 1
                        if top == name:
                            break
                elif name == "br":  # browsers read </br> as <br>
                    els[stack[-1]].segs.append(" ")
        if pending is not None:
            self._open(pending, False, stack, open_counts)
        return _NodeBuilder(self).run()

    # ---- pass 1 on lexbor's HTML5 tree ---------------------------------------------------------
    def build_tree(self, text: str) -> Page:
        """Pass 1 from the tree lexbor builds, the tree a browser builds: the same element records as
        build(), read in document order. Entities come decoded, implied end tags are lexbor's."""
        self.decoded = True
        cfg = self.cfg
        els = self.els
        root = _El("#document", -1, "", 0, 0, False, None, False, False)
        root.tokens, root.path = [], ""
        els.append(root)
        special = self.special_tags
        skip_with_content, skip_tags = cfg.skip_with_content, cfg.skip_tags
        max_elements = cfg.max_elements
        node = LexborHTMLParser(_close_self_closed_raw_text(text)).root
        parent = 0
        todo: list = []  # (next sibling, its parent record) for each element being descended into
        rest: Optional[_El] = None  # the #overflow record, past max_elements
        while node is not None:
            tag = node.tag
            child = None
            below = parent  # the record the children of this node belong to
            if tag == "-text":
                value = node.text_content
                self._count_text(value)
                el = els[parent] if rest is None else rest
                el.segs.append(value)
                # a no-break space counts as text: our tokenizer saw `&nbsp;` undecoded, and it joins
                # inline siblings into one sentence ("Advertiser:&nbsp;<span>name</span>")
                if not el.has_text and (not value.isspace() or "\xa0" in value):
                    el.has_text = True
            elif not tag or tag[0] == "-" or tag[0] == "!":  # comments, processing instructions
                pass
            elif rest is not None:
                if tag not in skip_with_content:
                    rest.segs.append(" ")
                    child = node.child
            elif tag not in special:
                child = node.child
                if child is None:
                    has_content = False
                else:  # the CONTENT group: text (not only white space) first inside the element
                    first = child.tag
                    has_content = (_not_blank(child.text_content) if first == "-text" else
                                   first == "-comment" and _starts_with_text(child))
                below = self._open_node(tag, node.attributes, has_content, parent)
                if len(els) > max_elements:
                    rest = self._overflow_record()
            elif tag in skip_with_content:
                pass
            elif tag == "title":
                if not self.title:
                    title = node.text(deep=True)
                    self._count_text(title)
                    self.title = " ".join(title.split())
                self.count_tags += 1
            elif tag in skip_tags:  # transparent (noscript), or void (link, meta, base, input, area)
                if tag == "base":
                    self._base_href(node.attributes.get("href"))
                child = node.child
            elif tag in VOID_TAGS:
                self._void_node(tag, node, parent)
            else:
                child = node.child
                below = self._open_node(tag, node.attributes, _starts_with_text(child), parent)
                if len(els) > max_elements:
                    rest = self._overflow_record()
            if child is not None:
                todo.append((node.next, parent))
                node, parent = child, below
            else:
                node = node.next
            while node is None and todo:
                node, parent = todo.pop()
        if rest is not None:
            rest.has_text = _has_text(rest)
        return _NodeBuilder(self).run()

    def _overflow_record(self) -> _El:
        """Past max_elements: the rest of the page's text goes, without markup, into one element under
        <html>, as build() does (see _overflow)."""
        self.truncated = True
        els = self.els
        parent = 1 if len(els) > 1 else 0
        rest = _El("#overflow", parent, "", self.count_tags, els[parent].depth + 1, False, None, False, False)
        rest.tokens = [("#overflow", self.count_tags)]
        rest.path = _Paths(els, self.cfg.max_path_depth).of(parent) + "/*[last()]"
        els.append(rest)
        els[parent].segs.append(len(els) - 1)
        return rest

    def _inherit(self, name: str, has_content: bool, parent: _El) -> tuple:
        """What an element takes from its name and its parent, before its own attributes are read:
        (sibling key, wrapper, hidden, in_main, boilerplate)."""
        info = self.name_info.get(name) or _name_info(self.name_info, name, self.cfg)
        key, wrapper_tag, counted, boilerplate_tag, main_tag = info
        wrapper = wrapper_tag and not has_content
        if counted and not wrapper:
            self.count_tags += 1
        in_main = parent.in_main or main_tag
        boilerplate = parent.boilerplate or boilerplate_tag
        if boilerplate == "footer" and in_main:
            boilerplate = ""  # an article's own footer (author, date, tags) can be its content
        return key, wrapper, parent.hidden, in_main, boilerplate

    def _append(self, name: str, parent_idx: int, raw, hidden: bool, key: str, wrapper: bool, attrs,
                boilerplate: str, in_main: bool) -> int:
        """Record an element under parent_idx; its index."""
        els = self.els
        parent = els[parent_idx]
        counts = parent.child_counts
        if counts is None:
            counts = parent.child_counts = {}
        k = counts[key] = counts.get(key, 0) + 1
        idx = len(els)
        els.append(_El(name, parent_idx, raw, self.count_tags, parent.depth + 1, hidden, (key, k), wrapper,
                       parent.in_head or name == "head", attrs, boilerplate, in_main,
                       parent.in_link or name == "a"))
        parent.segs.append(idx)
        return idx

    def _open_node(self, name: str, attrs: dict, has_content: bool, parent_idx: int) -> int:
        """_open for an element of lexbor's tree (attributes already parsed and decoded)."""
        key, wrapper, hidden, in_main, boilerplate = self._inherit(name, has_content, self.els[parent_idx])
        raw = ""
        if attrs:
            if None in attrs.values():  # a bare attribute (`<p hidden>`): "" as in parse_attributes
                attrs = {k: v or "" for k, v in attrs.items()}
            raw = attrs  # made the caches' key, a tuple of its pairs, when pass 2 needs it
            if not (hidden and boilerplate):
                if not hidden and ("hidden" in attrs or "style" in attrs):
                    hidden = _is_hidden(attrs)
                if not boilerplate and ("role" in attrs or "aria-modal" in attrs) and _is_dialog(attrs):
                    boilerplate = "dialog"
                if "role" in attrs:
                    boilerplate, in_main = _landmark(_aria_role(attrs), boilerplate, in_main)
        return self._append(name, parent_idx, raw, hidden, key, wrapper, attrs, boilerplate, in_main)

    def _void_node(self, name: str, node, parent_idx: int) -> None:
        """_void for an element of lexbor's tree."""
        parent = self.els[parent_idx]
        if name == "br":
            parent.segs.append(" ")
            return
        if name == "wbr":
            return
        self.count_tags += 1
        if name == "img":
            attrs = node.attributes
            src = next((attrs[a] for a in _IMG_SRC_ATTRS if attrs.get(a)), None)
            if src:
                src = src.strip()
                src = (_resolve(self.base, src) or src) if self.base else src  # unresolvable: as written
                if not _web_image(src, self.image_schemes):
                    return
                self.images.append(src)
                if parent.images is None:
                    parent.images = []
                parent.images.append(src)
                els = self.els
                k = parent_idx
                while k > 0 and not els[k].img_below:
                    els[k].img_below = True
                    k = els[k].parent

    def _base_href(self, href: Optional[str]) -> None:
        """_base for lexbor's tree (the href comes decoded)."""
        if href and not self._base_seen:
            self._base_seen = True
            href = href.strip()
            base = _resolve(self.url, href) if self.url else href
            if base is not None:
                self.base = base

    def _overflow(self, kind: int, value: str, events, stack: list) -> None:
        """Past max_elements the page is hostile or broken: keep its remaining text (no markup,
        no scripts) in one element under <body> level, at the cost of the tokenizer alone."""
        self.truncated = True
        els = self.els
        parent = stack[1] if len(stack) > 1 else 0
        rest = _El("#overflow", parent, "", self.count_tags, els[parent].depth + 1, False, None, False, False)
        rest.tokens = [("#overflow", self.count_tags)]
        rest.path = _Paths(els, self.cfg.max_path_depth).of(parent) + "/*[last()]"
        idx = len(els)
        els.append(rest)
        els[parent].segs.append(idx)
        segs = rest.segs
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
        rest.has_text = _has_text(rest)

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
            self.title = " ".join(_html.unescape("".join(parts)).split())
        self.count_tags += 1  # <title> is a regular tag for countTags, but its text is Page.title

    def _void(self, name: str, raw_attrs: str, stack: list) -> None:
        parent = self.els[stack[-1]]
        if name == "br":  # does not open a level nor advance countTags; it separates words
            parent.segs.append(" ")
            return
        if name == "wbr":
            return
        self.count_tags += 1
        if name == "img":
            attrs = parse_attributes(raw_attrs)
            src = next((attrs[a] for a in _IMG_SRC_ATTRS if attrs.get(a)), None)
            if src:
                src = _html.unescape(src.strip())
                src = (_resolve(self.base, src) or src) if self.base else src  # unresolvable: as written
                if not _web_image(src, self.image_schemes):
                    return
                self.images.append(src)
                if parent.images is None:
                    parent.images = []
                parent.images.append(src)
                self._mark_image(stack)

    def _mark_image(self, stack: list) -> None:
        """Flag the ancestors of an image, so that pass 2 looks for images only where there are some."""
        els = self.els
        for k in reversed(stack):
            el = els[k]
            if el.img_below:
                return
            el.img_below = True

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
        els = self.els
        if open_counts.get("head") and name not in _HEAD_CONTENT:
            # browsers end an unclosed <head> at <body> or at the first element of the page's body
            while open_counts.get("head"):
                self._pop(stack, open_counts)
        if name in _CLOSES_P and open_counts.get("p"):
            self._close_to("p", _P_SCOPE, stack, open_counts)
        if name in _HEADINGS and els[stack[-1]].name in _HEADINGS:
            self._pop(stack, open_counts)
        rule = _IMPLIED.get(name)
        if rule is not None:
            targets, scope = rule
            for t in targets:
                if open_counts.get(t):
                    self._close_to(t, scope, stack, open_counts)

    def _close_to(self, target: str, scope: frozenset, stack: list, open_counts: dict) -> None:
        els = self.els
        for k in range(len(stack) - 1, max(0, len(stack) - _SCOPE_LOOKBACK), -1):
            n = els[stack[k]].name
            if n == target:
                while len(stack) > k:
                    self._pop(stack, open_counts)
                return
            if n in scope:
                return

    def _pop(self, stack: list, open_counts: dict) -> None:
        open_counts[self.els[stack.pop()].name] -= 1

    def _open(self, pending: tuple, has_content: bool, stack: list, open_counts: dict) -> None:
        name, raw_attrs, closed = pending
        parent_idx = stack[-1]
        key, wrapper, hidden, in_main, boilerplate = self._inherit(name, has_content, self.els[parent_idx])
        attrs = None
        if raw_attrs and not (hidden and boilerplate):
            low = raw_attrs.lower()
            if not hidden and ("hidden" in low or "none" in low):  # cheap pre-checks before parsing
                attrs = parse_attributes(raw_attrs)
                hidden = _is_hidden(attrs)
            if not boilerplate and ("dialog" in low or "modal" in low):
                if _is_dialog(attrs if attrs is not None else parse_attributes(raw_attrs)):
                    boilerplate = "dialog"
            if "role" in low and _LANDMARK_WORD.search(low) and _names_a_landmark(low):  # cheap first
                if attrs is None:
                    attrs = parse_attributes(raw_attrs)
                boilerplate, in_main = _landmark(_aria_role(attrs), boilerplate, in_main)
        idx = self._append(name, parent_idx, raw_attrs, hidden, key, wrapper, attrs, boilerplate, in_main)
        if not closed:
            stack.append(idx)
            open_counts[name] = open_counts.get(name, 0) + 1

    def group_tail(self, attrs: dict, hidden: bool) -> tuple:
        """The tokens after <tag> in an element's group, reversed: <#HIDE>, keywords, <#PROP>,
        classes, <#CLSS>, <#ID> (the <tag|bucket> token and the content tokens come per node)."""
        if not attrs:
            return (HIDE,) if hidden else ()
        cfg = self.cfg
        tokens: list = []
        words = []
        if attrs.get("id"):
            tokens.append(ID)
            words.append(attrs["id"])
        cls = attrs.get("class")
        if cls:
            names = cls.split()
            if names:
                tokens.append(CLSS)
                limit = cfg.max_token_chars
                tokens.extend(c.lower()[:limit] for c in names[: cfg.max_classes])
                words.append(cls)
        if len(attrs) > ("id" in attrs) + ("class" in attrs) + ("style" in attrs):
            tokens.append(PROP)
            words.extend([v for k, v in attrs.items() if v and k not in _NO_KEYWORD_ATTRS])
        if words and self.keywords:
            hay = " ".join(words).lower()
            tokens.extend(tok for kw, tok in self.keywords if kw in hay)
        if hidden:
            tokens.append(HIDE)
        return tuple(reversed(tokens))


# The order pass 2 passes Node's fields in; checked at import, so that a reordered Node fails loudly.
_NODE_FIELDS = ("index", "tag", "content", "retps", "bucket", "parent", "path", "attrs", "hidden", "boilerplate",
                "images", "depth", "link_chars", "position")
if tuple(f.name for f in fields(Node)) != _NODE_FIELDS:
    raise ImportError("edrew_scrapy.page.Node changed its fields: update _NODE_FIELDS and _NodeBuilder.run")

_NAME_INFOS: dict = {}


def _name_infos(cfg: SerializerConfig) -> tuple:
    """Per-tag-name facts for _open and the start tags build() handles apart, shared by the pages of
    one tag configuration."""
    key = (cfg.wrapper_tags, cfg.repeating_tags, cfg.skip_with_content, cfg.skip_tags)
    got = _NAME_INFOS.get(key)
    if got is None:
        if len(_NAME_INFOS) > 16:
            _NAME_INFOS.clear()
        # start tags that build() treats apart from the rest
        special = cfg.skip_with_content | cfg.skip_tags | VOID_TAGS | {"base", "title"}
        got = _NAME_INFOS[key] = ({}, special)
    return got


def _name_info(infos: dict, name: str, cfg: SerializerConfig) -> tuple:
    """(XPath step name, wrapper tag, advances countTags, boilerplate container, article/main)."""
    info = (_xpath_name(name), name in cfg.wrapper_tags, name not in cfg.repeating_tags,
            _BOILERPLATE_TAGS.get(name, ""), name == "article" or name == "main")
    if len(infos) < 10000:  # custom element names are unbounded on hostile pages
        infos[name] = info
    return info


# Containers whose text is never the page's main content (HTML semantics); `footer` only outside an
# <article>/<main>. See docs/method-choices.md for the measurements behind each.
_BOILERPLATE_TAGS = {"dialog": "dialog", "nav": "nav", "footer": "footer", "aside": "aside"}


# The ARIA landmark roles of the same containers, for pages that mark them on a <div>: on WCXB dev as
# served cross-validated word-F1 stayed 0.8588 (most such elements are <nav>, <footer> or <aside>
# already); with every HTML5 landmark written as <div> they won back 0.003 of the 0.009 lost
# (docs/evaluation.md, "Markup the model never saw").
_ARIA_BOILERPLATE = {"navigation": "nav", "contentinfo": "footer", "complementary": "aside"}
# the roles _open looks for: those above, and main and article, which are <main> and <article> for the
# footer exception
_ARIA_WORDS = ("navigation", "contentinfo", "complementary", "main", "article")
# WAI-ARIA 1.2's concrete roles (and 1.3's image, comment, suggestion): an element's role is the first
# token of its role attribute that names one, as browsers read it ("region contentinfo" is a region).
_ARIA_ROLES = frozenset("""
    alert alertdialog application article banner blockquote button caption cell checkbox code columnheader
    combobox comment complementary contentinfo definition deletion dialog directory document emphasis feed
    figure form generic grid gridcell group heading image img insertion link list listbox listitem log main
    mark marquee math menu menubar menuitem menuitemcheckbox menuitemradio meter navigation none note option
    paragraph presentation progressbar radio radiogroup region row rowgroup rowheader scrollbar search
    searchbox separator slider spinbutton status strong subscript suggestion superscript switch tab table
    tablist tabpanel term textbox time timer toolbar tooltip tree treegrid treeitem""".split())
_LANDMARK_WORD = re.compile("|".join(_ARIA_WORDS))
_ROLE_VALUE = re.compile(r"""(?<![\w-])role\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))""")


def _names_a_landmark(low: str) -> bool:
    """A pre-check on the lower-cased attribute text: a role attribute whose value holds one of
    _ARIA_WORDS. Pages put role="button", "menuitem" ... on many elements whose classes say "main-menu";
    those are not parsed (parsing them cost 3 % of the serializer's time; these checks cost 1-2 %)."""
    m = _ROLE_VALUE.search(low)
    if m is None:
        return False
    value = m.group(1) or m.group(2) or m.group(3) or ""
    return any(word in value for word in _ARIA_WORDS)


def _aria_role(attrs: dict) -> str:
    """The element's ARIA role (lower case), "" when its role attribute names none."""
    for token in (attrs.get("role") or "").lower().split():
        if token in _ARIA_ROLES:
            return token
    return ""


def _is_dialog(attrs: dict) -> bool:
    """A modal or dialog box by its ARIA markup (role="dialog"/"alertdialog", aria-modal="true"): cookie
    and consent banners, terms and policies, sign-up and "quick view" boxes, mostly closed until a click.
    A `<dialog>` element counts too (its implicit role). See docs/method-choices.md."""
    roles = (attrs.get("role") or "").lower().split()
    return "dialog" in roles or "alertdialog" in roles or (attrs.get("aria-modal") or "").strip().lower() == "true"


def _is_hidden(attrs: dict) -> bool:
    if "hidden" in attrs:
        return True
    style = attrs.get("style")
    return bool(style) and _HIDDEN_STYLE.search(style) is not None


class _NodeBuilder:
    """Pass 2: merge formatter/inline children, compute contents, reTPS and buckets."""

    def __init__(self, b: _Builder):
        self.b = b
        self.cfg = b.cfg

    def run(self) -> Page:
        b, cfg = self.b, self.cfg
        els = b.els
        n = len(els)
        count_tags = max(b.count_tags, 1)
        formatter, inline = cfg.formatter_tags, cfg.inline_tags
        merge_mixed = cfg.merge_inline_in_mixed_content
        # height of the inline-only subtree (-1 when it holds a block): merging is bounded so that
        # a page of 200,000 nested <span> does not copy its text 200,000 times.
        height = [0] * n
        for i in range(n - 1, 0, -1):
            el = els[i]
            h = height[i]
            p = el.parent
            if h < 0 or el.name not in inline:
                height[p] = -1
            elif height[p] >= 0 and h + 1 > height[p]:
                height[p] = h + 1
        absorbed = [False] * n
        mixed = [el.has_text for el in els]  # text of its own: mixed content if it has children
        takes = [False] * n  # has an absorbed child
        nonleaf = [False] * n  # has a child that is not absorbed (no <#CNT>)
        for i in range(1, n):
            el = els[i]
            p = el.parent
            if absorbed[p]:
                absorbed[i] = True
            elif 0 <= height[i] <= _MAX_MERGE_HEIGHT and (
                    el.name in formatter or (merge_mixed and mixed[p] and el.name in inline)):
                absorbed[i] = True
                takes[p] = True
            else:
                nonleaf[p] = True
        # text of absorbed subtrees, children first (they have higher indexes)
        full: dict = {}
        links: dict = {}
        for i in range(n - 1, 0, -1):
            if absorbed[i]:
                parts, lc = self._join(els[i], full, links)
                text = "".join(parts)
                full[i] = text
                links[i] = len(text) if els[i].name == "a" else lc
        nodes: List[Node] = []
        node_of = [-1] * n
        near = [-1] * n  # nearest ancestor that is a node
        self.count_tags = count_tags
        self.chains = [None] * n  # reversed tokens from an element up to the root, memoised
        self.chains[0] = ()
        self.buckets, self.suffixes = _bucket_tables(count_tags, cfg.fibonacci_buckets, 4 * n + 10_000)
        self.group_tails, self.parsed = _shared_caches(b.keywords, cfg.max_classes, cfg.max_token_chars)
        fib = cfg.fibonacci_buckets
        max_tokens = cfg.retps_max_tokens
        currencies = cfg.currency_symbols
        paths = _Paths(els, cfg.max_path_depth)
        has_images = bool(b.images)
        decoded = b.decoded
        for i in range(1, n):
            el = els[i]
            p = el.parent
            near[i] = node_of[p] if node_of[p] >= 0 else near[p]
            if absorbed[i] or not (mixed[i] or takes[i]) or el.in_head or el.name in _NO_NODE:
                continue
            segs = el.segs
            if len(segs) == 1 and type(segs[0]) is str:  # the common leaf: one run of text
                raw, lc = segs[0], 0
            else:
                parts, lc = self._join(el, full, links)
                raw = "".join(parts)
            if not raw or raw.isspace():
                continue
            content = " ".join((_html.unescape(raw) if "&" in raw and not decoded else raw).split())
            if not content:
                continue
            chain = self.chains[i] or self._chain(i)
            if not nonleaf[i]:  # a leaf: <#CNT>, and <#> before it when the text starts with money
                chain = ((MONEY, CNT) if content.startswith(currencies) else (CNT,)) + chain
            bucket = self._bucket(el.position) if el.position else fib[0]
            idx = len(nodes)
            node_of[i] = idx
            # positional (in _NODE_FIELDS order): keyword arguments cost 1.4 us more per node
            nodes.append(Node(
                idx, el.name, content, SEP.join(chain[:max_tokens]), bucket, near[i], paths.of(i) or "/",
                self._attrs(el, True), el.hidden, el.boilerplate,
                self._images(i, absorbed, mixed) if has_images else [], el.depth,
                len(content) if el.in_link else min(lc, len(content)), el.position,
            ))
        text_root = "".join(s for s in els[0].segs if type(s) is str)
        text_root = " ".join((text_root if decoded else _unescape(text_root)).split())
        if text_root:  # text outside any element (a plain-text "page")
            nodes.insert(0, Node(index=0, tag="#document", content=text_root, retps=CNT,
                                 bucket=fib[0], parent=-1, path="/"))
            for k, node in enumerate(nodes[1:], 1):
                node.index = k
                node.parent = node.parent + 1 if node.parent >= 0 else -1
        return Page(url=b.url, nodes=nodes, title=b.title, count_tags=b.count_tags, n_elements=n - 1,
                    images=b.images, truncated=b.truncated)

    def _join(self, el: _El, full: dict, links: dict):
        parts = []
        lc = 0
        for s in el.segs:
            if type(s) is str:
                parts.append(s)
            else:
                t = full.get(s)
                if t is not None:
                    parts.append(t)
                    lc += links[s]
                else:  # a child that is a node of its own still separates words
                    parts.append(" ")
        return parts, lc

    def _bucket(self, position: int) -> int:
        if 0 <= position < len(self.buckets):
            return self.buckets[position]
        return fibonacci_bucket(position, self.count_tags, self.cfg.fibonacci_buckets)

    def _attrs(self, el: _El, copy: bool) -> dict:
        """The element's attributes; pages repeat the same attribute text, so it is parsed once
        per page (a node gets its own copy of the dict)."""
        if el.attrs is not None:
            return el.attrs
        got = self.parsed.get(el.raw)
        if got is None:
            got = parse_attributes(el.raw)
            if len(el.raw) <= _SHARED_MAX_CHARS:
                self.parsed[el.raw] = got
        if copy:
            el.attrs = got = dict(got)
        return got

    def _group(self, el: _El) -> tuple:
        """The element's token group, reversed and rendered (`name|bucket` last). The tokens after
        the name depend only on the attribute text and the hidden flag: memoised on those."""
        if el.tokens is not None:  # the #overflow record
            return tuple(f"{t[0]}|{self._bucket(t[1])}" if type(t) is tuple else t for t in reversed(el.tokens))
        if el.wrapper:
            return (WT_PREFIX + el.name,)
        raw = el.raw
        if type(raw) is dict:
            raw = el.raw = tuple(raw.items())
        key = (raw, el.hidden)
        tail = self.group_tails.get(key)
        if tail is None:
            tail = self.b.group_tail(self._attrs(el, False), el.hidden)
            if _cacheable(raw):
                self.group_tails[key] = tail
        return tail + (f"{el.name}|{self._bucket(el.position)}",)

    def _chain(self, i: int) -> tuple:
        """Reversed tokens from element i up to the root, at most max_tokens (memoised per element)."""
        els = self.b.els
        chains = self.chains
        max_tokens = self.cfg.retps_max_tokens
        # climb to the nearest memoised ancestor (or the root) without recursion
        path = []
        j = i
        while chains[j] is None:
            path.append(j)
            j = els[j].parent
        below = chains[j]
        tails = self.group_tails
        suffixes = self.suffixes
        for j in reversed(path):
            el = els[j]
            raw = el.raw
            if type(raw) is dict:  # lexbor's attributes: their (name, value) pairs are the cache key
                raw = el.raw = tuple(raw.items())
            tail = None if el.wrapper or el.tokens is not None else tails.get((raw, el.hidden))
            if tail is None:
                group = self._group(el)
            else:  # the common case, inlined (positions never pass countTags)
                group = tail + (el.name + suffixes[el.position],)
            room = max_tokens - len(group)
            # a slice that keeps the whole tuple returns it without copying
            below = group + below[:room] if room > 0 else (group + below)[:max_tokens]
            chains[j] = below
        return below

    def _images(self, i: int, absorbed: list, mixed: list) -> list:
        """Images of the element and of its non-text children up to max_image_bubble levels down."""
        els = self.b.els
        if not els[i].img_below:
            return []
        out = list(els[i].images or ())
        frontier = [s for s in els[i].segs if type(s) is int]
        for _ in range(self.cfg.max_image_bubble):
            nxt = []
            for c in frontier:
                ce = els[c]
                if absorbed[c] or not mixed[c]:
                    if ce.images:
                        out.extend(ce.images)
                    nxt.extend(s for s in ce.segs if type(s) is int)
            frontier = nxt
            if not frontier or len(out) > 50:
                break
        return out


def _bucket_tables(count_tags: int, fib: tuple, max_size: int) -> tuple:
    """fibonacci_bucket(p, count_tags) for every position p in 0..count_tags, and "|bucket" strings:
    a few slices per page instead of a bisect per element. Built by probing the exact expression
    fibonacci_bucket uses at each bucket's first position, so the values are the same."""
    # a table that is not increasing, or a page of a million <hr> (void tags count but are no
    # elements): compute each bucket instead
    if count_tags > max_size or any(a >= b for a, b in zip(fib, fib[1:])):
        return [], _NoSuffixes(count_tags, fib)
    buckets: list = []
    for k in range(1, len(fib) + 1):
        end = count_tags + 1 if k == len(fib) else _first_position(fib[k], count_tags)
        if end > len(buckets):
            buckets.extend([fib[k - 1]] * (end - len(buckets)))
    suffixes = [f"|{b}" for b in fib]
    by_value = dict(zip(fib, suffixes))
    return buckets, [by_value[b] for b in buckets]


def _first_position(value: int, count_tags: int) -> int:
    """The first position p (clipped to 0..count_tags+1) with 100.0 * p / count_tags >= value."""
    p = min(max(int(value * count_tags / 100), 0), count_tags + 1)
    while p > 0 and 100.0 * (p - 1) / count_tags >= value:
        p -= 1
    while p <= count_tags and 100.0 * p / count_tags < value:
        p += 1
    return p


class _NoSuffixes:
    """The "|bucket" strings computed one by one (a bucket table that is not increasing)."""

    def __init__(self, count_tags: int, fib: tuple):
        self.count_tags, self.fib = count_tags, fib

    def __getitem__(self, position: int) -> str:
        return f"|{fibonacci_bucket(position, self.count_tags, self.fib)}"


# Token-group tails and parsed attributes, shared by the pages of a process: a site's pages repeat the
# same attribute texts. Bounded: entries for long attribute texts are not kept, and the caches are
# emptied when they pass _SHARED_MAX_ENTRIES. Plain dict get/set only, so threads can share them.
_SHARED_MAX_CHARS = 256
_SHARED_MAX_ENTRIES = 10_000
_SHARED: dict = {}


def _shared_caches(keywords: tuple, max_classes: int, max_token_chars: int) -> tuple:
    key = (keywords, max_classes, max_token_chars)
    got = _SHARED.get(key)
    if got is None or len(got[0]) > _SHARED_MAX_ENTRIES or len(got[1]) > _SHARED_MAX_ENTRIES:
        if len(_SHARED) > 8:
            _SHARED.clear()
        got = _SHARED[key] = ({}, {})
    return got


class _Paths:
    """XPaths of elements, built on demand and memoised: positional steps from the root, or the
    document-order form `(//name)[k]` past max_depth so that a path never grows with the nesting."""

    def __init__(self, els: list, max_depth: int):
        self.els = els
        self.max_depth = max_depth
        self.doc_index: Optional[dict] = None

    def of(self, i: int) -> str:
        els = self.els
        el = els[i]
        if el.path is not None:
            return el.path
        if el.depth > self.max_depth:
            el.path = f"(//{el.step[0]})[{self._doc_index(i)}]"
            return el.path
        chain = []
        j = i
        while els[j].path is None:
            chain.append(j)
            j = els[j].parent
        base = els[j].path
        for j in reversed(chain):
            e = els[j]
            key, k = e.step
            base = e.path = f"{base}/{key}[{k}]"
        return base

    def _doc_index(self, i: int) -> int:
        """Index of element i among the elements of its XPath name in the document, counted once for
        the whole page the first time a path is that deep (rare: pages nested past max_depth)."""
        if self.doc_index is None:
            counts: dict = {}
            self.doc_index = doc = {}
            max_depth = self.max_depth
            for j, e in enumerate(self.els):
                if e.step is not None:
                    key = e.step[0]
                    c = counts[key] = counts.get(key, 0) + 1
                    if e.depth > max_depth:
                        doc[j] = c
        return self.doc_index[i]


_XPATH_NAMES: dict = {}


def _xpath_name(name: str) -> str:
    """The element name as an XPath step, or `*` for names XPath cannot spell."""
    key = _XPATH_NAMES.get(name)
    if key is None:
        key = name if _XML_NAME.match(name) else "*"
        if len(_XPATH_NAMES) < 10000:
            _XPATH_NAMES[name] = key
    return key


def _cacheable(raw) -> bool:
    """Whether an element's attribute key (markup text, or lexbor's (name, value) pairs) is short enough to
    be kept in the per-process caches."""
    if type(raw) is str:
        return len(raw) <= _SHARED_MAX_CHARS
    return len(raw) <= 16 and sum(len(k) + len(v) for k, v in raw) <= _SHARED_MAX_CHARS


def _not_blank(text: str) -> bool:
    """Text for the CONTENT group and mixed content: anything but white space, a no-break space included."""
    return not text.isspace() or "\xa0" in text


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


# lexbor's tree construction searches its stack of open elements for many tags, so its time grows with
# depth x tags (20,000 nested <div> 0.5 s, unclosed <b class=N> 2.9 s). Pages with few tags go to lexbor
# whatever their shape (worst case measured ~0.13 s at 5,000 tags); for the others a linear estimate of
# the depth decides, and a page that would nest deeper than browsers go (Chromium caps at 512) is read
# with our own tokenizer (build()). See docs/method-choices.md.
_LEXBOR_ANY_SHAPE_TAGS = 5000
_LEXBOR_MAX_DEPTH = 512
_CHECK_CHUNK = 1 << 20  # characters
_TAG_NAME = re.compile(r"<(/?[A-Za-z][^\s/>]*+)")
# Start tags that never stay open below a sibling of their kind: void elements, those HTML closes when
# the next of their kind (or a block) opens, and the ones a document has once.
_FLAT_TAGS = VOID_TAGS | frozenset(
    {"p", "li", "dd", "dt", "option", "optgroup", "tr", "td", "th", "tbody", "thead", "tfoot", "colgroup",
     "caption", "rb", "rt", "rp", "rtc", "html", "head", "body", "image"})


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


def _too_deep_for_lexbor(text: str) -> bool:
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


def _has_text(el: _El) -> bool:
    """Text of its own (mixed content when it also has children)."""
    for s in el.segs:
        if type(s) is str and s and not s.isspace():
            return True
    return False


def _unescape(s: str) -> str:
    return _html.unescape(s) if "&" in s else s
