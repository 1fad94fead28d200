"""The `numpy` backend: the model at inference in numpy alone, never importing torch.

The same arithmetic as the PyTorch path, read from the same files (elmo_weights.hdf5 through h5py,
head.safetensors through safetensors' numpy API): the character CNN as one table lookup per window
offset (elmo.CharacterEncoder._window_table), the biLM over the tries of a batch's distinct reTPS step
by step as trie._run plans it (trieplan.py), pooling and the scalar mix, and the head with its page
BiLSTM. A process that scores with it never loads torch (most of a worker's memory), and numpy's calls
on arrays of a few dozen rows cost less than torch's. Scores agree with the PyTorch path within float32
rounding (tests/test_model_numpy.py). At these sizes a call costs more than its arithmetic, and numpy's
calls on strided column blocks several times more than on contiguous ones, so the gates are gate-major
(each gate one contiguous block) and reductions over segments run position by position.

The biLM's gates are ordered (input, forget, output, candidate) with the first three's weights halved:
sigmoid(x) = (1 + tanh(x / 2)) / 2, so one tanh call covers all four gates (numpy has no sigmoid, and
halving is exact in floating point). The page BiLSTM, whose sequences are far longer, computes its
sigmoids as 1 / (1 + exp(-x)) instead (NumpyHead._context_weights).
"""
from __future__ import annotations

from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from . import base, files
from .cache import LRU, cache_budget, index_array
from .chars import BOS_IDS, EOS_IDS, MAX_WORD_LENGTH, N_CHARACTERS, PAD_CHAR, char_array
from .files import ModelError
from .trieplan import Plan, PoolRows, numbered, pool_rows, token_ids, tries_of

F32 = np.float32
# the character CNN's windows summed at a time (CharacterCnn._window_max): 512 KB of sums
WINDOW_BLOCK = 1024


_zeros = np.zeros(0, dtype=F32)


def _relu(x: np.ndarray) -> np.ndarray:
    """max(x, 0) in place, for a contiguous float32 x: against an array of zeros of x's shape (kept between
    calls, never written), since np.maximum with a scalar operand takes several times longer."""
    global _zeros
    if _zeros.size < x.size:
        _zeros = np.zeros(max(x.size, 2 * _zeros.size), dtype=F32)
    return np.maximum(x, _zeros[: x.size].reshape(x.shape), out=x)


def _gate_order(cell: int) -> np.ndarray:
    """PyTorch's gate rows (i, f, g, o) in the order this module uses them: i, f, o, g."""
    return np.concatenate([np.arange(0, 2 * cell), np.arange(3 * cell, 4 * cell), np.arange(2 * cell, 3 * cell)])


def _gate_scale(cell: int) -> np.ndarray:
    """1/2 for the three sigmoid gates, 1 for the candidate (see the module's docstring)."""
    return np.concatenate([np.full(3 * cell, 0.5, dtype=F32), np.ones(cell, dtype=F32)])


def _position_major(lengths: np.ndarray) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """For segments of `lengths` rows (each at least one) laid end to end: the order that sorts them
    longest first; for each position p, how many segments are longer than p (a prefix of that order);
    and, position by position, each such segment's number (in that order) and its p-th row."""
    order = np.argsort(-lengths, kind="stable")
    lengths_sorted = lengths[order]
    counts = (lengths_sorted[None, :] > np.arange(int(lengths_sorted[0]))[:, None]).sum(axis=1)
    position = np.repeat(np.arange(len(counts)), counts)
    segment = np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)
    starts = (np.cumsum(lengths) - lengths)[order]
    return order, counts, segment, starts[segment] + position


def _reduce_by_position(rows: np.ndarray, order: np.ndarray, counts: np.ndarray, ufunc) -> np.ndarray:
    """ufunc over each segment's rows, from `rows` laid out position-major (_position_major): one call
    per position, on contiguous blocks. ufunc.reduceat(axis=0) loops over segments and columns, which
    cost several times the arithmetic here."""
    n = len(order)
    out = rows[:n].copy()
    at = n
    for k in counts[1:].tolist():
        ufunc(out[:k], rows[at: at + k], out=out[:k])
        at += k
    result = np.empty_like(out)
    result[order] = out
    return result


