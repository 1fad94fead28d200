"""Labelled pages for training and evaluation: one reader per dataset format, all yielding LabelledPage.

Readers (each `iter_pages(...) -> Iterator[LabelledPage]`, lazy, document order of the dataset):

- :mod:`edrew_scrapy.data.wcxb`   WCXB main-content benchmark (Foley 2026, CC-BY-4.0)
- :mod:`edrew_scrapy.data.swde`   SWDE attribute pages (Hao et al., SIGIR 2011)
- :mod:`edrew_scrapy.data.simple` a folder of HTML files plus a JSON/JSONL label file (users' own data)
- :mod:`edrew_scrapy.data.snippets` weak labels from must-keep / must-drop snippets (trafilatura's pages)

`labels[i]` is 1 when `page.nodes[i]` is relevant content, else 0; a page of weak labels also has
`known[i]`, 0 for a node its labels say nothing about (left out of the head's loss). The raw HTML is not kept in memory;
:func:`read_source` reads it again from `meta["source"]` for extractors that need HTML.

A file a reader cannot use (unreadable, broken gzip, not JSON, a key of the wrong type) raises
:class:`DatasetError`, whose message names the file (and the line of a JSONL file) and the problem.
"""
from __future__ import annotations

import gzip
import html as html_lib
import json
import re
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import List, Optional
from urllib.parse import urlsplit

from ..page import Page

__all__ = ["DatasetError", "LabelledPage", "normalize_text", "words", "read_source", "read_text", "read_json",
           "expect", "expect_strings", "describe", "domain_of", "registrable_domain"]

_WS = re.compile(r"\s+")
# The WCXB metric's tokens: runs of word characters, lower-cased.
_WORD = re.compile(r"\w+")


class DatasetError(ValueError):
    """A dataset file that cannot be read or does not hold what its format says; the message, one line,
    names the file (and line) and the problem. A ValueError, so callers that catch ValueError for bad
    input keep working."""


# JSON's names for Python's types, as a dataset's author wrote them
_JSON_TYPES = {dict: "an object", list: "a list", str: "a string", bool: "true or false", int: "a number",
               float: "a number", type(None): "null"}


def expect(value, kind: type, where: str, default=None):
    """`value`, or `default` for null; a DatasetError naming `where` (the file and the key) when it is
    not a `kind`."""
    if value is None:
        return default
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise DatasetError(f"{where} must be {_JSON_TYPES.get(kind, kind.__name__)}, not {describe(value)}")
    return value


def expect_strings(value, where: str) -> list:
    """A list of strings (null: none); a DatasetError naming `where` otherwise: a lone string would be
    read as its characters."""
    if value is None:
        return []
    odd = [v for v in value if not isinstance(v, str)] if isinstance(value, list) else [value]
    if odd:
        what = f"a list holding {describe(odd[0])}" if isinstance(value, list) else describe(value)
        raise DatasetError(f"{where} must be a list of strings, not {what}")
    return value


def describe(value) -> str:
    """How the value reads in its JSON file, shortened: `a number 5`, `a string "oops"`, `null`."""
    text = json.dumps(value, ensure_ascii=False, default=repr)
    text = text if len(text) <= 40 else text[:37] + "..."
    if value is None or isinstance(value, bool):
        return text
    return f"{_JSON_TYPES.get(type(value), type(value).__name__)} {text}"


def read_text(path, first_line: bool = False) -> str:
    """The text of a UTF-8 file (a BOM dropped), or only its first line; a DatasetError naming the file
    otherwise."""
    try:
        with open(path, "rb") as f:  # bytes, so that a decoding error gives the byte's place in the file
            return (f.readline() if first_line else f.read()).decode("utf-8-sig")
    except OSError as exc:
        raise DatasetError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise DatasetError(f"{path}: not UTF-8 text (byte {exc.start})") from None


