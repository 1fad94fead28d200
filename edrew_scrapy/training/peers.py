"""Other extractors scored beside ours by `edrew evaluate`: resiliparse, rs-trafilatura, and a per-page cache.

Peers are benchmark tools, never run-time dependencies. resiliparse is a PyPI wheel installed with the
`eval` / `dev` extras; rs-trafilatura ships a CPython 3.12 wheel only, so it runs in a Python 3.12 of its own
(`scripts/rs-trafilatura-venv.sh` builds one) as a worker process that reads pages on its stdin and answers
their text. `check_peers` says, before any page is read, which named peer is missing and how to install it.

The worker runs each page under a time limit and an address-space limit (RLIMIT_AS): a page over either, or
one the library crashes on, raises `PeerFailed` with its kind, and the worker is restarted for the next page,
so that one pathological page can neither hang a run nor take the machine's memory. `evaluate_pages` and the
snippet check score such a page as an empty text and count it per peer and kind (`failure_counts`).

`PeerCache` keeps each peer's text per page on disk (keyed by the peer's name and version and the page's
bytes and URL), so that a second run over thousands of pages, say to measure a change of our own rules,
does not extract them again.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import select
import shutil
import signal
import struct
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Callable, Dict, Iterable, List, Optional

from ..data import LabelledPage, read_source

__all__ = ["FAILURES", "PeerFailed", "PeerMissing", "RS_PYTHON_ENV", "RsTrafilatura", "PeerCache", "check_peers",
           "describe_failures", "failure_counts", "peer_version", "resiliparse_extractor", "rs_trafilatura_python",
           "run_extractor"]

# where `edrew evaluate` finds a Python that can import rs_trafilatura when --rs-trafilatura-python is not given
RS_PYTHON_ENV = "EDREW_RS_TRAFILATURA_PYTHON"
_RS_DEFAULT = ".venv-rs/bin/python"  # what scripts/rs-trafilatura-venv.sh builds, in the working directory
_INSTALL = {
    "trafilatura": "pip install trafilatura (or this project's [eval] extra)",
    "readability": "pip install readability-lxml (or this project's [eval] extra)",
    "resiliparse": "pip install resiliparse (or this project's [eval] extra)",
    "rs-trafilatura": "it needs a Python 3.12 with rs-trafilatura installed: bash scripts/rs-trafilatura-venv.sh, "
                      f"then --rs-trafilatura-python .venv-rs/bin/python (or {RS_PYTHON_ENV})",
}
_MODULES = {"trafilatura": "trafilatura", "trafilatura-comments": "trafilatura", "readability": "readability",
            "resiliparse": "resiliparse"}
_DISTRIBUTIONS = {"trafilatura": "trafilatura", "trafilatura-comments": "trafilatura",
                  "readability": "readability-lxml", "resiliparse": "resiliparse"}


logger = logging.getLogger(__name__)

# how a peer can fail on a page: over its time limit, over its memory limit, or its worker died otherwise
FAILURES = ("timeout", "memory", "crash")


class PeerMissing(RuntimeError):
    """A peer named for a run cannot run here; the message says how to install it."""


class PeerFailed(RuntimeError):
    """A peer gave no text for a page: `kind` is one of FAILURES. The page counts as the peer's empty text."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


def run_extractor(extractor: Callable, lp: LabelledPage):
    """(text, prediction, failure) of an extractor on a page: a PeerFailed is an empty text and its kind."""
    try:
        text, pred = extractor(lp)
    except PeerFailed as exc:
        logger.warning("page %s scored as an empty text: %s", lp.page_id, exc)  # which page, and why
        return "", None, exc.kind
    return text, pred, ""


def failure_counts(results: Iterable) -> Dict[str, int]:
    """{"failed_timeout": n, "failed_memory": n, "failed_crash": n} over results that have a `failed` kind."""
    counts = {f"failed_{kind}": 0 for kind in FAILURES}
    for r in results:
        if r.failed:
            counts[f"failed_{r.failed}"] += 1
    return counts


def describe_failures(results: Iterable, timeout: float = 0, memory_mb: int = 0) -> List[str]:
    """One line per extractor that failed on a page: how many pages by time, memory and crash."""
    by: Dict[str, Dict[str, int]] = {}
    for r in results:
        if r.failed:
            by.setdefault(r.extractor, dict.fromkeys(FAILURES, 0))[r.failed] += 1
    limit_t = f" {timeout:g} s" if timeout else ""
    limit_m = f" {memory_mb} MB" if memory_mb else ""
    return [f"{name}: pages over --peer-timeout{limit_t}: {c['timeout']}, over --peer-memory-mb{limit_m}: "
            f"{c['memory']}, crashed its worker: {c['crash']}; each scored as an empty text" for name, c in by.items()]


