"""Evaluation of extractors on labelled pages: node-level P/R/F1 and page-level word-F1.

Metrics
- node P/R/F1 (the dissertation's metric): micro-averaged over all test nodes of a group.
- word P/R/F1 (WCXB's metric): `\\w+` tokens lower-cased, multiset overlap between the extracted text
  and the page's reference text, computed per page and averaged over pages.

Extractors are callables `(LabelledPage) -> (text, node predictions or None)`. Text-only extractors
(trafilatura, readability) get node predictions by aligning their text to the page's nodes with the
same rules that label WCXB, so that their node-level numbers are comparable.
"""
from __future__ import annotations

import csv
import json
import math
from collections import defaultdict
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np

from ..data import LabelledPage, read_source
from ..data.align import align_reference, word_f1
from .peers import failure_counts, run_extractor

__all__ = [
    "PageResult", "node_counts", "prf", "word_f1", "reference_text", "predicted_text",
    "oracle_extractor", "all_nodes_extractor", "trafilatura_extractor", "trafilatura_comments_extractor",
    "readability_extractor",
    "scorer_extractor", "ScoresOnce", "paired_differences", "predictor_extractor", "evaluate_pages", "summarize",
    "format_table", "write_report",
]

Extractor = Callable[[LabelledPage], Tuple[str, Optional[Sequence[int]]]]


@dataclass
class PageResult:
    page_id: str
    group: str
    extractor: str
    word_p: float
    word_r: float
    word_f1: float
    tp: int
    fp: int
    fn: int
    nodes: int
    dataset: str = ""  # the dataset of a mix (data.mix), else empty
    failed: str = ""  # a peer's failure on the page (peers.FAILURES), scored as its empty text


def node_counts(y_true: Sequence[int], y_pred: Sequence[int]) -> Tuple[int, int, int]:
    """(true positives, false positives, false negatives) over aligned node labels."""
    t = np.asarray(y_true, dtype=bool)
    p = np.asarray(y_pred, dtype=bool)
    if t.shape != p.shape:
        raise ValueError(f"{t.shape[0]} labels but {p.shape[0]} predictions")
    return int((t & p).sum()), int((~t & p).sum()), int((t & ~p).sum())


def prf(tp: int, fp: int, fn: int) -> Tuple[float, float, float]:
    """Precision, recall, F1; an empty prediction on an empty truth is perfect."""
    if tp + fp + fn == 0:
        return 1.0, 1.0, 1.0
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def reference_text(lp: LabelledPage) -> str:
    """What a page-level extraction is compared with: WCXB's main content, SWDE's attribute values,
    else the text of the labelled nodes."""
    if "main_content" in lp.meta:
        return lp.meta["main_content"] or ""
    if "values" in lp.meta:
        return "\n".join(v for vals in lp.meta["values"].values() for v in vals)
    return lp.relevant_text


def predicted_text(lp: LabelledPage, pred: Sequence[int]) -> str:
    return "\n".join(n.content for n, y in zip(lp.page.nodes, pred) if y)


def _html(lp: LabelledPage) -> str:
    data = read_source(lp.meta["source"])
    return data.decode(lp.page.encoding or "utf-8", "replace")


def oracle_extractor(lp: LabelledPage):
    """The labels themselves: the ceiling of any node classifier on this serialization."""
    return lp.relevant_text, list(lp.labels)


def all_nodes_extractor(lp: LabelledPage):
    """Every node: the page's whole serialized text, the recall ceiling the serializer leaves."""
    return "\n".join(n.content for n in lp.page.nodes), [1] * len(lp.page.nodes)


def trafilatura_extractor(lp: LabelledPage):
    import trafilatura

    return trafilatura.extract(_html(lp)) or "", None


def trafilatura_comments_extractor(lp: LabelledPage):
    """trafilatura's reader comments (include_comments=True keeps them apart from its text): the peer of the
    model's `comments` against a separated comments reference (edrew evaluate --reference-field)."""
    import trafilatura

    document = trafilatura.bare_extraction(_html(lp), include_comments=True)
    return (getattr(document, "comments", None) or "") if document is not None else "", None


def readability_extractor(lp: LabelledPage):
    import lxml.html
    from readability import Document

    try:
        summary = Document(_html(lp)).summary()
        root = lxml.html.fromstring(summary)
    except Exception:  # readability raises on pages it cannot parse; that page extracts nothing
        return "", None
    # itertext joined by spaces: text_content() glues "end.</p><p>Next" into one token
    return " ".join(t.strip() for t in root.itertext() if t.strip()), None


def predictor_extractor(predict: Callable) -> Extractor:
    """Wrap `predict(page) -> 0/1 per node` (a fitted baseline, say) as an extractor."""
    def run(lp: LabelledPage):
        pred = [int(v) for v in predict(lp.page)]
        return predicted_text(lp, pred), pred
    return run


