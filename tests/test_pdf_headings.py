"""Heading rules of edrew_scrapy.pdf.structure on small PDFs written here with fpdf2: REVTeX's third level
("1. Title" in italics on a line of its own under "I." / "A." headings) and a heading's number that the
layout library reads as a text box of its own beside its title. Each PDF places every line at a known
position, so what the rules must find (and what they must leave alone) is known from how it is made."""
from __future__ import annotations

from typing import List, Tuple

from fpdf import FPDF

from edrew_scrapy.pdf import parse_pdf
from edrew_scrapy.pdf.layout import read_pdf
from edrew_scrapy.pdf.structure import _join_heading_pieces

PROSE = ("The parser reads the layout of each page and keeps the order of its columns. It measures the size "
         "of the text and the weight of its fonts, and it compares them with the body text of the article. "
         "Headings are shorter than the lines around them and stand apart from them.")


class _Page:
    """Lines placed by hand on A4 pages in one or two columns (mm), 10 pt Helvetica body text."""

    def __init__(self, columns: int = 2):
        self.pdf = FPDF(unit="mm", format="A4")
        self.pdf.set_auto_page_break(False)
        self.pdf.add_page()
        self.left, self.gutter, self.right = 18.0, 8.0, 192.0
        self.columns = columns
        self.width = (self.right - self.left - (self.gutter if columns == 2 else 0)) / columns
        self.column, self.y = 0, 20.0

    @property
    def x(self) -> float:
        return self.left + self.column * (self.width + self.gutter)

    def _room(self, height: float) -> None:
        if self.y + height <= 270:
            return
        if self.column + 1 < self.columns:
            self.column, self.y = self.column + 1, 45.0
        else:
            self.pdf.add_page()
            self.column, self.y = 0, 20.0

    def text(self, text: str, size: float = 10, style: str = "", align: str = "L", x: float = 0.0,
             width: float = 0.0) -> None:
        self._room(size * 0.45)
        self.pdf.set_font("Helvetica", style, size)
        self.pdf.set_xy(self.x + x, self.y)
        self.pdf.cell(width or self.width - x, size * 0.45, text, align=align)
        self.y += size * 0.45

    def gap(self, mm: float) -> None:
        self.y += mm

    def paragraph(self, text: str = PROSE) -> None:
        self.pdf.set_font("Helvetica", "", 10)
        line = ""
        for word in text.split():
            if line and self.pdf.get_string_width(f"{line} {word}") > self.width - 2:
                self.text(line)
                line = word
            else:
                line = f"{line} {word}".strip()
        self.text(line)
        self.gap(3)

    def heading(self, number: str, title: str, style: str = "B", size: float = 10, apart: float = 0.0) -> None:
        """A centred heading; apart > 0 sets its number as a piece of its own, `apart` mm left of the title."""
        self.gap(3)
        if apart:
            self.pdf.set_font("Helvetica", style, size)
            title_width = self.pdf.get_string_width(title)
            start = (self.width - title_width) / 2
            number_width = self.pdf.get_string_width(number)
            y = self.y
            self.text(number, size=size, style=style, x=start - apart - number_width, width=number_width + 0.5)
            self.y = y
            self.text(title, size=size, style=style, x=start, width=title_width + 1)
        else:
            self.text(f"{number} {title}", size=size, style=style, align="C")
        self.gap(3)

    def bytes(self) -> bytes:
        return bytes(self.pdf.output())


def _revtex_like() -> Tuple[bytes, List[Tuple[str, str, int]]]:
    """An APS-style article: "I." sections in bold capitals, "A." subsections in bold (one with its letter
    set apart), "1." third-level headings in smaller italics, and italic numbered lines that are no
    heading: out of sequence, and inside a paragraph's box."""
    page = _Page()
    page.text("Layout Models for Scanned Reports", size=16, style="B", align="C")
    page.text("Ada Lovelace", size=11, align="C")
    page.gap(6)
    expected = []
    for number, title, level, style, size in [
            ("I.", "INTRODUCTION", 1, "B", 10), ("A.", "Data Collection", 2, "B", 10),
            ("1.", "Feature Design", 3, "I", 9), ("2.", "Model Training", 3, "I", 9),
            ("II.", "RESULTS", 1, "B", 10)]:
        page.heading(number, title, style=style, size=size)
        page.paragraph()
        expected.append((number.rstrip("."), title, level))
    page.heading("B.", "Error Sources", apart=6)  # the letter a text box of its own
    expected.append(("B", "Error Sources", 2))
    page.paragraph()
    page.heading("3.", "Noise Model", style="I", size=9)  # "3." right after "B.": a list's item, no heading
    page.paragraph()
    page.heading("1.", "Reading Order", style="I", size=9)
    expected.append(("1", "Reading Order", 3))
    page.paragraph()
    # an italic numbered line in the middle of a paragraph's box: emphasis, not a heading
    page.text("The two rules below come from the layout of the page.")
    page.text("2. Font Sizes", size=9, style="I", align="C")
    page.text("Both of them are measured on the labelled set.")
    page.gap(3)
    page.heading("III.", "CONCLUSIONS")
    expected.append(("III", "CONCLUSIONS", 1))
    page.paragraph()
    return page.bytes(), expected


