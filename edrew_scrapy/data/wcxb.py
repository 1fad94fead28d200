"""WCXB reader (Web Content eXtraction Benchmark; Murrough Foley, 2026, CC-BY-4.0).

Layout: `ROOT/html/NNNN.html.gz` (UTF-8 HTML as fetched) and `ROOT/ground-truth/NNNN.json` with `url`,
`_internal.page_type.primary` and `ground_truth.{title, main_content, with[], without[]}`. Node labels
come from aligning node texts to `main_content` (:func:`edrew_scrapy.data.align.align_reference`), with
`without[]` snippets as negative evidence. A file that cannot be read, or a key of the wrong type,
raises :class:`edrew_scrapy.data.DatasetError` naming the file.
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterable, Iterator, List, Optional

from . import DatasetError, LabelledPage, domain_of, expect, expect_strings, read_json, read_source
from .align import AlignConfig, align_reference

__all__ = ["iter_pages", "page_ids", "load_truth"]


def page_ids(root) -> List[str]:
    """All page ids (file stems) that have a ground-truth file, sorted."""
    return sorted(p.name[:-5] for p in (Path(root) / "ground-truth").glob("*.json"))


def load_truth(root, page_id: str) -> dict:
    path = Path(root) / "ground-truth" / f"{page_id}.json"
    return expect(read_json(path), dict, f"{path}: the ground truth", {})


def _html_path(root: Path, page_id: str) -> Path:
    for name in (f"{page_id}.html.gz", f"{page_id}.html"):
        if (root / "html" / name).exists():
            return root / "html" / name
    raise DatasetError(f"{root / 'html'}: no {page_id}.html.gz or {page_id}.html")


def iter_pages(root, ids: Optional[Iterable[str]] = None, *,
               align_config: AlignConfig = AlignConfig()) -> Iterator[LabelledPage]:
    """Serialized, labelled WCXB pages in id order (or in the order of `ids`)."""
    from ..serializer import serialize

    root = Path(root)
    for page_id in (list(ids) if ids is not None else page_ids(root)):
        truth = load_truth(root, page_id)
        where = f"{root / 'ground-truth' / page_id}.json:"
        gt = expect(truth.get("ground_truth"), dict, f"{where} ground_truth", {})
        url = expect(truth.get("url"), str, f"{where} url")
        main = expect(gt.get("main_content"), str, f"{where} ground_truth.main_content", "")
        title = expect(gt.get("title"), str, f"{where} ground_truth.title", "")
        with_ = expect_strings(gt.get("with"), f"{where} ground_truth.with")
        without = expect_strings(gt.get("without"), f"{where} ground_truth.without")
        internal = expect(truth.get("_internal"), dict, f"{where} _internal", {})
        kind = expect(internal.get("page_type"), dict, f"{where} _internal.page_type", {})
        page_type = expect(kind.get("primary"), str, f"{where} _internal.page_type.primary") or "unknown"
        source = _html_path(root, page_id)
        page = serialize(read_source(source), encoding="utf-8", url=url)
        alignment = align_reference([n.content for n in page.nodes], main, without, align_config)
        yield LabelledPage(
            page_id=page_id, url=url, domain=domain_of(url, f"{where} url"), page_type_or_site=page_type, page=page,
            labels=alignment.labels,
            meta={"source": str(source), "main_content": main, "title": title,
                  "with": list(with_), "without": list(without),
                  "reference_words": alignment.reference_words,
                  "aligned_words": sum(alignment.matched)},
        )
