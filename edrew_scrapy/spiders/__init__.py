"""Spiders that come with the plugin, for a Scrapy project to use or subclass.

The repository's own Scrapy project (scrapy.cfg, the top-level spiders/ folder) runs them as
`scrapy crawl NAME`; an installed copy runs them with
``SCRAPY_SETTINGS_MODULE=edrew_scrapy.project.settings scrapy crawl NAME``.
"""
from .articles import ArticlesSpider
from .edrew import EdrewSpider

__all__ = ["ArticlesSpider", "EdrewSpider"]
