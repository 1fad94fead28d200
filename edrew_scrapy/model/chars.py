"""ELMo's character ids (AllenNLP's ELMoCharacterMapper, reproduced), without torch: both backends read them."""
from __future__ import annotations

from typing import List, Sequence

import numpy as np

MAX_WORD_LENGTH = 50
BOS_CHAR = 256   # beginning of sentence
EOS_CHAR = 257   # end of sentence
BOW_CHAR = 258   # beginning of word
EOW_CHAR = 259   # end of word
PAD_CHAR = 260
N_CHARACTERS = 262  # 261 ids shifted by one so that 0 can mean "no token here"


def _boundary_ids(char: int) -> List[int]:
    ids = [PAD_CHAR] * MAX_WORD_LENGTH
    ids[0], ids[1], ids[2] = BOW_CHAR, char, EOW_CHAR
    return [c + 1 for c in ids]


BOS_IDS = _boundary_ids(BOS_CHAR)
EOS_IDS = _boundary_ids(EOS_CHAR)


def char_ids(word: str) -> List[int]:
    """The 50 character ids ELMo reads for `word`: UTF-8 bytes between word markers, shifted by one."""
    encoded = word.encode("utf-8", "ignore")[: MAX_WORD_LENGTH - 2]
    ids = [PAD_CHAR + 1] * MAX_WORD_LENGTH
    ids[0] = BOW_CHAR + 1
    for k, byte in enumerate(encoded, start=1):
        ids[k] = byte + 1
    ids[len(encoded) + 1] = EOW_CHAR + 1
    return ids


def char_array(words: Sequence[str]) -> np.ndarray:
    """(len(words), 50) int64 array of character ids: `char_ids` of each word, built with whole-array
    operations (a list of lists through torch.tensor cost more than the character CNN itself)."""
    width = MAX_WORD_LENGTH - 2
    encoded = [w.encode("utf-8", "ignore")[:width] for w in words]
    lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
    chars = np.frombuffer(b"".join(e.ljust(width, b"\0") for e in encoded), dtype=np.uint8).reshape(-1, width)
    ids = np.full((len(encoded), MAX_WORD_LENGTH), PAD_CHAR + 1, dtype=np.int64)
    ids[:, 0] = BOW_CHAR + 1
    ids[:, 1:-1] = np.where(np.arange(width) < lengths[:, None], chars.astype(np.int64) + 1, PAD_CHAR + 1)
    ids[np.arange(len(encoded)), lengths + 1] = EOW_CHAR + 1
    return ids
