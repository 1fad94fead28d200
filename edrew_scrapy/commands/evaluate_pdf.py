"""`edrew evaluate --dataset pdf DIR`: PDF article parsers scored on a labelled set, targets beside them.

DIR holds NAME.pdf and NAME.json pairs (the truth; `python -m edrew_scrapy.pdf.corpus DIR` makes them).
Prints one table over all documents and one per layout, and writes summary.json and documents.csv
under --out (default output/evaluate-pdf). The metrics are edrew_scrapy.training.pdf_evaluate's.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
from pathlib import Path

from .options import CommandError, UsageError, check_dataset


def run_pdf(args: argparse.Namespace) -> int:
    from ..training import pdf_evaluate as pe

    folder = Path(check_dataset(args))
    names = [n.strip() for n in args.pdf_parsers.split(",") if n.strip()]
    unknown = [n for n in names if n not in pe.PARSERS]
    if not names or unknown:
        raise UsageError(f"--pdf-parsers: unknown {', '.join(unknown) or '(none given)'}; "
                         f"choose from {', '.join(pe.PARSERS)}")
    layouts = [x.strip() for x in args.layouts.split(",")] if args.layouts else None
    if not pe.load_set(folder):
        raise CommandError(f"no labelled PDFs in {folder} (expected NAME.pdf with NAME.json; make them with "
                           "python -m edrew_scrapy.pdf.corpus DIR)")
    results = pe.evaluate_folder(folder, {n: pe.PARSERS[n] for n in names}, layouts)
    if not any(results.values()):
        raise CommandError(f"no document of layout(s) {args.layouts} in {folder}")
    summaries = {n: pe.summarize(rows) for n, rows in results.items()}
    print(f"pdf: {len(next(iter(results.values())))} documents in {folder} (our parser: pdfminer.six layout "
          "+ edrew_scrapy.pdf rules; peer: pdfminer.six plain text + regex)")
    print(pe.format_table(summaries))
    by_layout = sorted({r["layout"] for rows in results.values() for r in rows})
    per_layout = {}
    for layout in by_layout:
        per_layout[layout] = {n: pe.summarize([r for r in rows if r["layout"] == layout])
                              for n, rows in results.items()}
        print(f"\nlayout {layout}")
        print(pe.format_table(per_layout[layout]))
    errors = [(n, r["name"], r["error"]) for n, rows in results.items() for r in rows if "error" in r]
    for name, doc, error in errors:
        print(f"edrew evaluate: {name} failed on {doc}: {error}")
    out = Path(args.out or os.path.join("output", "evaluate-pdf"))
    out.mkdir(parents=True, exist_ok=True)
    (out / "summary.json").write_text(json.dumps({"targets": pe.TARGETS, "all": summaries, "layouts": per_layout},
                                                 indent=1) + "\n", encoding="utf-8")
    with open(out / "documents.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["parser", "document", "layout", "headings_matched", "headings_predicted",
                         "headings_reference", "paragraphs_matched", "paragraphs_reference", "boundaries_matched",
                         "boundaries_predicted", "boundaries_reference", "title", "authors", "kept_out",
                         "footnotes_captions", "error"])
        for name, rows in results.items():
            for r in rows:
                writer.writerow([name, r["name"], r["layout"], *r["headings"], *r["paragraphs"], *r["sentences"],
                                 r["title"], r["authors"], *r["kept_out"], r.get("error", "")])
    print(f"\nwrote {out / 'summary.json'} and {out / 'documents.csv'}")
    return 0
