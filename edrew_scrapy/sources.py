"""Read a CLI input: a file (gzip transparently), stdin, or an http(s) URL given explicitly.

Every way an input can fail ends in SourceError with a one-line message, so that a command can report
it and go on with the next input.
"""
from __future__ import annotations

import http.client
import math
import mimetypes
import re
import sys
import time
import urllib.error
import urllib.request
import zlib
from pathlib import Path
from typing import BinaryIO, Optional, Tuple

MAX_FETCH_BYTES = 50 * 1024 * 1024  # any input, fetched or read, and after gzip
_CHUNK = 64 * 1024

_HTML_TYPES = frozenset({"text/html", "application/xhtml+xml", "application/vnd.wap.xhtml+xml"})
# Servers that do not know what they send say one of these; the body decides then.
_GENERIC_TYPES = frozenset({"", "application/octet-stream", "binary/octet-stream", "text/plain",
                            "application/unknown", "application/x-unknown", "unknown/unknown"})
# An HTML document starts (after a BOM, blanks and comments) with a doctype or one of these tags.
_SNIFF = re.compile(rb"\A(?:\xef\xbb\xbf)?\s*(?:<!--.*?-->\s*|<\?xml[^>]*>\s*)*"
                    rb"<(?:!doctype\s+html|html|head|body|meta|title)[\s>/]", re.I | re.S)


class SourceError(Exception):
    """An input that cannot be read: missing file, unreachable URL, cut-short download, ..."""


def is_html(content_type: Optional[str], body: bytes) -> bool:
    """HTML by its Content-Type, or by its first bytes when the type is missing or generic (the rule of
    both the CLI's URL inputs and the Scrapy add-on)."""
    mime = (content_type or "").split(";", 1)[0].strip().lower()
    if mime in _HTML_TYPES:
        return True
    return mime in _GENERIC_TYPES and _SNIFF.match(body[:4096]) is not None


# Python's own table only: the system's (/etc/mime.types) differs between machines and can name saved
# pages' extensions (.php as application/x-httpd-php), which would skip them
_NAMED_TYPES = mimetypes.MimeTypes(filenames=())


def type_from_name(source: str) -> Optional[str]:
    """The content type a local file's name says (".json" -> application/json; ".html.gz" -> text/html),
    or None when its extension says nothing (".php", none): a file has no Content-Type, and without this
    a JSON or CSS file would be scored as a page although the same file served over HTTP is skipped."""
    if source == "-" or source.startswith(("http://", "https://")):
        return None
    return _NAMED_TYPES.guess_type(source, strict=False)[0]


def read_source(source: str, timeout: float = 30.0) -> Tuple[bytes, Optional[str], Optional[str]]:
    """Return (body bytes, declared content type or None, URL for link resolution or None).

    A URL must be fetched whole within `timeout` seconds; a file or stdin is read as is. Inputs larger
    than MAX_FETCH_BYTES (also once gunzipped) are refused rather than cut short."""
    if source.startswith(("http://", "https://")):
        return _fetch(source, timeout)
    if source == "-":
        if sys.stdin is None:  # started with stdin closed (`<&-`, some daemons)
            raise SourceError("-: cannot read: standard input is closed")
        return _gunzip(_read_capped(sys.stdin.buffer, source), source), None, None
    path = Path(source)
    try:
        with path.open("rb") as fh:
            raw = _read_capped(fh, source)
    except OSError as exc:
        raise SourceError(f"{source}: cannot read: {exc.strerror or exc}") from exc
    return _gunzip(raw, source), None, path.resolve().as_uri()


def _fetch(source: str, timeout: float) -> Tuple[bytes, Optional[str], Optional[str]]:
    if not (timeout > 0 and math.isfinite(timeout)):
        raise SourceError(f"{source}: the timeout must be a positive number of seconds, not {timeout}")
    deadline = time.monotonic() + timeout
    request = urllib.request.Request(source, headers={"User-Agent": "edrew-scrapy"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            chunks, size = [], 0
            # read1: at most one socket read each, so that a server that trickles bytes cannot hold the
            # fetch past its deadline (the socket timeout alone bounds each read, not the whole body)
            while True:
                chunk = response.read1(_CHUNK)
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
                if size > MAX_FETCH_BYTES:
                    raise _too_large(source)
                if time.monotonic() > deadline:
                    raise SourceError(f"{source}: not fetched whole within {timeout:g} s")
            if response.length:  # Content-Length promised more than the connection gave
                raise SourceError(f"{source}: cut short: {size} bytes received, "
                                  f"{size + response.length} announced")
            body = b"".join(chunks)
            coding = (response.headers.get("Content-Encoding") or "").strip().lower()
            if coding in ("gzip", "x-gzip", "deflate"):
                # We ask for no encoding, but some servers compress anyway.
                body = _decompress(body, coding, source)
            return body, response.headers.get("Content-Type"), response.geturl()
    except SourceError:
        raise
    except (urllib.error.URLError, OSError, ValueError, http.client.HTTPException) as exc:
        # HTTPException: a reply that is not HTTP, too many or too long headers, a broken chunk
        raise SourceError(f"{source}: cannot fetch: {type(exc).__name__}: {exc}"
                          if not str(exc) or isinstance(exc, http.client.HTTPException)
                          else f"{source}: cannot fetch: {exc}") from exc


def _too_large(source: str, how: str = "") -> SourceError:
    return SourceError(f"{source}: larger than the limit of {MAX_FETCH_BYTES:,} bytes{how}")


def _read_capped(fh: BinaryIO, source: str) -> bytes:
    data = fh.read(MAX_FETCH_BYTES + 1)
    if len(data) > MAX_FETCH_BYTES:
        raise _too_large(source)
    return data


def _gunzip(raw: bytes, source: str) -> bytes:
    if raw[:2] != b"\x1f\x8b":
        return raw
    return _decompress(raw, "gzip", source)


def _decompress(raw: bytes, coding: str, source: str) -> bytes:
    """gzip (every member of a multi-member file) or zlib data, with a cap: a small bomb must not fill
    the memory."""
    out, rest, limit = [], raw, MAX_FETCH_BYTES
    try:
        while rest:
            d = zlib.decompressobj(32 + zlib.MAX_WBITS)  # 32: a gzip or a zlib header, whichever it has
            part = d.decompress(rest, limit + 1)
            limit -= len(part)
            if limit < 0:
                raise _too_large(source, " once decompressed")
            if not d.eof:
                raise SourceError(f"{source}: broken {coding} data: it ends before its end marker")
            out.append(part)
            rest = d.unused_data
            if rest[:2] != b"\x1f\x8b":  # trailing bytes that start no other member: ignored, as gzip(1) does
                break
        return b"".join(out)
    except zlib.error as exc:
        raise SourceError(f"{source}: broken {coding} data: {exc}") from exc
