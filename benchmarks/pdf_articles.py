"""What edrew_scrapy.pdf reads from a folder of PDFs, and how fast, on one core (CPU time).

    python benchmarks/pdf_articles.py ../shared/datasets/pdf-papers [--xml OUT_DIR] [--libraries]

Prints one row per PDF (pages, title found, authors, year, sections and their levels, sentences,
references, whether the XML validates against the shipped schema, CPU seconds) and the pages per CPU
second over all of them. --libraries first times the layout libraries alone on the same files, each
when installed: pdfminer.six (characters, lines and boxes with font sizes; what the package uses), pypdf's
text extraction with its visitor (text runs with their matrix and font size, no lines or boxes),
pdfplumber's words with font name and size (pdfminer.six underneath, its own word grouping, no boxes), and
PyMuPDF's text dictionary (blocks, lines and spans with font, size and flags; AGPL, so measured only).
"""
from __future__ import annotations

import argparse
import io
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from edrew_scrapy.pdf import PdfError, parse_pdf, schema_path, to_xml  # noqa: E402


def pdfminer_layout(data: bytes) -> int:
    from pdfminer.high_level import extract_pages
    from pdfminer.layout import LAParams

    return sum(1 for _ in extract_pages(io.BytesIO(data), laparams=LAParams()))


def pypdf_text(data: bytes) -> int:
    from pypdf import PdfReader

    reader = PdfReader(io.BytesIO(data))
    for page in reader.pages:
        page.extract_text(visitor_text=lambda *args: None)
    return len(reader.pages)


def pdfplumber_words(data: bytes) -> int:
    import pdfplumber

    with pdfplumber.open(io.BytesIO(data)) as pdf:
        for page in pdf.pages:
            page.extract_words(extra_attrs=["fontname", "size"])
        return len(pdf.pages)


def pymupdf_dict(data: bytes) -> int:
    import pymupdf

    with pymupdf.open(stream=data, filetype="pdf") as pdf:
        for page in pdf:
            page.get_text("dict")
        return pdf.page_count


def compare_libraries(files) -> None:
    for name, function in (("pdfminer.six", pdfminer_layout), ("pypdf", pypdf_text),
                           ("pdfplumber", pdfplumber_words), ("PyMuPDF", pymupdf_dict)):
        try:
            function(files[0].read_bytes())
        except ImportError:
            print(f"{name}: not installed, skipped")
            continue
        pages, seconds, errors = 0, 0.0, 0
        for path in files:
            start = time.process_time()
            try:
                pages += function(path.read_bytes())
            except Exception:  # a library that cannot read a file: counted, as the package would skip it
                errors += 1
            seconds += time.process_time() - start
        print(f"{name}: {pages} pages in {seconds:.1f} s CPU, {pages / seconds:.1f} pages/s, {errors} errors")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--xml", type=Path, help="also write each PDF's XML here")
    parser.add_argument("--libraries", action="store_true", help="time the layout libraries alone first")
    args = parser.parse_args()
    from lxml import etree

    files = sorted(args.folder.glob("*.pdf"))
    if not files:
        print(f"no .pdf files in {args.folder}", file=sys.stderr)
        return 2
    if args.libraries:
        compare_libraries(files)
    schema = etree.RelaxNG(etree.parse(str(schema_path())))
    if args.xml:
        args.xml.mkdir(parents=True, exist_ok=True)
    print("| PDF | pages | title | authors | year | sections (by level) | sentences | references | valid XML | CPU s |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    total_pages, total_seconds = 0, 0.0
    for path in files:
        start = time.process_time()
        try:
            article = parse_pdf(path.read_bytes())
        except PdfError as exc:
            print(f"| {path.name} | skipped ({exc.reason}) | | | | | | | | |")
            continue
        data = to_xml(article, source=path.name)
        seconds = time.process_time() - start
        total_pages += article.pages
        total_seconds += seconds
        if args.xml:
            (args.xml / f"{path.stem}.xml").write_bytes(data)
        valid = schema.validate(etree.fromstring(data))
        sections = article.all_sections()
        levels = Counter(s.level for s in sections)
        by_level = " / ".join(str(levels[level]) for level in (1, 2, 3))
        print(f"| {path.name} | {article.pages} | {'yes' if article.title else 'no'} | {len(article.authors)} | "
              f"{article.year or ''} | {len(sections)} ({by_level}) | {article.sentence_count()} | "
              f"{len(article.references)} | {'yes' if valid else 'NO'} | {seconds:.2f} |")
    print(f"\n{total_pages} pages in {total_seconds:.1f} s CPU: {total_pages / total_seconds:.1f} pages/s on one core")
    return 0


if __name__ == "__main__":
    sys.exit(main())
