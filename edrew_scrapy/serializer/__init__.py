"""HTML -> Page of text nodes, each with its reTPS: the EDREW Extractor (Algorithms 2-12).

Pure: no Scrapy, no torch. Two linear passes and no recursion, so 200,000 nested elements or a
million unclosed tags cost what their size costs:

1. lexbor's HTML5 tree (the tree a browser builds) -> element records (name, parent, attributes,
   position `countTags`, text segments, the flags it inherits), in document order with an explicit
   stack; a record is an index into parallel lists, not an object per element. Pages nested
   deeper than lexbor handles in linear time (a cheap check, `too_deep_for_lexbor`) are read with
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
import sys
import threading
from collections import Counter
from contextlib import contextmanager
from dataclasses import fields
from itertools import accumulate, compress
from operator import sub
from typing import Any, Callable, List, NamedTuple, Optional, Union
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

# Characters a reader never sees that pages put inside words and between them: the soft hyphen (`&shy;`, a
# line-break hint that German and Dutch sites set in long words), zero-width space, word joiner, the
# invisible math operators, zero-width no-break space (a BOM). In a node's text they cut "Ver&shy;waltung"
# into two words for everything that reads words, and users got them in their text. The zero-width
# (non-)joiner and the direction marks stay: they change the glyphs or order a reader sees (emoji
# sequences, Persian and Indic letters, right-to-left text).
INVISIBLE = re.compile("[\u00ad\u200b\u2060-\u2064\ufeff]")


def _visible_text(text: str) -> str:
    """`text` with white space runs made one space, trimmed, and the invisible characters above left out."""
    # isascii() reads a flag CPython keeps on the string: most texts skip the regex's scan
    if not text.isascii() and INVISIBLE.search(text) is not None:
        text = INVISIBLE.sub("", text)
    return " ".join(text.split())


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


# An image URL whose urljoin result is known without urljoin: http(s) with an ASCII host, a path and a
# non-empty query of URL characters, no ";" (path params), "#" or white space, which urljoin's parse and
# unparse change. Group 1 the scheme, 2 "//host[:port]", 3 the path. Two thirds of image URLs on WCXB are
# absolute and most others rooted ("/img/a.png"); urljoin is ~7 us each.
_PLAIN_IMAGE_URL = re.compile(
    r"(https?:)?(//[A-Za-z0-9.-]++(?::[0-9]++)?)?(/[\w\-.~!$&'()*+,=:@%/]*+)?(?:\?[\w\-.~!$&'()*+,;=:@%/?]++)?\Z",
    re.ASCII)  # possessive: no character of one part can start the next, and a hostile src costs one scan
_PLAIN_ROOT = re.compile(r"https?://[A-Za-z0-9.-]++(?::[0-9]++)?/\Z")
_ORIGINS: dict = {}  # base URL -> "scheme://host[:port]" as urljoin writes it, "" where it is not plain


def _plain_image_url(base: str, src: str) -> Optional[str]:
    """urljoin(base, src) for the plain URLs above, or None where urljoin has to decide: an absolute one
    as written (urljoin unparses it to the same text), a protocol-relative or rooted one (with no dot
    segment to remove) after the base's scheme or origin."""
    m = _PLAIN_IMAGE_URL.match(src)
    if m is None:
        return None
    scheme, host, path = m.groups()
    if scheme:
        return src if host else None
    origin = _ORIGINS.get(base)
    if origin is None:
        root = _resolve(base, "/")
        origin = root[:-1] if root and _PLAIN_ROOT.match(root) else ""
        if len(base) <= _SHARED_MAX_CHARS:
            if len(_ORIGINS) >= _SHARED_MAX_ENTRIES:
                _ORIGINS.clear()
            _ORIGINS[base] = origin
    if not origin:
        return None
    if host:
        return origin[: origin.index(":") + 1] + src
    if path and path[1:2] != "/" and "/." not in path:
        return origin + src
    return None


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


class _Ctx(NamedTuple):
    """What an element inherits from its ancestors. Most elements change none of it, so they share
    their parent's object: one reference a record instead of five fields."""

    hidden: bool
    boilerplate: str  # "dialog", "nav", "footer" or "aside": such a container, here or above
    in_main: bool     # an <article> or <main>, here or above
    in_head: bool
    in_link: bool     # inside an <a>: all its text is link text


