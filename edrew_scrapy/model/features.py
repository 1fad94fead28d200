"""What the model reads from a Node besides its reTPS: the first words of its text, shallow features."""
from __future__ import annotations

import math
import re
from typing import Dict, List, Sequence

import numpy as np

from ..declared import declared_kinds
from ..page import Node, Page
from ..tokens import retps_shape
from ..words import UNSPACED, count_words, split_words

EMPTY_TOKEN = "<#EMPTY>"   # stands for a node without reTPS tokens, so that every sequence has one
MAX_RETPS_TOKENS = 32      # the serializer keeps ~20; more would only be hostile input
TEXT_WORDS = 8             # words of a node's text that go through the character CNN
MAX_WORD_CHARS = 20        # longer words are cut: the CNN sees their start, the cache stays small

# Counting with regexes runs in C: a per-character Python loop cost more than scoring a page's nodes.
_LETTER = re.compile(r"[^\W\d_]")
_UPPER = re.compile(r"[A-ZÀ-ÖØ-ÞΑ-ΩА-Я]")
_DIGIT = re.compile(r"\d")
# with the ideographic and fullwidth marks Chinese and Japanese text uses in their place (、。，．：；！？
# brackets and quotes, the middle dot, the wave dash): words.py
_PUNCT = re.compile(r"[.,;:!?\"'()\[\]{}\-–—/\\|…«»“”‘’、。，．：；！？「」『』（）【】〔〕《》〈〉・～〜]")
_SENTENCE_END = frozenset(".!?:…\"”’)。．！？：」』）")

FEATURE_NAMES = (
    "log_chars", "log_words", "link_density", "punct_ratio", "digit_ratio", "upper_ratio",
    "bucket", "relative_position", "relative_index", "hidden", "depth", "ends_sentence",
    "has_images", "log_page_nodes",
    # Template repetition: how many nodes of the page share this node's reTPS shape (the reTPS without
    # its position buckets, "li|21" -> "li", since the items of one list sit in different buckets),
    # and what share of the page's text they hold. Menus repeat a shape with little text, the items of
    # a listing repeat one with much of the page's text, an article's paragraphs share one that holds
    # most of it.
    "log_same_retps", "same_retps_text_share",
    # What the page declares itself to be (declared.py: schema.org / Open Graph types), the same for
    # every node of a page: the node's other inputs cannot tell a product page's reviews from a review
    # article's paragraphs, the page's markup often can.
    "declares_product", "declares_article", "declares_discussion", "declares_collection",
    # The node's containers, as readability scores them: the text under an element and how much of it is
    # link text. The node's other features are its own; a paragraph of the article and one of a comment,
    # or a "related" list's item and a list item of the article, differ mostly in what encloses them. For
    # the parent element and the grandparent: their share of the page's characters and their link
    # density (link characters over characters, every node under them); the grandparent's number of text
    # nodes; and how many levels up the nearest element (the node's own included) holding at least
    # CORE_SHARE of the page's characters is.
    "parent_text_share", "parent_link_density", "grandparent_text_share", "grandparent_link_density",
    "grandparent_log_nodes", "levels_to_core",
)
# Models record how many features they read (card: head.n_features); the first 14 are those of
# models trained before the template-repetition features, the first 16 those of models trained before
# the declared-kind features, the first 20 those of models trained before the container features: all
# keep working unchanged.
N_FEATURES = len(FEATURE_NAMES)
# What `edrew train` reads unless told otherwise: everything but the container features, which were
# measured and not made the default (docs/model.md).
DEFAULT_FEATURES = 20
CONTAINER_FEATURES = 6
CORE_SHARE = 0.3     # levels_to_core: the share of the page's characters an element must hold
CORE_LEVELS = 10     # levels_to_core counts at most this many levels (then / CORE_LEVELS, so in [0, 1])


def retps_tokens(node: Node) -> List[str]:
    tokens = node.tokens[:MAX_RETPS_TOKENS]
    return tokens if tokens else [EMPTY_TOKEN]


def text_words(content: str) -> List[str]:
    """The node's first words (words.split_words: whitespace, and pieces of Chinese or Japanese text),
    cut to MAX_WORD_CHARS; at least one token."""
    words = [w[:MAX_WORD_CHARS] for w in split_words(content, TEXT_WORDS)]
    return words if words else [EMPTY_TOKEN]


