"""Train/test splits that never leak a site into both sides, plus the thesis's SWDE protocol.

All functions take a sequence of pages (LabelledPage or anything `key` understands) and return lists
of indices into it, so callers keep their own page objects.
"""
from __future__ import annotations

import hashlib
import random
from collections import defaultdict
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from . import registrable_domain

__all__ = ["group_kfold", "swde_split", "cross_site_splits", "by_domain", "by_host", "by_site", "GROUP_KEYS",
           "group_key"]

Split = Tuple[List[int], List[int]]


def by_domain(page) -> str:
    """The group a dataset names (the simple format's `group`), else the registrable domain of the page's
    host: glossier.com and uk.glossier.com, or two substack.com blogs, fall in one fold."""
    return getattr(page, "group", "") or registrable_domain(page.domain)


def by_host(page) -> str:
    """The page's host alone ("www." dropped), the split key of the measurements before 27 Nov 2026."""
    return getattr(page, "group", "") or page.domain


# what --group-by names, in edrew evaluate, edrew train and the evaluation scripts
GROUP_KEYS = ("domain", "host")


def group_key(group_by: str) -> Callable:
    """The split key a --group-by value names: by_domain for "domain", by_host for "host"."""
    return {"domain": by_domain, "host": by_host}[group_by]


def by_site(page) -> str:
    return page.page_type_or_site


def group_kfold(pages: Sequence, k: int = 5, key: Callable = by_domain, seed: int = 1) -> List[Split]:
    """k (train, test) index splits; all pages sharing a key (domain) fall in the same test fold.

    Groups are shuffled with `seed`, then each goes to the fold with the fewest pages so far (largest
    groups first), which keeps folds close in size even when one domain has many pages.
    """
    if k < 2:
        raise ValueError("group_kfold needs k >= 2")
    groups: Dict[str, List[int]] = defaultdict(list)
    for i, p in enumerate(pages):
        groups[key(p)].append(i)
    names = sorted(groups)
    random.Random(seed).shuffle(names)
    names.sort(key=lambda g: -len(groups[g]))  # stable: equal sizes keep the shuffled order
    if len(names) < k:
        raise ValueError(f"group_kfold: {len(names)} groups cannot fill {k} folds")
    folds: List[List[int]] = [[] for _ in range(k)]
    for g in names:
        smallest = min(range(k), key=lambda f: (len(folds[f]), f))
        folds[smallest].extend(groups[g])
    out = []
    for f in range(k):
        test = sorted(folds[f])
        test_set = set(test)
        out.append(([i for i in range(len(pages)) if i not in test_set], test))
    return out


def _fingerprint(page) -> str:
    """Pages are duplicates when their serialized nodes are identical (same texts, same reTPS)."""
    inner = getattr(page, "page", page)
    h = hashlib.sha1()
    for n in getattr(inner, "nodes", ()):
        h.update(n.retps.encode("utf-8", "replace"))
        h.update(b"\x00")
        h.update(n.content.encode("utf-8", "replace"))
        h.update(b"\x01")
    return h.hexdigest()


def swde_split(pages: Sequence, ratios: Tuple[float, float, float] = (0.7, 0.2, 0.1),
               seed: int = 1) -> Tuple[List[int], List[int], List[int]]:
    """The dissertation's protocol: unique pages shuffled with seed 1, cut 70/20/10 (train/val/test).

    "Unique" drops exact duplicates (identical serialized nodes) so one page cannot sit in train and
    test at once; the first occurrence is kept. Pages of one site land on both sides: this measures
    seen-site accuracy, as the thesis did; :func:`cross_site_splits` measures unseen sites.
    """
    if abs(sum(ratios) - 1.0) > 1e-6:
        raise ValueError("ratios must sum to 1")
    seen = set()
    unique = []
    for i, p in enumerate(pages):
        fp = _fingerprint(p)
        if fp not in seen:
            seen.add(fp)
            unique.append(i)
    random.Random(seed).shuffle(unique)
    n_train = int(round(ratios[0] * len(unique)))
    n_val = int(round(ratios[1] * len(unique)))
    train, val, test = unique[:n_train], unique[n_train:n_train + n_val], unique[n_train + n_val:]
    return sorted(train), sorted(val), sorted(test)


def cross_site_splits(pages: Sequence, key: Callable = by_site,
                      test_sites: Optional[Sequence[str]] = None) -> List[Tuple[str, List[int], List[int]]]:
    """Leave-one-site-out: (site, train indices, test indices) for each site (or each of test_sites)."""
    sites = sorted({key(p) for p in pages}) if test_sites is None else list(test_sites)
    out = []
    for s in sites:
        test = [i for i, p in enumerate(pages) if key(p) == s]
        train = [i for i, p in enumerate(pages) if key(p) != s]
        out.append((s, train, test))
    return out