def peer_version(name: str) -> str:
    """The installed version of a peer's Python distribution ("" when unknown)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(_DISTRIBUTIONS[name])
    except (KeyError, PackageNotFoundError):
        return ""


def check_peers(names: Iterable[str], rs_python: Optional[str] = None) -> Dict[str, str]:
    """{peer: version} for the named peers that are not ours (oracle, all-nodes: nothing to check); a
    PeerMissing naming each peer that cannot be imported (or whose worker Python cannot run it)."""
    import importlib.util

    found, missing = {}, []
    for name in names:
        if name == "rs-trafilatura":
            try:
                found[name] = RsTrafilatura.probe(rs_trafilatura_python(rs_python))
            except PeerMissing as exc:
                missing.append(str(exc))
        elif name in _MODULES:
            if importlib.util.find_spec(_MODULES[name]) is None:
                base = name.replace("-comments", "")
                missing.append(f"{name} is not installed: {_INSTALL[base]}")
            else:
                found[name] = peer_version(name)
    if missing:
        raise PeerMissing("; ".join(missing))
    return found


def _html(lp: LabelledPage) -> str:
    data = read_source(lp.meta["source"])
    return data.decode(lp.page.encoding or "utf-8", "replace")


def resiliparse_extractor(lp: LabelledPage):
    """resiliparse's main-content heuristics (`extract_plain_text(main_content=True)`, its other options as
    it ships them), on the page decoded as our serializer decoded it."""
    from resiliparse.extract.html2text import extract_plain_text
    from resiliparse.parse.html import HTMLTree

    try:
        return extract_plain_text(HTMLTree.parse(_html(lp)), main_content=True) or "", None
    except Exception:  # a page its parser refuses extracts nothing, as for readability
        return "", None


def rs_trafilatura_python(given: Optional[str] = None) -> str:
    """The Python that runs rs-trafilatura: `given`, else $EDREW_RS_TRAFILATURA_PYTHON, else .venv-rs/bin/python."""
    return given or os.environ.get(RS_PYTHON_ENV) or _RS_DEFAULT


# The worker, run by the 3.12 interpreter with the address-space limit in MB as its argument (0: none): per page
# a 4-byte length and a JSON header (the URL), then a 4-byte length and the page's bytes; it answers a 4-byte
# length and the UTF-8 text (empty when the library raised on the page). Its first line out is the library's
# version. Out of memory in Python it exits with _MEMORY_EXIT at once: the rest of the page may still be unread.
_MEMORY_EXIT = 86
_WORKER = r"""
import json, os, resource, struct, sys
from importlib.metadata import version
import rs_trafilatura
inp, out = sys.stdin.buffer, sys.stdout.buffer
out.write((version("rs-trafilatura") + "\n").encode()); out.flush()
limit = int(sys.argv[1]) * 1024 * 1024
if limit:  # set once the interpreter and the library are loaded: the limit is for the pages
    resource.setrlimit(resource.RLIMIT_AS, (limit, resource.getrlimit(resource.RLIMIT_AS)[1]))
def read(n):
    data = inp.read(n)
    return data if len(data) == n else None
while True:
    try:
        head = read(4)
        if head is None:
            break
        meta = json.loads(read(struct.unpack("<I", head)[0]))
        data = read(struct.unpack("<I", read(4))[0])
        try:
            result = rs_trafilatura.extract_bytes(data, url=meta.get("url") or None)
            text = (result.main_content or "").encode("utf-8")
        except MemoryError:
            raise
        except Exception:
            text = b""
        out.write(struct.pack("<I", len(text)) + text); out.flush()
    except MemoryError:
        os._exit(%d)
