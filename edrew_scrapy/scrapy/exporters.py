"""CSV feeds that are safe to open in a spreadsheet program: ``FEED_EXPORTERS = {"csv": ...}``.

Page text is written by whoever made the page: a cell starting with "=", "+", "-" or "@" is a formula
(or a DDE call) in Excel, LibreOffice and Google Sheets, and Scrapy's CSV exporter writes it as is. With
EDREW_CSV_SAFE (on by default; the add-on installs this exporter for "csv" unless the project names its
own), every text cell of EDREW's page and node items goes through escape.csv_cell; other items in the
same feed, and every other format, are written unchanged.
"""
from __future__ import annotations

from scrapy.exporters import CsvItemExporter

from ..escape import csv_cell
from .items import NodeItem, PageItem


class SafeCsvItemExporter(CsvItemExporter):
    def __init__(self, file, *args, csv_safe: bool = True, **kwargs) -> None:
        super().__init__(file, *args, **kwargs)
        self.csv_safe = csv_safe
        self._neutralise = False

    @classmethod
    def from_crawler(cls, crawler, file, *args, **kwargs):
        return cls(file, *args, csv_safe=crawler.settings.getbool("EDREW_CSV_SAFE", True), **kwargs)

    def export_item(self, item) -> None:
        self._neutralise = self.csv_safe and isinstance(item, (PageItem, NodeItem))
        try:
            super().export_item(item)
        finally:
            self._neutralise = False

    def _build_row(self, values):
        for value in super()._build_row(values):
            yield csv_cell(value) if self._neutralise and isinstance(value, str) else value
