"""Words of a node's text, for scripts written with spaces between words and for those written without.

Everything that counts or reads a node's words (the model's word-count feature and first words, the
main region's word shares, the head's loss weights) splits text here. Chinese and Japanese put no
spaces between words, so `str.split` returns a whole paragraph as one "word": the model then read a
paragraph as a one-word label, scored the body of a Chinese or Japanese article 0.37-0.47 where the
same article in English scores 0.87-0.96, and kept its share buttons and related links beside it
(docs/method-choices.md, "Text without spaces between words"). Here a run of Han or kana characters
is cut into pieces of UNSPACED_WORD_CHARS characters, close to the length of a word in both languages,
without a dictionary. Text without such characters splits exactly as `str.split` does, so nothing
changes for the scripts the shipped models were trained on.

Pure: no Scrapy, no torch.
"""
from __future__ import annotations

import re
from itertools import islice
from typing import List

__all__ = ["UNSPACED", "UNSPACED_WORD_CHARS", "count_words", "has_unspaced", "split_words"]

# Han (CJK unified ideographs, extension A, compatibility ideographs, the astral extensions B-I and the
# compatibility supplement), the ideographic iteration marks, hiragana, katakana (and its phonetic
# extensions, halfwidth forms). Hangul is not here: Korean puts spaces between words. Thai, Lao, Khmer
# and Myanmar leave words unspaced too, but put spaces between phrases: the demo article in Thai keeps
# the English page's nodes without pieces (tests/fixtures/translated), so they are left as they are.
_BASE = ("\u3005-\u3007\u3021-\u3029\u3031-\u3035\u303b\u303c\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf"
         "\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f\U00020000-\U000323af")
# Variation selectors pick a glyph of the character before them (ideographic variants of place and
# family names): they stay with it.
_SELECTORS = "\ufe00-\ufe0f\U000e0100-\U000e01ef"
UNSPACED = re.compile(f"[{_BASE}]")
# Chinese words average about 1.5-2 characters in running text, Japanese ones (with their kana
# endings) a little more: two characters a piece. Pieces of 1, 3 or 4 keep the same nodes of the
# translated demo article (docs/method-choices.md, "Text without spaces between words").
UNSPACED_WORD_CHARS = 2
# A word: up to UNSPACED_WORD_CHARS unspaced characters (each with its variation selectors), or a
# stretch of anything else that is not whitespace. `\s` is exactly what str.split() splits on, so
# text without unspaced characters gives str.split()'s words.
_WORD = re.compile(f"(?:[{_BASE}][{_SELECTORS}]*){{1,{UNSPACED_WORD_CHARS}}}|[^\\s{_BASE}]+")


def has_unspaced(text: str) -> bool:
    """The text holds a character of a script written without spaces (UNSPACED)."""
    return not text.isascii() and UNSPACED.search(text) is not None


def split_words(text: str, limit: int = -1) -> List[str]:
    """The words of `text`: `text.split()`, with each run of unspaced characters cut into pieces of
    UNSPACED_WORD_CHARS ("2026年3月" -> "2026", "年", "3", "月"; "河畔市议会" -> "河畔", "市议", "会").
    With `limit` >= 0, at most the first `limit` words, found without cutting up the rest of the text."""
    if not has_unspaced(text):
        return text.split(None, limit)[:limit] if limit >= 0 else text.split()
    if limit >= 0:
        return [m.group() for m in islice(_WORD.finditer(text), limit)]
    return _WORD.findall(text)


def count_words(text: str) -> int:
    """len(split_words(text)); `len(text.split())` for text without unspaced characters."""
    if not has_unspaced(text):
        return len(text.split())
    return len(_WORD.findall(text))
