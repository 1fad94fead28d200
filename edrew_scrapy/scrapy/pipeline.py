"""The scoring stage: score each page's nodes, keep the relevant ones, emit items.

It is a spider middleware, not an ITEM_PIPELINES component, for three reasons:

* ``process_spider_output`` gets the response next to the spider's output, so every page the spider
  processes yields its relevant content, and the spider itself needs no change;
* one page may become many items (EDREW_ITEMS = "node", or a builder that returns a list), and an
  item pipeline can only turn one item into one item;
* no internal page object ever travels through the user's item pipelines or reaches a feed: what
  leaves this stage is the export item, and the spider's own items pass through untouched.

It owns the model, but the scoring itself starts in EdrewDownloaderMiddleware (see middleware.py),
which awaits `EdrewSpiderMiddleware.score` right after serialising a page; a response reaches the
spider with its Extraction in its meta, so `process_spider_output` never waits for the model.

Scoring runs on a worker thread, one model call at a time; pages that arrive while a call runs wait
and go into the next call together (up to EDREW_BATCH_PAGES), so batches grow with the load. With
EDREW_WORKERS >= 1 (the default), the same batching feeds worker processes that serialise and score
(`process`, awaited by the downloader middleware instead of `score`), and the model is loaded in each
worker, not here, unless the worker pool fails for good and this process takes the work over.
"""
from __future__ import annotations

import asyncio
import dataclasses
import gc
import logging
from collections import deque
from typing import Any, Awaitable, Callable, Deque, List, Optional, Sequence, Set, Tuple

from itemadapter import ItemAdapter
from scrapy import signals
from scrapy.utils.defer import deferred_from_coro, maybe_deferred_to_future
from twisted.internet.defer import CancelledError, Deferred
from twisted.python.failure import Failure

from .items import NodeItem, PageContext, PageItem
from .middleware import (EXTRACTION_KEY, ITEMS_SENT_KEY, META_KEY, PARSED_KEY, WorkerPool, register_scoring,
                         unregister_scoring)
from .settings import EdrewSettings
from .stats import EdrewStats

logger = logging.getLogger(__name__)


def load_scorer(conf: EdrewSettings):
    """The model named by EDREW_MODEL / EDREW_BACKEND; a ModelError names the file at fault."""
    import torch

    from ..extract import override_region_share
    from ..model.scorer import load_model

    if conf.torch_threads:
        # Batches of a few pages are too small for intra-op parallelism to pay, and OpenMP workers
        # spinning next to the reactor and the serializer threads cost more than they give: on 2
        # cores, 2 torch threads took 32 ms of CPU per small page against 2.9 ms with 1.
        torch.set_num_threads(conf.torch_threads)

    return override_region_share(load_model(conf.model, backend=conf.backend, cache_mb=conf.cache_mb),
                              conf.region_share)


_gc_frozen = False


def _terminate_at_shutdown(processes) -> None:
    """A forced stop (a second Ctrl-C) stops the reactor without closing the spider: the workers are
    killed then, or one that never answers keeps the process from exiting. After a clean close they
    hold nothing (the engine waits for the pages being scored), so this costs nothing there. Without a
    reactor (TWISTED_REACTOR_ENABLED=False) the pool's own exit hook does it (processes._kill_at_exit)."""
    import sys

    reactor = sys.modules.get("twisted.internet.reactor")
    if reactor is not None and hasattr(reactor, "addSystemEventTrigger"):
        reactor.addSystemEventTrigger("before", "shutdown", processes.terminate)


