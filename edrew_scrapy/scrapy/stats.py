"""Counting under edrew/ in the crawl stats, and logging each kind of skip once."""
from __future__ import annotations

import logging
from typing import Optional, Set

PREFIX = "edrew/"


class EdrewStats:
    """One per component: the stats collector plus the skip reasons it has already logged.

    A crawl of a PDF-heavy site would otherwise log one line per PDF; the first page skipped for a
    reason is logged with its URL, the rest are only counted.
    """

    def __init__(self, stats, logger: logging.Logger):
        self._stats = stats
        self._logger = logger
        self._logged: Set[str] = set()

    def inc(self, key: str, count: int = 1) -> None:
        self._stats.inc_value(PREFIX + key, count)

    def set(self, key: str, value) -> None:
        self._stats.set_value(PREFIX + key, value)

    def skip(self, reason: str, url: Optional[str], detail: str = "") -> None:
        self.inc(f"skipped/{reason}")
        if reason not in self._logged:
            self._logged.add(reason)
            self._logger.info(
                "EDREW skipped %s (%s%s); further pages skipped for this reason are counted in "
                "the stat %sskipped/%s, not logged", url, reason, f": {detail}" if detail else "",
                PREFIX, reason,
            )

    def error(self, url: Optional[str], what: str, exc: BaseException) -> None:
        """Every error is counted and logged with its page; the traceback only the first time for each
        step and exception type: a builder bug that fails on every page is one traceback, not thousands."""
        self.inc("errors")
        kind = f"error/{what}/{type(exc).__qualname__}"
        first = kind not in self._logged
        self._logged.add(kind)
        self._logger.error("EDREW could not %s %s: %s: %s%s", what, url, type(exc).__name__, exc,
                           "" if first else " (traceback logged for the first such error)",
                           exc_info=exc if first else None)
