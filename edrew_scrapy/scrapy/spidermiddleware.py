"""The spider middleware: after the spider's own output for a response, yield the items of its page.

It is a spider middleware, not an ITEM_PIPELINES component, for three reasons:

* ``process_spider_output`` gets the response next to the spider's output, so every page the spider
  processes yields its relevant content, and the spider itself needs no change;
* one page may become many items (EDREW_ITEMS = "node", or a builder that returns a list), and an
  item pipeline can only turn one item into one item;
* no internal page object ever travels through the user's item pipelines or reaches a feed: what
  leaves this stage is the export item, and the spider's own items pass through untouched.

It owns the scoring service (scoring.py), but the scoring itself starts in EdrewDownloaderMiddleware,
which finds the service through the crawler and awaits it right after serialising a page; a response
reaches the spider with its Extraction in its meta, so `process_spider_output` never waits for the model.
"""
from __future__ import annotations

import logging

from itemadapter import ItemAdapter
from scrapy.utils.defer import deferred_from_coro

from .items import NodeItem, PageContext, PageItem
from .meta import EXTRACTION_KEY, ITEMS_SENT_KEY, META_KEY, PARSED_KEY
from .scoring import ScoringService
from .settings import EdrewSettings
from .signals import page_items_sent
from .stats import EdrewStats

logger = logging.getLogger(__name__)


class EdrewSpiderMiddleware:
    """After the spider's own output for a response, yield the relevant content of its page.

    The page was scored before the response reached the spider: `scoring` is the service the
    downloader middleware awaits for it.
    """

    def __init__(self, crawler, conf: EdrewSettings, scoring: ScoringService):
        self.crawler = crawler
        self.conf = conf
        self.scoring = scoring
        self.stats = EdrewStats(crawler.stats, logger)

    @classmethod
    def from_crawler(cls, crawler):
        conf = EdrewSettings.from_settings(crawler.settings)
        return cls(crawler, conf, ScoringService.from_crawler(crawler, conf))

    def process_spider_input(self, response, spider=None) -> None:
        # Scrapy calls this only after every input check before it passed (HttpErrorMiddleware's at 50
        # among them), so the mark says the response reached its callback. A response rejected before
        # it goes to its errback, whose output also comes through process_spider_output: it gets no
        # item, as a page the spider did not parse.
        if response.request is not None:
            response.meta[PARSED_KEY] = True

    async def process_spider_output(self, response, result, spider=None):
        try:
            async for output in result:
                yield output
        except Exception:
            # The callback raised: its page was still parsed and scored, and its item must not be lost
            # with the rest of the callback's output. The exception goes on to Scrapy's handling.
            for item in self.items_of(response):
                yield item
            raise
        # Nothing below awaits: with the spider's output done, Scrapy's item workers get these at once.
        for item in self.items_of(response):
            yield item

    def process_spider_exception(self, response, exception, spider=None) -> None:
        """A callback that raised before it returned any output (a plain function or a coroutine that
        raises) has no output for process_spider_output to follow: its page's items go to the item
        pipelines from here. Returning them instead would end Scrapy's handling of the exception (no
        "Spider error" log, no spider_error signal, no spider_exceptions/ stats), so None is returned
        and the exception goes on as without the add-on. A generator that raised mid-way has already
        sent them (process_spider_output); items_of sends a page's items once.

        page_items_sent goes out before the first item enters the pipelines: a component that waits for
        a response's items (the Redis lease book) counts these too, before any of them can come out."""
        scraper = getattr(getattr(self.crawler, "engine", None), "scraper", None)
        if scraper is None:  # no engine to take them: the items stay unbuilt rather than counted and lost
            return None
        items = self.items_of(response)
        if not items:
            return None
        self.crawler.signals.send_catch_log(page_items_sent, items=items, response=response,
                                            spider=getattr(self.crawler, "spider", None))
        for item in items:
            # start_itemproc_async (Scrapy >= 2.14) counts the item as in progress at once, so the
            # spider does not close before the pipelines have it
            deferred_from_coro(scraper.start_itemproc_async(item, response=response))
        return None

    def items_of(self, response) -> list:
        """The items of a response that reached its callback scored; none for any other, and none the
        second time for the same response."""
        meta = response.meta if response.request is not None else {}
        page, extraction = meta.get(META_KEY), meta.get(EXTRACTION_KEY)
        if page is None or extraction is None or not meta.get(PARSED_KEY) or meta.get(ITEMS_SENT_KEY):
            return []
        meta[ITEMS_SENT_KEY] = True
        try:
            items = self.build_items(extraction, page, response)
        except Exception as exc:
            self.stats.error(response.url, "build items for", exc)
            return []
        if not items:
            self.stats.skip("no-relevant-content" if not extraction.nodes else "builder-empty", response.url)
            return []
        self.stats.inc("items", len(items))
        return items

    def build_items(self, extraction, page, response) -> list:
        url = response.url
        title = extraction.title or page.title or ""
        if self.conf.builder is not None:
            context = PageContext(url=url, title=title, extraction=extraction, page=page,
                                  response=response, spider=getattr(self.crawler, "spider", None))
            return _as_items(self.conf.builder([n.content for n in extraction.nodes], context))
        if not extraction.nodes:
            return []
        metadata = getattr(extraction, "metadata", None)
        fields = metadata.fields() if metadata is not None else {}
        nodes, images, comments = kept_nodes(extraction, self.conf.comments)
        if self.conf.items == "node":
            return [NodeItem(url=url, title=title, content=n.content, score=round(float(n.score), 4),
                             path=n.path, index=n.index, images=list(n.images), page_type=fields.get("page_type"))
                    for n in nodes]
        return [PageItem(
            url=url, title=title, text="\n".join(n.content for n in nodes),
            nodes=[{"content": n.content, "score": round(float(n.score), 4), "path": n.path} for n in nodes],
            images=images, comments="\n".join(n.content for n in comments), **fields,
        )]


def kept_nodes(extraction, comments_mode: str):
    """(nodes, images, comment nodes) of a scored page as EDREW_COMMENTS places its reader comments: in
    their own field ("field"), in the text in document order ("text"), or nowhere ("none")."""
    nodes, images = extraction.nodes, list(extraction.images)
    comments = list(getattr(extraction, "comments", None) or ())
    if comments_mode == "text" and comments:  # as trafilatura's include_comments: in the text, in order
        nodes, comments = sorted([*nodes, *comments], key=lambda n: n.index), []
        images = list(dict.fromkeys(img for n in nodes for img in n.images))
    elif comments_mode == "none":
        comments = []
    return nodes, images, comments


def _as_items(output) -> list:
    if output is None:
        return []
    if ItemAdapter.is_item(output):
        return [output]
    items = list(output)
    for item in items:
        if not ItemAdapter.is_item(item):
            raise TypeError(f"EDREW_BUILDER must return an item, a list of items or None, "
                            f"got {type(item).__name__}")
    return items
