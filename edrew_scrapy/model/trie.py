"""The biLM at inference over a set of distinct reTPS, each token prefix and suffix computed once.

ELMo's two directions are independent through every layer: the forward LSTM's state at a token depends
only on the tokens up to it (the sequence's prefix), the backward one's only on the tokens from it to
the end (the suffix). A page's reTPS are leaf-first tag paths, so they share many suffixes (sibling
nodes: the same path up to the root) and prefixes (`<#CNT>`, the same leaf tag). Each direction is run
over a trie of its prefixes (forward) or suffixes (backward), one level per step: a node's state comes
from its parent's and its own token, once for every sequence that passes through it. On WCXB pages this
computes a third fewer LSTM rows than running every sequence padded (per page, over its ~100 new reTPS:
5,600 instead of 8,500 rows for the four layer-direction cells; the boundary steps whose outputs pooling
drops, </S> forward and <S> backward, are not computed either).

Python's per-call overhead matters at these sizes (rows of 32 floats, a few hundred per step), so each
step runs all layers and both directions together: step i computes level i of layer 0 and level i - L
of layer L, forward and backward, with one set of element-wise calls over their rows stacked (only the
matrix products, which have different weights, are per cell): 22 steps per page instead of 88. What
remains is mostly arithmetic: ~80 M multiply-adds per page in the products (~3 of the ~4.5 ms of
`_run` on one core of the benchmark machine) and the sigmoids (~0.7 ms).

The numbers are those of `ElmoBiLm.forward_embedded` followed by `pool_sequences` and the head's scalar
mix (tests/test_model_trie.py), up to float rounding.
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import chain
from typing import Dict, List, Sequence, Tuple

import numpy as np
import torch
from torch.nn import functional as F

from .elmo import ElmoBiLm, LstmCellWithProjection


@dataclass
class _Trie:
    """The distinct prefixes of a set of token rows, by level (level j: prefixes of j tokens; level 0 is
    the sentence boundary every row starts from)."""
    parents: List[np.ndarray]   # per level, each node's parent (index within the level above)
    tokens: List[np.ndarray]    # per level, each node's last token
    path: np.ndarray            # (S, T): the node (index within its level) of row r at level j + 1, -1 past its end


def _trie(ids: np.ndarray, boundary: int) -> _Trie:
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
    return _Trie([np.zeros(1, dtype=np.int64)] + np.split(parents, split),
                 [np.array([boundary])] + np.split(rows[row, level], split), path)


def _reversed_rows(ids: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Each row's tokens in reverse order, left-aligned (the backward direction reads them so)."""
    back = lengths[:, None] - 1 - np.arange(ids.shape[1])[None, :]
    return np.where(back >= 0, np.take_along_axis(ids, np.maximum(back, 0), axis=1), -1)


class _Plan:
    """Where every node's state lives in the row buffers, and what each step computes.

    Row 0 of the buffers is the zero state that level-0 nodes start from. Then, step by step, a block
    holding for each layer L and direction d the nodes of level (step - L), contiguous per cell. Layers
    above 1 read the output rows (state + input) of the layer below, kept after the state rows."""

    def __init__(self, tries: List[_Trie], n_layers: int, n_tokens: int) -> None:
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
        gather_t = torch.from_numpy(gather).split(g_per_step)
        parents_t = torch.from_numpy(parent_rows).split(n_per_step)
        self.steps = []
        begin = 1
        for (_, step_cells, step_sizes, step_g), n, g, p in zip(steps, n_per_step, gather_t, parents_t):
            self.steps.append((begin, begin + n, step_cells, step_sizes, step_g, g, p))
            begin += n
        self.widest = max(n_per_step)
        self.widest_gather = max(g_per_step)


def _cell_weights(cell: LstmCellWithProjection) -> Tuple[torch.Tensor, ...]:
    """(input weight^T, state weight^T, bias, projection^T, [input; state] weight^T) with the candidate
    gate's rows scaled by 2: tanh(x) = 2*sigmoid(2x) - 1, so one sigmoid covers all four gates."""
    params = (cell.input_linearity.weight, cell.state_linearity.weight, cell.state_linearity.bias,
              cell.state_projection.weight)
    key = tuple((p.data_ptr(), p._version) for p in params)
    if getattr(cell, "_trie_key", None) != key:
        c = cell.cell_size
        scale = torch.ones(4 * c, 1)
        scale[2 * c: 3 * c] = 2.0
        w_in, w_state, bias, w_proj = params
        w_in_t, w_state_t = (w_in * scale).t().contiguous(), (w_state * scale).t().contiguous()
        cell._trie_weights = (w_in_t, w_state_t, bias * scale.squeeze(1), w_proj.t().contiguous(),
                              torch.cat([w_in_t, w_state_t]))
        cell._trie_key = key
    return cell._trie_weights


