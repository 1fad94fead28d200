"""``ADDONS = {"edrew_scrapy.Addon": 500}``: everything the plugin needs, in one setting."""
from __future__ import annotations

from scrapy.utils.misc import load_object

from .downloadermiddleware import EdrewDownloaderMiddleware
from .exporters import SafeCsvItemExporter
from .feeds import FeedCheck
from .reports import EdrewReports
from .resume import FEED_STORAGE, RESUME_SCHEDULER, SCRAPY_SCHEDULER, ResumeGuard, resume_enabled, wrap_feeds
from .settings import DEFAULTS, warn_unknown
from .spidermiddleware import EdrewSpiderMiddleware

SCRAPY_LOG_FORMATTER = "scrapy.logformatter.LogFormatter"
LOG_FORMATTER = "edrew_scrapy.scrapy.logformatter.EdrewLogFormatter"

# Below RetryMiddleware (550), HttpCompressionMiddleware (590) and RedirectMiddleware (600), so their
# process_response runs first: pages arrive decompressed, and redirects and retried errors are never
# serialised.
DOWNLOADER_MIDDLEWARE_PRIORITY = 540
# Next to the spider: the relevant-content items then flow through every other spider middleware,
# just as if the spider had yielded them.
SPIDER_MIDDLEWARE_PRIORITY = 950
# Any order works: the feed check only reads settings; the guard only needs to run before the engine opens
# the scheduler, and every extension is built before that.
EXTENSION_PRIORITY = 500


def _setdefault_component(settings, name: str, cls: type, priority: int) -> None:
    """Add `cls` to a component dict unless the project already lists it (even as None or a path)."""
    if hasattr(settings, "setdefault_in_component_priority_dict"):  # Scrapy >= 2.13
        settings.setdefault_in_component_priority_dict(name, cls, priority)
        return
    components = settings.getdict(name)
    if any(load_object(key) is cls if isinstance(key, str) else key is cls for key in components):
        return
    components[cls] = priority
    settings.set(name, components, settings.getpriority(name) or 0)


class Addon:
    """Enable the EDREW downloader and spider middlewares, the log formatter that summarises page items,
    the CSV exporter that keeps page text from being read as formulas (exporters.py), the report
    extension (idle unless EDREW_REPORT_DIR is set) and set the EDREW_ defaults; with JOBDIR, also the
    resume guard, the journaling scheduler and, on every feed, the filter that keeps a page from being
    exported twice.

    Every value is set at "addon" priority or only when missing, so a project's own EDREW_ settings
    and component priorities (including None to disable one) always win.
    """

    def update_settings(self, settings) -> None:
        warn_unknown(settings)
        for name, value in DEFAULTS.items():
            settings.setdefault(name, value, "addon")
        _setdefault_component(settings, "DOWNLOADER_MIDDLEWARES", EdrewDownloaderMiddleware,
                              DOWNLOADER_MIDDLEWARE_PRIORITY)
        _setdefault_component(settings, "SPIDER_MIDDLEWARES", EdrewSpiderMiddleware,
                              SPIDER_MIDDLEWARE_PRIORITY)
        _replace_scrapys_own(settings, "LOG_FORMATTER", SCRAPY_LOG_FORMATTER, LOG_FORMATTER)
        _setdefault_component(settings, "EXTENSIONS", FeedCheck, EXTENSION_PRIORITY)
        # NotConfigured (nothing done) unless EDREW_REPORT_DIR is set
        _setdefault_component(settings, "EXTENSIONS", EdrewReports, EXTENSION_PRIORITY)
        exporters = settings.getdict("FEED_EXPORTERS")
        if "csv" not in exporters:  # a project's own CSV exporter stays
            exporters["csv"] = SafeCsvItemExporter
            settings.set("FEED_EXPORTERS", exporters, settings.getpriority("FEED_EXPORTERS") or "addon")
        if resume_enabled(settings):
            _setdefault_component(settings, "EXTENSIONS", ResumeGuard, EXTENSION_PRIORITY)
            _set_resume_scheduler(settings)
            wrap_feeds(settings)


def _replace_scrapys_own(settings, name: str, scrapys: str, ours: str) -> None:
    """Set `name` to `ours` at "addon" priority while it names Scrapy's own class; a project's own
    class (or Scrapy's, set in the project's settings) is kept."""
    value = settings.get(name)
    if isinstance(value, type):
        value = f"{value.__module__}.{value.__qualname__}"
    if value in (None, scrapys):
        settings.set(name, ours, "addon")


def _set_resume_scheduler(settings) -> None:
    """ResumeScheduler in place of Scrapy's own scheduler (another one, e.g. scrapy-redis's, is kept:
    ResumeGuard then restarts after an unclean stop), and local feeds it can flush."""
    _replace_scrapys_own(settings, "SCHEDULER", SCRAPY_SCHEDULER, RESUME_SCHEDULER)
    storages = settings.getdict("FEED_STORAGES")
    for scheme in ("", "file"):
        storages.setdefault(scheme, FEED_STORAGE)
    settings.set("FEED_STORAGES", storages, settings.getpriority("FEED_STORAGES") or 0)
