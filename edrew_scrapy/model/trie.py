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

Python's per-call overhead matters as much as the arithmetic at these sizes (rows of 32 floats, a few
hundred per step), so each step runs all layers and both directions together: step i computes level i
of layer 0 and level i - L of layer L, forward and backward, with one set of element-wise calls over
their rows stacked (only the matrix products, which have different weights, are per cell): 22 steps
per page instead of 88.

The numbers are those of `ElmoBiLm.forward_embedded` followed by `pool_sequences` and the head's scalar
mix (tests/test_model_trie.py), up to float rounding.
"""
from __future__ import annotations

from dataclasses import dataclass
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


@dataclass
class _Cell:
    """The rows of one (layer, direction) at one level within a step's block."""
    layer: int
    direction: int
    level: int
    offset: int   # first row within the block
    size: int


class _Plan:
    """Where every node's state lives in the row buffers, and what each step computes.

    Row 0 of the buffers is the zero state that level-0 nodes start from. Then, step by step, a block
    holding for each layer L and direction d the nodes of level (step - L), contiguous per cell."""

    def __init__(self, tries: List[_Trie], n_layers: int) -> None:
        depth = len(tries[0].parents) - 1
        self.start: Dict[Tuple[int, int, int], int] = {}
        blocks, all_parents = [], []
        row = 1
        for step in range(depth + n_layers):
            cells, parent_rows, begin = [], [], row
            for layer in range(n_layers):
                level = step - layer
                if not 0 <= level <= depth:
                    continue
                for d, trie in enumerate(tries):
                    parents = trie.parents
                    size = len(parents[level])
                    if not size:
                        continue
                    cells.append(_Cell(layer, d, level, row - begin, size))
                    self.start[layer, d, level] = row
                    parent_rows.append(parents[level] + self.start[layer, d, level - 1] if level
                                       else np.zeros(size, dtype=np.int64))
                    row += size
            if cells:
                blocks.append((begin, row, cells))
                all_parents.append(np.concatenate(parent_rows))
        # every step's parent rows as views of one tensor (one conversion, not one per step)
        parents = torch.from_numpy(np.concatenate(all_parents)).split([len(p) for p in all_parents])
        self.steps: List[Tuple[int, int, List[_Cell], torch.Tensor, List[int]]] = [
            (begin, end, cells, rows, [cell.size for cell in cells])
            for (begin, end, cells), rows in zip(blocks, parents)]
        self.rows = row
        self.widest = max(end - begin for begin, end, *_ in self.steps)


def _cell_weights(cell: LstmCellWithProjection) -> Tuple[torch.Tensor, ...]:
    """(input weight^T, state weight^T, bias, projection^T) with the candidate gate's rows scaled by 2:
    tanh(x) = 2*sigmoid(2x) - 1, so one sigmoid covers all four gates (as in the sorted fast path)."""
    params = (cell.input_linearity.weight, cell.state_linearity.weight, cell.state_linearity.bias,
              cell.state_projection.weight)
    key = tuple((p.data_ptr(), p._version) for p in params)
    if getattr(cell, "_trie_key", None) != key:
        c = cell.cell_size
        scale = torch.ones(4 * c, 1)
        scale[2 * c: 3 * c] = 2.0
        w_in, w_state, bias, w_proj = params
        # contiguous transposes: MKL's small products (tens of rows) ran 1.7x faster than on a .t() view
        cell._trie_weights = ((w_in * scale).t().contiguous(), (w_state * scale).t().contiguous(),
                              bias * scale.squeeze(1), w_proj.t().contiguous())
        cell._trie_key = key
    return cell._trie_weights


def _run(bilm: ElmoBiLm, plan: _Plan, layer0_inputs: List[torch.Tensor]) -> Tuple[torch.Tensor, torch.Tensor]:
    """Every cell's state for every node: (H, O), H the projected LSTM states, O the outputs of the
    layers between the first and the top one (state + the layer's input: the residual connection), which
    the next layer reads. Layer 0's output is its H."""
    lstm = bilm.lstm
    cells = [lstm.forward_layers, lstm.backward_layers]
    weights = [[_cell_weights(layers[k]) for layers in cells] for k in range(lstm.num_layers)]
    c_size = lstm.forward_layers[0].cell_size
    cell_clip = lstm.forward_layers[0].memory_cell_clip_value
    proj_clip = lstm.forward_layers[0].state_projection_clip_value
    state = torch.zeros(plan.rows, lstm.hidden_size)
    memory = torch.zeros(plan.rows, c_size)
    output = torch.empty(plan.rows, lstm.hidden_size)
    gates_buffer = torch.empty(plan.widest, 4 * c_size)
    # per step: one call per kind of work over the stacked rows of its cells, and split() views (not
    # one slice per cell and operand) where a product needs each cell's own weights
    for begin, end, step_cells, parents, sizes in plan.steps:
        n = end - begin
        h_prev = state.index_select(0, parents).split(sizes)
        c_prev = memory.index_select(0, parents)
        gates = gates_buffer[:n]
        for cell, h, g in zip(step_cells, h_prev, gates.split(sizes)):
            w_in_t, w_state_t, bias, _ = weights[cell.layer][cell.direction]
            if cell.layer == 0:
                torch.addmm(layer0_inputs[cell.direction][cell.level], h, w_state_t, out=g)
            else:
                torch.addmm(bias, _layer_input(plan, state, output, cell), w_in_t, out=g)
                g.addmm_(h, w_state_t)
        gates.sigmoid_()
        i_gate, f_gate, g_half, o_gate = gates.view(n, 4, c_size).unbind(1)
        new_memory = memory[begin:end]
        torch.addcmul(f_gate * c_prev - i_gate, i_gate, g_half, value=2.0, out=new_memory)
        if cell_clip:
            new_memory.clamp_(-cell_clip, cell_clip)
        hidden = torch.addcmul(-o_gate, o_gate, (new_memory * 2.0).sigmoid_(), value=2.0)
        new_state = state[begin:end]
        for cell, h, out in zip(step_cells, hidden.split(sizes), new_state.split(sizes)):
            torch.mm(h, weights[cell.layer][cell.direction][3], out=out)
        if proj_clip:
            new_state.clamp_(-proj_clip, proj_clip)
        for cell in step_cells:
            if 0 < cell.layer < lstm.num_layers - 1:  # the top layer's output is only pooled: see _pool
                rows = slice(begin + cell.offset, begin + cell.offset + cell.size)
                torch.add(state[rows], _layer_input(plan, state, output, cell), out=output[rows])
    return state, output


