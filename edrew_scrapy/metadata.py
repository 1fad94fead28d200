"""A page's metadata: headline, authors, dates, language, site name, description and page type.

What the page declares comes first: JSON-LD and microdata (schema.org; microdata read with extruct),
Open Graph and Twitter cards, `<meta>` and `<html lang>`, read from one lexbor parse (selectolax, the
serializer's parser); lxml parses the page again only for extruct's microdata reader, and only where
microdata could still add a field. The publication date where none is declared: a date in the URL, else
htmldate (its markup rules; its search of the text on articles and forum threads), not on products and
collections. Then the page's own evidence: the headline among the declared one, `og:title`,
`twitter:title`, the `<title>` without its " | Site name" tail and the first `<h1>` (on pages other than
articles, the one the others agree with most), else the large heading nearest the main region the model
kept (`extract`); on forum threads the first poster in forum software's markup, then bylines in the
markup, and on articles a "By ..." line in the text, give the author where none is declared; the page type
comes from pagetype.py's classifier.

Hostile input costs a bounded amount and never raises: the HTML read here is cut at MAX_HTML_CHARS,
a JSON-LD block longer than MAX_JSONLD_CHARS or a page with more than MAX_ITEMSCOPES microdata items
is not read, a declared value is cut at MAX_VALUE_CHARS, and an extractor that raises costs only
its own part; each of these is named in `Metadata.skipped` (the Scrapy glue counts them). A date in
the future or before MIN_YEAR is dropped. Pure: no Scrapy, no model.
"""
from __future__ import annotations

import datetime as _dt
import json
import logging
import math
import re
import threading
from collections import Counter
from dataclasses import dataclass, field, fields, replace
from functools import lru_cache
from html import unescape as html_unescape
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple, Union
from urllib.parse import urlsplit

from .dates import (
    _SHOWN_DAY,
    MIN_YEAR,
    SHOWN_DATE_CHARS,
    SHOWN_DATE_NEAR,
    SHOWN_DATE_NODES,
    DateChooserError,
    candidates,
    default_chooser,
    page_shown,
    rules_day,
    shown_decides,
)
from .dates import shown_days as _shown_days
from .declared import KINDS
from .serializer import too_deep_for_lexbor

__all__ = ["Declared", "Metadata", "declared_of", "describe", "headline_from_title", "page_metadata",
           "page_type_evidence", "read_declared", "read_tree",
           "MAX_HTML_CHARS", "MAX_JSONLD_CHARS", "MAX_ITEMSCOPES", "MIN_YEAR", "METADATA_FIELDS"]

# the first this many characters of a page are read for its metadata (declared markup sits in <head>
# or near the start on nearly every page; a 4 MB page parses in some 40 ms)
MAX_HTML_CHARS = 4_000_000
MAX_JSONLD_CHARS = 500_000     # one <script type="application/ld+json"> block
MAX_ITEMSCOPES = 2_000         # microdata items on a page (extruct walks each item's subtree)
MAX_VALUE_CHARS = 2_000        # one declared value (a description, a name)
MAX_AUTHORS = 20
MAX_DEPTH = 8                  # nesting followed in a JSON-LD or microdata item
MAX_SENT_CHARS = 2_000_000     # a Declared sent from a worker as JSON (declared_to_json)
MAX_META_NAMES = 10            # names read from one <meta> attribute ("dc:title og:title")

# the keys a page item and `edrew extract` add, in order
METADATA_FIELDS = ("headline", "author", "date_published", "date_modified", "language", "site_name",
                   "description", "page_type", "page_type_probability")


@dataclass
class Metadata:
    """What a page says about itself, and what kind of page it is. Empty values are None (author: [])."""

    headline: Optional[str] = None
    author: List[str] = field(default_factory=list)
    date_published: Optional[str] = None     # ISO 8601 day, "2025-09-04"
    date_modified: Optional[str] = None
    language: Optional[str] = None           # BCP 47, "en-US"
    site_name: Optional[str] = None
    description: Optional[str] = None
    page_type: Optional[str] = None          # one of pagetype.PAGE_TYPES
    page_type_probability: Optional[float] = None
    # parts that were not read: "too-large", "jsonld", "jsonld-too-large", "microdata", "microdata-too-many",
    # "opengraph", "parse", "date", "date-chooser"
    skipped: Tuple[str, ...] = ()
    # the publication day's candidates and features (dates.Candidates): what a chooser is trained on
    date_candidates: Any = field(default=None, repr=False, compare=False)

    def fields(self) -> Dict[str, Any]:
        """The METADATA_FIELDS as a dict (what an item or a JSON record gets)."""
        return {name: list(self.author) if name == "author" else getattr(self, name) for name in METADATA_FIELDS}

    def __getstate__(self):
        # the day's candidates stay in the process that described the page (a worker sends the rest)
        state = dict(self.__dict__)
        state.pop("date_candidates", None)
        return state


@dataclass
class Declared:
    """What the markup of a page declares, as read by `read_declared` (plain data)."""

    items: List[Dict[str, Any]] = field(default_factory=list)  # JSON-LD and microdata items, normalised
    og: Dict[str, str] = field(default_factory=dict)           # Open Graph property -> first value
    meta: Dict[str, str] = field(default_factory=dict)         # <meta name|property|itemprop> -> first content
    lang: str = ""                                             # <html lang>
    title: str = ""                                            # <title>
    date_published: Optional[str] = None                       # htmldate's, when the markup declares none
    bylines: List[str] = field(default_factory=list)           # names in the page's byline markup
    posters: List[str] = field(default_factory=list)           # names in forum software's poster markup
    headings: List[str] = field(default_factory=list)          # the first <h1> texts
    skipped: Tuple[str, ...] = ()


HtmlInput = Union[str, bytes]


def read_declared(html: HtmlInput, *, encoding: Optional[str] = None, url: Optional[str] = None,
                  today: Optional[_dt.date] = None, dates: bool = True, extensive_dates: bool = False) -> Declared:
    """The declared metadata of a page (bytes are decoded as `encoding`, else UTF-8 with replacement).
    `extensive_dates`: htmldate also searches the page's text for dates. Never raises: what cannot be
    read is left out and named in `skipped`."""
    declared, text = _read(html, encoding, url)
    if dates and text is not None:
        _date_from_page(declared, text, url, today, extensive_dates)
    return declared


def _date_from_page(declared: Declared, text: Union[str, Callable[[], str]], url: Optional[str],
                    today: Optional[_dt.date], extensive: bool, after: Optional[int] = None,
                    shown: Optional[Callable[[], bool]] = None) -> None:
    """The publication date when the markup declares none: one in the URL, else htmldate's on the markup
    up to `after` characters below the first `<h1>` (None: DATE_REGION_AFTER; `text`: the page's text, or
    what gives it, called only when htmldate reads it); not htmldate's where `shown()` says the days the
    page shows decide its date whatever htmldate finds (_shown_decides)."""
    if _declared_date(declared, today):
        return
    try:
        language = _language(declared, declared.items) if extensive else None
        declared.date_published = _url_date(url, today)
        if declared.date_published is None and not (shown is not None and shown()):
            page_text = text() if callable(text) else text
            region = _date_region(page_text, DATE_REGION_AFTER if after is None else after)
            declared.date_published = _htmldate(region, url, today, extensive, language)
    except Exception:  # noqa: BLE001 - htmldate's parsers on hostile text
        declared.skipped += ("date",)


def _read(html: HtmlInput, encoding: Optional[str], url: Optional[str],
          too_deep: Optional[bool] = None) -> Tuple[Declared, Optional[str]]:
    """(Declared without htmldate's date, the page's text as read, or None when it has no HTML tree).
    `too_deep`: the serializer's verdict on the same page (Page.too_deep), None to check here.

    One lexbor parse (selectolax, the serializer's parser, much cheaper than lxml's) reads the
    `<head>`'s declarations, JSON-LD, headings and bylines (_read_tree); where the serializer has read
    them from its own tree (read_tree, Page.from_tree) page_metadata does not come here."""
    from selectolax.lexbor import LexborHTMLParser

    skipped: List[str] = []
    text = _text_of(html, encoding, skipped)
    if too_deep_for_lexbor(text) if too_deep is None else too_deep:
        # lexbor's time grows with depth x tags (a 200,000-deep page: minutes): read what precedes <body>,
        # where pages declare their metadata, and nothing of a head that is itself too deep
        text = text[:_body_start(text)]
        skipped.append("too-deep")
        if too_deep_for_lexbor(text):
            return Declared(skipped=tuple(skipped)), None
    try:
        tree = LexborHTMLParser(text) if text.strip() else None
    except Exception:  # noqa: BLE001 - lexbor refuses a document it cannot decode
        tree = None
    declared = _read_tree(tree, text, url, skipped) if tree is not None else None
    if declared is None:
        return Declared(skipped=tuple(skipped + ["parse"])), None
    return declared, text


def _text_of(html: HtmlInput, encoding: Optional[str], skipped: List[str]) -> str:
    """The page's text as metadata reads it: decoded, cut at MAX_HTML_CHARS (named in `skipped`)."""
    text = _decode(html, encoding)
    if len(text) > MAX_HTML_CHARS:
        text = text[:MAX_HTML_CHARS]
        skipped.append("too-large")
    return text


