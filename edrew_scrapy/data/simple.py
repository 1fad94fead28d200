"""Users' own labelled data: a folder of HTML files and one label file.

Label file (`labels.jsonl`, one JSON object per line, or `labels.json` holding a list of them):

    {"file": "a.html", "url": "https://example.com/a", "relevant": ["exact text", ...]}
    {"file": "b.html.gz", "selectors": ["article .body", "h1.title"], "group": "example.com"}
    {"file": "c.html", "main_content": "the page's main text as plain text"}

Keys per page (`file` is required, relative to the folder; `.gz` files are gunzipped):

* `relevant`: strings; a node is relevant when its text equals one (or mostly is one, see
  :class:`edrew_scrapy.data.align.ValueMatchConfig`). Good for short fields (title, price, author).
* `main_content`: plain text; nodes are aligned to it like WCXB (:func:`align_reference`).
* `selectors`: CSS selectors (parsel); the text of the selected elements becomes the reference that
  nodes are aligned to, so a node counts when its text lies inside a selected element's text.
* optional `url`, `encoding`, `page_type` (reported per type), `group` (split key; default the URL's
  domain, else the file name), `id` (default the file name).

Several keys may be combined; a node is relevant when any of them says so.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator, List, Optional, Sequence

from . import LabelledPage, domain_of, read_source
from .align import align_reference, match_values

__all__ = ["iter_pages", "load_labels", "selected_text"]


def load_labels(path) -> List[dict]:
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        records = [json.loads(line) for line in text.splitlines() if line.strip()]
    else:
        data = json.loads(text)
        records = data if isinstance(data, list) else [dict(v, file=k) for k, v in data.items()]
    for r in records:
        if "file" not in r:
            raise ValueError(f"{path}: a record has no 'file' key: {r!r}")
    return records


def _default_labels_file(root: Path) -> Path:
    for name in ("labels.jsonl", "labels.json"):
        if (root / name).exists():
            return root / name
    raise FileNotFoundError(f"{root}: no labels.jsonl or labels.json (pass labels=PATH)")


def selected_text(html: str, selectors: Sequence[str]) -> str:
    """Text of the elements the CSS selectors pick, in document order, one element per line.

    The selectors are joined into one union so the text follows the page's order (alignment is
    order-aware); an element inside another selected element is not repeated; scripts and styles
    are left out.
    """
    from parsel import Selector

    if not selectors:
        return ""
    picked = Selector(text=html).css(", ".join(selectors))
    chosen = {id(el.root) for el in picked}
    parts = []
    for el in picked:
        if any(id(a) in chosen for a in el.root.iterancestors()):
            continue
        parts.append(" ".join(el.xpath(
            "descendant-or-self::text()[not(ancestor::script) and not(ancestor::style)]").getall()))
    return "\n".join(parts)


def _decode(data: bytes, encoding) -> str:
    try:
        return data.decode(encoding or "utf-8", "replace")
    except LookupError:  # a label the serializer understood but Python's codecs do not
        return data.decode("utf-8", "replace")


def iter_pages(root, labels=None, ids: Optional[Sequence[str]] = None) -> Iterator[LabelledPage]:
    """Serialized, labelled pages from a folder; `labels` defaults to ROOT/labels.jsonl or labels.json."""
    from ..serializer import serialize

    root = Path(root)
    records = load_labels(labels or _default_labels_file(root))
    wanted = set(ids) if ids is not None else None
    for r in records:
        page_id = str(r.get("id") or r["file"])
        if wanted is not None and page_id not in wanted:
            continue
        source = root / r["file"]
        data = read_source(source)
        url = r.get("url")
        page = serialize(data, encoding=r.get("encoding"), url=url)
        texts = [n.content for n in page.nodes]
        labels_ = [0] * len(texts)
        if r.get("relevant"):
            found, _ = match_values(texts, {"relevant": list(r["relevant"])})
            labels_ = [a | b for a, b in zip(labels_, found)]
        if r.get("main_content"):
            found = align_reference(texts, r["main_content"]).labels
            labels_ = [a | b for a, b in zip(labels_, found)]
        if r.get("selectors"):
            html = _decode(data, r.get("encoding") or page.encoding)
            found = align_reference(texts, selected_text(html, r["selectors"])).labels
            labels_ = [a | b for a, b in zip(labels_, found)]
        yield LabelledPage(
            page_id=page_id, url=url, domain=r.get("group") or domain_of(url) or page_id,
            page_type_or_site=r.get("page_type") or "page", page=page, labels=labels_,
            meta={"source": str(source), "record": r},
        )
