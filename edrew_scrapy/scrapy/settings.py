"""The EDREW_ settings: their defaults, and one parsed, validated view of them per crawler.

The add-on writes DEFAULTS at "addon" priority, so a project or spider value always wins; the
components read settings through `EdrewSettings.from_settings`, which also works when they are
enabled by hand without the add-on.
"""
from __future__ import annotations

import difflib
import logging
import math
import numbers
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional

from scrapy.exceptions import NotConfigured
from scrapy.utils.misc import load_object

logger = logging.getLogger(__name__)

DEFAULTS = {
    "EDREW_ENABLED": True,
    "EDREW_MODEL": None,            # None: the model shipped with the package (models/default)
    "EDREW_BACKEND": "numpy",       # numpy (no torch) | native (PyTorch) | allennlp
    "EDREW_THRESHOLD": None,        # None: the threshold written in the model card
    "EDREW_REGION_SHARE": None,     # None: the model card's main-region share; 0: keep relevant text anywhere
    "EDREW_ITEMS": "page",          # page | node
    "EDREW_BUILDER": None,          # dotted path (or callable): builder(contents, context) -> item(s)
    "EDREW_MAX_PAGE_BYTES": 5 * 1024 * 1024,  # 0: no limit
    "EDREW_BATCH_PAGES": 8,         # pages scored together in one model call, at most
    "EDREW_THREADS": 1,             # serialisation threads; 0 runs it (and scoring) on the reactor thread
    "EDREW_TORCH_THREADS": 1,       # intra-op threads for scoring (numpy's BLAS, torch); 0 leaves the libraries' own
    "EDREW_WORKERS": 1,             # worker processes that serialise and score; 0: threads in the crawl process
    "EDREW_WORKER_TIMEOUT": 300,    # seconds a worker may take for one batch before it is taken for hung; 0: no limit
    "EDREW_RESUME": True,           # with JOBDIR: restart after an unclean stop; no page twice in a feed
    "EDREW_METADATA": True,         # headline, author, dates, language, site, description, page type in items
    "EDREW_COMMENTS": "field",      # reader comments: field (the item's `comments`) | text (in `text` too) | none
    "EDREW_CACHE_MB": 128,          # the scorer's caches, shared out among the workers; 0: bounded by entries only
    "EDREW_PIPELINE_FIELDS": ["html"],  # EdrewPipeline: the item fields that hold a page's HTML
    "EDREW_PIPELINE_REPLACE": True,     # EdrewPipeline: replace them; False: add <field>_relevant beside
    "EDREW_REPORT_DIR": None,       # a folder: HTML reports of the first EDREW_REPORT_PAGES pages + index.html
    "EDREW_REPORT_PAGES": 20,       # page reports written with EDREW_REPORT_DIR (the summary counts every page)
    "EDREW_CSV_SAFE": True,         # CSV feeds: page text that starts like a formula is quoted (exporters.py)
}

# Read by components outside EdrewSettings: the PDF articles pipeline and exporter, and the Redis add-on
# (distributed/settings.py; the token is one it sets itself).
OTHER_SETTINGS = ("EDREW_PDF_MAX_PAGES", "EDREW_PDF_CSV_ROWS", "EDREW_REDIS_ENABLED", "EDREW_REDIS_LEASE_TIMEOUT",
                  "EDREW_REDIS_POLL_INTERVAL", "EDREW_REDIS_CLOSE_WHEN_DONE", "EDREW_REDIS_PROCESS",
                  "EDREW_REDIS_EXPORTED_KEY", "EDREW_REDIS_STATS_KEY", "EDREW_REDIS_TOKEN")
KNOWN_SETTINGS = frozenset(DEFAULTS) | frozenset(OTHER_SETTINGS)

ITEM_MODES = ("page", "node")
COMMENT_MODES = ("field", "text", "none")
# model.base.BACKENDS, named here so that reading the settings does not import numpy and the model files
# (tests/test_model_numpy.py checks that they agree)
BACKENDS = ("numpy", "native", "allennlp")