_ROOT_CTX = _Ctx(False, "", False, False, False)
# Names and attributes that can change an element's _Ctx; an element with neither shares its parent's.
_CTX_TAGS = frozenset({"dialog", "nav", "footer", "aside", "article", "main", "head", "a"})
_CTX_ATTRS = frozenset({"hidden", "style", "role", "aria-modal"})


def _tag_ctx(name: str, ctx: _Ctx) -> _Ctx:
    """The context of a `name` element under `ctx`, before its attributes are read; one shared object per
    (name, ctx), so that every <a> of a page does not build its own."""
    got = _TAG_CTXS.get((name, ctx))
    if got is None:
        got = _new_tag_ctx(name, ctx)
        if len(_TAG_CTXS) < 10_000:  # custom element names are the page's own: bounded
            _TAG_CTXS[(name, ctx)] = got
    return got


_TAG_CTXS: dict = {}


def _new_tag_ctx(name: str, ctx: _Ctx) -> _Ctx:
    in_main = ctx.in_main or name == "article" or name == "main"
    boilerplate = ctx.boilerplate or _BOILERPLATE_TAGS.get(name, "") or ("nav" if _is_nav_element(name) else "")
    if boilerplate == "footer" and in_main:
        boilerplate = ""  # an article's own footer (author, date, tags) can be its content
    return _Ctx(ctx.hidden, boilerplate, in_main, ctx.in_head or name == "head", ctx.in_link or name == "a")


def _attrs_ctx(attrs: dict, ctx: _Ctx) -> _Ctx:
    """The context after the element's own attributes (parsed): hidden, a dialog, an ARIA landmark.
    `ctx` itself when they change nothing, so that it stays shared."""
    hidden, boilerplate, in_main = ctx.hidden, ctx.boilerplate, ctx.in_main
    if hidden and boilerplate:
        return ctx
    if not hidden and ("hidden" in attrs or "style" in attrs):
        hidden = _is_hidden(attrs)
    if not boilerplate and ("role" in attrs or "aria-modal" in attrs) and _is_dialog(attrs):
        boilerplate = "dialog"
    if "role" in attrs:
        boilerplate, in_main = _landmark(_aria_role(attrs), boilerplate, in_main)
    if hidden == ctx.hidden and boilerplate == ctx.boilerplate and in_main == ctx.in_main:
        return ctx
    return _Ctx(hidden, boilerplate, in_main, ctx.in_head, ctx.in_link)


def _raw_attrs_ctx(raw_attrs: str, ctx: _Ctx) -> _Ctx:
    """_attrs_ctx on attribute text as written (our tokenizer's): parsed only when cheap checks on the
    lower-cased text find a word the rules look for."""
    hidden, boilerplate, in_main = ctx.hidden, ctx.boilerplate, ctx.in_main
    if hidden and boilerplate:
        return ctx
    attrs = None
    low = raw_attrs.lower()
    if not hidden and ("hidden" in low or "none" in low):
        attrs = parse_attributes(raw_attrs)
        hidden = _is_hidden(attrs)
    if not boilerplate and ("dialog" in low or "modal" in low):
        if _is_dialog(attrs if attrs is not None else parse_attributes(raw_attrs)):
            boilerplate = "dialog"
    if "role" in low and _LANDMARK_WORD.search(low) and _names_a_landmark(low):
        if attrs is None:
            attrs = parse_attributes(raw_attrs)
        boilerplate, in_main = _landmark(_aria_role(attrs), boilerplate, in_main)
    if hidden == ctx.hidden and boilerplate == ctx.boilerplate and in_main == ctx.in_main:
        return ctx
    return _Ctx(hidden, boilerplate, in_main, ctx.in_head, ctx.in_link)


