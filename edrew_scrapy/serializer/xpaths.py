"""The XPath of each node's element: positional steps from the root, or the document-order form past the
config's max_path_depth."""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:
    from . import _Builder
_XML_NAME = re.compile(r"[A-Za-z_][\w.-]*\Z")


class _Paths:
    """XPaths of elements, built on demand and memoised: positional steps from the root, or the
    document-order form `(//name)[k]` past max_depth so that a path never grows with the nesting."""

    def __init__(self, b: _Builder, max_depth: int):
        self.names, self.parents, self.segs, self.depths, self.ks = b.names, b.parents, b.segs, b.depths, b.ks
        self.max_depth = max_depth
        self.overflow = b.overflow
        self.path: list = [None] * len(self.names)
        self.path[0] = ""
        self.star_ks: dict = {}
        self.doc_index: Optional[dict] = None
        if self.overflow >= 0:  # the #overflow record is no element of the page: its parent's last child
            self.path[self.overflow] = self.of(self.parents[self.overflow]) + "/*[last()]"

    def of(self, i: int) -> str:
        path = self.path
        got = path[i]
        if got is not None:
            return got
        names = self.names
        if self.depths[i] > self.max_depth:
            got = path[i] = f"(//{_xpath_name(names[i])})[{self._doc_index(i)}]"
            return got
        parents, ks = self.parents, self.ks
        chain = []
        j = i
        while path[j] is None:
            chain.append(j)
            j = parents[j]
        base = path[j]
        for j in reversed(chain):
            key = _XPATH_NAMES.get(names[j]) or _xpath_name(names[j])
            # pass 1 counted siblings by name; names XPath cannot spell all count as `*`
            k = ks[j] if key != "*" else self._star_k(j)
            base = path[j] = f"{base}/{key}[{k}]"
        return base

    def _star_k(self, i: int) -> int:
        """Index of element i among its siblings whose names are no XPath names (all `*`)."""
        got = self.star_ks.get(i)
        if got is None:
            k = 0
            for c in self.segs[self.parents[i]]:
                if type(c) is int and c != self.overflow and _xpath_name(self.names[c]) == "*":
                    k += 1
                    self.star_ks[c] = k
            got = self.star_ks[i]
        return got

    def _doc_index(self, i: int) -> int:
        """Index of element i among the elements of its XPath name in the document, counted once for
        the whole page the first time a path is that deep (rare: pages nested past max_depth)."""
        if self.doc_index is None:
            counts: dict = {}
            self.doc_index = doc = {}
            max_depth, depths, names, overflow = self.max_depth, self.depths, self.names, self.overflow
            for j in range(1, len(names)):
                if j != overflow:
                    key = _xpath_name(names[j])
                    c = counts[key] = counts.get(key, 0) + 1
                    if depths[j] > max_depth:
                        doc[j] = c
        return self.doc_index[i]


_XPATH_NAMES: dict = {}


def _xpath_name(name: str) -> str:
    """The element name as an XPath step, or `*` for names XPath cannot spell."""
    key = _XPATH_NAMES.get(name)
    if key is None:
        key = name if _XML_NAME.match(name) else "*"
        if len(_XPATH_NAMES) < 10000:
            _XPATH_NAMES[name] = key
    return key
