"""A page's publication day: the days its markup, URL and text give, and the one chosen among them.

metadata.py reads what a page declares (`datePublished`, `<meta>` dates), its URL's day and htmldate's;
this module reads the days the page's text shows (`shown_days`: each with its node, its cue, "Published"
or "Updated", and whether it sits in a short dateline by the first `<h1>`), applies the fixed rules
(`rules_day`: a day shown as the publication, else the declared day where the page shows it, else the
one dateline by the `<h1>`), and gathers every distinct day with what speaks for it (`candidates`).

A learned chooser (`DateChooser`, models/default/dates.json, written by `edrew train-dates`) scores each
candidate and a "no date" option with a linear model over named features (its sources, how many agree,
cues, position, whether it is the latest or earliest day, the page's type): a conditional logistic
regression, plain JSON, never a pickle. It dates the page types the file names (article and forum thread),
the rules' day stands elsewhere, and it leaves a page undated only where the rules do (unless the file
sets a `none_margin`). Without the file the rules' day stands.

Pure: no Scrapy, numpy only.
"""
from __future__ import annotations

import datetime as _dt
import json
import math
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

import numpy as np

from .pagetype import PAGE_TYPES

__all__ = ["FEATURES", "FILE_NAME", "FORMAT", "Candidates", "DateChooser", "DateChooserError", "candidates",
           "default_chooser", "fit_chooser", "page_shown", "rules_day", "shown_decides", "shown_days"]

MIN_YEAR = 1990  # a day before it, or in the future, is dropped wherever it comes from (metadata.py too)
FORMAT = "edrew-dates"
FEATURE_VERSION = 1
FILE_NAME = "dates.json"

_MONTHS = {name: i for i, names in enumerate(
    ("jan january", "feb february", "mar march", "apr april", "may", "jun june", "jul july", "aug august",
     "sep sept september", "oct october", "nov november", "dec december"), 1) for name in names.split()}
_MONTH = r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?" \
         r"|nov(?:ember)?|dec(?:ember)?)\.?"
# "March 9, 2026", "Dec. 18th 2025", "9 March 2026", "24 Apr 2000", "2025-02-22": the days a page's text shows
_SHOWN_DAY = re.compile(rf"\b(?:{_MONTH}\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+((?:19|20)\d\d)"
                        rf"|(\d{{1,2}})(?:st|nd|rd|th)?\s+{_MONTH},?\s+((?:19|20)\d\d)"
                        r"|((?:19|20)\d\d)-(\d\d)-(\d\d))\b", re.I)
SHOWN_DATE_NODES = 200    # the first nodes of a page read for the days it shows
SHOWN_DATE_NEAR = 20      # nodes before or after the first <h1> where a dateline is looked for
SHOWN_DATE_CHARS = 60     # a dateline is a short text ("Updated Dec 4, 2025 · 5 min read")
_SHOWN_TEXT_CHARS = 160   # longer texts are paragraphs: their dates are what they tell, not their own

# "Published", "Originally posted on:", right before a day
_PUBLISHED_CUE = re.compile(r"(?<!last )\b(?:published|posted)(?:\s+on)?\s*:?\s*$", re.I)  # not "Last published"
# "Updated", "Last updated on:", "Modified", "Reviewed", right before a day
_UPDATED_CUE = re.compile(r"\b(?:updated|modified|revised|reviewed)(?:\s+on)?\s*:?\s*$", re.I)

# the page types a trained chooser dates (fit_chooser): most of WCXB's dated pages; elsewhere the rules' day
CHOSEN_TYPES = ("article", "forum")
# where a candidate day comes from (metadata.py names the declared ones)
SOURCES = ("declared", "created", "modified", "meta", "meta_modified", "url", "htmldate", "near", "near_published",
           "near_updated", "published", "shown", "updated", "rules")
