"""The scorer's bounded caches: fixed-shape float rows by key, least recently used forgotten first.

Torch-free: the numpy backend keeps its rows here as they are; the PyTorch scorer (scorer.LRU) hands
tensors in and out that share these rows' memory.
"""
from __future__ import annotations

import math
import sys
from collections import OrderedDict
from typing import Callable, Dict, Hashable, List, Optional, Sequence

import numpy as np

from .features import distinct

# Python's bookkeeping per cache entry besides its key and its row: the OrderedDict's entry, its table
# slots and linked-list node (about 85-120 B, depending on how full the table is) and the row index
# (an int, 32 B). Filling an LRU in a fresh process (Python 3.11, torch 2.13), RSS grew by 330, 590 and
# 928 B per entry for token, text and sequence rows (128, 256 and 512 B) with 57, 99 and 219 B keys,
# against 345, 515 and 891 B counted with this value.
ENTRY_OVERHEAD = 160
# EDREW_CACHE_MB's default, and how a budget is shared out between a scorer's three caches.
DEFAULT_CACHE_MB = 128
CACHE_SHARES = {"tokens": 0.25, "sequences": 0.5, "texts": 0.25}


def cache_budget(cache_mb: Optional[float], name: str) -> Optional[int]:
    """Bytes for cache `name` out of a budget of `cache_mb` MiB (None: no byte limit)."""
    if cache_mb is None:
        return None
    return int(float(cache_mb) * 2**20 * CACHE_SHARES[name])


def index_array(values: Sequence[int]) -> np.ndarray:
    """A 1-d int64 array of Python ints (np.fromiter: a list through np.array is slower)."""
    return np.fromiter(values, dtype=np.int64, count=len(values))


