"""Read a CLI input: a file (gzip transparently), stdin, or an http(s) URL given explicitly."""
from __future__ import annotations

import gzip
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Optional, Tuple

MAX_FETCH_BYTES = 50 * 1024 * 1024


class SourceError(Exception):
    """An input that cannot be read: missing file, unreachable URL, ..."""


def read_source(source: str, timeout: float = 30.0) -> Tuple[bytes, Optional[str], Optional[str]]:
    """Return (body bytes, declared content type or None, URL for link resolution or None)."""
    if source.startswith(("http://", "https://")):
        request = urllib.request.Request(source, headers={"User-Agent": "edrew-scrapy"})
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                body = response.read(MAX_FETCH_BYTES)
                return body, response.headers.get("Content-Type"), response.geturl()
        except (urllib.error.URLError, OSError, ValueError) as exc:
            raise SourceError(f"{source}: cannot fetch: {exc}") from exc
    if source == "-":
        return sys.stdin.buffer.read(), None, None
    path = Path(source)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise SourceError(f"{source}: cannot read: {exc.strerror or exc}") from exc
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as exc:
            raise SourceError(f"{source}: broken gzip file: {exc}") from exc
    return raw, None, path.resolve().as_uri()
