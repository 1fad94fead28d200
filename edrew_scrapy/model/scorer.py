"""Load a model directory and score pages: P(relevant) for every node.

Speed comes from not repeating work: a page's nodes share few distinct reTPS, and pages share them
with each other, so each distinct reTPS is run through the biLM once and its vector kept in a bounded
LRU cache; the character CNN's token vectors (tags, classes, words) are cached the same way. Within a
batch of new reTPS, each token prefix (forward LSTM) and suffix (backward LSTM) is computed once (trie.py).
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable, Dict, Hashable, List, Optional, Sequence, Union

import numpy as np
import torch
from torch.nn import functional as F

from . import base, cache, files
from .base import BACKENDS, ScorerBase, check_head_config, check_head_fits  # noqa: F401 - public here too
from .cache import CACHE_SHARES, DEFAULT_CACHE_MB, ENTRY_OVERHEAD, cache_budget, index_array  # noqa: F401
from .elmo import ElmoBiLm, char_tensor
from .files import DEFAULT_MODEL_DIR, ModelError, model_directory  # noqa: F401 - DEFAULT_MODEL_DIR: public here too
from .head import Head
from .trie import encode_distinct_mixes


def _long(values: Sequence[int]) -> torch.Tensor:
    """A 1-d int64 tensor of Python ints, through numpy: torch.tensor(list) took 4-5x longer (115 against
    25 us for 500 ints), which made the caches' index lists a visible part of scoring a page."""
    return torch.from_numpy(index_array(values))


class LRU(cache.LRU):
    """cache.LRU with tensors in and out: `compute` returns a tensor, and what is handed back is a tensor
    on the same memory as the cache's numpy rows (torch.from_numpy copies nothing)."""

    def get_many(self, keys: Sequence[Hashable], compute: Callable[[List[Hashable]], torch.Tensor]) -> torch.Tensor:
        return torch.from_numpy(super().get_many(keys, lambda missing: compute(missing).detach().numpy()))

    def gather(self, keys: Sequence[Hashable], compute: Callable[[List[Hashable]], torch.Tensor]) -> torch.Tensor:
        return torch.from_numpy(super().gather(keys, lambda missing: compute(missing).detach().numpy()))


