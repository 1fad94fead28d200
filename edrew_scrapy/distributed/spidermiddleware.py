"""Follows what a leased response yields, so that its lease ends only once all of it is safe."""
from __future__ import annotations

from .leases import book_for

# The last spider middleware (below HttpErrorMiddleware's 50): it sees every item and request on
# its way to the engine, the EDREW page items included, and the exceptions no one handled.
PRIORITY = 1


class LeaseSpiderMiddleware:
    def __init__(self, book):
        self.book = book

    @classmethod
    def from_crawler(cls, crawler):
        return cls(book_for(crawler))

    async def process_spider_output(self, response, result, spider=None):
        lease = self.book.lease_of(response)
        try:
            async for output in result:
                self.book.count(output, lease)
                yield output
        finally:
            self.book.output_done(lease)

    def process_spider_exception(self, response, exception, spider=None):
        # Called after EdrewSpiderMiddleware's (nearer the spider), which has sent the page items of a
        # callback that raised to the pipelines; page_items_sent had the book count them: the lease
        # waits for them.
        self.book.output_done(self.book.lease_of(response))
        return None
