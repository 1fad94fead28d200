"""What kind of page this is: WCXB's seven page types from cheap page-level features.

A multinomial logistic regression over features the crawl already has: the URL's tokens, the types the
page declares (declared.py, read by the serializer), what its metadata declares (an author, a day, its
`<meta>` keys: metadata.page_type_evidence, from the parse the metadata makes anyway), statistics of the
serialised nodes (counts by tag, link density, prices, dates) and the words of the page that recur across
many sites. It
reads no model score, so it costs one pass over the nodes and runs the same with any model. The weights are
plain JSON (models/default/pagetype.json, written by `edrew train-pagetype`), never a pickle.

Pure: no Scrapy (torch only through default_classifier, which finds the shipped model folder). Features
cost a pass over the page's nodes.
"""
from __future__ import annotations

import functools
import json
import math
import re
from collections import Counter
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Tuple
from urllib.parse import urlsplit

import numpy as np

from .declared import KINDS, declared_kinds
from .words import has_unspaced, split_words

__all__ = ["FEATURE_VERSION", "FORMAT", "FORUM_MARKUP", "PAGE_TYPES", "PageTypeClassifier", "PageTypeError", "SCALINGS",
           "choose_c", "default_classifier", "forum_evidence", "page_features"]

PAGE_TYPES = ("article", "forum", "product", "collection", "listing", "documentation", "service")
FORMAT = "edrew-pagetype"
FEATURE_VERSION = 3  # 2: what the page declares (metadata.page_type_evidence); 3: no URL features without a URL
FILE_NAME = "pagetype.json"
# what a forum declares in its markup (the discussion kinds, comments, forum software's poster blocks): with the
# URL tokens that forums of many training domains share, the evidence a page needs to be typed "forum"
FORUM_MARKUP = ("k:discussion", "d:posters", "t:comment", "t:discussionforumposting")

_URL_SPLIT = re.compile(r"[^a-z0-9]+")
_PRICE = re.compile(r"(?:[$€£¥₹]\s?\d|\d\s?(?:€|zł|kr|eur|usd|gbp)\b|\b(?:usd|eur|gbp)\s?\d)", re.I)
_DATE = re.compile(r"\b(?:19|20)\d\d[-/.]\d{1,2}[-/.]\d{1,2}\b|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)"
                   r"[a-z]*\.? \d{1,2},? (?:19|20)\d\d\b|\b\d{1,2} (?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)"
                   r"[a-z]* (?:19|20)\d\d\b", re.I)
_WORD = re.compile(r"^[^\W\d_]{3,20}$")
# _WORD's words among words joined by spaces, found in one search instead of one match a word
_WORD_IN = re.compile(r"(?<!\S)[^\W\d_]{3,20}(?!\S)")
_DIGIT = re.compile(r"\d")  # every _PRICE and _DATE pattern holds one
# what a text needs for _PRICE (a currency sign, or a currency's code: casefold() maps every character that
# re.I lets match one of the code's letters onto it) and for _DATE (a year's first two digits), checked
# without a regex: most short texts with a digit hold neither, and each regex tries every position
_PRICE_SIGNS = ("$", "€", "£", "¥", "₹")
_PRICE_CODES = ("€", "zł", "kr", "eur", "usd", "gbp")

# words read for the word features (headings' and the rest's, outside boilerplate), the first of the page
MAX_WORDS = 1_000
_NODE_WORDS = 100  # of each node

_TAG_GROUPS = {
    "h1": ("h1",), "h2": ("h2", "h3"), "h4": ("h4", "h5", "h6"), "li": ("li",), "td": ("td", "th"),
    "code": ("pre", "code", "kbd", "samp"), "p": ("p",), "a": ("a",), "form": ("button", "select", "option",
                                                                                 "label", "input", "textarea"),
    "dt": ("dt", "dd"), "blockquote": ("blockquote",), "span": ("span",), "div": ("div",),
}
_TAG_TO_GROUP = {tag: group for group, tags in _TAG_GROUPS.items() for tag in tags}


