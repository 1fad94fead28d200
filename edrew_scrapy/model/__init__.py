"""The model: ELMo over reTPS (elmo.py), its files (files.py), the classifier head, scoring and training.

The scorer (torch) is imported on first use of its names here, so that `edrew_scrapy.model.files` and the
shipped model's location stay torch-free for a process that only reads page metadata.
"""
from .files import DEFAULT_MODEL_DIR, ModelError

__all__ = ["ModelError", "Scorer", "load_model", "DEFAULT_MODEL_DIR"]


def __getattr__(name: str):
    if name in ("Scorer", "load_model"):
        from . import scorer

        return getattr(scorer, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
