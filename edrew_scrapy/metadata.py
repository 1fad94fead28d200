"""A page's metadata: headline, authors, dates, language, site name, description and page type.

What the page declares comes first: JSON-LD and microdata (schema.org, read with extruct), Open Graph
and Twitter cards, `<meta>` and `<html lang>`; the publication date where none is declared comes from
htmldate, which also reads dates in the URL and the page's date elements. Then the page's own evidence:
with no declared headline, the `<title>` without its " | Site name" tail (a part equal to an `<h1>`
first), or else the large heading nearest the main region the model kept (`extract`); bylines give the
author where none is declared; the page type comes from pagetype.py's classifier.

Hostile input costs a bounded amount and never raises: the HTML read here is cut at MAX_HTML_CHARS,
a JSON-LD block longer than MAX_JSONLD_CHARS or a page with more than MAX_ITEMSCOPES microdata items
is not read, a declared value is cut at MAX_VALUE_CHARS, and an extractor that raises costs only
its own part; each of these is named in `Metadata.skipped` (the Scrapy glue counts them). A date in
the future or before MIN_YEAR is dropped. Pure: no Scrapy, no model.
"""
from __future__ import annotations

import datetime as _dt
import re
from dataclasses import asdict, dataclass, field
from html import unescape as html_unescape
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union
from urllib.parse import urlsplit

from .declared import KINDS

__all__ = ["Declared", "Metadata", "describe", "headline_from_title", "page_metadata", "read_declared",
           "MAX_HTML_CHARS", "MAX_JSONLD_CHARS", "MAX_ITEMSCOPES", "MIN_YEAR", "METADATA_FIELDS"]

# the first this many characters of a page are read for its metadata (declared markup sits in <head>
# or near the start on nearly every page; a 4 MB page parses in some 40 ms)
MAX_HTML_CHARS = 4_000_000
MAX_JSONLD_CHARS = 500_000     # one <script type="application/ld+json"> block
MAX_ITEMSCOPES = 2_000         # microdata items on a page (extruct walks each item's subtree)
MAX_VALUE_CHARS = 2_000        # one declared value (a description, a name)
MAX_AUTHORS = 20
MAX_DEPTH = 8                  # nesting followed in a JSON-LD or microdata item
MIN_YEAR = 1990

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
    # "opengraph", "parse", "date"
    skipped: Tuple[str, ...] = ()

    def fields(self) -> Dict[str, Any]:
        """The METADATA_FIELDS as a dict (what an item or a JSON record gets)."""
        values = asdict(self)
        return {name: values[name] for name in METADATA_FIELDS}


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
    headings: List[str] = field(default_factory=list)          # the first <h1> texts
    skipped: Tuple[str, ...] = ()


HtmlInput = Union[str, bytes]


def read_declared(html: HtmlInput, *, encoding: Optional[str] = None, url: Optional[str] = None,
                  today: Optional[_dt.date] = None, dates: bool = True, extensive_dates: bool = False) -> Declared:
    """The declared metadata of a page (bytes are decoded as `encoding`, else UTF-8 with replacement).
    `extensive_dates`: htmldate also searches the page's text for dates. Never raises: what cannot be
    read is left out and named in `skipped`."""
    declared, tree = _read(html, encoding, url, today)
    if dates and tree is not None:
        _date_from_page(declared, tree, url, today, extensive_dates)
    return declared


def _date_from_page(declared: Declared, tree, url: Optional[str], today: Optional[_dt.date], extensive: bool) -> None:
    """htmldate's publication date, when the markup declares none."""
    if _declared_date(declared, today):
        return
    try:
        declared.date_published = _htmldate(tree, url, today, extensive)
    except Exception:  # noqa: BLE001 - htmldate's parsers on hostile text
        declared.skipped += ("date",)