FEATURES = tuple(f"src:{s}" for s in SOURCES) + (
    "agree", "shown_count", "h1_distance", "first_position", "latest", "earliest", "gap", "one_day_off", "only",
    "declared_shown", "article:rules", "article:near", "article:declared",
) + ("none", "none:declared", "none:rules", "none:candidates", "none:url_or_declared", "none:probability",
     "none:declares_article") + tuple(f"none:type:{t}" for t in PAGE_TYPES)
_INDEX = {name: i for i, name in enumerate(FEATURES)}


class DateChooserError(ValueError):
    """A dates.json that cannot be used: names the file and what is wrong."""


def shown_days(text: str, today: Optional[_dt.date], positions: bool = False) -> List:
    """The ISO days written in `text` in English or ISO form, within [MIN_YEAR, today] (with `positions`,
    (where each starts, the day))."""
    out: List = []
    if "19" not in text and "20" not in text:  # each of _SHOWN_DAY's forms holds a year: not tried at every position
        return out
    for m in _SHOWN_DAY.finditer(text):
        g = m.groups()
        try:
            if g[0]:
                day = _dt.date(int(g[2]), _MONTHS[g[0].lower()], int(g[1]))
            elif g[3]:
                day = _dt.date(int(g[5]), _MONTHS[g[4].lower()], int(g[3]))
            else:
                day = _dt.date(int(g[6]), int(g[7]), int(g[8]))
        except (KeyError, ValueError):
            continue
        if MIN_YEAR <= day.year and day <= (today or _dt.date.today()):
            out.append((m.start(), day.isoformat()) if positions else day.isoformat())
    return out


class Shown(NamedTuple):
    """One day a page's text shows: its node's index, the day, its cue ("published", "updated" or ""),
    and whether it is a dateline by the first `<h1>` (a short text outside boilerplate within
    SHOWN_DATE_NEAR nodes of it)."""

    node: int
    day: str
    cue: str
    near: bool


def page_shown(page, today: Optional[_dt.date]) -> Tuple[Optional[int], List[Shown]]:
    """(the first visible `<h1>`'s node index or None, the days the first SHOWN_DATE_NODES nodes show in
    short texts outside hidden markup)."""
    nodes = (getattr(page, "nodes", None) or [])[:SHOWN_DATE_NODES]
    h1 = next((k for k, node in enumerate(nodes) if node.tag == "h1" and not node.hidden), None)
    out: List[Shown] = []
    for k, node in enumerate(nodes):
        text = node.content
        if node.hidden or len(text) > _SHOWN_TEXT_CHARS or ("19" not in text and "20" not in text):  # no year
            continue
        near = h1 is not None and not node.boilerplate and abs(k - h1) <= SHOWN_DATE_NEAR \
            and len(text) <= SHOWN_DATE_CHARS
        for start, found in shown_days(text, today, positions=True):
            cue = ("published" if _PUBLISHED_CUE.search(text, 0, start)
                   else "updated" if _UPDATED_CUE.search(text, 0, start) else "")
            out.append(Shown(k, found, cue, near))
    return h1, out


def rules_day(day: Optional[str], h1: Optional[int], shown: Sequence[Shown], url_day: Optional[str]) -> Optional[str]:
    """The day the page shows as its publication ("Published March 9, 2026", "Originally posted on ..."),
    else `day` where the page shows it or it is the URL's full date (`url_day`), else the one day a
    dateline near the page's first `<h1>` shows (a day after "Updated" only where no other day is shown
    there: "April 26, 2024" above "Updated on: October 28, 2024" is the publication): labelled sets (WCXB)
    date a page by the day it shows readers, and a page's markup often declares another (a first
    publication the page no longer shows, a CMS's import day)."""
    for s in shown:
        if s.cue == "published":
            return s.day
    # an "Updated" day is not the page showing `day` as its publication
    if h1 is None or (day and day == url_day) or any(s.day == day and s.cue != "updated" for s in shown):
        return day  # the URL's full date is the site's own dating of the page
    near = _dateline_days(shown)
    return near.pop() if len(near) == 1 else day


