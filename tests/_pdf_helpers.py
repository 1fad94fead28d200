"""Small article PDFs written with fpdf2 for the tests, with their structure known from how they are made.

`article_pdf(columns=1|2)` lays out ARTICLE (title, authors, abstract, sections on three levels with
paragraphs, a list, a footnote, a caption, an equation, references) line by line in Helvetica, with a
running header and page numbers, a paragraph that crosses a page or column break and a word hyphenated at
a line's end. The tests compare what edrew_scrapy.pdf reads with ARTICLE itself.
"""
from __future__ import annotations

import random
from typing import List, Optional

from fpdf import FPDF
from PIL import Image

TITLE = "Robust Extraction of Structure from Scanned Technical Reports"
AUTHORS = ["Alice Martin", "Bruno Silva"]
AFFILIATION = "Department of Computer Science, University of Testing, Example City"
ABSTRACT = ("We describe a method that reads the structure of technical reports. It finds sections, "
            "paragraphs and references, e.g. in two-column layouts. The method keeps 97.5 percent of the "
            "sentences intact.")
HEADER = "Journal of Synthetic Documents, Vol. 7"
FOOTNOTE = "1 The code is available from the authors on request."
CAPTION = "Figure 1: Accuracy of the parser on the test reports."
EQUATION = "f(x) = a x + b (1)"
BULLET = "- "
LIST_ITEMS = ["a reader for the page layout,", "a set of rules for headings,", "a splitter for sentences."]
HYPHENATED = ("The parser was evaluated in many experiments on reports from several publishers, and it kept "
              "the order of the columns in all of them.")
# Longer paragraphs, so that the article runs over pages and columns.
LONG = [
    "Reports in this collection come from many sources. Some were typeset with LaTeX, others with word "
    "processors, and a few were printed and scanned again. The fonts differ, and so do the margins. "
    "A parser must not rely on one of them. It reads what the page shows: the size of the text, its "
    "weight, where it starts and where it ends. These cues are enough for most reports.",
    "The first pass reads the characters of each page with their positions. The second pass groups them "
    "into lines, and the third groups lines into blocks. Each pass is simple. Together they give an order "
    "of reading that follows the columns of the page, even when a figure sits between them.",
    "Errors of the layout reader spread to every later step. A heading read as a paragraph hides a "
    "section, and a paragraph split in two adds a false boundary. We therefore measure each step on its "
    "own, with documents whose structure is known from their source, before we measure the whole.",
]
# (number, title, level, paragraphs); the long paragraphs cross page and column breaks
SECTIONS = [
    ("1", "Introduction", 1, [
        "Technical reports are often published as PDF files. Their structure is not stored in the file, "
        "so it has to be read from the layout. Smith et al. [2] describe an early system for this task.",
        *LONG,
    ]),
    ("2", "Method", 1, [
        "Our method has three parts, which Fig. 1 shows:",
    ]),
    ("2.1", "Layout Analysis", 2, [
        "The layout reader groups characters into lines and lines into blocks. Blocks are ordered by "
        "columns, left before right.",
        HYPHENATED,
        "Each block keeps the font size of its characters, which separates headings from body text. "
        "A heading is larger or bolder than the text around it. Numbered headings such as 2.1 give their "
        "level by the count of their numbers. Unnumbered headings keep the usual names of sections. "
        "The body text is the most common size in the document, measured over all of its characters. "
        "Running headers and page numbers repeat at the same place on every page and are dropped. "
        "Paragraphs that cross a column or a page are joined again into one paragraph.",
    ]),
    ("2.1.1", "Font Sizes", 3, [
        "Sizes are compared with the body text, e.g. a heading at 12 points over a body at 10 points.",
    ]),
    ("3", "Results", 1, [
        "The parser found 98.2 percent of the headings. It kept the footnotes out of the paragraphs.",
        *LONG,
    ]),
    ("4", "Conclusion", 1, [
        "We presented a parser for reports. Future work will add tables.",
    ]),
]
REFERENCES = [
    "[1] A. Martin and B. Silva. Reading layouts. In Proc. of the Workshop on Documents, pages 1-10, 2019.",
    "[2] J. Smith, K. Lee, and M. Brown. Structure from PDF files. Journal of Documents, 12(3):45-67, 2015.",
    "[3] R. Jones. Sentence boundaries in scientific text. Technical report, University of Testing, 2020.",
]

PAGE_W, PAGE_H = 210.0, 297.0
MARGIN_X, TOP_Y, BOTTOM_Y = 18.0, 24.0, 262.0
FOOTNOTE_Y = 268.0
LINE = 4.6  # mm per body line (10 pt)


