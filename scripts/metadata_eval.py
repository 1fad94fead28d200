"""Headline, author, date and page type on WCXB dev: EDREW's metadata against trafilatura's, same pages.

Reads each page's HTML (what it declares, cached in --declared with trafilatura's metadata), scores with
the shipped model only the pages that declare no headline (where the heading nearest the kept content is
the next source: on every other page it changes nothing), and reads the cross-validated page types of
`edrew train-pagetype --predictions`. Metrics, per page
then averaged: headline word-F1 against `ground_truth.title` (every page; the benchmark's tokens: `\\w+`,
lower-case, multiset overlap); author word-F1 (the names joined) over the pages whose truth names an
author, and how often an author is given where the truth has none; date: the exact day over the pages
whose truth has `publish_date`, and how often a date is given where it has none.

    nice -n 10 python scripts/metadata_eval.py /work/shared/datasets/wcxb-dev --pagetypes output/pagetype-cv.jsonl
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import pickle
import re
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

import lxml.html

from edrew_scrapy import metadata
from edrew_scrapy.data import read_source
from edrew_scrapy.metadata import describe, headline_from_title, read_declared

_TOKEN = re.compile(r"\w+")


def word_f1(predicted: str, truth: str) -> float:
    p, t = Counter(_TOKEN.findall((predicted or "").lower())), Counter(_TOKEN.findall((truth or "").lower()))
    if not p or not t:
        return float(not p and not t)
    overlap = sum((p & t).values())
    if not overlap:
        return 0.0
    precision, recall = overlap / sum(p.values()), overlap / sum(t.values())
    return 2 * precision * recall / (precision + recall)


def trafilatura_metadata(html: str, url: str) -> dict:
    from trafilatura.metadata import extract_metadata

    try:
        doc = extract_metadata(html, default_url=url)
    except Exception:  # noqa: BLE001 - a page trafilatura cannot read counts as nothing found
        return {"headline": "", "author": "", "date": None}
    return {"headline": doc.title or "", "author": doc.author or "", "date": doc.date}


def read_pages(root: Path, today: dt.date, out: Path) -> dict:
    """Per page id: what it declares (metadata.read_declared), trafilatura's metadata, and htmldate's
    date with its extensive search; pickled to `out` (a cache of our own plain data) and read back."""
    if out.exists():
        with open(out, "rb") as f:
            return pickle.load(f)
    from edrew_scrapy.data.wcxb import load_truth, page_ids

    found = {}
    for page_id in page_ids(root):
        url = load_truth(root, page_id).get("url")
        html = read_source(root / "html" / f"{page_id}.html.gz").decode("utf-8", errors="replace")
        start = time.perf_counter()
        declared = read_declared(html, url=url, today=today)
        cost = time.perf_counter() - start
        markup_date = metadata._declared_date(declared, today)
        extensive = markup_date or metadata._htmldate(lxml.html.fromstring(html), url, today, True)
        found[page_id] = (declared, trafilatura_metadata(html, url), extensive, cost)
    with open(out, "wb") as f:
        pickle.dump(found, f, protocol=pickle.HIGHEST_PROTOCOL)
    return found


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root")
    parser.add_argument("--declared-only", action="store_true", help="make the --declared cache and stop")
    parser.add_argument("--declared", default="output/wcxb-dev-declared.pkl",
                        help="cache of what each page declares and trafilatura's metadata (made when missing)")
    parser.add_argument("--pagetypes", default=None, help="edrew train-pagetype --predictions FILE")
    parser.add_argument("--today", default="2026-11-27", help="the day dates may not pass (the crawl's day)")
    parser.add_argument("--rows", default=None, help="write each page's predictions and scores here (JSON lines)")
    args = parser.parse_args(argv)
    root = Path(args.root)
    today = dt.date.fromisoformat(args.today)
    pages = read_pages(root, today, Path(args.declared))
    if args.declared_only:
        return 0
    types = {}
    if args.pagetypes:
        for line in Path(args.pagetypes).read_text().splitlines():
            r = json.loads(line)
            types[r["id"]] = r
    scores: dict = {}
    costs = []
    out_rows = []

    def add(system, metric, value):
        scores.setdefault((system, metric), []).append(value)

    from edrew_scrapy.data.wcxb import load_truth, page_ids
    from edrew_scrapy.extract import extract
    from edrew_scrapy.model.scorer import load_model
    from edrew_scrapy.serializer import serialize

    scorer = load_model(None)
    for page_id in page_ids(root):
        record = load_truth(root, page_id)
        url, truth = record.get("url"), record.get("ground_truth") or {}
        kind = record["_internal"]["page_type"]["primary"]
        declared, theirs, extensive, cost = pages[page_id]
        page = extraction = None
        if not (metadata._prop(metadata._primary_items(declared.items), "headline", "name")
                or declared.og.get("og:title") or declared.meta.get("twitter:title")):
            page = serialize(read_source(root / "html" / f"{page_id}.html.gz"), encoding="utf-8", url=url)
            extraction = extract([page], scorer=scorer)[0] if page.nodes else None
            add("edrew", "pages scored", 1.0)
        start = time.perf_counter()
        ours = describe(declared, page, extraction, url=url, today=today)
        costs.append(cost + time.perf_counter() - start)
        markup_date = metadata._declared_date(declared, today)
        if page_id in types and types[page_id]["predicted"] in metadata.EXTENSIVE_DATE_TYPES:
            # page_metadata's rule, with the page type cross-validated by domain
            ours.date_published = extensive
        variants = {
            "edrew": ours.headline or "",
            "title-stripped": headline_from_title(declared.title, ours.site_name, None),
            "og:title": declared.og.get("og:title", ""),
        }
        if page is not None:
            add("heading near region, pages declaring no headline", "headline",
                word_f1(metadata._heading_near_region(page, extraction), truth["title"] or ""))
            add("title stripped, pages declaring no headline", "headline",
                word_f1(headline_from_title(declared.title, ours.site_name, None, declared.headings),
                        truth["title"] or ""))
            add("edrew, pages declaring no headline", "headline", word_f1(ours.headline or "", truth["title"] or ""))
        for name, value in variants.items():
            add(name, "headline", word_f1(value, truth["title"] or ""))
        add("trafilatura", "headline", word_f1(theirs["headline"], truth["title"] or ""))
        no_bylines = describe(declared, page, extraction, url=url, today=today, bylines=False)
        for name, system in (("edrew", ours), ("edrew, no byline authors", no_bylines)):
            if truth.get("author"):
                add(name, "author", word_f1(", ".join(system.author), truth["author"]))
            else:
                add(name, "author-where-none", float(bool(system.author)))
        if truth.get("author"):
            add("trafilatura", "author", word_f1(theirs["author"], truth["author"]))
        else:
            add("trafilatura", "author-where-none", float(bool(theirs["author"])))
        for name, value in (("edrew", ours.date_published),
                            ("edrew, htmldate markup only", declared.date_published),
                            ("trafilatura", (theirs["date"] or "")[:10] or None),
                            ("edrew, declared dates only", markup_date), ("edrew, htmldate extensive", extensive)):
            if truth.get("publish_date"):
                add(name, "date", float(value == str(truth["publish_date"])[:10]))
            else:
                add(name, "date-where-none", float(bool(value)))
        if page_id in types:
            add("edrew", "page type", float(types[page_id]["predicted"] == kind))
        out_rows.append({"id": page_id, "type": kind, "truth": truth, "edrew": ours.fields(),
                         "trafilatura": theirs, "skipped": list(ours.skipped)})
    if args.rows:
        Path(args.rows).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in out_rows))
    metrics = ["headline", "author", "author-where-none", "date", "date-where-none", "page type"]
    systems = ["edrew", "trafilatura", "title-stripped", "og:title", "edrew, pages declaring no headline",
               "heading near region, pages declaring no headline", "title stripped, pages declaring no headline",
               "edrew, no byline authors", "edrew, declared dates only", "edrew, htmldate markup only",
               "edrew, htmldate extensive"]
    print("| system | " + " | ".join(metrics) + " |")
    print("|---|" + "---|" * len(metrics))
    for system in systems:
        cells = []
        for metric in metrics:
            values = scores.get((system, metric))
            cells.append(f"{statistics.fmean(values):.3f} ({len(values)})" if values else "")
        print(f"| {system} | " + " | ".join(cells) + " |")
    print(f"\npages scored (no declared headline): {len(scores.get(('edrew', 'pages scored'), []))}")
    costs.sort()
    print(f"\nEDREW metadata cost per page (read_declared + describe, without the page type; CPU shared): mean "
          f"{1000 * statistics.fmean(costs):.1f} ms, median {1000 * costs[len(costs) // 2]:.1f} ms, "
          f"p95 {1000 * costs[int(len(costs) * 0.95)]:.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
