"""Read a CLI input: a file (gzip transparently), stdin, or an http(s) URL given explicitly.

Every way an input can fail ends in SourceError with a one-line message, so that a command can report
it and go on with the next input. A URL is fetched within one deadline for the whole exchange (connection,
TLS handshake, status line, headers and body, every redirect included); a reply cut before the end of its
headers is an error, and only http(s) redirects are followed, at most MAX_REDIRECTS of them.
"""
from __future__ import annotations

import functools
import http.client
import io
import math
import mimetypes
import re
import socket
import sys
import time
import urllib.error
import urllib.request
import zlib
from pathlib import Path
from typing import BinaryIO, List, NamedTuple, Optional, Tuple
from urllib.parse import urljoin, urlsplit

MAX_FETCH_BYTES = 50 * 1024 * 1024  # any input, fetched or read, and after gzip
MAX_REDIRECTS = 5  # redirects a fetch follows (browsers allow 20; a page moved more than 5 times is rare)
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


class Input(NamedTuple):
    """What read_input gives: the body, the declared content type (None for files), the URL links resolve
    against (the last one after redirects; a file: URI for a file), and every URL it was redirected to."""
    data: bytes
    content_type: Optional[str]
    url: Optional[str]
    redirects: Tuple[str, ...] = ()


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
    """Return (body bytes, declared content type or None, URL for link resolution or None): read_input
    without the redirects."""
    return read_input(source, timeout)[:3]


def read_input(source: str, timeout: float = 30.0) -> Input:
    """Read a file, stdin ("-") or an http(s) URL.

    A URL must be fetched whole within `timeout` seconds; a file or stdin is read as is. Inputs larger
    than MAX_FETCH_BYTES (also once gunzipped) are refused rather than cut short."""
    if source.startswith(("http://", "https://")):
        return _fetch(source, timeout)
    if source == "-":
        if sys.stdin is None:  # started with stdin closed (`<&-`, some daemons)
            raise SourceError("-: cannot read: standard input is closed")
        return Input(_gunzip(_read_capped(sys.stdin.buffer, source), source), None, None)
    path = Path(source)
    try:
        with path.open("rb") as fh:
            raw = _read_capped(fh, source)
    except OSError as exc:
        raise SourceError(f"{source}: cannot read: {exc.strerror or exc}") from exc
    return Input(_gunzip(raw, source), None, path.resolve().as_uri())


# --- fetching a URL within one deadline ---------------------------------------------------------------
# urllib (kept for its proxy support) with connections whose every socket operation gets only the time
# left: a socket timeout alone bounds each read, and a server sending one header line a second would
# hold the fetch for as long as it likes.

class _Refused(Exception):
    """A redirect the fetch does not follow; the message says why."""


class _CutHeaders(http.client.HTTPException):
    pass


