"""The serializer's output: a Page and its text-bearing Nodes (plain data, no behaviour)."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any, Dict, List, Optional, Tuple

from .tokens import SEP


@dataclass(slots=True)
class Node:
    """One element that carries text, in document order."""

    index: int                 # position in Page.nodes (document order of the element's start tag)
    tag: str                   # element name, lower-case ("p", "dhi-new-typeahead-input")
    content: str               # its text, whitespace collapsed, formatter/inline children merged
    retps: str                 # reverse enhanced tag path sequence, tokens joined by <#SEP>
    bucket: int                # Fibonacci position bucket of the element (1..100)
    parent: int                # index in Page.nodes of the nearest ancestor that is a node, or -1
    path: str                  # XPath that locates the element (document-order form when very deep)
    attrs: Dict[str, str] = field(default_factory=dict)
    hidden: bool = False       # display:none / visibility:hidden / hidden attribute, here or above
    # "dialog" (role=dialog|alertdialog, aria-modal=true, <dialog>), "nav" (<nav>, role=navigation),
    # "footer" (a <footer> or role=contentinfo outside <article>/<main> and their roles) or "aside" (<aside>,
    # role=complementary): the outermost such container, here or above; "" for none
    boilerplate: str = ""
    images: List[str] = field(default_factory=list)  # absolute URLs of <img> inside the element
    depth: int = 0             # nesting depth in the element tree
    link_chars: int = 0        # characters of `content` that sit inside <a> elements
    position: int = 0          # countTags at the element (before bucketing)

    @property
    def tokens(self) -> List[str]:
        """The reTPS split into its tokens, as the model reads them."""
        return self.retps.split(SEP) if self.retps else []

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(slots=True)
class Page:
    """A serialized HTML document. `skipped` says why a page has no nodes when it is not HTML."""

    url: Optional[str]
    nodes: List[Node]
    title: str = ""
    encoding: str = "utf-8"
    count_tags: int = 0
    n_elements: int = 0
    images: List[str] = field(default_factory=list)
    skipped: Optional[str] = None   # None, "empty", "binary", "no-text", "too-much-text", "too-many-nodes"
    #                                 ("not-html": never serialised)
    truncated: bool = False         # more than max_elements: the rest of the text is one node
    # schema.org and Open Graph types the page declares ("product", "og:article"): see declared.py
    declared: Tuple[str, ...] = ()
    # nested past what lexbor parses in linear time (serializer.too_deep_for_lexbor): read with our
    # tokenizer, and page metadata reads only what precedes <body>
    too_deep: bool = False
    # what serialize()'s `tree_reader` read from lexbor's tree (metadata.read_tree: the declared metadata),
    # for page_metadata in the same process; not pickled (a worker reads it before sending the page)
    from_tree: Any = None
    # pagetype.py's features read from `nodes` and the URL (and their vector), kept by the page's first
    # classification for its second, as (nodes, len(nodes), url, features, vector): valid while `nodes` is
    # that list at that length; pickled without the list and the vector; not compared
    type_features: Any = field(default=None, compare=False, repr=False)

    def __len__(self) -> int:
        return len(self.nodes)

    def __reduce__(self):
        """Pickled as rows of field values, each distinct reTPS once. Pages cross the process boundary
        on every crawled page (EDREW_WORKERS): a slotted dataclass pickles each Node as a dict of its
        slots, and a page's siblings carry equal but separate reTPS strings (docs/scrapy.md)."""
        if type(self) is not Page:  # a subclass may add fields: every field as it is, but these two
            return type(self), tuple(None if f.name in ("from_tree", "type_features") else getattr(self, f.name)
                                     for f in fields(self))
        shared: Dict[str, str] = {}
        rows = [(n.index, n.tag, n.content, shared.setdefault(n.retps, n.retps), n.bucket, n.parent, n.path,
                 n.attrs, n.hidden, n.boilerplate, n.images, n.depth, n.link_chars, n.position)
                for n in self.nodes]
        kept = self.type_features
        sent = kept[1:4] if kept is not None and kept[0] is self.nodes and kept[1] == len(self.nodes) else None
        return _page_from_rows, (self.url, rows, self.title, self.encoding, self.count_tags, self.n_elements,
                                 self.images, self.skipped, self.truncated, self.declared, self.too_deep, sent)

    def __copy__(self) -> "Page":
        # copy.copy goes through __reduce__ unless told otherwise: keep it shallow (the same Node objects)
        return type(self)(*(getattr(self, f.name) for f in fields(self)))


_NODE_FIELDS = ("index", "tag", "content", "retps", "bucket", "parent", "path", "attrs", "hidden",
                "boilerplate", "images", "depth", "link_chars", "position")
assert tuple(f.name for f in fields(Node)) == _NODE_FIELDS, "Page.__reduce__'s rows follow Node's fields"


def _page_from_rows(url, rows, *rest) -> Page:
    page = Page(url, [Node(*row) for row in rows], *rest[:9])
    if len(rest) > 9 and rest[9] is not None:  # the page type's features, read before it was sent
        page.type_features = (page.nodes, *rest[9], None)
    return page
