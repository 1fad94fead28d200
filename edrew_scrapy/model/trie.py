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

from typing import Sequence, Tuple

import numpy as np
import torch
from torch.nn import functional as F

from .elmo import ElmoBiLm, LstmCellWithProjection
from .trieplan import Plan, PoolRows, pool_rows, token_ids, tries_of


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


def _run(bilm: ElmoBiLm, plan: Plan, layer0: torch.Tensor) -> torch.Tensor:
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
    gather = torch.from_numpy(plan.gather).split(plan.g_per_step)
    parents = torch.from_numpy(plan.parent_rows).split(plan.n_per_step)
    for (begin, end, step_cells, sizes, g_sizes), gidx, pidx in zip(plan.steps, gather, parents):
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
    return encode_distinct_mixes(bilm, sequences, token_vectors, boundary, [(mix_weights, gamma)])[:, 0]


def encode_distinct_mixes(bilm: ElmoBiLm, sequences: Sequence[Sequence[str]], token_vectors,
                          boundary: torch.Tensor, mixes: Sequence[Tuple[torch.Tensor, torch.Tensor]]) -> torch.Tensor:
    """(len(sequences), len(mixes), 2, output_dim): encode_distinct for each of `mixes` (a head's scalar-mix
    weights and gamma), the biLM run once for all of them."""
    if not sequences:
        return boundary.new_zeros((0, len(mixes), 2, bilm.output_dim))
    vocab, lengths, ids = token_ids(sequences)
    table = torch.cat([token_vectors(vocab), boundary])
    tries = tries_of(ids, lengths, len(vocab))
    n_layers = bilm.lstm.num_layers
    plan = Plan(tries, n_layers, table.shape[0])
    # each token's input projection for both directions (fewer rows than the nodes), then one row per node
    projected = torch.cat([torch.addmm(_cell_weights(layers[0])[2], table, _cell_weights(layers[0])[0])
                           for layers in (bilm.lstm.forward_layers, bilm.lstm.backward_layers)])
    layer0 = projected.index_select(0, torch.from_numpy(plan.tokens))
    state = _run(bilm, plan, layer0)
    rows = pool_rows(tries, plan, lengths, n_layers)
    if len(mixes) == 1:
        return _pool(rows, table, state, *mixes[0]).unsqueeze(1)
    return _pool_layers(rows, table, state, mixes)


def _pool(rows: PoolRows, table: torch.Tensor, state: torch.Tensor, mix_weights: torch.Tensor,
          gamma: torch.Tensor) -> torch.Tensor:
    """(S, 2, output_dim): [mean, leaf] of the mixed representation, both directions. Mixing is linear,
    so each trie node's mixed vector is computed once and the sequences' means gathered from them."""
    weights = mix_weights.tolist()
    mixed = table.index_select(0, torch.from_numpy(rows.tokens))
    mixed.mul_(weights[0])
    layer_output = None
    for layer, at in enumerate(rows.layers):
        # a layer's output is its state plus its input (the layer below's output) above layer 0
        out = state.index_select(0, torch.from_numpy(at))
        layer_output = out if layer_output is None else out.add_(layer_output)
        mixed.add_(layer_output, alpha=weights[layer + 1])
    mixed.mul_(gamma)
    both = rows.lengths
    offsets = torch.from_numpy(np.cumsum(both) - both)
    mean = F.embedding_bag(torch.from_numpy(rows.paths), mixed, offsets, mode="mean")
    return _sequence_rows(mean, mixed.index_select(0, torch.from_numpy(rows.leaves)))


def _pool_layers(rows: PoolRows, table: torch.Tensor, state: torch.Tensor,
                 mixes: Sequence[Tuple[torch.Tensor, torch.Tensor]]) -> torch.Tensor:
    """(S, len(mixes), 2, output_dim): _pool for several scalar mixes. Pooling is linear, so each layer's
    output is pooled once (the layers side by side, one pass) and each mix applied to the pooled rows."""
    layers = [table.index_select(0, torch.from_numpy(rows.tokens))]
    for at in rows.layers:
        out = state.index_select(0, torch.from_numpy(at))
        layers.append(out if len(layers) == 1 else out.add_(layers[-1]))
    flat = torch.cat(layers, dim=1)
    both = rows.lengths
    offsets = torch.from_numpy(np.cumsum(both) - both)
    mean = F.embedding_bag(torch.from_numpy(rows.paths), flat, offsets, mode="mean")
    leaf = flat.index_select(0, torch.from_numpy(rows.leaves))
    pooled = torch.stack([mean, leaf]).view(2, len(both), len(layers), -1)
    heads = []
    for mix_weights, gamma in mixes:
        mixed = torch.tensordot(pooled, mix_weights.to(pooled.dtype), dims=([2], [0])) * gamma
        heads.append(_sequence_rows(mixed[0], mixed[1]))
    return torch.stack(heads, dim=1)


def _sequence_rows(mean: torch.Tensor, leaf: torch.Tensor) -> torch.Tensor:
    """(S, 2, 2 * dim) from the pooled rows (2 * S, dim) of both directions (the S forward sequences, then
    the S backward): per sequence, [mean, leaf], each forward then backward."""
    n_seq, dim = len(mean) // 2, mean.shape[1]
    return torch.stack([mean, leaf], dim=1).view(2, n_seq, 2, dim).permute(1, 2, 0, 3).reshape(n_seq, 2, 2 * dim)
