"""Resuming a JOBDIR crawl, after a graceful or an unclean stop (SIGKILL, a crash): no page lost, none
exported twice, and only the pages in flight downloaded again.

Scrapy (checked on 2.19) writes JOBDIR's scheduler state (``requests.queue/active.json`` and the
queues' ``info.json``) only when the spider closes, while the dupefilter appends fingerprints to
``requests.seen`` through an 8 KB buffer. After a kill the queue state is gone or stale and
``requests.seen`` holds an arbitrary prefix of the fingerprints. Three parts handle that:

* `ResumeGuard`, an extension: a marker file in JOBDIR says a crawl is running; it is written once the
  scheduler is open and removed when the spider closes cleanly, after the scheduler has saved its
  state. Found at start, it means the last run never closed, so the guard deletes the scheduler's
  ``requests.queue/`` and ``requests.seen`` before the engine opens them. With `ResumeScheduler`
  (scheduler.py) the crawl then goes on from its journal; with another SCHEDULER it starts over from
  its start URLs. Extensions are built before the engine creates the scheduler and the dupefilter
  (``Crawler._apply_settings`` then ``_create_engine``), so the deletion comes first.
* `FlushedFileFeedStorage`, Scrapy's local file storage whose open files the scheduler flushes before
  it writes that requests are finished, so that the journal never says more than the feeds hold.
* `ExportedItemFilter`, a FEEDS ``item_filter`` the add-on puts on every feed when JOBDIR is set: a
  feed does not get a page item (or node item) it already holds (a page whose export reached the feed
  but whose end did not reach the journal before a kill). What it holds is read from the feed
  file itself at start (what reached the disk, not what Python still buffered when the process died):
  local JSON Lines and CSV feeds in append mode. A record cut short by the kill is removed from the end
  of the file first, so the feed stays parseable and that page is exported again in full.
"""
from __future__ import annotations

import csv
import json
import logging
import os
import re
import shutil
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path, PureWindowsPath
from typing import IO, Any, Callable, Dict, FrozenSet, Iterator, List, Mapping, Optional, Set, Tuple
from urllib.parse import urlparse
from weakref import WeakKeyDictionary, WeakSet

from itemadapter import ItemAdapter
from scrapy import signals
from scrapy.exceptions import NotConfigured
from scrapy.extensions.feedexport import FileFeedStorage
from scrapy.utils.misc import load_object

from .items import NodeItem, PageItem
from .settings import DEFAULTS
from .stats import PREFIX

logger = logging.getLogger(__name__)

MARKER = "edrew-crawl-running"
SCHEDULER_STATE = ("requests.queue", "requests.seen")

# Keys the add-on adds to a feed's options (FEEDS) next to item_filter.
TOKEN_OPTION = "edrew_resume"          # which ResumeState the feed's filter reports to
URI_OPTION = "edrew_feed_uri"          # the feed's URI template (a filter is not told its URI)
INNER_FILTER_OPTION = "edrew_item_filter"  # the feed's own item_filter, applied first

# The exporters whose feeds can be read back, by format: Scrapy's, and for CSV the add-on's own, which
# writes the same file (only text cells that start like a formula differ, never url, path or index).
_SCRAPY_EXPORTERS = {"jsonlines": ("scrapy.exporters.JsonLinesItemExporter",),
                     "jsonl": ("scrapy.exporters.JsonLinesItemExporter",),
                     "jl": ("scrapy.exporters.JsonLinesItemExporter",),
                     "csv": ("scrapy.exporters.CsvItemExporter",
                             "edrew_scrapy.scrapy.exporters.SafeCsvItemExporter")}
_NEW_FILE_EACH_RUN = re.compile(r"%\((?:time|batch_time|batch_id)\)")

Key = Tuple[str, ...]


SCRAPY_SCHEDULER = "scrapy.core.scheduler.Scheduler"
RESUME_SCHEDULER = "edrew_scrapy.scrapy.scheduler.ResumeScheduler"
FEED_STORAGE = "edrew_scrapy.scrapy.resume.FlushedFileFeedStorage"


def resume_enabled(settings) -> bool:
    return bool(settings.get("JOBDIR")) and settings.getbool("EDREW_RESUME", DEFAULTS["EDREW_RESUME"]) \
        and settings.getbool("EDREW_ENABLED", DEFAULTS["EDREW_ENABLED"])