def shown_decides(h1: Optional[int], shown: Sequence[Shown]) -> bool:
    """Whether rules_day gives the same day whatever day it is handed that is not the URL's: the page shows
    its publication, or its `<h1>`'s dateline shows one day and the page shows no other without an "Updated"
    cue (handed that day or another, or none, it gives the dateline's)."""
    if any(s.cue == "published" for s in shown):
        return True
    plain = {s.day for s in shown if s.cue != "updated"}
    near = _dateline_days(shown)
    return h1 is not None and len(near) == 1 and plain <= near


def _dateline_days(shown: Sequence[Shown]) -> set:
    """The days the `<h1>`'s datelines show, those after an "Updated" cue only where no other is shown."""
    return {s.day for s in shown if s.near and s.cue != "updated"} or {s.day for s in shown if s.near}


@dataclass
class Candidates:
    """A page's candidate days and each one's feature vector (FEATURES), the "no date" option's last."""

    days: Tuple[str, ...]
    vectors: np.ndarray  # (len(days) + 1, len(FEATURES))
    rules: Optional[str]
    inputs: tuple = ()   # candidates()'s arguments, to compute the features again


def candidates(sources: Sequence[Tuple[str, Optional[str]]], h1: Optional[int], shown: Sequence[Shown],
               rules: Optional[str], page_type: Optional[str] = None, probability: Optional[float] = None,
               declares_article: bool = False) -> Candidates:
    """Every distinct day `sources` ((source, day) from the markup, the URL, htmldate) and the shown days
    give, with the features a chooser weighs: which sources give it, how many agree, its cues and nodes,
    whether it is the latest or earliest of them; the last row is the "no date" option's, the page's."""
    found: Dict[str, set] = {}
    for source, day in sources:
        if day:
            found.setdefault(day, set()).add(source)
    for s in shown:
        kind = ("near_" + s.cue if s.cue else "near") if s.near else (s.cue or "shown")
        found.setdefault(s.day, set()).add(kind)
    if rules:
        found.setdefault(rules, set()).add("rules")
    days = tuple(sorted(found))
    x = np.zeros((len(days) + 1, len(FEATURES)))
    article = page_type in ("article", "forum")
    for i, day in enumerate(days):
        row, srcs = x[i], found[day]
        for s in srcs:
            row[_INDEX["src:" + s]] = 1.0
        row[_INDEX["agree"]] = len(srcs - {"rules"}) / 3.0
        mine = [s for s in shown if s.day == day]
        plain = [s for s in mine if s.cue != "updated"]
        row[_INDEX["shown_count"]] = math.log1p(len(plain))
        row[_INDEX["h1_distance"]] = (min(abs(s.node - h1) for s in mine) / SHOWN_DATE_NODES
                                      if mine and h1 is not None else 1.0)
        row[_INDEX["first_position"]] = min(s.node for s in mine) / SHOWN_DATE_NODES if mine else 1.0
        if len(days) > 1:
            row[_INDEX["latest"]] = float(i == len(days) - 1)
            row[_INDEX["earliest"]] = float(i == 0)
        row[_INDEX["gap"]] = math.log1p(_ordinal(days[-1]) - _ordinal(day)) / 8.0
        row[_INDEX["one_day_off"]] = float(any(abs(_ordinal(day) - _ordinal(d)) == 1 for d in days))
        row[_INDEX["only"]] = float(len(days) == 1)
        declared = bool(srcs & {"declared", "created", "meta"})
        row[_INDEX["declared_shown"]] = float(declared and bool(plain))
        if article:
            row[_INDEX["article:rules"]] = float("rules" in srcs)
            row[_INDEX["article:near"]] = float(bool(srcs & {"near", "near_published", "near_updated"}))
            row[_INDEX["article:declared"]] = float(declared)
    none = x[-1]
    given = {s for _, s in ((d, s) for d, srcs in found.items() for s in srcs)}
    none[_INDEX["none"]] = 1.0
    none[_INDEX["none:declared"]] = float(bool(given & {"declared", "created", "meta", "modified", "meta_modified"}))
    none[_INDEX["none:rules"]] = float(rules is None)
    none[_INDEX["none:candidates"]] = math.log1p(len(days))
    none[_INDEX["none:url_or_declared"]] = float(bool(given & {"declared", "created", "meta", "url"}))
    none[_INDEX["none:probability"]] = float(probability or 0.0)
    none[_INDEX["none:declares_article"]] = float(declares_article)
    if page_type in PAGE_TYPES:
        none[_INDEX["none:type:" + page_type]] = 1.0
    return Candidates(days, x, rules, (tuple(sources), h1, tuple(shown), rules, page_type, probability,
                                       declares_article))


