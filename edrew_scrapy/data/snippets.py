"""Weak labels from snippets: pages without a main-content reference, each with a few human snippets a good
extraction must keep (`with_snippets`) and must drop (`without_snippets`), as trafilatura's evaluation pages
have them (the trafilatura-eval-pages set).

The label file is the simple format's (:mod:`edrew_scrapy.data.simple`: `file`, `url`, `group`, ...) with the
two snippet lists. A node whose text holds a must-keep snippet is positive, one holding a must-drop snippet
negative; every other node is unlabelled: the page's `known` mask is 0 there, and the head's loss leaves it
out, since a snippet says nothing about the rest of the page. A snippet is found in a node when its words
(`\\w+`, lower-cased, as word-F1 reads text) occur there in a row. A node holding snippets of both kinds is
left unlabelled.

A page whose snippets are not all found in one node each (the serializer split a snippet over two nodes, or
the text is not on the page) is still yielded, so that splits and the snippet check see every page, but with
no node labelled (`meta["weak_skipped"]`): its remaining snippets could be wrong as much as right.
:class:`SnippetStats` counts such pages.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterator, List, Optional, Sequence, Tuple

from ..serializer import INVISIBLE
from . import LabelledPage, domain_of, expect_strings, read_source, words
from .simple import default_labels_file, load_labels

__all__ = ["SNIPPET_KEYS", "SnippetStats", "padded_words", "snippet_labels", "iter_pages"]

SNIPPET_KEYS = ("with_snippets", "without_snippets")


@dataclass
class SnippetStats:
    """What a read of a snippet set made of its pages: pages read, pages with at least one labelled node,
    pages skipped because a snippet matched no node, pages without a snippet, labelled nodes of each kind,
    and nodes left unlabelled because they hold snippets of both kinds."""

    pages: int = 0
    labelled_pages: int = 0
    skipped_unmatched: int = 0
    without_snippets: int = 0
    positive_nodes: int = 0
    negative_nodes: int = 0
    conflicting_nodes: int = 0

    def as_dict(self) -> dict:
        return asdict(self)


def padded_words(text: str) -> str:
    """The text's words (`\\w+`, lower-cased) joined by single spaces, with a space on each side, read without
    invisible characters (as the serializer leaves them out of node texts; some snippets carry soft hyphens):
    a snippet's words in a row are then a substring."""
    return " " + " ".join(words(INVISIBLE.sub("", text))) + " "


def snippet_labels(texts: Sequence[str], keep: Sequence[str], drop: Sequence[str]
                   ) -> Tuple[List[int], List[int], int, int]:
    """(labels, known, unmatched, conflicts) for node texts: labels[i] 1 where node i holds a must-keep snippet,
    known[i] 1 where node i holds a snippet of one kind only; `unmatched` counts the snippets (with words) found
    in no node, `conflicts` the nodes holding snippets of both kinds (unlabelled)."""
    nodes = [padded_words(t) for t in texts]
    labels, known = [0] * len(nodes), [0] * len(nodes)
    pos, neg = set(), set()
    unmatched = 0
    for snippets, hits in ((keep, pos), (drop, neg)):
        for s in snippets:
            if not words(s):
                continue
            needle = padded_words(s)
            found = [i for i, node in enumerate(nodes) if needle in node]
            unmatched += not found
            hits.update(found)
    for i in pos ^ neg:
        known[i] = 1
        labels[i] = int(i in pos)
    return labels, known, unmatched, len(pos & neg)


def iter_pages(root, labels=None, ids: Optional[Sequence[str]] = None,
               stats: Optional[SnippetStats] = None) -> Iterator[LabelledPage]:
    """Serialized pages with weak labels (`known` set) from a folder and its label file; `stats`, when given,
    is updated page by page."""
    from ..serializer import serialize

    root = Path(root)
    path = Path(labels or default_labels_file(root))
    stats = stats if stats is not None else SnippetStats()
    wanted = set(ids) if ids is not None else None
    for number, r in enumerate(load_labels(path), 1):
        page_id = r["file"] if r.get("id") in (None, "") else str(r["id"])
        if wanted is not None and page_id not in wanted:
            continue
        keep, drop = (expect_strings(r.get(k), f"{path}: record {number}: {k}") for k in SNIPPET_KEYS)
        source = root / r["file"]
        url = r.get("url")
        host = domain_of(url)
        page = serialize(read_source(source), encoding=r.get("encoding"), url=url)
        texts = [n.content for n in page.nodes]
        y, known, unmatched, conflicts = snippet_labels(texts, keep, drop)
        stats.pages += 1
        skipped = False
        if not any(words(s) for s in list(keep) + list(drop)):
            stats.without_snippets += 1
        elif unmatched:
            stats.skipped_unmatched += 1
            skipped = True
            y, known = [0] * len(texts), [0] * len(texts)
        else:
            stats.labelled_pages += any(known)
            stats.positive_nodes += sum(a & b for a, b in zip(y, known))
            stats.negative_nodes += sum(k and not a for a, k in zip(y, known))
            stats.conflicting_nodes += conflicts
        yield LabelledPage(
            page_id=page_id, url=url, domain=r.get("group") or host or page_id,
            group=r.get("group") or ("" if host else page_id),
            page_type_or_site=r.get("page_type") or "page", page=page, labels=y, known=known,
            meta={"source": str(source), "record": r, "weak": True, "weak_skipped": skipped},
        )
