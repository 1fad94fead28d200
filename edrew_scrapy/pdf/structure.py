"""Laid-out lines -> an Article: title, authors, year, abstract, sections to three levels with their
paragraphs, lists, footnotes, captions and equations, and the references one per entry.

The rules read what a typeset article shows: font size, boldness and italics relative to the body text
(the most common size), numbering ("2.1 Data", "IV. RESULTS", "A. Setup" under roman sections, and the
sequence of "1.", "2." under those), the usual names of
unnumbered sections, indentation and the gap at a paragraph's last line, and the page margins (running
headers, footers and page numbers repeat there and are dropped). Each rule is a small function below.
"""
from __future__ import annotations

import dataclasses
import re
from collections import Counter
from typing import Iterable, List, Optional, Tuple

from .article import Article, Block, Section
from .layout import Document, Line, Page, read_pdf
from .sentences import split_sentences

# Share of the page height at the top and the bottom where running headers, footers and page numbers sit.
MARGIN = 0.08
# A wider band where text repeated on many pages is still a running header or footer.
REPEAT_BAND = 0.15
# Headings are short; a longer "1. ..." line is a list item or a sentence.
HEADING_MAX_WORDS = 14
MAX_LEVEL = 3

_KNOWN = (r"abstract|introduction|background|related work|previous work|preliminaries|conclusions?|"
          r"conclusions? and future work|concluding remarks|discussion|results|results and discussion|"
          r"evaluation|experiments|experimental results|methods|methodology|materials and methods|"
          r"acknowledge?ments?|references|bibliography|literature cited|works cited|appendices|summary|"
          r"future work|limitations|appendix(?:\s+[a-z0-9]{1,3})?(?:[.:]\s+[A-Z][^.]{0,60})?")
_KNOWN_HEADING = re.compile(rf"^(?:{_KNOWN})[.:]?$", re.IGNORECASE)
_REFERENCES = re.compile(r"^(?:references|bibliography|literature cited|works cited|references and notes)[.:]?$",
                         re.IGNORECASE)
_ABSTRACT = re.compile(r"^abstract\b\s*[-—–.:]?\s*(.*)$", re.IGNORECASE)
_KEYWORDS = re.compile(r"^(?:keywords|key words|index terms|categories and subject descriptors|"
                       r"general terms)\b", re.IGNORECASE)
_ARABIC = re.compile(r"^((?:\d{1,2}\.){0,2}\d{1,2})\.?\s+(\S.*)$")
_ROMAN = re.compile(r"^([IVX]{1,5})\.?\s+(\S.*)$")
_BARE_NUMBER = re.compile(r"(?:\d{1,2}\.){0,2}\d{1,2}\.?|[IVX]{1,5}\.")
# REVTeX's third level under "A." subsections: "1. Title" in italics on a line of its own
_THIRD_UNDER_LETTERS = re.compile(r"^(\d{1,2})\.\s+(\S.*)$")
# a heading's number laid out apart from its title: "2", "2.1.", "IV.", "A."
_PIECE_NUMBER = re.compile(_BARE_NUMBER.pattern + r"|[A-H]\.")
_LETTER = re.compile(r"^([A-H](?:\.\d{1,2}){0,2})\.\s+(\S.*)$")
_CAPTION = re.compile(r"^(?:fig(?:ure)?\.?|table|tab\.|algorithm|listing|scheme|chart|plate)\s*"
                      r"(?:\d+|[IVX]+)[a-z]?(?:[.:|]|\s|$)", re.IGNORECASE)
_BULLET_MARK = re.compile(r"^(?:[•◦▪▸►‣∙·○■□–—*-]|o(?=\s))\s+")
_BULLET = re.compile(_BULLET_MARK.pattern + r"\S")
_ENUMERATED = re.compile(r"^(?:\(?\d{1,2}[.)]|\(?[a-z][.)]|\((?:i|ii|iii|iv|v|vi|vii|viii|ix|x)\))\s+\S")
_FOOTNOTE_MARK = re.compile(r"^(?:\d{1,2}|[*†‡§¶#∗⋆])\s?\S|^[a-z]\s\S")
_PAGE_NUMBER = re.compile(r"^(?:page\s+)?\d{1,4}(?:\s*(?:of|/)\s*\d{1,4})?$|^[ivxlc]{1,6}$|^[-–]\s*\d+\s*[-–]$",
                          re.IGNORECASE)
