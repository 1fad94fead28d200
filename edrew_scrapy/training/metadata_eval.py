"""Page metadata against labelled sets: headline, author, date and page type, next to trafilatura's.

What `edrew evaluate --metadata` runs. Each page is serialised and described as a crawl describes it
(metadata.page_metadata); its fields are scored against what the set labels:

- headline: word-F1 against the labelled title (`\\w+` tokens, lower-case, multiset overlap, as WCXB
  scores text);
- author: word-F1 of the names joined, over the pages that name an author, and the share of the pages
  labelled with none that are given one anyway (lower is better);
- date: the exact day of the publication date over the pages labelled with one, and the share of the
  pages labelled undated that are given one anyway (lower is better);
- page type: accuracy. On a set with pages of several types (WCXB) the classifier is trained again for
  each of k folds by registrable domain and each page classified by weights that never saw its
  domain; on a set of one type (fundus: all articles) the shipped classifier, which never saw it.

A field a set does not label is not scored on it (fundus labels only the title). WCXB: `ground_truth.title,
author, publish_date` and `_internal.page_type.primary`; the simple format: `title` (or `headline`),
`author` (a string or a list), `publish_date` (or `date_published`), `page_type`, each only where the
record has the key. Pure: no Scrapy.
"""
from __future__ import annotations

import datetime as _dt
import json
import statistics
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence

from ..data import domain_of, read_source, registrable_domain, words

__all__ = ["MetaRecord", "METRICS", "evaluate_metadata", "format_metadata_table", "read_records", "score_page",
           "summarize_metadata", "word_f1"]

# metric -> (label in the table, higher is better)
METRICS = {
    "headline": ("headline word-F1", True),
    "author": ("author word-F1", True),
    "author_where_none": ("author where none", False),
    "date": ("date exact day", True),
    "date_where_none": ("date where none", False),
    "page_type": ("page type accuracy", True),
}


@dataclass
class MetaRecord:
    """One labelled page. A field is None where the set does not label it; "" (author, date) where the
    set says the page has none."""

    page_id: str
    dataset: str
    source: Path
    url: Optional[str] = None
    encoding: Optional[str] = None
    group: str = ""
    headline: Optional[str] = None
    author: Optional[str] = None
    date: Optional[str] = None
    page_type: Optional[str] = None

    @property
    def domain(self) -> str:  # data.splits.by_domain reads page.group, then page.domain
        return domain_of(self.url)


def word_f1(predicted: str, truth: str) -> float:
    """Word-F1 of two texts (WCXB's tokens); 1.0 when both are empty."""
    p, t = Counter(words(predicted)), Counter(words(truth))
    if not p or not t:
        return float(not p and not t)
    overlap = sum((p & t).values())
    if not overlap:
        return 0.0
    precision, recall = overlap / sum(p.values()), overlap / sum(t.values())
    return 2 * precision * recall / (precision + recall)


def _label_text(value) -> str:
    """A label's value as text; "" for null (labelled: none)."""
    if value is None:
        return ""
    if isinstance(value, list):
        return ", ".join(str(v) for v in value if isinstance(v, (str, int, float)))
    return str(value) if isinstance(value, (str, int, float)) else ""


def _labelled(record: Dict, *keys: str) -> Optional[str]:
    """The first of `keys` the record has, as text; None when it has none (the set does not label it)."""
    for key in keys:
        if key in record:
            return _label_text(record[key])
    return None


