"""The model: ELMo over reTPS (elmo.py), its files (files.py), the classifier head, scoring and training."""
from .files import ModelError
from .scorer import DEFAULT_MODEL_DIR, Scorer, load_model

__all__ = ["ModelError", "Scorer", "load_model", "DEFAULT_MODEL_DIR"]
