"""Scrapy integration: enable it with ``ADDONS = {"edrew_scrapy.Addon": 500}``."""
from .addon import Addon
from .items import NodeItem, PageContext, PageItem
from .middleware import META_KEY, EdrewDownloaderMiddleware
from .pipeline import EdrewSpiderMiddleware

__all__ = ["Addon", "EdrewDownloaderMiddleware", "EdrewSpiderMiddleware", "META_KEY", "NodeItem",
           "PageContext", "PageItem"]
