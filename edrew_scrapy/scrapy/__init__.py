"""Scrapy integration: enable it with ``ADDONS = {"edrew_scrapy.Addon": 500}``.

The public names load on first use, so that a worker process (worker.py) imports no Scrapy.

    addon.py                 the add-on: wires the components below and the EDREW_ defaults
    downloadermiddleware.py  serialise each HTML response, and have it scored
    spidermiddleware.py      after the spider's output, the items of each scored page
    signals.py               page_items_sent: a page's items sent to the pipelines outside that output
    scoring.py               the scoring service: the model, batching, the scoring thread
    processpool.py           with EDREW_WORKERS >= 1, the worker processes ...
    worker.py                ... and what runs inside each of them
    resume.py, scheduler.py  with JOBDIR: resume a crawl, after any stop, without repeats
    feeds.py                 the start-up check of CSV feeds that would mix items
    logformatter.py          page items logged as one-line summaries
    pipeline.py              EdrewPipeline, for items that hold their page's HTML
    reports.py               with EDREW_REPORT_DIR, HTML reports of the first pages and a crawl summary
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_attributes

# public name -> module that defines it
_LAZY = {
    "Addon": "edrew_scrapy.scrapy.addon",
    "EdrewDownloaderMiddleware": "edrew_scrapy.scrapy.downloadermiddleware",
    "EdrewPipeline": "edrew_scrapy.scrapy.pipeline",
    "EdrewSpiderMiddleware": "edrew_scrapy.scrapy.spidermiddleware",
    "META_KEY": "edrew_scrapy.scrapy.meta",
    "NodeItem": "edrew_scrapy.scrapy.items",
    "PageContext": "edrew_scrapy.scrapy.items",
    "PageItem": "edrew_scrapy.scrapy.items",
}

__all__ = sorted(_LAZY)

if TYPE_CHECKING:
    from .addon import Addon as Addon
    from .downloadermiddleware import EdrewDownloaderMiddleware as EdrewDownloaderMiddleware
    from .items import NodeItem as NodeItem
    from .items import PageContext as PageContext
    from .items import PageItem as PageItem
    from .meta import META_KEY as META_KEY
    from .pipeline import EdrewPipeline as EdrewPipeline
    from .spidermiddleware import EdrewSpiderMiddleware as EdrewSpiderMiddleware


__getattr__, __dir__ = lazy_attributes(__name__, _LAZY, globals())
