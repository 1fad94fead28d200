"""Ends the lease of a request whose download failed for good, or once its errback's output is safe."""
from __future__ import annotations

from .leases import book_for
from .queue import LEASE_META

# The first downloader middleware, so its process_exception is the last called: an exception that
# reaches it was not turned into a retry or a response by any other (robots.txt, offsite, a failed
# download after its retries).
PRIORITY = 1


class LeaseDownloaderMiddleware:
    def __init__(self, book):
        self.book = book

    @classmethod
    def from_crawler(cls, crawler):
        return cls(book_for(crawler))

    def process_exception(self, request, exception, spider=None):
        lease = self.book.held.get(request.meta.get(LEASE_META))
        if lease is not None and request.errback is not None:
            # The errback runs next; its items and requests must be out before the ack.
            self.book.follow_errback(request, lease)
        else:
            self.book.output_done(lease)
        return None
