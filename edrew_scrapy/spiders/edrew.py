"""A generic crawler: start URLs, their links and sitemaps, within the allowed domains.

    scrapy crawl edrew -a urls=https://example.com/,https://example.org/news/ \
        [-a allowed_domains=example.com,example.org] [-a max_pages=500] [-a max_depth=3] [-a sitemaps=0] \
        -O out.jsonl

The spider only finds pages; the EDREW add-on (edrew_scrapy/project/settings.py) turns every HTML page the spider
parses into an item holding its relevant content.
"""
from __future__ import annotations

import difflib
import logging
import re
from typing import Iterable, Iterator, List, Optional, Set
from urllib.parse import urlsplit

import scrapy
from scrapy.exceptions import IgnoreRequest
from scrapy.http import TextResponse, XmlResponse
from scrapy.linkextractors import LinkExtractor
from scrapy.spidermiddlewares.httperror import HttpError
from scrapy.utils.gz import gunzip
from scrapy.utils.sitemap import Sitemap
from w3lib.url import canonicalize_url, safe_url_string

try:
    from scrapy.http import JsonResponse  # Scrapy >= 2.12
    _JSON_RESPONSE: tuple = (JsonResponse,)
except ImportError:
    _JSON_RESPONSE = ()

# Sitemaps larger than this once decompressed are skipped with a warning (the protocol's own limit is 50 MB).
SITEMAP_MAX_BYTES = 50 * 1024 * 1024
# How far into a sitemap its root element is looked for (after an XML declaration, comments, a BOM).
SITEMAP_SNIFF_BYTES = 64 * 1024
# robots.txt and sitemaps are no pages: the add-on must not make items of them, even when a site
# answers every path with its HTML home page.
NOT_A_PAGE = {"edrew": False}


logger = logging.getLogger(__name__)


def warn_misspelt_arguments(spider: str, given: Iterable[str], arguments: Iterable[str]) -> List[str]:
    """A WARNING for each `-a NAME=...` close to one of the spider's arguments but not one: Scrapy sets any
    other name as a spider attribute, so `-a max_page=200` (for max_pages) crawled the whole site, silently.
    Names far from every argument pass without a word: other components may read them as spider attributes,
    and scrapyd adds `_job`."""
    arguments = list(arguments)
    misspelt = []
    for name in given:
        close = difflib.get_close_matches(name, arguments, n=1, cutoff=0.7)
        if close and not name.startswith("_"):
            misspelt.append(name)
            logger.warning("scrapy crawl %s: -a %s is not an argument of this spider and does nothing; did you "
                           "mean -a %s? (its arguments: %s)", spider, name, close[0], ", ".join(arguments))
    return misspelt


class ArgumentErrors:
    """A spider whose wrong `-a` value (a ValueError from __init__) stops the crawl with one ERROR line that
    says what is wrong first: Scrapy reports it only as an asyncio "Task exception was never retrieved"
    traceback, with the message at its very end."""

    @classmethod
    def from_crawler(cls, crawler, *args, **kwargs):
        try:
            return super().from_crawler(crawler, *args, **kwargs)
        except ValueError as exc:
            logger.error("scrapy crawl %s cannot start: %s", cls.name, exc)
            raise


def _split(value: Optional[str]) -> List[str]:
    # commas, spaces or newlines: a URL holds none of them raw
    return [part for part in re.split(r"[\s,]+", value or "") if part]


def _host(url: str) -> str:
    """The host as requests carry it: lower case, IDNA ("bücher.example" -> "xn--bcher-kva.example")."""
    return (urlsplit(safe_url_string(url)).hostname or "").lower()


def _domain(value: str) -> str:
    """An allowed_domains entry as OffsiteMiddleware needs it: a bare host, whatever the user wrote
    ("Example.COM", ".example.com", "127.0.0.1:8000", "https://example.com/")."""
    return _host(value if "//" in value else f"http://{value.lstrip('.')}")


def _count(name: str, value: Optional[str], what: str) -> Optional[int]:
    """A spider argument that is a whole number >= 0, or None when not given."""
    if value in (None, ""):
        return None
    try:
        number = int(value)
    except ValueError:
        raise ValueError(f"{name} must be a whole number of {what}, not {value!r}") from None
    if number < 0:
        raise ValueError(f"{name} must be 0 or more, not {number}")
    return number


ARGUMENTS = ("urls", "allowed_domains", "max_pages", "max_depth", "sitemaps")


