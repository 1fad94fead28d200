"""Distributed crawls through Redis (scrapy-redis), with leased requests: docs/distributed.md.

Needs the ``redis`` extra (``pip install edrew-scrapy[redis]``): scrapy-redis and redis-py. The public
names load on first use, so that `edrew merge` (merge.py: plain Python) works without it.

    addon.py                 RedisAddon: the scheduler, dupefilter, middlewares and feed side below
    queue.py                 LeaseQueue: the request queue whose requests are leased, in Lua scripts
    scheduler.py             LeasingScheduler: scrapy-redis's scheduler on a LeaseQueue
    leases.py                when each lease ends, renewals, re-queues, the end of the crawl, stats
    spidermiddleware.py      follows what a leased response yields
    downloadermiddleware.py  ends the lease of a download that failed for good
    feeds.py                 flushed feed files; no page item exported twice
    merge.py                 the processes' feeds as one, each page once
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._lazy import lazy_attributes

# public name -> module that defines it
_LAZY = {
    "LeaseQueue": "edrew_scrapy.distributed.queue",
    "LeasingScheduler": "edrew_scrapy.distributed.scheduler",
    "RedisAddon": "edrew_scrapy.distributed.addon",
}

__all__ = sorted(_LAZY)

if TYPE_CHECKING:
    from .addon import RedisAddon as RedisAddon
    from .queue import LeaseQueue as LeaseQueue
    from .scheduler import LeasingScheduler as LeasingScheduler

_getattr, __dir__ = lazy_attributes(__name__, _LAZY, globals())


def __getattr__(name: str) -> Any:
    try:
        return _getattr(name)
    except ImportError as exc:  # the one line a user without the extra should see
        raise ImportError(f"edrew_scrapy.distributed.{name} needs scrapy-redis and redis-py: "
                          f"pip install 'edrew-scrapy[redis]' ({exc})") from exc
