"""A mixed model folder from single-head model folders that share one biLM (`edrew combine`).

The base folder's files are copied as they are (its card's fields, head.safetensors, pagetype.json), each
added folder's head.safetensors becomes head-NAME.safetensors, and the card gains `heads`: the base's
head(s) with their weights scaled by 1 - (the added weights), then each added head with its weight, its
head configuration and its own card's training record and metrics; the card's format version becomes
files.MIXED_FORMAT_VERSION. A folder whose biLM files
(elmo_options.json, elmo_weights.hdf5) differ from the base's by sha256 is refused: its head was trained
on another biLM's vectors. The result is read back and checked as load_model checks it. No torch.
"""
from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Dict, List, Sequence, Tuple, Union

from . import base, files, schema
from .files import ModelError

_NAME = re.compile(r"^[A-Za-z0-9_-]{1,40}$")
# weights are written rounded to this many decimals: 1 - 0.3 is 0.7, not 0.7000000000000001
_DECIMALS = 10
# what an added folder's card gives its entry in `heads`
_ENTRY_KEYS = ("description", "training", "metrics")


class CombineError(ModelError):
    """Folders that cannot be combined (different biLMs, weights out of range, a name taken)."""


def _read(directory: Path) -> Tuple[dict, dict, List[files.HeadEntry]]:
    card = files.read_card(directory, verify=True)
    options = files.read_options(directory / files.OPTIONS, card["files"][files.OPTIONS]["bytes"])
    return card, options, base.check_heads(directory / files.CARD, card, options)


def combine(base_dir: Union[str, Path], added: Sequence[Tuple[str, Union[str, Path]]], weights: Sequence[float],
            out: Union[str, Path], not_on: Sequence[str] = ()) -> dict:
    """Write the mixed model folder `out` (the base folder itself: in place, adding files and rewriting
    its card; otherwise a new or empty folder) and return its card. `added`: (name, folder) pairs, each a
    single-head model on the base's biLM; `weights`: each added head's weight, together below 1; `not_on`:
    page types (pagetype.PAGE_TYPES) on which the added heads sit out (the base scores those pages alone)."""
    from ..pagetype import PAGE_TYPES

    base_dir, out = Path(base_dir), Path(out)
    unknown = sorted(set(not_on) - set(PAGE_TYPES))
    if unknown:
        raise CombineError(f"page types {unknown}: not among {', '.join(PAGE_TYPES)}")
    if len(added) != len(weights) or not added:
        raise CombineError("give one weight for each added head (at least one)")
    if not all(files.is_number(w) and 0 < w < 1 for w in weights) or not sum(weights) < 1:
        raise CombineError(f"weights must be numbers in (0, 1) summing to less than 1, not {list(weights)}")
    card, options, heads = _read(base_dir)
    entries: List[Dict] = list(card.get(files.HEADS) or [{"name": _base_name(card), "file": files.HEAD}])
    scale = 1.0 - sum(weights)
    for entry, head in zip(entries, heads):
        entry["weight"] = round(head.weight * scale, _DECIMALS)
    sources: Dict[str, Path] = {}
    for (name, folder), weight in zip(added, weights):
        folder = Path(folder)
        if not _NAME.match(name):
            raise CombineError(f"head name {name!r}: 1 to 40 letters, digits, '-' or '_'")
        target = f"head-{name}.safetensors"
        if any(e["name"] == name or e["file"] == target for e in entries) or target in card["files"]:
            raise CombineError(f"head name {name!r} is taken in {base_dir / files.CARD}")
        other, _, other_heads = _read(folder)
        if len(other_heads) != 1:
            raise CombineError(f"{folder / files.CARD}: a mixed model; add single-head folders")
        for bilm_file in (files.OPTIONS, files.WEIGHTS):
            if other["files"][bilm_file]["sha256"] != card["files"][bilm_file]["sha256"]:
                raise CombineError(f"{folder}: {bilm_file} differs from {base_dir}'s (sha256): its head reads "
                                   f"another biLM")
        base.check_head_fits(folder / files.CARD, other["head"], options)
        from .numpy_backend import load_head_arrays  # the tensors are those the configuration describes

        load_head_arrays(folder, other["head"])
        entry = {"name": name, "file": target, "weight": round(float(weight), _DECIMALS), "head": other["head"]}
        entry.update({key: other[key] for key in _ENTRY_KEYS if key in other})
        if not_on:
            entry["not_on_page_types"] = list(not_on)
        entries.append(entry)
        sources[target] = folder / files.HEAD
    in_place = out.exists() and os.path.samefile(out, base_dir)
    if not in_place:
        if out.exists() and (not out.is_dir() or any(out.iterdir())):
            raise CombineError(f"{out}: exists and is not an empty folder")
        out.mkdir(parents=True, exist_ok=True)
        for name in card["files"]:
            shutil.copyfile(files.model_file(base_dir, name), out / name)
        shutil.copyfile(files.model_file(base_dir, files.CARD), out / files.CARD)
    listed = dict(card["files"])
    for target, source in sources.items():
        shutil.copyfile(source, out / target)
        listed[target] = {"bytes": (out / target).stat().st_size, "sha256": files.sha256_of(out / target)}
    mixed = dict(card, files=listed, format_version=files.MIXED_FORMAT_VERSION, **{files.HEADS: entries})
    # checked before the card is written: a base folder combined in place keeps a card that loads
    schema.check(mixed, schema.CARD_SCHEMA, out / files.CARD, "not a valid model card")
    files.head_entries(mixed, out / files.CARD)
    temporary = out / (files.CARD + ".tmp")
    temporary.write_text(json.dumps(mixed, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(temporary, out / files.CARD)
    _read(out)  # every file against the card, every head against the biLM, as load_model reads them
    return mixed


def _base_name(card: dict) -> str:
    name = card.get("name")
    return name if isinstance(name, str) and _NAME.match(name) else "base"