@lru_cache(maxsize=4096)
def _ordinal(day: str) -> int:
    return _dt.date.fromisoformat(day).toordinal()


class DateChooser:
    """A linear scorer over FEATURES: each candidate day and the "no date" option get w . x, the best is
    kept. Loaded from plain JSON (`format`, `feature_version`, `features`, `weights`)."""

    def __init__(self, spec: Dict, source: str = "dates"):
        if not isinstance(spec, dict):
            raise DateChooserError(f"{source}: not a JSON object")
        if spec.get("format") != FORMAT:
            raise DateChooserError(f"{source}: format is {spec.get('format')!r}, not {FORMAT!r}")
        if spec.get("feature_version") != FEATURE_VERSION:
            raise DateChooserError(f"{source}: feature_version {spec.get('feature_version')!r}, this code computes "
                                   f"{FEATURE_VERSION}")
        names, weights = spec.get("features"), spec.get("weights")
        if not isinstance(names, list) or not isinstance(weights, list) or len(names) != len(weights):
            raise DateChooserError(f"{source}: `features` and `weights` must be lists of one length")
        unknown = [n for n in names if n not in _INDEX]
        if unknown:
            raise DateChooserError(f"{source}: features this code does not compute: {unknown[:5]}")
        try:
            values = np.asarray(weights, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise DateChooserError(f"{source}: weights that are not numbers: {exc}") from None
        if values.ndim != 1 or not np.isfinite(values).all():
            raise DateChooserError(f"{source}: weights that are not finite numbers")
        self.weights = np.zeros(len(FEATURES))
        for name, value in zip(names, values):
            self.weights[_INDEX[name]] = value
        margin = spec.get("none_margin")
        if margin is not None and (isinstance(margin, bool) or not isinstance(margin, (int, float))
                                   or not math.isfinite(margin)):
            raise DateChooserError(f"{source}: none_margin {margin!r} is neither null nor a finite number")
        self.none_margin: Optional[float] = None if margin is None else float(margin)
        kinds = spec.get("page_types", list(PAGE_TYPES))
        if not isinstance(kinds, list) or not all(k in PAGE_TYPES for k in kinds):
            raise DateChooserError(f"{source}: page_types must be a list of {', '.join(PAGE_TYPES)}")
        self.page_types = frozenset(kinds)
        self.card = {k: v for k, v in spec.items() if k not in ("features", "weights")}

    @classmethod
    def load(cls, path) -> "DateChooser":
        path = Path(path)
        try:
            spec = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise DateChooserError(f"{path}: cannot read: {exc}") from None
        return cls(spec, str(path))

    def choose(self, found: Candidates) -> Optional[str]:
        """The best-scoring candidate day; None where the rules give none, or, with a `none_margin` (None:
        never), where the "no date" option scores that much above the day on a page typed neither an article
        nor a forum thread whose URL gives no day (the labels' undated pages are mostly listings, products and
        services whose markup gives a day anyway). On a page of a type outside `page_types`, the rules' day."""
        if not found.days or found.rules is None:
            return None
        kind = next((k for k in PAGE_TYPES if found.vectors[-1, _INDEX["none:type:" + k]]), None)
        if kind not in self.page_types:
            return found.rules
        scores = found.vectors @ self.weights
        best = int(np.argmax(scores[:-1]))
        dated_url = found.vectors[:-1, _INDEX["src:url"]].any()
        article = found.vectors[-1, _INDEX["none:type:article"]] or found.vectors[-1, _INDEX["none:type:forum"]]
        if self.none_margin is not None and scores[-1] >= scores[best] + self.none_margin and not dated_url \
                and not article:
            return None
        return found.days[best]


def fit_chooser(pages: Sequence[Tuple[Candidates, Optional[str]]], l2: float = 1.0,
                none_margin: Optional[float] = None, page_types: Sequence[str] = CHOSEN_TYPES,
                iterations: int = 300) -> Dict:
    """The weights (a dates.json's spec) of a conditional logistic regression on (candidates, the labelled
    day or "" for a page labelled undated): the labelled day's row, or the "no date" row, is the one to pick.
    Pages whose labelled day is no candidate teach nothing and are left out. L2 penalty `l2` on the summed
    log-likelihood; L-BFGS (scipy, a training-time dependency). `none_margin`, `page_types` (where the chooser
    dates a page: on other types the rules' day): DateChooser.choose's. Trained on every page type."""
    from scipy.optimize import minimize

    groups = []
    for found, label in pages:
        if label is None or not found.days:
            continue
        target = len(found.days) if label == "" else (found.days.index(label) if label in found.days else None)
        if target is not None:
            groups.append((found.vectors, target))
    if not groups:
        raise ValueError("no page with its labelled day among the candidates to train the date chooser on")
    x = np.vstack([g[0] for g in groups])
    bounds = np.cumsum([0] + [len(g[0]) for g in groups])
    targets = np.array([b + t for b, (_, t) in zip(bounds[:-1], groups)])
    starts = bounds[:-1]

    def loss(w):
        s = x @ w
        # per page log-sum-exp over its rows
        m = np.maximum.reduceat(s, starts)
        e = np.exp(s - np.repeat(m, np.diff(bounds)))
        z = np.add.reduceat(e, starts)
        nll = -(s[targets] - m - np.log(z)).sum() + 0.5 * l2 * (w @ w)
        p = e / np.repeat(z, np.diff(bounds))
        grad = x.T @ p - x[targets].sum(axis=0) + l2 * w
        return nll, grad

    result = minimize(loss, np.zeros(x.shape[1]), jac=True, method="L-BFGS-B", options={"maxiter": iterations})
    return {"format": FORMAT, "feature_version": FEATURE_VERSION, "features": list(FEATURES),
            "weights": [round(float(v), 6) for v in result.x], "none_margin": none_margin,
            "page_types": list(page_types), "l2": l2, "pages": len(groups)}


def default_chooser(directory: Optional[str] = None) -> Optional[DateChooser]:
    """The chooser in `directory` (a model directory; None: the shipped models/default), or the shipped one
    when that directory has none; None when neither has a dates.json (the rules' day then stands). A broken
    file, or one whose size or sha256 differs from what its folder's card.json lists, raises DateChooserError.
    Read once a folder: page_metadata asks on every page."""
    from .model.files import model_directory

    return _default_chooser(str(model_directory(directory)), directory is not None)


@lru_cache(maxsize=8)
def _default_chooser(folder: str, own: bool) -> Optional[DateChooser]:
    from .model.files import ModelError, model_directory, model_file
    from .pagetype import PageTypeError, check_listed

    path = Path(folder) / FILE_NAME
    if not path.exists() and own:
        path = Path(model_directory(None)) / FILE_NAME
    if not (path.exists() or path.is_symlink()):
        return None
    try:
        model_file(path.parent, path.name)
        check_listed(path)
    except (ModelError, PageTypeError) as exc:
        raise DateChooserError(str(exc)) from None
    return DateChooser.load(path)
