"""WCXB reader (Web Content eXtraction Benchmark; Murrough Foley, 2026, CC-BY-4.0).

Layout: `ROOT/html/NNNN.html.gz` (UTF-8 HTML as fetched) and `ROOT/ground-truth/NNNN.json` with `url`,
`_internal.page_type.primary` and `ground_truth.{title, main_content, with[], without[]}`. Node labels
come from aligning node texts to `main_content` (:func:`edrew_scrapy.data.align.align_reference`), with
`without[]` snippets as negative evidence.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable, Iterator, List, Optional

from . import LabelledPage, domain_of, read_source
from .align import AlignConfig, align_reference

__all__ = ["iter_pages", "page_ids", "load_truth"]


def page_ids(root) -> List[str]:
    """All page ids (file stems) that have a ground-truth file, sorted."""
    return sorted(p.name[:-5] for p in (Path(root) / "ground-truth").glob("*.json"))


def load_truth(root, page_id: str) -> dict:
    with open(Path(root) / "ground-truth" / f"{page_id}.json", encoding="utf-8") as f:
        return json.load(f)


def _html_path(root: Path, page_id: str) -> Path:
    for name in (f"{page_id}.html.gz", f"{page_id}.html"):
        if (root / "html" / name).exists():
            return root / "html" / name
    raise FileNotFoundError(f"{root / 'html'}: no {page_id}.html.gz or {page_id}.html")


def iter_pages(root, ids: Optional[Iterable[str]] = None, *,
               align_config: AlignConfig = AlignConfig()) -> Iterator[LabelledPage]:
    """Serialized, labelled WCXB pages in id order (or in the order of `ids`)."""
    from ..serializer import serialize

    root = Path(root)
    for page_id in (list(ids) if ids is not None else page_ids(root)):
        truth = load_truth(root, page_id)
        gt = truth.get("ground_truth") or {}
        url = truth.get("url")
        source = _html_path(root, page_id)
        page = serialize(read_source(source), encoding="utf-8", url=url)
        main = gt.get("main_content") or ""
        alignment = align_reference([n.content for n in page.nodes], main, gt.get("without") or (),
                                    align_config)
        page_type = ((truth.get("_internal") or {}).get("page_type") or {}).get("primary") or "unknown"
        yield LabelledPage(
            page_id=page_id, url=url, domain=domain_of(url), page_type_or_site=page_type, page=page,
            labels=alignment.labels,
            meta={"source": str(source), "main_content": main, "title": gt.get("title") or "",
                  "with": list(gt.get("with") or []), "without": list(gt.get("without") or []),
                  "reference_words": alignment.reference_words,
                  "aligned_words": sum(alignment.matched)},
        )