def _read(html: HtmlInput, encoding: Optional[str], url: Optional[str], today: Optional[_dt.date]):
    """(Declared without htmldate's date, the lxml tree or None)."""
    import lxml.html

    skipped: List[str] = []
    text = _decode(html, encoding)
    if len(text) > MAX_HTML_CHARS:
        text = text[:MAX_HTML_CHARS]
        skipped.append("too-large")
    try:
        tree = lxml.html.fromstring(text, parser=lxml.html.HTMLParser(remove_comments=True))
    except Exception:  # noqa: BLE001 - lxml refuses empty or control-character-only documents
        return Declared(skipped=tuple(skipped + ["parse"])), None
    declared = Declared(lang=_clean(tree.get("lang") or tree.get("xml:lang") or ""))
    titles = tree.xpath("//title")
    if titles:
        declared.title = _clean(titles[0].text_content())
    declared.items.extend(_jsonld_items(tree, url, skipped))
    declared.items.extend(_microdata_items(tree, url, skipped))
    try:
        declared.og = _opengraph(tree)
    except Exception:  # noqa: BLE001 - a hostile prefix attribute
        skipped.append("opengraph")
    declared.meta = _meta(tree)
    if not _authors(_primary_items(declared.items), declared.meta):  # most pages that name one declare it
        declared.bylines = _bylines(tree)
    declared.headings = [_clean(h.text_content()) for h in tree.xpath("//h1")[:5]]
    declared.skipped = tuple(skipped)
    return declared, tree


def _decode(html: HtmlInput, encoding: Optional[str]) -> str:
    if isinstance(html, str):
        return html
    codec = "utf-8"
    if encoding:
        import codecs

        # a Content-Type header ("text/html; charset=latin-1") or a bare label
        label = encoding.split("charset=", 1)[-1].split(";")[0].strip(" \"'") or "utf-8"
        try:
            codec = codecs.lookup(label).name
        except LookupError:
            pass
    try:
        return html[:MAX_HTML_CHARS * 4].decode(codec, errors="replace")
    except Exception:  # noqa: BLE001 - a codec that is not a text encoding ("base64")
        return html[:MAX_HTML_CHARS * 4].decode("utf-8", errors="replace")


# ---- JSON-LD and microdata -----------------------------------------------------------------------------

def _jsonld_items(tree, url: Optional[str], skipped: List[str]) -> List[Dict[str, Any]]:
    from extruct.jsonld import JsonLdExtractor

    extractor = JsonLdExtractor()
    items: List[Dict[str, Any]] = []
    for script in tree.xpath('//script[@type="application/ld+json"]'):
        if len(script.text or "") > MAX_JSONLD_CHARS:
            skipped.append("jsonld-too-large")
            continue
        try:  # one block at a time: a broken block costs only itself
            found = extractor.extract_items(script, base_url=url)
        except Exception:  # noqa: BLE001 - invalid JSON, RecursionError on deep nesting
            skipped.append("jsonld")
            continue
        for item in found:
            items.extend(_flatten_graph(item))
    return items


def _flatten_graph(item: Any) -> List[Dict[str, Any]]:
    if not isinstance(item, dict):
        return []
    graph = item.get("@graph")
    if isinstance(graph, list):
        return [node for node in graph if isinstance(node, dict)]
    return [item]


def _microdata_items(tree, url: Optional[str], skipped: List[str]) -> List[Dict[str, Any]]:
    from extruct.w3cmicrodata import MicrodataExtractor

    n = int(tree.xpath("count(//*[@itemscope])"))
    if n == 0:
        return []
    if n > MAX_ITEMSCOPES:
        skipped.append("microdata-too-many")
        return []
    try:
        found = MicrodataExtractor(nested=True).extract_items(tree, url)
    except Exception:  # noqa: BLE001 - RecursionError on deep nesting, itemref loops
        skipped.append("microdata")
        return []
    return [_from_microdata(item, 0) for item in found if isinstance(item, dict)]


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

