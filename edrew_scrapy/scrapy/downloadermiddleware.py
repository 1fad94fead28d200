"""Downloader middleware: serialise each HTML response into its reTPS text nodes, and score them.

The Page lands in ``response.meta["edrew_page"]`` (Response has __slots__, and meta survives the
``response.replace()`` calls of later middlewares), where spider callbacks can read it. Serialising
is pure-Python CPU work, so it runs in a small thread pool and the reactor keeps downloading meanwhile;
with EDREW_WORKERS >= 1 (the default) the body goes to a worker process instead, which serialises and
scores it and sends back the Page and its Extraction (see processpool.py), so that neither holds the
crawl process's GIL.

When the crawl also runs EdrewSpiderMiddleware (it owns the model, in its scoring service, which this
middleware finds through the crawler), the page is scored here too, and its Extraction lands in
``response.meta["edrew_extraction"]``: the response reaches the spider with its scores, and the spider
middleware builds the items from them without waiting. Waiting there would cost more: Scrapy feeds each
response's output to CONCURRENT_ITEMS asyncio workers (100 by default), and an output that waits keeps
all of them waiting. Waiting here also bounds the pages that wait for the model by CONCURRENT_REQUESTS.

Scrapy's downloader counts a request against CONCURRENT_REQUESTS until its downloader middlewares are
done with the response, so a page waiting for the model would keep a request off the network. While
pages wait, the downloader's limit is raised by their number (`ModelWaits`), up to CONCURRENT_REQUESTS
more: the crawl keeps as many requests on the wire as its settings ask, and the bodies waiting for the
model stay bounded.
"""
from __future__ import annotations

import contextlib
import logging
from typing import Iterator, Optional

from scrapy import signals
from scrapy.http import TextResponse

from .. import sources
from ..serializer import serialize
from .meta import EXTRACTION_KEY, ITEMS_SENT_KEY, META_KEY, OPT_OUT_KEY, PARSED_KEY
from .processpool import WorkerError
from .scoring import ScoringService, SerializerThreads
from .settings import EdrewSettings
from .spidermiddleware import EdrewSpiderMiddleware
from .stats import EdrewStats

logger = logging.getLogger(__name__)


def is_html(response) -> bool:
    """HTML by its Content-Type, or by its first bytes when the type is missing or generic."""
    ctype = response.headers.get(b"Content-Type") or b""
    return sources.is_html(ctype.decode("latin-1"), response.body)


