"""EDREW_WORKERS >= 1: worker processes serialise and score pages, so the crawl process keeps its GIL.

The serializer is pure Python and torch holds the GIL outside its kernels, so in threads both take
turns with the reactor for one GIL. A worker process (`concurrent.futures.ProcessPoolExecutor`,
`spawn` context: no fork of a process that runs a reactor and threads) gets the response body,
its declared encoding and URL, and sends back the Page and its Extraction (see worker.py).

A worker that dies (killed, out of memory, a crash in native code) breaks the whole executor: the
death is logged and counted (edrew/workers/died), a new executor is started (edrew/workers/restarts),
and the pages that were in flight are sent again one by one (a page sent alone that dies with its
worker is sent once more, in case another page in flight killed it), so a page that kills its worker
costs only itself (an edrew/errors count) and three restarts. After MAX_RESTARTS restarts with no
batch done between them, the plugin stops using processes and serialises and scores in the crawl
process, as with EDREW_WORKERS = 0 (edrew/workers/fallback): the crawl never loses its pages to a pool.
A pool that gives no result for a batch within EDREW_WORKER_TIMEOUT is killed and counts as a death
(edrew/workers/timeouts too): a hung worker costs its page, not the crawl. While a batch's pages are
sent again one by one, no other batch is in the pool, so a bad page cannot take an innocent one with it.

Start-up gets the same care: a worker that dies or gives no sign of life within EDREW_WORKER_TIMEOUT
while it loads the model is counted and replaced the same way, and when the restarts are spent the crawl
process loads the model itself; Ctrl-C (or SIGTERM) while the crawl waits for it stops the workers and
the crawl at once. Only a worker that reports that the model cannot be loaded stops the crawl (a
ModelError naming the file).
"""
from __future__ import annotations

import contextlib
import logging
import multiprocessing
import re
import signal
import sys
import threading
import time
from concurrent import futures
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Callable, Iterator, List, Optional, Sequence

from . import worker
from .futures import await_future
from .settings import EdrewSettings
from .stats import EdrewStats
from .worker import Outcome, PageInput, WorkerStartError

logger = logging.getLogger(__name__)

MAX_RESTARTS = 5  # in a row, without a batch done between them
# How long, at shutdown, the workers get to finish the pages they hold before they are terminated.
SHUTDOWN_GRACE_S = 30.0


# `if __name__ == "__main__":` (either order, either quotes) at the start of a line.
_MAIN_GUARD = re.compile(r"""^\s*if\s+(?:__name__\s*==\s*(['"])__main__\1|(['"])__main__\2\s*==\s*__name__)\s*:""",
                         re.M)


def main_module_problem() -> Optional[str]:
    """Why a spawned worker would run this program's main script again, or None when it would not.

    A `spawn` child imports the parent's __main__ module (as __mp_main__) before it runs anything: a
    script that runs its crawl at top level, with no main guard, would run the crawl again in every
    worker. `scrapy` itself (its console script and `python -m scrapy`), pytest and interactive
    sessions are safe.
    """
    main = sys.modules.get("__main__")
    name = getattr(getattr(main, "__spec__", None), "name", None)
    if name is not None and (name == "__main__" or name.endswith(".__main__")):
        return None  # multiprocessing never re-imports a package's __main__
    path = getattr(main, "__file__", None)
    if path is None:
        return None  # an interactive session: nothing to import
    try:
        source = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        return f"its main script {path} cannot be read ({exc})"
    if _MAIN_GUARD.search(source):
        return None
    return (f"its main script {path} has no `if __name__ == \"__main__\":` guard, and every worker process "
            f"would run it again (multiprocessing's spawn)")


def _uncancellable() -> Future:
    """A Future that only ever gets a result: the gates above are awaited by many batches, and
    asyncio passes a waiter's cancellation on to the Future it waits on unless that one is running.
    Everything that sets or reads them runs on the reactor's thread, so a check and the next turn's
    start cannot interleave."""
    future: Future = Future()
    future.set_running_or_notify_cancel()
    return future


class WorkerError(Exception):
    """An error raised in a worker process, re-raised here from its formatted traceback."""


class StartInterrupted(Exception):
    """Ctrl-C (or SIGTERM) while the crawl waited for a worker to load the model."""


# how often a blocked start-up looks at the clock and for a signal
_START_POLL_S = 0.2