def scorer_extractor(scorer, threshold: Optional[float] = None, rules_off: Sequence[str] = (),
                     comments: bool = False) -> Extractor:
    """Our model: the nodes extract() keeps, by extract()'s own decision (the model's threshold, capped on
    each page for a main-content model, unless `threshold` is given), with the rules.OPTIONAL_RULES named in
    `rules_off` left out; with `comments`, the page's reader comments (Extraction.comments) instead. Give
    several extractors one `ScoresOnce(scorer)` and each page is scored once for all of them."""
    from ..extract import extract

    def run(lp: LabelledPage):
        [result] = extract([lp.page], scorer=scorer, threshold=threshold, rules_off=rules_off)
        kept = {n.index for n in (result.comments if comments else result.nodes)}
        pred = [int(i in kept) for i in range(len(lp.page.nodes))]
        return predicted_text(lp, pred), pred
    return run


class ScoresOnce:
    """A scorer that scores the same pages once: the extractors of one model that differ only in their
    decision rules (`edrew evaluate --rules-off`, `--comments`) run one after another on each page."""

    def __init__(self, scorer):
        self._scorer = scorer
        self._key: Optional[tuple] = None
        self._scores = None

    def __getattr__(self, name):
        return getattr(self._scorer, name)

    def score(self, pages, **kwargs):
        key = (tuple(id(p) for p in pages), tuple(sorted(kwargs.items(), key=lambda kv: kv[0])))
        if key != self._key:
            self._key, self._scores = None, None  # a scoring that raises leaves nothing stale
            self._scores = self._scorer.score(pages, **kwargs)
            self._key = key
        return self._scores


def paired_differences(results: Iterable[PageResult], base: str, other: str) -> List[dict]:
    """Per group (as `summarize` groups: a dataset, and its page types as "DATASET/type") and over ALL: `other`
    minus `base` word-F1 on the same pages, its mean, its standard error (sample standard deviation /
    sqrt(pages)) and the pages up / down by more than 1e-9."""
    results = [r for r in results if r.extractor in (base, other)]
    types: Dict[str, set] = defaultdict(set)
    for r in results:
        types[r.dataset].add(r.group)
    by: Dict[Tuple[str, str, str], Dict[str, float]] = defaultdict(dict)
    for r in results:
        by[(r.dataset, r.group, r.page_id)][r.extractor] = r.word_f1
    groups: Dict[str, List[float]] = defaultdict(list)
    for (dataset, group, _page), f in by.items():
        if base in f and other in f:
            d = f[other] - f[base]
            names = [group] if not dataset else [dataset] + ([f"{dataset}/{group}"] if len(types[dataset]) > 1 else [])
            for name in names + ["ALL"]:
                groups[name].append(d)
    rows = []
    for group, diffs in sorted(groups.items(), key=lambda kv: (kv[0] == "ALL", kv[0])):
        a = np.asarray(diffs, dtype=np.float64)
        se = float(a.std(ddof=1) / math.sqrt(len(a))) if len(a) > 1 else math.nan
        rows.append({"base": base, "other": other, "group": group, "pages": len(a), "mean": float(a.mean()),
                     "se": se, "up": int((a > 1e-9).sum()), "down": int((a < -1e-9).sum())})
    return rows


def evaluate_pages(pages: Sequence[LabelledPage], extractors: Dict[str, Extractor],
                   progress: bool = True, desc: str = "evaluate") -> List[PageResult]:
    """Run every extractor on every page; one PageResult per (page, extractor)."""
    from tqdm import tqdm

    results = []
    for lp in tqdm(pages, desc=desc, unit="page", disable=not progress, leave=False):
        ref = reference_text(lp)
        texts = [n.content for n in lp.page.nodes]
        for name, extractor in extractors.items():
            text, pred, failed = run_extractor(extractor, lp)
            if pred is None:
                pred = align_reference(texts, text).labels
            wp, wr, wf = word_f1(text, ref)
            tp, fp, fn = node_counts(lp.labels, pred)
            results.append(PageResult(lp.page_id, lp.page_type_or_site, name, wp, wr, wf, tp, fp, fn,
                                      len(texts), lp.meta.get("dataset", ""), failed))
    return results


