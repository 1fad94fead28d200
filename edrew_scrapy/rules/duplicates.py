"""Text repeated in another layout (a responsive page's second copy, a quoted post)."""
from __future__ import annotations

from typing import Dict, List, Sequence

from ..tokens import retps_shape


def layout_duplicates(nodes: Sequence, keep: Sequence[bool]) -> List[bool]:
    """Which kept nodes repeat the text of an earlier kept node in another layout: the same words
    (whitespace and case aside) under a reTPS of another shape (retps_shape: tags and classes, position
    buckets aside).

    Responsive pages render one description twice, one copy for small screens and one for large
    ("product-description hidden-md-up" and "product-description-spacing-mobile hidden-up-md"), and a
    reader sees one of them; a reply that quotes a post repeats it inside a quote box. Text repeated in
    the same shape (code samples in several language tabs, a price on every card of a listing) is
    left alone: that is a template's own repetition, and WCXB's references keep it.
    """
    # shapes are computed only for texts that come again: most texts come once
    first: Dict[str, object] = {}     # text -> the first kept node that had it
    shapes: Dict[str, set] = {}       # text seen twice or more -> the shapes it came in
    out = []
    for node, kept in zip(nodes, keep):
        repeat = False
        if kept:
            key = node.content.lower()  # the serializer collapsed its whitespace
            if key not in first:
                first[key] = node
            else:
                seen = shapes.get(key)
                if seen is None:
                    seen = shapes[key] = {retps_shape(first[key].retps)}
                shape = retps_shape(node.retps)
                repeat = shape not in seen
                seen.add(shape)
        out.append(repeat)
    return out
