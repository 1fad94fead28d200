"""What one crawl process does with the leases it holds: when each is done, renewing them, putting
back those of dead processes, deciding when the shared crawl is over, and its stats in Redis.

A lease is done when its request has been fully processed, so that nothing it led to is lost if the
process dies right after the acknowledgement:

* its response went through the spider and every spider middleware (LeaseSpiderMiddleware sees the
  end of the output, or the exception), every item yielded for it, or sent to the item pipelines for it
  outside the output (page_items_sent: the page items of a callback that raised), has left the pipelines
  (item_scraped, item_dropped or item_error; the book's handlers run after the FeedExporter's, so the
  feeds have written the item before the ack marks it exported) and every request yielded for it is
  in Redis (the scheduler says so after its push);
* or its download failed for good (LeaseDownloaderMiddleware.process_exception, the last one called)
  and its errback, if it has one, has run: the errback's items and requests are followed as a
  response's output is (they bypass the spider middlewares, so the downloader middleware wraps it);
* or a downloader middleware replaced it with another request (a redirect, a retry), which the
  scheduler has pushed to Redis.

When the engine is idle, every lease this process still holds is done by definition (nothing is
downloading, scraping or in the item pipelines), so any that one of those paths missed is
acknowledged then: a lease can never keep the crawl from ending.

Redis going away for a while costs no request: a push that fails is kept here and tried again on
each heartbeat (the leases it came from wait for it), and while Redis cannot be reached the process
neither takes requests nor closes; it logs a warning and waits.
"""
from __future__ import annotations

import inspect
import logging
import weakref
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Deque, Dict, Optional, Set, Tuple

from itemadapter import ItemAdapter
from redis.exceptions import RedisError
from scrapy import Request, signals
from scrapy.exceptions import DontCloseSpider
from scrapy.utils.misc import arg_to_iter
from twisted.internet.defer import Deferred
from twisted.python.failure import Failure

from ..scrapy.resume import item_key, record_key
from ..scrapy.signals import page_items_sent
from ..scrapy.stats import PREFIX, EdrewStats
from .queue import LEASE_META
from .settings import RedisSettings

logger = logging.getLogger(__name__)

# Marks a request this process leased while idle and handed to its own engine (engine.crawl is the
# public way to wake an idle engine); the scheduler keeps it instead of pushing it back to Redis.
HANDOFF_META = "edrew_redis_handoff"

_BOOKS: "weakref.WeakKeyDictionary[Any, LeaseBook]" = weakref.WeakKeyDictionary()
BY_TOKEN: "weakref.WeakValueDictionary[str, LeaseBook]" = weakref.WeakValueDictionary()
TOKEN_SETTING = "EDREW_REDIS_TOKEN"


def book_for(crawler) -> "LeaseBook":
    """The one LeaseBook of a crawler, shared by the scheduler, the middlewares and the feed filter."""
    book = _BOOKS.get(crawler)
    if book is None:
        book = _BOOKS[crawler] = LeaseBook(crawler, RedisSettings.from_settings(crawler.settings))
        token = crawler.settings.get(TOKEN_SETTING)
        if token:
            BY_TOKEN[token] = book
    return book


def export_key(item: Any) -> Optional[str]:
    """The key of a page or node item in the set of exported items (resume.py's keys, joined)."""
    key = item_key(item)
    if key is None and ItemAdapter.is_item(item):
        key = record_key(ItemAdapter(item))
    return "\x1f".join(key) if key else None


@dataclass
class Lease:
    token: str
    output_done: bool = False
    items: int = 0          # items yielded for its response, not yet out of the item pipelines
    requests: int = 0       # requests yielded for its response, not yet pushed to Redis
    exported: Set[str] = field(default_factory=set)


