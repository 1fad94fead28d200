"""ELMo over reTPS tokens, in AllenNLP's module and parameter layout (native PyTorch, no AllenNLP).

The layout follows AllenNLP 2.10.1 (`allennlp.modules.elmo._ElmoCharacterEncoder`, `_ElmoBiLm`,
`elmo_lstm.ElmoLstm`, `lstm_cell_with_projection.LstmCellWithProjection`, `scalar_mix.ScalarMix`) so that
`files.py` can write weights that `allennlp.modules.elmo.Elmo` loads and both compute the same numbers.
Differences are in speed only: the recurrence runs masked over the padded batch instead of shrinking it,
and the character convolutions skip windows made only of padding (their maximum is added back exactly).
"""
from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

import torch
from torch import nn
from torch.nn import functional as F

from .chars import (  # noqa: F401 - the character ids' names stay importable from here
    BOS_CHAR,
    BOS_IDS,
    BOW_CHAR,
    EOS_CHAR,
    EOS_IDS,
    EOW_CHAR,
    MAX_WORD_LENGTH,
    N_CHARACTERS,
    PAD_CHAR,
    char_array,
    char_ids,
)


def char_tensor(words: Sequence[str]) -> torch.Tensor:
    """(len(words), 50) long tensor of character ids: `char_ids` of each word (chars.char_array)."""
    return torch.from_numpy(char_array(words))


def wide_options(width: int) -> dict:
    """default_options with every width (character-CNN filters, projection, LSTM cell) times `width`:
    an ablation of the biLM's capacity (docs/evaluation.md, "A wider biLM"); 1 is the shipped models'."""
    base = default_options()
    filters = [(size, count * width) for size, count in base["char_cnn"]["filters"]]
    return default_options(filters=filters, projection_dim=base["lstm"]["projection_dim"] * width,
                           cell_dim=base["lstm"]["dim"] * width)


def default_options(
    char_dim: int = 16,
    filters: Sequence[Tuple[int, int]] = ((1, 16), (2, 16), (3, 32), (4, 32), (5, 32)),
    n_highway: int = 1,
    projection_dim: int = 32,
    cell_dim: int = 64,
    n_layers: int = 2,
    cell_clip: float = 3.0,
    proj_clip: float = 3.0,
) -> dict:
    """An options dict in the JSON layout of AllenNLP's ELMo options files."""
    return {
        "lstm": {
            "use_skip_connections": True,
            "projection_dim": projection_dim,
            "cell_clip": cell_clip,
            "proj_clip": proj_clip,
            "dim": cell_dim,
            "n_layers": n_layers,
        },
        "char_cnn": {
            "activation": "relu",
            "filters": [list(f) for f in filters],
            "n_highway": n_highway,
            "embedding": {"dim": char_dim},
            "n_characters": N_CHARACTERS,
            "max_characters_per_token": MAX_WORD_LENGTH,
        },
    }


class Highway(nn.Module):
    """AllenNLP's Highway: out = g*x + (1-g)*relu(Wx), with g from the second half of one Linear."""

    def __init__(self, dim: int, n_layers: int) -> None:
        super().__init__()
        self._layers = nn.ModuleList([nn.Linear(dim, 2 * dim) for _ in range(n_layers)])
        for layer in self._layers:
            layer.bias.data[dim:].fill_(1.0)  # start by carrying the input through

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self._layers:
            nonlinear, gate = layer(x).chunk(2, dim=-1)
            gate = torch.sigmoid(gate)
            x = gate * x + (1 - gate) * F.relu(nonlinear)
        return x


