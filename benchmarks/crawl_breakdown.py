"""Where a crawl process's CPU goes: a Scrapy extension that `benchmarks/crawl.py --breakdown` loads.

From the spider's opening to its closing it counts the CPU of each thread of the crawl process (the
reactor, the worker pool's result thread, its feeder, the add-on's scoring thread), the thread CPU time
(time.thread_time) spent in a few steps of the add-on and of Scrapy, and the time of the cyclic garbage
collector by generation, and writes them, in ms a response, to the JSON file EDREW_BREAKDOWN_OUT names.
A step's time includes the collections it triggered; steps that do not exist in the code crawled (a plain
crawl, which imports nothing of the add-on for them, or an older checkout) read 0. Wrapping costs a
thread_time call on each side of each call.
"""
from __future__ import annotations

import functools
import gc
import importlib
import json
import os
import sys
import threading
import time
import types
from collections import defaultdict
from pathlib import Path

from scrapy import signals

# label: (module, class, method)
STEPS = {
    "results unpickled": ("multiprocessing.reduction", "ForkingPickler", "loads"),
    "metadata read here": ("edrew_scrapy.scrapy.scoring", "ScoringService", "describe"),
    "worker results taken": ("edrew_scrapy.scrapy.downloadermiddleware", "EdrewDownloaderMiddleware", "_take"),
    "items built": ("edrew_scrapy.scrapy.spidermiddleware", "EdrewSpiderMiddleware", "items_of"),
    "feed export": ("scrapy.exporters", "JsonLinesItemExporter", "export_item"),
}

_spent: dict = defaultdict(float)
_calls: dict = defaultdict(int)
_gc_started = threading.local()


def _timed(label, fn, static):
    @functools.wraps(fn)
    def timed(*args, **kwargs):
        start = time.thread_time()
        try:
            return fn(*args, **kwargs)
        finally:
            _spent[label] += time.thread_time() - start
            _calls[label] += 1

    return staticmethod(timed) if static else timed


def _gc_callback(phase, info) -> None:
    if phase == "start":
        _gc_started.at = time.thread_time()
    elif getattr(_gc_started, "at", None) is not None:
        key = f"gc gen{info['generation']}"
        _spent[key] += time.thread_time() - _gc_started.at
        _calls[key] += 1
        _gc_started.at = None


def _thread_cpu() -> dict:
    """CPU seconds of each thread of this process, by a name that says what it is."""
    import concurrent.futures.process as cfp

    names = {}
    for thread in threading.enumerate():
        name = thread.name
        if thread is threading.main_thread():
            name = "reactor"
        elif isinstance(thread, cfp._ExecutorManagerThread):
            name = "pool results"
        elif name.startswith("edrew-scorer"):
            name = "scoring thread"
        elif name == "QueueFeederThread":
            name = "pool feeder"
        names[thread.native_id] = name
    out: dict = defaultdict(float)
    tick = os.sysconf("SC_CLK_TCK")
    for task in Path("/proc/self/task").iterdir():
        try:
            fields = (task / "stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue
        out[names.get(int(task.name), "other")] += (int(fields[11]) + int(fields[12])) / tick
    return out


class Breakdown:
    def __init__(self, crawler, out: str):
        self.crawler = crawler
        self.out = out
        self.at_open: dict = {}

    @classmethod
    def from_crawler(cls, crawler):
        ext = cls(crawler, os.environ["EDREW_BREAKDOWN_OUT"])
        for label, (module, owner, name) in STEPS.items():
            if module.startswith("edrew_scrapy") and "edrew_scrapy" not in sys.modules:
                continue  # a plain crawl: importing the add-on would add to its memory and start-up
            try:
                klass = getattr(importlib.import_module(module), owner)
                fn = getattr(klass, name)
            except (ImportError, AttributeError):
                continue
            # a builtin (ForkingPickler.loads is pickle.loads) does not bind as a method; a wrapper would
            setattr(klass, name, _timed(label, fn, isinstance(fn, types.BuiltinFunctionType)))
        gc.callbacks.append(_gc_callback)
        crawler.signals.connect(ext.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(ext.spider_closed, signal=signals.spider_closed)
        return ext

    def spider_opened(self, spider) -> None:
        self.at_open = _thread_cpu()
        _spent.clear()
        _calls.clear()

    def spider_closed(self, spider) -> None:
        threads = _thread_cpu()
        responses = max(1, self.crawler.stats.get_value("response_received_count") or 0)
        per = 1000 / responses
        Path(self.out).write_text(json.dumps({
            "responses": responses,
            "threads": {k: round((v - self.at_open.get(k, 0)) * per, 2) for k, v in threads.items()
                        if v - self.at_open.get(k, 0) > 0},
            "steps": {k: round(v * per, 3) for k, v in _spent.items()},
            "calls": dict(_calls),
        }))