def read_tree(tree, text: str, url: Optional[str] = None) -> Optional[Declared]:
    """What a page declares (Declared without htmldate's date), read from lexbor's tree of `text` that
    the serializer has built anyway: serialize(..., tree_reader=read_tree) keeps it in Page.from_tree,
    and page_metadata then reads it instead of parsing the page again. None for a page over
    MAX_HTML_CHARS (page_metadata reads its start itself) or a tree without `<html>`."""
    if len(text) > MAX_HTML_CHARS:
        return None
    return _read_tree(tree, text, url, [])


def declared_of(page, html: HtmlInput, *, encoding: Optional[str] = None, url: Optional[str] = None) -> Declared:
    """What a serialised page declares, as its page type reads it: what the serializer read from its tree
    (serialize(..., tree_reader=read_tree) keeps it in Page.from_tree), else `html` read apart, without dates."""
    shared = getattr(page, "from_tree", None)
    if isinstance(shared, Declared):
        return shared
    return read_declared(html, encoding=encoding, url=url, dates=False)


def declared_to_json(declared: Any) -> Optional[str]:
    """A Declared as a JSON string, for another process (a crawl's worker sends what it read from its tree):
    a string pickles whatever the nesting of the JSON-LD items, which pickling the objects may refuse. None
    where it is not a Declared, cannot be written (too deeply nested, not JSON's types) or is over
    MAX_SENT_CHARS: the other process then parses the page itself."""
    if not isinstance(declared, Declared):
        return None
    try:
        sent = json.dumps({f.name: getattr(declared, f.name) for f in fields(Declared)}, ensure_ascii=False,
                          separators=(",", ":"))
    except (TypeError, ValueError, RecursionError):
        return None
    return sent if len(sent) <= MAX_SENT_CHARS else None


def declared_from_json(sent: Optional[str]) -> Optional[Declared]:
    """The Declared that declared_to_json wrote, None for None or anything else."""
    if not isinstance(sent, str):
        return None
    try:
        data = json.loads(sent)
        declared = Declared(**data)
    except (TypeError, ValueError, RecursionError):
        return None
    declared.skipped = tuple(declared.skipped)
    return declared


def _read_tree(tree, text: str, url: Optional[str], skipped: List[str]) -> Optional[Declared]:
    """The declared metadata in lexbor's tree of `text`; lxml parses `text` again only for extruct's
    microdata reader, on a page with microdata items whose JSON-LD does not already name an article's
    headline, author and date. None for a tree without `<html>`."""
    root = _html_element(tree)
    if root is None:
        return None
    attrs = root.attributes
    declared = Declared(lang=_clean(attrs.get("lang") or attrs.get("xml:lang") or ""))
    title = tree.css_first("title")
    if title is not None:
        declared.title = _clean(title.text())
    found = _Selected(tree)
    declared.items.extend(_jsonld_items(found.jsonld, skipped))
    source = (_microdata_source(tree, text, found) if found.items
              and _needs_microdata(declared.items) and _microdata_could_add(tree, found.itemtypes) else None)
    if source is not None:
        declared.items.extend(_microdata_items(source, url, skipped))
    try:
        declared.og = _opengraph(tree, root, found.meta)
    except Exception:  # noqa: BLE001 - a hostile prefix attribute
        skipped.append("opengraph")
    declared.meta = _meta(found.meta)
    declared.bylines = _bylines(tree)
    declared.posters = _posters(tree)
    declared.headings = [_clean(h.text()) for h in found.h1[:5]]
    declared.skipped = tuple(skipped)
    return declared


def _html_element(tree):
    """The tree's first `<html>` element: the document's element, where lexbor put one (it does for every
    HTML it parses), without the walk of the whole tree a selector costs."""
    root = tree.root
    return root if root is not None and root.tag == "html" else tree.css_first("html")


# the elements read by their tag or an attribute's presence, selected in one walk of lexbor's tree: a walk
# costs about what the tree's size costs, whatever these simple selectors, so one walk for all of them costs
# what one of them did (the bylines' and posters' substring selectors cost a walk each whatever the grouping)
_SIMPLE = 'meta, h1, script[type="application/ld+json"], [itemscope], [itemtype], [itemref]'


class _Selected:
    """The `<meta>`s, `<h1>`s, JSON-LD `<script>`s, microdata items (`itemscope`), typed elements (`itemtype`)
    of a tree, each in document order as its own selector gives it, and whether an element has `itemref`.
    Sorted from _SIMPLE's one walk: lexbor lists an element once for each selector it matches."""

    __slots__ = ("meta", "h1", "jsonld", "items", "itemtypes", "itemref")

    def __init__(self, tree):
        self.meta, self.h1, self.jsonld, self.items, self.itemtypes = [], [], [], [], []
        self.itemref = False
        last = None
        for el in tree.css(_SIMPLE):
            if el.mem_id == last:  # the same element again, for the next selector it matches
                continue
            last = el.mem_id
            tag, attrs = el.tag, el.attributes
            if tag == "meta":
                self.meta.append(el)
            elif tag == "h1":
                self.h1.append(el)
            # lexbor matches the `type` attribute's value without regard to case, as HTML says of `type`
            elif tag == "script" and (attrs.get("type") or "").lower() == "application/ld+json":
                self.jsonld.append(el)
            if "itemscope" in attrs:
                self.items.append(el)
            if "itemtype" in attrs:
                self.itemtypes.append(el)
            if "itemref" in attrs:
                self.itemref = True


_BODY_TAG = re.compile(r"<body[\s>/]", re.I)


def _body_start(text: str) -> int:
    found = _BODY_TAG.search(text)
    return found.start() if found else 0


# htmldate reads what precedes <body> and this much of the markup around the first <h1> (characters before
# and after it; from the body's start on a page without one): its lxml parse and its scans of every element
# cost what the whole page costs, and the day a page is dated by sits near its headline, while the dates far
# below it are mostly other pages' and comments' (docs/metadata.md)
DATE_REGION_BEFORE = 3_000
DATE_REGION_AFTER = 80_000
# on a page the classifier calls, at UNSEARCHED_REGION_PROBABILITY or more, one whose text htmldate does not
# search (a listing, documentation, a service page: its markup rules alone) this much after the <h1>: such a
# page shows its own day at its heading, the days further down are its entries', changes' and posts'; less
# sure, the page may be an article (docs/metadata.md)
DATE_REGION_AFTER_UNSEARCHED = 10_000
UNSEARCHED_REGION_PROBABILITY = 0.5
_H1_TAG = re.compile(r"<h1[\s>/]", re.I)
_HEAD_END = re.compile(r"</head\s*>", re.I)


def _date_region(text: str, after: int = DATE_REGION_AFTER) -> str:
    """The part of a page htmldate reads: what precedes `<body>` (else `</head>`'s end), then from a tag
    at most DATE_REGION_BEFORE characters before the first `<h1>` to `after` characters after it."""
    body = _body_start(text)
    if not body:
        head_end = _HEAD_END.search(text)
        body = head_end.end() if head_end else 0
    h1 = _H1_TAG.search(text, body)
    at = h1.start() if h1 else body
    start = max(body, at - DATE_REGION_BEFORE)
    if start > body:  # from a tag on, not from inside one's attributes or a script
        tag = text.find("<", start, at)
        start = tag if tag >= 0 else at
    end = at + after
    if start <= body and end >= len(text):
        return text
    return text[:body] + text[start:end]


def _decode(html: HtmlInput, encoding: Optional[str]) -> str:
    if isinstance(html, str):
        return html
    codec = _codec(encoding)
    try:
        return html[:MAX_HTML_CHARS * 4].decode(codec, errors="replace")
    except Exception:  # noqa: BLE001 - a codec that is not a text encoding ("base64")
        return html[:MAX_HTML_CHARS * 4].decode("utf-8", errors="replace")


def _codec_name(label: str) -> Optional[str]:
    """Python's name of the codec `label` names, None for no codec."""
    import codecs

    try:
        return codecs.lookup(label).name
    except LookupError:
        return None


def _codec(encoding: Optional[str]) -> str:
    """The codec `_decode` reads bytes with: a Content-Type header's ("text/html; charset=latin-1") or a
    bare label's, else UTF-8."""
    label = (encoding or "").split("charset=", 1)[-1].split(";")[0].strip(" \"'") or "utf-8"
    return _codec_name(label) or "utf-8"


def _same_text(html: HtmlInput, encoding: Optional[str], page) -> bool:
    """Whether the serializer decoded the page as `_decode` does (its tree is then the tree of this text):
    it follows a `<meta charset>` where no encoding is given, which `_decode` does not; and it parses the text
    without its NULs, where lexbor reads one in an attribute as U+FFFD (a UTF-16 or UTF-32 page, whose bytes
    hold NULs anyway, is parsed again here)."""
    codec = _codec_name(getattr(page, "encoding", "") or "")
    if codec is None or codec != ("utf-8" if isinstance(html, str) else _codec(encoding)):
        return False
    if isinstance(html, str):
        return "\x00" not in html
    return not codec.startswith(("utf-16", "utf-32")) and b"\x00" not in html


# ---- JSON-LD and microdata -----------------------------------------------------------------------------