@contextlib.contextmanager
def _signals_noted() -> Iterator[list]:
    """While the crawl blocks its main thread waiting for a worker, SIGINT and SIGTERM are noted in the
    list yielded instead of going to Scrapy's handlers: those only schedule a stop on the reactor, which
    cannot run until the wait ends, so two Ctrl-C did nothing. Elsewhere than in the main thread signals
    cannot be handled, and nothing changes."""
    noted: list = []
    if threading.current_thread() is not threading.main_thread():
        yield noted
        return
    previous = {}
    for signum in (signal.SIGINT, signal.SIGTERM):
        previous[signum] = signal.signal(signum, lambda number, frame: noted.append(number))
    try:
        yield noted
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


# Pools not closed yet, held strongly: their workers are killed when the interpreter exits (see
# _kill_at_exit). A weak reference was not enough: once the crawl's objects were collected the hook
# found nothing to kill, and a hung worker held the process again.
_open_pools: "set[ProcessPool]" = set()
_exit_hooked = False


def _kill_open_pools() -> None:
    for pool in list(_open_pools):
        pool.terminate()


def _kill_at_exit() -> None:
    """Kill the workers of every pool still open when the interpreter exits, before the executors' own
    exit handler joins their processes: after a forced stop without a Twisted reactor
    (TWISTED_REACTOR_ENABLED=False) nothing else does, and a hung worker kept the process from exiting
    (reproduced with a worker that never returns). `threading._register_atexit` hooks run newest first,
    before the threads are joined, and concurrent.futures registers its join there when it is imported,
    before any pool exists. One hook per process, whatever the number of crawls."""
    global _exit_hooked
    if _exit_hooked:
        return
    register = getattr(threading, "_register_atexit", None)  # CPython >= 3.9; private, hence the guard
    try:
        if register is None:
            import atexit

            atexit.register(_kill_open_pools)  # later than the join, but the best there is
        else:
            register(_kill_open_pools)
    except RuntimeError:  # the interpreter is already shutting down: nothing left to hook
        return
    _exit_hooked = True


def worker_cache_mb(cache_mb: Optional[float], workers: int) -> Optional[float]:
    """Each worker's share of EDREW_CACHE_MB: the budget bounds the crawl's caches together, so that a
    second worker adds its model and its pages to the crawl's memory but not a second set of caches.
    None (entry limits only) stays None."""
    if cache_mb is None:
        return None
    return float(cache_mb) / max(1, workers)


