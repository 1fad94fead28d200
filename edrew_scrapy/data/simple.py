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
* optional `url`, `encoding`, `page_type` (reported per type), `group` (split key; default the
  registrable domain of the URL's host, so shop.example.co.uk and example.co.uk are one group, else
  the file name), `id` (default the file name).

Several keys may be combined; a node is relevant when any of them says so. A label file that cannot be
read, a record that is not JSON or has a key of the wrong type, or an invalid selector raises
:class:`edrew_scrapy.data.DatasetError` naming the file (and the line of a .jsonl file).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator, List, Optional, Sequence

from . import DatasetError, LabelledPage, describe, domain_of, expect, expect_strings, read_json, read_source, read_text
from .align import align_reference, match_values

__all__ = ["iter_pages", "load_labels", "check_record", "selected_text", "default_labels_file"]


def load_labels(path) -> List[dict]:
    """The label file's records, each checked (:func:`check_record`)."""
    path = Path(path)
    if path.suffix == ".jsonl":
        text = read_text(path)
        records = []
        # not splitlines(): JSON strings may hold U+2028 and other characters it breaks lines at
        for number, line in enumerate(text.split("\n"), 1):
            if not line.strip():
                continue
            try:
                records.append((f"{path}:{number}", json.loads(line)))
            except json.JSONDecodeError as exc:
                raise DatasetError(f"{path}:{number}: not valid JSON ({exc.msg} at column {exc.colno})") from None
            except RecursionError:
                raise DatasetError(f"{path}:{number}: JSON nested too deeply to read") from None
    else:
        data = read_json(path)
        if isinstance(data, list):
            records = [(f"{path}: record {i + 1}", r) for i, r in enumerate(data)]
        elif isinstance(data, dict):
            records = [(f"{path}: {k!r}", dict(v, file=k) if isinstance(v, dict) else v) for k, v in data.items()]
        else:
            raise DatasetError(f"{path}: must hold a list of records or an object of them by file name, "
                               f"not {describe(data)}")
    for where, r in records:
        check_record(r, where)
    return [r for _, r in records]


def check_record(r, where: str) -> None:
    """A DatasetError naming `where` (the file and line) when a label record is not as the format says."""
    if not isinstance(r, dict):
        raise DatasetError(f"{where}: a record must be an object, not {describe(r)}")
    if "file" not in r:
        raise DatasetError(f"{where}: the record has no 'file' key")
    if not expect(r["file"], str, f"{where}: file"):
        raise DatasetError(f"{where}: file must name an HTML file, not {describe(r['file'])}")
    for key in ("url", "encoding", "page_type", "group", "main_content"):
        expect(r.get(key), str, f"{where}: {key}")
    domain_of(r.get("url"), f"{where}: url")  # a URL that cannot be parsed, named here, not mid-run
    if not isinstance(r.get("id"), (str, int, type(None))) or isinstance(r.get("id"), bool):
        raise DatasetError(f"{where}: id must be a string or a whole number, not {describe(r['id'])}")
    expect_strings(r.get("relevant"), f"{where}: relevant")
    for selector in expect_strings(r.get("selectors"), f"{where}: selectors"):
        _check_selector(selector, where)


def _check_selector(selector: str, where: str) -> None:
    from cssselect import SelectorError, parse
    from parsel import Selector

    try:
        pseudo = any(s.pseudo_element for s in parse(selector))
        # run, not only translated: some selectors translate and fail when run ("ns|a": an undefined
        # namespace prefix)
        Selector(text="<html></html>").css(selector)
    except (SelectorError, ValueError) as exc:
        raise DatasetError(f"{where}: invalid CSS selector {selector!r} ({exc})") from None
    if pseudo:  # ::text or ::attr(...) picks strings, not the elements whose text is the reference
        raise DatasetError(f"{where}: CSS selector {selector!r} must select elements, without ::text or ::attr")


def default_labels_file(root: Path) -> Path:
    """ROOT/labels.jsonl, else ROOT/labels.json; a DatasetError when neither is there."""
    for name in ("labels.jsonl", "labels.json"):
        if (root / name).exists():
            return root / name
    raise DatasetError(f"{root}: no labels.jsonl or labels.json (give the label file with --labels)")


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
    records = load_labels(labels or default_labels_file(root))
    wanted = set(ids) if ids is not None else None
    for r in records:
        page_id = r["file"] if r.get("id") in (None, "") else str(r["id"])  # id 0 is an id
        if wanted is not None and page_id not in wanted:
            continue
        source = root / r["file"]
        data = read_source(source)
        url = r.get("url")
        host = domain_of(url)
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
            page_id=page_id, url=url, domain=r.get("group") or host or page_id,
            group=r.get("group") or ("" if host else page_id),  # a page without URL is a group of its own
            page_type_or_site=r.get("page_type") or "page", page=page, labels=labels_,
            meta={"source": str(source), "record": r},
        )
