"""Text from inputs made safe for where people read it: a terminal line, a spreadsheet cell.

A file name, a URL, an HTTP reason phrase or a page's text can hold control characters: ESC sequences
that clear or retitle a terminal, CR that overwrites a line, newlines that make one message look like
two, bidirectional overrides that reorder what is shown. `printable` escapes them in every message
built from input; `csv_cell` keeps page text from being read as a formula by spreadsheet programs.
"""
from __future__ import annotations

# C0 controls, DEL and C1 controls, as Python's repr writes them
_ESCAPES = {code: f"\\x{code:02x}" for code in (*range(0x20), *range(0x7F, 0xA0))}
_ESCAPES.update({ord("\n"): "\\n", ord("\r"): "\\r", ord("\t"): "\\t"})
# line and paragraph separators (str.splitlines breaks on them) and the bidirectional controls
_ESCAPES.update({code: f"\\u{code:04x}" for code in (0x061C, 0x200E, 0x200F, 0x2028, 0x2029,
                                                      *range(0x202A, 0x202F), *range(0x2066, 0x206A))})

# what may stay in a CSV cell: a quoted cell holds line breaks and tabs as they are
_CELL_ESCAPES = {code: text for code, text in _ESCAPES.items() if code not in (ord("\n"), ord("\t"))}
# a cell starting with one of these is a formula (or DDE call) in Excel, LibreOffice and Google Sheets;
# tab and CR too, which some of them skip before looking for one (OWASP's list)
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def printable(text: object) -> str:
    """`text` as one line with every control character escaped (\\x1b, \\r, \\n, \\u2028, ...)."""
    return str(text).translate(_ESCAPES)


def csv_cell(text: str) -> str:
    """A CSV cell's text that no spreadsheet program takes for a formula: control characters other than
    line breaks and tabs escaped, and a leading = + - @ tab or CR quoted with an apostrophe (shown as
    the text, not computed)."""
    if text.startswith(FORMULA_STARTS):
        text = "'" + text
    return text.translate(_CELL_ESCAPES)