class PageTypeError(ValueError):
    """A page-type weights file that cannot be used: names the file and what is wrong."""


def page_features(page, url: Optional[str] = None, declared=None) -> Dict[str, float]:
    """Named feature values of one serialised page (sparse: absent names are 0); with `declared` (the
    page's metadata.Declared, read anyway for its metadata) also what it declares about itself
    (metadata.page_type_evidence: authors, days, `<meta>` keys)."""
    feats: Dict[str, float] = {}
    if declared is not None:
        from .metadata import page_type_evidence

        feats.update(page_type_evidence(declared))
    # the read features written over the declared evidence (their names differ; were one the same, it would stand)
    feats.update(_read_features(page, url or getattr(page, "url", None) or "")[0])
    return feats


def _read_features(page, url: str) -> tuple:
    """The features read from the page's URL, declared types and nodes, and their values as a vector of
    the classifier whose index `raw` holds (or None): kept on the page (`Page.type_features`) while its
    `nodes` are the same list of the same length, so that the page's second classification (the scorer's
    without what the metadata declares, then the metadata's with it) does not read the nodes again."""
    nodes = getattr(page, "nodes", None)
    kept = getattr(page, "type_features", None)
    if kept is not None and kept[0] is nodes and kept[1] == len(nodes) and kept[2] == url:
        return kept[3], kept[4]
    feats = _node_features(page, url)
    if hasattr(page, "type_features") and isinstance(nodes, list):
        page.type_features = (nodes, len(nodes), url, feats, None)
    return feats, None


def _node_features(page, url: str) -> Dict[str, float]:
    feats: Dict[str, float] = {}
    _url_features(url, feats)
    declared = tuple(getattr(page, "declared", ()) or ())
    for name in declared[:32]:
        feats["t:" + name] = 1.0
    for kind, on in zip(KINDS, declared_kinds(declared)):
        if on:
            feats["k:" + kind] = 1.0
    nodes = getattr(page, "nodes", None) or []
    chars = links = words = 0
    prices = dates = hidden = boiler = images = 0
    tags: List[str] = []
    # the texts whose words are read, by prefix: one search of each prefix's texts joined by spaces finds the
    # words a search of each text finds (_WORD_IN's ends are whitespace, and nothing else is ever joined)
    read_texts: Dict[str, List[str]] = {"h:": [], "w:": []}
    read = 0
    for node in nodes:
        content = node.content
        n = len(content)
        chars += n
        links += node.link_chars
        in_node = len(content.split())
        words += in_node
        tags.append(node.tag)
        images += len(node.images)
        if node.hidden:
            hidden += 1
        if node.boilerplate:
            boiler += 1
            continue
        # prices and dates are short texts with a digit; reading every paragraph for them cost more
        if n < 400 and _DIGIT.search(content):
            if any(sign in content for sign in _PRICE_SIGNS):
                prices += bool(_PRICE.search(content))
            else:
                folded = content.casefold()
                prices += any(code in folded for code in _PRICE_CODES) and bool(_PRICE.search(content))
            dates += ("19" in content or "20" in content) and bool(_DATE.search(content))
        if read < MAX_WORDS:
            texts = read_texts["h:" if node.tag in ("h1", "h2", "h3", "title") else "w:"]
            if in_node <= _NODE_WORDS and not has_unspaced(content):
                # split_words(content.lower(), _NODE_WORDS) would give its words: read as they stand
                read += in_node
                texts.append(content)
            else:  # the node's first words, or pieces of a text written without spaces
                found = split_words(content.lower(), _NODE_WORDS)
                read += len(found)
                texts.append(" ".join(found))
    groups: Counter = Counter()
    for tag, count in Counter(tags).items():
        groups[_TAG_TO_GROUP.get(tag, "other")] += count
    total = max(1, len(nodes))
    feats["n_nodes"] = math.log1p(len(nodes))
    feats["n_words"] = math.log1p(words)
    feats["words_per_node"] = math.log1p(words / total)
    feats["link_share"] = links / max(1, chars)
    feats["n_images"] = math.log1p(images)
    feats["prices"] = math.log1p(prices)
    feats["price_share"] = prices / total
    feats["dates"] = math.log1p(dates)
    feats["hidden_share"] = hidden / total
    feats["boilerplate_share"] = boiler / total
    for group in list(_TAG_GROUPS) + ["other"]:
        feats["tag_share:" + group] = groups[group] / total
        feats["tag_n:" + group] = math.log1p(groups[group])
    for prefix, texts in read_texts.items():
        for word in dict.fromkeys(_WORD_IN.findall(" ".join(texts).lower())):
            feats[prefix + word] = 1.0
    return feats


