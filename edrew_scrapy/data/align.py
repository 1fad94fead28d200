"""Turn a page's reference text into node labels.

Two jobs:

* :func:`align_reference` (WCXB): the benchmark gives the main content as one plain text. Node texts are
  aligned to it over word tokens, in document order, so that generic short strings ("Home", "Share",
  "Read more") that happen to occur somewhere in the main content are not labelled by accident.
* :func:`match_values` (SWDE, simple format): the dataset gives a few attribute values per page; a node
  is relevant when its text is one of them (or, by the documented contains-rule, mostly one of them).

Alignment rules (docs/evaluation.md explains why):

1. Text is compared as `\\w+` tokens, lower-cased: the WCXB metric's tokens, so punctuation, spacing and
   line breaks of the reference never matter.
2. A *long* node (>= `min_anchor_words` words) gets one candidate: the reference region where most of
   its words occur in order (longest common run, refined locally). It counts when at least
   `min_fraction` of its words are matched. Long runs are unambiguous, so they may match anywhere.
3. A *short* node gets every exact occurrence of its words in the reference as candidates, but a short
   candidate may only follow another match closely (its start at most `short_slack` words after the
   end of the previous chosen match, or the reference's start).
4. Among all candidates, a chain increasing in both document order and reference position that covers
   the most reference words is chosen (weighted longest chain, O(C log n) with a segment tree).
5. Out of order: a node of >= `min_out_of_order_words` words that matched but is not in the chain is
   still relevant when its reference region is not already covered (content that the page shows in a
   different order from the benchmark's text, without double-counting duplicated blocks).
6. Negative evidence: a node whose words lie inside a `without` snippet (boilerplate the benchmark
   says must not be extracted), or which is mostly such a snippet, is labelled 0.
"""
from __future__ import annotations

import difflib
import html as html_lib
import re
from collections import defaultdict
from dataclasses import dataclass
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from . import normalize_text, words

__all__ = ["AlignConfig", "Alignment", "align_reference", "match_values", "ValueMatchConfig", "word_f1"]


@dataclass(frozen=True)
class AlignConfig:
    min_anchor_words: int = 5
    min_out_of_order_words: int = 10
    short_slack: int = 20
    min_fraction: float = 0.5
    max_short_candidates: int = 64
    refine_pad: int = 12          # words of reference around a long node's best run searched for the rest


@dataclass
class Alignment:
    labels: List[int]
    matched: List[int]                          # words of each node aligned to the reference
    spans: List[Optional[Tuple[int, int]]]      # reference word span [start, end) of each labelled node
    reference_words: int


def _index(ref: Sequence[str]) -> Dict[str, List[int]]:
    idx: Dict[str, List[int]] = defaultdict(list)
    for j, w in enumerate(ref):
        idx[w].append(j)
    return idx


def _exact_occurrences(tokens: Sequence[str], ref: Sequence[str], idx, limit: int) -> List[int]:
    n = len(tokens)
    out = []
    for j in idx.get(tokens[0], ()):
        if ref[j:j + n] == list(tokens):
            out.append(j)
            if len(out) >= limit:
                break
    return out


def _longest_run(tokens: Sequence[str], idx) -> Tuple[int, int, int]:
    """(size, i, j) of the longest run tokens[i:i+size] == ref[j:j+size]; difflib's diagonal DP."""
    best = (0, 0, 0)
    prev: Dict[int, int] = {}
    for i, tok in enumerate(tokens):
        cur: Dict[int, int] = {}
        for j in idx.get(tok, ()):
            k = prev.get(j - 1, 0) + 1
            cur[j] = k
            if k > best[0]:
                best = (k, i - k + 1, j - k + 1)
        prev = cur
    return best


def _long_candidate(tokens, ref, idx, pad) -> Optional[Tuple[int, int, int]]:
    """(start, end, matched words) of a long node's best region in the reference."""
    size, i0, j0 = _longest_run(tokens, idx)
    if size == 0:
        return None
    lo = max(0, j0 - i0 - pad)
    hi = min(len(ref), j0 + (len(tokens) - i0) + pad)
    blocks = [b for b in difflib.SequenceMatcher(None, tokens, ref[lo:hi], autojunk=False)
              .get_matching_blocks() if b.size]
    matched = sum(b.size for b in blocks)
    return lo + blocks[0].b, lo + blocks[-1].b + blocks[-1].size, matched


