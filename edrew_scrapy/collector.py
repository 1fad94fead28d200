"""Cyclic garbage collection between units of work (a batch of pages, an input), not during them.

Serialising, scoring and reading a page's metadata allocate many objects, nearly all freed by their
reference counts; the automatic collections their allocation triggered walked the live pages again and
again and found next to nothing. A process that works in units (a crawl's worker process, `edrew
extract`) turns those off once its long-lived objects are loaded and frozen, and collects at the start
of each unit, when the last one's objects are gone. Only for processes of our own: a library call never
changes its caller's collector.
"""
from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator

# A full collection walks everything the process keeps (caches, classifiers): about as often as the
# collector's own thresholds (700 x 10 x 10 allocations) would run one; the young objects every unit.
FULL_EVERY = 100


class BetweenUnits:
    """`start()` once the process's long-lived objects exist, then `collect()` before each unit."""

    def __init__(self) -> None:
        self.units = 0

    @classmethod
    def start(cls) -> "BetweenUnits":
        """Collect, freeze what survives (never walked again) and turn automatic collections off."""
        gc.collect()
        gc.freeze()
        gc.disable()
        return cls()

    @classmethod
    @contextmanager
    def around(cls) -> Iterator["BetweenUnits"]:
        """For a loop in a process that may go on after it (a command run from Python): automatic
        collections off during the loop and as they were after it; nothing frozen."""
        enabled = gc.isenabled()
        gc.disable()
        try:
            yield cls()
        finally:
            if enabled:
                gc.enable()

    def collect(self) -> None:
        """What the last unit left in reference cycles: the young objects, everything every FULL_EVERY units."""
        self.units += 1
        gc.collect(2 if self.units % FULL_EVERY == 0 else 0)