class LRU:
    """A bounded mapping of keys to fixed-shape float rows that forgets the least recently used entries.

    Bounded by entries (`capacity`) and, when `max_bytes` is given, by bytes (`nbytes`: the rows handed
    out, the keys by sys.getsizeof and ENTRY_OVERHEAD per entry). The rows live in one array,
    allocated once, on the first insert, with as many rows as the limits allow; the memory of rows not
    yet handed out is never touched, so it is not resident (one large allocation, mapped lazily), and
    a row freed by an eviction is reused. One array rather than an array per entry: a row of 32 floats
    (128 B) kept as an object of its own costs several times its size in RSS.
    """

    def __init__(self, capacity: int, max_bytes: Optional[int] = None) -> None:
        self.capacity = max(0, int(capacity))
        self.max_bytes = None if max_bytes is None else max(0, int(max_bytes))
        self._slot: "OrderedDict[Hashable, int]" = OrderedDict()
        self._rows: Optional[np.ndarray] = None
        self._row_bytes = 0
        self._used = 0        # rows handed out so far (the ones whose memory was touched)
        self._free: List[int] = []
        self._key_bytes = 0

    def __len__(self) -> int:
        return len(self._slot)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._slot

    @property
    def nbytes(self) -> int:
        """The rows handed out, the keys and the per-entry bookkeeping."""
        return self._used * self._row_bytes + self._key_bytes + ENTRY_OVERHEAD * len(self._slot)

    def stats(self) -> Dict[str, int]:
        return {"entries": len(self._slot), "bytes": self.nbytes}

    def get_many(self, keys: Sequence[Hashable], compute: Callable[[List[Hashable]], np.ndarray]) -> np.ndarray:
        """Stack the values of `keys` (distinct), computing the missing ones in one call. The keys found
        become the most recently used, in their order, then the new ones after them."""
        slot = self._slot
        missing = [k for k in keys if k not in slot]
        values = np.asarray(compute(missing)) if missing else None
        if values is not None and self._rows is None:
            self._allocate(values)
        if self._rows is None:
            return np.zeros(0, dtype=np.float32)
        hit_at, hit_rows, miss_at = [], [], []
        get, refresh = slot.get, slot.move_to_end
        for i, k in enumerate(keys):
            row = get(k)
            if row is None:
                miss_at.append(i)
            else:
                refresh(k)
                hit_at.append(i)
                hit_rows.append(row)
        if not miss_at:
            return self._rows.take(index_array(hit_rows), axis=0)
        values = values.astype(self._rows.dtype, copy=False)
        if hit_at:
            out = np.empty((len(keys), *self._rows.shape[1:]), dtype=self._rows.dtype)
            out[index_array(hit_at)] = self._rows.take(index_array(hit_rows), axis=0)
            out[index_array(miss_at)] = values
        else:
            out = values
        self._insert(missing, values)
        return out

    def _allocate(self, values: np.ndarray) -> None:
        self._row_bytes = math.prod(values.shape[1:]) * values.itemsize
        limit = self.capacity
        if self.max_bytes is not None:
            limit = min(limit, self.max_bytes // (self._row_bytes + ENTRY_OVERHEAD))
        self._rows = np.empty((limit, *values.shape[1:]), dtype=values.dtype)

    def _insert(self, keys: List[Hashable], values: np.ndarray) -> None:
        sizes = [sys.getsizeof(k) for k in keys]
        if self._insert_without_eviction(keys, values, sizes):
            return
        rows, taken = [], []
        for i, k in enumerate(keys):
            key_bytes = sizes[i]
            row = self._take_row(key_bytes + ENTRY_OVERHEAD)
            if row is None:
                continue  # larger than the whole budget: returned, not kept
            self._slot[k] = row
            self._key_bytes += key_bytes
            rows.append(row)
            taken.append(i)
        if rows:
            self._rows[index_array(rows)] = values if len(taken) == len(keys) else values[index_array(taken)]

    def _insert_without_eviction(self, keys: List[Hashable], values: np.ndarray, sizes: List[int]) -> bool:
        """Insert every key at once when all fit without evicting anything (the common case until the
        cache is full: one check for the batch instead of one per key); False when they do not."""
        n = len(keys)
        fresh = max(0, n - len(self._free))
        if len(self._slot) + n > self.capacity or self._used + fresh > self._rows.shape[0]:
            return False
        added = sum(sizes)
        if self.max_bytes is not None and (self.nbytes + added + n * ENTRY_OVERHEAD + fresh * self._row_bytes
                                           > self.max_bytes):
            return False
        reused = [self._free.pop() for _ in range(n - fresh)]
        rows = reused + list(range(self._used, self._used + fresh))
        self._used += fresh
        self._slot.update(zip(keys, rows))
        self._key_bytes += added
        self._rows[index_array(rows)] = values
        return True

    def _take_row(self, cost: int) -> Optional[int]:
        """A row for a new entry that costs `cost` bytes besides its row, evicting the least recently
        used entries as the limits require; None when the entry cannot fit even in an empty cache."""
        budget = self.max_bytes
        while self._slot and (len(self._slot) >= self.capacity or not (self._free or self._used < len(self._rows))
                              or (budget is not None and self.nbytes + cost
                                  + (0 if self._free else self._row_bytes) > budget)):
            key, row = self._slot.popitem(last=False)
            self._key_bytes -= sys.getsizeof(key)
            self._free.append(row)
        if self._free:
            row = self._free.pop()
        elif self._used < len(self._rows):
            row = self._used
            self._used += 1
        else:
            return None
        if budget is not None and self.nbytes + cost > budget:
            self._free.append(row)
            return None
        return row

    def gather(self, keys: Sequence[Hashable], compute: Callable[[List[Hashable]], np.ndarray]) -> np.ndarray:
        """Like get_many, for keys that may repeat: one row per key, each distinct key looked up once."""
        unique = distinct(keys)
        values = LRU.get_many(self, unique, compute)
        if len(unique) == len(keys):
            return values
        where = {k: i for i, k in enumerate(unique)}
        return values.take(index_array([where[k] for k in keys]), axis=0)
