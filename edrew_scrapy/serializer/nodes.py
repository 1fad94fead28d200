"""Pass 2: element records -> nodes. Formatter children (and inline children of mixed text) are merged into
their parent's content, every element with content becomes a Node, and its reTPS is the chain of token
groups from the element up to the root, reversed and cut at `retps_max_tokens`."""
from __future__ import annotations

import html as _html
from collections import Counter
from dataclasses import fields
from itertools import compress
from typing import TYPE_CHECKING, List

from ..page import Node, Page
from ..tokenizer import parse_attributes
from ..tokens import CNT, MONEY, SEP, WT_PREFIX, fibonacci_bucket
from .buckets import _bucket_tables
from .groups import _HIDE_TAIL, _cacheable, _shared_caches
from .settings import _MAX_MERGE_HEIGHT, _NO_NODE, _SHARED_MAX_CHARS
from .text import _unescape, _visible_text
from .xpaths import _XPATH_NAMES, _Paths, _xpath_name

if TYPE_CHECKING:
    from . import _Builder


# The order pass 2 passes Node's fields in; checked at import, so that a reordered Node fails loudly.
_NODE_FIELDS = ("index", "tag", "content", "retps", "bucket", "parent", "path", "attrs", "hidden", "boilerplate",
                "images", "depth", "link_chars", "position")
if tuple(f.name for f in fields(Node)) != _NODE_FIELDS:
    raise ImportError("edrew_scrapy.page.Node changed its fields: update _NODE_FIELDS and _NodeBuilder.run")