class EdrewSpider(ArgumentErrors, scrapy.Spider):
    name = "edrew"
    edrew_own_items = False  # every item comes from the add-on: its CSV feeds mix nothing (feeds.py)

    def __init__(self, urls: Optional[str] = None, allowed_domains: Optional[str] = None,
                 max_pages: Optional[str] = None, sitemaps: str = "1", max_depth: Optional[str] = None,
                 *args, **kwargs):
        super().__init__(*args, **kwargs)
        warn_misspelt_arguments(self.name, kwargs, ARGUMENTS)
        self.urls = _split(urls)
        if not self.urls:
            raise ValueError("give the start pages: scrapy crawl edrew -a urls=URL1,URL2")
        for url in self.urls:
            if urlsplit(url).scheme not in ("http", "https") or not urlsplit(url).hostname:
                raise ValueError(f"not an http(s) URL: {url!r}")
        self.allowed_domains = sorted({_domain(d) for d in _split(allowed_domains)} - {""}) \
            or sorted({_host(u) for u in self.urls})
        outside = [u for u in self.urls if not self._in_allowed_domains(u)]
        if outside:
            raise ValueError(f"start URLs outside allowed_domains={','.join(self.allowed_domains)}: "
                             f"{', '.join(outside)}")
        self.max_pages = _count("max_pages", max_pages, "pages (0: no limit)") or 0
        self.max_depth = _count("max_depth", max_depth, "links from a start page")
        self.follow_sitemaps = str(sitemaps).lower() not in ("0", "false", "no", "off")
        # No allow_domains here: LinkExtractor compares host:port with the domains, and a start URL
        # such as http://127.0.0.1:8000/ must keep its own links. _page_request filters by host.
        self.link_extractor = LinkExtractor()
        self._seen: Set[str] = set()
        # max_pages counts page requests, whatever comes of them (a 404, a failed download, a page
        # robots.txt forbids): it bounds the crawl's requests, as CLOSESPIDER_PAGECOUNT bounds responses.
        self._requested = 0

    async def start(self):
        for request in self.start_requests():
            yield request

    def start_requests(self) -> Iterator[scrapy.Request]:
        for url in self.urls:
            request = self._page_request(url)
            if request is not None:
                yield request
        if self.follow_sitemaps:
            origins = dict.fromkeys(f"{urlsplit(u).scheme}://{urlsplit(u).netloc}" for u in self.urls)
            for origin in origins:
                # RobotsTxtMiddleware fetches robots.txt too, for its rules; its parser is not public,
                # so the Sitemap: lines cost a second download of a small file per site.
                yield scrapy.Request(f"{origin}/robots.txt", callback=self.parse_robots, priority=-1,
                                     meta=NOT_A_PAGE)
                yield scrapy.Request(f"{origin}/sitemap.xml", callback=self.parse_sitemap, priority=-1,
                                     meta=NOT_A_PAGE)

    def parse(self, response):
        # A page, not data: a JSON or XML response found through a link has no links to extract.
        if not isinstance(response, TextResponse) or isinstance(response, (XmlResponse, *_JSON_RESPONSE)):
            return
        # As DEPTH_LIMIT: start pages are at depth 0, a page linked from depth d at d + 1 (DepthMiddleware's
        # meta["depth"]; a page listed in a sitemap counts the hops robots.txt -> sitemap -> page).
        if self.max_depth is not None and response.meta.get("depth", 0) >= self.max_depth:
            return
        for link in self.link_extractor.extract_links(response):
            request = self._page_request(link.url)
            if request is not None:
                yield request

    def parse_robots(self, response):
        if not isinstance(response, TextResponse):
            return
        for line in response.text.splitlines():
            name, _, value = line.partition(":")
            if name.strip().lower() == "sitemap" and value.strip():
                yield scrapy.Request(response.urljoin(value.strip()), callback=self.parse_sitemap, priority=-1,
                                     meta=NOT_A_PAGE)

    def parse_sitemap(self, response):
        try:
            entries, kind = self._sitemap_entries(response)
        except Exception as exc:  # a broken sitemap costs its own entries, not the crawl
            self.logger.warning("Skipped the sitemap %s: %s: %s", response.url, type(exc).__name__, exc)
            return
        for loc in entries:
            # Sloppy sitemaps use relative locations; resolving them costs nothing.
            url = response.urljoin(loc)
            if kind == "sitemapindex":
                if urlsplit(url).scheme in ("http", "https"):
                    yield scrapy.Request(url, callback=self.parse_sitemap, priority=-1, meta=NOT_A_PAGE)
            else:
                request = self._page_request(url)
                if request is not None:
                    yield request

    def _sitemap_entries(self, response):
        """(the <loc>s, the sitemap's type), read whole before any is followed."""
        body = response.body
        if body[:2] == b"\x1f\x8b":
            body = gunzip(body, max_size=SITEMAP_MAX_BYTES)  # too large or broken: raises
        head = body[:SITEMAP_SNIFF_BYTES]
        if b"<urlset" not in head and b"<sitemapindex" not in head:
            self.logger.info("Not a sitemap: %s", response.url)
            return [], None
        sitemap = Sitemap(body)
        return [entry["loc"] for entry in sitemap if entry.get("loc")], sitemap.type

    def _page_request(self, url: str) -> Optional[scrapy.Request]:
        """A request for a page not requested before, in the allowed domains, within max_pages."""
        if urlsplit(url).scheme not in ("http", "https"):
            # LinkExtractor also keeps file:// and ftp:// links, and Scrapy's file handler ignores the
            # host: a page could make the crawler read local files into its feed.
            return None
        key = canonicalize_url(url)
        if key in self._seen or not self._in_allowed_domains(url):
            return None
        if self.max_pages and self._requested >= self.max_pages:
            return None
        self._seen.add(key)
        self._requested += 1
        return scrapy.Request(url, callback=self.parse, errback=self.page_failed)

    def page_failed(self, failure):
        """No page from this request (forbidden by robots.txt, an error status, a failed download)."""
        # An errback that returns takes the failure over, and Scrapy then logs nothing: say it here as
        # Scrapy would have (robots.txt's refusals Scrapy logs and counts itself).
        if failure.check(HttpError):
            self.logger.info("Ignoring response %r: HTTP status code is not handled or not allowed",
                             failure.value.response)
        elif not failure.check(IgnoreRequest):
            self.logger.error("Error downloading %s: %s", getattr(failure, "request", None) or "a page",
                              failure.getErrorMessage())

    def _in_allowed_domains(self, url: str) -> bool:
        host = _host(url)
        return any(host == d or host.endswith("." + d) for d in self.allowed_domains)