def _run(bilm: ElmoBiLm, plan: _Plan, layer0: torch.Tensor) -> torch.Tensor:
    """Every cell's projected LSTM state for every node (plan.rows rows). `layer0` holds each layer-0
    node's input projection (plus bias), in the order of plan.tokens.

    Per step: one gather of the rows every product reads (a layer-0 node's parent state; above, the
    node's input and its parent's state side by side, so that one product with [W_in; W_state] gives
    the gates), one gather of the parents' memory, a product per cell (the weights differ) and one
    call per element-wise operation over the step's stacked rows, writing into preallocated buffers.
    Padding the two directions to one shape for batched products (bmm) cost as much as it saved: the
    products are most of the time at these sizes, and the padding added 14 % rows."""
    lstm = bilm.lstm
    cells = [lstm.forward_layers, lstm.backward_layers]
    weights = [[_cell_weights(layers[k]) for layers in cells] for k in range(lstm.num_layers)]
    c_size = lstm.forward_layers[0].cell_size
    hid = lstm.hidden_size
    cell_clip = lstm.forward_layers[0].memory_cell_clip_value
    proj_clip = lstm.forward_layers[0].state_projection_clip_value
    n_layers = lstm.num_layers
    R = plan.rows
    # the state rows, then (with more than two layers) the output rows: state + input, read by the next layer
    hs = torch.empty(R * (2 if n_layers > 2 else 1), hid)
    hs[0] = 0
    memory = torch.empty(R, c_size)
    memory[0] = 0
    gates_buf = torch.empty(plan.widest, 4 * c_size)
    gin_buf = torch.empty(plan.widest_gather, hid)
    cprev_buf = torch.empty(plan.widest, c_size)
    tmp_buf = torch.empty(plan.widest, c_size)
    hid_buf = torch.empty(plan.widest, c_size)
    for begin, end, step_cells, sizes, g_sizes, gidx, pidx in plan.steps:
        n = end - begin
        gin = torch.index_select(hs, 0, gidx, out=gin_buf[:len(gidx)])
        c_prev = torch.index_select(memory, 0, pidx, out=cprev_buf[:n])
        gates = gates_buf[:n]
        for (layer, d, at), size, g, x in zip(step_cells, sizes, gates.split_with_sizes(sizes),
                                              gin.split_with_sizes(g_sizes)):
            w = weights[layer][d]
            if layer == 0:
                torch.addmm(layer0[at: at + size], x, w[1], out=g)
            else:
                torch.addmm(w[2], x.view(size, 2 * hid), w[4], out=g)
        gates.sigmoid_()
        i_gate, f_gate, g_half, o_gate = gates.view(n, 4, c_size).unbind(1)
        # the memory rows hold twice the cell: tanh(c) = 2*sigmoid(2c) - 1 then takes one call, and
        # doubling is exact in floating point, so the states are those of the undoubled recurrence
        mem = memory[begin:end]
        torch.mul(f_gate, c_prev, out=mem)
        mem.sub_(i_gate, alpha=2.0)
        mem.addcmul_(i_gate, g_half, value=4.0)
        if cell_clip:
            mem.clamp_(-2 * cell_clip, 2 * cell_clip)
        s = torch.sigmoid(mem, out=tmp_buf[:n])
        hidden = torch.neg(o_gate, out=hid_buf[:n])
        hidden.addcmul_(o_gate, s, value=2.0)
        new_state = hs[begin:end]
        for (layer, d, _), h, out in zip(step_cells, hidden.split_with_sizes(sizes), new_state.split_with_sizes(sizes)):
            torch.mm(h, weights[layer][d][3], out=out)
        if proj_clip:
            new_state.clamp_(-proj_clip, proj_clip)
        if n_layers > 2:
            at = begin
            for (layer, _d, _), size, x in zip(step_cells, sizes, gin.split_with_sizes(g_sizes)):
                if 0 < layer < n_layers - 1:
                    torch.add(hs[at: at + size], x.view(size, 2, hid)[:, 0], out=hs[R + at: R + at + size])
                at += size
    return hs[:R]


