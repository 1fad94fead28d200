"""A node's text as a reader sees it: white space collapsed, invisible characters left out, entities
decoded; and the tests of text that is not blank."""
from __future__ import annotations

import html as _html

from .settings import INVISIBLE


def _visible_text(text: str) -> str:
    """`text` with white space runs made one space, trimmed, and the INVISIBLE characters left out."""
    # isascii() reads a flag CPython keeps on the string: most texts skip the regex's scan
    if not text.isascii() and INVISIBLE.search(text) is not None:
        text = INVISIBLE.sub("", text)
    return " ".join(text.split())


def _not_blank(text: str) -> bool:
    """Text for the CONTENT group and mixed content: anything but white space, a no-break space included."""
    return not text.isspace() or "\xa0" in text


def _text_in(segs: list) -> bool:
    """Text of its own (mixed content when it also has children)."""
    for s in segs:
        if type(s) is str and s and not s.isspace():
            return True
    return False


def _unescape(s: str) -> str:
    return _html.unescape(s) if "&" in s else s