def _jsonld_items(scripts: list, skipped: List[str]) -> List[Dict[str, Any]]:
    """The JSON-LD items of a tree's `<script type="application/ld+json">`s (_Selected.jsonld)."""
    items: List[Dict[str, Any]] = []
    for script in scripts:
        source = script.text() or ""
        if len(source) > MAX_JSONLD_CHARS:
            skipped.append("jsonld-too-large")
            continue
        try:  # one block at a time: a broken block costs only itself
            found = _json_ld(source)
        except Exception:  # noqa: BLE001 - invalid JSON, RecursionError on deep nesting
            skipped.append("jsonld")
            continue
        for item in found:
            items.extend(_flatten_graph(item))
    return _resolve_references(items)


# the properties whose value is often a reference ({"@id": ...}) to a node elsewhere in the page's JSON-LD
_REFERENCED = ("author", "creator")


def _resolve_references(items: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """Items whose author is a bare reference (`{"@id": ...}` without a name, as Yoast's @graph writes
    it) with that reference replaced by the node of the page's JSON-LD that has the @id."""
    nodes = {item["@id"]: item for item in items if isinstance(item.get("@id"), str)}
    if not nodes:
        return items
    out = []
    for item in items:
        changed = None
        for key in _REFERENCED:
            value = item.get(key)
            if isinstance(value, (dict, list)):
                values = value if isinstance(value, list) else [value]
                resolved = [_referenced(v, nodes) for v in values[:MAX_AUTHORS]]
                if any(r is not v for r, v in zip(resolved, values)):
                    changed = changed or dict(item)
                    changed[key] = resolved
        out.append(changed or item)
    return out


def _referenced(value: Any, nodes: Dict[str, Dict[str, Any]]) -> Any:
    if isinstance(value, dict) and "name" not in value and isinstance(value.get("@id"), str):
        return nodes.get(value["@id"], value)
    return value


_COMMENT_LINE = re.compile(r"^\s*(//.*|<!--.*-->)")


def _json_ld(source: str) -> List[Any]:
    """The items of one JSON-LD block, read as extruct's JsonLdExtractor reads them: JSON with control
    characters allowed, else (jstyleson, extruct's own fallback) without leading comment lines."""
    try:
        data = json.loads(source, strict=False)
    except ValueError:
        import jstyleson

        data = jstyleson.loads(_COMMENT_LINE.sub("", source), strict=False)
    if isinstance(data, list):
        return data
    return [data] if isinstance(data, dict) else []


def _flatten_graph(item: Any) -> List[Dict[str, Any]]:
    """The items of a block's top-level object: the nodes of its @graph, or itself (_with_main_entities)."""
    if not isinstance(item, dict):
        return []
    graph = item.get("@graph")
    return _with_main_entities([node for node in graph if isinstance(node, dict)] if isinstance(graph, list)
                               else [item])


def _with_main_entities(nodes: Sequence[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """Each item followed by its `mainEntity` where that is one item (a QAPage's Question, a WebPage's
    Article): the page's headline, author and dates are the main entity's."""
    out: List[Dict[str, Any]] = []
    for node in nodes:
        out.append(node)
        main = node.get("mainEntity")
        if isinstance(main, dict) and type_names(main):  # a list (an FAQ's questions) is no one page's
            out.append(main)
    return out


def _needs_microdata(items: Sequence[Dict[str, Any]]) -> bool:
    """Whether microdata could still change a field: not when a JSON-LD article already names its
    headline, author and publication date (microdata items rank after it)."""
    for item in items:
        if set(type_names(item)) & KINDS["article"]:
            return not (_text(item.get("headline")) and _text(item.get("author"))
                        and _text(item.get("datePublished")))
    return True


# microdata properties read from any item, whatever its type (_declared_date, _language, _site_from_items)
_ANY_ITEM_PROPS = ("datePublished", "dateCreated", "uploadDate", "dateModified", "inLanguage", "publisher")
_ANY_ITEM_SELECTOR = ", ".join(f"[itemprop~={name}]" for name in _ANY_ITEM_PROPS)
# the item types whose properties describe() reads: those that speak for the page, and the site's
_SITE_TYPES = frozenset({"website", "organization", "newsmediaorganization", "corporation"})


def _microdata_could_add(tree, typed: list) -> bool:
    """Whether extruct's microdata items could change a field, read from lexbor's tree without lxml's
    parse: an item typed as one whose properties describe() reads (an article, a product, a web page, the
    site, ...) or, on an item of any type, a property read from every item (a date, the language, the
    publisher). Breadcrumbs, offers, ratings and the like alone change nothing. `typed`: the elements with
    `itemtype` (_Selected.itemtypes)."""
    try:
        if tree.css_first(_ANY_ITEM_SELECTOR) is not None:
            return True
        for el in typed:
            names = set(type_names({"@type": (el.attributes.get("itemtype") or "").split()}))
            if names & (_PRIMARY | _PAGE | _SITE_TYPES):
                return True
    except Exception:  # noqa: BLE001 - a hostile tree: let extruct's reader decide
        return tree.css_first("[itemscope]") is not None
    return False


def _microdata_source(tree, text: str, found: "_Selected") -> Optional[str]:
    """What extruct's microdata reader gets: the markup of the outermost items (elements with `itemscope`
    inside none), serialised from lexbor's tree, where they are not the whole page (`<html>` or `<body>` an
    item) and no item refers to others by id (`itemref`); else the page; None for a page without items.
    lxml's parse and extruct's walk then cost the items' size, not the page's. `found`: the tree's items
    (elements with `itemscope`) and whether an element has `itemref`."""
    try:
        items = found.items
        if not items:
            return None
        if len(items) > MAX_ITEMSCOPES or found.itemref:
            return text
        inner = {el.mem_id for el in tree.css("[itemscope] [itemscope]")}
        outer = [el for el in items if el.mem_id not in inner]
        if any(el.tag in ("html", "body") for el in outer):
            return text
        return "<html><body>" + "".join(el.html or "" for el in outer) + "</body></html>"
    except Exception:  # noqa: BLE001 - a hostile tree: the page as it is
        return text


def _microdata_items(text: str, url: Optional[str], skipped: List[str]) -> List[Dict[str, Any]]:
    import lxml.html
    from extruct.w3cmicrodata import MicrodataExtractor

    try:
        tree = lxml.html.fromstring(text, parser=lxml.html.HTMLParser(remove_comments=True))
        n = int(tree.xpath("count(//*[@itemscope])"))
    except Exception:  # noqa: BLE001 - lxml refuses control-character-only documents
        skipped.append("microdata")
        return []
    if n == 0:
        return []
    if n > MAX_ITEMSCOPES:
        skipped.append("microdata-too-many")
        return []
    try:
        found = _microdata_extractor(MicrodataExtractor)(nested=True).extract_items(tree, url)
    except Exception:  # noqa: BLE001 - RecursionError on deep nesting, itemref loops
        skipped.append("microdata")
        return []
    return _with_main_entities([_from_microdata(item, 0) for item in found if isinstance(item, dict)])


@lru_cache(maxsize=2)
def _microdata_extractor(shipped: type) -> type:
    """extruct's microdata reader with an item's own properties selected by _own_properties instead of its
    XPath, which takes the set difference of all the item's `itemprop` descendants and those inside its
    nested items, for each item: the cost grows with the product of the two (a forum thread's or a Q&A
    page's posts, each an item in the page's item, took 40-200 ms). extruct still reads every value (text
    content, URLs, `itemref`, nesting), which is what it is kept for; the items are the same. An extruct
    without that XPath (`_xp_prop`) is used as it is."""
    if not callable(getattr(shipped, "_xp_prop", None)):
        return shipped
    return type("MicrodataExtractor", (shipped,), {"_xp_prop": staticmethod(_own_properties)})


@lru_cache(maxsize=1)
def _descendants_with_itemprop():
    from lxml.etree import XPath

    return XPath(".//*[@itemprop]")


def _own_properties(item) -> list:
    """The elements with `itemprop` below lxml element `item` that belong to it, not to an item inside it (an
    element with `itemscope` is a property of the item around it, its descendants are its own), in document
    order: what extruct's `set:difference(.//*[@itemprop], .//*[@itemscope]//*[@itemprop])` selects. Each
    property's ancestors are climbed up to the first item, each ancestor once (`own` remembers what was
    found above it): the cost is the item's size, not the product of its properties and its nested items'
    ones, nor of its properties and their depth (a hostile page nests thousands of them deep)."""
    found = []
    own: Dict[Any, bool] = {}  # an element between `item` and a property -> whether no item lies in between
    for prop in _descendants_with_itemprop()(item):
        climbed = []
        parent = prop.getparent()
        while True:
            if parent is item:
                mine = True
                break
            if parent is None or "itemscope" in parent.attrib:
                mine = False
                break
            mine = own.get(parent)
            if mine is not None:
                break
            climbed.append(parent)
            parent = parent.getparent()
        for element in climbed:
            own[element] = mine
        if mine:
            found.append(prop)
    return found


def _from_microdata(item: Dict[str, Any], depth: int) -> Dict[str, Any]:
    """extruct's {"type": URL, "properties": {...}} as a JSON-LD-shaped {"@type": name, ...}."""
    out: Dict[str, Any] = {"@type": item.get("type")}
    props = item.get("properties")
    if isinstance(props, dict):
        for key, value in props.items():
            out[key] = _microdata_value(value, depth + 1)
    return out


def _microdata_value(value: Any, depth: int) -> Any:
    if depth > MAX_DEPTH:
        return None
    if isinstance(value, list):
        return [_microdata_value(v, depth + 1) for v in value[:MAX_AUTHORS]]
    if isinstance(value, dict) and "properties" in value:
        return _from_microdata(value, depth)
    return value


def type_names(item: Dict[str, Any]) -> List[str]:
    """An item's schema.org type names, lower-case, without the vocabulary's URL."""
    value = item.get("@type")
    names = value if isinstance(value, list) else [value]
    out = []
    for name in names[:10]:
        if isinstance(name, str) and name:
            out.append(name.rstrip("/").rsplit("/", 1)[-1].rsplit("#", 1)[-1].lower())
    return out


# the types whose headline, authors and dates are the page's, best first
_PRIMARY = (KINDS["article"] | KINDS["discussion"] | KINDS["product"]
            | {"qapage", "faqpage", "question", "videoobject", "course", "event", "jobposting", "softwareapplication",
               "book", "movie", "review", "creativework"})
_PAGE = frozenset({"webpage", "itempage", "aboutpage", "contactpage", "collectionpage", "profilepage",
                   "searchresultspage", "checkoutpage", "medicalwebpage", "realestatelisting"})


def _ranked_items(items: Sequence[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """Items whose properties speak for the page: the primary kinds first, then web pages, then the rest."""
    def rank(item: Dict[str, Any]) -> int:
        names = set(type_names(item))
        if names & KINDS["article"]:
            return 0
        if names & _PRIMARY:
            return 1
        if names & _PAGE:
            return 2
        return 3
    return sorted(items, key=rank)


def _text(value: Any, depth: int = 0) -> str:
    """A property value as text: a string, a number, or the name (or @value) of a nested object."""
    if depth > MAX_DEPTH:
        return ""
    if isinstance(value, str):
        # JSON-LD written by templates often escapes twice ("Maria &amp; Katerina")
        return _clean(html_unescape(value) if "&" in value else value)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, list):
        for v in value[:10]:
            text = _text(v, depth + 1)
            if text:
                return text
        return ""
    if isinstance(value, dict):
        for key in ("@value", "name", "text"):
            if key in value:
                return _text(value[key], depth + 1)
    return ""


def _prop(items: Sequence[Dict[str, Any]], *keys: str) -> str:
    for item in items:
        for key in keys:
            if key in item:
                text = _text(item[key])
                if text:
                    return text
    return ""


# ---- Open Graph, <meta> ----------------------------------------------------------------------------

# Open Graph's namespaces that need no prefix declaration (extruct's OpenGraphExtractor's list)
_OG_NAMESPACES = frozenset({"og", "music", "video", "article", "book", "profile", "product"})
_PREFIX = re.compile(r"\s*(\w+):\s*([^\s]+)")


def _opengraph(tree, root, metas: list) -> Dict[str, str]:
    """Open Graph properties as extruct reads them: `<meta property content>` in `<head>` whose prefix is
    one of Open Graph's or declared in a `prefix` attribute of `<html>` (`root`) or `<head>`. `metas`: the
    tree's `<meta>`s in document order (_Selected.meta), of which the head's own children are read."""
    head = tree.head
    if head is None:
        return {}
    prefixes = set(_OG_NAMESPACES)
    for el in (root, head):
        if el is not None:
            prefixes.update(name for name, _ in _PREFIX.findall((el.attributes.get("prefix") or "")[:1000]))
    out: Dict[str, str] = {}
    at = head.mem_id
    for el in metas:
        parent = el.parent
        if parent is None or parent.mem_id != at:  # extruct reads the head's own children
            continue
        prop, value = el.attributes.get("property"), el.attributes.get("content")
        if isinstance(prop, str) and isinstance(value, str):
            for name in _property_names(prop):
                if name.partition(":")[0] in prefixes:
                    out.setdefault(name.lower(), _clean(value))
    return out


def _meta(metas: list) -> Dict[str, str]:
    """Each `<meta>`'s name (property, itemprop, http-equiv) -> its first content (`metas`: _Selected.meta);
    each of a property's names (_property_names), where the element has no name attribute: a name attribute
    is one name, spaces and all ("updated date" is no "date")."""
    out: Dict[str, str] = {}
    for el in metas:
        a = el.attributes
        own, prop, value = a.get("name"), a.get("property"), a.get("content")
        key = own or prop or a.get("itemprop") or a.get("http-equiv")
        if not (key and value):
            continue
        for name in [key.strip()] if own or not prop else _property_names(prop):
            if len(out) >= 500:
                return out
            out.setdefault(name.lower()[:100], _clean(value))
    return out


def _property_names(prop: str) -> List[str]:
    """The names of a `<meta property>`: RDFa lets one attribute hold several, separated by spaces
    (`property="dc:description og:description"`), and Readability.js reads each; at most MAX_META_NAMES."""
    return prop[:MAX_META_NAMES * 100].split()[:MAX_META_NAMES]


_SPACE = re.compile(r"\s+")


def _clean(text: str) -> str:
    return _SPACE.sub(" ", text[:MAX_VALUE_CHARS * 2]).strip()[:MAX_VALUE_CHARS]


# ---- dates -------------------------------------------------------------------------------------------

_ISO_DAY = re.compile(r"^\s*(\d{4})-(\d{1,2})-(\d{1,2})")
_PUBLISHED_META = ("article:published_time", "og:published_time", "datepublished", "pubdate", "publishdate",
                   "publish_date", "publish-date", "date", "dc.date.issued", "dc.date", "dcterms.created",
                   "sailthru.date", "parsely-pub-date", "article.published", "published_time", "citation_date",
                   "citation_publication_date")
_MODIFIED_META = ("article:modified_time", "og:updated_time", "datemodified", "dcterms.modified",
                  "last-modified", "lastmod")


def _day(value: str, today: Optional[_dt.date]) -> Optional[str]:
    """The ISO day a declared date names, None when it names none or one outside [MIN_YEAR, today]."""
    match = _ISO_DAY.match(value or "")
    if not match:
        return None
    try:
        day = _dt.date(int(match.group(1)), int(match.group(2)), int(match.group(3)))
    except ValueError:
        return None
    if day.year < MIN_YEAR or day > (today or _dt.date.today()):
        return None
    return day.isoformat()


def _declared_date(declared: Declared, today: Optional[_dt.date], modified: bool = False) -> Optional[str]:
    items = _ranked_items(declared.items)
    keys = ("dateModified",) if modified else ("datePublished", "dateCreated", "uploadDate")
    for item in items:
        for key in keys:
            day = _day(_text(item.get(key)), today)
            if day:
                return day
    for key in (_MODIFIED_META if modified else _PUBLISHED_META):
        day = _day(declared.og.get(key) or declared.meta.get(key, ""), today)
        if day:
            return day
    return None


_YEAR = re.compile(r"(?:19|20)\d\d")


def _local_day(day: Optional[str], url: Optional[str], today: Optional[_dt.date]) -> Optional[str]:
    """A declared day, or the URL's full date where that is one day off: a time declared in UTC (or
    another zone) falls on the next or the previous day of the one the site dates the page by."""
    if not day or not url or not _YEAR.search(url):
        return day
    in_url = _url_date(url, today)
    if in_url and abs((_dt.date.fromisoformat(in_url) - _dt.date.fromisoformat(day)).days) == 1:
        return in_url
    return day


def _declared_days(declared: Declared, items: Sequence[Dict[str, Any]], today: Optional[_dt.date]) -> List:
    """(source, day) of each kind of day the markup declares, as _declared_date reads each: the first item's
    `datePublished`, `dateCreated` / `uploadDate`, `dateModified`, and the first published and modified
    `<meta>` dates."""
    out = []
    for source, keys in (("declared", ("datePublished",)), ("created", ("dateCreated", "uploadDate")),
                         ("modified", ("dateModified",))):
        day = next((d for item in items for key in keys if item.get(key)
                    for d in (_day(_text(item[key]), today),) if d), None)
        out.append((source, day))
    og, meta = declared.og, declared.meta
    for source, keys in (("meta", _PUBLISHED_META), ("meta_modified", _MODIFIED_META)):
        day = next((d for key in keys if key in og or key in meta
                    for d in (_day(og.get(key) or meta.get(key, ""), today),) if d), None)
        out.append((source, day))
    return out


def _publication_day(declared: Declared, items: Sequence[Dict[str, Any]], page, url: Optional[str],
                     today: Optional[_dt.date], page_type: Optional[str], probability: Optional[float],
                     date_chooser: Any) -> Tuple[Optional[str], Any]:
    """(the publication day, its dates.Candidates): the rules' day (dates.rules_day on the declared day, else
    the URL's or htmldate's), or, on a page of known type, the day `date_chooser` picks among every candidate
    (docs/metadata.md)."""
    declared_day = _declared_date(declared, today)
    day = _local_day(declared_day, url, today) or declared.date_published
    # on products and collections only what the markup or the URL gives (no day their text shows)
    h1, shown = page_shown(page if page_type not in UNDATED_TYPES else None, today)
    url_day = _url_date(url, today)
    rules = rules_day(day, h1, shown, url_day)
    sources = _declared_days(declared, items, today) + [("url", url_day)]
    if declared.date_published and not declared_day and declared.date_published != url_day:
        sources.append(("htmldate", declared.date_published))
    declares_article = any(set(type_names(item)) & KINDS["article"] for item in items) \
        or declared.og.get("og:type", "").lower() == "article"
    found = candidates(sources, h1, shown, rules, page_type, probability, declares_article)
    date_chooser = _resolved_chooser(date_chooser, page_type, declared)
    return (date_chooser.choose(found) if date_chooser is not None else rules), found


def _resolved_chooser(date_chooser: Any, page_type: Optional[str], declared: Declared):
    """The dates.DateChooser that dates the page, None for the rules' day: "default" is the shipped one (a
    file that cannot be used is counted in `declared.skipped`); a page without a type keeps the rules' day,
    the chooser weighs the type."""
    if page_type is None:
        return None
    if isinstance(date_chooser, str):
        try:
            return default_chooser()
        except DateChooserError:
            if "date-chooser" not in declared.skipped:
                declared.skipped += ("date-chooser",)
            return None
    return date_chooser


def _shown_day(day: Optional[str], page, today: Optional[_dt.date], url: Optional[str] = None) -> Optional[str]:
    """The rules' publication day (dates.rules_day) of a page handed `day` (declared, else the URL's or
    htmldate's)."""
    return rules_day(day, *page_shown(page, today), _url_date(url, today))


def _shown_decides(page, today: Optional[_dt.date]) -> bool:
    """Whether the rules' day is the same whatever day they are handed that is not the URL's
    (dates.shown_decides): htmldate's day is then not read."""
    return shown_decides(*page_shown(page, today))


_DIGIT = re.compile(r"\d")


# an empty document: htmldate reads the URL before the page, so on this it reads the URL alone
_NO_PAGE = "<html><body></body></html>"


def _url_date(url: Optional[str], today: Optional[_dt.date]) -> Optional[str]:
    """A full date in the URL ("/2025/09/04/"), htmldate's first rule (which ends its search where it
    finds one), read without parsing the page."""
    return _url_day(url, today or _dt.date.today()) if url and _URL_DAY.search(url) else None


@lru_cache(maxsize=256)  # the rules and the date's candidates both ask for it
def _url_day(url: str, today: _dt.date) -> Optional[str]:
    return _htmldate(_NO_PAGE, url, today, False)


# what htmldate's URL pattern needs at least: four digits (the year), a separator, a digit
_URL_DAY = re.compile(r"\d{4}[/_-]\d")


def _htmldate(text: str, url: Optional[str], today: Optional[_dt.date], extensive: bool,
              language: Optional[str] = None) -> Optional[str]:
    _quiet_logger("htmldate")  # before its import, which logs a line too
    import htmldate
    import htmldate.core
    import htmldate.extractors

    latest = today or _dt.date.today()
    # htmldate parses a string itself and prunes that tree in place (a tree of ours it would deep-copy
    # first); a string that starts with "http" and has no space it would fetch as a URL
    source = " " + text if text.startswith("http") and " " not in text else text
    if not extensive:
        day = htmldate.find_date(source, extensive_search=False, original_date=True, url=url,
                                 min_date=f"{MIN_YEAR}-01-01", max_date=latest.isoformat())
        return _day(day, today) if day else None
    # a page that declares no language dateparser knows: English alone. htmldate's own parser (every
    # locale) would cost some 30 MB and seconds to load, and found no other date on the evaluated pages
    parser = (_date_parser(language.split("-")[0].lower()) if language else None) or _date_parser("en")
    # htmldate takes no parser: ours stands in for its module's for this one search, under a lock, so a
    # search in another thread neither gets it nor restores the wrong one. Its last resort, `search_page`
    # (some twenty regular expressions over the whole page's markup, scripts included), is left out the
    # same way: on WCXB its dates were mostly a year's January 1st on undated pages (docs/metadata.md)
    with _DATE_PARSER_LOCK:
        # an htmldate without these hooks searches with its own parser and fallback, as before
        shipped = getattr(htmldate.extractors, "get_external_parser", None)
        last_resort = getattr(htmldate.core, "search_page", None)
        swap = parser is not None and shipped is not None
        if swap:
            htmldate.extractors.get_external_parser = lambda: parser
        if last_resort is not None:
            htmldate.core.search_page = _no_date
        try:
            day = htmldate.find_date(source, extensive_search=True, original_date=True, url=url,
                                     min_date=f"{MIN_YEAR}-01-01", max_date=latest.isoformat())
        finally:
            if swap:
                htmldate.extractors.get_external_parser = shipped
            if last_resort is not None:
                htmldate.core.search_page = last_resort
    return _day(day, today) if day else None


@lru_cache(maxsize=None)
def _quiet_logger(name: str) -> None:
    """A library's logger at INFO, unless a level was set for it: htmldate logs DEBUG lines on every page it
    dates ("found date in URL"), which flood a crawl's log at Scrapy's default level, DEBUG. Once a name.
    (extruct's microdata reader and dateparser log no such lines.)"""
    logger = logging.getLogger(name)
    if logger.level == logging.NOTSET:
        logger.setLevel(logging.INFO)


def _no_date(*args, **kwargs) -> None:
    return None


_DATE_PARSER_LOCK = threading.Lock()


@lru_cache(maxsize=64)
def _date_parser(code: str):
    """dateparser for a page in language `code` ("es"): that language and English, None for one dateparser
    lacks. htmldate's own parser tries every locale on each new text, some 40-200 times the CPU."""
    from dateparser import DateDataParser
    from dateparser.languages.loader import default_loader

    if code not in default_loader.get_locale_map():
        return None
    # htmldate's own settings; only the languages differ
    return DateDataParser(languages=sorted({code, "en"}), settings={
        "NORMALIZE": True, "PARSERS": ["custom-formats", "absolute-time"], "PREFER_DATES_FROM": "past",
        "PREFER_LOCALE_DATE_ORDER": True, "RETURN_AS_TIMEZONE_AWARE": False, "STRICT_PARSING": True})


# ---- bylines ------------------------------------------------------------------------------------------

_BYLINE = "a[rel*=author], [itemprop=author], [itemprop=name], [class*=author], [class*=byline]"


def _bylines(tree) -> List[str]:
    """Names in the page's byline markup (rel=author links, itemprop=author, an author or byline class),
    in document order: short texts of one to six words."""
    names: List[str] = []
    try:
        elements = tree.css(_BYLINE)
    except Exception:  # noqa: BLE001 - a selector over a hostile tree
        return names
    for el in elements[:50]:
        a = el.attributes
        if "itemscope" in a or (a.get("itemprop") == "name" and not _in_author(el)):
            continue  # an author item's name is read from its name property
        try:
            text = _clean(el.text() or "")[:200]
            text = "" if _CODE.search(text) else _byline_name(text)
        except Exception:  # noqa: BLE001
            continue
        if text and 1 <= len(text.split()) <= 6 and not any(ch.isdigit() for ch in text) and text not in names:
            names.append(text)
        if len(names) >= 3:
            break
    return names


def _byline_name(text: str) -> str:
    """The name in a byline element's text (_name_of); a sentence that opens with "Von", "Par", "Por" or "Door"
    ("Par ailleurs, ...") names no one, and a cue alone ("Von", as "By") is kept, and is no one's (_NOT_NAMES)."""
    if _SENTENCE_CUE.match(text) and not _CUE_ALONE.match(text) and _cued_names(text) is None:
        return ""
    return _name_of(text, role=True)


# forum software's poster names: phpBB's, XenForo's and vBulletin's `username` links (phpBB's
# `username-coloured` for staff, vBulletin 3's `bigusername`), FluxBB's post header (`.postleft dt strong`)
_POSTER = "[class~=username], [class~=username-coloured], [class~=bigusername], .postleft dt strong"


def _posters(tree) -> List[str]:
    """The first poster names in forum software's markup, in document order: on a thread, the first is the
    thread's starter. Logins keep their digits and dots; one to four words."""
    names: List[str] = []
    try:
        elements = tree.css(_POSTER)
    except Exception:  # noqa: BLE001 - a selector over a hostile tree
        return names
    for el in elements[:10]:
        if el.tag in ("input", "label", "form", "button"):
            continue  # a login form's "username" field
        try:
            text = _clean(el.text() or "")[:100].strip(_STRIP)
        except Exception:  # noqa: BLE001
            continue
        if text and len(text.split()) <= 4 and not _CODE.search(text) and text not in names:
            names.append(text)
        if len(names) >= 3:
            break
    return names


def _in_author(el) -> bool:
    parent = el.parent
    for _ in range(4):
        if parent is None:
            return False
        if parent.attributes.get("itemprop") == "author":
            return True
        parent = parent.parent
    return False


# ---- the headline ---------------------------------------------------------------------------------------

# " | Site", " - Site", " :: Site", " · Site", " — Site", " » Site": the separators titles put before
# (or after) the site's name
_TITLE_SEPARATORS = re.compile(r"\s+(?:\||-|–|—|::|·|•|»|«|/)\s+")


def headline_from_title(title: str, site_name: Optional[str] = None, host: Optional[str] = None,
                        headings: Sequence[str] = ()) -> str:
    """`title` without the site's name before or after it ("How to X | Acme" -> "How to X").

    A part that is one of the page's `headings` is the headline, unless it names the site or is the last
    part and shorter than the first (a site's logo is often an `<h1>`). Otherwise a part is the site's when
    it names the site (`site_name`, or the host's name) or, with nothing to compare, when it is the last
    part and shorter than the first. A title with no separator is returned as it is."""
    parts = [p for p in _TITLE_SEPARATORS.split(title.strip()) if p]
    if len(parts) <= 1:
        return title.strip()
    names = {_key(site_name or "")}
    if host:
        names.add(_key(_host_name(host)))
    names.discard("")
    heading_keys = {_key(h) for h in headings} - {""}
    for i, part in enumerate(parts):
        if _key(part) in heading_keys and not _names_site(part, names) \
                and not (i == len(parts) - 1 and len(part.split()) < len(parts[0].split())):
            return part
    kept = [p for p in parts if not _names_site(p, names)]
    if not kept:
        return parts[0]
    if len(kept) == len(parts) and len(kept[-1].split()) < len(kept[0].split()):
        kept = kept[:-1]
    return " - ".join(kept) if len(kept) > 1 else kept[0]


# a small lead for the candidates that are right most often alone, which also decides a tie (docs/metadata.md)
_HEADLINE_PRIOR = {"declared": 0.1, "title": 0.1}
# the first <h1> is the headline when its word-F1 with a declared headline, og:title, twitter:title or
# the <title> (each without the site's name) reaches this (docs/metadata.md)
HEADING_AGREEMENT = 0.5


def _headline(declared: Declared, primary, site: Optional[str], host: str, vote: bool) -> str:
    """The headline: the first `<h1>` where it agrees with one of the declared headline (JSON-LD or
    microdata), `og:title`, `twitter:title` and the `<title>` (HEADING_AGREEMENT), else the first of those,
    without the site's name; with `vote`, the candidate among these
    and the first `<h1>` that agrees most with the others: each scores its word overlap (F1) with every
    other candidate, plus _HEADLINE_PRIOR. Shops' and services' pages often declare an SEO title that
    their visible heading words differently, and the words most sources share are the headline's; a news
    article's declared headline is its headline."""
    def stripped(text: str) -> str:
        return headline_from_title(_unescaped(text), site, host, declared.headings) if text else ""

    h1 = _unescaped(next((h for h in declared.headings if h), ""))
    h1 = h1 if 1 <= len(h1.split()) <= 30 else ""
    candidates = [("declared", stripped(_prop(primary, "headline", "name"))),
                  ("og", stripped(declared.og.get("og:title", ""))),
                  ("twitter", stripped(declared.meta.get("twitter:title", ""))),
                  ("title", stripped(declared.title)),
                  ("h1", h1)]
    candidates = [(name, text) for name, text in candidates if text]
    tokens = [Counter(_TOKEN.findall(text.lower())) for _, text in candidates]
    if h1 and any(name != "h1" for name, _ in candidates):
        # the visible heading, where it words what the page declares about the same way (the declared
        # titles are often an SEO variant of it, or a description standing in for a headline)
        heading = tokens[-1]
        if max(_overlap(heading, tokens[i]) for i, (name, _) in enumerate(candidates) if name != "h1") \
                >= HEADING_AGREEMENT:
            return h1
    if not vote:
        return next((text for name, text in candidates if name != "h1"), "")
    if len(candidates) <= 1:
        return candidates[0][1] if candidates else ""
    best, best_score = "", -1.0
    for i, (name, text) in enumerate(candidates):
        score = _HEADLINE_PRIOR.get(name, 0.0) + sum(_overlap(tokens[i], tokens[j])
                                                      for j in range(len(candidates)) if j != i)
        if score > best_score + 1e-9:
            best, best_score = text, score
    return best


def _unescaped(text: str) -> str:
    """A title or heading escaped twice by its template ("SQL &#x26; AI", "TFC8&reg;") as it reads: the
    entity's name is no word of the headline."""
    return html_unescape(text) if "&" in text else text


_TOKEN = re.compile(r"\w+")


def _overlap(a: Counter, b: Counter) -> float:
    """Word-F1 of two bags of words."""
    common = sum((a & b).values())
    if not common:
        return 0.0
    return 2 * common / (sum(a.values()) + sum(b.values()))


def _key(text: str) -> str:
    return re.sub(r"[\W_]+", "", text.lower())


def _names_site(part: str, names: Iterable[str]) -> bool:
    key = _key(part)
    return bool(key) and any(key == n or (len(n) >= 4 and (n in key or key in n) and len(part.split()) <= 4)
                             for n in names)


_HEADING_TAGS = ("h1", "h2")


def _heading_near_region(page, extraction) -> str:
    """The text of the h1 (else h2) nearest the start of the main region the model kept: a heading
    inside the region or just before it, the one closest to its first kept node."""
    nodes = getattr(page, "nodes", None) or []
    kept = getattr(extraction, "nodes", None) or []
    if not nodes:
        return ""
    start = kept[0].index if kept and kept[0].index >= 0 else 0
    for tag in _HEADING_TAGS:
        best, distance = "", None
        for node in nodes:
            if node.tag != tag or node.boilerplate or node.hidden:
                continue
            words = len(node.content.split())
            if not 1 <= words <= 40:
                continue
            # before the region counts a little less than inside it: a page's heading often sits just
            # above the body the model keeps
            d = (start - node.index) if node.index <= start else (node.index - start) * 2
            if distance is None or d < distance:
                best, distance = node.content, d
        if best:
            return best
    return ""


# ---- putting it together ------------------------------------------------------------------------------

# whether a page that declares no author gets the names in its byline markup (docs/metadata.md)
BYLINE_AUTHORS = True
# the page types on which htmldate also searches the page's text for an undeclared publication date
DATE_SEARCH_TYPES = frozenset({"article", "forum"})
# the page types whose publication date is only a declared one or one in the URL (no htmldate)
UNDATED_TYPES = frozenset({"product", "collection"})
# the page types whose headline is the candidate most sources agree on (_headline), not the declared one
HEADLINE_VOTE_TYPES = frozenset({"forum", "product", "collection", "listing", "documentation", "service"})
# the page types whose text is read for a "By ..." line when the markup names no author
TEXT_BYLINE_TYPES = frozenset({"article", "forum"})


def describe(declared: Declared, page=None, extraction=None, classifier=None, *, url: Optional[str] = None,
             today: Optional[_dt.date] = None, bylines: Optional[bool] = None,
             page_type: Optional[str] = None, probability: Optional[float] = None,
             date_chooser: Any = "default") -> Metadata:
    """The page's Metadata from what it declares, its serialised `page` and the model's `extraction`
    (either may be None), and `classifier` (a pagetype.PageTypeClassifier; None: no page type).
    `page_type`, when known, decides the rules that differ by type (bylines in the text: articles and
    forum threads only); it and its `probability` are features of the date chooser. `date_chooser`: a
    dates.DateChooser, "default" (the shipped models/default/dates.json where there is one) or None (the
    rules' day)."""
    url = url or getattr(page, "url", None)
    host = _host(url)
    items = _ranked_items(declared.items)
    primary = _primary_items(declared.items)
    og, meta = declared.og, declared.meta
    site = (og.get("og:site_name") or _site_from_items(items) or meta.get("application-name")
            or meta.get("apple-mobile-web-app-title") or None)
    headline = (_headline(declared, primary, site, host, page_type in HEADLINE_VOTE_TYPES)
                or _heading_near_region(page, extraction) or None)
    result = Metadata(
        headline=headline or None,
        author=_page_authors(declared, primary, site, host, BYLINE_AUTHORS if bylines is None else bylines, page,
                             page_type in TEXT_BYLINE_TYPES, page_type == "forum"),
        date_published=None,
        date_modified=_declared_date(declared, today, modified=True),
        language=_language(declared, items),
        site_name=site,
        description=(meta.get("description") or og.get("og:description") or meta.get("twitter:description")
                     or _prop(primary, "description") or None),
        skipped=declared.skipped,
    )
    result.date_published, result.date_candidates = _publication_day(declared, items, page, url, today, page_type,
                                                                     probability, date_chooser)
    result.skipped = declared.skipped
    if classifier is not None and page is not None:
        result.page_type, result.page_type_probability = _page_type(classifier, page, declared)
        if page_type is None and result.page_type in TEXT_BYLINE_TYPES and not result.author:
            result.author = _page_authors(declared, primary, site, host, BYLINE_AUTHORS if bylines is None
                                          else bylines, page, True, result.page_type == "forum")
    return result


def page_metadata(html: HtmlInput, page=None, extraction=None, classifier=None, *, encoding: Optional[str] = None,
                  url: Optional[str] = None, today: Optional[_dt.date] = None,
                  date_chooser: Any = "default") -> Metadata:
    """read_declared + describe: the Metadata of one page from its HTML (`date_chooser` as describe's).
    Never raises: a failure past the extractors' own (which `read_declared` contains) gives an empty Metadata
    with skipped ("error",)."""
    url = url or getattr(page, "url", None)
    try:
        # a serialised page already knows whether it is too deep for lexbor; a page without nodes may not
        # have been checked (cut short as too large)
        built = page is not None and bool(getattr(page, "nodes", None))
        shared = getattr(page, "from_tree", None) if built else None
        if isinstance(shared, Declared) and _same_text(html, encoding, page):
            # read from the serializer's tree (read_tree): the page's text is decoded only if htmldate reads it
            declared, text = replace(shared), lambda: _text_of(html, encoding, [])
        else:
            declared, text = _read(html, encoding, url, getattr(page, "too_deep", None) if built else None)
        page_type = (_page_type(classifier, page, declared) if classifier is not None and page is not None
                     else (None, None))
        kind, probability = page_type
        date_chooser = _resolved_chooser(date_chooser, kind, declared)
        # htmldate's day is one of the chooser's candidates: read where the chooser dates the page
        chosen = date_chooser is not None and kind in date_chooser.page_types
        if text is not None and kind not in UNDATED_TYPES:
            # htmldate finds a date on most pages, dated or not: its search of the text only on articles
            # and forum threads, and on products and collections none of it (docs/metadata.md)
            searched = kind in DATE_SEARCH_TYPES
            after = (DATE_REGION_AFTER_UNSEARCHED if kind is not None and not searched
                     and (probability or 0.0) >= UNSEARCHED_REGION_PROBABILITY else DATE_REGION_AFTER)
            _date_from_page(declared, text, url, today, searched, after,
                            None if chosen else lambda: _shown_decides(page, today))
        elif text is not None and not _declared_date(declared, today):
            declared.date_published = _url_date(url, today)
        result = describe(declared, page, extraction, None, url=url, today=today, page_type=page_type[0],
                          probability=page_type[1], date_chooser=date_chooser)
        result.page_type, result.page_type_probability = page_type
        return result
    except Exception:  # noqa: BLE001 - metadata never costs a page its content
        return Metadata(skipped=("error",))


def _page_type(classifier, page, declared: Declared) -> Tuple[Optional[str], Optional[float]]:
    """The classifier's (type, probability): a pagetype.PageTypeClassifier reads what the page declares as
    well; another object with a `predict(page)` (a fixed type, a classifier of one's own) gets the page."""
    from .pagetype import PageTypeClassifier

    if isinstance(classifier, PageTypeClassifier):
        return classifier.predict(page, declared)
    return classifier.predict(page)


def page_type_evidence(declared: Declared) -> Dict[str, float]:
    """What a page declares about itself, as page-type features (pagetype.page_features): whether it
    names an author (declared, in byline markup, in forum software's poster markup), declares a
    publication or a modification day, which `<meta>` keys it has ("m:product:price:amount",
    "m:article:section"), its `<h1>`s and the parts of its `<title>`. Read from what `read_declared`
    already holds: no parse. Articles name authors and days, shops their prices, forums their posters."""
    feats: Dict[str, float] = {}
    if _authors(_primary_items(declared.items), declared.meta):
        feats["d:author"] = 1.0
    if declared.bylines:
        feats["d:byline"] = 1.0
    if declared.posters:
        feats["d:posters"] = math.log1p(len(declared.posters))
    if _declared_date(declared, None):
        feats["d:date"] = 1.0
    if _declared_date(declared, None, modified=True):
        feats["d:modified"] = 1.0
    for key in declared.meta:
        if len(key) < 40:  # a key's own name: which vocabulary the page speaks, kept where many sites share it
            feats["m:" + key] = 1.0
    feats["d:h1s"] = float(sum(1 for h in declared.headings if h))
    if declared.title:
        feats["d:title_parts"] = float(min(5, len(_TITLE_SEPARATORS.split(declared.title))))
    return feats


def _primary_items(items: Sequence[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """The items that speak for the page (_ranked_items), without the site's and the rest."""
    return [i for i in _ranked_items(items) if set(type_names(i)) & (_PRIMARY | _PAGE)]


def _host(url: Optional[str]) -> str:
    try:
        return (urlsplit(url or "").hostname or "").lower()
    except ValueError:
        return ""


def _site_from_items(items: Sequence[Dict[str, Any]]) -> str:
    for item in items:
        if set(type_names(item)) & _SITE_TYPES:
            name = _text(item.get("name"))
            if name:
                return name
    for item in items:
        publisher = item.get("publisher")
        if isinstance(publisher, dict):
            name = _text(publisher.get("name"))
            if name:
                return name
    return ""


# "By", "Written by", "Text by", "Author:", and "ByJane Doe" (a capital right after)
_BY = re.compile(r"^\s*(?:(?:[^\W\d_]+\s+)?by|author|von|par|por|door|di|da)(?:\s*[:\-]\s*|\s+|(?=(?-i:[A-Z])))",
                 re.I)
# what a byline puts after the name: " | Author", " - Editorial Team", and a role in capitals, glued on or
# not ("Keith Barry Senior Autos Reporter", "Jane RoeFounder at Acme")
_AFTER_NAME = re.compile(r"\s*(?:\||\s[-–—]\s).*$")
_STRIP = " ,;:|·-–—&"
_CODE = re.compile(r"[=;{}<>]")  # a script's or a template's text in an author-classed element
_ROLE = re.compile(r"(?:\s+|(?<=[a-z]))(?:Senior|Staff|Contributing|Former|Lead|Head|Chief|Managing|Associate|Founder"
                   r"|Co-[Ff]ounder|CEO|Writer|Reporter|Editor|Contributor|Consultant|Reviewer|Author|Correspondent"
                   r"|Columnist|Journalist)\b.*$")


def _name_of(text: str, role: bool = False) -> str:
    """An author text without its cue ("By", "Text by", "Author:") and what follows the name: a part after
    " | " or " - ", and with `role` (a byline's text) a role written after it."""
    text = _AFTER_NAME.sub("", _BY.sub("", text)).strip(_STRIP)
    if role:
        short = _ROLE.sub("", text).strip(_STRIP)
        if len(short.split()) >= 2:
            text = short
    words = text.split()
    half = len(words) // 2
    if half and len(words) % 2 == 0 and words[:half] == words[half:]:  # an avatar's alt text, then the name
        text = " ".join(words[:half])
    return text
# texts in author markup that name no one: form labels, placeholders, the word itself
_NOT_NAMES = frozenset({"name", "author", "authors", "the author", "about the author", "written by", "posted by",
                        "by", "von", "par", "por", "door", "undefined", "null", "none", "unknown", "admin",
                        "administrator", "webmaster", "anonymous", "guest", "user", "topic author", "thread starter",
                        "original poster", "sign in", "log in"})
# a commenter's "Jane says", a link's "View all posts", "Full bio": markup near bylines that names no one
_NOT_A_NAME = re.compile(r"\ssays$|^(?:view|see|read|more|full|all)\b|\b(?:posts|bio|profile)$")
_HANDLE = re.compile(r"^[a-z0-9_-]+(?:\.[a-z0-9_-]+){2,}$|^\d{6,}$")  # "page.head.author", a numeric id


def _page_authors(declared: Declared, primary, site: Optional[str], host: str, bylines: bool, page=None,
                  text_bylines: bool = False, forum: bool = False) -> List[str]:
    """The declared authors that can be names, else (`forum`) the first poster in forum software's markup,
    else the first such name in the byline markup, else (with `text_bylines`) a "By Jane Doe" line near
    the start of the serialised `page`."""
    names = [n for n in _authors(primary, declared.meta) if _a_name(n, site, host)]
    if names or not bylines:
        return names
    if forum:
        for name in declared.posters[:1]:
            if _a_name(name, site, host):
                return [name]
    for name in declared.bylines:
        if _a_name(name, site, host):
            return [name]
    names = _text_byline(page) if text_bylines and page is not None else []
    return [name for name in names if _a_name(name, site, host)]


def _host_name(host: str) -> str:
    """The host's name as titles and credits write it: the label before the last ("www.acme.com" -> "acme")."""
    label = host.lower().removeprefix("www.").split(".")
    return label[-2] if len(label) >= 2 else label[0]


# a month's name (English, German) before a day's number: "Jan. 31", "December 2", "März 3"
_MONTH_DAY = (r"(?-i:(?:Jan(?:uary|uar)?|Feb(?:ruary|ruar)?|Mar(?:ch)?|März|Apr(?:il)?|May|Mai|June?|Juni|July?|Juli"
              r"|Aug(?:ust)?|Sep(?:t|tember)?|Oct(?:ober)?|Okt(?:ober)?|Nov(?:ember)?|Dec(?:ember)?|Dez(?:ember)?))"
              r"\b\.?\s*\d")
# a name in a byline line: two to five capitalised words, a particle ("van", "de la") only before one of them
# ("Par Jeanne Dupont le 3 mars": "le" is not the name's), a month before a day none ("By Jane Doe Jan. 31, 2026")
_LINE_NAME = (r"(?-i:([A-Z][\w'’.-]*(?:\s+(?:(?:van|von|de|der|da|di|del|la|le)\s+)*(?!" + _MONTH_DAY
              + r")[A-Z][\w'’.-]*){1,4}))")
# "By Jane Doe", "Written by Jane van Doe", "Author: Jane Doe", "Von Max Muster", "Par Jeanne Dupont"
_TEXT_BY = re.compile(r"^((?:written|posted|words|reviewed|edited)\s+by|by|author:?|von|par|por|door)\s*:?\s*"
                      + _LINE_NAME, re.I)
# another name joined on: "By Jane Doe and John Roe", "Von Max Muster und Erika Muster", "Por Ana García y ..."
_MORE_NAMES = re.compile(r"\s*,?\s*(?:and|und|et|y|en|&)\s+" + _LINE_NAME, re.I)
# German, French, Spanish and Dutch sentences open with these words and capitalised words ("Von Berliner
# Schulen wurden ..."): a line with one of these cues is a byline only where a byline's rest follows the name
_SENTENCE_CUES = frozenset({"von", "par", "por", "door"})
_SENTENCE_CUE = re.compile(r"\s*(?:von|par|por|door)\b", re.I)
TEXT_BYLINE_NODES = 300   # the first nodes of a page read for a byline line
_CUE_ALONE = re.compile(r"^(?:(?:written|posted|words|reviewed|edited)\s+by|by|author|von|par|por|door)\s*:?$", re.I)


def _text_byline(page) -> List[str]:
    """The names in the first short "By ..." line among the page's first nodes, outside navigation,
    footers and hidden markup; [] for none."""
    for _indices, names, _end, _line in _text_bylines(page):
        return names
    return []


def _cued_names(line: str) -> Optional[Tuple[List[str], int]]:
    """The names a "By ..." line gives (one, or several joined by "and", "und", "et", ...) and where they end;
    None for a line that is no byline (no cue and name, or a cue of _SENTENCE_CUES whose name a byline's
    rest does not follow)."""
    match = _TEXT_BY.match(line)
    if match is None:
        return None
    names, end = [match.group(2)], match.end()
    while len(names) < MAX_AUTHORS:
        more = _MORE_NAMES.match(line, end)
        if more is None:
            break
        names.append(more.group(1))
        end = more.end()
    if match.group(1).lower() in _SENTENCE_CUES and not _BYLINE_REST.match(line, end):
        return None
    return [name.strip(" ,.|") for name in names], end


def _text_bylines(page):
    """(node indices, names, where they end, the line) of each short "By ..." line among the page's first nodes
    (_cued_names), outside navigation, footers and hidden markup; a cue alone ("Written by") and the next node,
    the name, are one line of two nodes."""
    cue: Optional[Tuple[int, str]] = None
    for k, node in enumerate((getattr(page, "nodes", None) or [])[:TEXT_BYLINE_NODES]):
        if node.boilerplate or node.hidden or len(node.content) > 80:
            cue = None
            continue
        text = node.content.strip()
        line = f"{cue[1]} {text}" if cue else text
        cued = _cued_names(line)
        if cued and (not cue or cued[1] == len(line)):
            yield ((cue[0], k) if cue else (k,)), cued[0], cued[1], line
        cue = (k, text) if _CUE_ALONE.match(text) else None


# what a byline line says after the name, if anything: a role, a desk, another name, a day ("By Jane Doe,
# City desk", "By Jane Doe | March 3, 2025", "By Jane Doe December 2, 2025", "Par Jeanne Dupont le 3 mars
# 2025", "Von Max Muster und dpa");
# a sentence that opens with "By Jane Doe's" goes on otherwise
_BYLINE_REST = re.compile(r"\s*(?:$|[,|·•/(–—-]|(?:and|und|et|y|en|&|for|für|pour|para|voor|in|on|at|with|via)\s"
                          r"|(?:[^\W\d_]{1,3}\.?\s+)?\d|" + _MONTH_DAY + ")", re.I)
# a dateline says its day and little else ("Updated Dec 4, 2025 · 5 min read", "Published: 3 March 2025")
DATELINE_OTHER_WORDS = 4
# a numeric day ("06.11.2025, 21:00 Uhr", "3/4/2025"): a dateline's, whichever order it is written in (the
# date fields do not read it: the order is unknown)
_NUMERIC_DAY = re.compile(r"\b(?:\d{1,2}[./-]\d{1,2}[./-](?:19|20)?\d\d|(?:19|20)\d\d[./]\d{1,2}[./]\d{1,2})\b")
_LETTERS = re.compile(r"[^\W\d_]+")


def byline_lines(page) -> Dict[int, str]:
    """{node index: "byline" or "dateline"} of the page's byline and dateline lines, as the metadata reads an
    author and a day from them: the first short "By ..." line, the one `_text_byline` reads (both nodes of a
    cue alone and its name), where it holds the name and at most a role, a desk, another name or a day after
    it (the lines after it are mostly teasers' and comments' bylines), and the short texts near the first
    `<h1>` that show a day (`_shown_day`'s datelines) and at most DATELINE_OTHER_WORDS words beside it.
    Pure: the serialised page only."""
    out: Dict[int, str] = {}
    for indices, _names, end, line in _text_bylines(page):
        if _BYLINE_REST.match(line, end):
            out.update(dict.fromkeys(indices, "byline"))
        break
    nodes = (getattr(page, "nodes", None) or [])[:SHOWN_DATE_NODES]
    h1 = next((k for k, node in enumerate(nodes) if node.tag == "h1" and not node.hidden), None)
    if h1 is None:
        return out
    for k in range(max(0, h1 - SHOWN_DATE_NEAR), min(len(nodes), h1 + SHOWN_DATE_NEAR + 1)):
        node = nodes[k]
        text = node.content
        if node.hidden or node.boilerplate or len(text) > SHOWN_DATE_CHARS or not _DIGIT.search(text):
            continue
        day = _SHOWN_DAY if _shown_days(text, None) else _NUMERIC_DAY if _NUMERIC_DAY.search(text) else None
        if day is not None and len(_LETTERS.findall(day.sub(" ", text))) <= DATELINE_OTHER_WORDS:
            out.setdefault(k, "dateline")
    return out


def _a_name(name: str, site: Optional[str], host: str) -> bool:
    """Whether an author text can be a person's (or a team's, or the site's) name: not a form label or a
    placeholder, not a template placeholder or a numeric id."""
    key = name.strip(" *:").lower()
    return bool(key) and key not in _NOT_NAMES and not _HANDLE.match(name) and not _NOT_A_NAME.search(key)


# <meta> names and properties that hold the author, first found first
_AUTHOR_META = ("author", "article:author", "dc.creator", "parsely-author", "sailthru.author", "byl",
                "cxenseparse:author")
# the labels of a Twitter card's label/data pairs (Yoast writes "Written by") whose data is the author
_TWITTER_AUTHOR_LABELS = frozenset({"written by", "author", "by"})


def _twitter_written_by(meta: Dict[str, str]) -> List[str]:
    """The author a Twitter card's `twitter:labelN` / `twitter:dataN` pair gives ("Written by", "Jane Doe")."""
    for n in range(1, 5):
        if meta.get(f"twitter:label{n}", "").strip(" :").lower() in _TWITTER_AUTHOR_LABELS:
            value = meta.get(f"twitter:data{n}", "")
            if value:
                return [value]
    return []


def _authors(items: Sequence[Dict[str, Any]], meta: Dict[str, str]) -> List[str]:
    names: List[str] = []
    for item in items:
        value = item.get("author") or item.get("creator")
        if value:
            names = [n for n in (_text(v) for v in (value if isinstance(value, list) else [value])[:MAX_AUTHORS]) if n]
            if names:
                break
    if not names:
        for key in _AUTHOR_META:
            value = meta.get(key, "")
            if value:
                names = [value]
                break
    if not names:
        names = _twitter_written_by(meta)
    out: List[str] = []
    for name in names:
        name = _name_of(name)
        # a profile URL or a handle is not a name
        if not name or "://" in name or name.startswith(("@", "www.")) or len(name) > 100:
            continue
        if name not in out:
            out.append(name)
    return out[:MAX_AUTHORS]


_LANG = re.compile(r"^[A-Za-z]{2,3}(?:-[A-Za-z0-9]{2,8})*$")


def _language(declared: Declared, items: Sequence[Dict[str, Any]]) -> Optional[str]:
    for value in (declared.lang, declared.og.get("og:locale", ""), _prop(items, "inLanguage"),
                  declared.meta.get("content-language", ""), declared.meta.get("language", "")):
        tag = bcp47(value)
        if tag:
            return tag
    return None


def bcp47(value: str) -> Optional[str]:
    """A language tag in BCP 47's usual case ("en_us" -> "en-US", "zh-hant-tw" -> "zh-Hant-TW"); None for
    a value that is no tag."""
    value = (value or "").strip().replace("_", "-").split(",")[0].strip()
    if not _LANG.match(value):
        return None
    parts = value.split("-")
    out = [parts[0].lower()]
    for part in parts[1:]:
        if len(part) == 4 and part.isalpha():
            out.append(part.title())
        elif len(part) == 2 and part.isalpha() or len(part) == 3 and part.isdigit():
            out.append(part.upper())
        else:
            out.append(part.lower())
    return "-".join(out)