def test_third_level_under_lettered_subsections_and_a_letter_set_apart():
    data, expected = _revtex_like()
    found = [(s.number, s.title, s.level) for s in parse_pdf(data).all_sections()]
    assert found == expected
    article = parse_pdf(data)
    assert article.sections[0].sections[0].sections[1].title == "Model Training"  # nested under I. > A.


def test_italic_numbered_lines_without_lettered_subsections_are_no_headings():
    page = _Page(columns=1)
    page.text("Notes on Layout", size=16, style="B", align="C")
    page.gap(6)
    page.heading("1", "Introduction", size=12)
    page.paragraph()
    page.heading("1.1", "Scope", size=11)
    page.paragraph()
    page.heading("1.", "First Step", style="I", size=9)  # an arabic "1." under "1.1": not the lettered scheme
    page.paragraph()
    page.heading("2", "Method", size=12)
    page.paragraph()
    found = [(s.number, s.title, s.level) for s in parse_pdf(page.bytes()).all_sections()]
    assert found == [("1", "Introduction", 1), ("1.1", "Scope", 2), ("2", "Method", 1)]


def _pieces(data: bytes) -> List[str]:
    page = read_pdf(data).pages[0]
    return [line.text for line in _join_heading_pieces(page)]


def test_number_pieces_join_only_beside_their_title_in_one_column():
    page = _Page()
    # a page number beside a running header at the page's top stays apart (page-number rules drop it)
    page.pdf.set_font("Helvetica", "", 10)
    page.pdf.set_xy(40, 10)
    page.pdf.cell(6, 4, "56")
    page.pdf.set_xy(50, 10)
    page.pdf.cell(60, 4, "Kopp and Armbruster")
    page.y = 30
    page.heading("2.", "Method Overview", apart=5)
    page.paragraph()
    # a number at the left column's right edge and a capitalised line of the right column: the gutter
    page.pdf.set_font("Helvetica", "", 12)
    page.pdf.set_xy(page.left + page.width - 6, 120)
    page.pdf.cell(6, 5, "4.", align="R")
    page.pdf.set_xy(page.left + page.width + page.gutter, 120)
    page.pdf.cell(40, 5, "Results follow")
    lines = _pieces(page.bytes())
    assert "2. Method Overview" in lines
    assert "56" in lines and "Kopp and Armbruster" in lines
    assert "4." in lines and "Results follow" in lines


def _place(page: _Page, x: float, text: str, size: float = 10, style: str = "") -> float:
    """Text at x mm from the column's left edge on the current line; returns where it ends (mm)."""
    page.pdf.set_font("Helvetica", style, size)
    width = page.pdf.get_string_width(text)
    page.pdf.set_xy(page.x + x, page.y)
    page.pdf.cell(width + 0.2, size * 0.45, text)
    return x + width


def test_a_wrapped_heading_split_at_a_stretched_space_and_a_run_in_heading_beside_its_text():
    page = _Page()
    page.text("Reading Justified Headings", size=16, style="B", align="C")
    page.gap(6)
    page.heading("I.", "INTRODUCTION")
    page.paragraph()
    page.heading("A.", "Setup", style="I")
    page.paragraph()
    # IEEE's run-in third level whose paragraph text the layout reads as a box of its own beside it
    end = _place(page, 4, "1) Model Training:", style="I")
    _place(page, end + 5, "In our experiments the parser")
    page.y += 4.5
    page.paragraph("keeps the order of the columns. " + PROSE)
    # a numbered title justified over two lines: a stretched space, and the rest under its first word
    page.gap(3)
    end = _place(page, 0, "B. Annotation Protocol", size=12, style="B")
    _place(page, end + 6, "for Long", size=12, style="B")
    page.y += 5.4
    page.pdf.set_font("Helvetica", "B", 12)
    _place(page, page.pdf.get_string_width("B. "), "Documents", size=12, style="B")
    page.y += 5.4
    page.gap(3)
    page.paragraph()
    # an italic heading right above the indented piece of an upright first line: the heading ends there
    page.heading("II.", "RESULTS")
    page.paragraph()
    page.gap(3)
    page.text("A. Font Statistics", style="I")
    page.gap(0.8)
    _place(page, 25, "the detector reduces the error")
    page.y += 4.5
    page.paragraph()
    found = [(s.number, s.title, s.level) for s in parse_pdf(page.bytes()).all_sections()]
    assert found == [("I", "INTRODUCTION", 1), ("A", "Setup", 2), ("1", "Model Training", 3),
                     ("B", "Annotation Protocol for Long Documents", 2), ("II", "RESULTS", 1),
                     ("A", "Font Statistics", 2)]
    training = parse_pdf(page.bytes()).sections[0].sections[0].sections[0]
    assert training.blocks[0].text.startswith("In our experiments the parser keeps the order")
