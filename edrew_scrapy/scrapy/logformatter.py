"""Log a relevant-content item as a short summary (its URL, kept nodes and words), not whole.

At Scrapy's default DEBUG level every scraped item is logged with its repr; a page item holds the
page's relevant text and every kept node, so a few hundred pages made megabytes of log. Feeds and item
pipelines still get the full item: only the log line changes. The add-on sets this as LOG_FORMATTER
when the project keeps Scrapy's own; a project with its own formatter can subclass this one.
"""
from __future__ import annotations

from typing import Any

from scrapy.logformatter import LogFormatter

from ..words import count_words
from .items import NodeItem, PageItem


class ItemSummary:
    """Formats lazily: a log record below the log level never builds the text."""

    __slots__ = ("item",)

    def __init__(self, item: Any):
        self.item = item

    def __str__(self) -> str:
        item = self.item
        if isinstance(item, PageItem):
            return (f"PageItem(url={item.url!r}, nodes={len(item.nodes)}, words={count_words(item.text)}, "
                    f"images={len(item.images)})")
        return (f"NodeItem(url={item.url!r}, index={item.index}, score={item.score}, "
                f"words={count_words(item.content)})")

    __repr__ = __str__


def summarised(item: Any) -> Any:
    return ItemSummary(item) if isinstance(item, (PageItem, NodeItem)) else item


class EdrewLogFormatter(LogFormatter):
    """Scrapy's LogFormatter, with EDREW's page and node items summarised in the scraped, dropped and
    item-error messages; every other item is logged as Scrapy logs it."""

    def scraped(self, item, response, spider):
        result = super().scraped(item, response, spider)
        return _with_summary(result, item)

    def dropped(self, item, exception, response, spider):
        result = super().dropped(item, exception, response, spider)
        return _with_summary(result, item)

    def item_error(self, item, exception, response, spider):
        result = super().item_error(item, exception, response, spider)
        return _with_summary(result, item)


def _with_summary(result, item):
    if result is not None and isinstance(result.get("args"), dict) and result["args"].get("item") is item:
        result["args"] = {**result["args"], "item": summarised(item)}
    return result