class CharacterCnn:
    """Token vectors from character ids: the window table, highways, projection (elmo.CharacterEncoder)."""

    def __init__(self, options: dict, loaded: Dict[str, np.ndarray]) -> None:
        cnn = options["char_cnn"]
        self.relu = cnn["activation"] == "relu"
        filters = [tuple(f) for f in cnn["filters"]]
        self.max_width = max(w for w, _ in filters)
        embedding = np.zeros((N_CHARACTERS, cnn["embedding"]["dim"]), dtype=np.float64)  # row 0: "no token"
        embedding[1:] = loaded["char_embed"]
        # row k * (N_CHARACTERS + 1) + c: what character c adds to each filter at offset k of a window, the
        # biases in offset 0, and -inf for "past the last column"; in float64, rounded once
        columns = []
        for i, (width, n) in enumerate(filters):
            per_offset = np.einsum("cd,kdf->kcf", embedding, loaded[f"CNN/W_cnn_{i}"][0].astype(np.float64))
            per_offset[0] += loaded[f"CNN/b_cnn_{i}"]
            per_offset = np.concatenate([per_offset, np.full((width, 1, n), -np.inf)], axis=1)
            columns.append(np.pad(per_offset, ((0, self.max_width - width), (0, 0), (0, 0))))
        self.table = np.concatenate(columns, axis=-1).reshape(-1, sum(n for _, n in filters)).astype(F32)
        rows = N_CHARACTERS + 1
        # each filter's value on a window of padding only, summed as a window's rows are
        self.pad_window = self.table[PAD_CHAR + 1].copy()
        for k in range(1, self.max_width):
            self.pad_window += self.table[k * rows + PAD_CHAR + 1]
        # per filter column, the last start of a whole window in the 50 columns
        self.last_start = np.concatenate([np.full(n, MAX_WORD_LENGTH - w) for w, n in filters])
        # per highway: the transform's weight and bias, and the gate's, halved for its sigmoid as
        # (1 + tanh(x/2)) / 2 (exact); two products, so that each result is a contiguous array
        self.highways = []
        for k in range(cnn["n_highway"]):
            self.highways.append((np.ascontiguousarray(loaded[f"CNN_high_{k}/W_transform"]),
                                  loaded[f"CNN_high_{k}/b_transform"],
                                  np.ascontiguousarray(-loaded[f"CNN_high_{k}/W_carry"] * F32(0.5)),
                                  -loaded[f"CNN_high_{k}/b_carry"] * F32(0.5)))
        self.projection = (loaded["CNN_proj/W_proj"], loaded["CNN_proj/b_proj"])
        self.output_dim = self.projection[0].shape[1]

    def _window_max(self, ids: np.ndarray) -> np.ndarray:
        """(N, n_filters): each filter's maximum over the windows of ids (N, 50), as CharacterEncoder's
        lookup computes it, from the windows that start on a word's own ids (its markers and bytes) and
        the value of a window of padding only, which every word with such a window shares. A word of m ids
        has one for a filter of width w when m <= 50 - w; with the columns past the longest word cut
        (CharacterEncoder.forward), when the longest word leaves a filter's width of padding, every word
        has one. Fewer windows than the lookup over every column (most words have far fewer than 50 ids),
        the same maxima of the same sums.

        The windows are summed a block of positions at a time (WINDOW_BLOCK windows at most, or one
        position's), and each position's maxima taken as soon as its sums are there: a group of pages
        brings tens of thousands of windows, whose sums in one array of 128 columns were several MB
        each, streamed through memory by every add, where a block's stay in the core's cache."""
        width, rows, table = self.max_width, N_CHARACTERS + 1, self.table
        used = (ids != PAD_CHAR + 1).sum(axis=1)
        padded = np.pad(ids, ((0, 0), (0, width - 1)), constant_values=N_CHARACTERS)
        # each word's windows that start on its own ids, position-major: the flat index in `padded` of
        # each window's first id
        order, counts, _, at = _position_major(used)
        word, column = np.divmod(np.flatnonzero(np.arange(MAX_WORD_LENGTH) < used[:, None]), MAX_WORD_LENGTH)
        first = (word * padded.shape[1] + column).take(at)
        flat = padded.reshape(-1)
        counts = counts.tolist()
        ends = np.cumsum(counts).tolist()
        x = None
        position = begin = 0
        while position < len(counts):
            last = position + 1  # the block: positions [position, last)
            while last < len(counts) and ends[last] - begin <= WINDOW_BLOCK:
                last += 1
            starts = first[begin: ends[last - 1]]
            summed = table.take(flat.take(starts), axis=0)
            for k in range(1, width):
                summed += table.take(flat.take(starts + k) + k * rows, axis=0)
            at_row = 0
            for k in counts[position:last]:
                if x is None:  # position 0: every word has a window there
                    x = summed[:k].copy()
                else:
                    np.maximum(x[:k], summed[at_row: at_row + k], out=x[:k])
                at_row += k
            position, begin = last, ends[last - 1]
        result = np.empty_like(x)
        result[order] = x
        x = result
        if int(used.max()) + width < MAX_WORD_LENGTH:  # columns cut: every word has a window of padding
            return np.maximum(x, self.pad_window, out=x)
        has_pad = used[:, None] <= self.last_start[None, :]
        return np.where(has_pad, np.maximum(x, self.pad_window), x)

    def __call__(self, ids: np.ndarray) -> np.ndarray:
        """ids (N, 50) -> (N, projection_dim)."""
        if ids.shape[0] == 0:
            return np.zeros((0, self.output_dim), dtype=F32)
        x = self._window_max(ids)
        x = _relu(x) if self.relu else np.tanh(x, out=x)
        for w_transform, b_transform, w_gate, b_gate in self.highways:
            nonlinear = x @ w_transform
            nonlinear += b_transform
            _relu(nonlinear)
            gate = x @ w_gate
            gate += b_gate
            np.tanh(gate, out=gate)  # sigmoid, as (1 + tanh(x/2)) / 2
            gate += 1.0
            gate *= 0.5
            # gate * x + (1 - gate) * nonlinear, in place where it can be
            carried = gate * x
            np.subtract(1.0, gate, out=gate)
            gate *= nonlinear
            carried += gate
            x = carried
        weight, bias = self.projection
        out = x @ weight
        out += bias
        return out


