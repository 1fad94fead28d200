"""The crawl report extension: EDREW_REPORT_DIR = folder, EDREW_REPORT_PAGES = N (report.py renders).

The first N pages scored each get an HTML report (`edrew inspect`'s), and at the end the folder gets
index.html, the crawl's summary. Reports are rendered and written on a thread of their own, never on
the reactor thread, and only N pages are ever held for them; for every other page the summary keeps a
few numbers (CrawlSummary: a histogram and the slowest pages), so memory stays bounded on any crawl.
"""
from __future__ import annotations

import json
import logging
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Optional

from scrapy import signals
from scrapy.exceptions import NotConfigured

from .futures import await_future
from .meta import EXTRACTION_KEY, META_KEY
from .settings import EdrewSettings, _int
from .stats import EdrewStats

logger = logging.getLogger(__name__)

# request.meta key: when the response left the downloader, before the EDREW middleware serialised it
_STARTED_KEY = "_edrew_report_started"


class EdrewReports:
    """Write page reports for the first EDREW_REPORT_PAGES scored pages and a summary at the end."""

    def __init__(self, crawler, folder: Path, limit: int, model: dict):
        from ..report import CrawlSummary

        self.crawler = crawler
        self.folder = folder
        self.limit = limit
        self.model = model
        self.summary = CrawlSummary()
        self.stats = EdrewStats(crawler.stats, logger)
        self.executor = ThreadPoolExecutor(1, thread_name_prefix="edrew-report")
        self.pending = []
        crawler.signals.connect(self.response_downloaded, signal=signals.response_downloaded)
        crawler.signals.connect(self.response_received, signal=signals.response_received)
        crawler.signals.connect(self.spider_closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler):
        folder = crawler.settings.get("EDREW_REPORT_DIR")
        if not folder:
            # Without a message: Scrapy logs a NotConfigured that has one as a WARNING, and reports the
            # user did not ask for are no reason to warn on every crawl.
            raise NotConfigured
        conf = EdrewSettings.from_settings(crawler.settings)  # NotConfigured when EDREW_ENABLED is false
        limit = _int(crawler.settings, "EDREW_REPORT_PAGES", 0)
        folder = Path(folder).expanduser()
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:  # stops the crawl before its first request, with one line that says why
            logger.error("EDREW cannot start: EDREW_REPORT_DIR %s: %s", folder, exc)
            raise
        return cls(crawler, folder, limit, _model_of(conf))

    def response_downloaded(self, response, request, spider=None) -> None:
        request.meta[_STARTED_KEY] = time.perf_counter()

    def response_received(self, response, request, spider=None) -> None:
        started = request.meta.pop(_STARTED_KEY, None)
        page, extraction = request.meta.get(META_KEY), request.meta.get(EXTRACTION_KEY)
        if page is None or extraction is None:
            return
        seconds = time.perf_counter() - started if started is not None else None
        index = self.summary.pages
        self.summary.add(response.url, _numbers(page, extraction), seconds)
        if index < self.limit:
            # the page and its scores stay referenced until written: N pages at most
            self.pending.append(self.executor.submit(self._write_page, index, response.url, page, extraction,
                                                     response.body, seconds))

    def _write_page(self, index: int, url: str, page, extraction, body: bytes, seconds) -> tuple:
        """The report thread: render and write one page's report; (url, file name, kept share, kept words)."""
        from ..report import page_report_html, report_name

        text, numbers = page_report_html(page, extraction, data=body, source=url, model=self.model,
                                         seconds=seconds)
        name = report_name(index, url)
        (self.folder / name).write_text(text, encoding="utf-8", errors="replace")
        return url, name, numbers.kept_share, numbers.kept_words

    async def _finish(self, spider) -> None:
        from ..report import crawl_summary_html

        for future in self.pending:
            try:
                self.summary.reports.append(await await_future(future))
            except Exception as exc:  # a full disk: counted, and the summary is still attempted
                self.stats.error(None, "write a page report", exc)
        self.pending = []
        stats = self.crawler.stats.get_stats()
        html = crawl_summary_html(self.summary, stats, model=self.model, spider=getattr(spider, "name", ""),
                                  reason=str(stats.get("finish_reason", "")), report_limit=self.limit)
        try:
            await await_future(self.executor.submit((self.folder / "index.html").write_text, html,
                                                    encoding="utf-8", errors="replace"))
        except OSError as exc:
            self.stats.error(None, "write the crawl report", exc)
            return
        finally:
            self.executor.shutdown(wait=False)
        logger.info("EDREW crawl report: %s (%d page reports)", self.folder / "index.html",
                    len(self.summary.reports))

    async def spider_closed(self, spider, reason=None) -> None:
        await self._finish(spider)


def _numbers(page, extraction):
    from ..report import PageSummary
    from ..words import count_words

    total = sum(count_words(n.content) for n in page.nodes)
    kept = sum(count_words(n.content) for n in extraction.nodes)
    return PageSummary(nodes=len(page.nodes), kept_nodes=len(extraction.nodes), kept_words=kept,
                       dropped_words=total - kept)


def _model_of(conf: EdrewSettings) -> dict:
    """The model's name (its card's) and folder, for the reports' headers; read from card.json, so that
    the crawl process loads no model for it (with worker processes the model lives there)."""
    from ..model.files import model_directory

    directory = model_directory(conf.model)
    name: Optional[str] = None
    try:
        name = json.loads((directory / "card.json").read_text("utf-8")).get("name")
    except (OSError, ValueError, AttributeError):
        pass  # the scoring service reports a model it cannot load; the report shows the folder
    return {"name": name, "directory": str(directory)}
