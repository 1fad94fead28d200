"""The scoring service: the model, and the batches of pages that go through it.

EdrewSpiderMiddleware owns one (``EdrewSpiderMiddleware.scoring``) and EdrewDownloaderMiddleware awaits
it right after serialising a page (see downloadermiddleware.py), so that a response reaches the spider
already scored.

Scoring runs on a thread of its own, one model call at a time; pages that arrive while a call runs wait
and go into the next call together (up to EDREW_BATCH_PAGES), so batches grow with the load. With
EDREW_WORKERS >= 1 (the default), the same batching feeds worker processes that serialise and score
(`process`, awaited by the downloader middleware instead of `score`; see processpool.py), and the model
is loaded in each worker, not here, unless the worker pool fails for good and this process takes the
work over.

A page's metadata (EDREW_METADATA) is read where a core is idle: a worker reads it after scoring, unless
this process's own thread has room, in which case a batch goes to the workers without it and the
metadata is read here when the batch is back. A crawl at network speed is bound by its one worker's
core while this process uses a fraction of another (docs/scrapy.md, "At network speed"); the pages
reserved for this thread are bounded, so that once it falls behind (many workers) the workers read the
metadata again.
"""
from __future__ import annotations

import asyncio
import dataclasses
import gc
import logging
import threading
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Awaitable, Callable, Deque, List, Optional, Sequence, Set, Tuple

from scrapy import signals
from scrapy.utils.defer import deferred_from_coro, maybe_deferred_to_future
from twisted.internet.defer import CancelledError, Deferred
from twisted.python.failure import Failure

from .futures import await_future
from .processpool import ProcessPool, StartInterrupted, WorkerError, main_module_problem
from .settings import EdrewSettings
from .stats import EdrewStats
from .worker import Outcome

logger = logging.getLogger(__name__)


def load_scorer(conf: EdrewSettings):
    """The model named by EDREW_MODEL / EDREW_BACKEND; a ModelError names the file at fault."""
    from ..extract import override_region_share
    from ..model.base import load_model, set_threads

    if conf.torch_threads:
        # Batches of a few pages are too small for intra-op parallelism to pay, and OpenMP workers
        # spinning next to the reactor and the serializer threads cost more than they give
        # (docs/scrapy.md, EDREW_TORCH_THREADS). torch is imported only for a backend that runs on it.
        set_threads(conf.torch_threads, conf.backend)

    return override_region_share(load_model(conf.model, backend=conf.backend, cache_mb=conf.cache_mb),
                              conf.region_share)


def _mib(cache_mb: Optional[float]) -> str:
    return "bounded by entries only" if cache_mb is None else f"{cache_mb:g} MiB"


_gc_frozen = False


def terminate_at_shutdown(processes) -> None:
    """A forced stop (a second Ctrl-C) stops the reactor without closing the spider: the workers are
    killed then, or one that never answers keeps the process from exiting. After a clean close they
    hold nothing (the engine waits for the pages being scored), so this costs nothing there. Without a
    reactor (TWISTED_REACTOR_ENABLED=False) the pool's own exit hook does it (processpool._kill_at_exit)."""
    import sys

    reactor = sys.modules.get("twisted.internet.reactor")
    if reactor is not None and hasattr(reactor, "addSystemEventTrigger"):
        reactor.addSystemEventTrigger("before", "shutdown", processes.terminate)


def freeze_gc_once() -> None:
    """Keep the objects alive after the first model load out of every later cyclic collection.

    torch and the model add many objects that live as long as the process, and each full collection
    would walk them all again (docs/scrapy.md, "Garbage collection"). Once per process and after a
    collection, so of the objects frozen only those of that moment that later die in a reference cycle
    (the first crawler's, when a process runs crawls one after another) are never freed.
    """
    global _gc_frozen
    if not _gc_frozen:
        _gc_frozen = True
        gc.collect()
        gc.freeze()