@dataclass(frozen=True)
class EdrewSettings:
    enabled: bool
    model: Optional[str]
    backend: str
    threshold: Optional[float]
    items: str
    builder: Optional[Callable[..., Any]]
    max_page_bytes: int
    batch_pages: int
    threads: int
    torch_threads: int = 1
    workers: int = 0
    cache_mb: Optional[float] = 128.0
    region_share: Optional[float] = None  # None: the model card's; 0.0: no main-region step
    worker_timeout: Optional[float] = 300.0  # None: a worker may take as long as it takes
    metadata: bool = True  # EDREW_METADATA: page metadata (edrew_scrapy/metadata.py) where the page is scored
    comments: str = "field"  # EDREW_COMMENTS: where a page's reader comments go (COMMENT_MODES)

    @classmethod
    def from_settings(cls, settings) -> "EdrewSettings":
        """Read and check the EDREW_ settings; raises NotConfigured when EDREW_ENABLED is false.

        Wrong values raise ValueError at start-up instead of failing on the first page, after one ERROR
        line that names the setting (as a model that cannot be loaded gets): Scrapy reports an exception
        raised while it builds components only as a traceback, which a crawl's log can bury.
        """
        try:
            return cls._read(settings)
        except ValueError as exc:
            logger.error("EDREW cannot start: %s", exc)
            raise

    @classmethod
    def _read(cls, settings) -> "EdrewSettings":
        if not settings.getbool("EDREW_ENABLED", DEFAULTS["EDREW_ENABLED"]):
            raise NotConfigured
        items = str(settings.get("EDREW_ITEMS") or DEFAULTS["EDREW_ITEMS"]).lower()
        if items not in ITEM_MODES:
            raise ValueError(f"EDREW_ITEMS must be one of {', '.join(ITEM_MODES)}, not {items!r}")
        comments = str(settings.get("EDREW_COMMENTS") or DEFAULTS["EDREW_COMMENTS"]).lower()
        if comments not in COMMENT_MODES:
            raise ValueError(f"EDREW_COMMENTS must be one of {', '.join(COMMENT_MODES)}, not {comments!r}")
        backend = str(settings.get("EDREW_BACKEND") or DEFAULTS["EDREW_BACKEND"]).lower()
        if backend not in BACKENDS:
            raise ValueError(f"EDREW_BACKEND must be one of {', '.join(BACKENDS)}, not {backend!r}")
        threshold = _optional_float(settings, "EDREW_THRESHOLD")
        if threshold is not None and not 0.0 <= threshold <= 1.0:
            raise ValueError(f"EDREW_THRESHOLD must lie in [0, 1], not {threshold}")
        builder = settings.get("EDREW_BUILDER") or None
        if builder is not None:
            if isinstance(builder, str):
                try:
                    builder = load_object(builder)
                except Exception as exc:  # ModuleNotFoundError, NameError, ...: say which setting
                    raise ValueError(f"EDREW_BUILDER {builder!r} cannot be loaded: "
                                     f"{type(exc).__name__}: {exc}") from None
            if not callable(builder):
                raise ValueError(f"EDREW_BUILDER must name a callable, not {builder!r}")
        model = settings.get("EDREW_MODEL") or None
        return cls(
            enabled=True,
            model=str(Path(model).expanduser()) if model else None,
            backend=backend,
            threshold=threshold,
            items=items,
            builder=builder,
            max_page_bytes=_int(settings, "EDREW_MAX_PAGE_BYTES", 0),
            batch_pages=_int(settings, "EDREW_BATCH_PAGES", 1),
            threads=_int(settings, "EDREW_THREADS", 0),
            torch_threads=_int(settings, "EDREW_TORCH_THREADS", 0),
            workers=_int(settings, "EDREW_WORKERS", 0),
            cache_mb=_limit("EDREW_CACHE_MB", _optional_float(settings, "EDREW_CACHE_MB", DEFAULTS["EDREW_CACHE_MB"])),
            region_share=_region_share(_optional_float(settings, "EDREW_REGION_SHARE")),
            worker_timeout=_limit("EDREW_WORKER_TIMEOUT", _optional_float(settings, "EDREW_WORKER_TIMEOUT",
                                                                          DEFAULTS["EDREW_WORKER_TIMEOUT"]),
                                  "a number of seconds"),
            metadata=settings.getbool("EDREW_METADATA", DEFAULTS["EDREW_METADATA"]),
            comments=comments,
        )


def warn_unknown(settings) -> list:
    """Log a WARNING for each EDREW_ setting no component reads (a misspelt `EDREW_ITEM = "node"` would
    otherwise do nothing, silently), with the closest known name; returns the unknown names."""
    unknown = sorted(name for name in settings if isinstance(name, str) and name.startswith("EDREW_")
                     and name not in KNOWN_SETTINGS)
    for name in unknown:
        close = difflib.get_close_matches(name, KNOWN_SETTINGS, n=1, cutoff=0.75)
        logger.warning("EDREW: %s is not a setting of edrew-scrapy and does nothing%s", name,
                       f"; did you mean {close[0]}?" if close else " (docs/scrapy.md lists the settings)")
    return unknown


def _int(settings, name: str, minimum: int) -> int:
    """A whole number >= minimum, as written (an int, or its digits from the command line); anything
    else is a ValueError naming the setting. Scrapy's getint would turn 1.7 into 1, and a negative
    count was quietly raised to the minimum."""
    value = settings.get(name, DEFAULTS[name])
    number = None
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        number = int(value)
    elif isinstance(value, float) and value.is_integer():
        number = int(value)
    elif isinstance(value, str):
        try:
            number = int(value.strip())  # "+1", "5_000_000" as Python reads them
        except ValueError:
            number = None
    if number is None or number < minimum:
        raise ValueError(f"{name} must be a whole number >= {minimum}, not {value!r}")
    return number


def _optional_float(settings, name: str, default=None) -> Optional[float]:
    """A number, or None for unset: the setting absent, empty, or "None" as written on a command line
    (`-s EDREW_THRESHOLD=None` means the model card's value, as in settings.py)."""
    value = settings.get(name, default)
    if value is None or (isinstance(value, str) and value.strip().lower() in ("", "none")):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, not {value!r}") from None


def _region_share(share: Optional[float]) -> Optional[float]:
    """EDREW_REGION_SHARE: None keeps the model card's, 0 turns the main-region step off."""
    if share is None:
        return None
    if share != 0 and not 0.5 < share <= 1:
        raise ValueError(f"EDREW_REGION_SHARE must be 0 (off) or lie in (0.5, 1], not {share!r}")
    return share


def _limit(name: str, value: Optional[float], what: str = "a number") -> Optional[float]:
    """A limit that is a number >= 0, where 0 (or None) means none: EDREW_CACHE_MB (MiB; without a
    byte limit the caches' entry limits alone bound them) and EDREW_WORKER_TIMEOUT (seconds, counted
    from the moment a batch is sent: time queued behind the other batch in flight and a restarted
    worker's start-up included; None, as for any Scrapy setting, is the default)."""
    if value is None:
        return None
    if not math.isfinite(value) or value < 0:  # nan would pass `value < 0` and fail later, far from here
        raise ValueError(f"{name} must be {what} >= 0, not {value!r}")
    return value or None
