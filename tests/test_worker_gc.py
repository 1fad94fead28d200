"""A worker process collects garbage between its batches, not during them (worker.init, worker.process)."""
from __future__ import annotations

import gc
import subprocess
import sys
import weakref

from edrew_scrapy.model.scorer import load_model
from edrew_scrapy.scrapy import worker as workers


class _Cycle:
    def __init__(self):
        self.me = self


def _page(i: int):
    return (f"<html><body><article><p>Paragraph {i} of a page about bicycles and rivers.</p>"
            f"<p>Another paragraph, number {i}.</p></article></body></html>").encode(), "text/html", f"http://t/{i}"


def test_a_batch_collects_the_cycles_left_before_it(monkeypatch):
    monkeypatch.setattr(workers, "_state", {"scorer": load_model(cache_mb=4), "threshold": None, "gc_paused": True})
    enabled = gc.isenabled()
    gc.disable()
    try:
        cycle = _Cycle()
        alive = weakref.ref(cycle)
        del cycle  # garbage only the cyclic collector frees, as a batch may leave behind
        assert alive() is not None
        outcomes = workers.process([_page(1), _page(2)])
        assert alive() is None
        assert [o.error for o in outcomes] == [None, None] and all(o.extraction.text for o in outcomes)
        assert not gc.isenabled()  # process() itself never turns collections back on
    finally:
        if enabled:
            gc.enable()


def test_process_leaves_the_collector_alone_outside_a_worker(monkeypatch):
    # a process that calls process() without init (a test, a caller of its own) keeps its collector
    monkeypatch.setattr(workers, "_state", {"scorer": load_model(cache_mb=4), "threshold": None})
    assert gc.isenabled()
    outcomes = workers.process([_page(3)])
    assert gc.isenabled() and outcomes[0].extraction.text


def test_init_turns_automatic_collections_off_in_the_worker():
    code = ("import gc; from edrew_scrapy.scrapy import worker as w; w.init(None, 'native', 1, None); "
            "assert 'error' not in w._state, w._state; print(gc.isenabled(), w._state['gc_paused'])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["False", "True"]
