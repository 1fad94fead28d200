"""The items the add-on exports, and the context a custom builder receives.

Dataclasses rather than scrapy.Item: itemadapter and every feed exporter handle them, and their
fields are typed and documented in one place.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional


@dataclass
class PageItem:
    """EDREW_ITEMS = "page": the relevant content of one page."""

    url: str
    title: str
    text: str                       # the relevant contents in document order, one per line
    nodes: List[Dict[str, Any]] = field(default_factory=list)  # [{content, score, path}]
    images: List[str] = field(default_factory=list)            # images inside relevant nodes
    # the page's reader comments, one node per line, kept out of `text` (EDREW_COMMENTS); "" where none
    comments: str = ""
    # EDREW_METADATA (edrew_scrapy/metadata.py, docs/metadata.md); None where the page gives none
    headline: Optional[str] = None                             # the title without " | Site name"
    author: List[str] = field(default_factory=list)
    date_published: Optional[str] = None                       # ISO 8601 day
    date_modified: Optional[str] = None
    language: Optional[str] = None                             # BCP 47
    site_name: Optional[str] = None
    description: Optional[str] = None
    page_type: Optional[str] = None                            # article, forum, product, collection, ...
    page_type_probability: Optional[float] = None


@dataclass
class NodeItem:
    """EDREW_ITEMS = "node": one relevant text node."""

    url: str
    title: str
    content: str
    score: float
    path: str                       # XPath of the element in the page
    index: int                      # position among all the page's nodes (document order)
    images: List[str] = field(default_factory=list)
    page_type: Optional[str] = None  # the page's (EDREW_METADATA)


@dataclass
class PageContext:
    """What EDREW_BUILDER gets next to the list of relevant contents.

    `extraction` is the extract() result (relevant nodes with scores, paths and images), `page` the
    serialized Page with every node, `response` the Scrapy response the spider processed.
    """

    url: str
    title: str
    extraction: Any
    page: Any
    response: Any
    spider: Optional[Any] = None
