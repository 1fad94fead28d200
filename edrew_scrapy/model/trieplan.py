"""The trie encoding's index work, without torch: the tries of a batch's token rows, the step plan, pooling's rows.

trie.py (PyTorch) and numpy_backend.py run the same plan; what a trie is and why: trie.py.
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import chain
from typing import Dict, List, Sequence, Tuple

import numpy as np


def numbered(sequences: Sequence[Sequence[str]]) -> Tuple[List[str], np.ndarray, np.ndarray]:
    """The distinct tokens of `sequences` (in order of first use), each sequence's length, and each token's
    number among the distinct ones, sequence after sequence."""
    # through C-level loops (dict.fromkeys, map): a setdefault per token cost 4x more
    vocab = list(dict.fromkeys(chain.from_iterable(sequences)))
    index = {t: i for i, t in enumerate(vocab)}
    lengths = np.fromiter(map(len, sequences), dtype=np.int64, count=len(sequences))
    flat = np.fromiter(map(index.__getitem__, chain.from_iterable(sequences)), dtype=np.int64, count=int(lengths.sum()))
    return vocab, lengths, flat


def token_ids(sequences: Sequence[Sequence[str]]) -> Tuple[List[str], np.ndarray, np.ndarray]:
    """The batch's distinct tokens (in order of first use), each sequence's length, and the (S, T) ids of
    its tokens, -1 past each row's end."""
    vocab, lengths, flat = numbered(sequences)
    ids = np.full((len(sequences), int(lengths.max())), -1, dtype=np.int64)
    ids[np.arange(ids.shape[1]) < lengths[:, None]] = flat  # row-major: each row's tokens in order
    return vocab, lengths, ids


def tries_of(ids: np.ndarray, lengths: np.ndarray, n_vocab: int) -> List["Trie"]:
    """The forward trie (prefixes; root <S>, token n_vocab) and the backward one (suffixes; root </S>,
    n_vocab + 1): <S> and </S> are the last two rows of the token table."""
    return [build_trie(ids, n_vocab), build_trie(reversed_rows(ids, lengths), n_vocab + 1)]


@dataclass
class Trie:
    """The distinct prefixes of a set of token rows, by level (level j: prefixes of j tokens; level 0 is
    the sentence boundary every row starts from)."""
    parents: List[np.ndarray]   # per level, each node's parent (index within the level above)
    tokens: List[np.ndarray]    # per level, each node's last token
    path: np.ndarray            # (S, T): the node (index within its level) of row r at level j + 1, -1 past its end


def build_trie(ids: np.ndarray, boundary: int) -> Trie:
    """The trie of the rows of `ids` (S, T), token ids read left to right, -1 past each row's end.

    Sorted, two rows share their prefix of j tokens iff they agree on its every column, and each new
    prefix starts a node; so the nodes, their parents and every row's path come from a few whole-array
    operations rather than a loop over the levels."""
    depth = ids.shape[1]
    order = np.lexsort(ids.T[::-1])  # rows in lexicographic order, column 0 first
    rows = ids[order]
    shared = np.logical_and.accumulate(rows[1:] == rows[:-1], axis=1)
    new = np.concatenate([np.ones((1, depth), dtype=bool), ~shared]) & (rows >= 0)
    index = np.cumsum(new, axis=0) - 1  # node index within its level (repeats for rows sharing it)
    level, row = np.nonzero(new.T)      # level by level, within a level in index order
    parents = np.where(level > 0, index[row, np.maximum(level - 1, 0)], 0)
    split = np.cumsum(np.bincount(level, minlength=depth))[:-1]
    path = np.empty_like(index)
    path[order] = np.where(rows >= 0, index, -1)
    return Trie([np.zeros(1, dtype=np.int64)] + np.split(parents, split),
                 [np.array([boundary])] + np.split(rows[row, level], split), path)