# ------------------------------------------------------------------ keys: what "already exported" means

def item_key(item: Any) -> Optional[Key]:
    """A page item is one per URL, a node item one per (URL, node index, path); other items (the
    spider's own, a builder's) have no key here (ExportedItemFilter still holds back those with the
    shape of a record an earlier run exported: a page or node item an item pipeline turned into a dict)."""
    if isinstance(item, PageItem):
        return ("page", item.url)
    if isinstance(item, NodeItem):
        return ("node", item.url, str(item.index), item.path)
    return None


def record_key(record: Mapping[str, Any]) -> Optional[Key]:
    """The key of a record read from a feed, when it has the shape of a page or node item.

    A record that lacks a field (FEED_EXPORT_FIELDS left it out, or it is some other item with a url)
    gets no key: its page is then exported again rather than risk leaving out a page never exported.
    """
    url = record.get("url")
    if not isinstance(url, str) or not url:
        return None
    path, index = record.get("path"), record.get("index")
    if path and index not in (None, "") and "content" in record:
        return ("node", url, str(index), str(path))
    if record.get("text") and record.get("nodes"):
        return ("page", url)
    return None


# ------------------------------------------------------------------ reading a feed back

@dataclass
class FeedContents:
    keys: Set[Key] = field(default_factory=set)
    records: int = 0          # complete records read
    removed_bytes: int = 0    # the record cut short at the end, removed from the file
    problem: str = ""         # why reading stopped early (the keys read until then still count)


def _ascii_compatible(encoding: str) -> bool:
    try:
        return "\n,\"a".encode(encoding) == b"\n,\"a"
    except (LookupError, UnicodeError):
        return False


def cut_file(path: Path, size: int) -> int:
    """Remove what follows the first `size` bytes of the file (a record a kill cut short); the bytes removed."""
    total = path.stat().st_size
    if size >= total:
        return 0
    os.truncate(path, size)
    return total - size