def read_json(path):
    """The JSON value of a UTF-8 file; a DatasetError naming the file otherwise."""
    text = read_text(path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise DatasetError(f"{path}: not valid JSON ({exc})") from None
    except RecursionError:
        raise DatasetError(f"{path}: JSON nested too deeply to read") from None


@dataclass
class LabelledPage:
    """A serialized page with one 0/1 label per node.

    `page_type_or_site` is WCXB's page type ("article", "forum", ...) or SWDE's site name; `domain` is
    the page's host ("www." dropped); `group` the split key a dataset names itself (the simple format's
    `group`), else empty: cross-validation then groups by the host's registrable domain
    (:func:`edrew_scrapy.data.splits.by_domain`), so a site is never split across folds. `meta` holds the
    dataset's extras: "source" (path of the HTML file) always; WCXB adds "main_content", "with",
    "without", "title"; SWDE adds "values" {attr: [values]} and "node_attrs" (one list of attribute
    names per node, aligned with page.nodes).

    `known` is None for a fully labelled page; a weakly labelled page (data.snippets) has one 0/1 per node,
    1 where `labels` says something about the node, and `meta["weak"]` true.
    """

    page_id: str
    url: Optional[str]
    domain: str
    page_type_or_site: str
    page: Page
    labels: List[int]
    meta: dict = field(default_factory=dict)
    group: str = ""
    known: Optional[List[int]] = None

    @property
    def relevant_text(self) -> str:
        """The text a perfect node classifier would extract from this page, nodes joined by newlines."""
        return "\n".join(n.content for n, y in zip(self.page.nodes, self.labels) if y)


def normalize_text(text: str) -> str:
    """HTML-unescaped, whitespace-collapsed, case-folded text: how node texts and values are compared."""
    return _WS.sub(" ", html_lib.unescape(text or "")).strip().casefold()


def words(text: str) -> List[str]:
    """Word tokens as WCXB counts them (`\\w+`, lower-cased)."""
    return [w.lower() for w in _WORD.findall(text or "")]


def read_source(path) -> bytes:
    """Bytes of an HTML file, gunzipped when the name ends in .gz; a DatasetError naming it otherwise."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except (OSError, ValueError) as exc:  # ValueError: a name with a NUL character
        raise DatasetError(f"{path}: cannot read: {getattr(exc, 'strerror', None) or exc}") from None
    if path.suffix == ".gz":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as exc:  # truncated or not gzip at all
            raise DatasetError(f"{path}: broken gzip file ({exc})") from None
    return data


def domain_of(url: Optional[str], where: str = "") -> str:
    """Host of a URL without a leading "www.", the grouping key for page-disjoint splits; a
    DatasetError naming `where` (the file and record) for a URL that cannot be parsed ("http://[x")."""
    if not url:
        return ""
    try:
        host = (urlsplit(url).hostname or "").lower()
    except ValueError as exc:
        raise DatasetError(f"{where or 'url'}: {url!r} is not a URL ({exc})") from None
    return host[4:] if host.startswith("www.") else host


# Second-level labels under which a country's registry sells names (bbc.co.uk, abc.net.au, gov.uk sites):
# under a two-letter top-level domain, a host ending in one of these keeps three labels. A compact stand-in
# for the Public Suffix List, which is not shipped: it covers the multi-label suffixes of WCXB and SWDE
# and the common ccTLD patterns. Hosting platforms (github.io, readthedocs.io, substack.com) are NOT
# suffixes here, unlike in the PSL's private section: their sites share one template, which is exactly what
# must not sit on both sides of a split.
_SECOND_LEVEL = frozenset("ac co com edu gov net org ne or go gob gouv mil nic ltd plc sch nhs gv id "
                          "info biz firm gen ind res nom".split())


def registrable_domain(host: str) -> str:
    """The part of `host` a single owner registers: "uk.glossier.com" -> "glossier.com", "news.bbc.co.uk"
    -> "bbc.co.uk", "a.substack.com" -> "substack.com"; IP addresses and one- or two-label hosts as given.
    The key that keeps one shop, publisher or platform on one side of a cross-validation split."""
    host = (host or "").lower().rstrip(".")
    if not host or ":" in host or host.replace(".", "").isdigit():
        return host
    try:  # bücher.de and xn--bcher-kva.de are one site
        host = host.encode("idna").decode("ascii")
    except UnicodeError:  # a label too long or empty for IDNA: compared as written
        pass
    labels = host.split(".")
    if len(labels) <= 2:
        return host
    if len(labels[-1]) == 2 and labels[-2] in _SECOND_LEVEL:
        return ".".join(labels[-3:])
    return ".".join(labels[-2:])
