"""JSON Schemas of a model card and of ELMo options, and the check that names the first field at fault.

files.read_card and files.read_options check the fields they use with messages of their own first; these
schemas then cover the whole document, so that a field of the wrong type or an unknown head variant is
refused when the model is loaded rather than misread later. Extra top-level fields are allowed (AllenNLP
options files carry training settings; newer cards may carry more notes); the head configuration is
closed, since a key this release does not know would describe a head it cannot build.
"""
from __future__ import annotations

from pathlib import Path
from typing import Union

# head.VARIANTS' names, spelled out so that checking a card imports no torch (a test keeps them equal)
VARIANT_NAMES = ("a", "b", "c", "d")
_COUNT = {"type": "integer", "minimum": 0}
_POSITIVE = {"type": "integer", "minimum": 1}
_FILE = {"type": "object", "required": ["bytes", "sha256"], "additionalProperties": False,
         "properties": {"bytes": _COUNT, "sha256": {"type": "string", "pattern": "^[0-9a-f]{64}$"}}}

_HEAD = {
    "type": "object",
    "required": ["use_text", "use_features", "use_context", "n_layers", "elmo_dim", "node_dim", "dropout"],
    "additionalProperties": False,
    "properties": {
        "variant": {"enum": list(VARIANT_NAMES)},
        "use_text": {"type": "boolean"}, "use_features": {"type": "boolean"},
        "use_context": {"type": "boolean"},
        "n_layers": _POSITIVE, "elmo_dim": _POSITIVE, "node_dim": _POSITIVE, "token_dim": _POSITIVE,
        "text_dim": _POSITIVE, "context_dim": _POSITIVE, "n_features": _COUNT, "tree_levels": _COUNT,
        "dropout": {"type": "number", "minimum": 0, "maximum": 1},
    },
}
# the most heads one model may mix (each is a page BiLSTM run per page)
MAX_HEADS = 8
# a head file: a plain name in the model folder
HEAD_FILE_PATTERN = "^head[A-Za-z0-9_-]*[.]safetensors$"
_HEAD_ENTRY = {
    "type": "object",
    "required": ["name", "file", "weight"],
    "additionalProperties": False,
    "properties": {
        "name": {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,40}$"},
        "file": {"type": "string", "pattern": HEAD_FILE_PATTERN},
        "weight": {"type": "number", "exclusiveMinimum": 0, "maximum": 1},
        "head": _HEAD,
        "training": {"type": "object"},
        "metrics": {"type": "object"},
        "description": {"type": "string"},
        # page types (pagetype.py's classes) on which this head sits out: the other heads score the page
        "not_on_page_types": {"type": "array", "maxItems": 16,
                              "items": {"type": "string", "pattern": "^[a-z]{1,30}$"}},
        "page_type_probability": {"type": "number", "minimum": 0, "maximum": 1},
    },
}

CARD_SCHEMA = {
    "type": "object",
    "required": ["format", "format_version", "files", "head"],
    "properties": {
        "format": {"const": "edrew-model"},
        "format_version": {"type": "integer"},
        "name": {"type": "string"},
        "description": {"type": "string"},
        "created": {"type": "string"},
        "version": {"type": "string"},
        "variant": {"enum": list(VARIANT_NAMES)},
        "threshold": {"type": "number", "minimum": 0, "maximum": 1},
        "threshold_metric": {"type": "string"},
        "region_share": {"oneOf": [{"type": "null"},
                                   {"type": "number", "exclusiveMinimum": 0.5, "maximum": 1}]},
        # other files a model folder may hold (pagetype.json) are listed the same way; pagetype.py checks them
        "files": {"type": "object", "required": ["elmo_options.json", "elmo_weights.hdf5", "head.safetensors"],
                  "additionalProperties": _FILE,
                  "properties": {"elmo_options.json": _FILE, "elmo_weights.hdf5": _FILE, "head.safetensors": _FILE}},
        "head": _HEAD,
        # a model whose scores mix several heads on its one biLM (files.head_entries checks the rest)
        "heads": {"type": "array", "minItems": 2, "maxItems": MAX_HEADS, "items": _HEAD_ENTRY},
        "metrics": {"type": "object"},
        "training": {"type": "object"},
    },
}

OPTIONS_SCHEMA = {
    "type": "object",
    "required": ["lstm", "char_cnn"],
    "properties": {
        "lstm": {
            "type": "object",
            "required": ["dim", "n_layers", "projection_dim"],
            "properties": {
                "dim": _POSITIVE, "n_layers": _POSITIVE, "projection_dim": _POSITIVE,
                "cell_clip": {"type": ["number", "null"], "minimum": 0},
                "proj_clip": {"type": ["number", "null"], "minimum": 0},
                "use_skip_connections": {"type": "boolean"},
            },
        },
        "char_cnn": {
            "type": "object",
            "required": ["embedding", "filters", "n_highway", "max_characters_per_token"],
            "properties": {
                "activation": {"type": "string"},
                "embedding": {"type": "object", "required": ["dim"], "properties": {"dim": _POSITIVE}},
                "filters": {"type": "array", "minItems": 1,
                            "items": {"type": "array", "minItems": 2, "maxItems": 2, "items": _POSITIVE}},
                "n_highway": _COUNT,
                "n_characters": _POSITIVE,
                "max_characters_per_token": {"const": 50},
            },
        },
    },
}

# how much of the offending value a message quotes: a card's strings can be long
_MESSAGE_CHARS = 200


def check(document: object, schema: dict, path: Union[str, Path], what: str) -> None:
    """ModelError naming `path`, the field (dotted) and what is wrong, unless `document` fits `schema`."""
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import best_match

    from .files import ModelError

    error = best_match(Draft202012Validator(schema).iter_errors(document))
    if error is None:
        return
    where = ".".join(str(part) for part in error.absolute_path) or "the document"
    message = error.message if len(error.message) <= _MESSAGE_CHARS else error.message[:_MESSAGE_CHARS] + "..."
    raise ModelError(f"{path}: {what}: {where}: {message}")