def _opengraph(tree) -> Dict[str, str]:
    from extruct.opengraph import OpenGraphExtractor

    out: Dict[str, str] = {}
    for item in OpenGraphExtractor().extract_items(tree):
        for prop, value in item.get("properties", ()):
            if isinstance(prop, str) and isinstance(value, str):
                out.setdefault(prop.lower(), _clean(value))
    return out


def _meta(tree) -> Dict[str, str]:
    out: Dict[str, str] = {}
    for el in tree.iter("meta"):
        key = el.get("name") or el.get("property") or el.get("itemprop") or el.get("http-equiv")
        value = el.get("content")
        if key and value and len(out) < 500:
            out.setdefault(key.strip().lower()[:100], _clean(value))
    return out


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


def _htmldate(tree, url: Optional[str], today: Optional[_dt.date], extensive: bool) -> Optional[str]:
    import htmldate

    latest = today or _dt.date.today()
    day = htmldate.find_date(tree, extensive_search=extensive, original_date=True, url=url,
                             min_date=f"{MIN_YEAR}-01-01", max_date=latest.isoformat())
    return _day(day, today) if day else None


# ---- bylines ------------------------------------------------------------------------------------------

_BYLINE = ("//a[@rel][contains(@rel, 'author')] | //*[@itemprop='author'] | //*[@itemprop='name']"
           " | //*[@class][contains(@class, 'author') or contains(@class, 'byline')]")


def _bylines(tree) -> List[str]:
    """Names in the page's byline markup (rel=author links, itemprop=author, an author or byline class),
    in document order: short texts of one to six words."""
    names: List[str] = []
    try:
        elements = tree.xpath(_BYLINE)
    except Exception:  # noqa: BLE001 - an XPath over a hostile tree (too deep for libxml2)
        return names
    for el in elements[:50]:
        if el.get("itemscope") is not None or (el.get("itemprop") == "name" and not _in_author(el)):
            continue  # an author item's name is read from its name property
        try:
            text = _BY.sub("", _clean(el.text_content())[:200]).strip(" ,;:|·-")
        except Exception:  # noqa: BLE001
            continue
        if text and 1 <= len(text.split()) <= 6 and not any(ch.isdigit() for ch in text) and text not in names:
            names.append(text)
        if len(names) >= 3:
            break
    return names


def _in_author(el) -> bool:
    parent = el.getparent()
    for _ in range(4):
        if parent is None:
            return False
        if parent.get("itemprop") == "author":
            return True
        parent = parent.getparent()
    return False


# ---- the headline ---------------------------------------------------------------------------------------

# " | Site", " - Site", " :: Site", " · Site", " — Site", " » Site": the separators titles put before
# (or after) the site's name
_TITLE_SEPARATORS = re.compile(r"\s+(?:\||-|–|—|::|·|•|»|«|/)\s+")


def headline_from_title(title: str, site_name: Optional[str] = None, host: Optional[str] = None,
                        headings: Sequence[str] = ()) -> str:
    """`title` without the site's name before or after it ("How to X | Acme" -> "How to X").

    A part that is one of the page's `headings` is the headline. Otherwise a part is the site's when it
    names the site (`site_name`, or the host's name) or, with nothing to compare, when it is the last
    part and shorter than the first. A title with no separator is returned as it is."""
    parts = [p for p in _TITLE_SEPARATORS.split(title.strip()) if p]
    if len(parts) <= 1:
        return title.strip()
    heading_keys = {_key(h) for h in headings} - {""}
    for part in parts:
        if _key(part) in heading_keys:
            return part
    names = {_key(site_name or "")}
    if host:
        label = host.lower().removeprefix("www.").split(".")
        names.add(_key(label[-2] if len(label) >= 2 else label[0]))
    names.discard("")
    kept = [p for p in parts if not _names_site(p, names)]
    if not kept:
        return parts[0]
    if len(kept) == len(parts) and len(kept[-1].split()) < len(kept[0].split()):
        kept = kept[:-1]
    return " - ".join(kept) if len(kept) > 1 else kept[0]


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
# the page types on which htmldate also searches the page's text for the publication date
EXTENSIVE_DATE_TYPES = frozenset({"article", "forum"})