def freeze_gc_once() -> None:
    """Keep the objects alive after the first model load out of every later cyclic collection.

    torch and the model add some 150,000 objects that live as long as the process, and each full
    collection walks them all again: about 0.1 s each, some 20 times in a crawl of 2,000 small pages.
    Once per process and after a collection, so of the objects frozen only those of that moment that
    later die in a reference cycle (the first crawler's, when a process runs crawls one after another)
    are never freed.
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


class EdrewSpiderMiddleware:
    """After the spider's own output for a response, yield the relevant content of its page.

    The page was scored before the response reached the spider: `score` is what the downloader
    middleware awaits for it.
    """

    def __init__(self, crawler, conf: EdrewSettings, scorer, processes=None):
        """`scorer`: the model, in this process; None with `processes` (EDREW_WORKERS >= 1), which
        then serialise and score, and the model is only loaded here if the worker pool fails for good."""
        self.crawler = crawler
        self.conf = conf
        self.scorer = scorer
        self.stats = EdrewStats(crawler.stats, logger)
        self.pool = WorkerPool(1 if conf.threads else 0, "edrew-scorer")
        self.batcher = Batcher(self._score_in_thread, conf.batch_pages)
        self.processes = processes
        self._caches: dict = {}  # "main" (this process) or a worker's pid -> Scorer.cache_stats()
        self._process_batcher = (Batcher(self._run_in_workers, conf.batch_pages, in_flight=processes.size + 1)
                                 if processes is not None else None)
        crawler.signals.connect(self.spider_closed, signal=signals.spider_closed)
        crawler.signals.connect(self.engine_stopped, signal=signals.engine_stopped)
        register_scoring(crawler, self.score, self.process if processes is not None else None)

    @classmethod
    def from_crawler(cls, crawler):
        conf = EdrewSettings.from_settings(crawler.settings)
        scorer = processes = None
        try:
            if conf.workers:
                from .processes import main_module_problem

                problem = main_module_problem()
                if problem is not None:
                    logger.warning("EDREW_WORKERS=%d not used: %s; serialising and scoring in the crawl "
                                   "process, as with EDREW_WORKERS=0", conf.workers, problem)
                    crawler.stats.inc_value("edrew/workers/not-used")
                    conf = dataclasses.replace(conf, workers=0)
            if conf.workers:
                from .processes import ProcessPool

                processes = ProcessPool(conf, EdrewStats(crawler.stats, logger))
                loaded = processes.start()  # blocks until one worker has loaded the model
                _terminate_at_shutdown(processes)
                directory, model_threshold = loaded["directory"], loaded["threshold"]
                region = loaded.get("region_share")
            else:
                scorer = load_scorer(conf)
                directory, model_threshold = getattr(scorer, "directory", None), scorer.threshold
                region = getattr(scorer, "region_share", None)
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
                    f", in {conf.workers} worker process(es)" if conf.workers else "")
        return cls(crawler, conf, scorer, processes)

    def spider_closed(self, spider) -> None:
        self.pool.stop()
        if self.processes is not None:
            self.processes.close()
        unregister_scoring(self.crawler)

    def engine_stopped(self) -> None:
        if self.processes is not None:
            self.processes.close()
        unregister_scoring(self.crawler)

    async def process(self, body: bytes, encoding: Optional[str], url: str):
        """With EDREW_WORKERS >= 1: the page serialised and scored in a worker process, as an
        edrew_scrapy.workers.Outcome; None once the pool has failed for good (then the downloader
        middleware does the page in process, which loads the model here on first use)."""
        outcome = await self._process_batcher.score((body, encoding, url))
        if outcome is None:
            return None
        if isinstance(outcome, Exception):  # Batcher's last resort
            from ..workers import Outcome

            outcome = Outcome(stage="score", error=f"{type(outcome).__name__}: {outcome}")
        if outcome.caches is not None:
            pid, caches = outcome.caches
            self.report_caches(pid, caches)
        if outcome.page is None:
            return outcome  # the downloader middleware counts the serialising error
        if outcome.error is not None:
            from .processes import WorkerError

            self.stats.error(url, "score", WorkerError(outcome.error))
            outcome.extraction = None
        elif outcome.extraction is not None:
            self.stats.inc("nodes", len(outcome.page.nodes))
            self.stats.inc("relevant_nodes", len(outcome.extraction.nodes))
        return outcome

    async def _run_in_workers(self, inputs: List[Any]) -> List[Any]:
        outcomes = await self.processes.run(inputs)
        return outcomes if outcomes is not None else [None] * len(inputs)

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

    def process_spider_input(self, response, spider=None) -> None:
        # Scrapy calls this only after every input check before it passed (HttpErrorMiddleware's at 50
        # among them), so the mark says the response reached its callback. A response rejected before
        # it goes to its errback, whose output also comes through process_spider_output: it gets no
        # item, as a page the spider did not parse.
        if response.request is not None:
            response.meta[PARSED_KEY] = True

    async def process_spider_output(self, response, result, spider=None):
        try:
            async for output in result:
                yield output
        except Exception:
            # The callback raised: its page was still parsed and scored, and its item must not be lost
            # with the rest of the callback's output. The exception goes on to Scrapy's handling.
            for item in self.items_of(response):
                yield item
            raise
        # Nothing below awaits: with the spider's output done, Scrapy's item workers get these at once.
        for item in self.items_of(response):
            yield item

    def process_spider_exception(self, response, exception, spider=None) -> None:
        """A callback that raised before it returned any output (a plain function or a coroutine that
        raises) has no output for process_spider_output to follow: its page's items go to the item
        pipelines from here. Returning them instead would end Scrapy's handling of the exception (no
        "Spider error" log, no spider_error signal, no spider_exceptions/ stats), so None is returned
        and the exception goes on as without the add-on. A generator that raised mid-way has already
        sent them (process_spider_output); items_of sends a page's items once."""
        items = self.items_of(response)
        scraper = getattr(getattr(self.crawler, "engine", None), "scraper", None)
        if not items or scraper is None:
            return None
        for item in items:
            # start_itemproc_async (Scrapy >= 2.14) counts the item as in progress at once, so the
            # spider does not close before the pipelines have it
            deferred_from_coro(scraper.start_itemproc_async(item, response=response))
        return None

    def items_of(self, response) -> list:
        """The items of a response that reached its callback scored; none for any other, and none the
        second time for the same response."""
        meta = response.meta if response.request is not None else {}
        page, extraction = meta.get(META_KEY), meta.get(EXTRACTION_KEY)
        if page is None or extraction is None or not meta.get(PARSED_KEY) or meta.get(ITEMS_SENT_KEY):
            return []
        meta[ITEMS_SENT_KEY] = True
        try:
            items = self.build_items(extraction, page, response)
        except Exception as exc:
            self.stats.error(response.url, "build items for", exc)
            return []
        if not items:
            self.stats.skip("no-relevant-content" if not extraction.nodes else "builder-empty", response.url)
            return []
        self.stats.inc("items", len(items))
        return items

    def build_items(self, extraction, page, response) -> list:
        url = response.url
        title = extraction.title or page.title or ""
        if self.conf.builder is not None:
            context = PageContext(url=url, title=title, extraction=extraction, page=page,
                                  response=response, spider=getattr(self.crawler, "spider", None))
            return _as_items(self.conf.builder([n.content for n in extraction.nodes], context))
        if not extraction.nodes:
            return []
        if self.conf.items == "node":
            return [NodeItem(url=url, title=title, content=n.content, score=round(float(n.score), 4),
                             path=n.path, index=n.index, images=list(n.images)) for n in extraction.nodes]
        return [PageItem(
            url=url, title=title, text="\n".join(n.content for n in extraction.nodes),
            nodes=[{"content": n.content, "score": round(float(n.score), 4), "path": n.path}
                   for n in extraction.nodes],
            images=list(extraction.images),
        )]

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


def _as_items(output) -> list:
    if output is None:
        return []
    if ItemAdapter.is_item(output):
        return [output]
    items = list(output)
    for item in items:
        if not ItemAdapter.is_item(item):
            raise TypeError(f"EDREW_BUILDER must return an item, a list of items or None, "
                            f"got {type(item).__name__}")
    return items