class NativeEncoder:
    """ELMo in plain PyTorch (elmo.py): token vectors and pooled sequence vectors, mixed by each head's
    scalar mix (`heads`: a Head or a list of them)."""

    name = "native"

    def __init__(self, bilm: ElmoBiLm, heads: Union[Head, Sequence[Head]], batch_size: int = 512,
                 token_cache: int = 200_000, token_bytes: Optional[int] = None) -> None:
        self.bilm = bilm.eval()
        self.heads = [heads] if isinstance(heads, Head) else list(heads)
        self.head = self.heads[0]
        self.batch_size = batch_size
        self.tokens = LRU(token_cache, token_bytes)
        self._boundary: Optional[torch.Tensor] = None

    def token_vectors(self, words: Sequence[str]) -> torch.Tensor:
        """(len(words), proj) character-CNN vectors; `words` distinct."""
        return self.tokens.get_many(words, lambda missing: self.bilm.token_embedder(char_tensor(missing)))

    def encode(self, sequences: List[List[str]]) -> torch.Tensor:
        """(len(sequences), heads, 2, elmo_dim): [mean, leaf] of the ELMo representation mixed by each head,
        each token prefix and suffix of the batch run through the biLM once for all heads (trie.py)."""
        if not sequences:
            return torch.zeros(0, len(self.heads), 2, self.bilm.output_dim)
        if self._boundary is None:  # <S> and </S>: fixed, like the cached token vectors
            self._boundary = torch.stack(self.bilm.boundary_embeddings())
        mixes = [(head.scalar_mix.weights(), head.scalar_mix.gamma) for head in self.heads]
        parts = [encode_distinct_mixes(self.bilm, sequences[start: start + self.batch_size], self.token_vectors,
                                       self._boundary, mixes)
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


class Scorer(ScorerBase):
    """Scores pages with the PyTorch modules (`native`) or AllenNLP's Elmo (`allennlp`) and the PyTorch
    heads (`heads`: a Head or one per head of the card); `head` is the first."""

    cache_class = LRU

    def __init__(self, directory: Path, card: dict, encoder, heads: Union[Head, Sequence[Head]],
                 sequence_cache: int = 100_000, text_cache: int = 50_000, cache_mb: Optional[float] = None) -> None:
        super().__init__(directory, card, sequence_cache, text_cache, cache_mb)
        self.encoder = encoder
        self.head_models = [head.eval() for head in ([heads] if isinstance(heads, Head) else heads)]
        self.head = self.head_models[0]
        self.backend = encoder.name

    def _inference(self):
        return torch.inference_mode()

    def _token_cache(self):
        return getattr(self.encoder, "tokens", None)

    def _sequence_vectors_of(self, sequences: List[List[str]]) -> torch.Tensor:
        return self.encoder.encode(sequences).flatten(1)

    def _pool_words(self, word_lists: List[List[str]]) -> torch.Tensor:
        return pool_words(word_lists, self.encoder.token_vectors)

    def _head_probabilities(self, index: int, pages: List[tuple]) -> List[np.ndarray]:
        head = self.head_models[index]
        return [self._probabilities(head, *page) for page in pages]

    @staticmethod
    def _probabilities(head: Head, elmo: torch.Tensor, text: Optional[torch.Tensor], features: Optional[np.ndarray],
                       groups: Optional[np.ndarray]) -> np.ndarray:
        logits = head(elmo.unsqueeze(0), None if text is None else text.unsqueeze(0),
                      None if features is None else torch.from_numpy(features).unsqueeze(0), None,
                      None if groups is None else torch.from_numpy(groups).unsqueeze(0))
        return torch.sigmoid(logits[0]).numpy()


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


def load_head(directory: Path, card: dict, options: Optional[dict] = None,
              entry: Optional[files.HeadEntry] = None) -> Head:
    """The card's head, or the head `entry` of a mixed model's (files.head_entries); `options`: the biLM's,
    when known, so that a head that cannot read it is refused before it is built."""
    path = Path(directory) / (files.HEAD if entry is None else entry.file)
    card_path = Path(directory) / files.CARD
    config = card.get("head") if entry is None else entry.config
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


def load_torch_model(directory: Path, backend: str = "native", verify: bool = True,
                     cache_mb: Optional[float] = None) -> Scorer:
    """base.load_model for the backends that run on PyTorch (native, allennlp); `cache_mb` checked there."""
    card = files.read_card(directory, verify=verify)
    options = files.read_options(directory / files.OPTIONS, card["files"][files.OPTIONS]["bytes"])
    entries = base.check_heads(directory / files.CARD, card, options)
    heads = [load_head(directory, card, options, entry) for entry in entries]
    check_bilm_weights(options, directory / files.OPTIONS, directory / files.WEIGHTS)
    if backend == "native":
        bilm = build_bilm(options, directory / files.OPTIONS)
        files.read_elmo_weights(directory / files.WEIGHTS, bilm)
        encoder = NativeEncoder(bilm, heads, token_bytes=cache_budget(cache_mb, "tokens"))
    else:
        from .allennlp_backend import AllenNlpEncoder

        encoder = AllenNlpEncoder(directory / files.OPTIONS, directory / files.WEIGHTS, heads)
    return Scorer(directory, card, encoder, heads, cache_mb=cache_mb)


def load_model(path: Union[str, Path, None] = None, backend: str = "native", verify: bool = True,
               cache_mb: Optional[float] = DEFAULT_CACHE_MB):
    """base.load_model, with PyTorch's `native` backend by default (this module's callers want its modules)."""
    return base.load_model(path, backend=backend, verify=verify, cache_mb=cache_mb)


def save_model(directory: Union[str, Path], options: dict, bilm: ElmoBiLm, head: Head, card: dict) -> dict:
    """Write a complete model directory; returns the card as written (with checksums)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    files.write_options(directory / files.OPTIONS, options)
    files.write_elmo_weights(directory / files.WEIGHTS, bilm)
    files.write_head(directory / files.HEAD, head.state_dict())
    return files.write_card(directory, dict(card, head=head.config))
