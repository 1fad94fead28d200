"""Garbage is collected between units of work, not during them: collector.py, a worker's batches (worker.init,
worker.process)."""
from __future__ import annotations

import gc
import json
import subprocess
import sys
import weakref

from edrew_scrapy import collector
from edrew_scrapy.model.scorer import load_model
from edrew_scrapy.scrapy import worker as workers


class _Cycle:
    def __init__(self):
        self.me = self


def _page(i: int):
    return (f"<html><body><article><p>Paragraph {i} of a page about bicycles and rivers.</p>"
            f"<p>Another paragraph, number {i}.</p></article></body></html>").encode(), "text/html", f"http://t/{i}"


def test_a_batch_collects_the_cycles_left_before_it(monkeypatch):
    monkeypatch.setattr(workers, "_state", {"scorer": load_model(cache_mb=4), "threshold": None,
                                                 "collector": collector.BetweenUnits()})
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
            "assert 'error' not in w._state, w._state; print(gc.isenabled(), type(w._state['collector']).__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["False", "BetweenUnits"]


def test_every_hundredth_unit_collects_everything(monkeypatch):
    calls = []
    monkeypatch.setattr(collector.gc, "collect", lambda generation=2: calls.append(generation))
    between = collector.BetweenUnits()
    for _ in range(2 * collector.FULL_EVERY):
        between.collect()
    assert calls.count(2) == 2 and calls.count(0) == 2 * collector.FULL_EVERY - 2
    assert calls[collector.FULL_EVERY - 1] == 2


def test_edrew_extract_collects_between_inputs_and_gives_the_collector_back(tmp_path, monkeypatch, capsys):
    from _model_helpers import tiny_model

    from edrew_scrapy.cli import main

    model = tmp_path / "model"
    tiny_model(model)
    pages = []
    for i in range(3):
        pages.append(tmp_path / f"p{i}.html")
        pages[-1].write_bytes(_page(i)[0])
    seen = []
    real = collector.BetweenUnits.collect
    monkeypatch.setattr(collector.BetweenUnits, "collect", lambda self: (seen.append(gc.isenabled()), real(self)))
    assert gc.isenabled()
    # once before each group of inputs scored together (--batch), automatic collections off meanwhile
    for batch, expected in (("1", [False, False, False]), ("2", [False, False]), ("8", [False])):
        seen.clear()
        assert main(["extract", *map(str, pages), "--model", str(model), "--threshold", "0", "--no-metadata",
                     "--batch", batch]) == 0
        assert seen == expected
        assert gc.isenabled()
        records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
        assert [r["path"] for r in records] == list(map(str, pages)) and all(r["text"] for r in records)