def describe(declared: Declared, page=None, extraction=None, classifier=None, *, url: Optional[str] = None,
             today: Optional[_dt.date] = None, bylines: Optional[bool] = None) -> Metadata:
    """The page's Metadata from what it declares, its serialised `page` and the model's `extraction`
    (either may be None), and `classifier` (a pagetype.PageTypeClassifier; None: no page type)."""
    url = url or getattr(page, "url", None)
    host = _host(url)
    items = _ranked_items(declared.items)
    primary = _primary_items(declared.items)
    og, meta = declared.og, declared.meta
    site = (og.get("og:site_name") or _site_from_items(items) or meta.get("application-name")
            or meta.get("apple-mobile-web-app-title") or None)
    # the <title> before the heading nearest the kept content: on WCXB dev's pages that declare no
    # headline the title (its site's name dropped) scored 0.833 word-F1, the heading 0.656
    headline = (_prop(primary, "headline", "name") or og.get("og:title") or meta.get("twitter:title")
                or declared.title or getattr(page, "title", "") or _heading_near_region(page, extraction))
    headline = headline_from_title(headline, site, host, declared.headings) if headline else None
    result = Metadata(
        headline=headline or None,
        author=_authors(primary, meta) or (declared.bylines[:1] if (BYLINE_AUTHORS if bylines is None
                                                                         else bylines) else []),
        date_published=_declared_date(declared, today) or declared.date_published,
        date_modified=_declared_date(declared, today, modified=True),
        language=_language(declared, items),
        site_name=site,
        description=(meta.get("description") or og.get("og:description") or meta.get("twitter:description")
                     or _prop(primary, "description") or None),
        skipped=declared.skipped,
    )
    if classifier is not None and page is not None:
        result.page_type, result.page_type_probability = classifier.predict(page)
    return result


def page_metadata(html: HtmlInput, page=None, extraction=None, classifier=None, *, encoding: Optional[str] = None,
                  url: Optional[str] = None, today: Optional[_dt.date] = None) -> Metadata:
    """read_declared + describe: the Metadata of one page from its HTML. Never raises: a failure past
    the extractors' own (which `read_declared` contains) gives an empty Metadata with skipped ("error",)."""
    url = url or getattr(page, "url", None)
    try:
        declared, tree = _read(html, encoding, url, today)
        page_type = classifier.predict(page) if classifier is not None and page is not None else (None, None)
        if tree is not None:
            # htmldate's search of the text finds a date on nearly every page, dated or not: only where
            # the page is an article or a forum thread (docs/metadata.md)
            _date_from_page(declared, tree, url, today, page_type[0] in EXTENSIVE_DATE_TYPES)
        result = describe(declared, page, extraction, None, url=url, today=today)
        result.page_type, result.page_type_probability = page_type
        return result
    except Exception:  # noqa: BLE001 - metadata never costs a page its content
        return Metadata(skipped=("error",))


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
        if set(type_names(item)) & {"website", "organization", "newsmediaorganization", "corporation"}:
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


_BY = re.compile(r"^\s*(?:by|von|par|por|door|di|da)\s*[:\-]?\s+", re.I)


def _authors(items: Sequence[Dict[str, Any]], meta: Dict[str, str]) -> List[str]:
    names: List[str] = []
    for item in items:
        value = item.get("author") or item.get("creator")
        if value:
            names = [n for n in (_text(v) for v in (value if isinstance(value, list) else [value])[:MAX_AUTHORS]) if n]
            if names:
                break
    if not names:
        for key in ("author", "article:author", "dc.creator", "parsely-author", "sailthru.author", "byl"):
            value = meta.get(key, "")
            if value:
                names = [value]
                break
    out: List[str] = []
    for name in names:
        name = _BY.sub("", name).strip()
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
