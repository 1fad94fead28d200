"""The feed side of a distributed crawl: what a feed writes reaches the operating system at once,
and no page item goes to the feeds that another process (or an earlier lease) already exported.

* `FlushingFileFeedStorage` (FEED_STORAGES for local files): each write is flushed from Python's
  buffer, so an item exported before its lease was acknowledged survives a SIGKILL of the process.
  Without it, up to 8 KB of items acknowledged in Redis could die in the buffer. A JSON Lines or CSV
  feed appended to (a process restarted on its feed) is read back first: a record cut short at its
  end is removed (the next record would otherwise be glued to it and lost), and the page items it
  holds join the exported set, so that pages this process exported before it died are not exported
  again.
* `ExportedOnceFilter` (every feed's item_filter): holds back a page or node item whose key is in
  the crawl's Redis set of exported items (filled when leases are acknowledged), then applies the
  feed's own filter. A page fetched again because its lease expired is not exported twice.

What remains: a process killed after writing an item and before acknowledging its lease leaves an
item that another process exports again; `edrew merge` keeps one record per page when the feeds
are merged (docs/distributed.md).
"""
from __future__ import annotations

import io
import logging
import uuid
from pathlib import Path
from typing import Any, Dict, Optional

from scrapy.extensions.feedexport import FileFeedStorage
from scrapy.utils.misc import load_object

from ..scrapy.resume import chain_item_filter, read_feed
from .leases import BY_TOKEN, TOKEN_SETTING, book_for, export_key

logger = logging.getLogger(__name__)

# the formats whose records resume.read_feed reads back
READABLE_FORMATS = ("jsonlines", "jsonl", "jl", "csv")

TOKEN_OPTION = "edrew_redis"
INNER_FILTER_OPTION = "edrew_redis_item_filter"


class _FlushingWriter(io.BufferedWriter):
    def write(self, data) -> int:
        written = super().write(data)
        self.flush()
        return written


class FlushingFileFeedStorage(FileFeedStorage):
    def __init__(self, uri: str, *, feed_options: Optional[Dict[str, Any]] = None, crawler=None):
        super().__init__(uri, feed_options=feed_options)
        self.feed_options = feed_options or {}
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler, uri: str, *, feed_options: Optional[Dict[str, Any]] = None):
        storage = cls(uri, feed_options=feed_options, crawler=crawler)
        # FeedExporter builds its storages when the spider opens (after the scheduler) but opens the
        # file only for the first item, after the feed filter has looked at it: read back now.
        path = Path(storage.path)
        if storage.write_mode == "ab" and path.is_file() and storage.feed_options.get("format") in READABLE_FORMATS:
            storage._read_back(path)
        return storage

    def open(self, spider):
        path = Path(self.path)
        path.parent.mkdir(parents=True, exist_ok=True)
        return _FlushingWriter(io.FileIO(path, self.write_mode))

    def _read_back(self, path: Path) -> None:
        contents = read_feed(path, self.feed_options["format"], self.feed_options.get("encoding") or "utf-8")
        book = book_for(self.crawler) if self.crawler is not None else None
        if contents.removed_bytes:
            logger.warning("EDREW removed the last %d bytes of the feed %s: a record cut short when the last "
                           "crawl on it stopped", contents.removed_bytes, path)
            if book is not None:
                book.stats.inc("redis/partial-records-removed")
        if book is None or book.server is None or not contents.keys:
            return
        keys = ["\x1f".join(key) for key in contents.keys]
        for start in range(0, len(keys), 1000):
            book.server.sadd(book.exported_key, *keys[start:start + 1000])
        book.stats.inc("redis/feed-items-read-back", len(keys))
        logger.info("EDREW found %d page/node items in the feed %s; they will not be exported again", len(keys), path)


def wrap_feeds(settings) -> None:
    """Put ExportedOnceFilter on every feed in FEEDS (keeping each feed's own item_filter), and
    FlushingFileFeedStorage on local files unless the project chose a storage for them."""
    token = settings.get(TOKEN_SETTING) or uuid.uuid4().hex
    settings.set(TOKEN_SETTING, token, "addon")
    feeds = settings.getdict("FEEDS")
    if feeds and not any(TOKEN_OPTION in (options or {}) for options in feeds.values()):
        chain_item_filter(settings, ExportedOnceFilter, INNER_FILTER_OPTION, lambda uri: {TOKEN_OPTION: token})
    storages = settings.getdict("FEED_STORAGES")
    missing = {scheme: FlushingFileFeedStorage for scheme in ("", "file") if scheme not in storages}
    if missing:
        settings.set("FEED_STORAGES", {**storages, **missing}, settings.getpriority("FEED_STORAGES") or 0)


class ExportedOnceFilter:
    def __init__(self, feed_options: Dict[str, Any]):
        inner = feed_options.get(INNER_FILTER_OPTION)
        if inner is None:
            from scrapy.extensions.feedexport import ItemFilter as inner
        self.inner = load_object(inner)(feed_options)
        self.token = feed_options.get(TOKEN_OPTION, "")

    def accepts(self, item: Any) -> bool:
        if not self.inner.accepts(item):
            return False
        book = BY_TOKEN.get(self.token)
        if book is None or book.server is None:
            return True
        key = export_key(item)
        if key is not None and book.server.sismember(book.exported_key, key):
            book.stats.inc("redis/already-exported")
            return False
        return True
