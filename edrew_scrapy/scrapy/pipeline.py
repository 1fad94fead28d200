"""Old import path of the spider middleware and the scoring service (spidermiddleware.py, scoring.py)."""
from .scoring import Batcher, load_scorer
from .spidermiddleware import EdrewSpiderMiddleware

__all__ = ["Batcher", "EdrewSpiderMiddleware", "load_scorer"]
