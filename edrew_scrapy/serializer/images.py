"""Image URLs: resolved against the page's URL (or its <base href>), with the schemes a page may have, and
the plain URLs whose urljoin result is known without urljoin."""
from __future__ import annotations

import re
from typing import Optional
from urllib.parse import urljoin

from .settings import _SHARED_MAX_CHARS, _SHARED_MAX_ENTRIES

# A URL's scheme as browsers read it: after leading C0 controls and spaces, with tabs and line breaks
# anywhere removed ("java\tscript:" is javascript:).
_SCHEME = re.compile(r"[\x00-\x20]*([A-Za-z][A-Za-z0-9+.\-]*):")
_URL_NOISE = re.compile(r"[\t\n\r]")


def _scheme(url: Optional[str]) -> Optional[str]:
    match = _SCHEME.match(_URL_NOISE.sub("", url or ""))
    return match.group(1).lower() if match else None


def _image_schemes(page_url: Optional[str]) -> frozenset:
    """The schemes an image URL may have on a page at `page_url`: http(s), and file: too on a page read
    from a file (the CLI's saved pages, whose images are files beside them). javascript:, data: and the
    rest never: a hostile <base> makes any of them absolute, and a Scrapy FilesPipeline fed file: URLs
    from a web page would read local files."""
    return frozenset({"http", "https", "file"} if _scheme(page_url) == "file" else {"http", "https"})


def _web_image(src: str, schemes: frozenset) -> bool:
    """`src` has one of `schemes`, or none (relative, left so only when it could not be resolved)."""
    scheme = _scheme(src)
    return scheme is None or scheme in schemes


# An image URL whose urljoin result is known without urljoin: http(s) with an ASCII host, a path and a
# non-empty query of URL characters, no ";" (path params), "#" or white space, which urljoin's parse and
# unparse change. Group 1 the scheme, 2 "//host[:port]", 3 the path. Two thirds of image URLs on WCXB are
# absolute and most others rooted ("/img/a.png"); urljoin is ~7 us each.
_PLAIN_IMAGE_URL = re.compile(
    r"(https?:)?(//[A-Za-z0-9.-]++(?::[0-9]++)?)?(/[\w\-.~!$&'()*+,=:@%/]*+)?(?:\?[\w\-.~!$&'()*+,;=:@%/?]++)?\Z",
    re.ASCII)  # possessive: no character of one part can start the next, and a hostile src costs one scan
_PLAIN_ROOT = re.compile(r"https?://[A-Za-z0-9.-]++(?::[0-9]++)?/\Z")
_ORIGINS: dict = {}  # base URL -> "scheme://host[:port]" as urljoin writes it, "" where it is not plain


def _plain_image_url(base: str, src: str) -> Optional[str]:
    """urljoin(base, src) for the plain URLs above, or None where urljoin has to decide: an absolute one
    as written (urljoin unparses it to the same text), a protocol-relative or rooted one (with no dot
    segment to remove) after the base's scheme or origin."""
    m = _PLAIN_IMAGE_URL.match(src)
    if m is None:
        return None
    scheme, host, path = m.groups()
    if scheme:
        return src if host else None
    origin = _ORIGINS.get(base)
    if origin is None:
        root = _resolve(base, "/")
        origin = root[:-1] if root and _PLAIN_ROOT.match(root) else ""
        if len(base) <= _SHARED_MAX_CHARS:
            if len(_ORIGINS) >= _SHARED_MAX_ENTRIES:
                _ORIGINS.clear()
            _ORIGINS[base] = origin
    if not origin:
        return None
    if host:
        return origin[: origin.index(":") + 1] + src
    if path and path[1:2] != "/" and "/." not in path:
        return origin + src
    return None


def _resolve(base: str, ref: str) -> Optional[str]:
    """`ref` resolved against `base`, or None: urljoin raises ValueError on a malformed host
    ("http://[x/"), and one bad src or base href must not cost the page its text."""
    try:
        return urljoin(base, ref)
    except ValueError:
        return None


# (base URL, src as written, the schemes allowed) -> the image URL kept, "" for none: urljoin is ~10 us an
# image, and sites repeat their logos, icons and placeholder images on every page
_IMAGE_URLS: dict = {}
