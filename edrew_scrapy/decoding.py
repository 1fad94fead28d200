"""Bytes -> str for HTML: BOM, then declared (HTTP header) encoding, then <meta charset>, then UTF-8,
then windows-1252. Never raises on bytes; says when the bytes do not look like text at all."""
from __future__ import annotations

import codecs
import re
from typing import Optional, Tuple

_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF32_LE, "utf-32-le"),  # before UTF-16 LE: its BOM starts with UTF-16 LE's
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
# <meta charset="x"> or <meta http-equiv=Content-Type content="text/html; charset=x">, first 4 KiB
_META_CHARSET = re.compile(rb"""<meta[^>]{0,512}?charset\s*=\s*["']?\s*([A-Za-z0-9._:-]{1,40})""", re.I)
_HEADER_CHARSET = re.compile(r"""charset\s*=\s*["']?\s*([A-Za-z0-9._:-]{1,40})""", re.I)
# Control bytes that never occur in text documents (tab, LF, FF, CR and ESC excluded).
_BINARY_BYTES = bytes(b for b in range(32) if b not in (9, 10, 12, 13, 27))
_BINARY_TABLE = bytes.maketrans(b"", b"")
_NOT_WEB_CODECS = frozenset({"idna", "punycode", "undefined", "unicode-escape", "raw-unicode-escape",
                             "utf-7", "mbcs", "oem", "palmos", "cp65001"})
_CONTROL_CHARS = re.compile(r"[\x00-\x08\x0b\x0e-\x1a\x1c-\x1f\ufffd]")


def normalise_encoding(name: Optional[str]) -> Optional[str]:
    """A Python codec name for a declared charset, or None when unknown. Latin-1 and ASCII labels
    mean windows-1252 on the web (WHATWG Encoding Standard)."""
    if not name:
        return None
    name = name.strip().strip("\"'").lower()
    if name in ("iso-8859-1", "latin1", "latin-1", "us-ascii", "ascii", "iso8859-1", "l1"):
        return "cp1252"
    try:
        info = codecs.lookup(name)
    except (LookupError, ValueError, TypeError):
        return None
    # Python knows codecs no web page can be in (base64, rot13, zlib, idna, ...): browsers ignore
    # such labels, and so do we (WHATWG Encoding: an unknown label means the default).
    if not getattr(info, "_is_text_encoding", True) or info.name in _NOT_WEB_CODECS:
        return None
    return info.name


def charset_from_content_type(content_type: Optional[str]) -> Optional[str]:
    if not content_type:
        return None
    m = _HEADER_CHARSET.search(content_type)
    return m.group(1) if m else None


def looks_binary(data: bytes) -> bool:
    """True when a sample has many control bytes: images, archives, PDFs served as text/html."""
    sample = data[:8192]
    if not sample:
        return False
    bad = len(sample) - len(sample.translate(_BINARY_TABLE, _BINARY_BYTES))
    return bad > max(8, len(sample) // 100)


def looks_binary_text(text: str) -> bool:
    """The str version of looks_binary: control characters (or U+FFFD left by a decoder that met
    binary bytes) in more than 1 % of a sample."""
    sample = text[:8192]
    bad = len(_CONTROL_CHARS.findall(sample))
    return bad > max(8, len(sample) // 100)


def decode_html(data: bytes, declared: Optional[str] = None) -> Tuple[str, str]:
    """Decode bytes, returning (text, codec name). Invalid sequences become U+FFFD."""
    for bom, codec in _BOMS:
        if data.startswith(bom):
            return data[len(bom):].decode(codec, errors="replace"), codec
    candidates = [normalise_encoding(declared)]
    m = _META_CHARSET.search(data[:4096])
    if m:
        candidates.append(normalise_encoding(m.group(1).decode("ascii", "replace")))
    for codec in candidates:
        # UTF-16/32 without a BOM in an HTML header is almost always a mislabel of an ASCII page.
        if codec and not codec.startswith(("utf-16", "utf-32", "utf_16", "utf_32")):
            try:
                return data.decode(codec), codec
            except UnicodeDecodeError:
                if codec != "utf-8":  # a single-byte legacy charset: keep it, replace the odd byte
                    return data.decode(codec, errors="replace"), codec
            except (LookupError, ValueError, TypeError):  # a codec that cannot decode web bytes
                continue
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        text = data.decode("utf-8", errors="replace")
        # A UTF-8 page with a few broken bytes stays UTF-8; a legacy page fails on most non-ASCII.
        if text.count("\ufffd") * 200 < len(text):
            return text, "utf-8"
        return data.decode("cp1252", errors="replace"), "cp1252"