_MATH = re.compile(r"[=∑∏∫≤≥≈≠±×÷∈∉⊂⊆∪∩→←⇒⇔∀∃∂∇√∞αβγδεθλμπσφωΣΠΩ^_]")
_EQ_NUMBER = re.compile(r"\(\d{1,3}(?:\.\d{1,3})?[a-z]?\)$")
_REF_MARK = re.compile(r"^(?:\[[^\]]{1,12}\]|\d{1,3}\.\s|\(\d{1,3}\)\s)")
_YEAR = re.compile(r"(?<!\d)(19[5-9]\d|20\d\d)(?!\d)")
_COPYRIGHT_YEAR = re.compile(r"(?:©|\(c\)|copyright)\s*(?:\D{0,20}?)(19[5-9]\d|20\d\d)", re.IGNORECASE)
_AFFILIATION = re.compile(
    r"universit|institut|department|dept\.|laborator|\blabs?\b|school|college|cent(?:er|re)|research|"
    r"faculty|academy|corporation|\binc\b|gmbh|\bltd\b|hospital|ministry|\bstreet\b|\broad\b|avenue|"
    r"@|http|www\.|\d{4,}|\busa\b|germany|france|china|japan|italy|spain|canada|india|netherlands|"
    r"switzerland|united|kingdom|brazil|austria|sweden|norway|belgium|korea|email|e-mail", re.IGNORECASE)
_INITIALS = re.compile(r"^(?:[^\W\d_]\.)(?:-?[^\W\d_]\.)*$")
_PARTICLES = frozenset("van von der den de da di del della la le du dos das bin ibn al el y".split())
_MARKERS = "*†‡§¶∗⋆0123456789,;'’\""


def parse_pdf(data: bytes, max_pages: Optional[int] = None) -> Article:
    """The article in a PDF's bytes. Raises layout.PdfError for a PDF that gives no text."""
    return parse_document(read_pdf(data, max_pages=max_pages))


def parse_document(document: Document) -> Article:
    document = dataclasses.replace(document, pages=[
        dataclasses.replace(page, lines=_join_heading_pieces(page)) for page in document.pages])
    lines, margins = _drop_margins(document)
    body_size = _body_size(lines)
    article = Article(pages=len(document.pages))
    title_lines = _title_lines(lines, body_size)
    title = " ".join(line.text for line in title_lines).rstrip(" *∗†‡§¶⋆")
    article.title = title or _metadata_title(document.metadata)
    headings, skip, run_in = _headings(lines, body_size)
    front_end = _front_end(lines, headings, title_lines, body_size)
    front = [line for line in lines[:front_end] if line not in title_lines]
    if front_end < len(lines) and lines[front_end].page == 0:
        # author blocks side by side: the right-hand ones are read after the left column's abstract;
        # what stands above the abstract (or the first heading) on the first page is front matter
        cut = lines[front_end].top - 1
        prose = {line.box for line in lines if line.page == 0 and _running_text(line, body_size)}
        beside = [i for i in range(front_end, len(lines)) if lines[i].page == 0 and lines[i].bottom < cut
                  and i not in headings and lines[i].box not in prose]
        front += [lines[i] for i in beside if lines[i] not in title_lines]
        skip.update(beside)
    article.authors = _authors(front, body_size)
    first_page = [line for line in lines + margins if line.page == 0]
    article.year = _year(front + [m for m in margins if m.page == 0], first_page, document.metadata)
    _fill(article, lines, front_end, headings, skip, body_size, run_in)
    return article


# ---- page furniture ---------------------------------------------------------------------------------