class LeaseBook:
    """One crawl process's leases: see the module docstring."""

    def __init__(self, crawler, config: RedisSettings):
        self.crawler = crawler
        self.config = config
        self.queue = None
        self.server = None
        self.exported_key = ""
        self.stats_key = ""
        self.held: Dict[str, Lease] = {}
        self.children: Dict[int, Tuple[Any, Lease]] = {}
        self.handoff: Deque[Any] = deque()
        self.unpushed: Deque[Any] = deque()   # requests whose push failed (Redis unreachable), to retry
        self.push = None                      # the queue's push, for the retries
        self._redis_down_logged = False
        self.stats = EdrewStats(crawler.stats, logger)
        self._published: Dict[str, float] = {}
        self._heartbeat = None
        self._poller = None
        self._warned_late = False

    # ------------------------------------------------------------ opened and closed by the scheduler

    def open(self, spider, queue, server) -> None:
        from twisted.internet import task

        # Connected here, not when the book is made: a feed appended to makes the book while Scrapy
        # builds the FeedExporter, before the exporter connects its own item_scraped. Handlers run in
        # the order they were connected, and ours acknowledges the lease (adding the item's key to the
        # exported set): run first, it would make the feed's filter hold back the very item it acked.
        # The scheduler opens after every extension is built, so the feeds write an item before its ack.
        for signal in (signals.item_scraped, signals.item_dropped, signals.item_error):
            self.crawler.signals.connect(self.item_done, signal=signal)
        self.crawler.signals.connect(self.items_sent, signal=page_items_sent)
        self.crawler.signals.connect(self.spider_idle, signal=signals.spider_idle)
        self.queue, self.server = queue, server
        queue.lease_ms = int(self.config.lease_timeout * 1000)
        self.exported_key = self.config.exported_key % {"spider": spider.name}
        self.stats_key = self.config.stats_key % {"spider": spider.name}
        self._heartbeat = task.LoopingCall(self.beat)
        self._heartbeat.start(self.config.lease_timeout / 3, now=False)

    def close(self) -> None:
        for loop in (self._heartbeat, self._poller):
            if loop is not None and loop.running:
                loop.stop()
        if self.queue is None:
            return
        # A process that stops before finishing its leases (Ctrl-C) gives them back now rather than
        # leaving the others to wait for them to expire.
        tokens = list(self.held) + [r.meta.get(LEASE_META) for r in self.handoff]
        try:
            self.retry_pushes()
            released = self.queue.release([t for t in tokens if t])
        except RedisError as exc:
            # The leases held come back when they expire, and with them the requests not pushed (their
            # leases wait for them): pages fetched again, nothing lost.
            logger.error("EDREW could not reach Redis when closing (%s: %s): the %d leases it holds come back "
                         "to the queue when they expire (%d requests not pushed come back with them)",
                         type(exc).__name__, exc, len(tokens), len(self.unpushed))
            return
        if released:
            self.stats.inc("redis/leases/released", released)
            logger.info("EDREW put %d requests this process had leased back in the shared queue", released)
        self.held.clear()
        self.handoff.clear()
        try:
            self.publish()
        except RedisError as exc:
            self.redis_error("publish the stats in", exc)

    # ------------------------------------------------------------ the life of a lease

    def taken(self, request) -> None:
        self.held[request.meta[LEASE_META]] = Lease(request.meta[LEASE_META])
        self.stats.inc("redis/leases/taken")

    def lease_of(self, response) -> Optional[Lease]:
        request = getattr(response, "request", None)
        meta = getattr(request, "meta", None) or {}
        return self.held.get(meta.get(LEASE_META))

    def child(self, request, lease: Lease) -> None:
        """A request the spider yielded for a leased response: the lease waits for its push."""
        request.meta.pop(LEASE_META, None)  # a spider that copies response.meta must not carry the lease on
        lease.requests += 1
        self.children[id(request)] = (request, lease)

    def item_yielded(self, lease: Lease) -> None:
        lease.items += 1

    def count(self, output: Any, lease: Optional[Lease]) -> None:
        """One item or request of a leased request's output, on its way to the engine."""
        if lease is None:
            return
        if isinstance(output, Request):
            self.child(output, lease)
        elif output is not None:
            self.item_yielded(lease)

    def follow_errback(self, request, lease: Lease) -> None:
        """The download of `request` failed for good and its errback is about to run: Scrapy hands the
        errback's output straight to the engine (no spider middleware sees it), so the errback is wrapped
        to count each item and request of it; the lease ends once all of them are out and pushed."""
        errback = request.errback

        def counted_errback(failure):
            # the spider's own errback back on the request: a retry the errback makes with
            # request.replace() or copy() must carry a spider method, the only kind Redis can store
            request.errback = errback
            try:
                output = errback(failure)
            except BaseException:
                self.output_done(lease)
                raise
            return self._counted(output, lease)

        request.errback = counted_errback

    def _counted(self, output: Any, lease: Lease) -> Any:
        if isinstance(output, (Failure, Deferred)):  # the download error goes on, or a deprecated Deferred
            self.output_done(lease)
            return output
        if inspect.iscoroutine(output):
            return self._counted_coroutine(output, lease)
        if inspect.isasyncgen(output):
            return self._counted_async(output, lease)
        return self._counted_iter(output, lease)

    async def _counted_coroutine(self, coroutine, lease: Lease) -> Any:
        try:
            output = await coroutine
        except BaseException:
            self.output_done(lease)
            raise
        return self._counted(output, lease)

    async def _counted_async(self, outputs, lease: Lease):
        try:
            async for output in outputs:
                self.count(output, lease)
                yield output
        finally:
            self.output_done(lease)

    def _counted_iter(self, outputs: Any, lease: Lease):
        try:
            for output in arg_to_iter(outputs):
                self.count(output, lease)
                yield output
        finally:
            self.output_done(lease)

    def items_sent(self, items, response, spider=None, **kwargs) -> None:
        """Items sent to the item pipelines for a leased response outside the spider's output (the page
        items of a callback that raised, sent before LeaseSpiderMiddleware sees the exception): the
        lease waits for each of them as for a yielded one."""
        lease = self.lease_of(response)
        if lease is not None:
            lease.items += len(items)

    def output_done(self, lease: Optional[Lease]) -> None:
        if lease is not None:
            lease.output_done = True
            self._maybe_ack(lease)

    def continued(self, token: str) -> None:
        """A downloader middleware replaced the leased request with another, now pushed to Redis."""
        lease = self.held.get(token)
        if lease is not None:
            self.stats.inc("redis/leases/continued")
            self.output_done(lease)

    def item_done(self, item, response, spider=None, **kwargs) -> None:
        lease = self.lease_of(response)
        if lease is None:
            return
        if "exception" not in kwargs and "failure" not in kwargs:  # item_scraped: the feeds have it
            key = export_key(item)
            if key:
                lease.exported.add(key)
        lease.items = max(0, lease.items - 1)
        self._maybe_ack(lease)

    def pushed(self, request) -> None:
        """The scheduler has put `request` in Redis (or its dupefilter dropped it)."""
        entry = self.children.pop(id(request), None)
        if entry is not None and entry[0] is request:
            entry[1].requests = max(0, entry[1].requests - 1)
            self._maybe_ack(entry[1])

    def push_failed(self, request, exc: Exception) -> None:
        self.unpushed.append(request)
        self.stats.inc("redis/push-failed")
        self.redis_error("push a request to", exc)

    def redis_error(self, what: str, exc: Exception) -> None:
        if not self._redis_down_logged:
            self._redis_down_logged = True
            logger.warning("EDREW could not %s Redis (%s: %s); waiting for it, nothing is lost meanwhile",
                           what, type(exc).__name__, exc)

    def redis_ok(self) -> None:
        if self._redis_down_logged:
            self._redis_down_logged = False
            logger.info("EDREW reaches Redis again")

    def retry_pushes(self) -> None:
        while self.unpushed and self.push is not None:
            request = self.unpushed[0]
            self.push(request)  # raises while Redis is still away: the rest wait for the next beat
            self.unpushed.popleft()
            self.pushed(request)

    def _maybe_ack(self, lease: Lease) -> None:
        if lease.output_done and lease.items <= 0 and lease.requests <= 0:
            self._ack(lease)

    def _ack(self, lease: Lease) -> None:
        if self.held.pop(lease.token, None) is None or self.queue is None:
            return
        held = self.queue.ack(lease.token, sorted(lease.exported), self.exported_key)
        self.stats.inc("redis/leases/acked")
        if not held:
            # It expired and went back to the queue: its page may be fetched again; the exported
            # set (just updated) keeps its item out of the feeds.
            self.stats.inc("redis/leases/expired-before-ack")
            if not self._warned_late:
                self._warned_late = True
                logger.warning("EDREW: a lease expired before its page was done (the process was too slow "
                               "or stalled); raise EDREW_REDIS_LEASE_TIMEOUT if this recurs. Further cases are "
                               "counted in %sredis/leases/expired-before-ack", PREFIX)

    # ------------------------------------------------------------ keeping the crawl going, and ending it

    def beat(self) -> None:
        """Renew this process's leases, put back expired ones, publish the stats."""
        if self.queue is None:
            return
        try:
            self.retry_pushes()
            tokens = list(self.held) + [r.meta.get(LEASE_META) for r in self.handoff]
            renewed = self.queue.renew([t for t in tokens if t])
            if renewed < len(tokens):
                self.stats.inc("redis/leases/lost", len(tokens) - renewed)
            self._requeue_expired()
            self.publish()
            self.redis_ok()
        except RedisError as exc:  # Redis away for a while: the next beat tries again
            self.redis_error("renew its leases in", exc)

    def _requeue_expired(self) -> None:
        requeued = self.queue.requeue_expired()
        if requeued:
            self.stats.inc("redis/leases/requeued", requeued)
            logger.info("EDREW put %d expired leases (of a process that died or stalled) back in the queue",
                        requeued)

    def spider_idle(self, spider) -> None:
        if self.queue is None:
            return
        try:
            self._idle()
        except RedisError as exc:
            self.redis_error("look at the shared queue in", exc)
            self._start_polling()
            raise DontCloseSpider from None

    def _idle(self) -> None:
        if self.unpushed:
            self.retry_pushes()
        if self.held:  # nothing is in flight: whatever this process still holds is done
            self.stats.inc("redis/leases/acked-when-idle", len(self.held))
            for lease in list(self.held.values()):
                lease.output_done, lease.items, lease.requests = True, 0, 0
                self._ack(lease)
        self.children.clear()  # requests a signal handler dropped before the scheduler saw them
        self._requeue_expired()
        if self._hand_off():
            raise DontCloseSpider
        if not self._over():
            # Other processes hold leases (they may yield new requests, or die and leave theirs to
            # expire), or the crawl has not begun. The engine only looks again every few seconds.
            self._start_polling()
            raise DontCloseSpider
        self.publish()

    def _over(self) -> bool:
        """Nothing pending or leased in the shared queue, after some request was ever leased (a
        process started before the start URLs are pushed waits for them)."""
        return self.config.close_when_done and not self.unpushed and self.queue.counts().drained \
            and self.queue.started()

    def _hand_off(self) -> bool:
        request = self.queue.pop()
        if request is None:
            return False
        self.taken(request)
        request.meta[HANDOFF_META] = True
        self.crawler.engine.crawl(request)
        return True

    def _start_polling(self) -> None:
        from twisted.internet import task

        if self._poller is None or not self._poller.running:
            self._poller = task.LoopingCall(self._poll)
            self._poller.start(self.config.poll_interval, now=False)

    def _poll(self) -> None:
        try:
            self.retry_pushes()
            self._requeue_expired()
            # A spider that reads start URLs from Redis (EdrewRedisSpider) schedules them here too.
            schedule_start_urls = getattr(self.crawler.spider, "schedule_start_urls", None)
            if schedule_start_urls is not None:
                schedule_start_urls()
            if self._hand_off() or self._over():
                self._poller.stop()  # busy again, or done (the engine's next idle check closes)
            self.redis_ok()
        except RedisError as exc:
            self.redis_error("poll the shared queue in", exc)

    # ------------------------------------------------------------ stats in Redis

    def publish(self) -> None:
        """This process's edrew/ stats to the hash STATS_KEY:<process>, and what changed since the last
        time added to the crawl-wide hash STATS_KEY."""
        if self.server is None:
            return
        stats = {key[len(PREFIX):]: value for key, value in self.crawler.stats.get_stats().items()
                 if key.startswith(PREFIX) and isinstance(value, (int, float)) and not isinstance(value, bool)}
        if not stats:
            return
        with self.server.pipeline(transaction=True) as pipe:
            pipe.hset(f"{self.stats_key}:{self.config.process}", mapping=stats)
            for key, value in stats.items():
                delta = value - self._published.get(key, 0)
                if delta:
                    (pipe.hincrby if isinstance(delta, int) else pipe.hincrbyfloat)(self.stats_key, key, delta)
            pipe.execute()
        self._published = stats
