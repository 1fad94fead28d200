"""CSV feeds and the page items: a CSV file has one set of columns, the first item's, so a CSV feed that
gets both the spider's own items and EDREW's page (or node) items mixes them into one table (a quote's
``text`` column filled with page texts, its ``author`` column empty).

`FeedCheck`, an extension the add-on enables, warns at start about each CSV feed that would mix them and
names the FEEDS setting that splits it in two: the spider's items through `SpiderItemsOnly`, EDREW's
items in a feed of their own. A spider that yields no items of its own says so with
``edrew_own_items = False`` (the bundled spider does), and its CSV feeds hold only EDREW's items.
"""
from __future__ import annotations

import json
import logging
from pathlib import PurePosixPath
from typing import Any, Dict, List

from scrapy.exceptions import NotConfigured
from scrapy.extensions.feedexport import ItemFilter

from .items import NodeItem, PageItem
from .resume import INNER_FILTER_OPTION, TOKEN_OPTION, URI_OPTION
from .settings import DEFAULTS

logger = logging.getLogger(__name__)

ITEM_FIELDS = {"page": ["url", "title", "text"], "node": ["url", "title", "content", "score", "path", "index"]}
ITEM_CLASSES = {"page": "edrew_scrapy.scrapy.PageItem", "node": "edrew_scrapy.scrapy.NodeItem"}


class SpiderItemsOnly(ItemFilter):
    """A feed's item_filter: every item but EDREW's page and node items (and what the feed's
    ``item_classes`` leaves out)."""

    def accepts(self, item: Any) -> bool:
        return not isinstance(item, (PageItem, NodeItem)) and super().accepts(item)


def pages_uri(uri: str) -> str:
    """out.csv -> out-pages.csv; a name without a suffix gets -pages at its end."""
    head, dot, suffix = uri.rpartition(".")
    if dot and head and "/" not in suffix:
        return f"{head}-pages.{suffix}"
    return f"{uri}-pages"


def mixing_feeds(settings, spidercls) -> List[str]:
    """The CSV feeds (their URIs as written in FEEDS) that would get the spider's items and EDREW's."""
    if not getattr(spidercls, "edrew_own_items", True) or settings.get("EDREW_BUILDER"):
        return []
    found = []
    for uri, options in settings.getdict("FEEDS").items():
        options = options or {}
        written = options.get(URI_OPTION, str(uri))
        fmt = options.get("format") or PurePosixPath(written).suffix.removeprefix(".")
        item_filter = options.get(INNER_FILTER_OPTION) if TOKEN_OPTION in options else options.get("item_filter")
        default_filter = item_filter in (None, ItemFilter, "scrapy.extensions.feedexport.ItemFilter")
        if fmt == "csv" and not options.get("item_classes") and default_filter:
            found.append(written)
    return found


def split_feeds(uri: str, options: Dict[str, Any], mode: str) -> Dict[str, Dict[str, Any]]:
    """The FEEDS entries that replace a mixing CSV feed."""
    keep = {k: v for k, v in options.items() if k == "overwrite" and v}
    own = {"format": "csv", **keep, "item_filter": "edrew_scrapy.scrapy.feeds.SpiderItemsOnly"}
    pages = {"format": "csv", **keep, "item_classes": [ITEM_CLASSES[mode]], "fields": ITEM_FIELDS[mode]}
    return {uri: own, pages_uri(uri): pages}


class FeedCheck:
    """Warn, once at start, about each CSV feed that would mix the spider's items with EDREW's."""

    @classmethod
    def from_crawler(cls, crawler):
        settings = crawler.settings
        if not settings.getbool("EDREW_ENABLED", DEFAULTS["EDREW_ENABLED"]):
            raise NotConfigured
        mode = str(settings.get("EDREW_ITEMS") or DEFAULTS["EDREW_ITEMS"]).lower()
        feeds = {str(options.get(URI_OPTION, uri)) if options else str(uri): options or {}
                 for uri, options in settings.getdict("FEEDS").items()}
        for uri in mixing_feeds(settings, crawler.spidercls):
            split = split_feeds(uri, feeds.get(uri, {}), mode)
            crawler.stats.inc_value("edrew/feeds/mixed-csv")
            logger.warning(
                "EDREW: the CSV feed %s gets the spider's own items and EDREW's %s items in one table (a CSV "
                "file has the columns of its first item), so one kind's fields end up in the other's columns. "
                "Give EDREW's items a feed of their own; in settings.py:\nFEEDS = %r\nor on the command line, "
                "instead of -o/-O:\n-s FEEDS='%s'\n(a spider that yields no items of its own can say so "
                "with edrew_own_items = False)", uri, mode, split, json.dumps(split))
        raise NotConfigured  # nothing more to do during the crawl
