"""Load a model directory and score pages: P(relevant) for every node.

Speed comes from not repeating work: a page's nodes share few distinct reTPS, and pages share them
with each other, so each distinct reTPS is run through the biLM once and its vector kept in a bounded
LRU cache; the character CNN's token vectors (tags, classes, words) are cached the same way. Within a
batch of new reTPS, each token prefix (forward LSTM) and suffix (backward LSTM) is computed once (trie.py).
"""
from __future__ import annotations

import math
import numbers
import sys
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Callable, Dict, Hashable, List, Optional, Sequence, Union

import numpy as np
import torch
from torch.nn import functional as F

from ..page import Node, Page
from . import files
from .elmo import ElmoBiLm, char_tensor
from .features import (
    MAX_TREE_LEVELS,
    N_FEATURES,
    ancestor_groups,
    distinct,
    is_tree_levels,
    page_features,
    retps_tokens,
    text_words,
)
from .files import DEFAULT_MODEL_DIR, ModelError, model_directory  # noqa: F401 - DEFAULT_MODEL_DIR: public here too
from .head import Head
from .trie import encode_distinct

BACKENDS = ("native", "allennlp")


# Python's bookkeeping per cache entry besides its key and its row: the OrderedDict's entry, its table
# slots and linked-list node (about 85-120 B, depending on how full the table is) and the row index
# (an int, 32 B). Filling an LRU in a fresh process (Python 3.11, torch 2.13), RSS grew by 330, 590 and
# 928 B per entry for token, text and sequence rows (128, 256 and 512 B) with 57, 99 and 219 B keys,
# against 345, 515 and 891 B counted with this value.
ENTRY_OVERHEAD = 160
# EDREW_CACHE_MB's default, and how a budget is shared out between a scorer's three caches.
DEFAULT_CACHE_MB = 128
CACHE_SHARES = {"tokens": 0.25, "sequences": 0.5, "texts": 0.25}


def _long(values: Sequence[int]) -> torch.Tensor:
    """A 1-d int64 tensor of Python ints, through numpy: torch.tensor(list) took 4-5x longer (115 against
    25 us for 500 ints), which made the caches' index lists a visible part of scoring a page."""
    return torch.from_numpy(np.fromiter(values, dtype=np.int64, count=len(values)))


