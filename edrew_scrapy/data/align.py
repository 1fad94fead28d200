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
    max_long_candidates: int = 4


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


def _runs(tokens: Sequence[str], idx, min_size: int, limit: int) -> List[Tuple[int, int, int]]:
    """Up to `limit` common runs (size, i, j), tokens[i:i+size] == ref[j:j+size], longest first, at
    least `min_size` long and on diagonals (j - i) at least len(tokens) apart: the places where the
    node may sit in the reference. Several, because forums quote posts, so a text can occur twice."""
    best_on: Dict[int, Tuple[int, int, int]] = {}
    prev: Dict[int, int] = {}
    for i, tok in enumerate(tokens):
        cur: Dict[int, int] = {}
        for j in idx.get(tok, ()):
            k = prev.get(j - 1, 0) + 1
            cur[j] = k
            d = j - i
            if k >= min_size and k > best_on.get(d, (0,))[0]:
                best_on[d] = (k, i - k + 1, j - k + 1)
        prev = cur
    picked: List[Tuple[int, int, int]] = []
    for run in sorted(best_on.values(), key=lambda r: (-r[0], r[2])):
        if all(abs((run[2] - run[1]) - (p[2] - p[1])) >= len(tokens) for p in picked):
            picked.append(run)
            if len(picked) >= limit:
                break
    return picked


