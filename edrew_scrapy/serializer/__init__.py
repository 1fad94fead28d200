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

The modules: serialize() and the choice of pass 1 here; pass 1 on lexbor's tree (lexbor_tree) or on our
tokenizer's events (tokenizer_tree), both into the element records (records); pass 2 (nodes), with the
reTPS token groups (groups), position buckets (buckets) and XPaths (xpaths); what an element inherits, its
hidden, boilerplate and ARIA landmark flags (landmarks); image URLs (images); visible text (text); and the
fixed tables and limits they read (settings).
"""
from __future__ import annotations

import gc
import threading
from contextlib import contextmanager
from typing import Any, Callable, Optional, Union

from selectolax.lexbor import LexborHTMLParser

from ..declared import declared_types
from ..decoding import charset_from_content_type, decode_html, looks_binary, looks_binary_text
from ..page import Node, Page
from ..tokens import DEFAULT_CONFIG, SerializerConfig
from .lexbor_tree import _LexborPass, too_deep_for_lexbor
from .records import _TooLarge
from .settings import INVISIBLE
from .tokenizer_tree import _TokenizerPass

__all__ = ["INVISIBLE", "Node", "Page", "SerializerConfig", "serialize", "too_deep_for_lexbor"]


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


class _Builder(_LexborPass, _TokenizerPass):
    """One page's pass 1 over its element records (records._Records), from lexbor's tree (build_tree) or with
    our own tokenizer (build); each ends in pass 2 (nodes._NodeBuilder)."""
