"""Other extractors scored beside ours by `edrew evaluate`: resiliparse, rs-trafilatura, and a per-page cache.

Peers are benchmark tools, never run-time dependencies. resiliparse is a PyPI wheel installed with the
`eval` / `dev` extras; rs-trafilatura ships a CPython 3.12 wheel only, so it runs in a Python 3.12 of its own
(`scripts/rs-trafilatura-venv.sh` builds one) as a worker process that reads pages on its stdin and answers
their text. `check_peers` says, before any page is read, which named peer is missing and how to install it.

`PeerCache` keeps each peer's text per page on disk (keyed by the peer's name and version and the page's
bytes and URL), so that a second run over thousands of pages, say to measure a change of our own rules,
does not extract them again.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import struct
import subprocess
from pathlib import Path
from typing import Callable, Dict, Iterable, Optional

from ..data import LabelledPage, read_source

__all__ = ["PeerMissing", "RS_PYTHON_ENV", "RsTrafilatura", "PeerCache", "check_peers", "peer_version",
           "resiliparse_extractor", "rs_trafilatura_python"]

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


class PeerMissing(RuntimeError):
    """A peer named for a run cannot run here; the message says how to install it."""


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


# The worker, run by the 3.12 interpreter: per page a 4-byte length and a JSON header (the URL), then a
# 4-byte length and the page's bytes; it answers a 4-byte length and the UTF-8 text (empty when the library
# raised on the page). Its first line out is the library's version.
_WORKER = r"""
import json, struct, sys
from importlib.metadata import version
import rs_trafilatura
inp, out = sys.stdin.buffer, sys.stdout.buffer
out.write((version("rs-trafilatura") + "\n").encode()); out.flush()
def read(n):
    data = inp.read(n)
    return data if len(data) == n else None
while True:
    head = read(4)
    if head is None:
        break
    meta = json.loads(read(struct.unpack("<I", head)[0]))
    data = read(struct.unpack("<I", read(4))[0])
    try:
        result = rs_trafilatura.extract_bytes(data, url=meta.get("url") or None)
        text = (result.main_content or "").encode("utf-8")
    except Exception:
        text = b""
    out.write(struct.pack("<I", len(text)) + text); out.flush()
"""


class RsTrafilatura:
    """rs_trafilatura.extract_bytes (the page's bytes and URL) in a worker process on `python`: an extractor.
    The worker starts on the first page and stops with close()."""

    def __init__(self, python: str):
        self.python = python
        self.proc: Optional[subprocess.Popen] = None
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
        self.proc = subprocess.Popen([self.python, "-c", _WORKER], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.version = self.proc.stdout.readline().decode().strip()
        if not self.version:
            raise PeerMissing(f"the rs-trafilatura worker on {self.python} stopped before its first page")

    def extract(self, data: bytes, url: Optional[str]) -> str:
        if self.proc is None:
            self._start()
        meta = json.dumps({"url": url or ""}).encode("utf-8")
        try:
            self.proc.stdin.write(struct.pack("<I", len(meta)) + meta + struct.pack("<I", len(data)) + data)
            self.proc.stdin.flush()
            head = self.proc.stdout.read(4)
        except BrokenPipeError:
            head = b""
        if len(head) < 4:  # the worker died on this page (a crash in the library): restart it for the next one
            self.close()
            return ""
        return self.proc.stdout.read(struct.unpack("<I", head)[0]).decode("utf-8", "replace")

    def __call__(self, lp: LabelledPage):
        return self.extract(read_source(lp.meta["source"]), lp.url), None

    def close(self) -> None:
        if self.proc is not None:
            proc, self.proc = self.proc, None
            try:
                proc.stdin.close()
            except OSError:
                pass
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


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
            text, pred = extractor(lp)
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".tmp{os.getpid()}")
            tmp.write_text(text, encoding="utf-8", errors="replace")
            os.replace(tmp, path)  # a run stopped mid-write leaves no half text behind
            return text, pred
        return run
