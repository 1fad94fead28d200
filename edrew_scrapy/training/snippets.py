"""The snippet check: pages without a main-content reference, each with snippets a good extraction must keep
and snippets it must drop (trafilatura's evaluation, `with` / `without`; the trafilatura-eval-pages set).

A snippet counts as present in an extraction when its words (`\\w+`, lower-cased, as word-F1 reads text) occur
there in a row: extractors join their blocks with spaces or line breaks and keep or drop punctuation
differently, and trafilatura's own check (a plain substring test on its output) would count those differences.
As in that substring test, a snippet that starts (ends) with a word character may start (end) inside a word of
the text: the snippets were cut from the page's text, some inside a word ("ngaben gemäß" for "Angaben gemäß"),
and a run of Chinese or Japanese characters is one `\\w+` word. Both texts are read as a reader sees them,
without the serializer's invisible characters (soft hyphens are in some snippets, as in some extractors'
texts). Per extractor: the share of must-keep snippets kept and of must-drop snippets leaked (micro-averaged
over all snippets of a group), and trafilatura's precision, recall and F1 over snippets (kept = true positive,
must-keep missed = false negative, leaked = false positive).
"""
from __future__ import annotations

import json
import math
import re
from collections import defaultdict
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from ..data import LabelledPage, words
from ..data.snippets import SNIPPET_KEYS, padded_words
from ..serializer import INVISIBLE
from .evaluate import group_table, write_csv
from .peers import failure_counts, run_extractor

__all__ = ["SnippetResult", "snippets_of", "count_snippets", "evaluate_snippets", "summarize_snippets",
           "format_snippet_table", "write_snippet_report"]

_WORD_CHAR = re.compile(r"\w")


@dataclass
class SnippetResult:
    page_id: str
    group: str
    extractor: str
    keep: int     # must-keep snippets on the page (with words)
    kept: int
    drop: int     # must-drop snippets on the page (with words)
    leaked: int
    dataset: str = ""
    failed: str = ""  # a peer's failure on the page (peers.FAILURES), scored as its empty text


def snippets_of(lp: LabelledPage) -> Tuple[List[str], List[str]]:
    """(must-keep, must-drop) snippets of a page's label record (`with_snippets`, `without_snippets`; an
    absent key is no snippet). A snippet without a word cannot be found in any text and is left out."""
    record = lp.meta.get("record") or {}
    out = []
    for key in SNIPPET_KEYS:
        value = record.get(key) or []
        if not isinstance(value, list) or not all(isinstance(s, str) for s in value):
            raise ValueError(f"{lp.page_id}: {key} must be a list of strings")
        out.append([s for s in value if words(s)])
    return out[0], out[1]


def _needle(snippet: str) -> str:
    """The snippet's words, with a space on each side where the snippet's own text begins or ends a word."""
    snippet = INVISIBLE.sub("", snippet)
    left = "" if _WORD_CHAR.match(snippet) else " "
    right = "" if _WORD_CHAR.match(snippet[-1:]) else " "
    return left + " ".join(words(snippet)) + right


def count_snippets(text: str, snippets: Sequence[str]) -> int:
    """How many of `snippets` occur in `text`, word for word (see the module's docstring)."""
    padded = padded_words(text)
    return sum(_needle(s) in padded for s in snippets)


def evaluate_snippets(pages: Sequence[LabelledPage], extractors: Dict, progress: bool = True,
                      desc: str = "snippets") -> List[SnippetResult]:
    """Run every extractor on every page that has a snippet; one SnippetResult per (page, extractor)."""
    from tqdm import tqdm

    results = []
    for lp in tqdm(pages, desc=desc, unit="page", disable=not progress, leave=False):
        keep, drop = snippets_of(lp)
        if not keep and not drop:
            continue
        for name, extractor in extractors.items():
            text, _pred, failed = run_extractor(extractor, lp)
            results.append(SnippetResult(lp.page_id, lp.page_type_or_site, name, len(keep), count_snippets(text, keep),
                                         len(drop), count_snippets(text, drop), lp.meta.get("dataset", ""), failed))
    return results


def summarize_snippets(results: Iterable[SnippetResult]) -> List[dict]:
    """One row per (extractor, dataset) and (extractor, ALL): pages, snippets, the shares kept and leaked, and
    trafilatura's precision / recall / F1 over snippets."""
    buckets: Dict[Tuple[str, str], List[SnippetResult]] = defaultdict(list)
    for r in results:
        if r.dataset:
            buckets[(r.extractor, r.dataset)].append(r)
        buckets[(r.extractor, "ALL")].append(r)
    rows = []
    datasets = {r.dataset for r in results}
    for (extractor, group), rs in buckets.items():
        if group == "ALL" and len(datasets) == 1 and "" not in datasets:
            continue  # one dataset: its row is the ALL row
        keep, kept = sum(r.keep for r in rs), sum(r.kept for r in rs)
        drop, leaked = sum(r.drop for r in rs), sum(r.leaked for r in rs)
        p = kept / (kept + leaked) if kept + leaked else math.nan
        rec = kept / keep if keep else math.nan
        f = 2 * p * rec / (p + rec) if p + rec > 0 else (0.0 if p == p and rec == rec else math.nan)
        rows.append({"extractor": extractor, "group": group, "pages": len(rs), "keep": keep, "kept": kept,
                     "drop": drop, "leaked": leaked, "kept_share": rec,
                     "leaked_share": leaked / drop if drop else math.nan,
                     "precision": p, "recall": rec, "f1": f, **failure_counts(rs)})
    order = {e: i for i, e in enumerate(dict.fromkeys(r.extractor for r in results))}
    rows.sort(key=lambda row: (row["group"] == "ALL", row["group"], order.get(row["extractor"], 0)))
    return rows


def format_snippet_table(rows: Sequence[dict]) -> str:
    return group_table(rows, [("keep", "keep", 6, ""), ("kept", "kept_share", 8, ".3f"), ("drop", "drop", 6, ""),
                              ("leaked", "leaked_share", 8, ".3f"), ("P", "precision", 7, ".3f"),
                              ("R", "recall", 7, ".3f"), ("F1", "f1", 7, ".3f")])


def write_snippet_report(rows: Sequence[dict], results: Sequence[SnippetResult], out_dir, title: str = "",
                         settings: Optional[dict] = None) -> Dict[str, Path]:
    """snippets.json (title, settings, rows), snippets.csv (the rows) and snippet-pages.csv (per page) in out_dir."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"json": out / "snippets.json", "csv": out / "snippets.csv", "pages": out / "snippet-pages.csv"}
    with open(paths["json"], "w", encoding="utf-8") as f:
        # NaN (no must-drop snippet in a group) written as null: snippets.json stays standard JSON
        clean = [{k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in r.items()} for r in rows]
        json.dump({"title": title, "settings": settings or {}, "snippets": clean}, f, indent=1)
    write_csv(paths["csv"], list(rows[0].keys()) if rows else ["extractor", "group"], rows)
    write_csv(paths["pages"], SnippetResult.__dataclass_fields__, (asdict(r) for r in results))
    return paths