class Batcher:
    """Queue pages and score them in batches, at most `in_flight` batches at a time.

    `run` takes a batch and returns, for each of its pages, its result or the exception that page
    raised, so one bad page never fails the others. In process, one batch at a time (a Scorer's
    caches are not meant to be shared between threads); with worker processes, one more than there
    are workers, so that a worker finds its next batch waiting when it finishes one.
    """

    def __init__(self, run: Callable[[List[Any]], Awaitable[List[Any]]], max_pages: int, in_flight: int = 1):
        self._run = run
        self._max = max_pages
        self._in_flight = max(1, in_flight)
        self._queue: Deque[Tuple[Any, Deferred]] = deque()
        self._drainers = 0
        self._tasks: Set[Deferred] = set()  # references keep the asyncio tasks alive

    async def score(self, page) -> Any:
        """The page's result (or exception), once a batch that holds it has been scored."""
        waiter: Deferred = Deferred()
        self._queue.append((page, waiter))
        if self._drainers < self._in_flight:
            self._drainers += 1
            task = deferred_from_coro(self._drain())
            if isinstance(task, Deferred) and not task.called:
                self._tasks.add(task)
                task.addBoth(self._forget, task)
        return await maybe_deferred_to_future(waiter)

    def _forget(self, result, task):
        self._tasks.discard(task)
        if isinstance(result, Failure) and result.check(asyncio.CancelledError, CancelledError):
            # a forced stop without a reactor cancels every task: the pages it drops are already
            # logged as failed downloads, and a traceback per drainer says nothing more
            return None
        return result

    async def _drain(self) -> None:
        try:
            while self._queue:
                batch = [self._queue.popleft() for _ in range(min(self._max, len(self._queue)))]
                try:
                    results = await self._run([page for page, _ in batch])
                except Exception as exc:  # `run` isolates pages itself; this is a last resort
                    results = [exc] * len(batch)
                except asyncio.CancelledError:  # a BaseException: the batch's pages get it as their
                    # result rather than waiting for ever, and the task still ends cancelled
                    for _, waiter in batch:
                        if not waiter.called:
                            waiter.callback(RuntimeError("EDREW scoring was cancelled"))
                    raise
                for (_, waiter), result in zip(batch, results):
                    waiter.callback(result)
        finally:
            self._drainers -= 1


class SerializerThreads:
    """A bounded pool of threads for CPU work (serialising, scoring); with 0 threads the work runs inline
    on the reactor thread.

    A pool of our own rather than the reactor's: that one also resolves DNS, and a crawl that
    serialises many pages must not queue its name lookups behind them.
    """

    def __init__(self, threads: int, name: str):
        self._executor = ThreadPoolExecutor(threads, thread_name_prefix=name) if threads > 0 else None

    async def run(self, func: Callable[..., Any], *args: Any) -> Any:
        if self._executor is None:
            return func(*args)
        return await await_future(self._executor.submit(func, *args))

    def stop(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)


