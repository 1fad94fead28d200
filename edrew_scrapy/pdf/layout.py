"""PDF bytes -> text lines with their position, font size and boldness, page by page, in reading order.

pdfminer.six does the layout (characters -> lines -> text boxes); this module orders the boxes by columns
(a box that spans the page's middle ends a band; inside a band, the left column is read before the right
one) and keeps, per line, what the structure rules need. Errors are `PdfError` with a short `reason`
(the crawl's `edrew/pdf/skipped/<reason>` stat).
"""
from __future__ import annotations

import io
import re
import statistics
import unicodedata
from dataclasses import dataclass, field
from typing import List, Optional

# How far into the body the %PDF- header may start (the PDF spec's readers accept leading junk).
MAGIC_WINDOW = 1024
# Characters that XML 1.0 cannot hold; a PDF's text may carry them (control codes, broken mappings).
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")
# Bold faces by name, TeX's Computer Modern ones included (CMBX10, CMB10, CMSSBX10).
_BOLD = re.compile(r"bold|black|heavy|semibold|demi|[.,-]b$|(?:^|\+)cm(?:ss)?bx?\d|bx\d*$", re.IGNORECASE)
_ITALIC = re.compile(r"ital|oblique|(?:^|\+)cm(?:ti|sl|bxti|mi)\d|-it$|[.,-]i$", re.IGNORECASE)
# TeX sets accents as characters of their own: spacing accent -> combining accent.
_COMBINING = {"´": "\u0301", "`": "\u0300", "¨": "\u0308", "ˆ": "\u0302", "˜": "\u0303", "ˇ": "\u030c",
              "˘": "\u0306", "˙": "\u0307", "˚": "\u030a", "˝": "\u030b", "¯": "\u0304", "¸": "\u0327",
              "˛": "\u0328"}
_SPACING_ACCENT = re.compile("[´`¨ˆ˜ˇ˘˙˚˝¯¸˛]")
_ACCENT_BEFORE = re.compile(r" ?([´`¨ˆ˜ˇ˘˙˚˝¯])([A-Za-zıȷ])")
_ACCENT_AFTER = re.compile(r"([A-Za-z]) ?([¸˛])")
_DOTLESS = {"ı": "i", "ȷ": "j"}
_CID = re.compile(r"\(cid:\d+\)")
_LIGATURES = {"\ufb00": "ff", "\ufb01": "fi", "\ufb02": "fl", "\ufb03": "ffi", "\ufb04": "ffl", "\ufb05": "st",
              "\ufb06": "st"}


class PdfError(ValueError):
    """A PDF that gives no text: `reason` is one of not-pdf, encrypted, broken, no-text."""

    def __init__(self, reason: str, message: str):
        super().__init__(message)
        self.reason = reason


@dataclass
class Line:
    text: str
    x0: float
    x1: float
    top: float  # distance from the page's top edge
    bottom: float
    size: float  # the median font size of its characters
    bold: bool  # most of its characters are in a bold face
    page: int  # 0-based
    box: int  # the pdfminer text box it came from (unique across the document)
    page_height: float = 0.0
    # the line's opening words when they are set in bold or italic and the rest is not (a run-in heading:
    # "1) Method:" in IEEEtran, a bold "Method" in LNCS); the whole text when all of it is bold or italic
    lead: str = ""
    italic: bool = False  # most of its characters are in an italic or slanted face


@dataclass
class Page:
    number: int
    width: float
    height: float
    lines: List[Line] = field(default_factory=list)


@dataclass
class Document:
    pages: List[Page]
    metadata: dict  # the PDF's Info dictionary, decoded to str values

    @property
    def lines(self) -> List[Line]:
        return [line for page in self.pages for line in page.lines]


def is_pdf(data: bytes) -> bool:
    """True when the body starts (within MAGIC_WINDOW bytes) with a PDF header."""
    return b"%PDF-" in data[:MAGIC_WINDOW]


