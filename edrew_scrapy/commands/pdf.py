"""`edrew pdf FILE.pdf... -o OUT_DIR`: one XML document per PDF (structure and sentences; docs/pdf.md).

Each PDF gives OUT_DIR/<its name without .pdf>.xml (a name taken twice gets -2, -3, ...). A file that
cannot be read, is no PDF, is encrypted, broken or has no text layer costs one line on stderr
("edrew pdf: FILE: skipped (REASON): ...") and is counted; the exit status is 2 only when every input
failed, else 0. The closing line on stderr counts written and skipped files by reason.
"""
from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("inputs", nargs="+", metavar="FILE.pdf", help="PDF files")
    parser.add_argument("-o", "--out", required=True, type=Path, help="folder for the .xml files (made if missing)")
    parser.add_argument("--max-pages", type=int, default=0, help="read at most this many pages of each PDF (0: all)")


def run(args: argparse.Namespace) -> int:
    from ..escape import printable
    from ..pdf import PdfError, parse_pdf, to_xml

    args.out.mkdir(parents=True, exist_ok=True)
    used: Counter = Counter()
    skipped: Counter = Counter()
    written = 0
    for source in args.inputs:
        try:
            data = Path(source).read_bytes()
            article = parse_pdf(data, max_pages=args.max_pages or None)
        except PdfError as exc:
            skipped[exc.reason] += 1
            print(f"edrew pdf: {printable(source)}: skipped ({exc.reason}): {printable(exc)}", file=sys.stderr)
            continue
        except OSError as exc:
            skipped["unreadable"] += 1
            print(f"edrew pdf: {printable(source)}: skipped (unreadable): {printable(exc.strerror or exc)}",
                  file=sys.stderr)
            continue
        stem = Path(source).stem or "article"
        used[stem] += 1
        name = stem if used[stem] == 1 else f"{stem}-{used[stem]}"
        (args.out / f"{name}.xml").write_bytes(to_xml(article, source=Path(source).name))
        written += 1
    reasons = ", ".join(f"{n} {reason}" for reason, n in sorted(skipped.items()))
    print(f"edrew pdf: {written} written to {args.out}, {sum(skipped.values())} skipped"
          + (f" ({reasons})" if reasons else ""), file=sys.stderr)
    return 2 if written == 0 else 0
