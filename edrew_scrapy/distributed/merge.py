"""Merge the JSON Lines feeds of the processes of one crawl into one, each page (or node) item once.

A process killed after writing an item and before acknowledging its lease leaves that item in its
feed while another process exports the page again: the only duplicate a distributed crawl can make,
dropped here. Records that are no page or node item (the spider's own items) are all kept, and a
last line cut short by a kill is skipped. Pure Python, no Scrapy and no Redis: merge anywhere.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Set

from ..scrapy.resume import record_key


@dataclass
class MergeResult:
    records: int = 0            # written to the output
    duplicates: int = 0         # page or node items already written from an earlier line or feed
    partial_lines: int = 0      # a last line without its newline (a killed process's)
    unreadable_lines: int = 0   # not a JSON object


def merge_feeds(inputs: Iterable[Path], output: Path) -> MergeResult:
    result = MergeResult()
    seen: Set[tuple] = set()
    output.parent.mkdir(parents=True, exist_ok=True)
    with open(output, "wb") as out:
        for path in inputs:
            with open(path, "rb") as fh:
                for raw in fh:
                    if not raw.endswith(b"\n"):
                        result.partial_lines += 1
                        continue
                    try:
                        record = json.loads(raw)
                    except ValueError:
                        record = None
                    if not isinstance(record, dict):
                        result.unreadable_lines += int(bool(raw.strip()))
                        continue
                    key = record_key(record)
                    if key is not None:
                        if key in seen:
                            result.duplicates += 1
                            continue
                        seen.add(key)
                    out.write(raw)
                    result.records += 1
    return result