class _Writer:
    """Writes lines into one or two columns, turning columns and pages as they fill."""

    def __init__(self, columns: int):
        self.pdf = FPDF(unit="mm", format="A4")
        self.pdf.set_auto_page_break(False)
        self.columns = 1
        self.body_columns = columns
        self.column = 0
        self.y = TOP_Y
        self.footnote_done = False
        self._new_page()

    @property
    def width(self) -> float:
        full = PAGE_W - 2 * MARGIN_X
        return full if self.columns == 1 else (full - 8) / 2

    @property
    def x(self) -> float:
        return MARGIN_X + self.column * (self.width + 8)

    def _new_page(self) -> None:
        self.pdf.add_page()
        page = self.pdf.page_no()
        self.pdf.set_font("Helvetica", "", 8)
        self.pdf.set_xy(MARGIN_X, 8)
        self.pdf.cell(PAGE_W - 2 * MARGIN_X, 4, HEADER, align="C")
        self.pdf.set_xy(MARGIN_X, 282)
        self.pdf.cell(PAGE_W - 2 * MARGIN_X, 4, str(page), align="C")
        self.column = 0
        self.y = TOP_Y

    def _advance(self, height: float) -> None:
        if self.y + height > BOTTOM_Y:
            if self.column + 1 < self.columns:
                self.column += 1
                self.y = self.top_of_columns
            else:
                self._new_page()
                self.top_of_columns = TOP_Y

    def start_body(self) -> None:
        self.columns = self.body_columns
        self.top_of_columns = self.y

    def gap(self, height: float) -> None:
        self.y += height

    def line(self, text: str, size: float = 10, style: str = "", indent: float = 0.0, align: str = "L") -> None:
        height = size * 0.46
        self._advance(height)
        self.pdf.set_font("Helvetica", style, size)
        self.pdf.set_xy(self.x + indent, self.y)
        self.pdf.cell(self.width - indent, height, text, align=align)
        self.y += height

    def wrap(self, text: str, size: float = 10, style: str = "", indent: float = 0.0) -> List[str]:
        self.pdf.set_font("Helvetica", style, size)
        lines: List[str] = []
        current = ""
        for word in text.split():
            trial = f"{current} {word}".strip()
            room = self.width - (indent if not lines else 0) - 2
            if current and self.pdf.get_string_width(trial) > room:
                lines.append(current)
                current = word
            else:
                current = trial
        if current:
            lines.append(current)
        return lines

    def paragraph(self, text: str, hyphenate: Optional[str] = None) -> None:
        lines = self.wrap(text, indent=4)
        if hyphenate:
            # break the word at a line's end with a hyphen, as TeX does
            for i, line in enumerate(lines[:-1]):
                if hyphenate in line.split():
                    head, tail = line.rsplit(hyphenate, 1)
                    lines[i] = head + hyphenate[:6] + "-"
                    lines[i + 1] = (hyphenate[6:] + tail + " " + lines[i + 1]).strip()
                    break
        for i, line in enumerate(lines):
            self.line(line, indent=4 if i == 0 else 0)
        self.gap(1.5)

    def footnote(self, text: str) -> None:
        self.pdf.set_font("Helvetica", "", 8)
        self.pdf.set_xy(self.x, FOOTNOTE_Y)
        self.pdf.cell(self.width, 3.6, text)


def article_pdf(columns: int = 1, *, encrypt: bool = False, noise_kib: int = 0) -> bytes:
    """ARTICLE as a PDF in one or two columns; encrypt=True asks for a user password to open it;
    noise_kib adds an image of random pixels that makes the file about that much larger."""
    w = _Writer(columns)
    w.pdf.set_title(TITLE)
    w.line(TITLE, size=17, style="B", align="C")
    w.gap(3)
    w.line(", ".join(AUTHORS), size=11, align="C")
    w.line(AFFILIATION, size=9, align="C")
    w.gap(5)
    w.line("Abstract", size=11, style="B")
    for line in w.wrap(ABSTRACT):
        w.line(line)
    w.gap(5)
    w.start_body()
    for number, title, level, paragraphs in SECTIONS:
        w.gap(2)
        w.line(f"{number} {title}", size={1: 12, 2: 11, 3: 10}[level], style="B")
        w.gap(1)
        for text in paragraphs:
            w.paragraph(text, hyphenate="experiments" if text == HYPHENATED else None)
            if text.endswith("Fig. 1 shows:"):
                for item in LIST_ITEMS:
                    w.line(BULLET + item, indent=3)
                w.gap(1.5)
                w.footnote(FOOTNOTE)
            if title == "Results" and text is paragraphs[0]:
                w.line(EQUATION, align="C")
                w.gap(1.5)
                w.line(CAPTION, size=9)
                w.gap(1.5)
    w.gap(2)
    w.line("References", size=12, style="B")
    w.gap(1)
    for entry in REFERENCES:
        for i, line in enumerate(w.wrap(entry, size=9, indent=0)):
            w.line(line, size=9, indent=0 if i == 0 else 5)
    if noise_kib:
        side = int((noise_kib * 1024 / 3) ** 0.5)
        noise = Image.frombytes("RGB", (side, side), random.Random(7).randbytes(side * side * 3))
        w.pdf.image(noise, x=MARGIN_X, y=BOTTOM_Y - 20, w=15, h=15)
    if encrypt:
        w.pdf.set_encryption(owner_password="owner-secret", user_password="user-secret")
    return bytes(w.pdf.output())


def blank_pdf() -> bytes:
    """A PDF whose page holds a drawn rectangle and no text (as a scan without OCR has none)."""
    pdf = FPDF()
    pdf.add_page()
    pdf.rect(20, 20, 100, 60, style="F")
    return bytes(pdf.output())
