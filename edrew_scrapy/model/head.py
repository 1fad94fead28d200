"""The classifier on top of ELMo: node vector -> (optional page BiLSTM) -> P(relevant).

Variants (cumulative, as measured in docs/model.md):
  a  reTPS only (the thesis)           b  + the node's first words through the character CNN
  c  + shallow text features           d  + page context: a BiLSTM over the page's nodes in order
"""
from __future__ import annotations

from typing import Optional

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from .elmo import ScalarMix
from .features import DEFAULT_FEATURES, MAX_TREE_LEVELS, N_FEATURES, is_tree_levels

VARIANTS = {
    "a": dict(use_text=False, use_features=False, use_context=False),
    "b": dict(use_text=True, use_features=False, use_context=False),
    "c": dict(use_text=True, use_features=True, use_context=False),
    "d": dict(use_text=True, use_features=True, use_context=True),
}


def head_config(variant: str, elmo_dim: int, n_layers: int, token_dim: int, node_dim: int = 48,
                context_dim: int = 32, text_dim: int = 32, dropout: float = 0.2,
                n_features: int = DEFAULT_FEATURES, tree_levels: int = 0) -> dict:
    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r} (choose from {', '.join(VARIANTS)})")
    if not (isinstance(n_features, int) and 0 < n_features <= N_FEATURES):
        raise ValueError(f"n_features must be 1..{N_FEATURES} (the first n of features.FEATURE_NAMES), "
                         f"got {n_features!r}")
    if not is_tree_levels(tree_levels):
        raise ValueError(f"tree_levels must be 0..{MAX_TREE_LEVELS}, got {tree_levels!r}")
    config = dict(VARIANTS[variant], variant=variant, elmo_dim=elmo_dim, n_layers=n_layers,
                  token_dim=token_dim, node_dim=node_dim, context_dim=context_dim, text_dim=text_dim,
                  n_features=n_features, dropout=dropout)
    if tree_levels:  # written only when used, so that cards of heads without it stay as they were
        config["tree_levels"] = tree_levels
    return config


