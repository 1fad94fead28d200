"""A crawl shared by many processes through Redis: start URLs from a Redis list, links followed
within each page's own host and its subdomains (or allowed_domains), every page turned into its relevant-content item
by the EDREW add-on.

    redis-cli -u "$REDIS_URL" rpush edrew-redis:start_urls https://example.com/
    scrapy crawl edrew-redis -s REDIS_URL="$REDIS_URL" -o pages-$(hostname)-$$.jsonl   # on each machine

Every process takes requests from one shared queue, leased (edrew_scrapy.distributed); a process
stops once nothing is pending or leased anywhere (EDREW_REDIS_CLOSE_WHEN_DONE). See docs/distributed.md.
"""
from __future__ import annotations

import json
import logging
from typing import Optional
from urllib.parse import urlsplit

import scrapy
from scrapy.exceptions import DontCloseSpider
from scrapy.http import TextResponse, XmlResponse
from scrapy.linkextractors import LinkExtractor

from .edrew import _domain, _host, _split

try:
    from scrapy_redis.spiders import RedisSpider as _Base
    _MISSING: Optional[ImportError] = None
except ImportError as exc:
    # Scrapy's spider loader imports every module of SPIDER_MODULES: without the [redis] extra this
    # one must still import, so that `scrapy crawl edrew` works; `scrapy crawl edrew-redis` says why not.
    _Base, _MISSING = scrapy.Spider, exc

logger = logging.getLogger(__name__)


class EdrewRedisSpider(_Base):
    name = "edrew-redis"
    # The EDREW add-on and its Redis part; REDIS_URL (scrapy-redis's setting) names the server.
    custom_settings = {"ADDONS": {"edrew_scrapy.Addon": 500, "edrew_scrapy.distributed.RedisAddon": 510}}

    @classmethod
    def from_crawler(cls, crawler, *args, **kwargs):
        if _MISSING is not None:
            raise ImportError(f"scrapy crawl {cls.name} needs scrapy-redis: pip install 'edrew-scrapy[redis]' "
                              f"({_MISSING})") from _MISSING
        return super().from_crawler(crawler, *args, **kwargs)

    def __init__(self, allowed_domains: Optional[str] = None, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # Empty: each page's links are followed within that page's own host (subdomains included).
        self.follow_domains = sorted({_domain(d) for d in _split(allowed_domains)} - {""})
        self.link_extractor = LinkExtractor()

    async def start(self):
        # Start URLs are read from Redis when the engine is idle (spider_idle), never at start: a
        # process that starts after the others finds them there.
        return
        yield  # an async generator that yields nothing

    def start_requests(self):
        return []

    # ------------------------------------------------------------ start URLs from Redis

    def spider_idle(self):
        if self.schedule_start_urls():
            raise DontCloseSpider
        # Otherwise the Redis add-on decides: more work in the shared queue, or the crawl is over.

    def schedule_start_urls(self) -> int:
        """Schedule the start URLs waiting in the Redis list `redis_key`; each leaves the list only
        after its request is in the shared queue (the dupefilter drops one read twice), so a process
        killed in between loses none."""
        found = 0
        for data in self.server.lrange(self.redis_key, 0, self.redis_batch_size - 1):
            request = self.make_request_from_data(data)
            if request is not None:
                self.crawler.engine.crawl(request)
                found += 1
            self.server.lrem(self.redis_key, 1, data)
        return found

    def make_request_from_data(self, data):
        """A start URL as pushed: the URL itself, or JSON {"url": ...}."""
        text = data.decode(self.redis_encoding, "replace") if isinstance(data, bytes) else str(data)
        text = text.strip()
        url = text
        if text.startswith("{"):
            try:
                url = json.loads(text).get("url") or ""
            except (ValueError, AttributeError):
                url = ""
        if not isinstance(url, str) or urlsplit(url).scheme not in ("http", "https") or not urlsplit(url).hostname:
            self.crawler.stats.inc_value("edrew/redis/bad-start-urls")
            logger.warning("Ignored a start URL that is not an http(s) URL: %r", text[:200])
            return None
        return scrapy.Request(url, callback=self.parse)

    # ------------------------------------------------------------ pages

    def parse(self, response):
        if not isinstance(response, TextResponse) or isinstance(response, XmlResponse):
            return
        domains = self.follow_domains or [_host(response.url)]
        for link in self.link_extractor.extract_links(response):
            url = link.url
            if urlsplit(url).scheme not in ("http", "https"):
                continue  # never file:// or ftp://: a page must not make the crawler read its own disk
            host = _host(url)
            if any(host == d or host.endswith("." + d) for d in domains):
                yield scrapy.Request(url, callback=self.parse)