def read_records(kind: str, path, name: str, labels=None, limit: Optional[int] = None) -> List[MetaRecord]:
    """The labelled pages of one dataset (`kind` "wcxb" or "simple"); `limit`: an evenly spaced sample."""
    path = Path(path)
    records: List[MetaRecord] = []
    if kind == "wcxb":
        from ..data import wcxb

        for page_id in wcxb.page_ids(path):
            truth = wcxb.load_truth(path, page_id)
            gt = truth.get("ground_truth") if isinstance(truth.get("ground_truth"), dict) else {}
            kind_ = ((truth.get("_internal") or {}).get("page_type") or {}).get("primary")
            records.append(MetaRecord(
                page_id=page_id, dataset=name, source=wcxb._html_path(path, page_id), url=truth.get("url"),
                encoding="utf-8", headline=_label_text(gt.get("title")), author=_label_text(gt.get("author")),
                date=(_label_text(gt.get("publish_date")) or "")[:10], page_type=kind_ or None))
    else:
        from ..data import simple

        for r in simple.load_labels(labels or simple.default_labels_file(path)):
            page_id = r["file"] if r.get("id") in (None, "") else str(r["id"])

            date = _labelled(r, "publish_date", "date_published")
            records.append(MetaRecord(
                page_id=page_id, dataset=name, source=path / r["file"], url=r.get("url") or None,
                encoding=r.get("encoding"), group=r.get("group") or "", headline=_labelled(r, "title", "headline"),
                author=_labelled(r, "author", "authors"), date=date[:10] if date is not None else None,
                page_type=r.get("page_type") or None))
    if limit and limit < len(records):
        records = [records[(i * len(records)) // limit] for i in range(limit)]
    return records


def score_page(record: MetaRecord, fields: Dict, system: str) -> Dict[str, float]:
    """The metrics of one page's fields (`Metadata.fields()`-shaped: headline, author list, date_published,
    page_type) against its record; metrics the record does not label are absent."""
    out: Dict[str, float] = {}
    if record.headline is not None:
        out["headline"] = word_f1(fields.get("headline") or "", record.headline)
    authors = fields.get("author") or []
    given = ", ".join(authors) if isinstance(authors, list) else str(authors)
    if record.author is not None:
        if record.author:
            out["author"] = word_f1(given, record.author)
        else:
            out["author_where_none"] = float(bool(given.strip()))
    day = (fields.get("date_published") or "")[:10] or None
    if record.date is not None:
        if record.date:
            out["date"] = float(day == record.date)
        else:
            out["date_where_none"] = float(bool(day))
    if record.page_type is not None and fields.get("page_type") is not None and system != "trafilatura":
        out["page_type"] = float(fields["page_type"] == record.page_type)
    return out


def trafilatura_fields(html: str, url: Optional[str]) -> Dict:
    """trafilatura's metadata (trafilatura.metadata.extract_metadata) in our fields' shape."""
    from trafilatura.metadata import extract_metadata

    try:
        doc = extract_metadata(html, default_url=url)
    except Exception:  # noqa: BLE001 - a page trafilatura cannot read counts as nothing found
        doc = None
    if doc is None:
        return {"headline": None, "author": [], "date_published": None}
    return {"headline": doc.title or None, "author": [doc.author] if doc.author else [],
            "date_published": (doc.date or "")[:10] or None}


def page_type_classifiers(records: Sequence[MetaRecord], pages: Sequence, folds: int, seed: int,
                          group_key: Callable, shipped, declared: Optional[Sequence] = None) -> List:
    """Per record, the classifier that types it: on a set with several page types, one trained per fold
    by `group_key` without the record's group (scikit-learn; the scaling, C and domain threshold of the
    shipped weights' card: where it lists C candidates, the one inner folds choose inside the fold's
    training pages, as `edrew train-pagetype` chose it) on the features of its page and `declared` (each
    page's metadata.Declared, as page_metadata reads it); otherwise `shipped`."""
    kinds = {r.page_type for r in records if r.page_type}
    if len(kinds) < 2:
        return [shipped] * len(records)
    from ..data.splits import group_kfold
    from ..pagetype import PageTypeClassifier, page_features

    card = (shipped.card.get("card") or {}) if shipped is not None else {}
    c, min_domains = float(card.get("c", 0.01)), int(card.get("min_domains", 10))
    candidates = [float(x) for x in card.get("c_candidates") or [c]]
    scaling = str(card.get("scaling", "std"))
    forum_domains = int(card.get("forum_domains", 0))  # "forum" only with forum evidence (pagetype.forum_evidence)
    feats = [page_features(p, declared=d) for p, d in zip(pages, declared or [None] * len(pages))]
    groups = [group_key(r) for r in records]
    labelled = [i for i, r in enumerate(records) if r.page_type]
    out: List = [shipped] * len(records)
    splits = group_kfold([records[i] for i in labelled], folds, key=group_key, seed=seed)
    for fold, (train, test) in enumerate(splits, 1):
        train = [labelled[i] for i in train]
        # a feature counts when this many of the fold's domains have it: the shipped recipe's threshold,
        # lowered on a set too small for it (a quarter of the fold's domains) so that some feature is left
        needed = min(min_domains, max(1, len({groups[i] for i in train}) // 4))
        if len({records[i].page_type for i in train}) < 2:
            raise ValueError(f"{records[0].dataset}: fold {fold} of the page type's cross-validation has pages "
                             "of one type only to train on (too few pages or domains for --folds)")
        fold_c = c
        if len(candidates) > 1:
            from ..pagetype import choose_c

            fold_c, _ = choose_c([feats[i] for i in train], [records[i].page_type for i in train],
                                 [groups[i] for i in train], candidates, min_pages=needed, scaling=scaling,
                                 forum_domains=forum_domains)
        spec = _fit(feats, records, train, groups, fold_c, needed, scaling, forum_domains)
        classifier = PageTypeClassifier(spec, f"{records[0].dataset} fold {fold}")
        for i in test:
            out[labelled[i]] = classifier
    return out


def _fit(feats, records, train, groups, c, min_domains, scaling="std", forum_domains=0):
    from ..pagetype import fit_spec

    return fit_spec([feats[i] for i in train], [records[i].page_type for i in train], c=c, min_pages=min_domains,
                    groups=[groups[i] for i in train], scaling=scaling, forum_domains=forum_domains)


@dataclass
class MetaResult:
    """One page's fields and metrics per system, and the CPU time of our metadata."""

    record: MetaRecord
    fields: Dict[str, Dict] = field(default_factory=dict)
    scores: Dict[str, Dict[str, float]] = field(default_factory=dict)
    cpu_ms: float = 0.0
    date_candidates: Any = None   # ours: dates.Candidates, what the date chooser picks from
    date_fold: Optional[int] = None  # the fold whose chooser dated the page (cross-validated sets)


def evaluate_metadata(records: Sequence[MetaRecord], *, systems: Iterable[str] = ("edrew", "trafilatura"),
                      folds: int = 5, seed: int = 1, group_by: str = "domain", scorer_loader: Callable = None,
                      shipped_classifier=None, today: Optional[_dt.date] = None,
                      progress: bool = False, date_chooser=None, date_l2: float = 1.0,
                      date_none_margin: Optional[float] = None) -> List[MetaResult]:
    """Each record's metadata by `systems` and its scores. `scorer_loader()` gives the model that scores a
    page only where it has no `<title>` (the heading nearest the kept content is then the headline's
    source); None: no page is scored. `date_chooser`: None, the rules' publication day; a dates.DateChooser
    or "cv", a chooser cross-validated on sets that label dates (choose_dates; the given chooser's `l2` and
    `none_margin`, with "cv" `date_l2` and `date_none_margin`), elsewhere that one (with "cv", the rules')."""
    from tqdm import tqdm

    from ..metadata import declared_of, page_metadata, read_tree
    from ..serializer import serialize

    systems = list(systems)
    sources = [read_source(r.source) for r in records]
    # as a crawl does it, the declared metadata is read from the serializer's tree: that CPU time is the
    # metadata's (`read_cpu`, added to each page's below)
    read_cpu: List[float] = []

    def timed_read_tree(*args):
        start = time.process_time()
        try:
            return read_tree(*args)
        finally:
            read_cpu[-1] += time.process_time() - start

    pages = []
    for data, r in zip(sources, records):
        read_cpu.append(0.0)
        pages.append(serialize(data, encoding=r.encoding, url=r.url,
                               tree_reader=timed_read_tree if "edrew" in systems else None))
    classifiers = [None] * len(records)
    if "edrew" in systems:
        for dataset in dict.fromkeys(r.dataset for r in records):  # each set on its own
            idx = [i for i, r in enumerate(records) if r.dataset == dataset]
            # what each page declares is a feature of its type: as page_metadata reads it below, from the
            # serializer's tree where that was read, else from the page
            declared = [declared_of(pages[i], sources[i], encoding=records[i].encoding, url=records[i].url)
                        for i in idx]
            typed = page_type_classifiers([records[i] for i in idx], [pages[i] for i in idx], folds, seed,
                                          _group(group_by), shipped_classifier, declared)
            for i, classifier in zip(idx, typed):
                classifiers[i] = classifier
    scorer = None
    results = []
    read_for = _chooser_reading(date_chooser)
    for record, data, page, classifier, reading in tqdm(list(zip(records, sources, pages, classifiers, read_cpu)),
                                                        desc="metadata", unit="page", disable=not progress,
                                                        leave=False):
        result = MetaResult(record)
        if "edrew" in systems:
            extraction = None
            if not page.title and page.nodes and scorer_loader is not None:
                from ..extract import extract

                scorer = scorer or scorer_loader()
                extraction = extract([page], scorer=scorer)[0]
            start = time.process_time()
            # the rules' day and every candidate as the chooser reads them (htmldate where it dates the page);
            # its pick is made below, cross-validated
            meta = page_metadata(data, page, extraction, classifier, encoding=record.encoding, url=record.url,
                                 today=today, date_chooser=read_for)
            result.cpu_ms = 1000 * (time.process_time() - start + reading)
            result.fields["edrew"] = meta.fields()
            result.date_candidates = meta.date_candidates
        if "trafilatura" in systems:
            result.fields["trafilatura"] = trafilatura_fields(data.decode(page.encoding or "utf-8", "replace"),
                                                              record.url)
        results.append(result)
    if "edrew" in systems and date_chooser is not None:
        shipped = None if date_chooser == "cv" else date_chooser
        # the shipped chooser's recipe, cross-validated
        l2 = float(shipped.card.get("l2", date_l2)) if shipped is not None else date_l2
        margin = shipped.none_margin if shipped is not None else date_none_margin
        choose_dates(results, shipped, folds, seed, _group(group_by), l2, margin)
    for result in results:
        result.scores = {name: score_page(result.record, f, name) for name, f in result.fields.items()}
    return results


def choose_dates(results: Sequence[MetaResult], shipped, folds: int, seed: int, group_key: Callable,
                 l2: float = 1.0, none_margin: Optional[float] = None) -> None:
    """Our publication days picked by a learned chooser instead of the rules: on a set whose pages label
    dates (dated and undated) over at least `folds` groups, each page by a chooser trained (dates.fit_chooser)
    on the other folds' pages, the folds by `group_key` as the page type's; elsewhere by `shipped` (a
    dates.DateChooser; None: the rules' day stays)."""
    from ..data.splits import group_kfold
    from ..dates import DateChooser

    for dataset in dict.fromkeys(r.record.dataset for r in results):
        mine = [r for r in results if r.record.dataset == dataset and r.date_candidates is not None]
        labelled = [r for r in mine if r.record.date is not None]
        if len({group_key(r.record) for r in labelled}) >= folds and any(r.record.date for r in labelled):
            splits = group_kfold([r.record for r in mine], folds, key=group_key, seed=seed)
            for fold, (train, test) in enumerate(splits, 1):
                spec = fit_chooser_on([mine[i] for i in train], l2, none_margin)
                chooser = DateChooser(spec, f"{dataset} fold {fold}")
                for i in test:
                    mine[i].fields["edrew"]["date_published"] = chooser.choose(mine[i].date_candidates)
                    mine[i].date_fold = fold
        else:  # the shipped chooser, else (with "cv") the rules' day
            for r in mine:
                found = r.date_candidates
                r.fields["edrew"]["date_published"] = shipped.choose(found) if shipped is not None else found.rules


def format_date_folds(results: Sequence[MetaResult]) -> str:
    """Per set whose publication days were cross-validated, the exact day and the share of undated pages
    given a day in each fold, the rules' beside the chooser's (a Markdown table; "" where none was)."""
    lines = []
    for dataset in dict.fromkeys(r.record.dataset for r in results):
        mine = [r for r in results if r.record.dataset == dataset and r.date_fold is not None]
        for fold in sorted({r.date_fold for r in mine}):
            dated = [r for r in mine if r.date_fold == fold and r.record.date]
            undated = [r for r in mine if r.date_fold == fold and r.record.date == ""]
            cells = [dataset, str(fold), str(len(dated))]
            for rows, test in ((dated, lambda r, day: day == r.record.date), (undated, lambda r, day: day is not None)):
                for day in (lambda r: r.date_candidates.rules, lambda r: r.fields["edrew"]["date_published"]):
                    cells.append(f"{statistics.fmean(test(r, day(r)) for r in rows):.3f}" if rows else "")
                if rows is dated:
                    cells.append(str(len(undated)))
            lines.append("| " + " | ".join(cells) + " |")
    if not lines:
        return ""
    return ("| dataset | fold | dated | exact day, rules | exact day, chooser | undated | date where none, rules ↓ "
            "| date where none, chooser ↓ |\n|" + "---|" * 8 + "\n" + "\n".join(lines))


def _chooser_reading(date_chooser):
    """What page_metadata is handed so that it reads the candidates the chooser sees (htmldate's day on the
    page types the chooser dates): the shipped chooser, with "cv" one of no weights on articles and forum
    threads (dates.CHOSEN_TYPES; every pick is made again by choose_dates), with None nothing."""
    from ..dates import CHOSEN_TYPES, FEATURE_VERSION, FORMAT, DateChooser

    if date_chooser == "cv":
        return DateChooser({"format": FORMAT, "feature_version": FEATURE_VERSION, "features": [], "weights": [],
                            "page_types": list(CHOSEN_TYPES)}, "cross-validated")
    return date_chooser


def fit_chooser_on(results: Sequence[MetaResult], l2: float = 1.0, none_margin: Optional[float] = None) -> Dict:
    """dates.fit_chooser on the pages of `results` that label a date (dated or undated)."""
    from ..dates import fit_chooser

    return fit_chooser([(r.date_candidates, r.record.date) for r in results if r.record.date is not None], l2=l2,
                       none_margin=none_margin)


def _group(group_by: str) -> Callable:
    """A record's split key: the group its set names, else its host's registrable domain ("domain") or
    its host ("host"); a page without a URL is a group of its own."""
    def of(record: MetaRecord) -> str:
        if record.group:
            return record.group
        host = record.domain
        if not host:
            return f"{record.dataset}/{record.page_id}"
        return registrable_domain(host) if group_by == "domain" else host
    return of


def summarize_metadata(results: Sequence[MetaResult]) -> List[Dict]:
    """One row per dataset and system: pages, each metric's mean and the pages it is over, and (ours) the
    CPU time per page."""
    rows = []
    datasets = list(dict.fromkeys(r.record.dataset for r in results))
    for dataset in datasets:
        mine = [r for r in results if r.record.dataset == dataset]
        systems = list(dict.fromkeys(name for r in mine for name in r.scores))
        for system in systems:
            row: Dict = {"dataset": dataset, "system": system, "pages": len(mine)}
            for metric in METRICS:
                values = [r.scores[system][metric] for r in mine if metric in r.scores.get(system, {})]
                row[metric] = round(statistics.fmean(values), 4) if values else None
                row[metric + "_pages"] = len(values)
            if system == "edrew":
                cpu = sorted(r.cpu_ms for r in mine)
                row["cpu_ms_mean"] = round(statistics.fmean(cpu), 2)
                row["cpu_ms_median"] = round(statistics.median(cpu), 2)
            rows.append(row)
    return rows


def format_metadata_table(rows: Sequence[Dict]) -> str:
    """The summary as a Markdown table: a value and, in brackets, the pages it is over."""
    head = ["dataset", "system", "pages"] + [label + (" ↓" if not up else "") for label, up in METRICS.values()]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in rows:
        cells = [row["dataset"], row["system"], str(row["pages"])]
        for metric in METRICS:
            value = row.get(metric)
            cells.append("" if value is None else f"{value:.3f} ({row[metric + '_pages']})")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def write_metadata_report(rows: Sequence[Dict], results: Sequence[MetaResult], out: Path, settings: Dict) -> Dict:
    """summary.json (rows and settings) and pages.jsonl (each page's fields and scores) under `out`."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    summary = out / "metadata-summary.json"
    summary.write_text(json.dumps({"settings": settings, "rows": list(rows)}, indent=1, ensure_ascii=False,
                                  default=str) + "\n", encoding="utf-8")
    pages = out / "metadata-pages.jsonl"
    with open(pages, "w", encoding="utf-8") as f:
        for r in results:
            rec = r.record
            f.write(json.dumps({"dataset": rec.dataset, "id": rec.page_id, "url": rec.url,
                                "truth": {"headline": rec.headline, "author": rec.author, "date": rec.date,
                                          "page_type": rec.page_type},
                                "fields": r.fields, "scores": r.scores, "cpu_ms": round(r.cpu_ms, 3)},
                               ensure_ascii=False) + "\n")
    return {"summary": summary, "pages": pages}
