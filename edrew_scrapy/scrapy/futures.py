"""Await a concurrent.futures.Future (of a thread or a process pool) from a Scrapy coroutine, under
either reactor: the thread pool of scoring.py and the process pool of processpool.py share this."""
from __future__ import annotations

import asyncio
from typing import Any, Optional

from twisted.internet.defer import Deferred


def asyncio_in_use() -> bool:
    """Whether awaitables in Scrapy coroutines must be asyncio futures (else Twisted Deferreds)."""
    try:
        from scrapy.utils.asyncio import is_asyncio_available  # Scrapy >= 2.14
    except ImportError:
        from scrapy.utils.reactor import is_asyncio_reactor_installed

        return is_asyncio_reactor_installed()
    return is_asyncio_available()


async def await_future(future, timeout: Optional[float] = None) -> Any:
    """Await a concurrent.futures.Future (of a thread or a process pool) under either reactor; past
    `timeout` seconds, TimeoutError (the future itself is left to its owner)."""
    if asyncio_in_use():
        if timeout is None:
            return await asyncio.wrap_future(future)
        return await asyncio.wait_for(asyncio.wrap_future(future), timeout)
    from twisted.internet import defer, reactor

    d: Deferred = Deferred()
    future.add_done_callback(lambda f: reactor.callFromThread(_settle, d, f))
    if timeout is None:
        return await d
    d.addTimeout(timeout, reactor)
    try:
        return await d
    except defer.TimeoutError:
        raise TimeoutError(f"no result after {timeout:g} s") from None


def _settle(d: Deferred, future) -> None:
    if d.called:  # given up on (timed out) before the future was done
        return
    exc = future.exception()
    if exc is not None:
        d.errback(exc)
    else:
        d.callback(future.result())
