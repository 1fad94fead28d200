"""A JOBDIR crawl that continues where it stopped, gracefully or not: Scrapy's scheduler plus a journal.

Scrapy (checked on 2.19) saves its queue only when the spider closes, and re-issues the spider's start
requests on every resume, beside that queue and outside the dupefilter (they are ``dont_filter``): a
resumed crawl downloads its start pages again and exports their items twice. After SIGKILL the queue is
gone, and the only way back was to start over.

`ResumeScheduler` keeps an append-only journal, ``JOBDIR/edrew-requests.jl``, one JSON line per event:

* ``{"q": id, "f": fingerprint, "r": request}``: a request entered the queue (the request as
  ``Request.to_dict`` gives it, bytes as latin-1 text; ``"r"`` is missing when its meta, cookies or
  cb_kwargs are not JSON, counted under ``edrew/resume/unjournaled``);
* ``{"d": [id, ...]}``: those requests are finished: they have left the engine, so their responses went
  through the spider and every item and request they gave was handled (exported, scheduled).

A ``d`` line is written only after the feed files were flushed (see `resume.FlushedFileFeedStorage`), so
a finished request's items are on disk before the journal says so; a kill between an export and its
``d`` line costs a second download of that page, and the feed filter keeps its page item out of the feed
a second time. The queue ids are unique per crawl job, so a retry (same fingerprint) is its own entry.

On every run the journal's fingerprints are "seen": a start request whose page an earlier run already
scheduled is dropped (``edrew/resume/start-requests-skipped``), so that nothing is exported twice. After an
unclean stop (ResumeGuard's marker) Scrapy's stale queue and ``requests.seen`` are gone, and the requests
the journal holds as queued but not finished are queued again (``edrew/resume/requeued``): the crawl goes
on, and only the pages that were in flight are downloaded again.
"""
from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Dict, List, Optional, Set, Tuple

from scrapy.core.scheduler import Scheduler
from scrapy.utils.request import request_from_dict

from .resume import CompleteLines, cut_file
from .stats import PREFIX

logger = logging.getLogger(__name__)

JOURNAL = "edrew-requests.jl"
ID_KEY = "_edrew_queue_id"  # a request's journal id, in its meta (a disk queue returns a new object)


# ------------------------------------------------------------------ requests as JSON

def encode_request(request, spider) -> Optional[Dict[str, Any]]:
    """`Request.to_dict` with its bytes as latin-1 text, without the page EDREW put in the meta (a spider
    that passes meta=response.meta on carries it, and the downloader middleware drops it on arrival);
    None when the rest is not JSON."""
    from .meta import EXTRACTION_KEY, ITEMS_SENT_KEY, META_KEY, PARSED_KEY

    data = request.to_dict(spider=spider)
    data["meta"] = {key: value for key, value in data["meta"].items()
                    if key not in (META_KEY, EXTRACTION_KEY, PARSED_KEY, ITEMS_SENT_KEY)}
    data["body"] = data["body"].decode("latin-1")
    data["headers"] = {key.decode("latin-1"): [value.decode("latin-1") for value in values]
                       for key, values in data["headers"].items()}
    try:
        json.dumps(data)
    except (TypeError, ValueError):
        return None
    return data


def decode_request(data: Dict[str, Any], spider):
    data = dict(data)
    data["body"] = data["body"].encode("latin-1")
    data["headers"] = {key.encode("latin-1"): [value.encode("latin-1") for value in values]
                       for key, values in data["headers"].items()}
    return request_from_dict(data, spider=spider)


# ------------------------------------------------------------------ the journal

@dataclass
class JournalState:
    seen: Set[str] = field(default_factory=set)                   # every fingerprint ever queued
    pending: Dict[int, Tuple[str, Optional[dict]]] = field(default_factory=dict)  # id -> (fp, request)
    next_id: int = 0
    removed_bytes: int = 0    # a last line cut short by a kill, removed from the file
    unreadable: int = 0       # lines that are no journal record (skipped)


def read_journal(path: Path) -> JournalState:
    """Replay the journal; a last line without its newline (the kill cut it) is removed from the file."""
    state = JournalState()
    if not path.is_file():
        return state
    lines = CompleteLines(path)
    for raw in lines:
        try:
            record = json.loads(raw)
            if "q" in record:
                rid, fp = int(record["q"]), str(record["f"])
                state.seen.add(fp)
                state.pending[rid] = (fp, record.get("r"))
                state.next_id = max(state.next_id, rid + 1)
            else:
                for rid in record["d"]:
                    state.pending.pop(int(rid), None)
        except (ValueError, TypeError, KeyError, AttributeError):
            state.unreadable += 1
    state.removed_bytes = cut_file(path, lines.end)
    return state


class Journal:
    """Appends records; buffered, and flushed whenever finished requests are written (see the module)."""

    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.file: IO[bytes] = open(path, "ab")

    def queued(self, rid: int, fp: str, request: Optional[dict]) -> None:
        record: Dict[str, Any] = {"q": rid, "f": fp}
        if request is not None:
            record["r"] = request
        self._write(record)

    def finished(self, rids: List[int]) -> None:
        self._write({"d": rids})
        self.file.flush()

    def _write(self, record: dict) -> None:
        self.file.write(json.dumps(record, separators=(",", ":")).encode() + b"\n")

    def close(self) -> None:
        self.file.close()


def engine_in_progress(crawler) -> Optional[Set[Any]]:
    """The requests the engine holds (downloading, or their output still being handled), or None when
    this Scrapy does not say: the engine slot's ``inprogress`` set, the one place that knows when a
    request's items and follow-up requests are all handled (no signal marks that moment)."""
    slot = getattr(getattr(crawler, "engine", None), "_slot", None)
    inprogress = getattr(slot, "inprogress", None)
    return inprogress if isinstance(inprogress, set) else None