def clean(text: str) -> str:
    """Ligatures spelled out, TeX's separate accents put on their letters ("Gr ´egory", "Franc¸ois"),
    XML-illegal characters dropped, whitespace collapsed, Unicode in NFC."""
    for ligature, letters in _LIGATURES.items():
        text = text.replace(ligature, letters)
    if _SPACING_ACCENT.search(text):
        text = _ACCENT_BEFORE.sub(lambda m: _DOTLESS.get(m.group(2), m.group(2)) + _COMBINING[m.group(1)], text)
        text = _ACCENT_AFTER.sub(lambda m: m.group(1) + _COMBINING[m.group(2)], text)
    text = _CID.sub("", text)  # a glyph the font does not map to a character: pdfminer's "(cid:12)"
    return unicodedata.normalize("NFC", " ".join(_NOT_XML.sub("", text).split()))


def read_pdf(data: bytes, max_pages: Optional[int] = None) -> Document:
    """Lay out a PDF's text. Raises PdfError for a body that is no PDF, is encrypted with a password,
    cannot be parsed, or has no text layer (a scan)."""
    from pdfminer.high_level import extract_pages
    from pdfminer.layout import LAParams
    from pdfminer.pdfdocument import PDFPasswordIncorrect

    if not is_pdf(data):
        raise PdfError("not-pdf", "no %PDF- header: not a PDF")
    pages: List[Page] = []
    box_id = 0
    try:
        for number, layout in enumerate(extract_pages(io.BytesIO(data), laparams=LAParams(), maxpages=max_pages or 0)):
            page = Page(number=number, width=float(layout.width), height=float(layout.height))
            boxes = _ordered_boxes(layout)
            for box in boxes:
                lines = _lines_of(box, page, box_id)
                box_id += 1
                if len(lines) >= 3 and sum(len(line.text) <= 2 for line in lines) > len(lines) / 2:
                    continue  # text set vertically (a journal's margin stamp): one character a line
                page.lines.extend(lines)
            pages.append(page)
        metadata = _metadata(data)
    except PdfError:
        raise
    except PDFPasswordIncorrect:
        raise PdfError("encrypted", "encrypted with a password") from None
    except RecursionError:
        raise PdfError("broken", "nesting too deep to parse") from None
    except Exception as exc:  # pdfminer raises many types on damaged files (PSEOF, KeyError, TypeError, ...)
        if "encrypt" in type(exc).__name__.lower() or "decrypt" in str(exc).lower():
            raise PdfError("encrypted", f"encrypted: {exc}") from None
        raise PdfError("broken", f"cannot be parsed: {type(exc).__name__}: {exc}") from None
    if not pages:
        raise PdfError("broken", "no pages")
    if not any(page.lines for page in pages):
        raise PdfError("no-text", "no text layer (a scanned PDF?)")
    return Document(pages=pages, metadata=metadata)


def _metadata(data: bytes) -> dict:
    from pdfminer.pdfdocument import PDFDocument
    from pdfminer.pdfparser import PDFParser
    from pdfminer.pdftypes import resolve1

    info = {}
    try:
        document = PDFDocument(PDFParser(io.BytesIO(data)))
        for entry in document.info[:1]:
            for key, value in entry.items():
                value = resolve1(value)
                if isinstance(value, bytes):
                    # PDF text strings: UTF-16 with a BOM, else PDFDocEncoding (close to Latin-1)
                    utf16 = value[:2] in (b"\xfe\xff", b"\xff\xfe")
                    value = value.decode("utf-16" if utf16 else "latin-1", errors="replace")
                if isinstance(value, str):
                    info[str(key)] = clean(value)
    except Exception:  # the Info dictionary is optional and often damaged: no metadata, not a failure
        return {}
    return info


def _ordered_boxes(layout) -> list:
    """Text boxes in reading order: bands split by full-width boxes, left column before right."""
    from pdfminer.layout import LTTextBox

    boxes = [el for el in layout if isinstance(el, LTTextBox) and el.get_text().strip()]
    middle = float(layout.width) / 2
    # pdfminer's y grows upwards: sort by top edge, highest first
    boxes.sort(key=lambda b: (-b.y1, b.x0))

    def spans(box) -> bool:
        return box.x0 < middle - 10 and box.x1 > middle + 10

    ordered = []
    band: list = []
    for box in boxes:
        if spans(box):
            ordered.extend(_columns(band, middle))
            band = []
            ordered.append(box)
        else:
            band.append(box)
    ordered.extend(_columns(band, middle))
    return ordered


