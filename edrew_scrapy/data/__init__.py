"""Labelled pages for training and evaluation: one reader per dataset format, all yielding LabelledPage.

Readers (each `iter_pages(...) -> Iterator[LabelledPage]`, lazy, document order of the dataset):

- :mod:`edrew_scrapy.data.wcxb`   WCXB main-content benchmark (Foley 2026, CC-BY-4.0)
- :mod:`edrew_scrapy.data.swde`   SWDE attribute pages (Hao et al., SIGIR 2011)
- :mod:`edrew_scrapy.data.simple` a folder of HTML files plus a JSON/JSONL label file (users' own data)

`labels[i]` is 1 when `page.nodes[i]` is relevant content, else 0. The raw HTML is not kept in memory;
:func:`read_source` reads it again from `meta["source"]` for extractors that need HTML.
"""
from __future__ import annotations

import gzip
import html as html_lib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import List, Optional
from urllib.parse import urlsplit

from ..page import Page

__all__ = ["LabelledPage", "normalize_text", "words", "read_source", "domain_of"]

_WS = re.compile(r"\s+")
# The WCXB metric's tokens: runs of word characters, lower-cased.
_WORD = re.compile(r"\w+")


@dataclass
class LabelledPage:
    """A serialized page with one 0/1 label per node.

    `page_type_or_site` is WCXB's page type ("article", "forum", ...) or SWDE's site name; `domain` is
    the grouping key for cross-validation (a site is never split across folds). `meta` holds the
    dataset's extras: "source" (path of the HTML file) always; WCXB adds "main_content", "with",
    "without", "title"; SWDE adds "values" {attr: [values]} and "node_attrs" (one list of attribute
    names per node, aligned with page.nodes).
    """

    page_id: str
    url: Optional[str]
    domain: str
    page_type_or_site: str
    page: Page
    labels: List[int]
    meta: dict = field(default_factory=dict)

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
    """Bytes of an HTML file, gunzipped when the name ends in .gz."""
    path = Path(path)
    data = path.read_bytes()
    if path.suffix == ".gz":
        data = gzip.decompress(data)
    return data


def domain_of(url: Optional[str]) -> str:
    """Host of a URL without a leading "www.", the grouping key for page-disjoint splits."""
    if not url:
        return ""
    host = (urlsplit(url).hostname or "").lower()
    return host[4:] if host.startswith("www.") else host