def _url_features(url: str, feats: Dict[str, float]) -> None:
    if not url:  # a page read from a file: nothing is known of its URL (not a site's root page)
        return
    try:
        parts = urlsplit(url.lower())
    except ValueError:
        return
    host = (parts.hostname or "").split(".")
    if len(host) > 2:
        feats["host:" + host[0]] = 1.0
    path = parts.path or "/"
    segments = [s for s in path.split("/") if s]
    feats["url_depth"] = float(min(len(segments), 10))
    feats["url_query"] = 1.0 if parts.query else 0.0
    feats["url_root"] = 1.0 if not segments else 0.0
    if segments:
        last = segments[-1]
        feats["url_last_len"] = math.log1p(len(last))
        feats["url_last_dashes"] = float(min(last.count("-"), 20))
        if last.endswith((".html", ".htm", ".php", ".aspx")):
            feats["url_ext"] = 1.0
    for token in _URL_SPLIT.split(path + " " + parts.query)[:60]:
        if not token:
            continue
        if token.isdigit():
            token = "year" if len(token) == 4 and token[:2] in ("19", "20") else "num"
        elif len(token) > 25:
            continue
        feats["u:" + token] = 1.0


class PageTypeClassifier:
    """Weights read from a pagetype.json; `predict` gives (page type, its probability)."""

    def __init__(self, spec: dict, source: str = "<dict>"):
        try:
            if spec.get("format") != FORMAT:
                raise PageTypeError(f"{source}: format is {spec.get('format')!r}, not {FORMAT!r}")
            if spec.get("feature_version") != FEATURE_VERSION:
                raise PageTypeError(f"{source}: feature_version {spec.get('feature_version')!r}, this code "
                                    f"computes {FEATURE_VERSION}")
            self.classes: Tuple[str, ...] = tuple(str(c) for c in spec["classes"])
            names = [str(n) for n in spec["features"]]
            self.index = {name: i for i, name in enumerate(names)}
            self.mean = np.asarray(spec["mean"], dtype=np.float64)
            self.scale = np.asarray(spec["scale"], dtype=np.float64)
            self.coef = np.asarray(spec["coef"], dtype=np.float64)
            self.intercept = np.asarray(spec["intercept"], dtype=np.float64)
            # a class possible only on a page with one of its evidence features (spec["requires"], optional)
            self.requires: Dict[int, Tuple[str, ...]] = {}
            requires = spec.get("requires") or {}
            if not isinstance(requires, dict):
                raise PageTypeError(f"{source}: requires is not an object")
            for kind, needed in requires.items():
                if kind not in self.classes or not isinstance(needed, list) or not all(
                        isinstance(n, str) for n in needed):
                    raise PageTypeError(f"{source}: requires[{kind!r}]: a list of feature names of a known class")
                self.requires[self.classes.index(kind)] = tuple(needed)
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, PageTypeError):
                raise
            raise PageTypeError(f"{source}: {type(exc).__name__}: {exc}") from None
        k, d = len(self.classes), len(names)
        if (self.coef.shape != (k, d) or self.intercept.shape != (k,) or self.mean.shape != (d,)
                or self.scale.shape != (d,)):
            raise PageTypeError(f"{source}: shapes do not agree ({k} classes, {d} features, coef {self.coef.shape})")
        if not (np.isfinite(self.coef).all() and np.isfinite(self.intercept).all() and np.isfinite(self.mean).all()
                and np.isfinite(self.scale).all() and (self.scale > 0).all()):
            raise PageTypeError(f"{source}: weights that are not finite, or a scale <= 0")
        self.card = {key: value for key, value in spec.items() if key not in ("features", "mean", "scale", "coef")}

    @classmethod
    def load(cls, path) -> "PageTypeClassifier":
        path = Path(path)
        try:
            spec = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise PageTypeError(f"{path}: cannot read: {exc}") from None
        if not isinstance(spec, dict):
            raise PageTypeError(f"{path}: not a JSON object")
        return cls(spec, str(path))

    def _raw(self, feats: Dict[str, float]) -> np.ndarray:
        x = np.zeros_like(self.mean)  # a feature the page lacks is 0
        for name, value in feats.items():
            i = self.index.get(name)
            if i is not None:
                x[i] = value
        return x

    def vector(self, feats: Dict[str, float]) -> np.ndarray:
        return (self._raw(feats) - self.mean) / self.scale

    def probabilities(self, feats: Dict[str, float]) -> np.ndarray:
        return self._required(self._softmax(self.vector(feats)), feats)

    def _required(self, p: np.ndarray, *found: Dict[str, float]) -> np.ndarray:
        """`p` without the classes whose evidence the page lacks (none of `requires`' features in `found`),
        the rest renormalised: words alone never make a page a forum."""
        for k, needed in self.requires.items():
            if p[k] and not any(feats.get(name) for feats in found for name in needed):
                p = p.copy()
                p[k] = 0.0
                p /= p.sum()
        return p

    def _softmax(self, vector: np.ndarray) -> np.ndarray:
        logits = self.coef @ vector + self.intercept
        logits -= logits.max()
        p = np.exp(logits)
        return p / p.sum()

    def page_probabilities(self, page, declared=None) -> np.ndarray:
        """probabilities(page_features(page, declared=declared)), the same values: the part read from the
        nodes, and its vector, are computed once a page (kept on it, see _read_features), and what the page
        declares is set into a copy of that vector."""
        url = getattr(page, "url", None) or ""
        read, raw = _read_features(page, url)
        if raw is None or raw[0] is not self.index:
            raw = (self.index, self._raw(read))
            raw[1].flags.writeable = False  # shared by the page's classifications: copied before any change
            kept = getattr(page, "type_features", None)
            if kept is not None and kept[3] is read:
                page.type_features = kept[:4] + (raw,)
        x = raw[1]
        evidence: Dict[str, float] = {}
        if declared is not None:
            from .metadata import page_type_evidence

            x = x.copy()
            evidence = page_type_evidence(declared)
            for name, value in evidence.items():
                i = self.index.get(name)
                if i is not None and name not in read:  # page_features' read values win over declared ones
                    x[i] = value
        return self._required(self._softmax((x - self.mean) / self.scale), read, evidence)

    def predict(self, page, declared=None) -> Tuple[str, float]:
        """The most probable page type of a serialised page (and its metadata.Declared, where read), and its
        probability (rounded to 4 places)."""
        p = self.page_probabilities(page, declared)
        best = int(np.argmax(p))
        return self.classes[best], round(float(p[best]), 4)


