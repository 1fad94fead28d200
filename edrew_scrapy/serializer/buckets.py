"""Alg. 11-12: an element's position `name|n` as the Fibonacci bucket of 100 * n / countTags, looked up in a
table built once a page rather than bisected per element."""
from __future__ import annotations

from ..tokens import fibonacci_bucket


def _bucket_tables(count_tags: int, fib: tuple, max_size: int) -> tuple:
    """fibonacci_bucket(p, count_tags) for every position p in 0..count_tags, and "|bucket" strings:
    a few slices per page instead of a bisect per element. Built by probing the exact expression
    fibonacci_bucket uses at each bucket's first position, so the values are the same."""
    # a table that is not increasing, or a page of a million <hr> (void tags count but are no
    # elements): compute each bucket instead
    if count_tags > max_size or any(a >= b for a, b in zip(fib, fib[1:])):
        return [], _NoSuffixes(count_tags, fib)
    buckets: list = []
    for k in range(1, len(fib) + 1):
        end = count_tags + 1 if k == len(fib) else _first_position(fib[k], count_tags)
        if end > len(buckets):
            buckets.extend([fib[k - 1]] * (end - len(buckets)))
    suffixes = [f"|{b}" for b in fib]
    by_value = dict(zip(fib, suffixes))
    return buckets, [by_value[b] for b in buckets]


def _first_position(value: int, count_tags: int) -> int:
    """The first position p (clipped to 0..count_tags+1) with 100.0 * p / count_tags >= value."""
    p = min(max(int(value * count_tags / 100), 0), count_tags + 1)
    while p > 0 and 100.0 * (p - 1) / count_tags >= value:
        p -= 1
    while p <= count_tags and 100.0 * p / count_tags < value:
        p += 1
    return p


class _NoSuffixes:
    """The "|bucket" strings computed one by one (a bucket table that is not increasing)."""

    def __init__(self, count_tags: int, fib: tuple):
        self.count_tags, self.fib = count_tags, fib

    def __getitem__(self, position: int) -> str:
        return f"|{fibonacci_bucket(position, self.count_tags, self.fib)}"
