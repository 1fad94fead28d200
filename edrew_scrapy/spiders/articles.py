"""Articles in PDF, found through listing pages of any site:

    scrapy crawl articles -a urls=https://example.org/papers/[,URL2...] [-a depth=1] -O articles.jsonl

The spider reads the listing pages and checks every link: a response with status 200 whose body starts
with %PDF- (whatever its Content-Type) is an article; redirects are followed. A link that answers with
anything but HTML is read only as far as its first bytes (`StopDownload` on the `bytes_received`
signal), so a PDF is downloaded in full once, by Scrapy's FilesPipeline (FILES_STORE, retries,
robots.txt and AutoThrottle as for any request). `ArticlePipeline` then parses the stored file in a
thread and fills the item (edrew_scrapy/scrapy/articlepipeline.py; docs/pdf.md).

depth=N: how many links away from a listing page an article may be. 1 (the default) keeps the PDFs a
listing links to; 2 also reads the HTML pages it links to (on the listing's own hosts) as listings.
"""
from __future__ import annotations

import re
from typing import Iterator, List, Optional
from urllib.parse import urlsplit
from weakref import WeakKeyDictionary

import scrapy
from scrapy import signals
from scrapy.exceptions import IgnoreRequest, StopDownload
from scrapy.http import TextResponse
from scrapy.linkextractors import LinkExtractor
from scrapy.settings import SETTINGS_PRIORITIES
from scrapy.spidermiddlewares.httperror import HttpError

from ..pdf.layout import is_pdf
from .edrew import ArgumentErrors, warn_misspelt_arguments

# Bytes read of a response that does not say it is HTML before the download stops: enough for %PDF-.
PROBE_BYTES = 1024
HTML_TYPES = ("text/html", "application/xhtml+xml")
PIPELINE = "edrew_scrapy.scrapy.articlepipeline.ArticlePipeline"
FILES_PIPELINE = "scrapy.pipelines.files.FilesPipeline"
# FilesPipeline downloads and stores (priority 1 as in Scrapy's docs); ArticlePipeline parses after it.
PIPELINE_PRIORITIES = {FILES_PIPELINE: 1, PIPELINE: 300}
DEFAULT_FILES_STORE = "articles-pdfs"


def _split(value: Optional[str]) -> List[str]:
    return [part for part in re.split(r"[\s,]+", value or "") if part]


