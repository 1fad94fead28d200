"""Several labelled datasets read as one: training and evaluation over a mix, with a split per dataset.

A dataset is named on the command line as ``[NAME=]KIND:PATH`` (:func:`parse_spec`): KIND is ``wcxb`` (a
WCXB folder), ``simple`` (a folder holding labels.jsonl / labels.json, or the label file itself, whose
``file`` entries are relative to its folder or absolute) or ``snippets`` (the same, with weak labels from
must-keep / must-drop snippets: data.snippets). NAME, by default the folder's name (the label
file's stem when that is not labels.*), tags every page (``meta["dataset"]``) so that results are reported
per dataset and each dataset is split on its own (:func:`split_per_dataset`).

Licences decide what may train a shipped model: :data:`KNOWN_DATASETS` names the credit and licence of
the sets in ../shared/datasets by folder name, so that a model card lists every set it learnt from.
"""
from __future__ import annotations

import random
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from . import DatasetError, LabelledPage, words

__all__ = ["DatasetSpec", "KNOWN_DATASETS", "MIX_KINDS", "parse_spec", "load_dataset", "load_mixed",
           "split_per_dataset", "is_weak", "dataset_of", "credit_of", "credit_of_folder", "drop_title_line"]

MIX_KINDS = ("wcxb", "simple", "snippets")

# credit and licence of the shared main-content sets, by folder name ("trains" False: evaluation only)
KNOWN_DATASETS: Dict[str, dict] = {
    "wcxb-dev": {"name": "WCXB v1.0 development split", "credit": "WCXB, Murrough Foley, 2026, CC-BY-4.0",
                 "licence": "CC-BY-4.0", "trains": True},
    "fundus-news": {"name": "fundus parser test pages (flairNLP/fundus, commit 18da6e5)",
                    "credit": "fundus, Max Dallabetta, Conrad Dobberstein, Aaron Wey et al., 2023, MIT licence",
                    "licence": "MIT", "trains": True},
    "mozilla-readability": {"name": "Readability.js test pages (mozilla/readability, commit ab4027a)",
                            "credit": "Mozilla Readability.js test pages, Apache-2.0", "licence": "Apache-2.0",
                            "trains": True},
    "trafilatura-eval-pages": {"name": "trafilatura / go-trafilatura evaluation pages "
                                       "(markusmobius/content-extractor-benchmark, commit 466fdbe)",
                               "credit": "content-extractor-benchmark (Markus Mobius; adapted from Adrien "
                                         "Barbaresi's trafilatura evaluation), Apache-2.0",
                               "licence": "Apache-2.0", "trains": True},
    "dragnet": {"name": "Dragnet benchmark data (seomoz/dragnet_data)",
                "credit": "Dragnet data, Moz, Peters & Lecocq, WWW 2013, AGPL-3.0",
                "licence": "AGPL-3.0", "trains": False},
}

_SPEC = re.compile(r"^(?:(?P<name>[\w.-]+)=)?(?P<kind>[a-z]+):(?P<path>.+)$")


@dataclass(frozen=True)
class DatasetSpec:
    """One dataset of a mix: its report name, reader kind, folder, and (simple) label file."""

    name: str
    kind: str
    path: Path
    labels: Optional[Path] = None


def parse_spec(text: str) -> DatasetSpec:
    """``[NAME=]KIND:PATH`` as a DatasetSpec; ValueError saying what is wrong. PATH is not checked here."""
    m = _SPEC.match(text.strip())
    if not m:
        raise ValueError(f"{text!r}: expected [NAME=]KIND:PATH with KIND one of {', '.join(MIX_KINDS)}")
    kind, path = m["kind"], Path(m["path"])
    if kind not in MIX_KINDS:
        raise ValueError(f"{text!r}: unknown kind {kind!r} (a mix reads {', '.join(MIX_KINDS)})")
    labels = None
    if kind in ("simple", "snippets") and path.suffix in (".jsonl", ".json"):
        labels, path = path, path.parent
    default = labels.stem if labels is not None and labels.stem not in ("labels",) else path.name
    return DatasetSpec(name=m["name"] or default or kind, kind=kind, path=path, labels=labels)