class CompleteLines:
    """The lines of an existing file up to one without its newline (a kill cut it short); `end` counts
    the bytes of the lines read, for `cut_file`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.end = 0

    def __iter__(self) -> Iterator[bytes]:
        with open(self.path, "rb") as fh:
            for raw in fh:
                if not raw.endswith(b"\n"):
                    return
                self.end += len(raw)
                yield raw


def _truncate(path: Path, size: int, contents: FeedContents) -> None:
    removed = cut_file(path, size)
    if removed:
        contents.removed_bytes = removed


def read_jsonlines(path: Path, encoding: str = "utf-8", truncate: bool = True) -> FeedContents:
    """Keys of the complete lines of a JSON Lines feed; a last line without its newline (the kill
    cut it) is removed from the file when `truncate`."""
    contents = FeedContents()
    if not path.is_file():
        return contents
    lines = CompleteLines(path)
    for raw in lines:
        try:
            record = json.loads(raw.decode(encoding, "replace"))
        except ValueError:
            continue  # a broken line in the middle (not ours); the items around it still count
        if isinstance(record, dict):
            contents.records += 1
            key = record_key(record)
            if key is not None:
                contents.keys.add(key)
    if truncate:
        _truncate(path, lines.end, contents)
    return contents


def read_csv(path: Path, encoding: str = "utf-8", truncate: bool = True) -> FeedContents:
    """Keys of the complete records of a CSV feed, whose fields may span lines (quoted newlines).

    An append-mode CSV feed holds one header line per run; a row equal to a header read before is
    taken as the header of the next run. A last record without its line end, or inside an unclosed
    quote at the end of the file, is removed from the file when `truncate`.
    """
    contents = FeedContents()
    if not path.is_file():
        return contents
    consumed = [0, True, False]  # bytes handed to the reader, last line ended with \n, exhausted

    def lines(fh) -> Iterator[str]:
        for raw in fh:
            consumed[0] += len(raw)
            consumed[1] = raw.endswith(b"\n")
            yield raw.decode(encoding, "replace")
        consumed[2] = True

    end = 0
    headers: List[List[str]] = []
    with open(path, "rb") as fh:
        reader = csv.reader(lines(fh), strict=True)
        while True:
            try:
                row = next(reader)
            except StopIteration:
                break
            except csv.Error as exc:
                if not consumed[2]:  # malformed in the middle: stop reading, cut nothing
                    contents.problem = f"unreadable CSV after byte {end}: {exc}"
                    return contents
                break  # an unclosed quote at the end: a record cut short
            if not consumed[1]:
                break  # the last line has no line end: cut short
            end = consumed[0]
            if not headers or row in headers:
                if row not in headers:
                    headers.append(row)
                continue
            contents.records += 1
            key = record_key(dict(zip(headers[-1], row)))
            if key is not None:
                contents.keys.add(key)
    if truncate:
        _truncate(path, end, contents)
    return contents


def read_feed(path: Path, fmt: str, encoding: str = "utf-8", truncate: bool = True) -> FeedContents:
    reader = read_csv if fmt == "csv" else read_jsonlines
    return reader(path, encoding, truncate)


# ------------------------------------------------------------------ the unclean-stop marker

def unclean_stop(jobdir: Path) -> bool:
    """True when the last crawl with this JOBDIR opened and never closed cleanly."""
    return (jobdir / MARKER).exists()


def clear_scheduler_state(jobdir: Path) -> List[str]:
    """Delete the scheduler's queue and the dupefilter's fingerprints; returns what was there."""
    removed = []
    for name in SCHEDULER_STATE:
        target = jobdir / name
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target)
        elif target.exists() or target.is_symlink():
            target.unlink()
        else:
            continue
        removed.append(name)
    return removed


def write_marker(jobdir: Path) -> None:
    jobdir.mkdir(parents=True, exist_ok=True)
    (jobdir / MARKER).write_text(f"pid {os.getpid()}, started {time.strftime('%Y-%m-%d %H:%M:%S')}\n",
                                 encoding="utf-8")


def remove_marker(jobdir: Path) -> None:
    try:
        (jobdir / MARKER).unlink()
    except FileNotFoundError:
        pass


# ------------------------------------------------------------------ feed files the journal waits for

_feed_files: "WeakKeyDictionary[Any, WeakSet]" = WeakKeyDictionary()


class FlushedFileFeedStorage(FileFeedStorage):
    """Scrapy's local file storage, whose open files `flush_feed_files` flushes: ResumeScheduler
    calls it before it writes that requests are finished, so their items are in the files first."""

    def __init__(self, uri: str, *, feed_options: Optional[Dict[str, Any]] = None, crawler=None):
        super().__init__(uri, feed_options=feed_options)
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler, uri: str, *, feed_options: Optional[Dict[str, Any]] = None):
        return cls(uri, feed_options=feed_options, crawler=crawler)

    def open(self, spider) -> IO[bytes]:
        file = super().open(spider)
        if self.crawler is not None:
            _feed_files.setdefault(self.crawler, WeakSet()).add(file)
        return file


def flush_feed_files(crawler) -> None:
    for file in list(_feed_files.get(crawler, ())):
        if not file.closed:
            file.flush()


def continues_after_unclean_stop(settings) -> bool:
    """Whether this crawl's scheduler keeps the journal that lets it go on after an unclean stop."""
    from .scheduler import ResumeScheduler

    try:
        scheduler = load_object(settings.get("SCHEDULER") or SCRAPY_SCHEDULER)
    except Exception:
        return False
    # the MRO, not issubclass: Scrapy's scheduler metaclass answers issubclass by the methods a class has
    return ResumeScheduler in getattr(scheduler, "__mro__", ())


# ------------------------------------------------------------------ the add-on's part: FEEDS

@dataclass
class ResumeState:
    """Shared by the guard and the feed filters of one crawler (found through TOKEN_OPTION)."""

    exported: Dict[str, Set[Key]] = field(default_factory=dict)   # feed URI template -> keys
    stats: Any = None
    logged: bool = False

    def already_exported(self, uri: str, item: Any) -> None:
        if self.stats is not None:
            self.stats.inc_value(PREFIX + "resume/already-exported")
        if not self.logged:
            self.logged = True
            logger.info("EDREW did not export %s to the feed %s again: it is already there; further "
                        "such items are counted in the stat %sresume/already-exported, not logged",
                        ItemAdapter(item).get("url") if ItemAdapter.is_item(item) else item, uri, PREFIX)


_STATES: Dict[str, ResumeState] = {}


def feed_uri(uri: Any) -> str:
    """A FEEDS key as FeedExporter spells it (a Path becomes an absolute path)."""
    return str(uri.absolute()) if isinstance(uri, Path) else str(uri)