@functools.lru_cache(maxsize=4)
def default_classifier(directory: Optional[str] = None) -> Optional[PageTypeClassifier]:
    """The classifier in `directory` (a model directory; None: the shipped models/default), or the
    shipped one when that directory has none; None when neither has a pagetype.json. A broken file, or
    one whose size or sha256 differs from what the folder's card.json lists, raises PageTypeError."""
    from .model.files import model_directory

    path = Path(model_directory(directory)) / FILE_NAME
    if not path.exists() and directory is not None:
        path = Path(model_directory(None)) / FILE_NAME  # a model of one's own with the shipped page types
    if not (path.exists() or path.is_symlink()):
        return None
    return _classifier_at(str(path.absolute()))


@functools.lru_cache(maxsize=4)
def _classifier_at(name: str) -> PageTypeClassifier:
    # one classifier a file, whichever name the folder was given by: the scorer's and the metadata's are
    # then one object, and a page's second classification reuses the first's vector (page_probabilities)
    path = Path(name)
    from .model.files import ModelError, model_file

    try:  # a regular file inside the folder, as every model file: a FIFO or a /proc link would never end
        model_file(path.parent, path.name)
    except ModelError as exc:
        raise PageTypeError(str(exc)) from None
    check_listed(path)
    return PageTypeClassifier.load(path)