def serialize(data: Union[bytes, bytearray, memoryview, str], *, encoding: Optional[str] = None,
              url: Optional[str] = None, config: SerializerConfig = DEFAULT_CONFIG,
              tree_reader: Optional[Callable[[LexborHTMLParser, str, Optional[str]], Any]] = None) -> Page:
    """Serialize an HTML document into its text nodes.

    `encoding` is the declared charset (an HTTP Content-Type value or a bare name), used after a BOM
    and before <meta charset>. Never raises on str or bytes: non-HTML input gives a Page with no
    nodes and `skipped` set to "empty", "binary" or "no-text"; a page over the config's max_text_chars
    or max_nodes gives "too-much-text" or "too-many-nodes" (the text is counted as it is read, so an
    oversized page costs its tokenizing, not its nodes).

    `tree_reader(tree, text, url)`, where given, reads what else it needs from lexbor's tree of the
    page before the tree is dropped (metadata.read_tree); what it returns is `Page.from_tree`, None on a
    page read without that tree (too deep) or with no text.
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
            page = _build(text, config, url, tree_reader)
        except _TooLarge as exc:
            return Page(url=url, nodes=[], encoding=codec, skipped=exc.reason)
    if config.max_nodes and len(page.nodes) > config.max_nodes:
        return Page(url=url, nodes=[], encoding=codec, skipped="too-many-nodes")
    page.encoding = codec
    page.declared = declared_types(text)
    if not page.nodes and page.skipped is None:
        page.skipped = "no-text"
    return page


def _build(text: str, config: SerializerConfig, url: Optional[str], tree_reader=None) -> Page:
    """The page from lexbor's tree, or from our tokenizer where lexbor would not be linear."""
    if too_deep_for_lexbor(text):
        page = _Builder(config, url).build(text)
        page.too_deep = True
        return page
    builder = _Builder(config, url)
    page = builder.build_tree(text)
    if not page.nodes:
        # Browsers drop everything after an attribute quote that never closes (often the whole page);
        # our tokenizer reads on, and a page with text should not come out empty.
        page = _Builder(config, url).build(text)
    if tree_reader is not None and page.nodes:
        try:
            page.from_tree = tree_reader(builder.tree, text, url)
        except Exception:  # noqa: BLE001 - a reader's failure costs only what it reads (from_tree stays None)
            page.from_tree = None
    return page


def _build_with_tokenizer(text: str, config: SerializerConfig, url: Optional[str], tree_reader=None) -> Page:
    """The page from our tokenizer alone (the fallback; benchmarks/serializer.py compares the two). It builds
    no lexbor tree, so `tree_reader` is not called: metadata then parses the page itself."""
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

    # ---- pass 1: tokens -> element records ---------------------------------------------------
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

    # ---- pass 1 on lexbor's HTML5 tree ---------------------------------------------------------
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


# The order pass 2 passes Node's fields in; checked at import, so that a reordered Node fails loudly.
_NODE_FIELDS = ("index", "tag", "content", "retps", "bucket", "parent", "path", "attrs", "hidden", "boilerplate",
                "images", "depth", "link_chars", "position")
if tuple(f.name for f in fields(Node)) != _NODE_FIELDS:
    raise ImportError("edrew_scrapy.page.Node changed its fields: update _NODE_FIELDS and _NodeBuilder.run")

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


# Containers whose text is never the page's main content (HTML semantics); `footer` only outside an
# <article>/<main>. See docs/method-choices.md for the measurements behind each.
_BOILERPLATE_TAGS = {"dialog": "dialog", "nav": "nav", "footer": "footer", "aside": "aside"}
# Custom elements (a name with a hyphen, as web components have) whose last word names a menu or
# navigation: `<pp-navigation>`, `<site-nav>`, `<mega-menu>` are what a <nav> is, in the page's own words.
_NAV_ELEMENT = re.compile(r"[a-z][a-z0-9-]*-(?:nav|navigation|navbar|menu|menubar)\Z")