class LRU:
    """A bounded mapping of keys to fixed-shape float rows that forgets the least recently used entries.

    Bounded by entries (`capacity`) and, when `max_bytes` is given, by bytes (`nbytes`: the rows handed
    out, the keys by sys.getsizeof and ENTRY_OVERHEAD per entry). The rows live in one tensor,
    allocated once, on the first insert, with as many rows as the limits allow; the memory of rows not
    yet handed out is never touched, so it is not resident (one large allocation, mapped lazily), and
    a row freed by an eviction is reused. One tensor rather than a tensor per entry: a row of 32 floats
    (128 B) kept as a tensor of its own costs some 660 B of RSS, and a view into the batch it was
    computed in about 810 B (and it keeps the whole batch's storage alive).
    """

    def __init__(self, capacity: int, max_bytes: Optional[int] = None) -> None:
        self.capacity = max(0, int(capacity))
        self.max_bytes = None if max_bytes is None else max(0, int(max_bytes))
        self._slot: "OrderedDict[Hashable, int]" = OrderedDict()
        self._rows: Optional[torch.Tensor] = None
        self._row_bytes = 0
        self._used = 0        # rows handed out so far (the ones whose memory was touched)
        self._free: List[int] = []
        self._key_bytes = 0

    def __len__(self) -> int:
        return len(self._slot)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._slot

    @property
    def nbytes(self) -> int:
        """The rows handed out, the keys and the per-entry bookkeeping."""
        return self._used * self._row_bytes + self._key_bytes + ENTRY_OVERHEAD * len(self._slot)

    def stats(self) -> Dict[str, int]:
        return {"entries": len(self._slot), "bytes": self.nbytes}

    def get_many(self, keys: Sequence[Hashable], compute: Callable[[List[Hashable]], torch.Tensor]) -> torch.Tensor:
        """Stack the values of `keys` (distinct), computing the missing ones in one call. The keys found
        become the most recently used, in their order, then the new ones after them."""
        slot = self._slot
        missing = [k for k in keys if k not in slot]
        values = compute(missing).detach() if missing else None
        if values is not None and self._rows is None:
            self._allocate(values)
        if self._rows is None:
            return torch.zeros(0)
        with torch.no_grad():
            hit_at, hit_rows, miss_at = [], [], []
            get, refresh = slot.get, slot.move_to_end
            for i, k in enumerate(keys):
                row = get(k)
                if row is None:
                    miss_at.append(i)
                else:
                    refresh(k)
                    hit_at.append(i)
                    hit_rows.append(row)
            if not miss_at:
                return self._rows.index_select(0, _long(hit_rows))
            values = values.to(self._rows.dtype)
            if hit_at:
                out = self._rows.new_empty((len(keys), *self._rows.shape[1:]))
                out.index_copy_(0, _long(hit_at),
                                self._rows.index_select(0, _long(hit_rows)))
                out.index_copy_(0, _long(miss_at), values)
            else:
                out = values
            self._insert(missing, values)
        return out

    def _allocate(self, values: torch.Tensor) -> None:
        self._row_bytes = math.prod(values.shape[1:]) * values.element_size()
        limit = self.capacity
        if self.max_bytes is not None:
            limit = min(limit, self.max_bytes // (self._row_bytes + ENTRY_OVERHEAD))
        # A normal tensor even under torch.inference_mode: an inference tensor could not be written
        # to by a later call made outside inference mode.
        with torch.inference_mode(False):
            self._rows = torch.empty((limit, *values.shape[1:]), dtype=values.dtype, device=values.device)

    def _insert(self, keys: List[Hashable], values: torch.Tensor) -> None:
        sizes = [sys.getsizeof(k) for k in keys]
        if self._insert_without_eviction(keys, values, sizes):
            return
        rows, taken = [], []
        for i, k in enumerate(keys):
            key_bytes = sizes[i]
            row = self._take_row(key_bytes + ENTRY_OVERHEAD)
            if row is None:
                continue  # larger than the whole budget: returned, not kept
            self._slot[k] = row
            self._key_bytes += key_bytes
            rows.append(row)
            taken.append(i)
        if rows:
            rows_t = _long(rows)
            self._rows.index_copy_(0, rows_t, values if len(taken) == len(keys)
                                   else values.index_select(0, _long(taken)))

    def _insert_without_eviction(self, keys: List[Hashable], values: torch.Tensor, sizes: List[int]) -> bool:
        """Insert every key at once when all fit without evicting anything (the common case until the
        cache is full: one check for the batch instead of one per key); False when they do not."""
        n = len(keys)
        fresh = max(0, n - len(self._free))
        if len(self._slot) + n > self.capacity or self._used + fresh > self._rows.shape[0]:
            return False
        added = sum(sizes)
        if self.max_bytes is not None and (self.nbytes + added + n * ENTRY_OVERHEAD + fresh * self._row_bytes
                                           > self.max_bytes):
            return False
        reused = [self._free.pop() for _ in range(n - fresh)]
        rows = reused + list(range(self._used, self._used + fresh))
        self._used += fresh
        self._slot.update(zip(keys, rows))
        self._key_bytes += added
        self._rows.index_copy_(0, _long(rows), values)
        return True

    def _take_row(self, cost: int) -> Optional[int]:
        """A row for a new entry that costs `cost` bytes besides its row, evicting the least recently
        used entries as the limits require; None when the entry cannot fit even in an empty cache."""
        budget = self.max_bytes
        while self._slot and (len(self._slot) >= self.capacity or not (self._free or self._used < len(self._rows))
                              or (budget is not None and self.nbytes + cost
                                  + (0 if self._free else self._row_bytes) > budget)):
            key, row = self._slot.popitem(last=False)
            self._key_bytes -= sys.getsizeof(key)
            self._free.append(row)
        if self._free:
            row = self._free.pop()
        elif self._used < len(self._rows):
            row = self._used
            self._used += 1
        else:
            return None
        if budget is not None and self.nbytes + cost > budget:
            self._free.append(row)
            return None
        return row

    def gather(self, keys: Sequence[Hashable], compute: Callable[[List[Hashable]], torch.Tensor]) -> torch.Tensor:
        """Like get_many, for keys that may repeat: one row per key, each distinct key looked up once."""
        unique = distinct(keys)
        values = self.get_many(unique, compute)
        if len(unique) == len(keys):
            return values
        where = {k: i for i, k in enumerate(unique)}
        return values.index_select(0, _long([where[k] for k in keys]))


def cache_budget(cache_mb: Optional[float], name: str) -> Optional[int]:
    """Bytes for cache `name` out of a budget of `cache_mb` MiB (None: no byte limit)."""
    if cache_mb is None:
        return None
    return int(float(cache_mb) * 2**20 * CACHE_SHARES[name])


class NativeEncoder:
    """ELMo in plain PyTorch (elmo.py): token vectors and pooled, mixed sequence vectors."""

    name = "native"

    def __init__(self, bilm: ElmoBiLm, head: Head, batch_size: int = 512, token_cache: int = 200_000,
                 token_bytes: Optional[int] = None) -> None:
        self.bilm = bilm.eval()
        self.head = head
        self.batch_size = batch_size
        self.tokens = LRU(token_cache, token_bytes)
        self._boundary: Optional[torch.Tensor] = None

    def token_vectors(self, words: Sequence[str]) -> torch.Tensor:
        """(len(words), proj) character-CNN vectors; `words` distinct."""
        return self.tokens.get_many(words, lambda missing: self.bilm.token_embedder(char_tensor(missing)))

    def encode(self, sequences: List[List[str]]) -> torch.Tensor:
        """(len(sequences), 2, elmo_dim): [mean, leaf] of the mixed ELMo representation, each token
        prefix and suffix of the batch run through the biLM once (trie.py)."""
        if not sequences:
            return torch.zeros(0, 2, self.bilm.output_dim)
        if self._boundary is None:  # <S> and </S>: fixed, like the cached token vectors
            self._boundary = torch.stack(self.bilm.boundary_embeddings())
        mix = self.head.scalar_mix
        weights = mix.weights()
        parts = [encode_distinct(self.bilm, sequences[start: start + self.batch_size], self.token_vectors,
                                 self._boundary, weights, mix.gamma)
                 for start in range(0, len(sequences), self.batch_size)]
        return parts[0] if len(parts) == 1 else torch.cat(parts)


def pool_words(word_lists: List[List[str]], token_vectors: Callable[[List[str]], torch.Tensor]) -> torch.Tensor:
    """(len(word_lists), 2*dim): [mean, max] of each list's character-CNN vectors (lists non-empty),
    as two embedding_bag calls over the flattened lists (no padded copy of the vectors)."""
    position: Dict[str, int] = {}
    flat = [position.setdefault(w, len(position)) for ws in word_lists for w in ws]
    table = token_vectors(list(position))
    index = _long(flat)
    offsets = _long([0] + [len(ws) for ws in word_lists[:-1]]).cumsum(0)
    mean = F.embedding_bag(index, table, offsets, mode="mean")
    top = F.embedding_bag(index, table, offsets, mode="max")
    return torch.cat([mean, top], dim=-1)


class Scorer:
    """Scores pages with one model; `threshold` and `card` come from the model card."""

    def __init__(self, directory: Path, card: dict, encoder, head: Head, sequence_cache: int = 100_000,
                 text_cache: int = 50_000, cache_mb: Optional[float] = None) -> None:
        """`cache_mb`: the byte budget of the sequence and text caches together with the encoder's
        token cache, in MiB, shared out by CACHE_SHARES (the encoder gets its share when it is built,
        see load_model); None: bounded by entries only."""
        self.directory = Path(directory)
        self.card = card
        self.threshold = float(card.get("threshold", 0.5))
        # main-content models keep only their page's main region (edrew_scrapy.extract.relevant_mask)
        share = card.get("region_share")
        self.region_share = None if share is None else float(share)
        self.encoder = encoder
        self.head = head.eval()
        self.backend = encoder.name
        self.sequences = LRU(sequence_cache, cache_budget(cache_mb, "sequences"))
        self.texts = LRU(text_cache, cache_budget(cache_mb, "texts"))
        # the caches are shared state: one score() at a time (torch already uses the cores inside it)
        self._lock = threading.Lock()

    def _sequence_vectors(self, keys: List[str], tokens: Dict[str, List[str]]) -> torch.Tensor:
        return self.sequences.gather(
            keys, lambda missing: self.encoder.encode([tokens[k] for k in missing]).flatten(1))

    def _text_vectors(self, nodes: Sequence[Node]) -> torch.Tensor:
        # Menus, footers and buttons repeat on every page of a site: their pooled word vectors are
        # looked up instead of rebuilt. The key is the words the model reads (at most 8 x 20 chars),
        # not the content, so the cache's memory stays bounded whatever the pages hold.
        words = {}
        keys = []
        for node in nodes:
            ws = text_words(node.content)
            key = "\x1f".join(ws)
            words[key] = ws
            keys.append(key)
        return self.texts.gather(
            keys, lambda missing: pool_words([words[k] for k in missing], self.encoder.token_vectors))

    def cache_stats(self) -> Dict[str, Dict[str, int]]:
        """Entries and bytes (see LRU.nbytes) of each cache: tokens (native backend), sequences, texts."""
        caches = {"tokens": getattr(self.encoder, "tokens", None), "sequences": self.sequences, "texts": self.texts}
        return {name: cache.stats() for name, cache in caches.items() if isinstance(cache, LRU)}

    def score(self, pages: Sequence[Page], skip: Optional[Callable[[Node], bool]] = None) -> List[np.ndarray]:
        """One float32 array of P(relevant) per page, aligned with page.nodes.

        `skip`: nodes for which it is true are not scored (0.0) and are left out of the node sequence
        the head's page BiLSTM reads; their features are still computed on the whole page. extract()
        passes the nodes whose decision its rules settle whatever their score (boilerplate, form
        controls, text for screen readers), which saves time on pages seen for the first time at the same
        word-F1 (docs/method-choices.md, "Decision rules after scoring").
        """
        config = self.head.config
        results: List[np.ndarray] = []
        with self._lock, torch.inference_mode():
            kept: List[List[int]] = []
            tokens: Dict[str, List[str]] = {}
            for page in pages:
                at = list(range(len(page.nodes))) if skip is None else [
                    i for i, node in enumerate(page.nodes) if not skip(node)]
                kept.append(at)
                nodes = page.nodes
                for i in at:
                    node = nodes[i]
                    if node.retps not in tokens:
                        tokens[node.retps] = retps_tokens(node)
            # one biLM pass over the batch's distinct sequences that the cache does not hold (a page on
            # its own gets that from its own lookup below)
            if len(pages) > 1:
                self._sequence_vectors(list(tokens), tokens)
            for page, at in zip(pages, kept):
                probs = np.zeros(len(page.nodes), dtype=np.float32)
                if not at:
                    results.append(probs)
                    continue
                whole = len(at) == len(page.nodes)
                nodes = page.nodes if whole else [page.nodes[i] for i in at]
                elmo = self._sequence_vectors([n.retps for n in nodes], tokens)
                text = self._text_vectors(nodes).unsqueeze(0) if config["use_text"] else None
                feats = None
                if config["use_features"]:
                    table = page_features(page, config["n_features"])
                    feats = torch.from_numpy(table if whole else table[at]).unsqueeze(0)
                groups = None
                if config.get("tree_levels"):
                    groups = torch.from_numpy(ancestor_groups([n.path for n in nodes], config["tree_levels"]))
                    groups = groups.unsqueeze(0)
                logits = self.head(elmo.unsqueeze(0), text, feats, None, groups)
                if whole:
                    probs[:] = torch.sigmoid(logits[0]).numpy()
                else:
                    probs[at] = torch.sigmoid(logits[0]).numpy()
                results.append(probs)
        return results


def build_bilm(options: dict, path: Union[str, Path] = files.OPTIONS) -> ElmoBiLm:
    """`path`: the options file, for the message. Options read from a model folder go through
    check_bilm_weights first: building allocates whatever sizes they ask for."""
    try:
        return ElmoBiLm(options)
    except (KeyError, TypeError, ValueError, RuntimeError) as exc:
        raise ModelError(f"{path}: ELMo options do not describe a model ({files.describe(exc)})") from None


def check_bilm_weights(options: dict, path: Union[str, Path], weights: Union[str, Path]) -> None:
    """ModelError unless the weights file holds, as plain numeric datasets of the right shapes, what the
    options describe. Sizes come from a file: "lstm.dim": 2**24 would allocate petabytes before
    read_elmo_weights could compare shapes, so the module is built on the meta device (shapes, no
    storage) and the file's metadata is checked against it (files.check_elmo_datasets)."""
    with torch.device("meta"):
        shapes = files.elmo_shapes(build_bilm(options, path))
    files.check_elmo_datasets(Path(weights), shapes)


def check_head_config(card_path: Path, config) -> None:
    """The head configuration's types and sizes, so that a bad card is reported as such and not as
    whatever torch raises (or, for flags, as a silently different model)."""
    if not isinstance(config, dict):
        raise ModelError(f"{card_path}: the card has no head configuration")
    for key in ("use_text", "use_features", "use_context"):
        if not isinstance(config.get(key), bool):
            raise ModelError(f"{card_path}: head.{key} must be true or false, not {config.get(key)!r}")
    n_features = config.get("n_features", 0)
    if config["use_features"] and not (files.is_positive_int(n_features) and n_features <= N_FEATURES):
        raise ModelError(f"{card_path}: the head reads {n_features!r} shallow features; "
                         f"this version of edrew-scrapy computes {N_FEATURES} (a newer model needs a newer release)")
    levels = config.get("tree_levels", 0)
    if not is_tree_levels(levels):
        raise ModelError(f"{card_path}: head.tree_levels must be an integer 0..{MAX_TREE_LEVELS}, not {levels!r}")
    sizes = ["n_layers", "elmo_dim", "node_dim"]
    sizes += ["token_dim", "text_dim"] if config["use_text"] else []
    sizes += ["context_dim"] if config["use_context"] else []
    for key in sizes:
        if not files.is_positive_int(config.get(key)):
            raise ModelError(f"{card_path}: head.{key} must be a positive integer, not {config.get(key)!r}")
    dropout = config.get("dropout")
    if not (files.is_number(dropout) and 0 <= dropout <= 1):
        raise ModelError(f"{card_path}: head.dropout must be a number in [0, 1], not {dropout!r}")


def check_head_fits(card_path: Path, config: dict, options: dict) -> None:
    """The head reads what this biLM gives; a mismatch would otherwise fail only when a page is scored."""
    projection = options["lstm"]["projection_dim"]
    expected = {"n_layers": options["lstm"]["n_layers"] + 1, "elmo_dim": 2 * projection}
    if config["use_text"]:
        expected["token_dim"] = projection
    for key, value in expected.items():
        if config[key] != value:
            raise ModelError(f"{card_path}: head.{key} is {config[key]}, the ELMo options "
                             f"({files.OPTIONS}) give {value}")


def load_head(directory: Path, card: dict, options: Optional[dict] = None) -> Head:
    """`options`: the biLM's, when known, so that a head that cannot read it is refused before it is built."""
    path = Path(directory) / files.HEAD
    card_path = Path(directory) / files.CARD
    config = card.get("head")
    check_head_config(card_path, config)
    if options is not None:
        check_head_fits(card_path, config, options)
    state = files.read_head(path)  # its tensors are as large as the file, no larger
    try:
        # the card's sizes against the file's before the head is built (see check_bilm_weights)
        with torch.device("meta"):
            wanted = sum(p.numel() for p in Head(config).parameters())
        held = sum(t.numel() for t in state.values())
        if wanted > held:
            raise ModelError(f"{card_path}: the head configuration describes {wanted:,} parameters; "
                             f"{path.name} holds {held:,} values")
        head = Head(config)
    except (KeyError, TypeError, ValueError, RuntimeError) as exc:
        raise ModelError(f"{card_path}: bad head configuration ({files.describe(exc)})") from None
    try:
        head.load_state_dict(state, strict=True)
    except RuntimeError as exc:
        raise ModelError(f"{path}: tensors do not match the card's head configuration "
                         f"({files.describe(exc)})") from None
    return head.eval()


def load_model(path: Union[str, Path, None] = None, backend: str = "native", verify: bool = True,
               cache_mb: Optional[float] = DEFAULT_CACHE_MB) -> Scorer:
    """Load a model directory (None or "default" = the shipped models/default/) and return its Scorer.
    Its caches hold at most `cache_mb` MiB together (None or 0: only their entry limits bound them)."""
    directory = model_directory(path)
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r} (choose from {', '.join(BACKENDS)})")
    # checked here, before the files are read: nan and inf failed only when the caches were sized, and a
    # negative budget gave caches that hold nothing
    if cache_mb is not None:
        if not (isinstance(cache_mb, numbers.Real) and not isinstance(cache_mb, bool)
                and math.isfinite(cache_mb) and cache_mb >= 0):
            raise ValueError(f"cache_mb must be None or a number of MiB >= 0, not {cache_mb!r}")
        cache_mb = float(cache_mb) or None  # 0 is no byte limit, as EDREW_CACHE_MB=0 is
    card = files.read_card(directory, verify=verify)
    options = files.read_options(directory / files.OPTIONS, card["files"][files.OPTIONS]["bytes"])
    head = load_head(directory, card, options)
    check_bilm_weights(options, directory / files.OPTIONS, directory / files.WEIGHTS)
    if backend == "native":
        bilm = build_bilm(options, directory / files.OPTIONS)
        files.read_elmo_weights(directory / files.WEIGHTS, bilm)
        encoder = NativeEncoder(bilm, head, token_bytes=cache_budget(cache_mb, "tokens"))
    else:
        from .allennlp_backend import AllenNlpEncoder

        encoder = AllenNlpEncoder(directory / files.OPTIONS, directory / files.WEIGHTS, head)
    return Scorer(directory, card, encoder, head, cache_mb=cache_mb)


def save_model(directory: Union[str, Path], options: dict, bilm: ElmoBiLm, head: Head, card: dict) -> dict:
    """Write a complete model directory; returns the card as written (with checksums)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    files.write_options(directory / files.OPTIONS, options)
    files.write_elmo_weights(directory / files.WEIGHTS, bilm)
    files.write_head(directory / files.HEAD, head.state_dict())
    return files.write_card(directory, dict(card, head=head.config))
