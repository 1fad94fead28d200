"""EDREW: keep the relevant content of web pages (reTPS + ELMo-BiLSTM), as a library and a Scrapy plugin.

The public names load on first use, so ``import edrew_scrapy`` pulls in neither Scrapy nor torch.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ._lazy import lazy_attributes

__version__ = "0.1.0"

# public name -> module that defines it
_LAZY = {
    "Addon": "edrew_scrapy.scrapy.addon",
    "EdrewPipeline": "edrew_scrapy.scrapy.pipeline",
    "extract": "edrew_scrapy.extract",
    "Page": "edrew_scrapy.page",
    "Node": "edrew_scrapy.page",
    "load_model": "edrew_scrapy.model.scorer",
    "serialize": "edrew_scrapy.serializer",
}

__all__ = sorted(_LAZY)

if TYPE_CHECKING:
    from .extract import extract as extract
    from .model.scorer import load_model as load_model
    from .page import Node as Node
    from .page import Page as Page
    from .scrapy.addon import Addon as Addon
    from .scrapy.pipeline import EdrewPipeline as EdrewPipeline
    from .serializer import serialize as serialize


__getattr__, __dir__ = lazy_attributes(__name__, _LAZY, globals())