class EdrewDownloaderMiddleware:
    """Attach the serialised Page of every HTML response to its meta, and its Extraction once scored.

    Skipped, counted under edrew/skipped/<reason> and logged once per reason: requests with
    ``meta["edrew"] = False`` (opt-out), non-HTML responses (not-html), error statuses the spider
    would not see (http-status), bodies over EDREW_MAX_PAGE_BYTES (too-large), and documents with
    no text (the serializer's reasons: empty, binary, no-text).
    """

    def __init__(self, crawler, conf: EdrewSettings, scoring: Optional[ScoringService] = None):
        """`scoring`: the service to score pages with; by default that of the crawl's
        EdrewSpiderMiddleware, looked up on the first response (None without one)."""
        self.crawler = crawler
        self.conf = conf
        self._scoring = scoring
        self._looked_up = scoring is not None
        self.stats = EdrewStats(crawler.stats, logger)
        # As HttpErrorMiddleware reads it: `-s HTTPERROR_ALLOWED_CODES=410` gives strings, which match no
        # status there either, and a page the spider never sees is not worth serialising.
        self._allowed_statuses = crawler.settings.getlist("HTTPERROR_ALLOWED_CODES")
        self._allow_all_statuses = crawler.settings.getbool("HTTPERROR_ALLOW_ALL")
        self.pool = SerializerThreads(conf.threads, "edrew-serializer")
        self.waits = ModelWaits(crawler)
        crawler.signals.connect(self.spider_closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler, EdrewSettings.from_settings(crawler.settings))

    def spider_closed(self, spider) -> None:
        self.pool.stop()

    def scoring(self) -> Optional[ScoringService]:
        """The scoring service of the crawl's EdrewSpiderMiddleware; None without one (pages are then
        serialised, not scored). Looked up once the engine exists, which builds the spider middlewares."""
        if not self._looked_up:
            try:
                spider_mw = self.crawler.get_spider_middleware(EdrewSpiderMiddleware)
            except RuntimeError:  # no engine yet (a middleware built outside a crawl)
                return None
            self._scoring = spider_mw.scoring if spider_mw is not None else None
            self._looked_up = True
        return self._scoring

    async def process_response(self, request, response, spider=None):
        # A spider that passes meta=response.meta on to its next request would otherwise carry the
        # previous page along, and a skipped response would be scored as that page.
        request.meta.pop(META_KEY, None)
        request.meta.pop(EXTRACTION_KEY, None)
        request.meta.pop(PARSED_KEY, None)
        request.meta.pop(ITEMS_SENT_KEY, None)
        reason = self._skip_reason(request, response)
        if reason is not None:
            self.stats.skip(reason, response.url, self._skip_detail(reason, response))
            return response
        with self.waits.waiting():
            return await self._serialize_and_score(request, response)

    async def _serialize_and_score(self, request, response):
        scoring = self.scoring()
        if scoring is not None and scoring.uses_processes:
            outcome = await scoring.process(response.body, _declared_encoding(response), response.url)
            if outcome is not None:
                return self._take(request, response, outcome)
        try:
            page = await self.pool.run(_serialize, response, self.conf.metadata)
        except Exception as exc:  # the serializer should never raise; a crawl must not stop if it does
            self.stats.error(response.url, "serialise", exc)
            return response
        self._record(request, response, page)
        if scoring is not None and page.nodes:
            extraction = await scoring.score(page, response.url)
            if extraction is not None:
                if self.conf.metadata:
                    extraction.metadata = await self.pool.run(self._describe, response, page, extraction)
                    self._count_metadata(extraction)
                request.meta[EXTRACTION_KEY] = extraction
        return response

    def _describe(self, response, page, extraction):
        """The page's metadata, in this process (EDREW_WORKERS = 0, or the worker pool failed for good)."""
        return self.scoring().describe(response.body, page, extraction, _declared_encoding(response), response.url)

    def _count_metadata(self, extraction) -> None:
        """edrew/metadata/skipped/<part>: the parts of a page's metadata that were not read (hostile or
        broken markup, metadata.Metadata.skipped)."""
        metadata = getattr(extraction, "metadata", None)
        for part in getattr(metadata, "skipped", ()):
            self.stats.inc(f"metadata/skipped/{part}")

    def _take(self, request, response, outcome):
        """A page serialised and scored in a worker process (EDREW_WORKERS >= 1)."""
        page = outcome.page
        if page is None:
            # "serialise", or "score" for a page lost with its worker process (no Page came back)
            self.stats.error(response.url, outcome.stage or "serialise", WorkerError(outcome.error))
            return response
        self._record(request, response, page)
        if outcome.extraction is not None:
            self._count_metadata(outcome.extraction)
            request.meta[EXTRACTION_KEY] = outcome.extraction
        return response

    def _record(self, request, response, page) -> None:
        """Count a serialised page and hand it to the spider middleware (both ways of serialising)."""
        if page.skipped:
            self.stats.skip(page.skipped, response.url)
        else:
            self.stats.inc("pages")
        request.meta[META_KEY] = page

    def _skip_reason(self, request, response) -> Optional[str]:
        if request.meta.get(OPT_OUT_KEY, True) is False:
            return "opt-out"
        if not 200 <= response.status < 300 and not self._status_allowed(request, response.status):
            return "http-status"
        if not is_html(response):
            return "not-html"
        if self.conf.max_page_bytes and len(response.body) > self.conf.max_page_bytes:
            return "too-large"
        return None

    def _status_allowed(self, request, status: int) -> bool:
        # The statuses that HttpErrorMiddleware lets through to the spider, by its own rules and in its
        # order (scrapy/spidermiddlewares/httperror.py): only those get items. A request's
        # handle_httpstatus_list wins over HTTPERROR_ALLOW_ALL, and a spider's list replaces
        # HTTPERROR_ALLOWED_CODES rather than adding to it.
        meta = request.meta
        if meta.get("handle_httpstatus_all", False):
            return True
        if "handle_httpstatus_list" in meta:
            return status in meta["handle_httpstatus_list"]
        if self._allow_all_statuses:
            return True
        spider = getattr(self.crawler, "spider", None)
        return status in getattr(spider, "handle_httpstatus_list", self._allowed_statuses)

    def _skip_detail(self, reason: str, response) -> str:
        if reason == "too-large":
            return f"{len(response.body)} bytes > EDREW_MAX_PAGE_BYTES={self.conf.max_page_bytes}"
        if reason == "not-html":
            return (response.headers.get(b"Content-Type") or b"no Content-Type").decode("latin-1")
        if reason == "http-status":
            return f"HTTP {response.status}"
        return ""


