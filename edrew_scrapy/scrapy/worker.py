"""The worker process entry point (EDREW_WORKERS >= 1): serialise and score batches of pages.

No Scrapy here (edrew_scrapy.scrapy loads its Scrapy parts lazily): a worker imports only the
serializer and the model, and with the numpy backend (EDREW_BACKEND's default) never torch. The model is loaded from its
files once per worker, by `init`; it is never pickled. Only plain data crosses the process boundary:
in, (body bytes, declared encoding, URL[, metadata]) per page; out, one `Outcome` per page, holding the
`Page` and the `Extraction` (dataclasses of str, int, float, lists and dicts) or the error as text.
`metadata` False leaves a page's metadata to the crawl process (scoring.py decides, batch by batch).
"""
from __future__ import annotations

import os
import signal
import threading
import time
import traceback
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

from ..collector import BetweenUnits

# (body, declared encoding or None, url), and optionally whether to read the page's metadata here (default:
# as `init` was told): False when the crawl process reads it itself, on a core the worker is not using
PageInput = Union[Tuple[bytes, Optional[str], str], Tuple[bytes, Optional[str], str, bool]]

_state: dict = {}


@dataclass
class Outcome:
    """One page's result. `stage` and `error` say what failed ("serialise" or "score") and how."""

    page: Any = None          # edrew_scrapy.page.Page
    extraction: Any = None    # edrew_scrapy.extract.Extraction; None when the page has no nodes
    stage: Optional[str] = None
    error: Optional[str] = None
    # On the first page of each batch scored: (worker pid, Scorer.cache_stats() after the batch)
    caches: Optional[Tuple[int, Dict[str, Dict[str, int]]]] = None
    # Set in the crawl process, never by a worker: the page was sent without its metadata, which the
    # crawl process reads itself (scoring.ScoringService)
    metadata_here: bool = False
    # Sent instead of the page's metadata: what it declares, read from the serializer's tree
    # (metadata.declared_to_json; Page.from_tree is not pickled), so that the crawl process parses nothing
    declared: Optional[str] = None


def bootstrap(initializer: Callable[..., None], initargs: tuple) -> None:
    """Every worker's initializer: ignore Ctrl-C, exit with the crawl process, then `initializer`.

    Ctrl-C in a terminal reaches the whole process group: the crawl process decides how to stop
    (Scrapy's graceful stop lets the pages in flight finish) and closes the pool when it is done.
    A crawl process killed outright (SIGKILL, out of memory) cannot close it, and a worker waiting
    for its next batch would wait for ever: a thread checks once a second that its parent lives.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    parent = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(1.0)
            if os.getppid() != parent:
                os._exit(0)

    threading.Thread(target=watch, name="edrew-parent-watch", daemon=True).start()
    initializer(*initargs)


def init(model: Optional[str], backend: str, torch_threads: int, threshold: Optional[float],
         cache_mb: Optional[float] = 128.0, region_share: Optional[float] = None, metadata: bool = False) -> None:
    """Load the model (and, with `metadata`, the page-type classifier) once. A failure is kept and
    reported by every task, so that its message (a ModelError names the file) reaches the crawl instead
    of a broken pool."""
    _state.clear()
    _state["threshold"] = threshold
    _state["metadata"] = metadata
    try:
        if metadata:
            from ..pagetype import default_classifier

            _state["classifier"] = default_classifier(model)
        from ..model.base import load_model, set_threads

        if torch_threads:
            set_threads(torch_threads, backend)  # torch is imported only for a backend that runs on it
        from ..extract import override_region_share

        _state["scorer"] = override_region_share(load_model(model, backend=backend, cache_mb=cache_mb), region_share)
    except Exception as exc:  # noqa: BLE001 - reported to the crawl by ready() and process()
        _state["error"] = (type(exc).__name__, str(exc))
        return
    # The model's objects live as long as the worker: frozen, out of every later collection; and garbage
    # collected before each batch rather than during it (collector.py).
    _state["collector"] = BetweenUnits.start()


def _scorer():
    if "error" in _state:
        kind, message = _state["error"]
        raise WorkerStartError(kind, message)
    return _state["scorer"]


class WorkerStartError(Exception):
    """The worker could not load its model: the original exception's class name and message."""

    def __init__(self, kind: str, message: str):
        super().__init__(kind, message)
        self.kind = kind
        self.message = message

    def __str__(self) -> str:
        return self.message


def ready() -> dict:
    """Called once at start-up: the model as loaded, or WorkerStartError. `torch_threads`: the intra-op
    threads scoring runs with (numpy's BLAS's with the numpy backend, which never imports torch)."""
    import sys

    from ..model.base import threads_in_use

    scorer = _scorer()
    return {"pid": os.getpid(), "directory": str(getattr(scorer, "directory", "") or ""),
            "threshold": float(scorer.threshold), "region_share": getattr(scorer, "region_share", None),
            "torch_threads": threads_in_use(), "backend": getattr(scorer, "backend", None),
            "torch_imported": "torch" in sys.modules}


def process(batch: Sequence[PageInput]) -> List[Outcome]:
    """Serialise every page, then score those with nodes in one model call (page by page if that
    call raises, so one bad page costs only itself): what the crawl process does in its threads."""
    collector = _state.get("collector")
    if collector is not None:  # the last batch's results have been sent and freed
        collector.collect()
    return _process(batch)


def _process(batch: Sequence[PageInput]) -> List[Outcome]:
    from ..extract import extract
    from ..metadata import declared_to_json, read_tree
    from ..serializer import serialize

    scorer = _scorer()
    threshold = _state.get("threshold")
    outcomes: List[Outcome] = []
    for body, encoding, url, *wanted in batch:
        # the page's declared metadata read from the serializer's tree: used here, or sent to the crawl
        # process where it reads the metadata itself
        reader = read_tree if _state.get("metadata") else None
        try:
            page = serialize(body, encoding=encoding, url=url, tree_reader=reader)
        except Exception:  # noqa: BLE001 - the serializer should never raise; report it per page
            outcomes.append(Outcome(stage="serialise", error=traceback.format_exc(limit=-8)))
            continue
        outcomes.append(Outcome(page=page, declared=declared_to_json(page.from_tree) if wanted and not wanted[0]
                                else None))
    todo = [o for o in outcomes if o.page is not None and o.page.nodes]
    if not todo:
        return outcomes
    try:
        for outcome, extraction in zip(todo, extract([o.page for o in todo], scorer=scorer, threshold=threshold)):
            outcome.extraction = extraction
    except Exception:  # noqa: BLE001
        for outcome in todo:
            try:
                outcome.extraction = extract([outcome.page], scorer=scorer, threshold=threshold)[0]
            except Exception:  # noqa: BLE001
                outcome.stage, outcome.error = "score", traceback.format_exc(limit=-8)
    from ..metadata import page_metadata

    for outcome, (body, encoding, url, *wanted) in zip(outcomes, batch):
        if outcome.page is None or (_state.get("metadata") and wanted and not wanted[0]):
            continue  # the crawl process reads its metadata: the page type's features read here go with it
        if _state.get("metadata") and outcome.extraction is not None:
            outcome.extraction.metadata = page_metadata(body, outcome.page, outcome.extraction,
                                                        _state.get("classifier"), encoding=encoding, url=url)
        if getattr(outcome.page, "type_features", None) is not None:
            outcome.page.type_features = None  # nothing reads them past here: not sent
    cache_stats = getattr(scorer, "cache_stats", None)
    if cache_stats is not None:
        outcomes[0].caches = (os.getpid(), cache_stats())
    return outcomes