class CharacterEncoder(nn.Module):
    """Context-insensitive token vectors from 50 character ids (AllenNLP `_ElmoCharacterEncoder`)."""

    def __init__(self, options: dict) -> None:
        super().__init__()
        cnn = options["char_cnn"]
        if cnn["activation"] not in ("relu", "tanh"):
            raise ValueError(f"unknown char_cnn activation {cnn['activation']!r}")
        self.activation = torch.relu if cnn["activation"] == "relu" else torch.tanh
        char_dim = cnn["embedding"]["dim"]
        self.filters = [tuple(f) for f in cnn["filters"]]
        self.max_width = max(w for w, _ in self.filters)
        n_filters = sum(n for _, n in self.filters)
        self.output_dim = options["lstm"]["projection_dim"]
        # Row 0 stays zero: it is the id of "no token" (AllenNLP loads it as zeros too). The weight is
        # filled here as nn.Embedding would (the same draws), except on the meta device, where load_model
        # builds a biLM to check a file's sizes: a random fill there imports torch._dynamo and sympy
        # (74 MB of RSS and 0.8 s in every process that loads a model).
        weight = torch.empty(N_CHARACTERS, char_dim)
        with torch.no_grad():
            if not weight.is_meta:
                nn.init.normal_(weight)
            weight[0].zero_()
        self.char_embedding = nn.Embedding(N_CHARACTERS, char_dim, padding_idx=0, _weight=weight)
        self.convolutions = nn.ModuleList(nn.Conv1d(char_dim, n, kernel_size=w) for w, n in self.filters)
        self.highways = Highway(n_filters, cnn["n_highway"])
        self.projection = nn.Linear(n_filters, self.output_dim)

    def _pad_window_max(self) -> List[torch.Tensor]:
        """Per filter, the convolution of a window made only of padding characters."""
        pad = self.char_embedding.weight[PAD_CHAR + 1]
        out = []
        for (width, _), conv in zip(self.filters, self.convolutions):
            window = pad.unsqueeze(-1).expand(-1, width)  # (char_dim, width)
            out.append((conv.weight * window.unsqueeze(0)).sum(dim=(1, 2)) + conv.bias)
        return out

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        """ids (N, 50) -> (N, projection_dim)."""
        ids = ids.to(self.char_embedding.weight.device)  # a no-op on CPU; training may run on a GPU
        if ids.shape[0] == 0:
            return ids.new_zeros((0, self.output_dim), dtype=torch.float32)
        # Every column past the longest word (plus its markers) is padding. Windows of padding only all
        # give the same value, so when at least one such window exists they are replaced by that value,
        # which leaves the maximum (and so the result) exactly as with all 50 columns.
        used = int((ids != PAD_CHAR + 1).sum(dim=1).max())
        cut = used + self.max_width
        if cut < MAX_WORD_LENGTH:
            ids = ids[:, :cut]
        if not torch.is_grad_enabled():  # the lookup's windows include those of padding only
            return self.projection(self.highways(self.activation(self._window_max_lookup(ids))))
        pad_values = self._pad_window_max() if cut < MAX_WORD_LENGTH else None
        emb = self.char_embedding(ids).transpose(1, 2)  # (N, char_dim, L)
        convs = []
        for i, conv in enumerate(self.convolutions):
            value, _ = conv(emb).max(dim=-1)
            if pad_values is not None:
                value = torch.maximum(value, pad_values[i].unsqueeze(0))
            convs.append(self.activation(value))
        return self.projection(self.highways(torch.cat(convs, dim=-1)))

    def _window_table(self) -> torch.Tensor:
        """(max_width * (N_CHARACTERS + 1), n_filters): row k * (N_CHARACTERS + 1) + c holds what
        character c adds to every filter when it sits at offset k of a window (zero past the filter's
        width; the biases are in offset 0). The extra character N_CHARACTERS stands for "past the last
        column": -inf at the offsets a filter reads, so windows that run past the end never win a max.

        A convolution over embedded characters is the sum over a window's offsets of such rows: with
        this table the five convolutions become one lookup. Computed once per version of the weights,
        in float64 so that the table adds no rounding of its own."""
        params = [self.char_embedding.weight] + [p for conv in self.convolutions for p in (conv.weight, conv.bias)]
        key = tuple((p.data_ptr(), p._version) for p in params)
        if getattr(self, "_table_key", None) != key:
            weight = self.char_embedding.weight.double()
            columns = []
            for (width, n), conv in zip(self.filters, self.convolutions):
                per_offset = torch.einsum("cd,fdk->kcf", weight, conv.weight.double())  # (width, chars, n)
                per_offset[0] += conv.bias.double()
                past_end = per_offset.new_full((width, 1, n), float("-inf"))
                per_offset = torch.cat([per_offset, past_end], dim=1)
                columns.append(F.pad(per_offset, (0, 0, 0, 0, 0, self.max_width - width)))
            self._table = torch.cat(columns, dim=-1).reshape(-1, sum(n for _, n in self.filters)).float()
            self._table_key = key
        return self._table

    def _window_max_lookup(self, ids: torch.Tensor) -> torch.Tensor:
        """(N, n_filters): each filter's maximum over the windows that fit in `ids` (N, L), as the
        convolutions compute it, by summing table rows (one embedding_bag call for every filter).
        With the columns cut (see forward), windows of padding only are still among them."""
        n, length = ids.shape
        width, rows = self.max_width, N_CHARACTERS + 1
        padded = F.pad(ids, (0, width - 1), value=N_CHARACTERS)
        windows = padded.unfold(1, width, 1) + torch.arange(width, device=ids.device) * rows
        summed = F.embedding_bag(windows.reshape(-1, width), self._window_table(), mode="sum")
        return summed.view(n, length, -1).amax(dim=1)