def _time_left(deadline: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError("the fetch's deadline passed")
    return left


class _DeadlineIO(io.RawIOBase):
    """The socket's reads, each given only the time left before `deadline`."""

    def __init__(self, sock: socket.socket, deadline: float) -> None:
        super().__init__()
        self._sock = sock
        self._raw = sock.makefile("rb", buffering=0)  # holds the socket open as http.client's file does
        self._deadline = deadline

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        self._sock.settimeout(_time_left(self._deadline))
        return self._raw.readinto(buffer)

    def close(self) -> None:
        self._raw.close()
        super().close()


class _HeaderReader(io.BufferedReader):
    """Remembers the last line read: the header block is whole only when it ended with an empty line
    (http.client takes the end of the connection for the end of the headers)."""

    last_line = b""

    def readline(self, size=-1):
        self.last_line = super().readline(size)
        return self.last_line


class _DeadlineResponse(http.client.HTTPResponse):
    def __init__(self, sock, *args, deadline: float, **kwargs) -> None:
        super().__init__(sock, *args, **kwargs)
        self.fp.close()  # the file http.client made; this one keeps to the deadline
        self.fp = _HeaderReader(_DeadlineIO(sock, deadline))

    def begin(self) -> None:
        super().begin()
        if self.fp.last_line not in (b"\r\n", b"\n"):
            raise _CutHeaders("the reply ended before its headers did")


class _DeadlineConnection:
    """Mixin for http.client's connections: connect, TLS handshake and response within the deadline (an
    SSL socket's timeout bounds its whole handshake; the socket's is reset to what is left after connect)."""

    def __init__(self, *args, deadline: float, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._deadline = deadline
        self.response_class = functools.partial(_DeadlineResponse, deadline=deadline)
        self._create_connection = self._connect

    def _connect(self, address, timeout=None, source_address=None) -> socket.socket:
        sock = socket.create_connection(address, _time_left(self._deadline), source_address)
        sock.settimeout(_time_left(self._deadline))
        return sock


class _HTTPConnection(_DeadlineConnection, http.client.HTTPConnection):
    pass


class _HTTPSConnection(_DeadlineConnection, http.client.HTTPSConnection):
    pass


class _HTTPHandler(urllib.request.HTTPHandler):
    def __init__(self, deadline: float) -> None:
        super().__init__()
        self._deadline = deadline

    def http_open(self, req):
        return self.do_open(functools.partial(_HTTPConnection, deadline=self._deadline), req)


class _HTTPSHandler(urllib.request.HTTPSHandler):
    def __init__(self, deadline: float) -> None:
        super().__init__()
        self._deadline = deadline

    def https_open(self, req):
        return self.do_open(functools.partial(_HTTPSConnection, deadline=self._deadline), req,
                            context=self._context)


class _Redirects(urllib.request.HTTPRedirectHandler):
    """Follows http(s) redirects only, at most MAX_REDIRECTS, and keeps the URLs it went to."""

    def __init__(self) -> None:
        super().__init__()
        self.chain: List[str] = []

    def http_error_302(self, req, fp, code, msg, headers):
        # checked before urllib's own rule, which lets ftp: through and words a refusal as an HTTP error
        location = headers.get("location") or headers.get("uri")
        if location:
            target = urljoin(req.full_url, location.strip())
            if urlsplit(target).scheme.lower() not in ("http", "https"):
                raise _Refused(f"redirected to {target}: only http and https redirects are followed")
        return super().http_error_302(req, fp, code, msg, headers)

    http_error_301 = http_error_303 = http_error_307 = http_error_308 = http_error_302

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        if len(self.chain) >= MAX_REDIRECTS:
            raise _Refused(f"more than {MAX_REDIRECTS} redirects (the last to {newurl})")
        self.chain.append(newurl)
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def _fetch(source: str, timeout: float) -> Input:
    if not (timeout > 0 and math.isfinite(timeout)):
        raise SourceError(f"{source}: the timeout must be a positive number of seconds, not {timeout}")
    deadline = time.monotonic() + timeout
    redirects = _Redirects()
    opener = urllib.request.build_opener(_HTTPHandler(deadline), _HTTPSHandler(deadline), redirects)
    request = urllib.request.Request(source, headers={"User-Agent": "edrew-scrapy"})
    try:
        with opener.open(request, timeout=timeout) as response:
            chunks, size = [], 0
            # read1: at most one socket read each, every read bounded by the time left (_DeadlineIO)
            while True:
                chunk = response.read1(_CHUNK)
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
                if size > MAX_FETCH_BYTES:
                    raise _too_large(source)
            if response.length:  # Content-Length promised more than the connection gave
                raise SourceError(f"{source}: cut short: {size} bytes received, "
                                  f"{size + response.length} announced")
            body = b"".join(chunks)
            coding = (response.headers.get("Content-Encoding") or "").strip().lower()
            if coding in ("gzip", "x-gzip", "deflate"):
                # We ask for no encoding, but some servers compress anyway.
                body = _decompress(body, coding, source)
            return Input(body, response.headers.get("Content-Type"), response.geturl(), tuple(redirects.chain))
    except SourceError:
        raise
    except _Refused as exc:
        raise SourceError(f"{source}: {exc}") from None
    except (urllib.error.URLError, OSError, ValueError, http.client.HTTPException) as exc:
        if time.monotonic() >= deadline:
            raise SourceError(f"{source}: not fetched whole within {timeout:g} s") from None
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
