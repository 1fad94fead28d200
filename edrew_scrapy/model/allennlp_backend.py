"""The `allennlp` backend: the same model files run through `allennlp.modules.elmo.Elmo`.

It exists to show that the files are genuine AllenNLP ELMo files and that the native code computes
the same thing; it needs AllenNLP installed (scripts/allennlp-env.sh builds such an environment).
"""
from __future__ import annotations

from pathlib import Path
from typing import List, Sequence

import torch

from .elmo import MAX_WORD_LENGTH, char_ids, char_tensor
from .files import ModelError
from .head import Head


class AllenNlpEncoder:
    name = "allennlp"

    def __init__(self, options_file: Path, weight_file: Path, head: Head, batch_size: int = 256) -> None:
        try:
            from allennlp.modules.elmo import Elmo
        except ImportError as exc:
            raise ModelError(f"backend 'allennlp' needs AllenNLP, which is not importable here ({exc}); "
                             "build its environment with scripts/allennlp-env.sh") from None
        mix = head.scalar_mix
        self.elmo = Elmo(str(options_file), str(weight_file), num_output_representations=1, dropout=0.0,
                         scalar_mix_parameters=[p.item() for p in mix.scalar_parameters])
        with torch.no_grad():
            self.elmo.scalar_mix_0.gamma.fill_(mix.gamma.item())
        self.elmo.eval()
        self.batch_size = batch_size

    def _reset(self) -> None:
        # AllenNLP's ElmoLstm carries its final states into the next call; nodes are independent
        self.elmo._elmo_lstm._elmo_lstm.reset_states()

    def token_vectors(self, words: Sequence[str]) -> torch.Tensor:
        """Character-CNN vectors, each word read as a one-token sentence (position 1, after <S>)."""
        if not words:
            return torch.zeros(0)
        encoder = self.elmo._elmo_lstm._token_embedder
        return encoder(char_tensor(words).unsqueeze(1))["token_embedding"][:, 1]

    def encode(self, sequences: List[List[str]]) -> torch.Tensor:
        """(len(sequences), 2, 2*proj): [mean, first token] of Elmo's representation."""
        chunks = []
        for start in range(0, len(sequences), self.batch_size):
            batch = sequences[start: start + self.batch_size]
            steps = max(len(s) for s in batch)
            ids = torch.zeros(len(batch), steps, MAX_WORD_LENGTH, dtype=torch.long)
            for r, seq in enumerate(batch):
                ids[r, : len(seq)] = torch.tensor([char_ids(t) for t in seq])
            self._reset()
            out = self.elmo(ids)
            rep, mask = out["elmo_representations"][0], out["mask"]
            m = mask.unsqueeze(-1).to(rep.dtype)
            mean = (rep * m).sum(dim=1) / m.sum(dim=1).clamp(min=1.0)
            chunks.append(torch.stack([mean, rep[:, 0] * m[:, 0]], dim=1))
        return torch.cat(chunks)
