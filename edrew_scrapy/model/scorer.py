"""Load a model directory and score pages: P(relevant) for every node.

Speed comes from not repeating work: a page's nodes share few distinct reTPS, and pages share them
with each other, so each distinct reTPS is run through the biLM once and its vector kept in a bounded
LRU cache; the character CNN's token vectors (tags, classes, words) are cached the same way. Sequences
are batched sorted by length so that padding stays small.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from pathlib import Path
from typing import Callable, Dict, Hashable, List, Sequence, Union

import numpy as np
import torch

from ..page import Page
from . import files
from .elmo import ElmoBiLm, char_tensor, pool_sequences
from .features import N_FEATURES, distinct, page_features, retps_tokens, text_words
from .files import ModelError
from .head import Head

def _shipped_models_dir() -> Path:
    """models/ of the repository (a clone or an editable install), else the copy a wheel installs
    under <prefix>/share/edrew-scrapy/models (setup.cfg's data_files)."""
    import sys

    in_repo = Path(__file__).resolve().parent.parent.parent / "models"
    if (in_repo / "default").is_dir():
        return in_repo
    installed = Path(sys.prefix) / "share" / "edrew-scrapy" / "models"
    return installed if (installed / "default").is_dir() else in_repo


DEFAULT_MODEL_DIR = _shipped_models_dir() / "default"
BACKENDS = ("native", "allennlp")


class LRU:
    """A bounded mapping that forgets the least recently used entries."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._data: "OrderedDict[Hashable, torch.Tensor]" = OrderedDict()

    def __len__(self) -> int:
        return len(self._data)

    def get_many(self, keys: Sequence[Hashable], compute: Callable[[List[Hashable]], torch.Tensor]) -> torch.Tensor:
        """Stack the values of `keys` (distinct), computing the missing ones in one call."""
        data = self._data
        missing = [k for k in keys if k not in data]
        if missing:
            values = compute(missing)
            for k, v in zip(missing, values):
                data[k] = v
        out = []
        for k in keys:
            data.move_to_end(k)
            out.append(data[k])
        while len(data) > self.capacity:
            data.popitem(last=False)
        return torch.stack(out) if out else torch.zeros(0)

    def gather(self, keys: Sequence[Hashable], compute: Callable[[List[Hashable]], torch.Tensor]) -> torch.Tensor:
        """Like get_many, for keys that may repeat: one row per key, each distinct key looked up once."""
        unique = distinct(keys)
        values = self.get_many(unique, compute)
        if len(unique) == len(keys):
            return values
        where = {k: i for i, k in enumerate(unique)}
        return values[[where[k] for k in keys]]


class NativeEncoder:
    """ELMo in plain PyTorch (elmo.py): token vectors and pooled, mixed sequence vectors."""

    name = "native"

    def __init__(self, bilm: ElmoBiLm, head: Head, batch_size: int = 512, token_cache: int = 200_000) -> None:
        self.bilm = bilm.eval()
        self.head = head
        self.batch_size = batch_size
        self.tokens = LRU(token_cache)

    def token_vectors(self, words: Sequence[str]) -> torch.Tensor:
        """(len(words), proj) character-CNN vectors; `words` distinct."""
        return self.tokens.get_many(words, lambda missing: self.bilm.token_embedder(char_tensor(missing)))

    def encode(self, sequences: List[List[str]]) -> torch.Tensor:
        """(len(sequences), 2, elmo_dim): [mean, leaf] of the mixed ELMo representation."""
        out = torch.empty(len(sequences), 2, self.bilm.output_dim)
        order = sorted(range(len(sequences)), key=lambda i: -len(sequences[i]))  # longest first: see elmo
        for start in range(0, len(order), self.batch_size):
            idx = order[start: start + self.batch_size]
            batch = [sequences[i] for i in idx]
            vocab = distinct([t for seq in batch for t in seq])
            position = {t: k for k, t in enumerate(vocab)}
            table = self.token_vectors(vocab)
            width = len(batch[0])
            lengths = torch.tensor([len(s) for s in batch])
            ids = torch.tensor([[position[t] for t in seq] + [0] * (width - len(seq)) for seq in batch])
            emb = table[ids]
            layers, mask = self.bilm.forward_embedded(emb, lengths)
            pooled = pool_sequences(layers, mask)           # (B, L, 2, E)
            mixed = self.head.mix(pooled).view(len(batch), 2, -1)
            out[torch.tensor(idx)] = mixed
        return out


def pool_words(word_lists: List[List[str]], token_vectors: Callable[[List[str]], torch.Tensor]) -> torch.Tensor:
    """(len(word_lists), 2*dim): [mean, max] of each list's character-CNN vectors (lists non-empty)."""
    vocab = distinct([w for ws in word_lists for w in ws])
    position = {w: k for k, w in enumerate(vocab)}
    table = token_vectors(vocab)
    width = max(len(ws) for ws in word_lists)
    index = torch.tensor([[position[w] for w in ws] + [0] * (width - len(ws)) for ws in word_lists])
    lengths = torch.tensor([len(ws) for ws in word_lists], dtype=torch.float32)
    mask = (torch.arange(width).unsqueeze(0) < lengths.unsqueeze(1)).unsqueeze(-1)
    vecs = table[index]
    mean = (vecs * mask).sum(dim=1) / lengths.unsqueeze(1)
    top = vecs.masked_fill(~mask, float("-inf")).max(dim=1).values
    return torch.cat([mean, top], dim=-1)


class Scorer:
    """Scores pages with one model; `threshold` and `card` come from the model card."""

    def __init__(self, directory: Path, card: dict, encoder, head: Head, sequence_cache: int = 100_000,
                 text_cache: int = 50_000) -> None:
        self.directory = Path(directory)
        self.card = card
        self.threshold = float(card.get("threshold", 0.5))
        self.encoder = encoder
        self.head = head.eval()
        self.backend = encoder.name
        self.sequences = LRU(sequence_cache)
        self.texts = LRU(text_cache)
        # the caches are shared state: one score() at a time (torch already uses the cores inside it)
        self._lock = threading.Lock()

    def _sequence_vectors(self, keys: List[str], tokens: Dict[str, List[str]]) -> torch.Tensor:
        return self.sequences.gather(
            keys, lambda missing: self.encoder.encode([tokens[k] for k in missing]).flatten(1))

    def _text_vectors(self, page: Page) -> torch.Tensor:
        # Menus, footers and buttons repeat on every page of a site: their pooled word vectors are
        # looked up instead of rebuilt. The key is the words the model reads (at most 8 x 20 chars),
        # not the content, so the cache's memory stays bounded whatever the pages hold.
        words = {}
        keys = []
        for node in page.nodes:
            ws = text_words(node.content)
            key = "\x1f".join(ws)
            words[key] = ws
            keys.append(key)
        return self.texts.gather(
            keys, lambda missing: pool_words([words[k] for k in missing], self.encoder.token_vectors))

    def score(self, pages: Sequence[Page]) -> List[np.ndarray]:
        """One float32 array of P(relevant) per page, aligned with page.nodes."""
        config = self.head.config
        results: List[np.ndarray] = []
        with self._lock, torch.inference_mode():
            tokens: Dict[str, List[str]] = {}
            for page in pages:
                for node in page.nodes:
                    if node.retps not in tokens:
                        tokens[node.retps] = retps_tokens(node)
            # one biLM pass over the batch's distinct sequences that the cache does not hold
            self._sequence_vectors(list(tokens), tokens)
            for page in pages:
                if not page.nodes:
                    results.append(np.zeros(0, dtype=np.float32))
                    continue
                elmo = self._sequence_vectors([n.retps for n in page.nodes], tokens)
                text = self._text_vectors(page).unsqueeze(0) if config["use_text"] else None
                feats = torch.from_numpy(page_features(page, config["n_features"])).unsqueeze(0) if config["use_features"] else None
                logits = self.head(elmo.unsqueeze(0), text, feats)
                results.append(torch.sigmoid(logits[0]).numpy().astype(np.float32))
        return results


def build_bilm(options: dict) -> ElmoBiLm:
    try:
        return ElmoBiLm(options)
    except (KeyError, TypeError, ValueError) as exc:
        raise ModelError(f"ELMo options do not describe a model ({type(exc).__name__}: {exc})") from None


def load_head(directory: Path, card: dict) -> Head:
    path = Path(directory) / files.HEAD
    config = card.get("head")
    if not isinstance(config, dict):
        raise ModelError(f"{Path(directory) / files.CARD}: the card has no head configuration")
    n_features = config.get("n_features", 0)
    if config.get("use_features") and not (isinstance(n_features, int) and 0 < n_features <= N_FEATURES):
        raise ModelError(f"{Path(directory) / files.CARD}: the head reads {n_features!r} shallow features; "
                         f"this version of edrew-scrapy computes {N_FEATURES} (a newer model needs a newer release)")
    try:
        head = Head(config)
    except (KeyError, TypeError, ValueError) as exc:
        raise ModelError(f"{Path(directory) / files.CARD}: bad head configuration ({exc})") from None
    state = files.read_head(path)
    try:
        head.load_state_dict(state, strict=True)
    except RuntimeError as exc:
        raise ModelError(f"{path}: tensors do not match the card's head configuration ({exc})") from None
    return head.eval()


def load_model(path: Union[str, Path, None] = None, backend: str = "native", verify: bool = True) -> Scorer:
    """Load a model directory (None = the shipped models/default/) and return its Scorer."""
    directory = Path(path) if path is not None else DEFAULT_MODEL_DIR
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r} (choose from {', '.join(BACKENDS)})")
    card = files.read_card(directory, verify=verify)
    head = load_head(directory, card)
    if backend == "native":
        options = files.read_options(directory / files.OPTIONS)
        bilm = build_bilm(options)
        files.read_elmo_weights(directory / files.WEIGHTS, bilm)
        encoder = NativeEncoder(bilm, head)
    else:
        from .allennlp_backend import AllenNlpEncoder

        encoder = AllenNlpEncoder(directory / files.OPTIONS, directory / files.WEIGHTS, head)
    return Scorer(directory, card, encoder, head)


def save_model(directory: Union[str, Path], options: dict, bilm: ElmoBiLm, head: Head, card: dict) -> dict:
    """Write a complete model directory; returns the card as written (with checksums)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    files.write_options(directory / files.OPTIONS, options)
    files.write_elmo_weights(directory / files.WEIGHTS, bilm)
    files.write_head(directory / files.HEAD, head.state_dict())
    return files.write_card(directory, dict(card, head=head.config))
