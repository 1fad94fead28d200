"""The model: ELMo over reTPS (elmo.py), its files (files.py), the classifier head, scoring and training.

The scorer is imported on first use of its names here, so that `edrew_scrapy.model.files` and the shipped
model's location stay torch-free for a process that only reads page metadata; `load_model` with the numpy
backend (the default) never imports torch.
"""
from .files import DEFAULT_MODEL_DIR, ModelError

__all__ = ["ModelError", "Scorer", "load_model", "DEFAULT_MODEL_DIR"]


def __getattr__(name: str):
    if name == "load_model":  # base.load_model imports torch only for a backend that needs it
        from .base import load_model

        return load_model
    if name == "Scorer":
        from . import scorer

        return scorer.Scorer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
