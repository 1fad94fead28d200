"""What every backend's scorer shares, without torch: the page loop, the caches, the head checks, load_model.

A backend supplies its sequence vectors (the biLM's pooled, mixed vectors of a set of reTPS), the pooled
vectors of a node's first words and the heads; `Scorer.score` does the rest the same way for all of them,
so that they differ only in the arithmetic. A mixed model (the card's `heads`, files.head_entries) runs
the biLM and the character CNN once a page for all its heads: each head's scalar mix is applied to the
per-layer pooled vectors, each head scores the nodes, and the node's score is the heads' probabilities
weighted by the card's weights. `numpy` (numpy_backend.py) never imports torch; `native`
(scorer.py, PyTorch, the modules training uses) and `allennlp` (allennlp_backend.py) do.
"""
from __future__ import annotations

import math
import numbers
import sys
import threading
from contextlib import nullcontext
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Union

import numpy as np

from ..page import Node, Page
from . import files
from .cache import DEFAULT_CACHE_MB, LRU, cache_budget
from .features import (
    MAX_TREE_LEVELS,
    N_FEATURES,
    ancestor_groups,
    is_tree_levels,
    page_features,
    retps_tokens,
    text_words,
)
from .files import ModelError

# numpy: numpy_backend.py, no torch (the default: the same scores, less CPU and memory, see docs/model.md);
# native: PyTorch (scorer.py); allennlp: AllenNLP's Elmo on the same files (allennlp_backend.py)
BACKENDS = ("numpy", "native", "allennlp")
DEFAULT_BACKEND = "numpy"


