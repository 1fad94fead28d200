"""scrapy-redis's scheduler with leased requests (``SCHEDULER = "edrew_scrapy.distributed.LeasingScheduler"``,
which the RedisAddon sets).

Same Redis keys, dupefilter and settings as ``scrapy_redis.scheduler.Scheduler``; the queue is always
a LeaseQueue (SCHEDULER_QUEUE_CLASS is not used: a queue that pops would lose a killed process's
requests again). The LeaseBook decides when each lease ends.
"""
from __future__ import annotations

import logging
from urllib.parse import urlsplit, urlunsplit

from redis.exceptions import RedisError
from scrapy_redis.scheduler import Scheduler

from .leases import HANDOFF_META, book_for
from .queue import LEASE_META, LeaseQueue

logger = logging.getLogger(__name__)


def _without_password(url):
    """REDIS_URL for a log line: a password in it (redis://:secret@host) is not written out."""
    if not url or "@" not in str(url):
        return url
    parts = urlsplit(str(url))
    return urlunsplit(parts._replace(netloc="***@" + parts.netloc.rsplit("@", 1)[1]))


class LeasingScheduler(Scheduler):
    book = None

    @classmethod
    def from_crawler(cls, crawler):
        book = book_for(crawler)  # checks the EDREW_REDIS_ settings first
        try:
            instance = super().from_crawler(crawler)  # pings the server
        except RedisError as exc:
            where = _without_password(crawler.settings.get("REDIS_URL")) or \
                f"{crawler.settings.get('REDIS_HOST', 'localhost')}:{crawler.settings.get('REDIS_PORT', 6379)}"
            logger.error("EDREW cannot start: no Redis server at %s (%s: %s); set REDIS_URL", where,
                         type(exc).__name__, exc)
            raise
        instance.book = book
        return instance

    def open(self, spider):
        self.queue_cls = LeaseQueue
        super().open(spider)
        self.book.open(spider, self.queue, self.server)
        # A push retried after a Redis error skips the dupefilter: its SADD may have gone through
        # before the error, and would now drop the request for good (a page fetched twice is exported once).
        self.book.push = self.queue.push

    def close(self, reason):
        self.book.close()
        super().close(reason)

    def enqueue_request(self, request):
        if request.meta.pop(HANDOFF_META, False):  # leased by this process while idle: keep it here
            self.book.handoff.append(request)
            return True
        # A request that still carries a lease replaces the leased one (a redirect, a retry): once it
        # is in Redis, the lease it came from is done. The token itself never goes to Redis.
        token = request.meta.pop(LEASE_META, None)
        try:
            added = self._filter_and_push(request)
        except RedisError as exc:  # kept, and pushed again on the next heartbeat
            self.book.push_failed(request, exc)
            added = True
        else:
            self.book.pushed(request)
            if token is not None:
                self.book.continued(token)
        return added

    def _filter_and_push(self, request) -> bool:
        """scrapy-redis's enqueue_request, without the spider argument Scrapy 2.14+ deprecates in stats."""
        if not request.dont_filter and self.df.request_seen(request):
            self.df.log(request, self.spider)
            return False
        if self.stats:
            self.stats.inc_value("scheduler/enqueued/redis")
        self.queue.push(request)
        return True

    def next_request(self):
        if self.book.handoff:
            request = self.book.handoff.popleft()
        else:
            try:
                request = self.queue.pop()
            except RedisError as exc:
                self.book.redis_error("take a request from", exc)
                return None
            if request is None:
                return None
            self.book.taken(request)
        if self.stats:
            self.stats.inc_value("scheduler/dequeued/redis")
        return request

    def has_pending_requests(self):
        if self.book.handoff or self.book.unpushed:
            return True
        try:
            return len(self.queue) > 0
        except RedisError as exc:
            self.book.redis_error("look at the shared queue in", exc)
            return True  # not idle: the engine looks again, and the crawl does not end meanwhile