class ScoringService:
    """Score pages with the model, in batches: `score` in this process, `process` in worker processes.

    Built by EdrewSpiderMiddleware.from_crawler (through `from_crawler` here, which loads the model).
    """

    def __init__(self, crawler, conf: EdrewSettings, scorer, processes: Optional[ProcessPool] = None):
        """`scorer`: the model, in this process; None with `processes` (EDREW_WORKERS >= 1), which
        then serialise and score, and the model is only loaded here if the worker pool fails for good."""
        self.conf = conf
        self.scorer = scorer
        self.stats = EdrewStats(crawler.stats, logger)
        self.pool = SerializerThreads(1 if conf.threads else 0, "edrew-scorer")
        self.batcher = Batcher(self._score_in_thread, conf.batch_pages)
        self.processes = processes
        self._caches: dict = {}  # "main" (this process) or a worker's pid -> Scorer.cache_stats()
        self._process_batcher = (Batcher(self._run_in_workers, conf.batch_pages, in_flight=processes.size + 1)
                                 if processes is not None else None)
        # Pages sent to the workers without their metadata and not yet described here: at most the batches
        # in flight plus one being described, so this thread's backlog stays bounded. None: never here (no
        # workers, no metadata, or EDREW_THREADS = 0, where it would run on the reactor's thread).
        self._here_limit = ((processes.size + 2) * conf.batch_pages
                            if processes is not None and conf.metadata and conf.threads else 0)
        self._here = 0
        self._classifier = None  # the page-type classifier of metadata read here, loaded on first use
        self._classifier_lock = threading.Lock()
        crawler.signals.connect(self.spider_closed, signal=signals.spider_closed)
        crawler.signals.connect(self.engine_stopped, signal=signals.engine_stopped)

    @classmethod
    def from_crawler(cls, crawler, conf: EdrewSettings) -> "ScoringService":
        """Load the model (in worker processes with EDREW_WORKERS >= 1); log what was loaded."""
        scorer = processes = None
        try:
            if conf.workers:
                problem = main_module_problem()
                if problem is not None:
                    logger.warning("EDREW_WORKERS=%d not used: %s; serialising and scoring in the crawl "
                                   "process, as with EDREW_WORKERS=0", conf.workers, problem)
                    crawler.stats.inc_value("edrew/workers/not-used")
                    conf = dataclasses.replace(conf, workers=0)
            if conf.workers:
                processes = ProcessPool(conf, EdrewStats(crawler.stats, logger))
                loaded = processes.start()  # blocks until one worker has loaded the model
                if loaded is None:  # workers kept dying or hanging while loading it (logged, counted)
                    processes = None
                    conf = dataclasses.replace(conf, workers=0)
            if conf.workers:
                terminate_at_shutdown(processes)
                directory, model_threshold = loaded["directory"], loaded["threshold"]
                region = loaded.get("region_share")
            else:
                scorer = load_scorer(conf)
                directory, model_threshold = getattr(scorer, "directory", None), scorer.threshold
                region = getattr(scorer, "region_share", None)
        except StartInterrupted as exc:
            logger.error("EDREW start-up interrupted: %s", exc)
            raise
        except Exception as exc:
            # Stop before the first request: a crawl without its model would export nothing useful.
            logger.error("EDREW cannot load its model (EDREW_MODEL=%r, EDREW_BACKEND=%r): %s",
                         conf.model, conf.backend, exc)
            raise
        freeze_gc_once()
        threshold = conf.threshold if conf.threshold is not None else model_threshold
        logger.info("EDREW scoring with the model %s (backend %s), threshold %.4f, main region %s, "
                    "EDREW_ITEMS=%s%s%s",
                    directory or conf.model or "models/default", conf.backend, threshold,
                    f"share {region}" if region else "off", conf.items,
                    f", builder {getattr(conf.builder, '__qualname__', conf.builder)}" if conf.builder else "",
                    f", in {conf.workers} worker process(es), caches {_mib(processes.cache_mb)} each"
                    if conf.workers else "")
        return cls(crawler, conf, scorer, processes)

    def spider_closed(self, spider) -> None:
        self.pool.stop()
        if self.processes is not None:
            self.processes.close()

    def engine_stopped(self) -> None:
        if self.processes is not None:
            self.processes.close()

    @property
    def uses_processes(self) -> bool:
        """Whether pages go to worker processes (`process`) rather than to `score`."""
        return self.processes is not None

    async def process(self, body: bytes, encoding: Optional[str], url: str):
        """With EDREW_WORKERS >= 1: the page serialised and scored in a worker process, as an
        edrew_scrapy.scrapy.worker.Outcome; None once the pool has failed for good (then the downloader
        middleware does the page in process, which loads the model here on first use)."""
        outcome = await self._process_batcher.score((body, encoding, url))
        if outcome is None:
            return None
        if isinstance(outcome, Exception):  # Batcher's last resort
            outcome = Outcome(stage="score", error=f"{type(outcome).__name__}: {outcome}")
        if outcome.metadata_here:
            try:
                if outcome.page is not None and outcome.error is None and outcome.extraction is not None:
                    outcome.extraction.metadata = await self.pool.run(self.describe, body, outcome.page,
                                                                      outcome.extraction, encoding, url,
                                                                      outcome.declared)
                    self.stats.inc("metadata/read_in_crawl_process")
                    if outcome.page.from_tree is None:  # nothing sent (or unreadable): the page parsed again here
                        self.stats.inc("metadata/parsed_in_crawl_process")
            finally:
                self._here -= 1
        if outcome.caches is not None:
            pid, caches = outcome.caches
            self.report_caches(pid, caches)
        if outcome.page is None:
            return outcome  # the downloader middleware counts the serialising error
        if outcome.error is not None:
            self.stats.error(url, "score", WorkerError(outcome.error))
            outcome.extraction = None
        elif outcome.extraction is not None:
            self.stats.inc("nodes", len(outcome.page.nodes))
            self.stats.inc("relevant_nodes", len(outcome.extraction.nodes))
        return outcome

    async def _run_in_workers(self, inputs: List[Any]) -> List[Any]:
        here = self._here + len(inputs) <= self._here_limit
        if not here:
            return await self._in_workers(inputs)
        self._here += len(inputs)  # released page by page in `process`, once described
        try:
            outcomes = await self._in_workers([(*page, False) for page in inputs])
        except BaseException:
            self._here -= len(inputs)
            raise
        for outcome in outcomes:
            if outcome is None:  # the pool failed for good: the downloader middleware does it all in process
                self._here -= 1
            else:
                outcome.metadata_here = True
        return outcomes

    async def _in_workers(self, inputs: List[Any]) -> List[Any]:
        outcomes = await self.processes.run(inputs)
        return outcomes if outcomes is not None else [None] * len(inputs)

    def describe(self, body: bytes, page, extraction, encoding: Optional[str], url: str,
                 declared: Optional[str] = None):
        """The page's metadata, read in this process (on a thread: this one's, or the downloader
        middleware's when the pages are scored here). `declared`: what a worker read from its tree
        (metadata.declared_to_json); without it the page is parsed here again (counted)."""
        from ..metadata import declared_from_json, page_metadata

        if declared is not None:
            page.from_tree = declared_from_json(declared)

        with self._classifier_lock:
            if self._classifier is None:
                from ..pagetype import default_classifier

                try:
                    self._classifier = default_classifier(self.conf.model) or False
                except Exception as exc:  # a broken pagetype.json: the metadata goes on without page types
                    self._classifier = False
                    self.stats.error(url, "load the page-type classifier for", exc)
        try:
            return page_metadata(body, page, extraction, self._classifier or None, encoding=encoding, url=url)
        finally:
            if getattr(page, "type_features", None) is not None:
                page.type_features = None  # the page type's features, kept for this: not held with the item's page

    async def _score_in_thread(self, pages: List[Any]) -> List[Any]:
        return await self.pool.run(self._score_pages, pages)

    async def score(self, page, url: str):
        """The page's Extraction, or None when scoring it raised (counted under edrew/errors)."""
        extraction = await self.batcher.score(page)
        if isinstance(extraction, Exception):
            self.stats.error(url, "score", extraction)
            return None
        self.stats.inc("nodes", len(page.nodes))
        self.stats.inc("relevant_nodes", len(extraction.nodes))
        cache_stats = getattr(self.scorer, "cache_stats", None)
        if cache_stats is not None:
            self.report_caches("main", cache_stats())
        return extraction

    def report_caches(self, owner, caches: dict) -> None:
        """edrew/cache/<name>/entries and /bytes: the scorer's caches (Scorer.cache_stats), summed over
        the processes that score (the live workers, or this process); a gauge, set, not counted."""
        self._caches[owner] = caches
        live = self.processes.pids() if self.processes is not None else set()
        for gone in [o for o in self._caches if o != "main" and o not in live]:
            del self._caches[gone]
        totals: dict = {}
        for per_process in self._caches.values():
            for name, values in per_process.items():
                for what, value in values.items():
                    totals[(name, what)] = totals.get((name, what), 0) + value
        for (name, what), value in totals.items():
            self.stats.set(f"cache/{name}/{what}", value)

    def _score_pages(self, pages: Sequence[Any]) -> List[Any]:
        """Worker thread: extract() on the whole batch, then page by page if the batch fails."""
        from ..extract import extract

        if self.scorer is None:  # EDREW_WORKERS >= 1 and the worker pool has failed for good
            try:
                self.scorer = load_scorer(self.conf)
            except Exception as exc:
                return [exc] * len(pages)

        try:
            return list(extract(list(pages), scorer=self.scorer, threshold=self.conf.threshold))
        except Exception as exc:
            if len(pages) == 1:
                return [exc]
        return [_exception_of(extract, page, self.scorer, self.conf.threshold) for page in pages]


def _exception_of(extract, page, scorer, threshold):
    try:
        return extract([page], scorer=scorer, threshold=threshold)[0]
    except Exception as exc:
        return exc
