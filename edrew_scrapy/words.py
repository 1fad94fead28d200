"""Words of a node's text, for scripts written with spaces between words and for those written without.

Everything that counts or reads a node's words (the model's word-count feature and first words, the
main region's word shares, the head's loss weights) splits text here. Chinese and Japanese put no
spaces between words, so `str.split` returns a whole paragraph as one "word": the model then read a
paragraph as a one-word label, scored the body of a Chinese or Japanese article 0.37-0.47 where the
same article in English scores 0.87-0.96, and kept its share buttons and related links beside it
(docs/method-choices.md, "Text without spaces between words"). Here a run of Han or kana characters is cut into
pieces of UNSPACED_WORD_CHARS characters, close to the length of a word in both languages, without a
dictionary. Text without such characters splits exactly as `str.split` does, so nothing changes for
the scripts the shipped models were trained on.

Pure: no Scrapy, no torch.
"""
from __future__ import annotations

import re
from typing import List

__all__ = ["UNSPACED", "UNSPACED_WORD_CHARS", "count_words", "has_unspaced", "split_words"]

# Han (CJK unified ideographs, extension A, compatibility ideographs, the astral extensions B-I), the
# ideographic iteration marks, hiragana, katakana (and its phonetic extensions, halfwidth forms). Hangul
# is not here: Korean puts spaces between words. Thai, Lao, Khmer and Myanmar leave words unspaced too,
# but put spaces between phrases: the demo article in Thai keeps the English page's nodes without
# pieces (tests/fixtures/translated), so they are left as they are.
UNSPACED = re.compile(
    "[\u3005-\u3007\u3021-\u3029\u3031-\u3035\u303b\u303c\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf"
    "\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003134f]")
_RUNS = re.compile(UNSPACED.pattern + "+")
# Chinese words average about 1.5-2 characters in running text, Japanese ones (with their kana
# endings) a little more: two characters a piece. Pieces of 1, 3 or 4 keep the same nodes of the
# translated demo article (docs/method-choices.md, "Text without spaces between words").
UNSPACED_WORD_CHARS = 2


def has_unspaced(text: str) -> bool:
    """The text holds a character of a script written without spaces (UNSPACED)."""
    return not text.isascii() and UNSPACED.search(text) is not None


def _pieces(word: str) -> List[str]:
    """One whitespace-free word as words: each UNSPACED run in pieces of UNSPACED_WORD_CHARS, each
    stretch of other characters between them as one word ("2026年3月" -> "2026", "年", "3", "月")."""
    out: List[str] = []
    start = 0
    size = UNSPACED_WORD_CHARS
    for m in _RUNS.finditer(word):
        if m.start() > start:
            out.append(word[start:m.start()])
        run = m.group()
        out.extend(run[k:k + size] for k in range(0, len(run), size))
        start = m.end()
    if start < len(word):
        out.append(word[start:])
    return out


def split_words(text: str, limit: int = -1) -> List[str]:
    """The words of `text`: `text.split()`, with each UNSPACED run cut into pieces (`_pieces`). With
    `limit` >= 0, at most the first `limit` words (and only the start of the text is looked at)."""
    if limit >= 0:
        # the first `limit` whitespace words hold at least `limit` words
        words = text.split(None, limit)[:limit]
    else:
        words = text.split()
    if text.isascii() or not any(UNSPACED.search(w) for w in words):
        return words
    out: List[str] = []
    for w in words:
        if UNSPACED.search(w):
            out.extend(_pieces(w))
        else:
            out.append(w)
        if 0 <= limit <= len(out):
            return out[:limit]
    return out


def count_words(text: str) -> int:
    """len(split_words(text)), without building the list for text that has no UNSPACED character."""
    if not has_unspaced(text):
        return len(text.split())
    return len(split_words(text))