class _MaxTree:
    """Point update (keep the max) and range-max query with the argmax, over keys 0..n-1."""

    def __init__(self, n: int):
        self.n = max(1, n)
        self.val = [float("-inf")] * (2 * self.n)
        self.arg = [-1] * (2 * self.n)

    def update(self, key: int, value: float, arg: int) -> None:
        p = key + self.n
        if value <= self.val[p]:
            return
        self.val[p], self.arg[p] = value, arg
        p >>= 1
        while p:
            a, b = 2 * p, 2 * p + 1
            best = a if self.val[a] >= self.val[b] else b
            if self.val[p] == self.val[best] and self.arg[p] == self.arg[best]:
                break
            self.val[p], self.arg[p] = self.val[best], self.arg[best]
            p >>= 1

    def query(self, lo: int, hi: int) -> Tuple[float, int]:
        """Max over keys lo..hi inclusive."""
        best, arg = float("-inf"), -1
        lo, hi = max(lo, 0) + self.n, min(hi, self.n - 1) + self.n + 1
        while lo < hi:
            if lo & 1:
                if self.val[lo] > best:
                    best, arg = self.val[lo], self.arg[lo]
                lo += 1
            if hi & 1:
                hi -= 1
                if self.val[hi] > best:
                    best, arg = self.val[hi], self.arg[hi]
            lo >>= 1
            hi >>= 1
        return best, arg


def _joined(tokens: Sequence[str]) -> str:
    return " " + " ".join(tokens) + " "


def align_reference(node_texts: Sequence[str], reference: str, negatives: Iterable[str] = (),
                    config: AlignConfig = AlignConfig()) -> Alignment:
    """Label each node text 1 when it is part of `reference` (see the module's rules)."""
    ref = words(reference)
    idx = _index(ref)
    toks = [words(t) for t in node_texts]
    n = len(toks)
    labels = [0] * n
    matched = [0] * n
    spans: List[Optional[Tuple[int, int]]] = [None] * n

    # candidates: (node, start, end, weight, short)
    cands: List[Tuple[int, int, int, int, bool]] = []
    long_cand: Dict[int, Tuple[int, int, int]] = {}
    for i, t in enumerate(toks):
        if not t or not ref:
            continue
        if len(t) < config.min_anchor_words:
            for j in _exact_occurrences(t, ref, idx, config.max_short_candidates):
                cands.append((i, j, j + len(t), len(t), True))
        else:
            c = _long_candidate(t, ref, idx, config.refine_pad)
            if c and c[2] >= config.min_fraction * len(t):
                long_cand[i] = c
                cands.append((i, c[0], c[1], c[2], False))

    # weighted longest chain; key = reference position where a chain ends; virtual start at key 0
    tree = _MaxTree(len(ref) + 1)
    tree.update(0, 0.0, -1)
    parent = [-1] * len(cands)
    score = [0.0] * len(cands)
    best_total, best_end = 0.0, -1
    k = 0
    while k < len(cands):
        group_end = k
        while group_end < len(cands) and cands[group_end][0] == cands[k][0]:
            group_end += 1
        # a node's candidates are scored before any is inserted, so a chain uses each node once
        for c in range(k, group_end):
            _, start, _, weight, short = cands[c]
            lo = start - config.short_slack if short else 0
            prev_val, prev_arg = tree.query(lo, start)
            if prev_val == float("-inf"):
                score[c] = float("-inf")
                continue
            score[c], parent[c] = prev_val + weight, prev_arg
        for c in range(k, group_end):
            if score[c] == float("-inf"):
                continue
            tree.update(cands[c][2], score[c], c)
            if score[c] > best_total:
                best_total, best_end = score[c], c
        k = group_end

    covered = bytearray(len(ref) + 1)
    c = best_end
    while c >= 0:
        i, start, end, weight, _ = cands[c]
        labels[i], matched[i], spans[i] = 1, weight, (start, end)
        covered[start:end] = b"\x01" * (end - start)
        c = parent[c]

    for i, (start, end, weight) in long_cand.items():
        if labels[i] or len(toks[i]) < config.min_out_of_order_words:
            continue
        if sum(covered[start:end]) * 2 < (end - start):
            labels[i], matched[i], spans[i] = 1, weight, (start, end)
            covered[start:end] = b"\x01" * (end - start)

    neg = [_joined(words(s)) for s in negatives if words(s)]
    if neg:
        for i, t in enumerate(toks):
            if labels[i] and _is_negative(t, neg):
                labels[i], matched[i], spans[i] = 0, 0, None
    return Alignment(labels, matched, spans, len(ref))


