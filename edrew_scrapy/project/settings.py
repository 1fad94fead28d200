"""Settings of the bundled project (the clone's spiders/settings.py takes them too); any of them can be
overridden with ``scrapy crawl edrew -s NAME=VALUE``."""

BOT_NAME = "edrew"
SPIDER_MODULES = ["edrew_scrapy.spiders"]
NEWSPIDER_MODULE = "edrew_scrapy.spiders"

# The whole plugin: downloader middleware, scoring stage and the EDREW_ defaults (see docs/scrapy.md).
ADDONS = {"edrew_scrapy.Addon": 500}

ROBOTSTXT_OBEY = True
USER_AGENT = "edrew-scrapy/0.1 (relevant-content crawler; Scrapy)"
CONCURRENT_REQUESTS = 16
# Polite by default, as a crawler pointed at someone else's site should be: at most two requests to a
# site at once, and AutoThrottle slows down as the site's responses slow down. Set USER_AGENT to name
# you and a contact address before crawling sites that are not yours.
CONCURRENT_REQUESTS_PER_DOMAIN = 2
AUTOTHROTTLE_ENABLED = True
AUTOTHROTTLE_START_DELAY = 0.5
AUTOTHROTTLE_TARGET_CONCURRENCY = 2.0
# A generic crawler should not hang on one slow server.
DOWNLOAD_TIMEOUT = 30
RETRY_TIMES = 1

FEED_EXPORT_ENCODING = "utf-8"
TELNETCONSOLE_ENABLED = False
LOG_LEVEL = "INFO"
