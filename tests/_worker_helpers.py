"""Tasks for worker processes in tests/test_scrapy_workers.py (importable by name in a spawned child)."""
from __future__ import annotations

import os
from pathlib import Path

from edrew_scrapy.scrapy.worker import Outcome


def no_model(*args) -> None:
    """Initializer that loads nothing: the tasks below need no model."""


def _die_here(url: str) -> bool:
    # A page whose URL names a marker file: the worker dies while the file exists, once if the URL
    # also says "once" (the file is removed first), every time otherwise.
    if "die=" not in url:
        return False
    marker = Path(url.split("die=", 1)[1].split("&", 1)[0])
    if not marker.exists():
        return False
    if "once" in url:
        marker.unlink()
    return True


def echo_or_die(batch):
    """Outcome(page=url) for each page; os._exit (no cleanup, as a crash) on a page marked to die."""
    for _, _, url, *_ in batch:
        if _die_here(url):
            os._exit(3)
    return [Outcome(page=url) for _, _, url, *_ in batch]


def sleep_forever(batch):
    """A worker that never finishes its batch: what a hung page would look like."""
    import time

    while True:
        time.sleep(1)


def echo_or_hang(batch):
    """Outcome(page=url) for each page; never returns from a batch holding a page whose URL says "hang"."""
    import time

    if any("hang" in url for _, _, url, *_ in batch):
        while True:
            time.sleep(1)
    return [Outcome(page=url) for _, _, url, *_ in batch]


def echo_metadata_wanted(batch):
    """Outcome(page=(url, whether the worker was asked to read the page's metadata)) for each page."""
    return [Outcome(page=(item[2], item[3] if len(item) > 3 else True)) for item in batch]
