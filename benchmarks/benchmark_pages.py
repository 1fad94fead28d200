"""Pages for the benchmarks: the .html / .htm / .gz files of a folder, as bytes, gzip undone."""
from __future__ import annotations

import gzip
from pathlib import Path


def load_pages(folder: Path, limit: int, progress: bool = True) -> list:
    from tqdm import tqdm

    files = sorted(p for p in Path(folder).iterdir() if p.name.endswith((".html", ".htm", ".gz")))[:limit]
    pages = []
    for f in tqdm(files, desc="loading", unit="page", disable=not progress):
        raw = f.read_bytes()
        pages.append(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)
    return pages
