"""``ADDONS = {"edrew_scrapy.Addon": 500, "edrew_scrapy.distributed.RedisAddon": 510}`` with
``REDIS_URL``: the crawl shares scrapy-redis's queue and dupefilter with every process that runs it,
with leased requests and feeds that get each page once (docs/distributed.md)."""
from __future__ import annotations

from ..scrapy.addon import _setdefault_component
from . import downloadermiddleware, spidermiddleware
from .downloadermiddleware import LeaseDownloaderMiddleware
from .feeds import wrap_feeds
from .settings import DEFAULTS
from .spidermiddleware import LeaseSpiderMiddleware


class RedisAddon:
    """Set scrapy-redis's scheduler (with leases) and dupefilter, the lease middlewares and the feed
    filter; EDREW_REDIS_ defaults at "addon" priority, so a project's own values win.

    SCHEDULER_PERSIST is on: a process that finishes must not delete the queue that the others still
    work from (scrapy-redis's default clears it on close). Delete the crawl's keys to start over.
    """

    def update_settings(self, settings) -> None:
        for name, value in DEFAULTS.items():
            settings.setdefault(name, value, "addon")
        if not settings.getbool("EDREW_REDIS_ENABLED", True):
            return
        settings.set("SCHEDULER", "edrew_scrapy.distributed.scheduler.LeasingScheduler", "addon")
        settings.set("DUPEFILTER_CLASS", "scrapy_redis.dupefilter.RFPDupeFilter", "addon")
        settings.set("SCHEDULER_PERSIST", True, "addon")
        _setdefault_component(settings, "SPIDER_MIDDLEWARES", LeaseSpiderMiddleware, spidermiddleware.PRIORITY)
        _setdefault_component(settings, "DOWNLOADER_MIDDLEWARES", LeaseDownloaderMiddleware,
                              downloadermiddleware.PRIORITY)
        wrap_feeds(settings)