def node_features(node: Node, page: Page) -> List[float]:
    text = node.content
    n = len(text)
    letters = len(_LETTER.findall(text))
    upper = len(_UPPER.findall(text))
    digits = len(_DIGIT.findall(text))
    punct = len(_PUNCT.findall(text))
    words = count_words(text)
    denom = max(n, 1)
    count_tags = max(page.count_tags, 1)
    n_nodes = max(len(page.nodes), 1)
    return [
        math.log1p(n) / 8.0,
        math.log1p(words) / 6.0,
        min(node.link_chars / denom, 1.0),
        punct / denom,
        digits / denom,
        upper / max(letters, 1),
        node.bucket / 100.0,
        min(node.position / count_tags, 1.0),
        node.index / n_nodes,
        1.0 if node.hidden else 0.0,
        min(node.depth, 60) / 60.0,
        1.0 if text and text[-1] in _SENTENCE_END else 0.0,
        1.0 if node.images else 0.0,
        math.log1p(len(page.nodes)) / 10.0,
        math.log1p(sum(1 for other in page.nodes if retps_shape(other.retps) == retps_shape(node.retps))) / 6.0,
        sum(len(other.content) for other in page.nodes if retps_shape(other.retps) == retps_shape(node.retps))
        / max(sum(len(other.content) for other in page.nodes), 1),
    ] + [1.0 if kind else 0.0 for kind in declared_kinds(page.declared)] + _node_container(node, page)


def _node_container(node: Node, page: Page) -> List[float]:
    """The container features of one node by their definition (quadratic; page_features computes them in one
    pass): the nodes under an element are those whose path steps start with the element's; the k-th
    ancestor of a path of fewer than k + 1 steps stands for the whole page."""
    steps = _steps(node.path)
    total = max(sum(len(other.content) for other in page.nodes), 1)

    def under(k: int):  # chars, link chars and nodes under the node's k-th ancestor element (0: its own)
        inside = [o for o in page.nodes
                  if len(steps) <= k or _steps(o.path)[:len(steps) - k] == steps[:len(steps) - k]]
        return sum(len(o.content) for o in inside), sum(o.link_chars for o in inside), len(inside)

    (p_chars, p_links, _), (g_chars, g_links, g_nodes) = under(1), under(2)
    levels = next((k for k in range(len(steps)) if under(k)[0] / total >= CORE_SHARE), len(steps))
    return [p_chars / total, min(p_links / max(p_chars, 1), 1.0), g_chars / total,
            min(g_links / max(g_chars, 1), 1.0), math.log1p(g_nodes) / 6.0, min(levels, CORE_LEVELS) / CORE_LEVELS]


_LETTER_BIT, _UPPER_BIT, _DIGIT_BIT, _PUNCT_BIT, _SPACE_BIT, _UNSPACED_BIT = 1, 2, 4, 8, 16, 32
# \s matches exactly the characters str.isspace() accepts, which are those str.split() splits on
_CLASSES = ((_LETTER, _LETTER_BIT), (_UPPER, _UPPER_BIT), (_DIGIT, _DIGIT_BIT), (_PUNCT, _PUNCT_BIT),
            (re.compile(r"\s"), _SPACE_BIT), (UNSPACED, _UNSPACED_BIT))
_BMP = 0x10000
_table: "np.ndarray | None" = None


def _class_bits(text: str) -> int:
    return sum(bit for pattern, bit in _CLASSES if pattern.match(text))


def _class_table() -> np.ndarray:
    """Per code point of the BMP, which of the counted classes it is in (built from the regexes
    themselves, once, so the vectorised counts are exactly those of node_features)."""
    global _table
    if _table is None:
        every = "".join(map(chr, range(_BMP)))
        table = np.zeros(_BMP, dtype=np.uint8)
        for pattern, bit in _CLASSES:
            hits = np.fromiter((m.start() for m in pattern.finditer(every)), dtype=np.int64)
            table[hits] |= bit
        _table = table
    return _table