class ScorerBase:
    """Scores pages with one model; `threshold` and `card` come from the model card.

    Subclasses set `backend` and `cache_class` and implement `_sequence_vectors_of` (the pooled, mixed
    biLM vectors of distinct token lists: each head's side by side, in the order of `heads`),
    `_pool_words` (the [mean, max] of each word list's character-CNN vectors) and `_head_probabilities`
    (one head on pages' node rows, numpy out).

    Caches: `sequences` holds per distinct reTPS the vectors of every head (a mixed model's entries are
    that many times larger; the byte budget bounds them all the same), `texts` the pooled word vectors
    the heads share, and the backend's token cache the character-CNN vectors."""

    backend = ""
    cache_class = LRU

    def __init__(self, directory: Path, card: dict, sequence_cache: int = 100_000, text_cache: int = 50_000,
                 cache_mb: Optional[float] = None) -> None:
        """`cache_mb`: the byte budget of the sequence and text caches together with the token cache, in
        MiB, shared out by cache.CACHE_SHARES (the token cache gets its share where it is built, see
        load_model); None: bounded by entries only."""
        self.directory = Path(directory)
        self.card = card
        self.threshold = float(card.get("threshold", 0.5))
        self.heads = files.head_entries(card, self.directory / files.CARD)
        # heads that sit out some page types need each page's type (pagetype.py, on the serialised page)
        self._page_types = None
        if any(head.not_on for head in self.heads):
            from ..pagetype import PageTypeError, default_classifier

            try:
                self._page_types = default_classifier(str(self.directory))
            except PageTypeError as exc:
                raise ModelError(f"{self.directory}: heads sit out page types, and the page types: {exc}") from None
            if self._page_types is None:
                raise ModelError(f"{self.directory}: heads sit out page types, and there is no pagetype.json")
        # main-content models keep only their page's main region (edrew_scrapy.extract.relevant_mask)
        share = card.get("region_share")
        self.region_share = None if share is None else float(share)
        self.sequences = self.cache_class(sequence_cache, cache_budget(cache_mb, "sequences"))
        self.texts = self.cache_class(text_cache, cache_budget(cache_mb, "texts"))
        # the caches are shared state: one score() at a time
        self._lock = threading.Lock()

    @property
    def head_config(self) -> dict:
        """What the page loop computes for the heads: text vectors if one reads them, the most features
        and tree levels one reads (features are a prefix of one table: each head takes its first n)."""
        configs = [head.config for head in self.heads]
        if len(configs) == 1:
            return configs[0]
        featured = [c["n_features"] for c in configs if c["use_features"]]
        return {"use_text": any(c["use_text"] for c in configs), "use_features": bool(featured),
                "n_features": max(featured, default=0),
                "tree_levels": max(int(c.get("tree_levels", 0)) for c in configs)}

    def _inference(self):
        return nullcontext()

    def _sequence_vectors_of(self, sequences: List[List[str]]):
        raise NotImplementedError

    def _pool_words(self, word_lists: List[List[str]]):
        raise NotImplementedError

    def _head_probabilities(self, index: int, pages: List[tuple]) -> List[np.ndarray]:
        """P(relevant) of each page's nodes by head `index`, from the page's (elmo, text, features, groups)."""
        raise NotImplementedError

    def _heads_probabilities(self, per_head: List[List[tuple]]) -> List[List[np.ndarray]]:
        """_head_probabilities of each head on its own inputs; a backend may run the heads together."""
        return [self._head_probabilities(index, pages) for index, pages in enumerate(per_head)]

    def _head_inputs(self, index: int, page: tuple) -> tuple:
        """A page's (elmo, text, features, groups) as head `index` reads them: its own block of the
        sequence vectors, text and groups if it uses them, its first n features."""
        elmo, text, features, groups = page
        config = self.heads[index].config
        width = elmo.shape[1] // len(self.heads)
        return (elmo[:, index * width: (index + 1) * width], text if config["use_text"] else None,
                features[:, : config["n_features"]] if config["use_features"] else None,
                groups if config.get("tree_levels") else None)

    def _probabilities_many(self, pages: List[tuple], types: Optional[List[tuple]] = None) -> List[np.ndarray]:
        """P(relevant) of each page's (elmo, text, features, groups): the one head's, or the weighted sum of
        the heads' probabilities; `types`: each page's (type, probability), where a head sits out some."""
        if len(self.heads) == 1:
            return self._head_probabilities(0, pages)
        per_head = self._heads_probabilities([[self._head_inputs(index, page) for page in pages]
                                              for index in range(len(self.heads))])
        mixed: List[np.ndarray] = []
        for i in range(len(pages)):
            total = None
            for weight, probs in zip(self._page_weights(types[i] if types else None), per_head):
                if weight:
                    part = np.float32(weight) * probs[i]
                    total = part if total is None else np.add(total, part, out=total)
            mixed.append(total)
        return mixed

    def _page_weights(self, kind: Optional[tuple]) -> List[float]:
        """The heads' weights on a page of `kind` ((page type, probability), None where no head sits out
        any): a head that sits out that type weighs 0 and the others share the page in proportion."""
        out = [kind is not None and kind[0] in head.not_on and kind[1] >= head.min_probability for head in self.heads]
        if not any(out):
            return [head.weight for head in self.heads]
        total = sum(head.weight for head, sits_out in zip(self.heads, out) if not sits_out)
        return [0.0 if sits_out else head.weight / total for head, sits_out in zip(self.heads, out)]

    def _token_cache(self) -> Optional[LRU]:
        return None

    def _sequence_vectors(self, keys: List[str], tokens: Dict[str, List[str]]):
        return self.sequences.gather(keys, lambda missing: self._sequence_vectors_of([tokens[k] for k in missing]))

    def _text_vectors(self, nodes: Sequence[Node]):
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
        return self.texts.gather(keys, lambda missing: self._pool_words([words[k] for k in missing]))

    def cache_stats(self) -> Dict[str, Dict[str, int]]:
        """Entries and bytes (see LRU.nbytes) of each cache: tokens (not with allennlp), sequences, texts."""
        caches = {"tokens": self._token_cache(), "sequences": self.sequences, "texts": self.texts}
        return {name: cache.stats() for name, cache in caches.items() if isinstance(cache, LRU)}

    def score(self, pages: Sequence[Page], skip: Optional[Callable[[Node], bool]] = None) -> List[np.ndarray]:
        """One float32 array of P(relevant) per page, aligned with page.nodes.

        `skip`: nodes for which it is true are not scored (0.0) and are left out of the node sequence
        the head's page BiLSTM reads; their features are still computed on the whole page. extract()
        passes the nodes whose decision its rules settle whatever their score (boilerplate, form
        controls, text for screen readers), which saves time on pages seen for the first time at the same
        word-F1 (docs/method-choices.md, "Decision rules after scoring").
        """
        config = self.head_config
        results: List[np.ndarray] = []
        with self._lock, self._inference():
            kept: List[List[int]] = []
            scored_nodes: List[Node] = []  # the nodes scored, page after page
            tokens: Dict[str, List[str]] = {}
            for page in pages:
                at = list(range(len(page.nodes))) if skip is None else [
                    i for i, node in enumerate(page.nodes) if not skip(node)]
                kept.append(at)
                nodes = page.nodes if len(at) == len(page.nodes) else [page.nodes[i] for i in at]
                scored_nodes += nodes
                for node in nodes:
                    if node.retps not in tokens:
                        tokens[node.retps] = retps_tokens(node)
            # the call's pages together: one cache lookup, one biLM pass over the distinct reTPS the
            # cache does not hold and one character CNN over the new words, then each page's rows
            ends = np.cumsum([len(at) for at in kept]).tolist()
            elmo_all = self._sequence_vectors([n.retps for n in scored_nodes], tokens) if scored_nodes else None
            text_all = self._text_vectors(scored_nodes) if scored_nodes and config["use_text"] else None
            inputs = []
            types: Optional[List[tuple]] = [] if self._page_types is not None else None
            begin = 0
            for page, at, end in zip(pages, kept, ends):
                results.append(np.zeros(len(page.nodes), dtype=np.float32))
                if not at:
                    continue
                elmo = elmo_all[begin:end]
                text = None if text_all is None else text_all[begin:end]
                feats = None
                if config["use_features"]:
                    table = page_features(page, config["n_features"])
                    feats = table if len(at) == len(page.nodes) else table[at]
                groups = None
                if config.get("tree_levels"):
                    groups = ancestor_groups([n.path for n in scored_nodes[begin:end]], config["tree_levels"])
                inputs.append((elmo, text, feats, groups))
                if types is not None:
                    types.append(self._page_types.predict(page))
                begin = end
            scored = iter(self._probabilities_many(inputs, types) if inputs else ())
            for probs, at in zip(results, kept):
                if at:
                    probs[at] = next(scored)
        return results


