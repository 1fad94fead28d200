"""Section headings of pymupdf4llm's Markdown beside edrew_scrapy.pdf's, on the labelled LaTeX set.

    python benchmarks/pdf_headings_pymupdf4llm.py output/pdf-labelled

Issue #37 names pymupdf4llm's Markdown headings as a peer. PyMuPDF is AGPL, so the project does not ship
or depend on it: install it by hand (`pip install pymupdf4llm`) to run this. A Markdown heading's level
is its count of `#` less the fewest `#` among the document's headings after the title, plus one; its
leading number ("IV.", "A.", "2.1", "1)") is cut off, as the truth's titles carry none. Prints, per
parser, headings F1 over (title words, level) as `edrew evaluate` counts it, F1 over title words alone
(levels aside), and CPU seconds.
"""
from __future__ import annotations

import argparse
import re
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from edrew_scrapy.pdf import parse_pdf  # noqa: E402
from edrew_scrapy.training.pdf_evaluate import f1, load_set, words  # noqa: E402

_NUMBER = re.compile(r"^(?:(?:\d{1,2}\.){0,2}\d{1,2}[.)]?|[IVX]{1,5}\.|[A-H](?:\.\d{1,2}){0,2}\.)\s+")


def markdown_headings(path: Path, title: str) -> list:
    import pymupdf4llm

    found = []
    for line in pymupdf4llm.to_markdown(str(path), show_progress=False).splitlines():
        match = re.match(r"^(#{1,6})\s+(.*)$", line)
        if match:
            text = re.sub(r"[*_`]", "", match.group(2)).strip()
            found.append((len(match.group(1)), _NUMBER.sub("", text)))
    if found and words(found[0][1]) == words(title):
        found = found[1:]
    top = min((hashes for hashes, _ in found), default=1)
    return [(" ".join(words(text)), hashes - top + 1) for hashes, text in found]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    args = parser.parse_args()
    try:
        import pymupdf4llm  # noqa: F401
    except ImportError:
        print("pymupdf4llm is not installed (pip install pymupdf4llm; AGPL, not a dependency)", file=sys.stderr)
        return 2
    counts = {name: Counter() for name in ("edrew", "pymupdf4llm")}
    seconds = Counter()
    for pdf, truth in load_set(args.folder):
        ref = Counter((" ".join(words(s["title"])), s["level"]) for s in truth["sections"])
        start = time.process_time()
        ours = [(" ".join(words(s.title)), s.level) for s in parse_pdf(pdf.read_bytes()).all_sections()]
        seconds["edrew"] += time.process_time() - start
        start = time.process_time()
        theirs = markdown_headings(pdf, truth["title"])
        seconds["pymupdf4llm"] += time.process_time() - start
        for name, pred in (("edrew", Counter(ours)), ("pymupdf4llm", Counter(theirs))):
            titles_pred = Counter(t for t, _ in pred.elements())
            titles_ref = Counter(t for t, _ in ref.elements())
            counts[name].update(tp=sum((pred & ref).values()), pred=sum(pred.values()), ref=sum(ref.values()),
                                title_tp=sum((titles_pred & titles_ref).values()))
    print("| parser | headings F1 (title, level) | headings F1 (title only) | CPU s |")
    print("|---|---|---|---|")
    for name, c in counts.items():
        print(f"| {name} | {f1(c['tp'], c['pred'], c['ref']):.3f} | {f1(c['title_tp'], c['pred'], c['ref']):.3f} | "
              f"{seconds[name]:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