def _is_negative(tokens: Sequence[str], negatives: Sequence[str]) -> bool:
    j = _joined(tokens)
    for s in negatives:
        if j in s:
            return True
        if s in j and 2 * (s.count(" ") - 1) >= len(tokens):
            return True
    return False


@dataclass(frozen=True)
class ValueMatchConfig:
    """The contains-rule: a node also matches a value it contains when the value is at least
    `min_ratio` of the node's length, or when the rest of the node is a label of at most
    `max_extra_words` words (e.g. "ISBN-13: 9780316125581" for the value "9780316125581")."""

    allow_contains: bool = True
    min_ratio: float = 0.6
    max_extra_words: int = 3


# SWDE values keep the separator that followed a label in the source ("<b>ISBN-13</b>: 978..."
# gives ": 978..."); edge punctuation carries no meaning for a match.
_EDGE_PUNCT = re.compile(r"^[\W_]+|[\W_]+$")


def _value_key(text: str) -> str:
    return _EDGE_PUNCT.sub("", normalize_text(text))


def match_values(node_texts: Sequence[str], values: Mapping[str, Sequence[str]],
                 config: ValueMatchConfig = ValueMatchConfig()) -> Tuple[List[int], List[List[str]]]:
    """Labels and, per node, the names of the attributes whose value it carries.

    `values` maps attribute name -> its values on the page; `<NULL>` and empty values are ignored.
    """
    keys = {}
    for attr, vals in values.items():
        for v in vals:
            k = _value_key(html_lib.unescape(v)) if v and v != "<NULL>" else ""
            if k:
                keys.setdefault(k, []).append(attr)
    labels = [0] * len(node_texts)
    attrs: List[List[str]] = [[] for _ in node_texts]
    for i, text in enumerate(node_texts):
        node = _value_key(text)
        if not node:
            continue
        found: List[str] = []
        for k, names in keys.items():
            if node == k or (config.allow_contains and _contains(node, k, config)):
                found.extend(a for a in names if a not in found)
        if found:
            labels[i], attrs[i] = 1, found
    return labels, attrs


def _contains(node: str, value: str, config: ValueMatchConfig) -> bool:
    pos = _find_word_bounded(node, value)
    if pos < 0:
        return False
    if len(value) >= config.min_ratio * len(node):
        return True
    rest = node[:pos] + " " + node[pos + len(value):]
    return len(rest.split()) <= config.max_extra_words


def _find_word_bounded(text: str, sub: str) -> int:
    """Index of `sub` in `text` not inside a longer word ("2008" does not match "12008"), else -1."""
    start = 0
    while True:
        pos = text.find(sub, start)
        if pos < 0:
            return -1
        before = text[pos - 1] if pos else " "
        after = text[pos + len(sub)] if pos + len(sub) < len(text) else " "
        if not (before.isalnum() and sub[0].isalnum()) and not (after.isalnum() and sub[-1].isalnum()):
            return pos
        start = pos + 1


def word_f1(predicted: str, reference: str) -> Tuple[float, float, float]:
    """WCXB's page metric: precision, recall, F1 of `\\w+` lower-cased tokens as multisets.

    Both empty counts as a perfect match; exactly one empty as 0.
    """
    from collections import Counter

    p, r = Counter(words(predicted)), Counter(words(reference))
    if not p and not r:
        return 1.0, 1.0, 1.0
    if not p or not r:
        return 0.0, 0.0, 0.0
    overlap = sum((p & r).values())
    if not overlap:
        return 0.0, 0.0, 0.0
    prec, rec = overlap / sum(p.values()), overlap / sum(r.values())
    return prec, rec, 2 * prec * rec / (prec + rec)