def encode_distinct(bilm: ElmoBiLm, sequences: Sequence[Sequence[str]], token_vectors, boundary: torch.Tensor,
                    mix_weights: torch.Tensor, gamma: torch.Tensor) -> torch.Tensor:
    """(len(sequences), 2, output_dim): [mean over tokens, leaf token] of the scalar-mixed ELMo vectors,
    as `NativeEncoder.encode` gives them. `token_vectors(words)` gives (len(words), dim) char-CNN vectors
    of distinct words, `boundary` (2, dim) those of <S> and </S>; every sequence has a token."""
    if not sequences:
        return boundary.new_zeros((0, 2, bilm.output_dim))
    # token ids through C-level loops (dict.fromkeys, map): a setdefault per token cost 4x more
    vocab = list(dict.fromkeys(chain.from_iterable(sequences)))
    index = {t: i for i, t in enumerate(vocab)}
    lengths = np.fromiter(map(len, sequences), dtype=np.int64, count=len(sequences))
    flat = np.fromiter(map(index.__getitem__, chain.from_iterable(sequences)), dtype=np.int64, count=int(lengths.sum()))
    ids = np.full((len(sequences), int(lengths.max())), -1, dtype=np.int64)
    ids[np.arange(ids.shape[1]) < lengths[:, None]] = flat  # row-major: each row's tokens in order
    # <S> and </S> are the last two rows of the token table: the roots of the two tries
    table = torch.cat([token_vectors(vocab), boundary])
    tries = [_trie(ids, len(vocab)), _trie(_reversed_rows(ids, lengths), len(vocab) + 1)]
    n_layers = bilm.lstm.num_layers
    plan = _Plan(tries, n_layers, table.shape[0])
    # each token's input projection for both directions (fewer rows than the nodes), then one row per node
    projected = torch.cat([torch.addmm(_cell_weights(layers[0])[2], table, _cell_weights(layers[0])[0])
                           for layers in (bilm.lstm.forward_layers, bilm.lstm.backward_layers)])
    layer0 = projected.index_select(0, torch.from_numpy(plan.tokens))
    state = _run(bilm, plan, layer0)
    return _pool(tries, plan, table, state, lengths, mix_weights, gamma)


def _pool(tries: List[_Trie], plan: _Plan, table: torch.Tensor, state: torch.Tensor, lengths: np.ndarray,
          mix_weights: torch.Tensor, gamma: torch.Tensor) -> torch.Tensor:
    """(S, 2, output_dim): [mean, leaf] of the mixed representation, both directions. Mixing is linear,
    so each trie node's mixed vector is computed once and the sequences' means gathered from them."""
    depth = len(tries[0].parents) - 1
    keys = [(d, v) for d in (0, 1) for v in range(1, depth + 1)]  # the levels of tokens (not the boundary)
    sizes = np.fromiter((len(tries[d].parents[v]) for d, v in keys), dtype=np.int64, count=len(keys))
    first = np.cumsum(sizes) - sizes   # nodes numbered direction by direction, level by level
    local = np.arange(int(sizes.sum())) - np.repeat(first, sizes)
    weights = mix_weights.tolist()
    mixed = table.index_select(0, torch.from_numpy(np.concatenate([tries[d].tokens[v] for d, v in keys])))
    mixed.mul_(weights[0])
    layer_output = None
    for layer in range(len(weights) - 1):
        rows = local + np.repeat([plan.start[layer, d, v] for d, v in keys], sizes)
        # a layer's output is its state plus its input (the layer below's output) above layer 0
        out = state.index_select(0, torch.from_numpy(rows))
        layer_output = out if layer_output is None else out.add_(layer_output)
        mixed.add_(layer_output, alpha=weights[layer + 1])
    mixed.mul_(gamma)
    paths, leaves = [], []
    n_seq = len(lengths)
    for d, trie in enumerate(tries):
        base = first[d * depth: (d + 1) * depth]
        path = np.where(trie.path >= 0, trie.path + base, -1)
        paths.append(path[path >= 0])
        # the leaf token: the forward state after it (level 1), the backward state after the whole path
        leaves.append(path[:, 0] if d == 0 else path[np.arange(n_seq), lengths - 1])
    both = np.concatenate([lengths, lengths])
    offsets = torch.from_numpy(np.cumsum(both) - both)
    mean = F.embedding_bag(torch.from_numpy(np.concatenate(paths)), mixed, offsets, mode="mean")
    leaf = mixed.index_select(0, torch.from_numpy(np.concatenate(leaves)))
    dim = mixed.shape[1]
    return torch.stack([mean, leaf], dim=1).view(2, n_seq, 2, dim).permute(1, 2, 0, 3).reshape(n_seq, 2, 2 * dim)
