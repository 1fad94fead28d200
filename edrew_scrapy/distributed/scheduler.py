"""scrapy-redis's scheduler with leased requests (``SCHEDULER = "edrew_scrapy.distributed.LeasingScheduler"``,
which the RedisAddon sets).

Same Redis keys, dupefilter and settings as ``scrapy_redis.scheduler.Scheduler``; the queue is always
a LeaseQueue (SCHEDULER_QUEUE_CLASS is not used: a queue that pops would lose a killed process's
requests again). The LeaseBook decides when each lease ends.
"""
from __future__ import annotations

from scrapy_redis.scheduler import Scheduler

from .leases import HANDOFF_META, book_for
from .queue import LEASE_META, LeaseQueue


class LeasingScheduler(Scheduler):
    book = None

    @classmethod
    def from_crawler(cls, crawler):
        instance = super().from_crawler(crawler)
        instance.book = book_for(crawler)
        return instance

    def open(self, spider):
        self.queue_cls = LeaseQueue
        super().open(spider)
        self.book.open(spider, self.queue, self.server)

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
        added = super().enqueue_request(request)
        if token is not None:
            self.book.continued(token)
        return added

    def next_request(self):
        if self.book.handoff:
            request = self.book.handoff.popleft()
        else:
            request = self.queue.pop()
            if request is None:
                return None
            self.book.taken(request)
        if self.stats:
            self.stats.inc_value("scheduler/dequeued/redis")
        return request

    def has_pending_requests(self):
        return bool(self.book.handoff) or len(self.queue) > 0