def reversed_rows(ids: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Each row's tokens in reverse order, left-aligned (the backward direction reads them so)."""
    back = lengths[:, None] - 1 - np.arange(ids.shape[1])[None, :]
    return np.where(back >= 0, np.take_along_axis(ids, np.maximum(back, 0), axis=1), -1)


class Plan:
    """Where every node's state lives in the row buffers, and what each step computes.

    Row 0 of the buffers is the zero state that level-0 nodes start from. Then, step by step, a block
    holding for each layer L and direction d the nodes of level (step - L), contiguous per cell. Layers
    above 1 read the output rows (state + input) of the layer below, kept after the state rows."""

    def __init__(self, tries: List[Trie], n_layers: int, n_tokens: int) -> None:
        depth = len(tries[0].parents) - 1
        cells = [(step, layer, d) for step in range(depth + n_layers) for layer in range(n_layers)
                 if 0 <= step - layer <= depth for d in (0, 1)]
        levels = [(tries[d], step - layer) for step, layer, d in cells]
        sizes = np.fromiter((len(t.parents[v]) for t, v in levels), dtype=np.int64, count=len(cells))
        starts = np.cumsum(sizes) - sizes + 1
        self.rows = rows = int(sizes.sum()) + 1
        self.start: Dict[Tuple[int, int, int], int] = {
            (layer, d, step - layer): s for (step, layer, d), s in zip(cells, starts.tolist())}
        start = self.start
        parent_start = [start[layer, d, step - layer - 1] if step > layer else 0 for step, layer, d in cells]
        x_start = [start[layer - 1, d, step - layer] + (rows if layer > 1 else 0) if layer else -1
                   for step, layer, d in cells]
        parent_rows = np.concatenate([t.parents[v] for t, v in levels]) + np.repeat(parent_start, sizes)
        x_rows = np.where(np.repeat(x_start, sizes) >= 0,
                          np.arange(rows - 1) - np.repeat(starts - 1, sizes) + np.repeat(x_start, sizes), -1)
        # a layer-0 node reads its parent's state; above, its input and its parent's state side by side
        gather = np.stack([x_rows, parent_rows], axis=1).ravel()
        gather = gather[gather >= 0]
        self.tokens = np.concatenate([t.tokens[v] + d * n_tokens for (step, layer, d), (t, v) in zip(cells, levels)
                                      if layer == 0])
        steps = []  # per step: its cells (layer, direction, first row in layer0), their rows, their gathered rows
        token_at = 0
        for (step, layer, d), size in zip(cells, sizes.tolist()):
            if not steps or steps[-1][0] != step:
                steps.append((step, [], [], []))
            _, step_cells, step_sizes, step_g = steps[-1]
            step_cells.append((layer, d, token_at))
            step_sizes.append(size)
            step_g.append(size if layer == 0 else 2 * size)
            if layer == 0:
                token_at += size
        n_per_step = [sum(s) for _, _, s, _ in steps]
        g_per_step = [sum(g) for _, _, _, g in steps]
        # the rows each step gathers, and its nodes' parents, all steps end to end (split per step by the backend)
        self.gather, self.g_per_step = gather, g_per_step
        self.parent_rows, self.n_per_step = parent_rows, n_per_step
        self.steps = []
        begin = 1
        for (_, step_cells, step_sizes, step_g), n in zip(steps, n_per_step):
            self.steps.append((begin, begin + n, step_cells, step_sizes, step_g))
            begin += n
        self.widest = max(n_per_step)
        self.widest_gather = max(g_per_step)


@dataclass
class PoolRows:
    """Where pooling reads. Mixing is linear, so each trie node's mixed vector is computed once: the token
    vectors (`tokens`, rows of the token table) and each layer's states (`layers[k]`, rows of the state
    buffer) of every node, nodes numbered direction by direction, level by level; then each sequence's
    mean over `paths` (its nodes, `lengths` of them per sequence and direction) and its `leaves` row."""
    tokens: np.ndarray
    layers: List[np.ndarray]
    paths: np.ndarray
    lengths: np.ndarray   # per (direction, sequence): forward for every sequence, then backward
    leaves: np.ndarray


def pool_rows(tries: List[Trie], plan: Plan, lengths: np.ndarray, n_layers: int) -> PoolRows:
    depth = len(tries[0].parents) - 1
    keys = [(d, v) for d in (0, 1) for v in range(1, depth + 1)]  # the levels of tokens (not the boundary)
    sizes = np.fromiter((len(tries[d].parents[v]) for d, v in keys), dtype=np.int64, count=len(keys))
    first = np.cumsum(sizes) - sizes   # nodes numbered direction by direction, level by level
    local = np.arange(int(sizes.sum())) - np.repeat(first, sizes)
    tokens = np.concatenate([tries[d].tokens[v] for d, v in keys])
    layers = [local + np.repeat([plan.start[layer, d, v] for d, v in keys], sizes) for layer in range(n_layers)]
    paths, leaves = [], []
    n_seq = len(lengths)
    for d, trie in enumerate(tries):
        base = first[d * depth: (d + 1) * depth]
        path = np.where(trie.path >= 0, trie.path + base, -1)
        paths.append(path[path >= 0])
        # the leaf token: the forward state after it (level 1), the backward state after the whole path
        leaves.append(path[:, 0] if d == 0 else path[np.arange(n_seq), lengths - 1])
    return PoolRows(tokens, layers, np.concatenate(paths), np.concatenate([lengths, lengths]), np.concatenate(leaves))
