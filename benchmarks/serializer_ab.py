"""The serializer of a git ref against the working tree's: identical output, and the CPU-time ratio.

    python benchmarks/serializer_ab.py --pages "$EDREW_WCXB/html" [MORE_FOLDERS ...] [--ref main] [--limit 300]
        [--repeats 2]      # --repeats 0: the identity check alone
        [--cold]           # every timed page at first sight (the process-wide caches emptied before it)

For work on the serializer that must not change what it produces: `git archive REF edrew_scrapy` is
unpacked into a temporary folder as the package `edrew_scrapy_ref`, and every page goes through both
serialize() functions. The run fails (exit 1) and names the first differing field when any Page
differs in any field (nodes with content, reTPS, path, attributes, ...; title, counts, images).
With --tokenizer both read every page with their own tokenizer, the fallback for pages lexbor would
not parse in linear time. Then the two are timed page by page in an order that alternates, in CPU
time of this process, so that a shared machine's load falls on both alike; read the ratio, not the
absolute times.
"""
from __future__ import annotations

import argparse
import dataclasses
import io
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmark_pages import alternating_cpu_ms, load_pages  # noqa: E402

import edrew_scrapy.serializer as serializer_module  # noqa: E402
from edrew_scrapy.serializer import serialize  # noqa: E402

# the serializer's process-wide caches of what pages repeat (token-group tails and parsed attributes, image
# URLs, origins of base URLs), emptied by --cold; the ones a version lacks are skipped. They live in the
# serializer's module, or in the modules of its package where it is one.
COLD_CACHES = ("_SHARED", "_IMAGE_URLS", "_ORIGINS")


def ref_serialize(ref: str, folder: str, tokenizer: bool = False):
    """serialize() of the package as it is at `ref`, imported as `edrew_scrapy_ref` from `folder` (reading
    pages with its tokenizer alone if `tokenizer`)."""
    tar = subprocess.run(["git", "-C", str(ROOT), "archive", ref, "edrew_scrapy"], check=True,
                         capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(tar)) as t:
        # the "data" filter where this Python has it (3.11.4+): the archive is our own, but say so
        t.extractall(folder, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
    os.rename(Path(folder, "edrew_scrapy"), Path(folder, "edrew_scrapy_ref"))
    sys.path.insert(0, folder)
    import edrew_scrapy_ref.serializer as ref_module  # the package uses relative imports only

    if tokenizer:
        ref_module._build = ref_module._build_with_tokenizer
    return ref_module.serialize


def serializer_modules(name: str) -> list:
    """The module `name` and, where it is a package, its modules."""
    return [module for key, module in list(sys.modules.items()) if key == name or key.startswith(name + ".")]


def first_difference(a, b) -> str:
    da, db = dataclasses.asdict(a), dataclasses.asdict(b)
    for key in da:
        if da[key] == db.get(key):
            continue
        if key == "nodes":
            for k, (x, y) in enumerate(zip(da[key], db[key])):
                if x != y:
                    field = next(f for f in x if x[f] != y[f])
                    return f"node {k} {field}: {x[field]!r:.120} != {y[field]!r:.120}"
            return f"{len(da[key])} nodes != {len(db[key])}"
        return f"{key}: {da[key]!r:.120} != {db[key]!r:.120}"
    return ""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    wcxb = os.environ.get("EDREW_WCXB")
    default = os.environ.get("EDREW_WCXB_HTML") or (wcxb and Path(wcxb, "html"))
    ap.add_argument("--pages", type=Path, nargs="+", default=[default] if default else None,
                    help="folders of .html / .html.gz pages, --limit from each (default: EDREW_WCXB_HTML, or "
                         "EDREW_WCXB/html)")
    ap.add_argument("--ref", default="main", help="git ref whose serializer is the reference (default: main)")
    ap.add_argument("--limit", type=int, default=300, help="pages from each folder")
    ap.add_argument("--repeats", type=int, default=2,
                    help="timed passes over the pages (0: only the identity check, e.g. on every page of a dataset)")
    ap.add_argument("--tokenizer", action="store_true", help="both read pages with their tokenizer (the fallback)")
    ap.add_argument("--url", default="https://example.com/a/", help="page URL (images resolve against it)")
    ap.add_argument("--cold", action="store_true",
                    help="empty both serializers' process-wide caches before every timed call: every page at first "
                         "sight, as on a crawl of many sites (without it the caches hold the earlier passes' pages)")
    args = ap.parse_args()
    if not args.pages:
        ap.error("--pages is required")
    pages = [page for folder in args.pages for page in load_pages(folder, args.limit, progress=False)]
    with tempfile.TemporaryDirectory(prefix="serializer-ab-") as folder:
        ref_fn = ref_serialize(args.ref, folder, args.tokenizer)
        if args.tokenizer:
            serializer_module._build = serializer_module._build_with_tokenizer
        differ = 0
        for page in pages:
            why = first_difference(ref_fn(page, url=args.url), serialize(page, url=args.url))
            if why:
                differ += 1
                if differ <= 5:
                    print(f"differs: {why}")
        print(f"{len(pages)} pages: {differ} differ from {args.ref}'s output")
        if args.repeats <= 0:
            return 1 if differ else 0
        fns = {"ref": ref_fn, "tree": serialize}
        caches = {who: [cache for module in serializer_modules(fn.__module__) for name, cache in vars(module).items()
                        if name in COLD_CACHES and isinstance(cache, dict)] for who, fn in fns.items()}

        def empty_caches(who):
            for cache in caches[who]:
                cache.clear()

        ms = alternating_cpu_ms(pages, args.repeats, lambda who, page: fns[who](page, url=args.url),
                                before=empty_caches if args.cold else None)
        ref_ms, tree_ms = ms["ref"], ms["tree"]
        print(f"CPU ms/page: {args.ref} {ref_ms:.2f}, working tree {tree_ms:.2f}; "
              f"{args.ref}/working tree {ref_ms / tree_ms:.2f}x (target: serializer <= 5 ms a page)")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