class _NodeBuilder:
    """Pass 2: merge formatter/inline children, compute contents, reTPS and buckets."""

    def __init__(self, b: _Builder):
        self.b = b
        self.cfg = b.cfg

    def run(self) -> Page:
        b, cfg = self.b, self.cfg
        names, parents, segs_of, ctxs = b.names, b.parents, b.segs, b.ctxs
        n = len(names)
        count_tags = max(b.count_tags, 1)
        formatter, inline = cfg.formatter_tags, cfg.inline_tags
        merge_mixed = cfg.merge_inline_in_mixed_content
        # height of the inline-only subtree (-1 when it holds a block): merging is bounded so that
        # a page of 200,000 nested <span> does not copy its text 200,000 times. The same backward
        # loop marks the elements with text somewhere below (for _mixed): one loop, not two.
        height = [0] * n
        below = list(b.has_text)
        for i in range(n - 1, 0, -1):
            h = height[i]
            p = parents[i]
            if h < 0 or names[i] not in inline:
                height[p] = -1
            elif height[p] >= 0 and h + 1 > height[p]:
                height[p] = h + 1
            if below[i]:
                below[p] = True
        # text of its own, or a sentence block of inline children: mixed content if it has children
        mixed = self._mixed(height, below) if merge_mixed else b.has_text
        takes = [False] * n  # has an absorbed child
        nonleaf = [False] * n  # has a child that is not absorbed (no <#CNT>)
        absorbed = [False] * n
        merged = []  # the absorbed elements, in document order
        for i in range(1, n):
            p = parents[i]
            if absorbed[p]:
                absorbed[i] = True
                merged.append(i)
            elif 0 <= height[i] <= _MAX_MERGE_HEIGHT and (
                    names[i] in formatter or (merge_mixed and mixed[p] and names[i] in inline)):
                absorbed[i] = True
                merged.append(i)
                takes[p] = True
            else:
                nonleaf[p] = True
        # text of absorbed subtrees, children first (they have higher indexes)
        full: dict = {}
        links: dict = {}
        for i in reversed(merged):
            parts, lc = _join(segs_of[i], full, links)
            text = "".join(parts)
            full[i] = text
            links[i] = len(text) if names[i] == "a" else lc
        nodes: List[Node] = []
        # the index of the nearest node at or above an element (-1: none), found when a node asks for it:
        # elements are decided in document order, so an ancestor's is final by then
        up: list = [None] * n
        up[0] = -1
        self.count_tags = count_tags
        # reversed tokens from an element up to the root, at most max_tokens, memoised: an element's
        # group is its token-group tail (memoised on its attributes and hidden flag), then `name|bucket`;
        # a wrapper's is `#WTname`. Computed in the node loop below, not in a method: a call per node
        # and the locals it would load again cost more than the climb.
        chains: list = [None] * n
        chains[0] = ()
        self.buckets, suffixes = _bucket_tables(count_tags, cfg.fibonacci_buckets, 4 * n + 10_000)
        shown_tails, hidden_tails, self.parsed = _shared_caches(b.keywords, cfg.max_classes, cfg.max_token_chars)
        fib = cfg.fibonacci_buckets
        max_tokens = cfg.retps_max_tokens
        currencies = cfg.currency_symbols
        paths = _Paths(b, cfg.max_path_depth)
        img_below = b.img_below
        buckets = self.buckets
        n_buckets = len(buckets)
        decoded = b.decoded
        positions, depths, attrs_of, wrappers = b.positions, b.depths, b.attrs, b.wrappers
        # XPaths are built in the same climb as the chains: the elements without a chain yet are those
        # without a path yet, save the deep ones (document-order paths) that paths.of() builds itself
        path_of, ks, max_depth = paths.path, b.ks, paths.max_depth
        for i in range(1, n):
            if absorbed[i] or not (mixed[i] or takes[i]):
                continue
            ctx = ctxs[i]
            name = names[i]
            if ctx.in_head or name in _NO_NODE:
                continue
            segs = segs_of[i]
            if len(segs) == 1 and type(segs[0]) is str:  # the common leaf: one run of text
                raw, lc = segs[0], 0
            else:
                parts, lc = _join(segs, full, links)
                raw = "".join(parts)
            if not raw or raw.isspace():
                continue
            content = _visible_text(_html.unescape(raw) if "&" in raw and not decoded else raw)
            if not content:
                continue
            # the chain: climb to the nearest memoised ancestor (or the root), then down again
            climbed = []
            j = i
            while chains[j] is None:
                climbed.append(j)
                j = parents[j]
            chain = chains[j]
            for j in reversed(climbed):
                if j in wrappers:
                    group = (WT_PREFIX + names[j],)
                else:
                    attrs = attrs_of[j]
                    if not attrs:  # none (the #overflow record has none either)
                        tail = _HIDE_TAIL if ctxs[j].hidden else ()
                    else:  # lexbor's dict is keyed by its (name, value) pairs, attribute text by itself
                        key = attrs if type(attrs) is str else tuple(attrs.items())
                        hidden = ctxs[j].hidden
                        # one dict per hidden flag: no (key, hidden) tuple to build and hash per element
                        by_key = hidden_tails if hidden else shown_tails
                        tail = by_key.get(key)
                        if tail is None:
                            tail = b.group_tail(self._parsed(attrs), hidden)
                            if _cacheable(key):
                                by_key[key] = tail
                    group = tail + (names[j] + suffixes[positions[j]],)  # positions never pass countTags
                room = max_tokens - len(group)
                # a slice that keeps the whole tuple returns it without copying
                chain = group + chain[:room] if room > 0 else (group + chain)[:max_tokens]
                chains[j] = chain
                if path_of[j] is None and depths[j] <= max_depth:
                    step = _XPATH_NAMES.get(names[j]) or _xpath_name(names[j])
                    # pass 1 counted siblings by name; names XPath cannot spell all count as `*`
                    path_of[j] = f"{path_of[parents[j]]}/{step}[{ks[j] if step != '*' else paths._star_k(j)}]"
            if not nonleaf[i]:  # a leaf: <#CNT>, and <#> before it when the text starts with money
                chain = ((MONEY, CNT) if content.startswith(currencies) else (CNT,)) + chain
            position = positions[i]
            j = parents[i]
            climbed = []
            while up[j] is None:
                climbed.append(j)
                j = parents[j]
            near = up[j]
            for j in climbed:
                up[j] = near
            idx = up[i] = len(nodes)
            attrs = attrs_of[i]
            if type(attrs) is str or (attrs and None in attrs.values()):
                attrs = self._attrs(i)
            # positional (in _NODE_FIELDS order): keyword arguments cost 1.4 us more per node; the common
            # bucket, attributes and images inline, not through a method call each
            nodes.append(Node(
                idx, name, content, SEP.join(chain[:max_tokens]),
                (buckets[position] if position < n_buckets else self._bucket(position)) if position else fib[0],
                near, path_of[i] or paths.of(i) or "/", attrs, ctx.hidden, ctx.boilerplate,
                self._images(i, absorbed, mixed) if i in img_below else [], depths[i],
                len(content) if ctx.in_link else min(lc, len(content)), position,
            ))
        text_root = "".join(s for s in segs_of[0] if type(s) is str)
        text_root = _visible_text(text_root if decoded else _unescape(text_root))
        if text_root:  # text outside any element (a plain-text "page")
            nodes.insert(0, Node(index=0, tag="#document", content=text_root, retps=CNT,
                                 bucket=fib[0], parent=-1, path="/"))
            for k, node in enumerate(nodes[1:], 1):
                node.index = k
                node.parent = node.parent + 1 if node.parent >= 0 else -1
        return Page(url=b.url, nodes=nodes, title=b.title, count_tags=b.count_tags, n_elements=n - 1,
                    images=b.images, truncated=b.truncated)

    def _mixed(self, height: List[int], below: List[bool]) -> List[bool]:
        """Per element: mixed content, whose inline children merge into it. Text of its own, or a sentence
        block (cfg.sentence_tags) of inline children only, two or more of which carry text: "<p><span>The
        words </span><em>yellow</em><span> and</span>…</p>" is one sentence, as "<p>The words <em>…" is.
        `below`: text somewhere in the element's subtree."""
        b = self.b
        names = b.names
        mixed = list(b.has_text)
        # children that carry text, by parent: counted in C (compress, Counter) rather than a loop
        texts = Counter(compress(b.parents, below))
        sentence = self.cfg.sentence_tags
        for i, k in texts.items():
            if k >= 2 and i > 0 and 0 <= height[i] and names[i] in sentence:
                mixed[i] = True
        return mixed

    def _bucket(self, position: int) -> int:
        if 0 <= position < len(self.buckets):
            return self.buckets[position]
        return fibonacci_bucket(position, self.count_tags, self.cfg.fibonacci_buckets)

    def _parsed(self, attrs) -> dict:
        """The element's attributes as a dict, not to be changed. Our tokenizer's attribute text is parsed
        once per process for the texts pages repeat."""
        if type(attrs) is not str:
            return attrs
        got = self.parsed.get(attrs)
        if got is None:
            got = parse_attributes(attrs)
            if len(attrs) <= _SHARED_MAX_CHARS:
                self.parsed[attrs] = got
        return got

    def _attrs(self, i: int) -> dict:
        """A node's own dict of its element's attributes, a bare one's value "" as parse_attributes has it."""
        attrs = self.b.attrs[i]
        if type(attrs) is str:
            return dict(self._parsed(attrs))
        return {k: v or "" for k, v in attrs.items()} if None in attrs.values() else attrs

    def _images(self, i: int, absorbed: list, mixed: list) -> list:
        """Images of the element and of its non-text children up to max_image_bubble levels down."""
        b = self.b
        if i not in b.img_below:
            return []
        images_of, segs_of = b.images_of, b.segs
        out = list(images_of.get(i, ()))
        frontier = [s for s in segs_of[i] if type(s) is int]
        for _ in range(self.cfg.max_image_bubble):
            nxt = []
            for c in frontier:
                if absorbed[c] or not mixed[c]:
                    images = images_of.get(c)
                    if images:
                        out.extend(images)
                    nxt.extend(s for s in segs_of[c] if type(s) is int)
            frontier = nxt
            if not frontier or len(out) > 50:
                break
        return out


def _join(segs: list, full: dict, links: dict) -> tuple:
    """An element's text: its own runs and its absorbed children's, a space for each other child; and
    how many of those characters are link text."""
    parts = []
    lc = 0
    for s in segs:
        if type(s) is str:
            parts.append(s)
        else:
            t = full.get(s)
            if t is not None:
                parts.append(t)
                lc += links[s]
            else:  # a child that is a node of its own still separates words
                parts.append(" ")
    return parts, lc