def _is_nav_element(name: str) -> bool:
    return _NAV_ELEMENT.match(name) is not None


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
        names, parents, segs_of, ctxs = b.names, b.parents, b.segs, b.ctxs
        n = len(names)
        count_tags = max(b.count_tags, 1)
        formatter, inline = cfg.formatter_tags, cfg.inline_tags
        merge_mixed = cfg.merge_inline_in_mixed_content
        # height of the inline-only subtree (-1 when it holds a block): merging is bounded so that
        # a page of 200,000 nested <span> does not copy its text 200,000 times. The same backward
        # loop marks the elements with text somewhere below (for _mixed): one loop, not two.
        height = [0] * n
        below = list(b.has_text)
        for i in range(n - 1, 0, -1):
            h = height[i]
            p = parents[i]
            if h < 0 or names[i] not in inline:
                height[p] = -1
            elif height[p] >= 0 and h + 1 > height[p]:
                height[p] = h + 1
            if below[i]:
                below[p] = True
        # text of its own, or a sentence block of inline children: mixed content if it has children
        mixed = self._mixed(height, below) if merge_mixed else b.has_text
        takes = [False] * n  # has an absorbed child
        nonleaf = [False] * n  # has a child that is not absorbed (no <#CNT>)
        absorbed = [False] * n
        merged = []  # the absorbed elements, in document order
        for i in range(1, n):
            p = parents[i]
            if absorbed[p]:
                absorbed[i] = True
                merged.append(i)
            elif 0 <= height[i] <= _MAX_MERGE_HEIGHT and (
                    names[i] in formatter or (merge_mixed and mixed[p] and names[i] in inline)):
                absorbed[i] = True
                merged.append(i)
                takes[p] = True
            else:
                nonleaf[p] = True
        # text of absorbed subtrees, children first (they have higher indexes)
        full: dict = {}
        links: dict = {}
        for i in reversed(merged):
            parts, lc = _join(segs_of[i], full, links)
            text = "".join(parts)
            full[i] = text
            links[i] = len(text) if names[i] == "a" else lc
        nodes: List[Node] = []
        # the index of the nearest node at or above an element (-1: none), found when a node asks for it:
        # elements are decided in document order, so an ancestor's is final by then
        up: list = [None] * n
        up[0] = -1
        self.count_tags = count_tags
        # reversed tokens from an element up to the root, at most max_tokens, memoised: an element's
        # group is its token-group tail (memoised on its attributes and hidden flag), then `name|bucket`;
        # a wrapper's is `#WTname`. Computed in the node loop below, not in a method: a call per node
        # and the locals it would load again cost more than the climb.
        chains: list = [None] * n
        chains[0] = ()
        self.buckets, suffixes = _bucket_tables(count_tags, cfg.fibonacci_buckets, 4 * n + 10_000)
        shown_tails, hidden_tails, self.parsed = _shared_caches(b.keywords, cfg.max_classes, cfg.max_token_chars)
        fib = cfg.fibonacci_buckets
        max_tokens = cfg.retps_max_tokens
        currencies = cfg.currency_symbols
        paths = _Paths(b, cfg.max_path_depth)
        img_below = b.img_below
        buckets = self.buckets
        n_buckets = len(buckets)
        decoded = b.decoded
        positions, depths, attrs_of, wrappers = b.positions, b.depths, b.attrs, b.wrappers
        # XPaths are built in the same climb as the chains: the elements without a chain yet are those
        # without a path yet, save the deep ones (document-order paths) that paths.of() builds itself
        path_of, ks, max_depth = paths.path, b.ks, paths.max_depth
        for i in range(1, n):
            if absorbed[i] or not (mixed[i] or takes[i]):
                continue
            ctx = ctxs[i]
            name = names[i]
            if ctx.in_head or name in _NO_NODE:
                continue
            segs = segs_of[i]
            if len(segs) == 1 and type(segs[0]) is str:  # the common leaf: one run of text
                raw, lc = segs[0], 0
            else:
                parts, lc = _join(segs, full, links)
                raw = "".join(parts)
            if not raw or raw.isspace():
                continue
            content = _visible_text(_html.unescape(raw) if "&" in raw and not decoded else raw)
            if not content:
                continue
            # the chain: climb to the nearest memoised ancestor (or the root), then down again
            climbed = []
            j = i
            while chains[j] is None:
                climbed.append(j)
                j = parents[j]
            chain = chains[j]
            for j in reversed(climbed):
                if j in wrappers:
                    group = (WT_PREFIX + names[j],)
                else:
                    attrs = attrs_of[j]
                    if not attrs:  # none (the #overflow record has none either)
                        tail = _HIDE_TAIL if ctxs[j].hidden else ()
                    else:  # lexbor's dict is keyed by its (name, value) pairs, attribute text by itself
                        key = attrs if type(attrs) is str else tuple(attrs.items())
                        hidden = ctxs[j].hidden
                        # one dict per hidden flag: no (key, hidden) tuple to build and hash per element
                        by_key = hidden_tails if hidden else shown_tails
                        tail = by_key.get(key)
                        if tail is None:
                            tail = b.group_tail(self._parsed(attrs), hidden)
                            if _cacheable(key):
                                by_key[key] = tail
                    group = tail + (names[j] + suffixes[positions[j]],)  # positions never pass countTags
                room = max_tokens - len(group)
                # a slice that keeps the whole tuple returns it without copying
                chain = group + chain[:room] if room > 0 else (group + chain)[:max_tokens]
                chains[j] = chain
                if path_of[j] is None and depths[j] <= max_depth:
                    step = _XPATH_NAMES.get(names[j]) or _xpath_name(names[j])
                    # pass 1 counted siblings by name; names XPath cannot spell all count as `*`
                    path_of[j] = f"{path_of[parents[j]]}/{step}[{ks[j] if step != '*' else paths._star_k(j)}]"
            if not nonleaf[i]:  # a leaf: <#CNT>, and <#> before it when the text starts with money
                chain = ((MONEY, CNT) if content.startswith(currencies) else (CNT,)) + chain
            position = positions[i]
            j = parents[i]
            climbed = []
            while up[j] is None:
                climbed.append(j)
                j = parents[j]
            near = up[j]
            for j in climbed:
                up[j] = near
            idx = up[i] = len(nodes)
            attrs = attrs_of[i]
            if type(attrs) is str or (attrs and None in attrs.values()):
                attrs = self._attrs(i)
            # positional (in _NODE_FIELDS order): keyword arguments cost 1.4 us more per node; the common
            # bucket, attributes and images inline, not through a method call each
            nodes.append(Node(
                idx, name, content, SEP.join(chain[:max_tokens]),
                (buckets[position] if position < n_buckets else self._bucket(position)) if position else fib[0],
                near, path_of[i] or paths.of(i) or "/", attrs, ctx.hidden, ctx.boilerplate,
                self._images(i, absorbed, mixed) if i in img_below else [], depths[i],
                len(content) if ctx.in_link else min(lc, len(content)), position,
            ))
        text_root = "".join(s for s in segs_of[0] if type(s) is str)
        text_root = _visible_text(text_root if decoded else _unescape(text_root))
        if text_root:  # text outside any element (a plain-text "page")
            nodes.insert(0, Node(index=0, tag="#document", content=text_root, retps=CNT,
                                 bucket=fib[0], parent=-1, path="/"))
            for k, node in enumerate(nodes[1:], 1):
                node.index = k
                node.parent = node.parent + 1 if node.parent >= 0 else -1
        return Page(url=b.url, nodes=nodes, title=b.title, count_tags=b.count_tags, n_elements=n - 1,
                    images=b.images, truncated=b.truncated)

    def _mixed(self, height: List[int], below: List[bool]) -> List[bool]:
        """Per element: mixed content, whose inline children merge into it. Text of its own, or a sentence
        block (cfg.sentence_tags) of inline children only, two or more of which carry text: "<p><span>The
        words </span><em>yellow</em><span> and</span>…</p>" is one sentence, as "<p>The words <em>…" is.
        `below`: text somewhere in the element's subtree."""
        b = self.b
        names = b.names
        mixed = list(b.has_text)
        # children that carry text, by parent: counted in C (compress, Counter) rather than a loop
        texts = Counter(compress(b.parents, below))
        sentence = self.cfg.sentence_tags
        for i, k in texts.items():
            if k >= 2 and i > 0 and 0 <= height[i] and names[i] in sentence:
                mixed[i] = True
        return mixed

    def _bucket(self, position: int) -> int:
        if 0 <= position < len(self.buckets):
            return self.buckets[position]
        return fibonacci_bucket(position, self.count_tags, self.cfg.fibonacci_buckets)

    def _parsed(self, attrs) -> dict:
        """The element's attributes as a dict, not to be changed. Our tokenizer's attribute text is parsed
        once per process for the texts pages repeat."""
        if type(attrs) is not str:
            return attrs
        got = self.parsed.get(attrs)
        if got is None:
            got = parse_attributes(attrs)
            if len(attrs) <= _SHARED_MAX_CHARS:
                self.parsed[attrs] = got
        return got

    def _attrs(self, i: int) -> dict:
        """A node's own dict of its element's attributes, a bare one's value "" as parse_attributes has it."""
        attrs = self.b.attrs[i]
        if type(attrs) is str:
            return dict(self._parsed(attrs))
        return {k: v or "" for k, v in attrs.items()} if None in attrs.values() else attrs

    def _images(self, i: int, absorbed: list, mixed: list) -> list:
        """Images of the element and of its non-text children up to max_image_bubble levels down."""
        b = self.b
        if i not in b.img_below:
            return []
        images_of, segs_of = b.images_of, b.segs
        out = list(images_of.get(i, ()))
        frontier = [s for s in segs_of[i] if type(s) is int]
        for _ in range(self.cfg.max_image_bubble):
            nxt = []
            for c in frontier:
                if absorbed[c] or not mixed[c]:
                    images = images_of.get(c)
                    if images:
                        out.extend(images)
                    nxt.extend(s for s in segs_of[c] if type(s) is int)
            frontier = nxt
            if not frontier or len(out) > 50:
                break
        return out