def _layer_input(plan: _Plan, state: torch.Tensor, output: torch.Tensor, cell: _Cell) -> torch.Tensor:
    """The input rows of a cell of layer >= 1: the previous layer's output at the same nodes."""
    start = plan.start[cell.layer - 1, cell.direction, cell.level]
    source = state if cell.layer == 1 else output
    return source[start: start + cell.size]


def encode_distinct(bilm: ElmoBiLm, sequences: Sequence[Sequence[str]], token_vectors, boundary: torch.Tensor,
                    mix_weights: torch.Tensor, gamma: torch.Tensor) -> torch.Tensor:
    """(len(sequences), 2, output_dim): [mean over tokens, leaf token] of the scalar-mixed ELMo vectors,
    as `NativeEncoder.encode` gives them. `token_vectors(words)` gives (len(words), dim) char-CNN vectors
    of distinct words, `boundary` (2, dim) those of <S> and </S>; every sequence has a token."""
    if not sequences:
        return boundary.new_zeros((0, 2, bilm.output_dim))
    vocab: Dict[str, int] = {}
    flat = [vocab.setdefault(t, len(vocab)) for seq in sequences for t in seq]
    lengths = np.fromiter(map(len, sequences), dtype=np.int64, count=len(sequences))
    ids = np.full((len(sequences), int(lengths.max())), -1, dtype=np.int64)
    ids[np.arange(ids.shape[1]) < lengths[:, None]] = flat  # row-major: each row's tokens in order
    # <S> and </S> are the last two rows of the token table: the roots of the two tries
    table = torch.cat([token_vectors(list(vocab)), boundary])
    tries = [_trie(ids, len(vocab)), _trie(_reversed_rows(ids, lengths), len(vocab) + 1)]
    n_layers = bilm.lstm.num_layers
    plan = _Plan(tries, n_layers)
    layer0 = []
    for trie, layers in zip(tries, [bilm.lstm.forward_layers, bilm.lstm.backward_layers]):
        w_in_t, _, bias, _ = _cell_weights(layers[0])
        # the input projection of each token (fewer rows than the nodes), then one row per node
        projected = torch.addmm(bias, table, w_in_t).index_select(0, torch.from_numpy(np.concatenate(trie.tokens)))
        layer0.append(projected.split([len(p) for p in trie.parents]))
    state, _ = _run(bilm, plan, layer0)
    halves = [_pool(trie, plan, d, table, state, lengths, mix_weights, gamma) for d, trie in enumerate(tries)]
    return torch.cat(halves, dim=-1)


def _pool(trie: _Trie, plan: _Plan, d: int, table: torch.Tensor, state: torch.Tensor,
          lengths: np.ndarray, mix_weights: torch.Tensor, gamma: torch.Tensor) -> torch.Tensor:
    """(S, 2, dim): one direction's half of [mean, leaf] of the mixed representation. Mixing is linear,
    so each trie node's mixed vector is computed once and the sequences' means gathered from them."""
    sizes = np.array([len(p) for p in trie.parents[1:]])  # the levels of tokens (not the boundary)
    first = np.concatenate([[0], np.cumsum(sizes)[:-1]])   # nodes numbered level by level from level 1
    level = np.repeat(np.arange(1, len(sizes) + 1), sizes)
    node = np.arange(int(sizes.sum()))
    mixed = mix_weights[0] * table.index_select(0, torch.from_numpy(np.concatenate(trie.tokens[1:])))
    layer_output = None
    for layer in range(len(mix_weights) - 1):
        begin = np.array([plan.start[layer, d, lv] for lv in range(1, len(sizes) + 1)])
        rows = torch.from_numpy(node - first[level - 1] + begin[level - 1])
        # a layer's output is its state plus its input (the layer below's output) above layer 0
        layer_output = state.index_select(0, rows) if layer == 0 else state.index_select(0, rows) + layer_output
        mixed = mixed + mix_weights[layer + 1] * layer_output
    mixed = gamma * mixed
    path = np.where(trie.path >= 0, trie.path + first, -1)
    offsets = torch.from_numpy(np.concatenate([[0], np.cumsum(lengths)[:-1]]))
    mean = F.embedding_bag(torch.from_numpy(path[path >= 0]), mixed, offsets, mode="mean")
    # the leaf token: the forward state after it (level 1), the backward state after the whole path
    leaf = path[:, 0] if d == 0 else path[np.arange(len(lengths)), lengths - 1]
    return torch.stack([mean, mixed.index_select(0, torch.from_numpy(leaf))], dim=1)