def _long_candidates(tokens, ref, idx, config) -> List[Tuple[int, int, int]]:
    """(start, end, matched words) of each region of the reference where a long node may sit."""
    out = []
    need = config.min_fraction * len(tokens)
    for _size, i0, j0 in _runs(tokens, idx, max(1, min(config.min_anchor_words, len(tokens)) // 2),
                               config.max_long_candidates):
        lo = max(0, j0 - i0 - config.refine_pad)
        hi = min(len(ref), j0 + (len(tokens) - i0) + config.refine_pad)
        blocks = [b for b in difflib.SequenceMatcher(None, tokens, ref[lo:hi], autojunk=False)
                  .get_matching_blocks() if b.size]
        matched = sum(b.size for b in blocks)
        if matched >= need:
            out.append((lo + blocks[0].b, lo + blocks[-1].b + blocks[-1].size, matched))
    return out


class _MaxTree:
    """Point update (keep the max) and range-max query with the argmax, over keys 0..n-1."""

    def __init__(self, n: int):
        self.n = max(1, n)
        self.val = [float("-inf")] * (2 * self.n)
        self.arg = [-1] * (2 * self.n)

    def update(self, key: int, value: float, arg: int) -> None:
        """Keep the best chain ending at `key`; on a tie the later candidate wins (candidates come in
        document order), so a chain that goes on goes through the copy nearest to what follows it: the
        article's own heading rather than the same words in a menu or breadcrumb above it. (The chain's
        end is chosen with a strict `>` in align_reference: of two tied last copies, the earlier, next
        to what precedes it.)"""
        p = key + self.n
        if value < self.val[p]:
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
    long_cands: Dict[int, List[Tuple[int, int, int]]] = {}
    for i, t in enumerate(toks):
        if not t or not ref:
            continue
        if len(t) < config.min_anchor_words:
            for j in _exact_occurrences(t, ref, idx, config.max_short_candidates):
                cands.append((i, j, j + len(t), len(t), True))
        else:
            found = _long_candidates(t, ref, idx, config)
            if found:
                long_cands[i] = found
                cands.extend((i, start, end, weight, False) for start, end, weight in found)

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

    for i, found in long_cands.items():
        if labels[i] or len(toks[i]) < config.min_out_of_order_words:
            continue
        for start, end, weight in found:
            if sum(covered[start:end]) * 2 < (end - start):
                labels[i], matched[i], spans[i] = 1, weight, (start, end)
                covered[start:end] = b"\x01" * (end - start)
                break

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
    """The contains-rule. Besides equality, a node matches an attribute when it contains the
    attribute's values (all of them that occur, as whole words) and at most `max_extra_words` other
    words remain, or, for two or more values, they make up at least `min_ratio` of the node's
    characters: a label such as "ISBN-13: 9780316125581", or "by Glenn Beck and Kevin Balfe and Emily
    Bestler and Jack Henderson" for four authors. One value inside a longer sentence is a mention, not
    the attribute: 'Read all Questions/Answers for "<title>"' (a link under every christianbook book).
    The same test runs on each field of a node whose text is a list separated by " / ", " | ", " · "
    or " ; " ("Value Books / 2008 / Paperback" carries a publisher and a date). Last, a value counts
    inside a run of label-value pairs, which is what `<b>Label:</b> value<br>` lists become once
    merged into one node: it follows "Label:" and ends the node or is followed by the next "Label:"
    ("Vendor: Value Books Publication Date: 2008"). And a value that opens the node and is followed by
    a colon and more words, or by one parenthesis to the end, is the node's head, as a title is before its
    subtitle or format ("Eat, Pray, Love : One Woman's Search for Everything ... (Paperback)" and "Game Over
    (Audio Compact Disc - Unabridged)" for the titles "Eat, Pray, Love" and "Game Over")."""

    allow_contains: bool = True
    min_ratio: float = 0.6
    max_extra_words: int = 3


# SWDE values keep the separator that followed a label in the source ("<b>ISBN-13</b>: 978..."
# gives ": 978..."); edge punctuation carries no meaning for a match.
_EDGE_PUNCT = re.compile(r"^[\W_]+|[\W_]+$")
_FIELD_SEP = re.compile(r"\s+[/|\u00b7\u2022;]\s+")
_WORDS = re.compile(r"\w+")
# after a value that heads a node: the marks that closed the value and were cut from its key with the
# edge punctuation ("Wait!" -> "wait", "Plum Boxed Set 2 (4, 5, 6)" -> "... (4, 5, 6"; closing marks
# only: "C#: A Beginner's Guide" does not start with the title "C"), then a
# colon and a subtitle, or one parenthesis to the end, which is a format ("(Audio Compact Disc -
# Unabridged)"); the node's own closing ")" is gone with its edge punctuation
_AFTER_HEAD = re.compile("[!?.)\\]\"'\u2019\u201d]{0,3}" r"(?:\s?:\s+\w|\s\([^()]*\Z)")
_NEXT_LABEL = re.compile(r"\s*(?:[\w-]+(?: [\w-]+){0,2}:|$)")
# A year alone ("2010", SWDE's usual publication_date) is not the date of a node that holds a full date
# with a day: "October 28, 2010" under a customer review is that review's date. Texts are case-folded.
_YEAR = re.compile(r"\d{4}")
_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
_FULL_DATE = re.compile(rf"\b{_MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}}\b"
                        rf"|\b\d{{1,2}}(?:st|nd|rd|th)?\s+{_MONTH},?\s+\d{{4}}\b"
                        r"|\b\d{1,2}[/.-]\d{1,2}[/.-]\d{4}\b|\b\d{4}-\d{2}-\d{2}\b")


def _value_key(text: str) -> str:
    return _EDGE_PUNCT.sub("", normalize_text(text))


def match_values(node_texts: Sequence[str], values: Mapping[str, Sequence[str]],
                 config: ValueMatchConfig = ValueMatchConfig()) -> Tuple[List[int], List[List[str]]]:
    """Labels and, per node, the names of the attributes whose value it carries.

    `values` maps attribute name -> its values on the page; `<NULL>` and empty values are ignored.
    """
    by_attr: Dict[str, List[str]] = {}
    for attr, vals in values.items():
        keys = [_value_key(html_lib.unescape(v)) for v in vals if v and v != "<NULL>"]
        keys = sorted({k for k in keys if k}, key=len, reverse=True)
        if keys:
            by_attr[attr] = keys
    labels = [0] * len(node_texts)
    attrs: List[List[str]] = [[] for _ in node_texts]
    for i, text in enumerate(node_texts):
        node = _value_key(text)
        if not node:
            continue
        found = [a for a, keys in by_attr.items() if _matches(node, keys, config)]
        if found:
            labels[i], attrs[i] = 1, found
    return labels, attrs


def _matches(node: str, keys: Sequence[str], config: ValueMatchConfig) -> bool:
    if node in keys:
        return True
    if not config.allow_contains:
        return False
    fields = [_EDGE_PUNCT.sub("", f) for f in _FIELD_SEP.split(node)]
    for text in [node] + (fields if len(fields) > 1 else []):
        if text in keys:
            return True
        rest, covered, found = text, 0, 0  # found: how many distinct values, not occurrences
        for k in keys:  # longest first, so a value inside another value is not counted twice
            pos = _find_value(rest, k)
            found += pos >= 0
            while pos >= 0:
                covered += len(k)
                rest = rest[:pos] + " " + rest[pos + len(k):]
                pos = _find_value(rest, k)
        if covered and ((found > 1 and covered >= config.min_ratio * len(text))
                        or len(_WORDS.findall(rest)) <= config.max_extra_words):
            return True
    return any(_labelled_field(node, k) or _heads_node(node, k) for k in keys)


def _heads_node(text: str, value: str) -> bool:
    """`value` opens `text`, followed by a subtitle ("value : subtitle", "value? : subtitle") or by a
    parenthesis that ends the node ("value (format)")."""
    return text.startswith(value) and _AFTER_HEAD.match(text, len(value)) is not None


def _find_value(text: str, value: str) -> int:
    """_find_word_bounded, except that a year is not found inside a full date (_FULL_DATE)."""
    if _YEAR.fullmatch(value):
        text = _FULL_DATE.sub(lambda m: "_" * len(m.group()), text)
    return _find_word_bounded(text, value)


def _labelled_field(text: str, value: str) -> bool:
    start = 0
    while True:
        pos = _find_word_bounded(text[start:], value)
        if pos < 0:
            return False
        pos += start
        if text[:pos].rstrip().endswith(":") and _NEXT_LABEL.match(text, pos + len(value)):
            return True
        start = pos + 1


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
