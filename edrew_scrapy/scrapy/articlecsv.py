"""CSV feeds of `scrapy crawl articles`: one row per sentence (the default) or one per section.

EDREW_PDF_CSV_ROWS = "sentences": url, title, year, section_number, section_title, level, kind (abstract,
paragraph, list item, footnote, caption, equation), sentence. "sections": url, title, authors, year,
section_number, section_title, level, text (the section's own blocks, without its subsections).
JSON and JSON Lines feeds keep the item's nested structure; other items pass as Scrapy's CsvItemExporter
writes them.
"""
from __future__ import annotations

from itemadapter import ItemAdapter
from scrapy.exporters import CsvItemExporter

ROWS = ("sentences", "sections")
SENTENCE_FIELDS = ["url", "title", "year", "section_number", "section_title", "level", "kind", "sentence"]
SECTION_FIELDS = ["url", "title", "authors", "year", "section_number", "section_title", "level", "text"]


class ArticleCsvItemExporter(CsvItemExporter):
    def __init__(self, file, rows: str = "sentences", **kwargs):
        if rows not in ROWS:
            raise ValueError(f"EDREW_PDF_CSV_ROWS must be one of {', '.join(ROWS)}, not {rows!r}")
        self.rows = rows
        if not kwargs.get("fields_to_export"):  # FEED_EXPORT_FIELDS unset: the rows' own columns
            kwargs["fields_to_export"] = SENTENCE_FIELDS if rows == "sentences" else SECTION_FIELDS
        super().__init__(file, **kwargs)

    @classmethod
    def from_crawler(cls, crawler, file, **kwargs):
        kwargs.setdefault("rows", crawler.settings.get("EDREW_PDF_CSV_ROWS", "sentences"))
        return cls(file, **kwargs)

    def export_item(self, item) -> None:
        adapter = ItemAdapter(item)
        if "sections" not in adapter:
            return super().export_item(item)
        common = {"url": adapter.get("url"), "title": adapter.get("title"), "year": adapter.get("year"),
                  "authors": "; ".join(adapter.get("authors") or [])}
        rows = self._sentence_rows(adapter) if self.rows == "sentences" else self._section_rows(adapter)
        for row in rows:
            super().export_item({**common, **row})

    def _sentence_rows(self, adapter):
        for block in adapter.get("abstract") or []:
            for sentence in block.get("sentences", []):
                yield {"kind": "abstract", "sentence": sentence}
        for block in adapter.get("preamble") or []:
            yield from _block_rows(block, {})
        for section in _walk(adapter.get("sections") or []):
            where = {"section_number": section["number"], "section_title": section["title"],
                     "level": section["level"]}
            for block in section["blocks"]:
                yield from _block_rows(block, where)

    def _section_rows(self, adapter):
        for section in _walk(adapter.get("sections") or []):
            yield {"section_number": section["number"], "section_title": section["title"],
                   "level": section["level"], "text": "\n".join(b["text"] for b in section["blocks"])}


def _walk(sections):
    for section in sections:
        yield section
        yield from _walk(section["sections"])


def _block_rows(block, where):
    if block["kind"] == "paragraph":
        for sentence in block["sentences"]:
            yield {**where, "kind": "paragraph", "sentence": sentence}
    elif block["kind"] == "list":
        for item in block["items"]:
            yield {**where, "kind": "item", "sentence": item}
    else:
        yield {**where, "kind": block["kind"], "sentence": block["text"]}