_HIDE_TAIL = (HIDE,)


def _join(segs: list, full: dict, links: dict) -> tuple:
    """An element's text: its own runs and its absorbed children's, a space for each other child; and
    how many of those characters are link text."""
    parts = []
    lc = 0
    for s in segs:
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
# (base URL, src as written, the schemes allowed) -> the image URL kept, "" for none: urljoin is ~10 us an
# image, and sites repeat their logos, icons and placeholder images on every page
_IMAGE_URLS: dict = {}


def _shared_caches(keywords: tuple, max_classes: int, max_token_chars: int) -> tuple:
    key = (keywords, max_classes, max_token_chars)
    got = _SHARED.get(key)
    if got is None or len(got[0]) + len(got[1]) > _SHARED_MAX_ENTRIES or len(got[2]) > _SHARED_MAX_ENTRIES:
        if len(_SHARED) > 8:
            _SHARED.clear()
        got = _SHARED[key] = ({}, {}, {})  # tails of shown elements, of hidden ones, parsed attributes
    return got


class _Paths:
    """XPaths of elements, built on demand and memoised: positional steps from the root, or the
    document-order form `(//name)[k]` past max_depth so that a path never grows with the nesting."""

    def __init__(self, b: _Builder, max_depth: int):
        self.names, self.parents, self.segs, self.depths, self.ks = b.names, b.parents, b.segs, b.depths, b.ks
        self.max_depth = max_depth
        self.overflow = b.overflow
        self.path: list = [None] * len(self.names)
        self.path[0] = ""
        self.star_ks: dict = {}
        self.doc_index: Optional[dict] = None
        if self.overflow >= 0:  # the #overflow record is no element of the page: its parent's last child
            self.path[self.overflow] = self.of(self.parents[self.overflow]) + "/*[last()]"

    def of(self, i: int) -> str:
        path = self.path
        got = path[i]
        if got is not None:
            return got
        names = self.names
        if self.depths[i] > self.max_depth:
            got = path[i] = f"(//{_xpath_name(names[i])})[{self._doc_index(i)}]"
            return got
        parents, ks = self.parents, self.ks
        chain = []
        j = i
        while path[j] is None:
            chain.append(j)
            j = parents[j]
        base = path[j]
        for j in reversed(chain):
            key = _XPATH_NAMES.get(names[j]) or _xpath_name(names[j])
            # pass 1 counted siblings by name; names XPath cannot spell all count as `*`
            k = ks[j] if key != "*" else self._star_k(j)
            base = path[j] = f"{base}/{key}[{k}]"
        return base

    def _star_k(self, i: int) -> int:
        """Index of element i among its siblings whose names are no XPath names (all `*`)."""
        got = self.star_ks.get(i)
        if got is None:
            k = 0
            for c in self.segs[self.parents[i]]:
                if type(c) is int and c != self.overflow and _xpath_name(self.names[c]) == "*":
                    k += 1
                    self.star_ks[c] = k
            got = self.star_ks[i]
        return got

    def _doc_index(self, i: int) -> int:
        """Index of element i among the elements of its XPath name in the document, counted once for
        the whole page the first time a path is that deep (rare: pages nested past max_depth)."""
        if self.doc_index is None:
            counts: dict = {}
            self.doc_index = doc = {}
            max_depth, depths, names, overflow = self.max_depth, self.depths, self.names, self.overflow
            for j in range(1, len(names)):
                if j != overflow:
                    key = _xpath_name(names[j])
                    c = counts[key] = counts.get(key, 0) + 1
                    if depths[j] > max_depth:
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
    if len(raw) > 16:
        return False
    chars = 0
    for k, v in raw:  # a plain loop: sum() over a generator cost a quarter of a cache miss
        chars += len(k) + (len(v) if v else 0)
    return chars <= _SHARED_MAX_CHARS


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


def _text_in(segs: list) -> bool:
    """Text of its own (mixed content when it also has children)."""
    for s in segs:
        if type(s) is str and s and not s.isspace():
            return True
    return False


def _unescape(s: str) -> str:
    return _html.unescape(s) if "&" in s else s