def check_head_config(card_path: Path, config) -> None:
    """The head configuration's types and sizes, so that a bad card is reported as such and not as
    whatever the arithmetic raises (or, for flags, as a silently different model)."""
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


def set_threads(threads: int, backend: str) -> None:
    """Intra-op threads for scoring, for the whole process: numpy's BLAS (and any OpenMP library loaded)
    through threadpoolctl, and torch's for the backends that run on it (or when torch is loaded anyway).
    The model's operations are a few dozen rows wide, so more threads cost more than they save, many
    times more on a busy machine (docs/method-choices.md)."""
    from threadpoolctl import threadpool_limits

    threadpool_limits(threads)
    if backend != "numpy" or "torch" in sys.modules:
        files.require_torch(f"backend {backend!r}").set_num_threads(threads)


def threads_in_use() -> int:
    """The intra-op threads scoring runs with: torch's when it is loaded, else numpy's BLAS's."""
    if "torch" in sys.modules:
        return sys.modules["torch"].get_num_threads()
    from threadpoolctl import threadpool_info

    return max((pool["num_threads"] for pool in threadpool_info() if pool.get("user_api") == "blas"), default=1)


def check_cache_mb(cache_mb) -> Optional[float]:
    """A cache budget as load_model takes it: None, or a finite number of MiB >= 0 (0 is None: no byte
    limit, as EDREW_CACHE_MB=0 is). Checked before the files are read: nan and inf failed only when the
    caches were sized, and a negative budget gave caches that hold nothing."""
    if cache_mb is None:
        return None
    if not (isinstance(cache_mb, numbers.Real) and not isinstance(cache_mb, bool)
            and math.isfinite(cache_mb) and cache_mb >= 0):
        raise ValueError(f"cache_mb must be None or a number of MiB >= 0, not {cache_mb!r}")
    return float(cache_mb) or None


def check_heads(card_path: Path, card: dict, options: dict) -> List[files.HeadEntry]:
    """The card's heads (files.head_entries), each head's configuration checked and checked against the
    biLM's options; the message names the head of a mixed model."""
    heads = files.head_entries(card, card_path)
    for head in heads:
        where = card_path if len(heads) == 1 else Path(f"{card_path} (head {head.name!r}, {head.file})")
        check_head_config(where, head.config)
        check_head_fits(where, head.config, options)
    return heads


def read_model_files(directory: Path, verify: bool):
    """The card (checked, with its files' sizes and checksums when `verify`), the ELMo options and the
    card's head configurations, checked against the options."""
    card = files.read_card(directory, verify=verify)
    options = files.read_options(directory / files.OPTIONS, card["files"][files.OPTIONS]["bytes"])
    check_heads(directory / files.CARD, card, options)
    return card, options


def load_model(path: Union[str, Path, None] = None, backend: str = DEFAULT_BACKEND, verify: bool = True,
               cache_mb: Optional[float] = DEFAULT_CACHE_MB):
    """Load a model directory (None or "default" = the shipped models/default/) and return its scorer.
    Its caches hold at most `cache_mb` MiB together (None or 0: only their entry limits bound them).
    `backend` numpy imports no torch; native and allennlp do (TorchMissing when it is not installed)."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r} (choose from {', '.join(BACKENDS)})")
    cache_mb = check_cache_mb(cache_mb)
    directory = files.model_directory(path)
    if backend == "numpy":
        from .numpy_backend import load_numpy_model

        return load_numpy_model(directory, verify, cache_mb)
    files.require_torch(f"backend {backend!r}")  # TorchMissing naming the extra, not a traceback
    from .scorer import load_torch_model

    return load_torch_model(directory, backend, verify, cache_mb)
