"""The item pipeline `EdrewPipeline`; and the old import path of the spider middleware and the scoring
service (spidermiddleware.py, scoring.py).

``ITEM_PIPELINES = {"edrew_scrapy.EdrewPipeline": 300}``, for crawlers that already store each page's
HTML in their own items: every item (any type itemadapter supports) with a field named in
EDREW_PIPELINE_FIELDS (default ``["html"]``) that holds HTML gets that field replaced by the page's
relevant content, ``{"title", "text", "nodes", "images", "comments"}`` and the page's metadata, as a
PageItem holds them (``nodes``: content, score and XPath of each kept node; ``skipped`` says why a page
gave nothing), or, with EDREW_PIPELINE_REPLACE = False, the HTML
stays and the content goes beside it, into ``<field>_relevant``. Items without such a field pass
untouched.

Pages are scored by the same scoring service as the add-on's middlewares (batches, worker processes):
the crawl's EdrewSpiderMiddleware's when the crawl runs one, else one of the pipeline's own.
"""
from __future__ import annotations

import logging
from typing import Any, Dict, List, Optional

from itemadapter import ItemAdapter
from scrapy import signals
from scrapy.utils.misc import load_object

from ..metadata import Metadata
from .processpool import WorkerError
from .scoring import Batcher, ScoringService, SerializerThreads, load_scorer
from .settings import DEFAULTS, EdrewSettings
from .spidermiddleware import EdrewSpiderMiddleware, kept_nodes
from .stats import EdrewStats

__all__ = ["Batcher", "EdrewPipeline", "EdrewSpiderMiddleware", "load_scorer"]

logger = logging.getLogger(__name__)

BESIDE_SUFFIX = "_relevant"


def spider_middleware_enabled(settings) -> bool:
    """Whether the crawl will build EdrewSpiderMiddleware (with its scoring service)."""
    for path, order in settings.getwithbase("SPIDER_MIDDLEWARES").items():
        try:
            if order is not None and load_object(path) is EdrewSpiderMiddleware:
                return True
        except Exception:  # a component that does not load fails the crawl elsewhere, with its own message
            continue
    return False


class EdrewPipeline:
    """Replace (or add beside) the HTML field(s) of each item with the page's relevant content."""

    def __init__(self, crawler, conf: EdrewSettings, fields: List[str], replace: bool,
                 scoring: Optional[ScoringService] = None):
        """`scoring`: the service to score with; by default the crawl's EdrewSpiderMiddleware's, looked up
        on the first item."""
        self.crawler = crawler
        self.conf = conf
        self.fields = fields
        self.replace = replace
        self._scoring = scoring
        self.stats = EdrewStats(crawler.stats, logger)
        self.pool = SerializerThreads(conf.threads, "edrew-pipeline")
        crawler.signals.connect(self.spider_closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler):
        settings = crawler.settings
        conf = EdrewSettings.from_settings(settings)  # NotConfigured when EDREW_ENABLED is false
        fields = settings.getlist("EDREW_PIPELINE_FIELDS", DEFAULTS["EDREW_PIPELINE_FIELDS"])
        if not fields or not all(isinstance(name, str) and name for name in fields):
            logger.error("EDREW cannot start: EDREW_PIPELINE_FIELDS must name item fields, not %r", fields)
            raise ValueError(f"EDREW_PIPELINE_FIELDS must name item fields, not {fields!r}")
        replace = settings.getbool("EDREW_PIPELINE_REPLACE", DEFAULTS["EDREW_PIPELINE_REPLACE"])
        # Without the add-on's spider middleware, a scoring service of our own, loaded now, so that a
        # model that cannot be loaded stops the crawl before its first request, as the add-on's does.
        own = None if spider_middleware_enabled(settings) else ScoringService.from_crawler(crawler, conf)
        return cls(crawler, conf, list(fields), replace, own)

    def spider_closed(self, spider) -> None:
        self.pool.stop()

    def scoring(self) -> ScoringService:
        if self._scoring is None:
            spider_mw = self.crawler.get_spider_middleware(EdrewSpiderMiddleware)
            self._scoring = (spider_mw.scoring if spider_mw is not None
                             else ScoringService.from_crawler(self.crawler, self.conf))
        return self._scoring

    async def process_item(self, item, spider=None):
        if not ItemAdapter.is_item(item):
            return item
        adapter = ItemAdapter(item)
        url = adapter.get("url") if isinstance(adapter.get("url"), str) else None
        for name in self.fields:
            html = adapter.get(name)
            if html is None:
                continue
            if not isinstance(html, (str, bytes)):
                self.stats.skip("pipeline-not-html", url, f"field {name!r} holds {type(html).__name__}")
                continue
            target = name if self.replace else name + BESIDE_SUFFIX
            try:
                adapter[target] = await self._relevant(html, url)
            except Exception as exc:  # a field the item type does not declare, a page lost with its worker
                self.stats.error(url, f"fill the field {target!r} for", exc)
                continue
            self.stats.inc("pipeline/fields")
        return item

    async def _relevant(self, html, url: Optional[str]) -> Dict[str, Any]:
        """The page's relevant content, serialised and scored as the downloader middleware does it."""
        body = html.encode("utf-8") if isinstance(html, str) else html
        encoding = "utf-8" if isinstance(html, str) else None
        scoring = self.scoring()
        outcome = await scoring.process(body, encoding, url or "") if scoring.uses_processes else None
        if outcome is not None:
            if outcome.page is None:
                raise WorkerError(outcome.error)
            page, extraction = outcome.page, outcome.extraction
        else:
            from ..serializer import serialize

            page = await self.pool.run(lambda: serialize(body, encoding=encoding, url=url))
            extraction = await scoring.score(page, url or "") if page.nodes else None
        title = (extraction.title if extraction is not None else "") or page.title or ""
        # the page's metadata, read with the scores (EDREW_METADATA), as a PageItem has it (empty without)
        described = (getattr(extraction, "metadata", None) or Metadata()).fields()
        if extraction is None:
            reason = page.skipped or "not-scored"
            self.stats.skip(f"pipeline-{reason}", url)
            return {"title": title, "text": "", "nodes": [], "images": [], "comments": "", **described,
                    "skipped": reason}
        nodes, images, comments = kept_nodes(extraction, self.conf.comments)
        content = {"title": title, "text": "\n".join(n.content for n in nodes),
                   "nodes": [{"content": n.content, "score": round(float(n.score), 4), "path": n.path}
                             for n in nodes],
                   "images": images, "comments": "\n".join(n.content for n in comments), **described}
        if not extraction.nodes:
            content["skipped"] = "no-relevant-content"
        return content