class ModelWaits:
    """Keep the pages that wait for the serializer and the model from counting against CONCURRENT_REQUESTS.

    Scrapy's Downloader holds a request in `active` until its downloader middlewares return, and starts
    no new request while `len(active)` reaches `total_concurrency` (CONCURRENT_REQUESTS): each page
    waiting here would be one request fewer on the network. While pages wait, `total_concurrency` is
    raised by their number, at most by CONCURRENT_REQUESTS (so at most that many more bodies in memory),
    and set back as each one is done. `active` itself is left alone: Scrapy reads it to tell whether the
    spider is idle, and a page being scored is not. Without a downloader with a positive limit (a
    middleware used outside a crawl, CONCURRENT_REQUESTS = 0) it does nothing.
    """

    def __init__(self, crawler):
        self.crawler = crawler
        self.count = 0
        self.limit = max(0, crawler.settings.getint("CONCURRENT_REQUESTS"))

    @contextlib.contextmanager
    def waiting(self) -> Iterator[None]:
        try:
            engine = self.crawler.engine
        except RuntimeError:  # Scrapy >= 2.19 raises before the crawl starts (a middleware used on its own)
            engine = None
        downloader = getattr(engine, "downloader", None)
        total = getattr(downloader, "total_concurrency", None)
        if not isinstance(total, int) or total <= 0 or self.count >= self.limit:
            yield
            return
        self.count += 1
        downloader.total_concurrency = total + 1
        # The engine takes new requests on its next turn, which otherwise comes only when another
        # download finishes; the guard keeps this a no-op on a Scrapy without that private hook.
        nextcall = getattr(getattr(engine, "_slot", None), "nextcall", None)
        if nextcall is not None and callable(getattr(nextcall, "schedule", None)):
            nextcall.schedule()
        try:
            yield
        finally:
            self.count -= 1
            downloader.total_concurrency -= 1


def _serialize(response, metadata: bool = False):
    # with metadata, its declared part is read from the serializer's tree (metadata.read_tree)
    reader = None
    if metadata:
        from ..metadata import read_tree as reader
    return serialize(response.body, encoding=_declared_encoding(response), url=response.url, tree_reader=reader)


def _declared_encoding(response) -> Optional[str]:
    # Bytes, not response.text: the serializer then applies its own checks (binary data served as
    # text/html is skipped as "binary") and its own decoding, the one `edrew extract` uses, which
    # survives charset labels that are not text encodings. An encoding given to the response
    # explicitly (rendering middlewares re-encode the DOM as UTF-8 but keep the site's headers) wins
    # over the Content-Type header.
    declared = getattr(response, "_encoding", None) if isinstance(response, TextResponse) else None
    if not declared:
        ctype = response.headers.get(b"Content-Type")
        declared = ctype.decode("latin-1") if ctype else None
    return declared