# ------------------------------------------------------------------ the scheduler

class ResumeScheduler(Scheduler):
    """Scrapy's scheduler with the journal above; without JOBDIR it is Scrapy's scheduler. The add-on
    sets it as SCHEDULER when JOBDIR is set, EDREW_RESUME is on and SCHEDULER is Scrapy's own."""

    journal: Optional[Journal] = None

    def open(self, spider):
        result = super().open(spider)
        jobdir = self.crawler.settings.get("JOBDIR") if self.crawler is not None else None
        self._inflight: Dict[Any, int] = {}
        self._earlier: Set[str] = set()
        self._warned_unjournaled = False
        self._warned_no_engine = False
        if not jobdir:
            return result
        from .resume import unclean_stop

        path = Path(jobdir) / JOURNAL
        state = read_journal(path)
        if state.removed_bytes:
            logger.warning("EDREW removed the last %d bytes of %s: a record cut short when the last crawl "
                           "stopped", state.removed_bytes, path)
        if state.unreadable:
            logger.warning("EDREW skipped %d unreadable line(s) of %s", state.unreadable, path)
        self._earlier = state.seen
        self._next_id = state.next_id
        self.journal = Journal(path)
        if unclean_stop(Path(jobdir)):
            self._requeue(state, spider)
        return result

    def _requeue(self, state: JournalState, spider) -> None:
        """Queue again what the journal holds as queued and not finished; one entry per fingerprint
        (a retry queued while its first attempt was in flight), the others written as finished."""
        latest: Dict[str, int] = {}
        for rid, (fp, _) in sorted(state.pending.items()):
            latest[fp] = rid
        superseded = [rid for rid, (fp, _) in state.pending.items() if latest[fp] != rid]
        requeued = lost = 0
        for rid in latest.values():
            data = state.pending[rid][1]
            request = None
            if data is not None:
                try:
                    request = decode_request(data, spider)
                except Exception as exc:  # a callback renamed since, a request class gone
                    logger.error("EDREW cannot queue again %s from the journal: %s: %s",
                                 data.get("url"), type(exc).__name__, exc)
            if request is None:
                lost += 1
                superseded.append(rid)
                continue
            request.meta[ID_KEY] = rid
            self.df.request_seen(request)
            self._push(request)
            requeued += 1
        if superseded:
            self.journal.finished(sorted(superseded))
        self.stats.inc_value(PREFIX + "resume/requeued", requeued)
        if lost:
            self.stats.inc_value(PREFIX + "resume/lost", lost)
        logger.warning("EDREW: the last crawl with this JOBDIR did not close cleanly; continuing it from "
                       "%s: %d request(s) queued again (those queued or in flight when it stopped), %d "
                       "finished ones not repeated%s", JOURNAL, requeued, len(state.seen) - len(latest),
                       f", {lost} that could not be rebuilt (edrew/resume/lost)" if lost else "")

    def _push(self, request) -> None:
        if self._dqpush(request):
            self.stats.inc_value("scheduler/enqueued/disk")
        else:
            self._mqpush(request)
            self.stats.inc_value("scheduler/enqueued/memory")
        self.stats.inc_value("scheduler/enqueued")

    def enqueue_request(self, request) -> bool:
        if self.journal is None:
            return super().enqueue_request(request)
        fp = self.crawler.request_fingerprinter.fingerprint(request).hex()
        if fp in self._earlier:
            if request.meta.get("is_start_request") and ID_KEY not in request.meta:
                # Scrapy re-issues start requests on every resume; an earlier run already queued this one.
                # (A retry or redirect of a start request carries its id: it is no re-issue.)
                self.stats.inc_value(PREFIX + "resume/start-requests-skipped")
                return False
            if not request.dont_filter:
                # requests.seen may have lost it with an unclean stop; the journal has not
                self.df.log(request, self.spider)
                return False
        rid = self._next_id
        request.meta[ID_KEY] = rid
        if not super().enqueue_request(request):
            return False
        self._next_id += 1
        data = encode_request(request, self.spider)
        if data is None:
            self.stats.inc_value(PREFIX + "resume/unjournaled")
            if not self._warned_unjournaled:
                self._warned_unjournaled = True
                logger.warning("EDREW cannot write %s to %s (its meta, cookies or cb_kwargs are not JSON): "
                               "after an unclean stop it is not queued again; further such requests are "
                               "counted in %sresume/unjournaled", request, JOURNAL, PREFIX)
        self.journal.queued(rid, fp, data)
        return True

    def next_request(self):
        self._write_finished()
        request = super().next_request()
        if request is not None and self.journal is not None and ID_KEY in request.meta:
            self._inflight[request] = request.meta[ID_KEY]
        return request

    def _write_finished(self) -> None:
        if not self._inflight:
            return
        inprogress = engine_in_progress(self.crawler)
        if inprogress is None:
            if not self._warned_no_engine:
                self._warned_no_engine = True
                logger.warning("EDREW cannot tell when a request is finished with this Scrapy version: "
                               "after an unclean stop every page queued will be downloaded again")
            return
        done = [request for request in self._inflight if request not in inprogress]
        if not done:
            return
        from .resume import flush_feed_files

        flush_feed_files(self.crawler)  # the items of these requests reach the disk first
        self.journal.finished(sorted(self._inflight.pop(request) for request in done))

    def close(self, reason: str):
        if self.journal is not None:
            self._write_finished()
            self.journal.close()
            self.journal = None
        return super().close(reason)
