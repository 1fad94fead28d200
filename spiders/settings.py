"""Settings of the repository's Scrapy project: those of edrew_scrapy.project.settings, with this
folder's spiders. Any of them can be overridden with ``scrapy crawl NAME -s NAME=VALUE``."""
from edrew_scrapy.project.settings import *  # noqa: F403 - every setting of the bundled project

SPIDER_MODULES = ["spiders"]
NEWSPIDER_MODULE = "spiders"