class ProcessPool:
    """EDREW_WORKERS processes, each with the model loaded once, running `task` on batches of pages."""

    def __init__(self, conf: EdrewSettings, stats: EdrewStats, *,
                 task: Callable[[Sequence[PageInput]], List[Outcome]] = worker.process,
                 initializer: Callable[..., None] = worker.init, max_restarts: int = MAX_RESTARTS):
        self.size = conf.workers
        self.cache_mb = worker_cache_mb(conf.cache_mb, conf.workers)
        self._initargs = (conf.model, conf.backend, conf.torch_threads, conf.threshold, self.cache_mb,
                          conf.region_share, conf.metadata)
        self._task = task
        self._initializer = initializer
        self._timeout = conf.worker_timeout
        self._stats = stats
        self._max_restarts = max_restarts
        self._restarts_left = max_restarts
        self._closed = False
        self.failed = False  # restarts spent: the caller serialises and scores in process from then on
        # While a failed batch's pages are sent again one by one, nothing else may be in the pool:
        # _lone_turn is the turn running now, _lone_batches counts the failed batches running or waiting
        # for theirs, and _lone_done is set when that count is back to 0 (new batches wait for it).
        self._lone_turn: Optional[Future] = None
        self._lone_batches = 0
        self._lone_done: Optional[Future] = None
        self._executor = self._new_executor()
        _open_pools.add(self)
        _kill_at_exit()

    def _new_executor(self) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(self.size, mp_context=multiprocessing.get_context("spawn"),
                                   initializer=worker.bootstrap, initargs=(self._initializer, self._initargs))

    def start(self) -> Optional[dict]:
        """Block until a worker has loaded the model: what it loaded; None when workers kept dying or
        hanging while they loaded it, until the restarts were spent (the pool has then failed, and the
        caller loads the model in process). A model that cannot be loaded raises here, with the worker's
        message (a ModelError as a ModelError); Ctrl-C or SIGTERM while waiting raises StartInterrupted."""
        with _signals_noted() as noted:
            while not self.failed:
                executor = self._executor
                try:
                    return self._wait_ready(executor.submit(worker.ready), noted)
                except WorkerStartError as exc:
                    self.close()
                    if exc.kind == "ModelError":
                        from ..model.files import ModelError

                        raise ModelError(exc.message) from None
                    if exc.kind == "TorchMissing":  # the backend needs the [train] extra: the message names it
                        from ..model.files import TorchMissing

                        raise TorchMissing(exc.message, name="torch") from None
                    raise RuntimeError(f"EDREW worker could not start: {exc.kind}: {exc.message}") from None
                except BrokenProcessPool as exc:
                    self._start_failed(executor, f"died ({exc})")
                except TimeoutError:
                    self._stats.inc("workers/timeouts")
                    self._start_failed(executor, f"gave no sign of life in {self._timeout:g} s "
                                                 f"(EDREW_WORKER_TIMEOUT)")
                except BaseException:
                    self.terminate()
                    self.close()
                    raise
        return None

    def _wait_ready(self, future: Future, noted: list) -> dict:
        """future.result() in short waits: each one ends to look for a signal and at the deadline."""
        deadline = None if self._timeout is None else time.monotonic() + self._timeout
        while True:
            try:
                return future.result(_START_POLL_S)
            except futures.TimeoutError:
                if noted:
                    name = signal.Signals(noted[0]).name
                    raise StartInterrupted(f"{name} while a worker process was loading the model: "
                                           f"workers stopped, crawl not started") from None
                if deadline is not None and time.monotonic() >= deadline:
                    raise TimeoutError from None

    def _start_failed(self, executor: ProcessPoolExecutor, what: str) -> None:
        """A worker died or hung while loading the model: a new pool, as for a death while scoring,
        or, with the restarts spent, the pool fails (the crawl process then loads the model)."""
        self._stats.inc("workers/died")
        self.terminate(executor)
        executor.shutdown(wait=False)
        if self._restarts_left <= 0:
            self._give_up(f"a worker process {what} while loading the model, after {self._max_restarts} "
                          f"restarts in a row")
            return
        self._restarts_left -= 1
        logger.error("EDREW worker process %s while loading the model; starting a new one (%d restart(s) "
                     "left)", what, self._restarts_left)
        self._stats.inc("workers/restarts")
        self._executor = self._new_executor()

    async def run(self, batch: Sequence[PageInput], retried: bool = False,
                  _alone: bool = False) -> Optional[List[Outcome]]:
        """One Outcome per page of `batch`, or None once the pool has failed for good (the caller
        then does the work in process)."""
        if not _alone:
            while self._lone_batches:
                await await_future(self._lone_done)
        if self.failed:
            return None
        executor = self._executor
        try:
            outcomes = await await_future(executor.submit(self._task, list(batch)), self._timeout)
            self._restarts_left = self._max_restarts
            return outcomes
        except WorkerStartError as exc:
            # A restarted worker could not load the model any more (its files changed on disk?).
            self._give_up(f"a restarted worker could not load the model: {exc.kind}: {exc.message}")
            return None
        except Exception as exc:  # BrokenProcessPool above all; a timeout; a result that would not pickle
            if self._closed:
                return [Outcome(stage="score", error="the EDREW worker pool was shut down") for _ in batch]
            if isinstance(exc, TimeoutError):
                # A worker that never answers (a page that hangs it, a stopped process) would hold the
                # crawl for ever: its pool is taken down as if it had died, and its pages sent again alone.
                self._hung(executor, len(batch))
            elif isinstance(exc, BrokenProcessPool):
                self._broken(executor, exc)
            else:
                logger.error("EDREW worker task failed for %d page(s): %s: %s", len(batch),
                             type(exc).__name__, exc)
            if self.failed:
                return None
            error = exc
        if len(batch) == 1 and retried:
            # Sent alone, twice, and lost both times: this page is what kills its worker.
            return [Outcome(stage="score", error=f"the page was lost with its worker process: "
                                                 f"{type(error).__name__}: {error}")]
        # Which page was at fault is unknown (a broken executor fails every page in flight): each
        # again on its own. Sequentially: this is rare, and it works under either reactor.
        if _alone:
            return await self._each_alone(batch, retried)
        # Alone means alone in the pool: the other batches that died with this one take their turns one
        # after another, and new ones wait until all are through. Two batches retrying side by side let
        # the bad page of one kill the pool under the other's lone page, which then counted as the culprit.
        if not self._lone_batches:
            self._lone_done = _uncancellable()
        self._lone_batches += 1
        try:
            while self._lone_turn is not None and not self._lone_turn.done():
                await await_future(self._lone_turn)
            turn = self._lone_turn = _uncancellable()
            try:
                return await self._each_alone(batch, retried)
            finally:
                turn.set_result(None)
        finally:
            self._lone_batches -= 1
            if not self._lone_batches:
                self._lone_done.set_result(None)

    async def _each_alone(self, batch: Sequence[PageInput], retried: bool) -> Optional[List[Outcome]]:
        outcomes: List[Outcome] = []
        for one in batch:
            result = await self.run([one], retried=len(batch) == 1 or retried, _alone=True)
            if result is None:
                return None
            outcomes.extend(result)
        return outcomes

    def pids(self) -> set:
        """The process ids of the current pool's workers (none once the pool has failed)."""
        if self.failed:
            return set()
        return set(getattr(self._executor, "_processes", None) or {})

    def _hung(self, executor: ProcessPoolExecutor, pages: int) -> None:
        if executor is not self._executor:
            return  # already replaced, after another batch's failure
        self._stats.inc("workers/timeouts")
        logger.error("EDREW worker pool gave no result for %d page(s) in %g s (EDREW_WORKER_TIMEOUT): "
                     "terminating its processes", pages, self._timeout)
        self.terminate(executor)
        self._broken(executor, TimeoutError(f"no result in {self._timeout:g} s"))

    def terminate(self, executor: Optional[ProcessPoolExecutor] = None) -> None:
        """Kill the worker processes now, whatever they hold: for a hung pool, and at the reactor's
        shutdown, where a worker that never answers would otherwise keep the crawl process from
        exiting (the executor's own exit handler joins its processes). SIGKILL: a stopped process
        (SIGSTOP, a debugger) would hold SIGTERM until it runs again."""
        executor = executor or self._executor
        for process in list((getattr(executor, "_processes", None) or {}).values()):
            if process.is_alive():
                process.kill()

    def _broken(self, executor: ProcessPoolExecutor, exc: BaseException) -> None:
        if executor is not self._executor:
            return  # another batch in flight on the same executor has already replaced it
        self._stats.inc("workers/died")
        executor.shutdown(wait=False)
        if self._restarts_left <= 0:
            self._give_up(f"a worker process died ({exc}) after {self._max_restarts} restarts in a row")
            return
        self._restarts_left -= 1
        logger.error("EDREW worker process died (%s); starting a new pool (%d restart(s) left) and sending "
                     "its pages again", exc, self._restarts_left)
        self._stats.inc("workers/restarts")
        self._executor = self._new_executor()

    def _give_up(self, why: str) -> None:
        if self.failed:
            return
        self.failed = True
        _open_pools.discard(self)
        self._stats.inc("workers/fallback")
        logger.error("EDREW stops using worker processes: %s; serialising and scoring in the crawl "
                     "process from now on", why)
        self._shutdown(self._executor)

    def close(self) -> None:
        """Stop the workers once they have finished what they hold; never blocks the caller, and
        terminates a worker that has not finished after SHUTDOWN_GRACE_S."""
        if self._closed:
            return
        self._closed = True
        _open_pools.discard(self)
        self._shutdown(self._executor)

    @staticmethod
    def _shutdown(executor: ProcessPoolExecutor) -> None:
        processes = list((getattr(executor, "_processes", None) or {}).values())
        executor.shutdown(wait=False)

        def reap() -> None:
            from multiprocessing.connection import wait

            deadline = time.monotonic() + SHUTDOWN_GRACE_S
            for process in processes:
                # The sentinel, not join()/is_alive(): the executor's own thread joins these processes
                # too, and when it reaps one first, join() here returns at once and is_alive() can
                # still say True, which logged a false "still busy" and terminated a finished worker.
                if not wait([process.sentinel], max(0.0, deadline - time.monotonic())):
                    logger.warning("EDREW worker process %s still busy %.0f s after the crawl closed: "
                                   "terminating it", process.pid, SHUTDOWN_GRACE_S)
                    process.terminate()
                    process.join(5)

        if processes:
            threading.Thread(target=reap, name="edrew-worker-reaper", daemon=True).start()