def page_features(page: Page, n_features: int = DEFAULT_FEATURES) -> np.ndarray:
    """(len(page.nodes), n_features) float32: the first `n_features` of node_features for every node,
    vectorised.

    The character counts (letters, upper case, digits, punctuation, words) are the costly part; here
    they come from one pass over the page's text through a code point table and cumulative sums,
    instead of four regex scans and a split per node (5 ms of a page's 13 ms of scoring with warm caches).
    """
    nodes = page.nodes
    if not nodes:
        return np.zeros((0, n_features), dtype=np.float32)
    texts = [node.content for node in nodes]
    codes = np.frombuffer("".join(texts).encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    bits = _class_table()[np.minimum(codes, _BMP - 1)]
    beyond = np.flatnonzero(codes >= _BMP)
    if beyond.size:  # astral code points (emoji, historic scripts): few, classified one by one
        bits[beyond] = [_class_bits(chr(c)) for c in codes[beyond].tolist()]
    lengths = [len(text) for text in texts]
    ends = np.cumsum(np.asarray(lengths, dtype=np.int64))
    starts = np.concatenate(([0], ends[:-1]))

    def count(flags: np.ndarray) -> np.ndarray:
        total = np.concatenate(([0], np.cumsum(flags, dtype=np.int64)))
        return (total[ends] - total[starts]).astype(np.float64)

    letters, upper, digits, punct = (count((bits & bit) != 0)
                                     for bit in (_LETTER_BIT, _UPPER_BIT, _DIGIT_BIT, _PUNCT_BIT))
    # len(text.split()), without splitting: the non-space characters that start their node's text or
    # follow a space
    space = (bits & _SPACE_BIT) != 0
    after_space = np.concatenate(([True], space[:-1]))
    after_space[starts[starts < len(space)]] = True
    words = count(~space & after_space)
    # text in a script written without spaces: counted word by word as node_features does (rare, so in Python)
    unspaced = (bits & _UNSPACED_BIT) != 0
    if unspaced.any():
        for i in np.flatnonzero(count(unspaced)).tolist():
            words[i] = count_words(texts[i])
    n = np.asarray(lengths, dtype=np.float64)
    denom = np.maximum(n, 1.0)
    count_tags = max(page.count_tags, 1)
    n_nodes = max(len(nodes), 1)
    out = np.empty((len(nodes), max(n_features, DEFAULT_FEATURES)), dtype=np.float64)
    out[:, 0] = np.log1p(n) / 8.0
    out[:, 1] = np.log1p(words) / 6.0
    out[:, 2] = np.minimum(np.asarray([node.link_chars for node in nodes], dtype=np.float64) / denom, 1.0)
    out[:, 3] = punct / denom
    out[:, 4] = digits / denom
    out[:, 5] = upper / np.maximum(letters, 1.0)
    out[:, 6] = [node.bucket / 100.0 for node in nodes]
    out[:, 7] = np.minimum([node.position / count_tags for node in nodes], 1.0)
    out[:, 8] = [node.index / n_nodes for node in nodes]
    out[:, 9] = [1.0 if node.hidden else 0.0 for node in nodes]
    out[:, 10] = [min(node.depth, 60) / 60.0 for node in nodes]
    out[:, 11] = [1.0 if text and text[-1] in _SENTENCE_END else 0.0 for text in texts]
    out[:, 12] = [1.0 if node.images else 0.0 for node in nodes]
    out[:, 13] = math.log1p(len(nodes)) / 10.0
    if n_features > 14:
        # one shape id per node (computed once per distinct reTPS), then counts and text per shape
        shape_ids: Dict[str, int] = {}
        id_of = {retps: shape_ids.setdefault(retps_shape(retps), len(shape_ids))
                 for retps in dict.fromkeys(node.retps for node in nodes)}
        ids = np.fromiter((id_of[node.retps] for node in nodes), dtype=np.int64, count=len(nodes))
        total_chars = max(float(n.sum()), 1.0)
        out[:, 14] = np.log1p(np.bincount(ids)[ids]) / 6.0
        out[:, 15] = np.bincount(ids, weights=n)[ids] / total_chars
    if n_features > 16:
        out[:, 16:20] = np.asarray(declared_kinds(page.declared), dtype=np.float64)
    if n_features > 20:
        out[:, 20:26] = container_features(nodes, n)
    return out[:, :n_features].astype(np.float32)


def container_features(nodes: Sequence[Node], chars: np.ndarray) -> np.ndarray:
    """(len(nodes), CONTAINER_FEATURES): FEATURE_NAMES' container features, `chars` each node's text length.

    Every element on some node's path gets an id (a trie over the path steps, so an element is named once
    however many nodes sit under it), and each node adds its characters, link characters and itself to every
    element above it: one pass of sum(depth) steps."""
    ids: Dict[tuple, int] = {}
    chains = []
    for node in nodes:
        chain, at = [], -1
        for step in _steps(node.path):
            at = ids.setdefault((at, step), len(ids))
            chain.append(at)
        chains.append(chain)
    lengths = np.fromiter((len(chain) for chain in chains), dtype=np.int64, count=len(chains))
    flat = np.fromiter((i for chain in chains for i in chain), dtype=np.int64, count=int(lengths.sum()))
    owner = np.repeat(np.arange(len(nodes)), lengths)
    links = np.asarray([node.link_chars for node in nodes], dtype=np.float64)
    total = max(float(chars.sum()), 1.0)
    # per element; the last entry (id -1) stands for the whole page, above the root of a short path
    under_chars = np.append(np.bincount(flat, weights=chars[owner], minlength=len(ids)), chars.sum())
    under_links = np.append(np.bincount(flat, weights=links[owner], minlength=len(ids)), links.sum())
    under_nodes = np.append(np.bincount(flat, minlength=len(ids)), len(nodes)).astype(np.float64)
    ends = np.cumsum(lengths)  # a node's own element is flat[ends - 1], its k-th ancestor flat[ends - 1 - k]
    out = np.empty((len(nodes), CONTAINER_FEATURES), dtype=np.float64)
    for col, k in ((0, 1), (2, 2)):
        element = np.where(lengths > k, flat[np.maximum(ends - 1 - k, 0)], -1)
        out[:, col] = under_chars[element] / total
        out[:, col + 1] = np.minimum(under_links[element] / np.maximum(under_chars[element], 1.0), 1.0)
        if k == 2:
            out[:, 4] = np.log1p(under_nodes[element]) / 6.0
    # levels up from the node's own element (0) to the nearest holding CORE_SHARE of the page; its
    # path's length when none does
    up = np.repeat(ends - 1, lengths) - np.arange(len(flat))
    core = under_chars[flat] / total >= CORE_SHARE
    levels = lengths.copy()
    np.minimum.at(levels, owner[core], up[core])
    out[:, 5] = np.minimum(levels, CORE_LEVELS) / CORE_LEVELS
    return out


def distinct(items: Sequence[str]) -> List[str]:
    return list(dict.fromkeys(items))


# Ancestor levels the head can pool over (head config "tree_levels"): each level k groups the nodes
# whose elements share their k-th ancestor (k = 1: the parent element).
MAX_TREE_LEVELS = 4


def is_tree_levels(value) -> bool:
    """Whether `value` is a valid head "tree_levels": a whole number 0..MAX_TREE_LEVELS (not a bool)."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_TREE_LEVELS


def ancestor_groups(paths: Sequence[str], levels: int) -> np.ndarray:
    """(levels, len(paths)) int64: for each level k = 1..levels, a dense group id per node, equal for
    nodes whose XPaths agree once their last k steps are cut (their elements share the k-th ancestor).

    Read from Node.path because the serializer writes one for every node: the same element always gets
    the same prefix. A document-order path of a very deep element (`(//div)[7]`, one step) has the
    root as every ancestor, which puts such nodes together at every level: coarse, never wrong."""
    out = np.zeros((levels, len(paths)), dtype=np.int64)
    if not paths or levels < 1:
        return out
    steps = [_steps(path) for path in paths]
    for k in range(1, levels + 1):
        ids: Dict[str, int] = {}
        out[k - 1] = [ids.setdefault("/".join(s[:-k]) if len(s) > k else "", len(ids)) for s in steps]
    return out


def _steps(path: str) -> List[str]:
    if not path.startswith("("):
        return path.split("/")
    # "(//div)[7]" (and "(//div)[7]/*[last()]") holds slashes but starts with one step
    end = path.find("]") + 1
    return ["", path[:end]] + (path[end + 1:].split("/") if path[end:] else [])