def _gate_major(weight_t: np.ndarray) -> np.ndarray:
    """(in, 4 * cell) -> (4, in, cell): one matrix per gate, so that a product writes each gate's rows as a
    contiguous block (numpy's calls on strided column blocks cost several times more)."""
    n_in, gates = weight_t.shape
    return np.ascontiguousarray(weight_t.reshape(n_in, 4, gates // 4).transpose(1, 0, 2))


class _Cell:
    """One LSTM cell of the biLM, in this module's gate layout, gate-major (see _gate_major)."""

    def __init__(self, w_in: np.ndarray, w_state: np.ndarray, bias: np.ndarray, w_proj: np.ndarray) -> None:
        cell = w_proj.shape[1]
        order, scale = _gate_order(cell), _gate_scale(cell)
        w_in_t = (w_in[order] * scale[:, None]).T
        w_state_t = (w_state[order] * scale[:, None]).T
        self.w_in = _gate_major(w_in_t)
        self.w_state = _gate_major(w_state_t)
        self.stacked = _gate_major(np.concatenate([w_in_t, w_state_t]))
        self.bias = (bias[order] * scale).astype(F32).reshape(4, 1, cell)
        # halved: the step computes 2 * the output gate (see NumpyBiLm._run), exact in floating point
        self.w_proj_t = np.ascontiguousarray(w_proj.T * F32(0.5))
        self._bias_rows = np.empty((4, 0, cell), dtype=F32)

    def bias_rows(self, rows: int) -> np.ndarray:
        """(4, rows, cell): the bias repeated on every row, kept between calls (an add of two arrays of
        the same layout costs less than one that broadcasts a row)."""
        if self._bias_rows.shape[1] < rows:
            self._bias_rows = np.repeat(self.bias, max(rows, 2 * self._bias_rows.shape[1]), axis=1)
        return self._bias_rows[:, :rows]


class NumpyBiLm:
    """The character CNN and the biLM's cells; `encode` is trie.encode_distinct in numpy."""

    def __init__(self, options: dict, loaded: Dict[str, np.ndarray]) -> None:
        lstm = options["lstm"]
        self.cnn = CharacterCnn(options, loaded)
        self.n_layers, self.hidden, self.cell = lstm["n_layers"], lstm["projection_dim"], lstm["dim"]
        self.cell_clip, self.proj_clip = lstm.get("cell_clip"), lstm.get("proj_clip")
        self.cells = [[_Cell(*files.lstm_arrays(loaded, layer, d, self.hidden)) for d in (0, 1)]
                      for layer in range(self.n_layers)]
        self.output_dim = 2 * self.hidden
        self.boundary = self.cnn(np.array([BOS_IDS, EOS_IDS], dtype=np.int64))

    def encode(self, sequences: Sequence[Sequence[str]], token_vectors,
               mixes: Sequence[Tuple[Sequence[float], float]]) -> np.ndarray:
        """(len(sequences), len(mixes), 2, output_dim): [mean over tokens, leaf token] of the ELMo vectors
        mixed by each of `mixes` (a head's scalar-mix weights and gamma); `token_vectors(words)` gives the
        (len(words), dim) character-CNN vectors of distinct words. The biLM runs once for all mixes."""
        if not sequences:
            return np.zeros((0, len(mixes), 2, self.output_dim), dtype=F32)
        vocab, lengths, ids = token_ids(sequences)
        table = np.concatenate([token_vectors(vocab), self.boundary])
        tries = tries_of(ids, lengths, len(vocab))
        plan = Plan(tries, self.n_layers, table.shape[0])
        # each token's input projection for both directions (fewer rows than the nodes), then one row per node
        projected = np.concatenate([np.matmul(table, cell.w_in) + cell.bias for cell in self.cells[0]], axis=1)
        state = self._run(plan, projected.take(plan.tokens, axis=1))
        rows = pool_rows(tries, plan, lengths, self.n_layers)
        if len(mixes) == 1:
            return self._pool(rows, table, state, *mixes[0])[:, None]
        return self._pool_layers(rows, table, state, mixes)

    def _run(self, plan: Plan, layer0: np.ndarray) -> np.ndarray:
        """Every cell's projected state for every node (plan.rows rows), step by step as trie._run, with
        the gates gate-major: (4, rows, cell). `layer0` (4, nodes, cell): each layer-0 node's input
        projection, plus bias, in the order of plan.tokens."""
        rows, hid, cell, n_layers = plan.rows, self.hidden, self.cell, self.n_layers
        # the state rows, then (with more than two layers) the output rows: state + input, read by the next layer
        hs = np.empty((rows * (2 if n_layers > 2 else 1), hid), dtype=F32)
        hs[0] = 0
        memory = np.empty((rows, cell), dtype=F32)
        memory[0] = 0
        gates_buf = np.empty((4, plan.widest, cell), dtype=F32)
        gin_buf = np.empty((plan.widest_gather, hid), dtype=F32)
        prev_buf = np.empty((plan.widest, cell), dtype=F32)
        tmp_buf = np.empty((plan.widest, cell), dtype=F32)
        hidden_buf = np.empty((plan.widest, cell), dtype=F32)
        # arrays, not Python scalars, as operands: a scalar operand costs more than the operation here
        ones_buf = np.ones((3, plan.widest, cell), dtype=F32)
        halves_buf = np.full((plan.widest, cell), 0.5, dtype=F32)
        gather = np.split(plan.gather, np.cumsum(plan.g_per_step)[:-1])
        parents = np.split(plan.parent_rows, np.cumsum(plan.n_per_step)[:-1])
        cell_clip, proj_clip = self.cell_clip, self.proj_clip
        for (begin, end, step_cells, sizes, g_sizes), gidx, pidx in zip(plan.steps, gather, parents):
            n = end - begin
            # mode "clip" (the indices are in range): with `out`, the default "raise" copies through a buffer
            gin = hs.take(gidx, 0, gin_buf[: len(gidx)], "clip")
            prev = memory.take(pidx, 0, prev_buf[:n], "clip")
            gates = gates_buf[:, :n]
            at_gate = at_x = 0
            for (layer, d, at), size, g_size in zip(step_cells, sizes, g_sizes):
                w = self.cells[layer][d]
                out, x = gates[:, at_gate: at_gate + size], gin[at_x: at_x + g_size]
                if layer == 0:
                    np.matmul(x, w.w_state, out=out)
                    np.add(out, layer0[:, at: at + size], out=out)
                else:
                    np.matmul(x.reshape(size, 2 * hid), w.stacked, out=out)
                    np.add(out, w.bias_rows(size), out=out)
                at_gate += size
                at_x += g_size
            np.tanh(gates, out=gates)
            # 1 + tanh(x/2) = 2 * sigmoid(x): the halves are taken once on the memory's sum and, for the
            # output gate, in the projection's weights (_Cell), which gives the same numbers in fewer
            # operations (scaling by a power of two is exact)
            np.add(gates[:3], ones_buf[:, :n], out=gates[:3])
            mem, tmp, hidden = memory[begin:end], tmp_buf[:n], hidden_buf[:n]
            np.multiply(gates[1], prev, out=mem)
            np.multiply(gates[0], gates[3], out=tmp)
            mem += tmp
            np.multiply(mem, halves_buf[:n], out=mem)
            if cell_clip:
                np.clip(mem, -cell_clip, cell_clip, out=mem)
            np.tanh(mem, out=tmp)
            np.multiply(gates[2], tmp, out=hidden)
            new_state = hs[begin:end]
            at_gate = 0
            for (layer, d, _), size in zip(step_cells, sizes):
                np.matmul(hidden[at_gate: at_gate + size], self.cells[layer][d].w_proj_t,
                          out=new_state[at_gate: at_gate + size])
                at_gate += size
            if proj_clip:
                np.clip(new_state, -proj_clip, proj_clip, out=new_state)
            if n_layers > 2:
                at_row, at_x = begin, 0
                for (layer, _d, _), size, g_size in zip(step_cells, sizes, g_sizes):
                    if 0 < layer < n_layers - 1:
                        x = gin[at_x: at_x + g_size].reshape(size, 2, hid)[:, 0]
                        np.add(hs[at_row: at_row + size], x, out=hs[rows + at_row: rows + at_row + size])
                    at_row += size
                    at_x += g_size
        return hs[:rows]

    @staticmethod
    def _pool(rows: PoolRows, table: np.ndarray, state: np.ndarray, mix_weights: Sequence[float],
              gamma: float) -> np.ndarray:
        """(S, 2, output_dim): [mean, leaf] of the mixed representation, both directions (trie._pool)."""
        mixed = table.take(rows.tokens, axis=0)
        mixed *= F32(mix_weights[0])
        layer_output = None
        for layer, at in enumerate(rows.layers):
            # a layer's output is its state plus its input (the layer below's output) above layer 0
            out = state.take(at, axis=0)
            if layer_output is not None:
                out += layer_output
            layer_output = out
            mixed += out * F32(mix_weights[layer + 1])
        mixed *= F32(gamma)
        lengths = rows.lengths
        order, counts, _, at = _position_major(lengths)
        mean = _reduce_by_position(mixed.take(rows.paths.take(at), axis=0), order, counts, np.add)
        mean /= lengths[:, None].astype(F32)
        return _sequence_rows(mean, mixed.take(rows.leaves, axis=0))

    @staticmethod
    def _pool_layers(rows: PoolRows, table: np.ndarray, state: np.ndarray,
                     mixes: Sequence[Tuple[Sequence[float], float]]) -> np.ndarray:
        """(S, len(mixes), 2, output_dim): _pool for several scalar mixes. Pooling is linear, so each
        layer's output is pooled once (the layers side by side, one pass) and each mix is applied to the
        pooled rows, far fewer than the trie's."""
        n_rows, dim, n_layers = len(rows.tokens), table.shape[1], len(rows.layers) + 1
        layers = np.empty((n_rows, n_layers, dim), dtype=F32)
        layers[:, 0] = table.take(rows.tokens, axis=0)
        layer_output = None
        for layer, at in enumerate(rows.layers):
            out = state.take(at, axis=0)
            if layer_output is not None:
                out += layer_output
            layer_output = layers[:, layer + 1] = out
        flat = layers.reshape(n_rows, n_layers * dim)
        lengths = rows.lengths
        order, counts, _, at = _position_major(lengths)
        mean = _reduce_by_position(flat.take(rows.paths.take(at), axis=0), order, counts, np.add)
        mean /= lengths[:, None].astype(F32)
        pooled = np.stack([mean, flat.take(rows.leaves, axis=0)]).reshape(2, len(lengths), n_layers, dim)
        heads = []
        for mix_weights, gamma in mixes:
            mixed = np.tensordot(pooled, np.asarray(mix_weights, dtype=F32), axes=([2], [0]))
            mixed *= F32(gamma)
            heads.append(_sequence_rows(mixed[0], mixed[1]))
        return np.stack(heads, axis=1)


def _sequence_rows(mean: np.ndarray, leaf: np.ndarray) -> np.ndarray:
    """(S, 2, 2 * dim) from the pooled rows (2 * S, dim) of both directions (the S forward sequences, then
    the S backward): per sequence, [mean, leaf], each forward then backward."""
    n_seq, dim = len(mean) // 2, mean.shape[1]
    return np.stack([mean, leaf], axis=1).reshape(2, n_seq, 2, dim).transpose(1, 2, 0, 3).reshape(n_seq, 2, 2 * dim)


def _linear(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, relu: bool = False) -> np.ndarray:
    """x @ weight^T + bias (PyTorch's nn.Linear layout), optionally through relu, in place."""
    out = x @ weight.T
    out += bias
    return _relu(out) if relu else out


class NumpyHead:
    """head.Head at inference: node vector, page BiLSTM, ancestor-group pooling, output layers."""

    def __init__(self, config: dict, state: Dict[str, np.ndarray]) -> None:
        self.config = config
        self.state = state
        params = np.concatenate([state[f"scalar_mix.scalar_parameters.{k}"] for k in range(config["n_layers"])])
        e = np.exp(params - params.max())
        self.mix_weights = [float(w) for w in (e / e.sum()).astype(F32)]
        self.gamma = float(state["scalar_mix.gamma"][0])
        self.tree_levels = int(config.get("tree_levels", 0))
        if config["use_context"]:
            self._context_weights()

    def _context_weights(self) -> None:
        """The page BiLSTM's weights for `_context`, which keeps its vectors as columns: the input products
        per direction, and the state product of both directions as one matrix whose rows are gate-major
        (the input gates of both directions, then the forget gates, ...), so that each gate of a step is a
        contiguous block of rows (numpy's calls on strided views of a few dozen values cost several times
        more than on contiguous ones). The sigmoid gates' rows are negated: their sigmoid is computed as
        1 / (1 + exp(-x)), which keeps small values that 1 + tanh(x/2) loses in float32: over the thousands
        of steps of a long page those losses add up to more than float32 rounding of a score."""
        s = self.state
        hid = s["context.weight_hh_l0"].shape[1]
        order = _gate_order(hid)
        scale = np.concatenate([np.full(3 * hid, -1.0, dtype=F32), np.ones(hid, dtype=F32)])
        w_ih, bias, w_hh = [], [], np.zeros((4, 2, hid, 2, hid), dtype=F32)
        for d, suffix in enumerate(("", "_reverse")):
            w_ih.append((s[f"context.weight_ih_l0{suffix}"][order] * scale[:, None]).T)
            bias.append((s[f"context.bias_ih_l0{suffix}"] + s[f"context.bias_hh_l0{suffix}"])[order] * scale)
            w_hh[:, d, :, d, :] = (s[f"context.weight_hh_l0{suffix}"][order] * scale[:, None]).reshape(4, hid, hid)
        self.context_hidden = hid
        self.context_w_ih = [np.ascontiguousarray(w) for w in w_ih]
        self.context_bias = [b.astype(F32) for b in bias]
        self.context_w_hh = w_hh.reshape(8 * hid, 2 * hid)

    def _context(self, x: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        """(N, 2 * hidden): the page BiLSTM's outputs, forward and backward, as nn.LSTM gives them, for the
        rows of x (N, node_dim) of pages of `lengths` nodes, one after the other (see `contexts`)."""
        return contexts([self], [x], lengths, self.context_w_hh)[0]

    def probabilities(self, pages: Sequence[tuple]) -> List[np.ndarray]:
        """P(relevant) of each page's nodes, from (elmo, text, features, groups) per page: elmo (N, 2 *
        elmo_dim), text (N, 2 * token_dim), features (N, n_features), groups (>= tree_levels, N) as
        features.ancestor_groups gives them. The pages' rows go through each layer together."""
        x, lengths = self.node_rows(pages)
        if self.config["use_context"]:
            x = np.concatenate([x, self._context(x, lengths)], axis=1)
        return self.output(x, lengths, pages)

    def node_rows(self, pages: Sequence[tuple]) -> Tuple[np.ndarray, np.ndarray]:
        """The pages' node vectors (the node layer's output), one page after the other, and each page's rows."""
        s, config = self.state, self.config
        lengths = index_array([len(elmo) for elmo, *_ in pages])
        parts = [np.concatenate([p[0] for p in pages])]
        if config["use_text"]:
            parts.append(_linear(np.concatenate([p[1] for p in pages]), s["text.0.weight"], s["text.0.bias"],
                                 relu=True))
        if config["use_features"]:
            parts.append(np.concatenate([p[2] for p in pages]).astype(F32, copy=False))
        return _linear(np.concatenate(parts, axis=1), s["node.1.weight"], s["node.1.bias"], relu=True), lengths

    def output(self, x: np.ndarray, lengths: np.ndarray, pages: Sequence[tuple]) -> List[np.ndarray]:
        """P(relevant) of each page's nodes from their node vectors (with the page BiLSTM's outputs beside
        them when the head reads context): the ancestor-group pooling, then the output layers."""
        s = self.state
        ends = np.cumsum(lengths)[:-1]
        if self.tree_levels:
            if any(p[3] is None for p in pages):
                raise ValueError("this head pools over ancestor groups (tree_levels): pass groups")
            pooled = [tree_pool(rows, p[3][: self.tree_levels]) for rows, p in zip(np.split(x, ends), pages)]
            x = np.concatenate([x, np.concatenate(pooled)], axis=1)
        hidden = _linear(x, s["out.1.weight"], s["out.1.bias"], relu=True)
        logits = _linear(hidden, s["out.3.weight"], s["out.3.bias"])[:, 0]
        # sigmoid, without overflow for large |logits|
        return np.split((0.5 * (1.0 + np.tanh(0.5 * logits))).astype(F32), ends)


def fused_context_weights(heads: Sequence["NumpyHead"]) -> np.ndarray:
    """The state product of several heads' page BiLSTMs (one context size) stepping together: each head's
    two directions are two more directions, gate-major rows as NumpyHead._context_weights lays them out."""
    hid, n = heads[0].context_hidden, len(heads)
    w_hh = np.zeros((4, n, 2, hid, n, 2, hid), dtype=F32)
    for k, head in enumerate(heads):
        w_hh[:, k, :, :, k] = head.context_w_hh.reshape(4, 2, hid, 2, hid)
    return w_hh.reshape(8 * n * hid, 2 * n * hid)


def contexts(heads: Sequence["NumpyHead"], xs: Sequence[np.ndarray], lengths: np.ndarray,
             w_hh: np.ndarray) -> List[np.ndarray]:
    """Each head's page BiLSTM outputs (N, 2 * hidden), forward and backward, as nn.LSTM gives them, for its
    rows xs[k] (N, node_dim) of pages of `lengths` nodes, one after the other; `w_hh`: the one head's
    context_w_hh, or fused_context_weights of the heads (one context size). All pages, both directions and
    all heads step together: step t runs each page's node t forward and its node n - 1 - t backward, so
    a second head adds arithmetic but not a second loop of calls. Vectors are columns (unit, page), the pages
    longest first, and the gates gate-major rows (see NumpyHead._context_weights); once a page has ended,
    the steps after it run on the pages still going, so the work and the memory are those of the pages'
    nodes, the longest page sets only the steps."""
    hid, batch, n_dirs = heads[0].context_hidden, len(lengths), 2 * len(heads)
    order = np.argsort(-lengths, kind="stable")  # column c holds page order[c]
    sorted_lengths = lengths[order]
    first = (np.cumsum(lengths) - lengths)[order]  # each column's page's first row in x
    inputs = [(x @ w + bias).reshape(-1, 4, hid)
              for head, x in zip(heads, xs) for w, bias in zip(head.context_w_ih, head.context_bias)]
    outs = [np.empty((len(x), 2 * hid), dtype=F32) for x in xs]
    state = np.zeros((n_dirs * hid, batch), dtype=F32)
    memory = np.zeros((n_dirs * hid, batch), dtype=F32)
    start = 0
    for active in range(batch, 0, -1):  # the steps during which `active` pages are still going
        end = int(sorted_lengths[active - 1])
        if end <= start:
            continue
        steps = np.arange(start, end)[:, None]
        forward = first[None, :active] + steps                                  # (steps, active) rows of x
        backward = first[None, :active] + sorted_lengths[None, :active] - 1 - steps
        pre = np.empty((end - start, 4, n_dirs, hid, active), dtype=F32)
        for d, rows in enumerate(inputs):
            pre[:, :, d] = rows[backward if d % 2 else forward].transpose(0, 2, 3, 1)
        hidden, memory[:, :active] = _steps(w_hh, pre.reshape(end - start, 4 * n_dirs * hid, active),
                                            state[:, :active], memory[:, :active])
        state[:, :active] = hidden[-1]
        for k, out in enumerate(outs):
            out[forward, :hid] = hidden[:, 2 * k * hid: (2 * k + 1) * hid].transpose(0, 2, 1)
            out[backward, hid:] = hidden[:, (2 * k + 1) * hid: (2 * k + 2) * hid].transpose(0, 2, 1)
        start = end
    return outs


def _steps(w_hh: np.ndarray, pre: np.ndarray, state: np.ndarray, memory: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """The LSTM steps of pre (steps, 4 * width, pages) from `state` and `memory` (width, pages), `width`
    the units of every direction (and head) stepping together, w_hh (4 * width, width) their state
    product: each step's hidden states (steps, width, pages) and the last memory. Every array contiguous."""
    steps, rows, pages = pre.shape
    width = rows // 4
    outputs = np.empty((steps + 1, width, pages), dtype=F32)
    outputs[0] = state
    # the gates (input, forget, output, candidate), then the memory: [input; forget] times
    # [candidate; memory] is one call, and its two halves summed the new memory
    buf = np.empty((5 * width, pages), dtype=F32)
    gates, sig, out_gate, cand, mem = (buf[: 4 * width], buf[: 3 * width], buf[2 * width: 3 * width],
                                       buf[3 * width: 4 * width], buf[4 * width:])
    in_forget, cand_mem = buf[: 2 * width], buf[3 * width:]
    mem[...] = memory
    products = np.empty((2 * width, pages), dtype=F32)
    in_cand, forget_mem = products[:width], products[width:]
    tmp = np.empty((width, pages), dtype=F32)
    ones = np.ones_like(sig)  # an array: a Python scalar operand costs more than the operation here
    matmul, multiply, add, tanh, exp, divide = np.matmul, np.multiply, np.add, np.tanh, np.exp, np.divide
    with np.errstate(over="ignore"):  # exp(-x) = inf for x < -88: the sigmoid is 0, as it should be
        # an LSTM step, written out (a few hundred steps a page, 10 calls each; `out` positional,
        # which numpy parses faster than a keyword)
        for t in range(steps):
            matmul(w_hh, outputs[t], gates)
            add(gates, pre[t], gates)
            exp(sig, sig)
            add(sig, ones, sig)
            divide(ones, sig, sig)
            tanh(cand, cand)
            multiply(in_forget, cand_mem, products)
            add(in_cand, forget_mem, mem)
            tanh(mem, tmp)
            multiply(out_gate, tmp, outputs[t + 1])
    return outputs[1:], mem.copy()


def tree_pool(x: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """head.tree_pool for one page: x (N, D), groups (L, N) (-1: in no group) -> (N, L * D + L): per
    level the mean of x over the node's group, then per level log(1 + group size) / 6."""
    n, dim = x.shape
    levels = groups.shape[0]
    valid = (groups >= 0).reshape(-1).astype(F32)
    g = np.maximum(groups, 0)
    width = int(g.max()) + 1 if g.size else 1
    ids = (np.arange(levels)[:, None] * width + g).reshape(-1)
    rows = np.broadcast_to(x, (levels, n, dim)).reshape(-1, dim) * valid[:, None]
    sums = np.zeros((levels * width, dim), dtype=F32)
    np.add.at(sums, ids, rows)
    counts = np.zeros(levels * width, dtype=F32)
    np.add.at(counts, ids, valid)
    means = (sums / np.maximum(counts, 1.0)[:, None]).take(ids, axis=0).reshape(levels, n, dim)
    sizes = (np.log1p(counts.take(ids)) / F32(6.0)).reshape(levels, n)
    return np.concatenate([means.transpose(1, 0, 2).reshape(n, levels * dim), sizes.T], axis=1).astype(F32)


class NumpyScorer(base.ScorerBase):
    """Scores pages with NumpyBiLm and a NumpyHead per head of the card; caches as the PyTorch scorer's
    (base.ScorerBase). `head`: the first head (the card's own)."""

    backend = "numpy"

    def __init__(self, directory: Path, card: dict, bilm: NumpyBiLm, heads: Sequence[NumpyHead],
                 batch_size: int = 512, token_cache: int = 200_000, cache_mb: Optional[float] = None) -> None:
        super().__init__(directory, card, cache_mb=cache_mb)
        self.bilm = bilm
        self.head_models = list(heads)
        self.head = self.head_models[0]
        # several heads whose page BiLSTMs have one size step together (contexts): their joint state product
        with_context = [h for h in self.head_models if h.config["use_context"]]
        fusable = len(self.head_models) > 1 and len(with_context) == len(self.head_models) and len(
            {h.context_hidden for h in with_context}) == 1
        self._fused_w_hh = fused_context_weights(self.head_models) if fusable else None
        self.batch_size = batch_size
        self.tokens = LRU(token_cache, cache_budget(cache_mb, "tokens"))

    def _token_cache(self) -> LRU:
        return self.tokens

    def token_vectors(self, words: Sequence[str]) -> np.ndarray:
        """(len(words), proj) character-CNN vectors; `words` distinct."""
        return self.tokens.get_many(words, lambda missing: self.bilm.cnn(char_array(missing)))

    def _sequence_vectors_of(self, sequences: List[List[str]]) -> np.ndarray:
        mixes = [(head.mix_weights, head.gamma) for head in self.head_models]
        parts = [self.bilm.encode(sequences[start: start + self.batch_size], self.token_vectors, mixes)
                 for start in range(0, len(sequences), self.batch_size)]
        out = parts[0] if len(parts) == 1 else np.concatenate(parts)
        return out.reshape(len(out), -1)

    def _pool_words(self, word_lists: List[List[str]]) -> np.ndarray:
        """(len(word_lists), 2 * dim): [mean, max] of each list's character-CNN vectors (lists non-empty)."""
        vocab, lengths, flat = numbered(word_lists)
        order, counts, _, at = _position_major(lengths)
        rows = self.token_vectors(vocab).take(flat.take(at), axis=0)
        mean = _reduce_by_position(rows, order, counts, np.add)
        mean /= lengths[:, None].astype(F32)
        return np.concatenate([mean, _reduce_by_position(rows, order, counts, np.maximum)], axis=1)

    def _head_probabilities(self, index: int, pages: List[tuple]) -> List[np.ndarray]:
        return self.head_models[index].probabilities(pages)

    def _heads_probabilities(self, per_head: List[List[tuple]]) -> List[List[np.ndarray]]:
        if self._fused_w_hh is None:
            return super()._heads_probabilities(per_head)
        heads = self.head_models
        rows = [head.node_rows(pages) for head, pages in zip(heads, per_head)]
        lengths = rows[0][1]
        outs = contexts(heads, [x for x, _ in rows], lengths, self._fused_w_hh)
        return [head.output(np.concatenate([x, out], axis=1), lengths, pages)
                for head, (x, _), out, pages in zip(heads, rows, outs, per_head)]


def head_shapes(config: dict) -> Dict[str, tuple]:
    """The tensors head.Head(config) holds, by name, and their shapes (its state_dict without torch)."""
    shapes: Dict[str, tuple] = {f"scalar_mix.scalar_parameters.{k}": (1,) for k in range(config["n_layers"])}
    shapes["scalar_mix.gamma"] = (1,)
    in_dim = 2 * config["elmo_dim"]
    if config["use_text"]:
        shapes.update({"text.0.weight": (config["text_dim"], 2 * config["token_dim"]),
                       "text.0.bias": (config["text_dim"],)})
        in_dim += config["text_dim"]
    if config["use_features"]:
        in_dim += config["n_features"]
    node = config["node_dim"]
    shapes.update({"node.1.weight": (node, in_dim), "node.1.bias": (node,)})
    out_dim = node
    if config["use_context"]:
        ctx = config["context_dim"]
        for suffix in ("", "_reverse"):
            shapes.update({f"context.weight_ih_l0{suffix}": (4 * ctx, node),
                           f"context.weight_hh_l0{suffix}": (4 * ctx, ctx),
                           f"context.bias_ih_l0{suffix}": (4 * ctx,), f"context.bias_hh_l0{suffix}": (4 * ctx,)})
        out_dim += 2 * ctx
    out_dim += int(config.get("tree_levels", 0)) * (out_dim + 1)
    shapes.update({"out.1.weight": (node, out_dim), "out.1.bias": (node,), "out.3.weight": (1, node),
                   "out.3.bias": (1,)})
    return shapes


def _check_options(path: Path, options: dict) -> None:
    """What the PyTorch modules refuse when they are built (scorer.build_bilm), refused here alike."""
    activation = options["char_cnn"].get("activation")
    if activation not in ("relu", "tanh"):
        raise ModelError(f"{path}: ELMo options do not describe a model (ValueError: unknown char_cnn "
                         f"activation {activation!r})")
    if not options["lstm"].get("use_skip_connections"):
        raise ModelError(f"{path}: ELMo options do not describe a model (ValueError: only biLMs with residual "
                         f"(skip) connections are supported, as in AllenNLP)")


def load_head_arrays(directory: Path, config: dict, name: str = files.HEAD) -> Dict[str, np.ndarray]:
    """A head file (`name`, head.safetensors by default), holding exactly the tensors `config` describes."""
    path = Path(directory) / name
    expected = head_shapes(config)
    state = files.read_head_arrays(path)
    missing, unexpected = sorted(set(expected) - set(state)), sorted(set(state) - set(expected))
    if missing or unexpected:
        raise ModelError(f"{path}: tensors do not match the card's head configuration (missing {missing}, "
                         f"unexpected {unexpected})")
    for key, shape in expected.items():
        if state[key].shape != shape:
            raise ModelError(f"{path}: tensors do not match the card's head configuration ({key} has shape "
                             f"{state[key].shape}, the card implies {shape})")
    return {key: array.astype(F32, copy=False) for key, array in state.items()}


def load_numpy_model(directory: Path, verify: bool = True, cache_mb: Optional[float] = None) -> NumpyScorer:
    """base.load_model for the numpy backend (`cache_mb` checked there)."""
    card, options = base.read_model_files(directory, verify)
    heads = [NumpyHead(head.config, load_head_arrays(directory, head.config, head.file))
             for head in files.head_entries(card, Path(directory) / files.CARD)]
    _check_options(directory / files.OPTIONS, options)
    loaded = files.read_elmo_arrays(directory / files.WEIGHTS, files.elmo_shapes_of_options(options))
    return NumpyScorer(directory, card, NumpyBiLm(options, loaded), heads, cache_mb=cache_mb)