def _columns(band: list, middle: float) -> list:
    left = [b for b in band if (b.x0 + b.x1) / 2 < middle]
    right = [b for b in band if (b.x0 + b.x1) / 2 >= middle]
    return sorted(left, key=lambda b: -b.y1) + sorted(right, key=lambda b: -b.y1)


def _lines_of(box, page: Page, box_id: int) -> List[Line]:
    from pdfminer.layout import LTChar, LTTextLine

    lines = []
    for element in box:
        if not isinstance(element, LTTextLine):
            continue
        text = clean(element.get_text())
        if not text:
            continue
        chars = [c for c in element if isinstance(c, LTChar) and c.get_text().strip()]
        size = statistics.median(c.size for c in chars) if chars else 0.0
        bold = sum(1 for c in chars if _BOLD.search(c.fontname or "")) > len(chars) / 2 if chars else False
        italic = sum(1 for c in chars if _ITALIC.search(c.fontname or "")) > len(chars) / 2 if chars else False
        lines.append(Line(text=text, x0=float(element.x0), x1=float(element.x1),
                          top=page.height - float(element.y1), bottom=page.height - float(element.y0),
                          size=round(float(size), 1), bold=bold, page=page.number, box=box_id,
                          page_height=page.height, lead=_lead(element, text), italic=italic))
    return _join_same_baseline(lines)


def _styled(fontname: str) -> bool:
    return bool(_BOLD.search(fontname or "") or _ITALIC.search(fontname or ""))


def _lead(element, text: str) -> str:
    """The opening run of a line in a bold or italic face when the rest is in an upright regular one; an
    italic run only when it starts with a digit ("1) Method:"), since italics alone mark emphasis."""
    from pdfminer.layout import LTChar

    pieces = []
    fonts = []
    for child in element:
        pieces.append(child.get_text())
        fonts.append(child.fontname if isinstance(child, LTChar) and child.get_text().strip() else None)
    faces = [f for f in fonts if f]
    if not faces or not _styled(faces[0]):
        return ""
    change = next((k for k, f in enumerate(fonts) if f and f != faces[0]), None)
    lead = text if change is None else clean("".join(pieces[:change])).strip()
    if not _BOLD.search(faces[0]) and not lead[:1].isdigit():
        return ""
    rest = [f for f in fonts[change:] if f] if change is not None else []
    if sum(1 for f in rest if _styled(f)) > len(rest) / 2:
        return ""
    return lead


def _join_same_baseline(lines: List[Line]) -> List[Line]:
    """One line for pieces of a box that share a baseline: pdfminer.six splits a line at a wide space (a
    sentence space of justified text) and may list the right piece first, which tore words and sentences
    apart ("the su- / corpus extends"). Pieces further apart than two font sizes stay separate."""
    out: List[Line] = []
    for line in lines:
        same = next((i for i, prev in enumerate(out) if abs(prev.top - line.top) < 1.0
                     and abs(prev.bottom - line.bottom) < 1.0), None)
        if same is None:
            out.append(line)
            continue
        prev = out[same]
        left, right = (prev, line) if prev.x0 <= line.x0 else (line, prev)
        if right.x0 - left.x1 > 2 * max(left.size, right.size, 1.0) or right.x0 < left.x1 - 1.0:
            out.append(line)
            continue
        longer = left if len(left.text) >= len(right.text) else right
        # a run-in heading that pdfminer.six cut off from its paragraph's first line at the space after it
        lead = left.text if left.lead == left.text and right.lead != right.text else left.lead
        out[same] = Line(text=f"{left.text} {right.text}", x0=left.x0, x1=right.x1, top=min(left.top, right.top),
                         bottom=max(left.bottom, right.bottom), size=longer.size, bold=left.bold and right.bold,
                         page=left.page, box=left.box, page_height=left.page_height, lead=lead,
                         italic=left.italic and right.italic)
    return out