""" % _MEMORY_EXIT
_START_SECONDS = 60  # the interpreter and the library loading, before any page's limit applies


class RsTrafilatura:
    """rs_trafilatura.extract_bytes (the page's bytes and URL) in a worker process on `python`: an extractor.
    The worker starts on the first page and stops with close(). Each page gets `timeout` seconds and the worker
    `memory_mb` MB of address space (0: no limit); a page over either, or one the worker dies on, raises
    PeerFailed and the worker is restarted for the next page."""

    def __init__(self, python: str, timeout: float = 0, memory_mb: int = 0):
        self.python = python
        self.timeout = timeout
        self.memory_mb = memory_mb
        self.proc: Optional[subprocess.Popen] = None
        self.stderr = None
        self.version = ""

    @staticmethod
    def probe(python: str) -> str:
        """rs-trafilatura's version in `python`; a PeerMissing saying why it cannot run there."""
        exe = shutil.which(python) or (python if os.path.isfile(python) else None)
        if exe is None:
            raise PeerMissing(f"rs-trafilatura: no Python at {python}; {_INSTALL['rs-trafilatura']}")
        try:
            done = subprocess.run([exe, "-c", "from importlib.metadata import version; import rs_trafilatura; "
                                              "print(version('rs-trafilatura'))"],
                                  capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise PeerMissing(f"rs-trafilatura: {python} does not run ({exc}); {_INSTALL['rs-trafilatura']}") from None
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["no output"])[-1]
            raise PeerMissing(f"rs-trafilatura cannot be imported by {python} ({last}); {_INSTALL['rs-trafilatura']}")
        return done.stdout.strip()

    def _start(self) -> None:
        # its stderr in a file, not a pipe nobody reads (which could fill and stall it): read when it dies
        self.stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen([self.python, "-c", _WORKER, str(int(self.memory_mb or 0))],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr)
        line = b""
        try:
            while not line.endswith(b"\n"):
                byte = self._read(1, time.monotonic() + _START_SECONDS)
                if not byte:
                    break
                line += byte
        except TimeoutError:
            pass
        self.version = line.decode("utf-8", "replace").strip()
        if not self.version:
            self._kill()
            raise PeerMissing(f"the rs-trafilatura worker on {self.python} stopped before its first page")

    def _read(self, n: int, deadline: Optional[float]) -> bytes:
        """Up to n bytes of the worker's answer, fewer only at its end; a TimeoutError past the deadline."""
        fd, chunks, got = self.proc.stdout.fileno(), [], 0
        while got < n:
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([fd], [], [], left)[0]:
                    raise TimeoutError
            chunk = os.read(fd, n - got)
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
        return b"".join(chunks)

    def extract(self, data: bytes, url: Optional[str]) -> str:
        if self.proc is None:
            self._start()
        meta = json.dumps({"url": url or ""}).encode("utf-8")
        deadline = time.monotonic() + self.timeout if self.timeout else None
        try:
            try:  # the worker reads the whole page before it works on it: the write cannot wait on the page
                self.proc.stdin.write(struct.pack("<I", len(meta)) + meta + struct.pack("<I", len(data)) + data)
                self.proc.stdin.flush()
            except BrokenPipeError:
                pass
            head = self._read(4, deadline)
            if len(head) == 4:
                text = self._read(struct.unpack("<I", head)[0], deadline)
                return text.decode("utf-8", "replace")
        except TimeoutError:
            self._kill()
            raise PeerFailed("timeout", f"rs-trafilatura: no answer within {self.timeout:g} s") from None
        kind, why = self._died()
        raise PeerFailed(kind, f"rs-trafilatura: its worker died on the page ({why})")

    def _died(self):
        """(kind, why) of a worker that stopped mid-page: out of memory (Python's MemoryError, or Rust's abort
        on a failed allocation), else a crash; the worker is gone and restarts on the next page."""
        code = self.proc.wait()
        self.stderr.seek(0, os.SEEK_END)
        self.stderr.seek(max(0, self.stderr.tell() - 4096))
        tail = self.stderr.read().decode("utf-8", "replace")
        self._kill()
        lines = tail.strip().splitlines() or [f"exit status {code}"]
        cues = [line for line in lines if "memory allocation of" in line or "MemoryError" in line]
        if code == _MEMORY_EXIT or (cues and (code == -signal.SIGABRT or "MemoryError" in cues[-1])):
            return "memory", f"over --peer-memory-mb {self.memory_mb}" + (f": {cues[-1][:200]}" if cues else "")
        return "crash", lines[-1][:200]

    def _kill(self) -> None:
        if self.proc is not None:
            proc, self.proc = self.proc, None
            proc.kill()
            proc.wait()
            for stream in (proc.stdin, proc.stdout):
                try:
                    stream.close()
                except OSError:
                    pass
        if self.stderr is not None:
            self.stderr.close()
            self.stderr = None

    def __call__(self, lp: LabelledPage):
        return self.extract(read_source(lp.meta["source"]), lp.url), None

    def close(self) -> None:
        if self.proc is not None:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                pass
        self._kill()


class PeerCache:
    """Each peer's text per page under `root/NAME-VERSION/`, keyed by the sha1 of the page's bytes and URL;
    `wrap` turns an extractor into one that reads the cache first and writes what it extracts."""

    def __init__(self, root):
        self.root = Path(root)
        self.hits = 0
        self.misses = 0

    def wrap(self, name: str, version: str, extractor: Callable) -> Callable:
        folder = self.root / (f"{name}-{version}" if version else name)

        def run(lp: LabelledPage):
            digest = hashlib.sha1(read_source(lp.meta["source"]) + b"\0" + (lp.url or "").encode()).hexdigest()
            path = folder / digest[:2] / f"{digest}.txt"
            if path.is_file():
                self.hits += 1
                return path.read_text(encoding="utf-8"), None
            self.misses += 1
            text, pred = extractor(lp)  # a PeerFailed passes through: nothing kept, so a later run tries again
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".tmp{os.getpid()}")
            tmp.write_text(text, encoding="utf-8", errors="replace")
            os.replace(tmp, path)  # a run stopped mid-write leaves no half text behind
            return text, pred
        return run
