"""EDREW: keep the relevant content of web pages (reTPS + ELMo-BiLSTM), as a library and a Scrapy plugin.

The public names load on first use, so ``import edrew_scrapy`` pulls in neither Scrapy nor torch.
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# public name -> module that defines it
_LAZY = {
    "Addon": "edrew_scrapy.scrapy.addon",
    "extract": "edrew_scrapy.extract",
    "Page": "edrew_scrapy.page",
    "Node": "edrew_scrapy.page",
    "load_model": "edrew_scrapy.model.scorer",
    "serialize": "edrew_scrapy.serializer",
}

__all__ = sorted(_LAZY)

if TYPE_CHECKING:
    from .extract import extract
    from .model.scorer import load_model
    from .page import Node, Page
    from .scrapy.addon import Addon
    from .serializer import serialize


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
