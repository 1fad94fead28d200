"""Old import path of the downloader middleware and its meta keys; see downloadermiddleware.py."""
from .downloadermiddleware import EdrewDownloaderMiddleware, is_html
from .meta import EXTRACTION_KEY, ITEMS_SENT_KEY, META_KEY, OPT_OUT_KEY, PARSED_KEY

__all__ = ["EXTRACTION_KEY", "ITEMS_SENT_KEY", "META_KEY", "OPT_OUT_KEY", "PARSED_KEY", "EdrewDownloaderMiddleware",
           "is_html"]