def check_listed(path: Path) -> None:
    """When the folder's card.json lists `path` under "files", its size and sha256 must match."""
    from .model.files import sha256_of

    try:
        card = json.loads((path.parent / "card.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return  # no card (a folder of one's own): the JSON's own checks apply
    entry = (card.get("files") or {}).get(path.name) if isinstance(card, dict) else None
    if not isinstance(entry, dict):
        return
    if path.stat().st_size != entry.get("bytes") or sha256_of(path) != entry.get("sha256"):
        raise PageTypeError(f"{path}: size or sha256 does not match the card (file corrupt or changed)")


SCALINGS = ("std", "maxabs")


def fit_spec(rows: Iterable[Dict[str, float]], labels: Sequence[str], *, c: float = 0.1, min_pages: int = 10,
             groups: Optional[Sequence[str]] = None, scaling: str = "std", forum_domains: int = 0) -> dict:
    """Train the weights (scikit-learn's LogisticRegression; training only) on feature dicts and their
    labels. A feature is kept when it is non-zero on at least `min_pages` pages, from at least
    `min_pages` distinct groups (domains) when `groups` is given, so that no site's own words count.
    `scaling` "std" centres each feature and divides it by its standard deviation; "maxabs" only divides by
    its largest absolute value, so a word or URL token stays 0 or 1 and a rare one is not blown up (with
    "std" a feature on 1 % of pages is 10 on them) into a weight that one site's pages decide.
    `forum_domains` > 0 (with `groups`): "forum" only on a page with forum evidence (forum_evidence)."""
    from sklearn.linear_model import LogisticRegression

    if scaling not in SCALINGS:
        raise ValueError(f"scaling {scaling!r}: choose from {', '.join(SCALINGS)}")
    rows = list(rows)
    names = _kept_features(rows, groups, min_pages)
    x = _sparse_rows(rows, names)
    if scaling == "maxabs":
        mean = np.zeros(len(names))
        scale = np.asarray(abs(x).max(axis=0).todense(), dtype=np.float64).ravel()
        scale[scale < 1e-6] = 1.0
        z = _scaled(x, scale)  # sparse: nothing is centred
    else:
        x = x.toarray()
        mean = x.mean(axis=0)
        scale = x.std(axis=0)
        scale[scale < 1e-6] = 1.0
        z = (x - mean) / scale
    model = LogisticRegression(C=c, max_iter=3000)
    model.fit(z, list(labels))
    coef, intercept = model.coef_, model.intercept_
    if len(model.classes_) == 2:  # one row for the second class's log-odds: as two softmax rows, the same odds
        coef, intercept = np.vstack([-coef / 2, coef / 2]), np.concatenate([-intercept / 2, intercept / 2])
    spec = {"format": FORMAT, "feature_version": FEATURE_VERSION, "classes": [str(c) for c in model.classes_],
            "features": names, "mean": _rounded(mean), "scale": _rounded(scale),
            "coef": [_rounded(row) for row in coef], "intercept": _rounded(intercept)}
    if forum_domains > 0 and "forum" in spec["classes"] and groups is not None:
        spec["requires"] = {"forum": forum_evidence(rows, labels, groups, forum_domains)}
    return spec


def forum_evidence(rows: Sequence[Dict[str, float]], labels: Sequence[str], groups: Sequence[str],
                   min_domains: int) -> List[str]:
    """What a page needs to be typed "forum": FORUM_MARKUP, or a URL token ("u:threads", "u:viewtopic") that
    forums of at least `min_domains` domains of the training pages have and that at least half the training
    pages having it are forums. Conversational words ("really", "would") alone then call no saved article
    a forum, and a forum that declares nothing is still found by its URL."""
    pages: Counter = Counter()
    forums: Counter = Counter()
    forum_groups: Dict[str, set] = {}
    for feats, label, group in zip(rows, labels, groups):
        for name, value in feats.items():
            if name.startswith("u:") and value:
                pages[name] += 1
                if label == "forum":
                    forums[name] += 1
                    forum_groups.setdefault(name, set()).add(group)
    tokens = sorted(n for n, owners in forum_groups.items() if len(owners) >= min_domains and 2 * forums[n] >= pages[n])
    return list(FORUM_MARKUP) + tokens


def choose_c(rows: Sequence[Dict[str, float]], labels: Sequence[str], groups: Sequence[str],
             candidates: Sequence[float], *, min_pages: int = 10, scaling: str = "std", folds: int = 4,
             seed: int = 1, forum_domains: int = 0) -> Tuple[float, Dict[float, float]]:
    """The regularisation strength among `candidates` that types the most pages right in `folds`-fold
    cross-validation by `groups` (domains) inside `rows` (each fold's classifier as fit_spec trains it,
    never seeing the pages' domains): the chosen C and each candidate's accuracy. Ties go to the smaller C."""
    from types import SimpleNamespace

    from .data.splits import group_kfold

    rows, labels = list(rows), list(labels)
    items = [SimpleNamespace(group=g) for g in groups]
    right = {float(c): 0 for c in candidates}
    for train, test in group_kfold(items, folds, key=lambda item: item.group, seed=seed):
        if len({labels[i] for i in train}) < 2:
            continue
        for c in right:
            spec = fit_spec([rows[i] for i in train], [labels[i] for i in train], c=c, min_pages=min_pages,
                            groups=[groups[i] for i in train], scaling=scaling, forum_domains=forum_domains)
            classifier = PageTypeClassifier(spec)
            right[c] += sum(classifier.classes[int(classifier.probabilities(rows[i]).argmax())] == labels[i]
                            for i in test)
    accuracy = {c: n / max(1, len(rows)) for c, n in right.items()}
    best = max(sorted(accuracy), key=lambda c: accuracy[c])  # max keeps the first (smallest) of equals
    return best, accuracy


def _kept_features(rows: Sequence[Dict[str, float]], groups: Optional[Sequence[str]], min_pages: int) -> List[str]:
    seen: Dict[str, set] = {}
    for i, feats in enumerate(rows):
        for name, value in feats.items():
            if value:
                seen.setdefault(name, set()).add(groups[i] if groups is not None else i)
    return sorted(n for n, owners in seen.items() if len(owners) >= min_pages)


def _sparse_rows(rows: Sequence[Dict[str, float]], names: Sequence[str]):
    from scipy.sparse import csr_matrix

    index = {n: i for i, n in enumerate(names)}
    data: List[float] = []
    cols: List[int] = []
    ptr = [0]
    for feats in rows:
        for name, value in feats.items():
            i = index.get(name)
            if i is not None and value:
                data.append(value)
                cols.append(i)
        ptr.append(len(data))
    return csr_matrix((np.asarray(data, dtype=np.float64), cols, ptr), shape=(len(rows), len(names)))


def _scaled(x, scale: np.ndarray):
    from scipy.sparse import diags

    return (x @ diags(1.0 / scale)).tocsr()


def _rounded(values) -> List[float]:
    return [float(f"{v:.6g}") for v in values]