def check_specs(specs: Sequence[DatasetSpec]) -> None:
    """ValueError for a folder or label file that is not there, or two datasets of one name (their rows
    would merge in the report)."""
    seen = set()
    for s in specs:
        if s.name in seen:
            raise ValueError(f"two datasets named {s.name!r}: name them apart with NAME=KIND:PATH")
        seen.add(s.name)
        if not s.path.is_dir():
            raise ValueError(f"{s.name}: {s.path} is not a dataset folder")
        if s.labels is not None and not s.labels.is_file():
            raise ValueError(f"{s.name}: {s.labels}: no such label file")


def _spread(items: list, limit: Optional[int]) -> list:
    if not limit or limit >= len(items):
        return list(items)
    return [items[(i * len(items)) // limit] for i in range(limit)]


def load_dataset(spec: DatasetSpec, limit: Optional[int] = None, stats: Optional[dict] = None):
    """The lazy page iterator of one dataset, each page tagged with the dataset's name; `limit`: an evenly
    spaced sample of its pages, chosen before any page is read. `stats`: a snippet set's counts
    (data.snippets.SnippetStats) go in stats[spec.name]."""
    if spec.kind == "wcxb":
        from . import wcxb

        it = wcxb.iter_pages(spec.path, _spread(wcxb.page_ids(spec.path), limit))
    else:
        from . import simple, snippets

        labels = spec.labels or simple.default_labels_file(spec.path)
        ids = None
        if limit:
            records = simple.load_labels(labels)
            ids = _spread([r["file"] if r.get("id") in (None, "") else str(r["id"]) for r in records], limit)
        if spec.kind == "snippets":
            counts = snippets.SnippetStats()
            if stats is not None:
                stats[spec.name] = counts
            it = snippets.iter_pages(spec.path, labels, ids, counts)
        else:
            it = simple.iter_pages(spec.path, labels, ids)
    for lp in it:
        lp.meta["dataset"] = spec.name
        yield lp


def load_mixed(specs: Sequence[DatasetSpec], progress: bool = True, limit: Optional[int] = None,
               stats: Optional[dict] = None) -> List[LabelledPage]:
    """Every page of every dataset, in the order given; `limit`: an evenly spaced sample of each; `stats`:
    each snippet set's counts by name (load_dataset)."""
    from tqdm import tqdm

    check_specs(specs)
    pages: List[LabelledPage] = []
    for spec in specs:
        some = list(tqdm(load_dataset(spec, limit, stats), desc=f"load {spec.name}", unit="page", disable=not progress,
                         leave=False))
        if not some:
            raise DatasetError(f"{spec.name}: no pages in {spec.labels or spec.path}")
        pages.extend(some)
    return pages


def dataset_of(lp) -> str:
    """The dataset name a mixed page carries ("" outside a mix)."""
    return (getattr(lp, "meta", None) or {}).get("dataset", "")


def credit_of(spec: DatasetSpec) -> dict:
    """Name, credit and licence of a dataset for a model card: the known set of that folder name, else
    the owner's terms."""
    folder = spec.path.name
    known = KNOWN_DATASETS.get(folder) or KNOWN_DATASETS.get(spec.name)
    base = known or {"name": spec.name, "credit": "", "licence": "as given by the dataset's owner", "trains": True}
    return {"name": spec.name, "kind": spec.kind, "path": str(spec.labels or spec.path),
            "dataset": base["name"], "credit": base["credit"], "licence": base["licence"],
            "may_train_a_shipped_model": base["trains"]}


def credit_of_folder(folder: Path) -> dict:
    """Name, credit and licence of a folder of unlabelled HTML the biLM pre-trains on, for a model card: the
    known set of that folder name, or of its parent's for a set's ``html/`` or ``pages/`` folder (where the
    shared sets keep their pages), else the owner's terms."""
    folder = Path(folder)
    names = [folder.name] + ([folder.parent.name] if folder.name in ("html", "pages") else [])
    known = next((KNOWN_DATASETS[n] for n in names if n in KNOWN_DATASETS), None)
    base = known or {"name": folder.name, "credit": "", "licence": "as given by the pages' owners", "trains": True}
    return {"path": str(folder), "dataset": base["name"], "credit": base["credit"], "licence": base["licence"],
            "may_train_a_shipped_model": base["trains"]}


def is_weak(lp) -> bool:
    """True for a page of weak labels (data.snippets): it has no reference text to score word-F1 on."""
    return bool((getattr(lp, "meta", None) or {}).get("weak"))


def _take_groups(names: Sequence[str], groups: Dict[str, List[int]], n: int, test_fraction: float,
                 val_fraction: float, test_groups: set, val_groups: set, n_test: int = 0, n_val: int = 0) -> None:
    """Give test, then validation, whole groups in `names`' order until each holds its share of `n` pages
    (`n_test`, `n_val`: pages they already hold)."""
    for g in names:
        if n_test < test_fraction * n:
            test_groups.add(g)
            n_test += len(groups[g])
        elif n_val < val_fraction * n:
            val_groups.add(g)
            n_val += len(groups[g])


def split_per_dataset(pages: Sequence, key: Callable, val_fraction: float, test_fraction: float, seed: int
                      ) -> Tuple[List[int], List[int], List[int]]:
    """Page indices (train, val, test). Each dataset's groups (`key`, the registrable domain) are shuffled
    with `seed` and cut on their own, so every dataset gives about `test_fraction` of its pages to test and
    `val_fraction` to validation; then a group that is test (or validation) in any dataset is so in every
    dataset, since some publishers recur across sets: a domain never sits on two sides.

    A dataset of weak labels (:func:`is_weak`) follows instead of leading: the fully labelled sets are split
    as if it were not there (adding it moves none of their pages), each of its groups that a labelled set
    already placed goes to that side, and only its other groups are shuffled and cut to fill its shares."""
    by_set: Dict[str, Dict[str, List[int]]] = {}
    weak_sets = set()
    for i, p in enumerate(pages):
        by_set.setdefault(dataset_of(p), {}).setdefault(key(p) or f"#{i}", []).append(i)
        if is_weak(p):
            weak_sets.add(dataset_of(p))
    test_groups, val_groups = set(), set()
    for name in sorted(set(by_set) - weak_sets):
        groups = by_set[name]
        names = sorted(groups)
        random.Random(f"{seed}:{name}").shuffle(names)
        n = sum(len(v) for v in groups.values())
        _take_groups(names, groups, n, test_fraction, val_fraction, test_groups, val_groups)
    val_groups -= test_groups
    placed = {g for name in set(by_set) - weak_sets for g in by_set[name]}
    for name in sorted(weak_sets):
        groups = by_set[name]
        n = sum(len(v) for v in groups.values())
        n_test = sum(len(v) for g, v in groups.items() if g in test_groups)
        n_val = sum(len(v) for g, v in groups.items() if g in val_groups)
        names = sorted(g for g in groups if g not in placed)
        random.Random(f"{seed}:{name}").shuffle(names)
        _take_groups(names, groups, n, test_fraction, val_fraction, test_groups, val_groups, n_test, n_val)
        placed.update(groups)
    train, val, test = [], [], []
    for i, p in enumerate(pages):
        g = key(p) or f"#{i}"
        (test if g in test_groups else val if g in val_groups else train).append(i)
    return train, val, test


def drop_title_line(reference: str, title: str, look: int = 3) -> str:
    """The reference without its headline, for sets whose reference starts with the title (dragnet): the
    first of its first `look` lines whose words (`\\w+`) lie at least 80 % in the page's <title>, as WCXB's,
    fundus's and Readability's references leave the headline out."""
    title_words = set(words(title))
    if not title_words:
        return reference
    lines = reference.split("\n")
    seen = 0
    for k, line in enumerate(lines):
        w = words(line)
        if not w:
            continue
        if sum(t in title_words for t in w) >= 0.8 * len(w):
            return "\n".join(lines[:k] + lines[k + 1:])
        seen += 1
        if seen >= look:
            break
    return reference