def wrap_feeds(settings) -> None:
    """Put ExportedItemFilter on every feed in FEEDS (keeping the feed's own item_filter)."""
    feeds = settings.getdict("FEEDS")
    if not feeds or any(TOKEN_OPTION in (options or {}) for options in feeds.values()):
        return
    token = uuid.uuid4().hex
    _STATES[token] = ResumeState()
    chain_item_filter(settings, ExportedItemFilter, INNER_FILTER_OPTION,
                      lambda uri: {TOKEN_OPTION: token, URI_OPTION: feed_uri(uri)})


def chain_item_filter(settings, item_filter: type, inner_option: str,
                      extra: Callable[[Any], Dict[str, Any]]) -> None:
    """Make `item_filter` the item_filter of every feed in FEEDS; the feed's own one is kept in the
    option `inner_option` (for `item_filter` to apply first), and the options `extra(uri)` are added."""
    wrapped = {}
    for uri, options in settings.getdict("FEEDS").items():
        options = dict(options or {})
        options[inner_option] = options.get("item_filter")
        options["item_filter"] = item_filter
        options.update(extra(uri))
        wrapped[uri] = options
    settings.set("FEEDS", wrapped, settings.getpriority("FEEDS") or 0)


class ExportedItemFilter:
    """A feed's item_filter: refuse a page or node item the feed already held when this run started
    (read back by ResumeGuard); everything else goes to the feed's own filter.

    Only what an earlier run exported counts. Within a run, what gets requested twice is Scrapy's
    dupefilter's call, with or without JOBDIR: pages fetched at one URL with different bodies (POST
    paging, `dont_filter`) are different pages, and each keeps its item."""

    def __init__(self, feed_options: Dict[str, Any]):
        inner = feed_options.get(INNER_FILTER_OPTION)
        if inner is None:
            from scrapy.extensions.feedexport import ItemFilter as inner
        self.inner = load_object(inner)(feed_options)
        self.uri = feed_options.get(URI_OPTION, "")
        self.state = _STATES.get(feed_options.get(TOKEN_OPTION, "")) or ResumeState()
        self.earlier: Optional[FrozenSet[Key]] = None

    def accepts(self, item: Any) -> bool:
        if not self.inner.accepts(item):
            return False
        if self.earlier is None:  # ResumeGuard read the feed back before the first item
            self.earlier = frozenset(self.state.exported.get(self.uri, ()))
        key = item_key(item)
        if key is None and ItemAdapter.is_item(item):
            # An item pipeline may have turned a page or node item into a dict (ItemAdapter(item).asdict()):
            # a record of that shape is held back too when the feed held it.
            key = record_key(ItemAdapter(item))
        if key is not None and key in self.earlier:
            self.state.already_exported(self.uri, item)
            return False
        return True


# ------------------------------------------------------------------ the extension