class Head(nn.Module):
    def __init__(self, config: dict) -> None:
        super().__init__()
        self.config = dict(config)
        c = self.config
        self.scalar_mix = ScalarMix(c["n_layers"])
        in_dim = 2 * c["elmo_dim"]  # mean and leaf token of the mixed ELMo sequence
        if c["use_text"]:
            self.text = nn.Sequential(nn.Linear(2 * c["token_dim"], c["text_dim"]), nn.ReLU())
            in_dim += c["text_dim"]
        if c["use_features"]:
            in_dim += c["n_features"]
        self.node = nn.Sequential(nn.Dropout(c["dropout"]), nn.Linear(in_dim, c["node_dim"]), nn.ReLU())
        out_dim = c["node_dim"]
        if c["use_context"]:
            self.context = nn.LSTM(c["node_dim"], c["context_dim"], batch_first=True, bidirectional=True)
            out_dim += 2 * c["context_dim"]
        # DOM context: the mean of the nodes' vectors under each of the node's first ancestors, and how
        # many there are. The page BiLSTM reads the nodes as a flat sequence and cannot tell where a
        # container ends: a "Trending" box's items and the article's last paragraphs are neighbours.
        self.tree_levels = int(c.get("tree_levels", 0))
        out_dim += self.tree_levels * (out_dim + 1)
        self.out = nn.Sequential(nn.Dropout(c["dropout"]), nn.Linear(out_dim, c["node_dim"]), nn.ReLU(),
                                 nn.Linear(c["node_dim"], 1))

    def mix(self, per_layer: torch.Tensor) -> torch.Tensor:
        """(..., n_layers, 2, elmo_dim) pooled activations -> (..., 2 * elmo_dim)."""
        w = self.scalar_mix.weights()
        mixed = self.scalar_mix.gamma * (per_layer * w.view(-1, 1, 1)).sum(dim=-3)
        return mixed.flatten(-2)

    def forward(self, elmo: torch.Tensor, text: Optional[torch.Tensor], features: Optional[torch.Tensor],
                lengths: Optional[torch.Tensor] = None, groups: Optional[torch.Tensor] = None) -> torch.Tensor:
        """elmo (B, N, 2*elmo_dim) mixed; text (B, N, 2*token_dim); features (B, N, n_features); groups
        (B, >= tree_levels, N) the nodes' ancestor groups (features.ancestor_groups; -1 for padding),
        needed when the config has tree_levels.

        Returns logits (B, N). `lengths` (B,) gives the real number of nodes of each padded page.
        """
        parts = [elmo]
        if self.config["use_text"]:
            parts.append(self.text(text))
        if self.config["use_features"]:
            parts.append(features)
        x = self.node(torch.cat(parts, dim=-1))
        if self.config["use_context"]:
            if lengths is None or bool((lengths == x.shape[1]).all()):
                ctx = self._context_inference(x) if self._inference() else self.context(x)[0]
            else:
                packed = pack_padded_sequence(x, lengths.cpu(), batch_first=True, enforce_sorted=False)
                ctx, _ = pad_packed_sequence(self.context(packed)[0], batch_first=True, total_length=x.shape[1])
            x = torch.cat([x, ctx], dim=-1)
        if self.tree_levels:
            if groups is None:
                raise ValueError("this head pools over ancestor groups (tree_levels): pass groups")
            x = torch.cat([x, tree_pool(x, groups[:, : self.tree_levels])], dim=-1)
        return self.out(x).squeeze(-1)

    def _inference(self) -> bool:
        return not (self.training or torch.is_grad_enabled())

    def _context_inference(self, x: torch.Tensor) -> torch.Tensor:
        """self.context(x)[0], the same numbers, computed as two one-directional LSTMs over inputs padded
        at the end to a few lengths. oneDNN builds (and caches) an LSTM for every sequence length it
        meets: on pages of new lengths that took as long as running it (WCXB pages, ~300 nodes:
        1.8 against 0.9 ms), while padded lengths recur. Padding after the end leaves the forward
        outputs before it unchanged; the backward direction reads the page reversed, so its padding
        also comes after the real nodes."""
        lstm = self.context
        batch, n, dim = x.shape
        width = _padded_length(n)
        inputs = x.new_zeros(2, batch, width, dim)
        inputs[0, :, :n] = x
        inputs[1, :, :n] = x.flip(1)
        zeros = x.new_zeros(1, batch, lstm.hidden_size)
        outputs = []
        for d, suffix in enumerate(("", "_reverse")):
            params = [getattr(lstm, f"{name}_l0{suffix}") for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
            outputs.append(torch.lstm(inputs[d], (zeros, zeros), params, True, 1, 0.0, False, False, True)[0][:, :n])
        return torch.cat([outputs[0], outputs[1].flip(1)], dim=-1)


def tree_pool(x: torch.Tensor, groups: torch.Tensor) -> torch.Tensor:
    """x (B, N, D), groups (B, L, N) int64 (-1: a padded node, in no group) -> (B, N, L*D + L): per level,
    the mean of x over the node's group, then per level log(1 + group size) / 6."""
    batch, n, dim = x.shape
    levels = groups.shape[1]
    valid = (groups >= 0).reshape(-1).to(x.dtype)
    g = groups.clamp(min=0)
    width = int(g.max()) + 1 if g.numel() else 1
    base = torch.arange(batch * levels, device=x.device).view(batch, levels, 1) * width
    ids = (base + g).reshape(-1)
    rows = x.unsqueeze(1).expand(batch, levels, n, dim).reshape(-1, dim) * valid.unsqueeze(-1)
    sums = x.new_zeros(batch * levels * width, dim).index_add_(0, ids, rows)
    counts = x.new_zeros(batch * levels * width).index_add_(0, ids, valid)
    means = (sums / counts.clamp(min=1.0).unsqueeze(-1))[ids].view(batch, levels, n, dim)
    sizes = torch.log1p(counts[ids]).view(batch, levels, n) / 6.0
    return torch.cat([means.permute(0, 2, 1, 3).reshape(batch, n, levels * dim), sizes.transpose(1, 2)], dim=-1)


def _padded_length(n: int) -> int:
    """n rounded up to a multiple of 32, or of an eighth of the power of two below it: at most 12.5 %
    of padding, and ~8 lengths per doubling for oneDNN to keep."""
    step = max(32, 1 << max(0, n.bit_length() - 4))
    return -(-n // step) * step
