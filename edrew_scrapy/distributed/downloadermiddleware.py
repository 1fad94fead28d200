"""Ends the lease of a request whose download failed for good."""
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
        self.book.output_done(self.book.held.get(request.meta.get(LEASE_META)))
        return None