def summarize(results: Iterable[PageResult]) -> List[dict]:
    """One row per (extractor, group) plus an "ALL" group: pages, mean word P/R/F1, micro node P/R/F1. Results
    of a mix of datasets give one row per dataset and, where a dataset holds several groups (page types),
    per "DATASET/group" as well: each dataset's own numbers, never only the pooled ones."""
    results = list(results)
    types: Dict[str, set] = defaultdict(set)
    for r in results:
        types[r.dataset].add(r.group)
    buckets: Dict[Tuple[str, str], List[PageResult]] = defaultdict(list)
    for r in results:
        if not r.dataset:
            buckets[(r.extractor, r.group)].append(r)
        else:
            buckets[(r.extractor, r.dataset)].append(r)
            if len(types[r.dataset]) > 1:
                buckets[(r.extractor, f"{r.dataset}/{r.group}")].append(r)
        buckets[(r.extractor, "ALL")].append(r)
    rows = []
    for (extractor, group), rs in buckets.items():
        tp, fp, fn = (sum(getattr(r, k) for r in rs) for k in ("tp", "fp", "fn"))
        p, r_, f = prf(tp, fp, fn)
        rows.append({
            "extractor": extractor, "group": group, "pages": len(rs),
            "word_p": _mean(r.word_p for r in rs), "word_r": _mean(r.word_r for r in rs),
            "word_f1": _mean(r.word_f1 for r in rs),
            "node_p": p, "node_r": r_, "node_f1": f, "tp": tp, "fp": fp, "fn": fn, **failure_counts(rs),
        })
    order = {e: i for i, e in enumerate(dict.fromkeys(r.extractor for r in results))}
    rows.sort(key=lambda row: (row["group"] == "ALL", row["group"], order.get(row["extractor"], 0)))
    return rows


def _mean(values: Iterable[float]) -> float:
    vals = list(values)
    return sum(vals) / len(vals) if vals else math.nan


def format_table(rows: Sequence[dict]) -> str:
    return group_table(rows, [("word_P", "word_p", 8, ".3f"), ("word_R", "word_r", 8, ".3f"),
                              ("word_F1", "word_f1", 8, ".3f"), ("node_P", "node_p", 8, ".3f"),
                              ("node_R", "node_r", 8, ".3f"), ("node_F1", "node_f1", 8, ".3f")])


def group_table(rows: Sequence[dict], columns: Sequence[Tuple[str, str, int, str]]) -> str:
    """A text table of summary rows: group, extractor, pages, then each (header, key, width, format spec)."""
    # the group column as wide as its longest name ("mozilla-readability/article"), 15 at least
    g = max([15, *(len(str(r["group"])) for r in rows)]) + 1
    e = max([13, *(len(str(r["extractor"])) for r in rows)]) + 1
    columns = [("pages", "pages", 6, ""), *columns]
    header = f"{'group':<{g}}{'extractor':<{e}}" + "".join(f"{name:>{w}}" for name, _, w, _ in columns)
    lines = [header, "-" * len(header)]
    for r in rows:
        lines.append(f"{r['group']:<{g}}{r['extractor']:<{e}}"
                     + "".join(format(r[key], f">{w}{spec}") for _, key, w, spec in columns))
    return "\n".join(lines)


def write_csv(path, fieldnames: Sequence[str], rows: Iterable[dict]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(fieldnames))
        w.writeheader()
        w.writerows(rows)


def write_report(rows: Sequence[dict], results: Sequence[PageResult], out_dir, title: str = "",
                 settings: Optional[dict] = None) -> Dict[str, Path]:
    """summary.json, summary.csv, pages.csv and chart.png (word-F1 and node-F1 per group) in out_dir; no
    chart when there are no rows."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"json": out / "summary.json", "csv": out / "summary.csv", "pages": out / "pages.csv",
             "chart": out / "chart.png"}
    with open(paths["json"], "w", encoding="utf-8") as f:
        json.dump({"title": title, "settings": settings or {}, "summary": list(rows)}, f, indent=1)
    write_csv(paths["csv"], list(rows[0].keys()) if rows else ["extractor", "group"], rows)
    write_csv(paths["pages"], PageResult.__dataclass_fields__, (asdict(r) for r in results))
    if rows:
        plot_rows(rows, paths["chart"], title)
    else:  # nothing was scored (no extractor, no model trained): no chart, and no stale one left behind
        paths.pop("chart").unlink(missing_ok=True)
    return paths


def plot_rows(rows: Sequence[dict], path, title: str = "") -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = list(dict.fromkeys(r["group"] for r in rows))
    extractors = list(dict.fromkeys(r["extractor"] for r in rows))
    by = {(r["group"], r["extractor"]): r for r in rows}
    width_in = min(16.0, max(6.0, 0.3 * len(groups) * max(1, len(extractors))))
    fig, axes = plt.subplots(2, 1, figsize=(width_in, 7), sharex=True)
    width = 0.8 / max(1, len(extractors))
    x = np.arange(len(groups))
    for ax, metric, label in ((axes[0], "word_f1", "word F1 (mean per page)"),
                              (axes[1], "node_f1", "node F1 (micro)")):
        for k, e in enumerate(extractors):
            vals = [by[(g, e)][metric] if (g, e) in by else 0.0 for g in groups]
            ax.bar(x + (k - (len(extractors) - 1) / 2) * width, vals, width, label=e)
        ax.set_ylabel(label)
        ax.set_ylim(0, 1)
        ax.grid(axis="y", alpha=0.3)
    axes[0].legend(ncol=min(len(extractors), 8), fontsize=8, loc="lower center", bbox_to_anchor=(0.5, 1.0),
                   frameon=False)
    axes[1].set_xticks(x)
    axes[1].set_xticklabels(groups, rotation=30, ha="right")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