class ArticlesSpider(ArgumentErrors, scrapy.Spider):
    name = "articles"
    custom_settings = {
        # the HTML relevant-content scoring of the edrew add-on has nothing to do here
        "EDREW_ENABLED": False,
        "FEED_EXPORTERS": {"csv": "edrew_scrapy.scrapy.articlecsv.ArticleCsvItemExporter"},
    }

    def __init__(self, urls: Optional[str] = None, depth: str = "1", *args, **kwargs):
        super().__init__(*args, **kwargs)
        warn_misspelt_arguments(self.name, kwargs, ("urls", "depth"))
        self.urls = _split(urls)
        if not self.urls:
            raise ValueError("give the listing pages: scrapy crawl articles -a urls=URL1,URL2")
        for url in self.urls:
            if urlsplit(url).scheme not in ("http", "https") or not urlsplit(url).hostname:
                raise ValueError(f"not an http(s) URL: {url!r}")
        try:
            self.depth = int(depth)
        except ValueError:
            raise ValueError(f"depth must be a whole number of links, not {depth!r}") from None
        if self.depth < 1:
            raise ValueError(f"depth must be 1 or more, not {self.depth}")
        self.listing_hosts = {urlsplit(url).hostname for url in self.urls}
        # .pdf links are what we want: LinkExtractor drops them by default (IGNORED_EXTENSIONS)
        self.link_extractor = LinkExtractor(deny_extensions=[])
        self._probing: "WeakKeyDictionary[scrapy.Request, int]" = WeakKeyDictionary()

    @classmethod
    def update_settings(cls, settings) -> None:
        super().update_settings(settings)
        # FilesPipeline and ArticlePipeline unless the project lists them (even as None to disable)
        pipelines = settings.getdict("ITEM_PIPELINES")
        for path, priority in PIPELINE_PRIORITIES.items():
            pipelines.setdefault(path, priority)
        priority = max(settings.getpriority("ITEM_PIPELINES") or 0, SETTINGS_PRIORITIES["spider"])
        settings.set("ITEM_PIPELINES", pipelines, priority)
        if not settings.get("FILES_STORE"):
            settings.set("FILES_STORE", DEFAULT_FILES_STORE, "spider")

    @classmethod
    def from_crawler(cls, crawler, *args, **kwargs):
        spider = super().from_crawler(crawler, *args, **kwargs)
        crawler.signals.connect(spider._headers_received, signal=signals.headers_received)
        crawler.signals.connect(spider._bytes_received, signal=signals.bytes_received)
        return spider

    async def start(self):
        for request in self.start_requests():
            yield request

    def start_requests(self) -> Iterator[scrapy.Request]:
        for url in self.urls:
            yield self._request(url, 0, listing=None)

    def _request(self, url: str, depth: int, listing: Optional[str]) -> scrapy.Request:
        return scrapy.Request(url, callback=self.parse, errback=self.link_failed,
                              meta={"articles_depth": depth, "articles_listing": listing})

    # -- read no more than the first bytes of what is not HTML ------------------------------------------

    def _headers_received(self, headers, body_length, request, spider) -> None:
        if "articles_depth" not in request.meta:
            return  # FilesPipeline's downloads, robots.txt: read whole
        content_type = (headers.get(b"Content-Type") or b"").decode("latin-1").lower()
        encoding = (headers.get(b"Content-Encoding") or b"identity").decode("latin-1").lower()
        # a compressed body cannot be checked from its first bytes: read whole
        if not content_type.startswith(HTML_TYPES) and encoding == "identity":
            self._probing[request] = 0

    def _bytes_received(self, data, request, spider) -> None:
        if request in self._probing:
            self._probing[request] += len(data)
            if self._probing[request] >= PROBE_BYTES:
                raise StopDownload(fail=False)

    # -- callbacks -----------------------------------------------------------------------------------

    def parse(self, response):
        depth = response.meta.get("articles_depth", 0)
        stats = self.crawler.stats
        if response.status == 200 and is_pdf(response.body):
            source = (response.meta.get("redirect_urls") or [response.url])[0]
            stats.inc_value("edrew/pdf/found")
            yield {"url": source, "pdf_url": response.url, "listing": response.meta.get("articles_listing"),
                   "file_urls": [response.url]}
            return
        content_type = (response.headers.get(b"Content-Type") or b"").decode("latin-1").lower()
        if depth > 0:
            stats.inc_value("edrew/pdf/not-pdf")
            if content_type.startswith("application/pdf"):
                # served as a PDF, but its body is something else: a counted skip, as the pipeline's
                stats.inc_value("edrew/pdf/skipped/not-pdf")
                self.logger.info("Skipped %s: served as application/pdf, not a PDF", response.url)
        if depth >= self.depth or not isinstance(response, TextResponse) or \
                urlsplit(response.url).hostname not in self.listing_hosts:
            return
        for link in self.link_extractor.extract_links(response):
            if urlsplit(link.url).scheme in ("http", "https"):
                stats.inc_value("edrew/pdf/links")
                yield self._request(link.url, depth + 1, listing=response.url)

    def link_failed(self, failure):
        """A link that gave no response or an error status: counted, logged as Scrapy would (a link that
        robots.txt forbids Scrapy counts itself, as robotstxt/forbidden)."""
        if failure.check(HttpError):
            self.crawler.stats.inc_value("edrew/pdf/link-errors")
            self.logger.info("Ignoring response %r: HTTP status code is not handled or not allowed",
                             failure.value.response)
        elif not failure.check(IgnoreRequest):
            self.crawler.stats.inc_value("edrew/pdf/link-errors")
            self.logger.info("No response from %s: %s", getattr(failure, "request", None) or "a link",
                             failure.getErrorMessage())