def _drop_margins(document: Document) -> Tuple[List[Line], List[Line]]:
    """(the lines of the text, the running headers/footers and page numbers dropped from it)."""
    def key(line: Line) -> str:
        return re.sub(r"\d+", "#", line.text.lower())

    def in_margin(line: Line, page) -> bool:
        return line.top < page.height * MARGIN or line.bottom > page.height * (1 - MARGIN)

    def in_band(line: Line, page) -> bool:
        return line.top < page.height * REPEAT_BAND or line.bottom > page.height * (1 - REPEAT_BAND)

    repeated = Counter()
    for page in document.pages:
        repeated.update({key(line) for line in page.lines if in_band(line, page)})
    # a running header or footer: the same text near the top or bottom of at least two pages and a third
    often = max(2, len(document.pages) // 3)
    kept, dropped = [], []
    for page in document.pages:
        for line in page.lines:
            furniture = (in_margin(line, page) and (_PAGE_NUMBER.match(line.text) or repeated[key(line)] > 1)) \
                or (in_band(line, page) and repeated[key(line)] >= often and len(document.pages) > 2)
            (dropped if furniture else kept).append(line)
    return kept, dropped


def _join_heading_pieces(page: Page) -> List[Line]:
    """A page's lines with the pieces of a heading's line that pdfminer.six laid out as text boxes of their
    own joined on their baseline, so that the heading rules see the whole line: a number apart from its
    title ("2." | "Method", split at the wide space after the number; joined in the title's style, and a
    number at a column's top is no more taken for a page number), or a numbered heading's words in one
    style split at a stretched space ("3.2 Annotation Protocol" | "for Long"). Pieces are near each other
    (within three font sizes) and both start on one side of the page's middle (not across a column
    gutter); a number is not joined when it is a page number near the page's top or bottom."""
    lines, width, height = page.lines, page.width, page.height
    out: List[Line] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        after = lines[i + 1] if i + 1 < len(lines) else None
        if after is not None and after.page == line.page and abs(after.top - line.top) < 1.5 \
                and abs(after.bottom - line.bottom) < 1.5 and abs(after.size - line.size) <= 0.5:
            left, right = (line, after) if line.x0 <= after.x0 else (after, line)
            # (a page number beside a running header stays apart, for _drop_margins to drop)
            page_number = _PAGE_NUMBER.match(left.text) and (left.top < height * REPEAT_BAND
                                                             or left.bottom > height * (1 - REPEAT_BAND))
            if _PIECE_NUMBER.fullmatch(left.text) and not page_number and right.text[:1].isupper() \
                    and 0 <= right.x0 - left.x1 <= 3 * max(left.size, right.size, 1.0) \
                    and (left.x0 < width / 2) == (right.x0 < width / 2):
                lead = f"{left.text} {right.lead}" if right.lead and left.lead == left.text else ""
                out.append(dataclasses.replace(right, text=f"{left.text} {right.text}", x0=left.x0,
                                               top=min(left.top, right.top), bottom=max(left.bottom, right.bottom),
                                               lead=lead))
                i += 2
                continue
            if _styled_alike(left, right) and (_ARABIC.match(left.text) or _ROMAN.match(left.text)
                                               or _LETTER.match(left.text)) \
                    and not left.text.endswith(".") and len(right.text.split()) <= 8 \
                    and 0 <= right.x0 - left.x1 <= 3 * max(left.size, right.size, 1.0) \
                    and (left.x0 < width / 2) == (right.x0 < width / 2):
                # a numbered heading's first line that pdfminer.six split at a space TeX stretched to
                # justify it ("3.2 Annotation Protocol" | "for Long", the title going on below)
                lead = f"{left.text} {right.text}" if left.lead == left.text and right.lead == right.text \
                    else left.lead
                out.append(dataclasses.replace(left, text=f"{left.text} {right.text}", x1=right.x1,
                                               top=min(left.top, right.top), bottom=max(left.bottom, right.bottom),
                                               lead=lead))
                i += 2
                continue
        out.append(line)
        i += 1
    return out


def _styled_alike(left: Line, right: Line) -> bool:
    """Both in bold (or both in italics) and the same size: pieces of one heading."""
    return abs(left.size - right.size) < 0.3 and ((left.bold and right.bold) or (left.italic and right.italic))


def _body_size(lines: List[Line]) -> float:
    sizes = Counter()
    for line in lines:
        sizes[round(line.size * 2) / 2] += len(line.text)
    return sizes.most_common(1)[0][0] if sizes else 10.0


# ---- front matter -----------------------------------------------------------------------------------

def _title_lines(lines: List[Line], body_size: float) -> List[Line]:
    """The largest text in the top half of the first page, over consecutive lines."""
    first = [line for line in lines if line.page == 0]
    if not first:
        return []
    height = max(line.bottom for line in first)
    candidates = [line for line in first if line.top < height * 0.5 and sum(c.isalpha() for c in line.text) >= 4
                  and not _ABSTRACT.match(line.text) and not line.text.lower().startswith("arxiv")]
    if not candidates:
        return []
    size = max(line.size for line in candidates)
    if size < body_size + 1:
        return []
    start = next(i for i, line in enumerate(first) if line in candidates and line.size >= size - 0.5)
    title = [first[start]]
    for line in first[start + 1:]:
        gap = line.top - title[-1].bottom
        if abs(line.size - size) <= 0.5 and gap < size * 1.5:
            title.append(line)
        else:
            break
    return title


def _metadata_title(metadata: dict) -> Optional[str]:
    title = metadata.get("Title", "").strip()
    words = title.split()
    if len(words) < 3 or re.search(r"\.(?:dvi|docx?|tex|pdf|ps)\b|microsoft|untitled", title, re.IGNORECASE):
        return None
    return title


def _front_end(lines: List[Line], headings: dict, title: List[Line], body_size: float) -> int:
    """Index of the first line after the front matter: the abstract, the first heading, the first
    paragraph of body text after the title (a box of three or more body-size lines), or page 2."""
    boxes = Counter(line.box for line in lines if abs(line.size - body_size) < 0.6)
    after = max((lines.index(t) for t in title), default=-1)
    for i, line in enumerate(lines):
        if line.page > 0 or i in headings or line.text.replace(" ", "").lower().startswith("abstract") \
                or _KEYWORDS.match(line.text):
            return i
        if i > after and boxes[line.box] >= 3 and _running_text(line, body_size):
            return i
    return len(lines)


def _running_text(line: Line, body_size: float) -> bool:
    """A line of prose in the body size (mostly lower-case words), not a list of names or a heading."""
    words = line.text.split()
    lower = sum(w[:1].islower() for w in words)
    return abs(line.size - body_size) < 0.6 and len(words) >= 8 and lower >= len(words) / 2


def _authors(front: List[Line], body_size: float) -> List[str]:
    names: List[str] = []
    joined: List[Line] = []
    for line in _row_major(front):
        # a list of names that wraps ("Paulo Ro-" / "cha9, ..."): the box's lines in one style are joined
        before = joined[-1] if joined else None
        # (not when the line opens with words that are no name: an affiliation without a telling word,
        # "KTH Stockholm" under its author)
        if before is not None and before.box == line.box and before.size == line.size and before.bold == line.bold \
                and not _AFFILIATION.search(line.text) and not _AFFILIATION.search(before.text) \
                and not _opens_with_no_name(line.text):
            joined[-1] = dataclasses.replace(before, text=_join([before, line]) if before.text.endswith("-")
                                             else f"{before.text} {line.text}")
        else:
            joined.append(line)
    for line in joined:
        if line.size < body_size - 1.5 or _AFFILIATION.search(line.text) or _KEYWORDS.match(line.text):
            continue
        if any(w[:1].islower() and w not in _PARTICLES and w != "and" for w in line.text.split()):
            continue  # a line of prose or a journal's name, not a list of names
        for part in re.split(r",|;|\band\b|&|\s{2,}", line.text):
            name = part.strip().strip(_MARKERS).strip()
            tokens = name.split()
            if 2 <= len(tokens) <= 5 and all(_name_token(t.strip(_MARKERS)) for t in tokens) \
                    and any(len(t) > 2 for t in tokens) and name not in names:
                names.append(" ".join(t.strip(_MARKERS) for t in tokens))
    return names


def _row_major(lines: List[Line]) -> List[Line]:
    """The lines box by box, boxes in rows (top to bottom, each row left to right): author blocks set in
    a grid are named row by row, while the reading order of boxes takes the left column first. A box's
    own lines keep their order."""
    boxes: dict = {}
    for line in lines:
        boxes.setdefault(line.box, []).append(line)
    rows: List[List[List[Line]]] = []
    for box in sorted(boxes.values(), key=lambda b: (b[0].page, b[0].top)):
        if rows and rows[-1][0][0].page == box[0].page and abs(rows[-1][0][0].top - box[0].top) < 2.0:
            rows[-1].append(box)
        else:
            rows.append([box])
    return [line for row in rows for box in sorted(row, key=lambda b: b[0].x0) for line in box]


def _opens_with_no_name(text: str) -> bool:
    """The line's first part (up to a comma) has two or more words and is not a name."""
    tokens = [t.strip(_MARKERS) for t in re.split(r",|;|\band\b|&", text)[0].split()]
    return len(tokens) >= 2 and not all(_name_token(t) for t in tokens if t)


def _name_token(token: str) -> bool:
    """A word of a person's name: "Günter", "Jean-Pierre", "O'Neil", an initial "J." / "J.-P.", "van"."""
    if token in _PARTICLES or _INITIALS.match(token):
        return True
    letters = token.replace("-", "").replace("'", "").replace("’", "")
    return len(token) >= 2 and token[0].isupper() and letters.isalpha() and not token.isupper()


def _year(front: Iterable[Line], first_page: Iterable[Line], metadata: dict) -> Optional[int]:
    """A copyright year anywhere on the first page (a conference's "©2011" line sits at the foot of a
    column), else the most frequent year in the front matter and the first page's margins, else the
    year the PDF was made."""
    for line in first_page:
        match = _COPYRIGHT_YEAR.search(line.text)
        if match:
            return int(match.group(1))
    years = [int(y) for line in front for y in _YEAR.findall(line.text)]
    if years:
        return Counter(years).most_common(1)[0][0]
    match = _YEAR.search(metadata.get("CreationDate", ""))
    return int(match.group(1)) if match else None


# ---- headings ---------------------------------------------------------------------------------------

def _headings(lines: List[Line], body_size: float) -> Tuple[dict, set, dict]:
    """({line index: (number or None, title, level)} for the section headings, the indices of lines to
    leave out: a heading's second line, a heading's number on a line of its own, a table of contents;
    {line index: the paragraph text after a run-in heading})."""
    found: dict = {}
    run_in: dict = {}
    skip: set = _contents(lines, body_size)
    numbered_top: List[int] = []
    roman_seen = False
    for i, line in enumerate(lines):
        if i in skip:
            continue
        heading = _heading_at(lines, i, body_size, roman_seen)
        if heading is None:
            heading = _third_level_under_letters(lines, i, found)
            if heading is not None:
                found[i] = heading
                continue
            last = found[max(found)][2] if found else 0
            heading = _run_in_heading(lines, i, last, roman_seen)
            if heading is not None:
                found[i] = heading[:3]
                run_in[i] = heading[3]
            continue
        number, title, level = heading
        prev = lines[i - 1] if i else None
        if number is None and prev is not None and _BARE_NUMBER.fullmatch(prev.text) \
                and prev.page == line.page and abs(prev.top - line.top) < 2:
            # "1." or "IV." and "INTRODUCTION" laid out as two text boxes on one baseline
            number = prev.text.rstrip(".")
            level = number.count(".") + 1
            skip.add(i - 1)
            found.pop(i - 1, None)
        if number and number[0].isdigit():
            if roman_seen and level == 1:
                continue  # "2 Item" in a document whose sections are numbered I, II, ...: a list
            top = int(number.split(".")[0])
            # numbering that goes back (a list "1. ... 2. ..." after section 3) is no heading
            if numbered_top and top < numbered_top[-1] and level == 1:
                continue
            numbered_top.append(top)
        elif number and level == 1:
            roman_seen = True
        # a heading set on two lines: the next line in the same box and style, unless it reads as text
        after = lines[i + 1] if i + 1 < len(lines) else None
        below = after is not None and (after.box == line.box or (
            after.page == line.page and 0 <= after.top - line.bottom < line.size * 0.8
            and line.x0 - 2 <= after.x0 <= line.x1))
        # (a numbered title wrapped with a hanging indent goes on under its first word, not under its number)
        hanging = number is not None and after is not None and after.x0 >= line.x0 + 0.8 * line.size \
            and _styled_alike(line, after)
        if below and after.bold == line.bold and after.italic == line.italic and abs(after.size - line.size) < 0.3 \
                and len(after.text.split()) <= 8 and not after.text.endswith(".") \
                and not (_ARABIC.match(after.text) or _ROMAN.match(after.text) or _LETTER.match(after.text)
                         or _KNOWN_HEADING.match(after.text)) \
                and (title.endswith("-") or (title.isupper() and after.text.isupper()) or after.text[:1].islower()
                     or hanging):
            title = title[:-1] + after.text if title.endswith("-") else f"{title} {after.text}"
            skip.add(i + 1)
        found[i] = (number, title, level)
    numbered = sum(1 for number, _, _ in found.values() if number)
    if numbered >= 2:
        # in a numbered document, an unnumbered heading must have a usual name
        found = {i: h for i, h in found.items()
                 if h[0] or i in run_in or _KNOWN_HEADING.match(h[1]) or _ABSTRACT.match(h[1])}
    run_in = {i: rest for i, rest in run_in.items() if i in found}
    references = [i for i, h in found.items() if _REFERENCES.match(h[1])]
    for i in references[:-1]:  # the last "References" is the list; earlier ones are in a table of contents
        del found[i]
    return found, skip, run_in


def _run_in_heading(lines: List[Line], i: int, last_level: int, roman_seen: bool):
    """(number, title, level, the paragraph's text after it) for a heading set at the start of a
    paragraph's first line in bold or italic ("1) Method: The ..." in IEEEtran under roman sections,
    a bold "Method The ..." in LNCS); None otherwise. It sits one level below the heading before it (at
    most 3), so a document must have one. (layout.py keeps an italic lead only when it starts with a
    number: italics alone mark emphasis.)"""
    line = lines[i]
    lead = line.lead
    after = lines[i + 1] if i + 1 < len(lines) else None
    # the paragraph's text laid out as a box of its own beside a wholly styled line: the line is the lead
    text_beside = after is not None and after.page == line.page and abs(after.top - line.top) < 1.5 \
        and 0 <= after.x0 - line.x1 <= 3 * max(line.size, 1.0) and not (after.lead or after.bold or after.italic)
    if not last_level or not lead or (lead == line.text and not text_beside) or not line.text.startswith(lead) \
            or _CAPTION.match(lead):
        return None
    prev = lines[i - 1] if i else None
    if prev is not None and prev.box == line.box and not prev.text.rstrip().endswith((".", "?", "!", ":")):
        return None  # the paragraph before goes on: a styled word inside it
    match = re.match(r"^(?:(\d{1,2})\)\s*|(\d{1,2}(?:\.\d{1,2}){0,2})\.?\s+)?(.+?)[.:]?$", lead)
    number = match.group(1) or match.group(2)
    title = match.group(3).strip()
    if not _title_like(title) or len(title.split()) > 10 or _KEYWORDS.match(title) \
            or re.match(r"(?:fig(?:ure)?\.?|table)\s+[A-Z]\.\d", title, re.IGNORECASE):
        return None
    words = title.split()
    if not number and (len(words) < 2 and not lead.endswith((".", ":")) or title.isupper()
                       or any(not w[:1].isupper() for w in words if len(w) > 3)):
        return None  # a name set in bold at a paragraph's start ("TIMP is ..."), not a title-cased heading
    if match.group(1) and not roman_seen:
        return None  # "1)" is IEEE's third level, under "IV." and "A."
    level = MAX_LEVEL if match.group(1) else min(MAX_LEVEL, last_level + 1)
    rest = line.text[len(lead):].strip()
    return number, title, level, rest


def _third_level_under_letters(lines: List[Line], i: int, found: dict):
    """(number, title, 3) for a third-level heading numbered "1." under lettered subsections (I. / A. / 1.,
    as REVTeX and other APS/AIP classes set them): a text box of one line with space below it,
    wholly in italics or bold but not set apart enough for `_heading_at`, whose number goes on from the
    heading before it — 1 right after an "A."-style subsection, one more than the third-level heading
    before. The count of numbers cannot give this level; the numbering tells it from a list's item."""
    line = lines[i]
    match = _THIRD_UNDER_LETTERS.match(line.text)
    if match is None or not (line.italic or line.bold) or not found:
        return None
    prev = lines[i - 1] if i else None
    after = lines[i + 1] if i + 1 < len(lines) else None
    if (prev is not None and prev.box == line.box) or (after is not None and after.box == line.box):
        return None
    if not _space_between(line, after):
        # set in the run of the text: an italic line of a paragraph. (Only the space below counts: a class's
        # space above a heading may shrink to fill a column, the space after it does not.)
        return None
    number, title = match.group(1), match.group(2).strip()
    if not _title_like(title) or len(title.split()) > HEADING_MAX_WORDS:
        return None
    last_number, _, last_level = found[max(found)]
    if last_level == 2 and last_number and _LETTER.match(f"{last_number}. X"):
        expected = 1
    elif last_level == 3 and last_number and last_number.isdigit():
        expected = int(last_number) + 1
    else:
        return None
    return (number, title, MAX_LEVEL) if int(number) == expected else None


def _space_between(upper: Optional[Line], lower: Optional[Line]) -> bool:
    """White space of at least half a line between two consecutive lines, or a column or page between
    them (or no line at all)."""
    if upper is None or lower is None or upper.page != lower.page or lower.top < upper.bottom:
        return True
    return lower.top - upper.bottom >= 0.5 * max(upper.size, lower.size)


def _heading_at(lines: List[Line], i: int, body_size: float, roman_seen: bool):
    line = lines[i]
    prev = lines[i - 1] if i else None
    starts_block = prev is None or prev.box != line.box or prev.bold != line.bold or prev.size < line.size - 0.4
    styled = line.bold or line.size >= body_size + 0.9
    text = line.text
    words = text.split()
    if not starts_block or len(words) > HEADING_MAX_WORDS or _CAPTION.match(text):
        return None
    plain = text.replace(" ", "") if len(text) < 40 and all(len(w) == 1 for w in words) else text
    if _KNOWN_HEADING.match(plain) and (styled or plain.isupper() or _alone(lines, i)):
        return None, plain.rstrip(".:").strip(), 1
    heading = _numbered(text, styled, _alone(lines, i), roman_seen)
    if heading:
        return heading
    if line.size >= body_size + 1.4 and len(words) <= 10 and _title_like(text) and i > 0:
        return None, text, 1
    return None


def _contents(lines: List[Line], body_size: float) -> set:
    """The lines of a table of contents: from a "Contents" line to the heading that its first entry names
    (found again in the text); none when no entry comes again."""
    start = next((i for i, line in enumerate(lines) if re.fullmatch(r"(?:table of )?contents", line.text.lower())),
                 None)
    if start is None:
        return set()
    first = None
    for i in range(start + 1, len(lines)):
        heading = _heading_at(lines, i, body_size, roman_seen=True)
        if heading is None:
            continue
        if first is None:
            first = heading
        elif heading[:2] == first[:2]:
            return set(range(start, i))
    return set()


def _alone(lines: List[Line], i: int) -> bool:
    """The line is a text box of its own, or the next line starts in another style."""
    line = lines[i]
    after = lines[i + 1] if i + 1 < len(lines) else None
    return after is None or after.box != line.box or after.bold != line.bold


def _numbered(text: str, styled: bool, alone: bool, roman_seen: bool):
    for pattern, kind in ((_ARABIC, "arabic"), (_ROMAN, "roman"), (_LETTER, "letter")):
        match = pattern.match(text)
        if not match:
            continue
        number, title = match.group(1), match.group(2).strip()
        if kind == "letter" and not (roman_seen or styled):
            return None  # "A." is a subsection under roman sections, or an appendix set in bold
        # "IV. RESULTS" in capitals (IEEE's small capitals) is a heading even when its box goes on
        distinct = styled or (alone and (title.isupper() or kind != "arabic")) or (kind == "roman" and title.isupper())
        if not _title_like(title) or not distinct:
            return None
        if re.search(r"[:;]\s+[a-z]", title):
            return None  # "2 Dependencies: there are ...": a run-in label, not a heading
        if kind == "arabic":
            level = number.count(".") + 1
            if int(number.split(".")[0]) == 0 or level > MAX_LEVEL:
                return None
        elif kind == "roman":
            level = 1
        else:
            # IEEE's "A." under "IV." is level 2; an appendix "A.1" is numbered like "1.1"
            level = 2 if roman_seen else number.count(".") + 1
        return number, title, level
    return None


def _title_like(text: str) -> bool:
    """Starts with a capital, holds letters, does not end like a sentence or a clause."""
    letters = sum(c.isalpha() for c in text)
    return bool(text) and text[0].isupper() and letters >= 3 and letters >= len(text) * 0.5 \
        and not text.endswith((".", ",", ";")) and not _MATH.search(text)


# ---- body -------------------------------------------------------------------------------------------

def _fill(article: Article, lines: List[Line], front_end: int, headings: dict, skip: set, body_size: float,
          run_in: Optional[dict] = None) -> None:
    """Walk the lines after the front matter: abstract, sections and their blocks, references."""
    run_in = run_in or {}
    stack: List[Section] = []
    target = None  # where blocks go: "abstract", "preamble", a Section, or "references"
    pending: List[Line] = []
    reference_lines: List[Line] = []

    def flush():
        if not pending:
            return
        blocks = _blocks(pending, body_size)
        pending.clear()
        if target == "abstract":
            article.abstract.extend(b for b in blocks if b.kind == "paragraph")
            leftovers = [b for b in blocks if b.kind != "paragraph"]
            (stack[-1].blocks if stack else article.preamble).extend(leftovers)
        elif isinstance(target, Section):
            target.blocks.extend(blocks)
        else:
            article.preamble.extend(blocks)

    unheaded = _unheaded_references(lines, front_end, headings)
    for i in range(front_end, len(lines)):
        if i in skip:
            continue
        line = lines[i]
        if i == unheaded:
            flush()
            target = "references"
        abstract = _ABSTRACT.match(line.text)
        spaced = line.text.replace(" ", "").lower()
        if i in headings:
            number, title, level = headings[i]
            flush()
            if _ABSTRACT.match(title) and not stack and not article.abstract:
                target = "abstract"
                continue
            if _REFERENCES.match(title):
                target = "references"
                continue
            section = Section(title=title, level=level, number=number)
            while stack and stack[-1].level >= level:
                stack.pop()
            (stack[-1].sections if stack else article.sections).append(section)
            stack.append(section)
            target = section
            if run_in.get(i):
                pending.append(_replace_text(line, run_in[i]))
            continue
        if target == "references":
            reference_lines.append(line)
            continue
        if not stack and not article.abstract and target != "abstract" and (abstract or spaced == "abstract"):
            flush()
            target = "abstract"
            rest = abstract.group(1) if abstract else ""
            if rest:
                pending.append(_replace_text(line, rest))
            continue
        if target == "abstract" and _KEYWORDS.match(line.text):
            flush()
            target = "preamble"
        pending.append(line)
    flush()
    article.references = _references(reference_lines)


def _unheaded_references(lines: List[Line], front_end: int, headings: dict) -> Optional[int]:
    """Where a list of references without a heading starts (REVTeX's "[1] ..." at the end), if the
    document has no "References" heading: the last "[1]" line followed by "[2]" and "[3]" lines."""
    if any(_REFERENCES.match(h[1]) for h in headings.values()):
        return None
    starts = [i for i in range(front_end, len(lines)) if re.match(r"\[1\]\s?\S", lines[i].text)]
    if not starts:
        return None
    after = [line.text for line in lines[starts[-1]:]]
    if any(t.startswith("[2]") for t in after) and any(t.startswith("[3]") for t in after):
        return starts[-1]
    return None


def _replace_text(line: Line, text: str) -> Line:
    return dataclasses.replace(line, text=text)


def _is_caption(line: Line, body_size: float) -> bool:
    """"Figure 3:", "Fig. 3.", "TABLE II" alone, or a label set in bold or in smaller type; not a sentence
    of the text that opens with "Table 1 lists ..." or "Fig. 3 shows ..."."""
    match = _CAPTION.match(line.text)
    if not match:
        return False
    label = match.group(0).rstrip()
    return label[-1:] in ".:|" or match.end() >= len(line.text.rstrip()) or line.size <= body_size - 0.4 \
        or (bool(line.lead) and line.lead.startswith(label.split()[0]))


def _kind_of_start(line: Line, body_size: float) -> Optional[str]:
    """The kind of block a line opens, or None when it can go on the block before."""
    if _is_caption(line, body_size):
        return "caption"
    if line.size <= body_size - 0.7 and line.top > line.page_height * 0.55 and _FOOTNOTE_MARK.match(line.text) \
            and (len(re.findall(r"[^\W\d_]{3,}", line.text)) >= 3 or "http" in line.text):
        return "footnote"
    if _BULLET.match(line.text) or _ENUMERATED.match(line.text):
        return "item"
    if _is_equation(line.text):
        return "equation"
    return None


def _is_equation(text: str) -> bool:
    if len(text) > 120 or not _MATH.search(text):
        return False
    words = re.findall(r"[A-Za-z]{3,}", text)
    return bool(_EQ_NUMBER.search(text)) or len(" ".join(words)) < len(text) * 0.4


def _blocks(lines: List[Line], body_size: float) -> List[Block]:
    """Group a section's lines into blocks and join each block's lines into text."""
    right = {}
    for line in lines:
        right[line.box] = max(right.get(line.box, 0.0), line.x1)
    groups: List[Tuple[str, List[Line]]] = []
    for line in lines:
        start = _kind_of_start(line, body_size)
        current = groups[-1] if groups else None
        if current is None:
            groups.append((start or "paragraph", [line]))
            continue
        kind, members = current
        prev = members[-1]
        if start == "item":
            groups.append(("item", [line]))
        elif start in ("caption", "footnote", "equation"):
            if start == "equation" and kind == "equation" and prev.box == line.box:
                members.append(line)
            else:
                groups.append((start, [line]))
        elif kind in ("caption", "footnote", "equation"):
            # a caption or footnote goes on in its own box, in its own (small) size
            if kind != "equation" and (line.box == prev.box or (
                    kind == "footnote" and line.size <= body_size - 0.7 and line.page == prev.page)):
                members.append(line)
                continue
            # a paragraph that a footnote, caption or equation interrupted at a page or column break
            # goes on after it
            before = next((g for g in reversed(groups) if g[0] == "paragraph"), None)
            if before is not None and before is not groups[-1] and _continues(before[1][-1], line, right, body_size):
                before[1].append(line)
            else:
                groups.append(("paragraph", [line]))
        elif kind == "item" and prev.text.endswith((".", "!", "?")) and line.x0 <= members[0].x0 + 1 \
                and not line.text[:1].islower():
            groups.append(("paragraph", [line]))  # an item that ended: the text after the list goes on
        elif _continues(prev, line, right, body_size):
            members.append(line)
        else:
            groups.append(("paragraph", [line]))
    blocks: List[Block] = []
    for kind, members in groups:
        if kind == "paragraph" and members[0].size < body_size - 1.5:
            continue  # text inside figures and tables (axis labels, cells) in a small font
        text = _join(members)
        if not text:
            continue
        if kind == "item":
            text = _BULLET_MARK.sub("", text)
            if blocks and blocks[-1].kind == "list":
                blocks[-1].items.append(text)
                blocks[-1].text += "\n" + text
            else:
                blocks.append(Block(kind="list", text=text, items=[text]))
        elif kind == "paragraph":
            blocks.append(Block(kind="paragraph", text=text, sentences=split_sentences(text)))
        else:
            blocks.append(Block(kind=kind, text=text))
    return blocks


def _continues(prev: Line, line: Line, right: dict, body_size: float) -> bool:
    """Does `line` go on the paragraph that `prev` is in?"""
    ended = prev.text.endswith((".", "!", "?", ":", ".)", ".”", '."'))
    if prev.box != line.box:
        # a column or page break inside a paragraph: the text goes on mid-sentence
        if not ended and (line.text[:1].islower() or prev.text.endswith(("-", ",")) or line.text[:1].isdigit()):
            return True
        return not ended and line.page == prev.page and abs(line.size - prev.size) < 0.5 \
            and line.top - prev.bottom < prev.size * 1.2 and abs(line.x0 - prev.x0) < 2
    if abs(line.size - prev.size) > 1.0:
        return False
    indented = line.x0 > prev.x0 + max(line.size, 6) * 0.8
    short = prev.x1 < right[prev.box] - max(prev.size, 6) * 2.5
    gap = line.top - prev.bottom > max(prev.size, 6) * 0.9
    if ended and (indented or short or gap):
        return False
    return not (gap and line.text[:1].isupper() and ended)


def _join(lines: List[Line]) -> str:
    """Lines into one text: hyphenation at a line end undone when a lower-case word goes on."""
    text = ""
    for line in lines:
        piece = line.text
        if not text:
            text = piece
        elif re.search(r"[^\W\d]-$", text) and piece[:1].islower() and not re.search(r"-\w+-$", text):
            text = text[:-1] + piece
        else:
            text += " " + piece
    return text.strip()


# ---- references -------------------------------------------------------------------------------------

def _references(lines: List[Line]) -> List[str]:
    """One string per entry: split at "[12]" / "12." markers when most entries have them, else at
    hanging indentation (an entry's first line sits left of its continuation lines), else at a line
    that ends an entry ('.') with room left on it."""
    lines = [line for line in lines if not _CAPTION.match(line.text)]
    if not lines:
        return []
    marked = [line for line in lines if _REF_MARK.match(line.text)]
    entries: List[List[Line]] = []
    if len(marked) >= max(2, len(lines) // 6):
        for line in lines:
            if _REF_MARK.match(line.text) or not entries:
                entries.append([line])
            else:
                entries[-1].append(line)
    else:
        left = {}
        for line in lines:
            key = (line.page, line.x0 < 300)
            left[key] = min(left.get(key, line.x0), line.x0)
        hanging = sum(1 for line in lines if line.x0 > left[(line.page, line.x0 < 300)] + 4) >= len(lines) // 4
        right = {}
        for line in lines:
            right[line.box] = max(right.get(line.box, 0.0), line.x1)
        for line in lines:
            prev = entries[-1][-1] if entries else None
            if prev is None:
                new = True
            elif hanging:
                new = line.x0 <= left[(line.page, line.x0 < 300)] + 2
            else:
                new = prev.text.endswith(".") and (prev.x1 < right[prev.box] - 20 or prev.box != line.box)
            if new:
                entries.append([line])
            else:
                entries[-1].append(line)
    return [text for text in (_join(entry) for entry in entries) if text]