class LstmCellWithProjection(nn.Module):
    """One direction of one layer: LSTM with a projected state and clipped cell/state."""

    def __init__(self, input_size: int, hidden_size: int, cell_size: int, go_forward: bool,
                 memory_cell_clip_value: Optional[float], state_projection_clip_value: Optional[float]) -> None:
        super().__init__()
        self.input_size, self.hidden_size, self.cell_size = input_size, hidden_size, cell_size
        self.go_forward = go_forward
        self.memory_cell_clip_value = memory_cell_clip_value
        self.state_projection_clip_value = state_projection_clip_value
        self.input_linearity = nn.Linear(input_size, 4 * cell_size, bias=False)
        self.state_linearity = nn.Linear(hidden_size, 4 * cell_size, bias=True)
        self.state_projection = nn.Linear(cell_size, hidden_size, bias=False)
        with torch.no_grad():
            self.state_linearity.bias.zero_()
            self.state_linearity.bias[cell_size: 2 * cell_size].fill_(1.0)  # forget gate open at start

    def forward(self, inputs: torch.Tensor, mask: torch.Tensor, lengths: Optional[List[int]] = None) -> torch.Tensor:
        """inputs (B, T, in), mask (B, T) bool, padding at the end -> outputs (B, T, hidden), 0 at padding.

        `lengths` sorted in descending order (inference only) selects the fast path.
        """
        if lengths is not None and not torch.is_grad_enabled():
            return self._forward_sorted(inputs, lengths)
        return self._forward_masked(inputs, mask)

    def _forward_masked(self, inputs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        # Each row starts from a zero state at its first (forward) or last (backward) real token: padded
        # steps keep the state, and in the backward direction they come first, while it is still zero.
        batch, steps, _ = inputs.shape
        c_size = self.cell_size
        projected_inputs = self.input_linearity(inputs)  # one matmul for all steps
        state = inputs.new_zeros(batch, self.hidden_size)
        memory = inputs.new_zeros(batch, c_size)
        outputs = []
        order = range(steps) if self.go_forward else range(steps - 1, -1, -1)
        mask_f = mask.unsqueeze(-1)
        cell_clip, proj_clip = self.memory_cell_clip_value, self.state_projection_clip_value
        for t in order:
            gates = projected_inputs[:, t] + self.state_linearity(state)
            input_gate = torch.sigmoid(gates[:, :c_size])
            forget_gate = torch.sigmoid(gates[:, c_size: 2 * c_size])
            memory_init = torch.tanh(gates[:, 2 * c_size: 3 * c_size])
            output_gate = torch.sigmoid(gates[:, 3 * c_size:])
            new_memory = input_gate * memory_init + forget_gate * memory
            if cell_clip:
                new_memory = torch.clamp(new_memory, -cell_clip, cell_clip)
            new_state = self.state_projection(output_gate * torch.tanh(new_memory))
            if proj_clip:
                new_state = torch.clamp(new_state, -proj_clip, proj_clip)
            m = mask_f[:, t]
            memory = torch.where(m, new_memory, memory)
            state = torch.where(m, new_state, state)
            outputs.append(new_state * m)
        if not self.go_forward:
            outputs.reverse()
        return torch.stack(outputs, dim=1)

    def _forward_sorted(self, inputs: torch.Tensor, lengths: List[int]) -> torch.Tensor:
        # As AllenNLP does, only the rows still inside their sequence are computed at each step (a prefix,
        # since rows are sorted by length). tanh(x) is computed as 2*sigmoid(2x)-1, which is the same
        # function and much faster on CPU here; the candidate gate's rows are pre-scaled by 2 so that one
        # sigmoid call covers all four gates.
        batch, steps, _ = inputs.shape
        c = self.cell_size
        scale = inputs.new_ones(4 * c, 1)
        scale[2 * c: 3 * c] = 2.0
        w_in = self.input_linearity.weight * scale
        w_state_t = (self.state_linearity.weight * scale).t()
        bias = self.state_linearity.bias * scale.squeeze(1)
        w_proj_t = self.state_projection.weight.t()
        projected = torch.addmm(bias, inputs.reshape(-1, inputs.shape[-1]), w_in.t()).view(batch, steps, 4 * c)
        state = inputs.new_zeros(batch, self.hidden_size)
        memory = inputs.new_zeros(batch, c)
        output = inputs.new_zeros(batch, steps, self.hidden_size)
        active, k = [0] * steps, batch
        for t in range(steps):  # rows with length > t: a prefix, since lengths are sorted descending
            while k and lengths[k - 1] <= t:
                k -= 1
            active[t] = k
        cell_clip, proj_clip = self.memory_cell_clip_value, self.state_projection_clip_value
        order = range(steps) if self.go_forward else range(steps - 1, -1, -1)
        for t in order:
            k = active[t]
            if k == 0:
                continue
            gates = torch.addmm(projected[:k, t], state[:k], w_state_t).sigmoid_()
            i_gate, f_gate, g_half, o_gate = gates.view(k, 4, c).unbind(1)
            # i*(2g-1) + f*m  and  o*(2*sigmoid(2m)-1), written with fewer tensor calls per step
            new_memory = torch.addcmul(f_gate * memory[:k] - i_gate, i_gate, g_half, value=2.0)
            if cell_clip:
                new_memory.clamp_(-cell_clip, cell_clip)
            hidden = torch.addcmul(-o_gate, o_gate, (new_memory * 2.0).sigmoid_(), value=2.0)
            new_state = hidden.mm(w_proj_t)
            if proj_clip:
                new_state.clamp_(-proj_clip, proj_clip)
            memory[:k] = new_memory
            state[:k] = new_state
            output[:k, t] = new_state
        return output


class ElmoLstm(nn.Module):
    """Stacked bidirectional LSTM, directions independent, residual connections above layer 0."""

    def __init__(self, options: dict) -> None:
        super().__init__()
        lstm = options["lstm"]
        if not lstm.get("use_skip_connections"):
            raise ValueError("only biLMs with residual (skip) connections are supported, as in AllenNLP")
        size, cell, self.num_layers = lstm["projection_dim"], lstm["dim"], lstm["n_layers"]
        self.hidden_size = size
        clip_c, clip_p = lstm.get("cell_clip"), lstm.get("proj_clip")
        self.forward_layers = nn.ModuleList(
            LstmCellWithProjection(size, size, cell, True, clip_c, clip_p) for _ in range(self.num_layers))
        self.backward_layers = nn.ModuleList(
            LstmCellWithProjection(size, size, cell, False, clip_c, clip_p) for _ in range(self.num_layers))

    def forward(self, inputs: torch.Tensor, mask: torch.Tensor,
                lengths: Optional[List[int]] = None) -> List[torch.Tensor]:
        """inputs (B, T, size) -> one (B, T, 2*size) tensor per layer. See LstmCellWithProjection for `lengths`."""
        fwd, bwd = inputs, inputs
        outputs = []
        for i, (f_layer, b_layer) in enumerate(zip(self.forward_layers, self.backward_layers)):
            f_out, b_out = f_layer(fwd, mask, lengths), b_layer(bwd, mask, lengths)
            if i:
                f_out, b_out = f_out + fwd, b_out + bwd
            fwd, bwd = f_out, b_out
            outputs.append(torch.cat([fwd, bwd], dim=-1))
        return outputs


class ElmoBiLm(nn.Module):
    """Character encoder + ElmoLstm: the part of ELMo that lives in the options/weights files."""

    def __init__(self, options: dict) -> None:
        super().__init__()
        self.options = options
        self.token_embedder = CharacterEncoder(options)
        self.lstm = ElmoLstm(options)
        self.num_layers = options["lstm"]["n_layers"] + 1
        self.output_dim = 2 * options["lstm"]["projection_dim"]

    def boundary_embeddings(self) -> Tuple[torch.Tensor, torch.Tensor]:
        ids = torch.tensor([BOS_IDS, EOS_IDS], dtype=torch.long)
        emb = self.token_embedder(ids)
        return emb[0], emb[1]

    def forward_embedded(self, token_embeddings: torch.Tensor,
                         lengths: torch.Tensor) -> Tuple[List[torch.Tensor], torch.Tensor]:
        """token_embeddings (B, T, proj) of the real tokens (padding anywhere past `lengths`).

        Returns the activations with sentence boundaries, one (B, T+2, 2*proj) tensor per layer
        (layer 0 = the token vectors doubled), and the (B, T+2) mask, as AllenNLP's `_ElmoBiLm`.
        """
        batch, steps, dim = token_embeddings.shape
        device = token_embeddings.device
        lengths = lengths.to(device)
        bos, eos = self.boundary_embeddings()
        positions = torch.arange(steps + 2, device=device).unsqueeze(0)
        mask = positions < (lengths.unsqueeze(1) + 2)
        x = token_embeddings.new_zeros(batch, steps + 2, dim)
        x[:, 1:-1] = token_embeddings
        x[:, 0] = bos
        x[torch.arange(batch, device=device), lengths + 1] = eos
        x = x * mask.unsqueeze(-1)
        sizes = (lengths + 2).tolist()
        is_sorted = all(a >= b for a, b in zip(sizes, sizes[1:]))
        layers = self.lstm(x, mask, sizes if is_sorted else None)
        return [torch.cat([x, x], dim=-1)] + layers, mask


class ScalarMix(nn.Module):
    """gamma * sum(softmax(s)_k * layer_k), AllenNLP's ScalarMix without layer norm."""

    def __init__(self, mixture_size: int) -> None:
        super().__init__()
        self.scalar_parameters = nn.ParameterList(nn.Parameter(torch.zeros(1)) for _ in range(mixture_size))
        self.gamma = nn.Parameter(torch.ones(1))

    def weights(self) -> torch.Tensor:
        return F.softmax(torch.cat(list(self.scalar_parameters)), dim=0)

    def forward(self, tensors: Sequence[torch.Tensor]) -> torch.Tensor:
        w = self.weights()
        return self.gamma * sum(w[k] * t for k, t in enumerate(tensors))


def pool_sequences(layers: Sequence[torch.Tensor], mask: torch.Tensor) -> torch.Tensor:
    """Per layer, [mean over the real tokens, the first (leaf) token] -> (B, n_layers, 2, dim).

    Boundary positions are dropped first, as `Elmo` does. Pooling is linear, so mixing pooled layers
    equals pooling the mixed representation: training can cache this and still learn the mix.
    """
    inner = mask[:, 2:].unsqueeze(-1).to(layers[0].dtype)  # position p+1 is a token iff p+2 <= length+1
    count = inner.sum(dim=1).clamp(min=1.0)
    pooled = []
    for layer in layers:
        core = layer[:, 1:-1] * inner
        pooled.append(torch.stack([core.sum(dim=1) / count, core[:, 0]], dim=1))
    return torch.stack(pooled, dim=1)

