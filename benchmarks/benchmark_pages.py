"""What the one-core benchmarks share: their pages (the .html / .htm / .gz files of a folder, as bytes,
gzip undone) and the --pages option that names them, the head of a page a benchmark's local server sends,
pinning the process to one core, and timing a git ref's code against the working tree's page by page."""
from __future__ import annotations

import argparse
import gc
import gzip
import os
import time
from pathlib import Path


def one_core() -> None:
    """One scoring thread (numpy's BLAS; torch's where torch is installed), and the process pinned to one CPU
    where the OS allows it: issue #5 compares pages/s on one core, and a second core would flatter whichever
    extractor can use it."""
    import numpy  # noqa: F401 -- loaded first: threadpoolctl limits only the BLAS libraries already loaded
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)
    try:
        import torch
    except ImportError:  # an install without the [train] extra scores with numpy alone
        pass
    else:
        torch.set_num_threads(1)
    try:
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    except (AttributeError, OSError):
        pass


def load_pages(folder: Path, limit: int, progress: bool = True) -> list:
    """Up to `limit` pages of `folder`; SystemExit naming the folder when it has none (a wrong path is
    the usual mistake, and a benchmark of no pages has nothing to say)."""
    from tqdm import tqdm

    if not Path(folder).is_dir():
        raise SystemExit(f"{folder}: not a folder (give --pages a folder of .html, .htm or .gz pages)")
    files = sorted(p for p in Path(folder).iterdir() if p.name.endswith((".html", ".htm", ".gz")))[:limit]
    if not files:
        raise SystemExit(f"{folder}: no .html, .htm or .gz pages")
    pages = []
    for f in tqdm(files, desc="loading", unit="page", disable=not progress):
        raw = f.read_bytes()
        pages.append(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)
    return pages


def send_html_head(handler, body: bytes) -> None:
    """The status line and headers of a 200 HTML response whose body, `body`, the handler writes next."""
    handler.send_response(200)
    handler.send_header("Content-Type", "text/html; charset=utf-8")
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()


def add_pages_option(ap: argparse.ArgumentParser) -> None:
    """--pages, the folder of pages: by default EDREW_WCXB_HTML, else EDREW_WCXB/html, else none."""
    wcxb = os.environ.get("EDREW_WCXB")
    ap.add_argument("--pages", type=Path, default=os.environ.get("EDREW_WCXB_HTML") or (wcxb and Path(wcxb, "html")),
                    help="folder of .html / .html.gz pages (default: EDREW_WCXB_HTML, or EDREW_WCXB/html)")


def alternating_cpu_ms(pages: list, repeats: int, call, before=None) -> dict:
    """CPU ms a page of call("ref", page) and call("tree", page): which goes first alternates from page to
    page and pass to pass, so that load and cache warmth fall on both alike, and the garbage is collected
    before each call, so that neither pays for the other's. before(who), if given, runs untimed first."""
    spent = {"ref": 0.0, "tree": 0.0}
    for r in range(repeats):
        for i, page in enumerate(pages):
            for who in (("ref", "tree") if (i + r) % 2 == 0 else ("tree", "ref")):
                if before is not None:
                    before(who)
                gc.collect()
                t0 = time.process_time()
                call(who, page)
                spent[who] += time.process_time() - t0
    return {who: 1000 * cpu / (len(pages) * repeats) for who, cpu in spent.items()}
