"""Item pipeline after FilesPipeline: parse each stored PDF into its article's structure, in a thread.

`scrapy crawl articles` enables it (edrew_scrapy/spiders/articles.py). It reads the file FilesPipeline
stored under a local FILES_STORE, parses it with edrew_scrapy.pdf off the reactor thread (one worker
thread: the parse is CPU-bound Python, more threads would only share the GIL), and fills the item with
the article's metadata and structure. A PDF that failed to download or gives no text is dropped with a
counted reason: `edrew/pdf/skipped/<reason>` (download-failed, not-pdf, encrypted, broken, no-text).
"""
from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from itemadapter import ItemAdapter
from scrapy.exceptions import DropItem, NotConfigured
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet import threads

try:
    from scrapy.utils.asyncio import is_asyncio_available
except ImportError:  # Scrapy < 2.14
    from scrapy.utils.reactor import is_asyncio_reactor_installed as is_asyncio_available

from ..pdf import PdfError, parse_pdf
from .articlecsv import ROWS as CSV_ROWS


def _read_and_parse(path: Path, max_pages: int):
    return parse_pdf(path.read_bytes(), max_pages=max_pages or None)


class ArticlePipeline:
    def __init__(self, crawler, store: Path, max_pages: int):
        self.crawler = crawler
        self.store = store
        self.max_pages = max_pages
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="edrew-pdf")

    @classmethod
    def from_crawler(cls, crawler):
        uri = str(crawler.settings.get("FILES_STORE") or "")
        if not uri:
            raise NotConfigured("FILES_STORE is not set: FilesPipeline stores no PDF to parse")
        if "://" in uri and not uri.startswith("file://"):
            raise NotConfigured(f"FILES_STORE={uri} is not a local folder; ArticlePipeline reads the stored PDFs")
        max_pages = crawler.settings.get("EDREW_PDF_MAX_PAGES", 0)
        try:
            max_pages = int(max_pages)
        except (TypeError, ValueError):
            max_pages = -1
        if max_pages < 0:
            raise ValueError(f"EDREW_PDF_MAX_PAGES must be 0 (every page) or a number of pages, "
                             f"not {crawler.settings.get('EDREW_PDF_MAX_PAGES')!r}")
        rows = crawler.settings.get("EDREW_PDF_CSV_ROWS", "sentences")
        if rows not in CSV_ROWS:  # checked here, at start-up: a feed builds its exporter at the first item
            raise ValueError(f"EDREW_PDF_CSV_ROWS must be one of {', '.join(CSV_ROWS)}, not {rows!r}")
        return cls(crawler, Path(uri.split("://", 1)[-1]), max_pages)

    def close_spider(self, spider=None):
        self._executor.shutdown(wait=False, cancel_futures=True)

    async def process_item(self, item, spider=None):
        adapter = ItemAdapter(item)
        if "file_urls" not in adapter:
            return item  # not an article item
        stats = self.crawler.stats
        files = adapter.get("files") or []
        if not files:
            self._skip("download-failed", adapter.get("url"), "the PDF was not downloaded")
        stored = files[0]
        try:
            article = await self._in_thread(_read_and_parse, self.store / stored["path"], self.max_pages)
        except PdfError as exc:
            self._skip(exc.reason, adapter.get("url"), str(exc))
        except OSError as exc:
            self._skip("download-failed", adapter.get("url"), f"the stored file cannot be read: {exc}")
        fields = article.to_dict()
        for name in ("title", "authors", "year", "pages"):
            adapter[name] = fields.pop(name)
        adapter["checksum"] = stored.get("checksum")
        adapter["path"] = stored.get("path")
        for name, value in fields.items():
            adapter[name] = value
        stats.inc_value("edrew/pdf/articles")
        stats.inc_value("edrew/pdf/pages", article.pages)
        stats.inc_value("edrew/pdf/sentences", article.sentence_count())
        return item

    def _skip(self, reason: str, url, message: str):
        self.crawler.stats.inc_value(f"edrew/pdf/skipped/{reason}")
        raise DropItem(f"EDREW skipped the PDF {url} ({reason}): {message}")

    async def _in_thread(self, function, *args):
        future = self._executor.submit(function, *args)
        if is_asyncio_available():
            return await asyncio.wrap_future(future)
        return await maybe_deferred_to_future(threads.deferToThread(future.result))