class ResumeGuard:
    """Detect an unclean stop of the last crawl with this JOBDIR and remove Scrapy's stale queue state
    (ResumeScheduler then continues the crawl from its journal; another scheduler restarts it); read
    the feeds back so that what they hold is not exported again. Active when JOBDIR is set and
    EDREW_RESUME and EDREW_ENABLED are true."""

    def __init__(self, crawler):
        self.crawler = crawler
        self.jobdir = Path(crawler.settings["JOBDIR"])
        self.token = None
        if unclean_stop(self.jobdir):
            removed = clear_scheduler_state(self.jobdir)
            crawler.stats.set_value(PREFIX + "resume/unclean-stop", 1)
            if continues_after_unclean_stop(crawler.settings):
                logger.info("EDREW: the last crawl with JOBDIR=%s did not close cleanly (killed or crashed); "
                            "removed its stale %s, the crawl continues from its journal",
                            self.jobdir, ", ".join(removed) or "nothing")
            else:
                crawler.stats.set_value(PREFIX + "resume/unclean-restart", 1)
                logger.warning(
                    "EDREW: the last crawl with JOBDIR=%s did not close cleanly (killed or crashed), so its "
                    "saved queue and seen-requests are not trustworthy; removed %s and restarting from the "
                    "start URLs (SCHEDULER=%s keeps no journal to continue from). Pages already in the "
                    "feeds are not exported again.",
                    self.jobdir, ", ".join(removed) or "nothing", crawler.settings.get("SCHEDULER"))
        self._read_feeds()
        crawler.signals.connect(self.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(self.spider_closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler):
        if not resume_enabled(crawler.settings):
            raise NotConfigured
        return cls(crawler)

    def spider_opened(self, spider) -> None:
        # The scheduler (and its dupefilter) opened just before this signal.
        write_marker(self.jobdir)

    def spider_closed(self, spider, reason) -> None:
        # The scheduler saved its queue before this signal: the JOBDIR is consistent again.
        remove_marker(self.jobdir)
        _STATES.pop(self.token or "", None)

    # -------------------------------------------------------------- feeds

    def _read_feeds(self) -> None:
        from scrapy.utils.conf import feed_complete_default_values_from_settings

        settings = self.crawler.settings
        for uri, options in settings.getdict("FEEDS").items():
            options = options or {}
            state = _STATES.get(options.get(TOKEN_OPTION, ""))
            if state is None:
                continue
            self.token = options[TOKEN_OPTION]
            state.stats = self.crawler.stats
            template = options.get(URI_OPTION) or feed_uri(uri)
            # The format from the URI's suffix, as Scrapy 2.19 does given the URI; earlier versions take
            # no URI argument.
            options = dict(options)
            options.setdefault("format", Path(template).suffix.removeprefix("."))
            options = feed_complete_default_values_from_settings(options, settings)
            if options.get("overwrite"):
                continue  # rewritten from the start by this run: nothing in it counts
            path, why = self._local_path(template, options)
            if path is None:
                logger.info("EDREW cannot read the feed %s back (%s): pages it got before an unclean "
                            "stop may be exported to it again", template, why)
                continue
            contents = read_feed(path, options["format"], options.get("encoding") or "utf-8")
            state.exported[template] = contents.keys
            self.crawler.stats.inc_value(PREFIX + "resume/feed-records", contents.records)
            if contents.removed_bytes:
                self.crawler.stats.inc_value(PREFIX + "resume/partial-records-removed")
                logger.warning("EDREW removed the last %d bytes of the feed %s: a record cut short when "
                               "the last crawl stopped; that page will be exported again in full",
                               contents.removed_bytes, path)
            if contents.problem:
                logger.warning("EDREW read the feed %s only in part (%s): pages after that point may "
                               "be exported again", path, contents.problem)
            if contents.keys:
                logger.info("EDREW found %d page/node items in the feed %s; they will not be exported "
                            "to it again", len(contents.keys), path)

    def _local_path(self, template: str, options: Dict[str, Any]) -> Tuple[Optional[Path], str]:
        """The file a feed writes to in this run, or None and why it cannot be read back."""
        if _NEW_FILE_EACH_RUN.search(template):
            return None, "its URI names a new file each run"
        scheme = urlparse(template).scheme
        if scheme not in ("", "file") and not PureWindowsPath(template).drive:
            return None, f"{scheme}: is not a local file"
        fmt = options.get("format") or ""
        exporter = self.crawler.settings.getwithbase("FEED_EXPORTERS").get(fmt)
        if fmt not in _SCRAPY_EXPORTERS or exporter is None \
                or load_object(exporter) not in [load_object(path) for path in _SCRAPY_EXPORTERS[fmt]]:
            return None, f"only JSON Lines and CSV feeds can be read back, not {fmt or 'this format'}"
        encoding = options.get("encoding") or "utf-8"
        if not _ascii_compatible(encoding):
            return None, f"encoding {encoding}"
        try:
            uri = self._apply_params(template, options.get("uri_params"))
        except Exception as exc:
            return None, f"its URI parameters: {type(exc).__name__}: {exc}"
        if uri.startswith("file:"):
            from w3lib.url import file_uri_to_path

            uri = file_uri_to_path(uri)
        return Path(uri), ""

    def _apply_params(self, template: str, uri_params: Any) -> str:
        if "%(" not in template:
            return template
        spider = getattr(self.crawler, "spider", None) or self.crawler.spidercls
        params = {}
        for name in dir(spider):
            try:
                params[name] = getattr(spider, name)
            except Exception:
                continue
        if uri_params:
            params = load_object(uri_params)(params, spider) or params
        try:
            from scrapy.extensions.feedexport import apply_uri_params
        except ImportError:  # Scrapy before 2.14
            return template % params
        return apply_uri_params(template, params)
