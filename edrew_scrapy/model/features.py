"""What the model reads from a Node besides its reTPS: the first words of its text, shallow features."""
from __future__ import annotations

import math
import re
from typing import List, Sequence

import numpy as np

from ..page import Node, Page

EMPTY_TOKEN = "<#EMPTY>"   # stands for a node without reTPS tokens, so that every sequence has one
MAX_RETPS_TOKENS = 32      # the serializer keeps ~20; more would only be hostile input
TEXT_WORDS = 8             # words of a node's text that go through the character CNN
MAX_WORD_CHARS = 20        # longer words are cut: the CNN sees their start, the cache stays small

# Counting with regexes runs in C: a per-character Python loop cost more than scoring a page's nodes.
_LETTER = re.compile(r"[^\W\d_]")
_UPPER = re.compile(r"[A-ZÀ-ÖØ-ÞΑ-ΩА-Я]")
_DIGIT = re.compile(r"\d")
_PUNCT = re.compile(r"[.,;:!?\"'()\[\]{}\-–—/\\|…«»“”‘’]")
_SENTENCE_END = frozenset(".!?:…\"”’)")

FEATURE_NAMES = (
    "log_chars", "log_words", "link_density", "punct_ratio", "digit_ratio", "upper_ratio",
    "bucket", "relative_position", "relative_index", "hidden", "depth", "ends_sentence",
    "has_images", "log_page_nodes",
)
N_FEATURES = len(FEATURE_NAMES)


def retps_tokens(node: Node) -> List[str]:
    tokens = node.tokens[:MAX_RETPS_TOKENS]
    return tokens if tokens else [EMPTY_TOKEN]


def text_words(content: str) -> List[str]:
    """The node's first words (whitespace split, cut to MAX_WORD_CHARS); at least one token."""
    words = [w[:MAX_WORD_CHARS] for w in content.split(None, TEXT_WORDS)[:TEXT_WORDS]]
    return words if words else [EMPTY_TOKEN]


def node_features(node: Node, page: Page) -> List[float]:
    text = node.content
    n = len(text)
    letters = len(_LETTER.findall(text))
    upper = len(_UPPER.findall(text))
    digits = len(_DIGIT.findall(text))
    punct = len(_PUNCT.findall(text))
    words = len(text.split())
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
    ]


def page_features(page: Page) -> np.ndarray:
    """(len(page.nodes), N_FEATURES) float32."""
    if not page.nodes:
        return np.zeros((0, N_FEATURES), dtype=np.float32)
    return np.asarray([node_features(node, page) for node in page.nodes], dtype=np.float32)


def distinct(items: Sequence[str]) -> List[str]:
    return list(dict.fromkeys(items))
