"""The `allennlp` backend: the same model files run through `allennlp.modules.elmo.Elmo`.

It exists to show that the files are genuine AllenNLP ELMo files and that the native code computes
the same thing; it needs AllenNLP installed (scripts/allennlp-env.sh builds such an environment). A mixed
model's heads each get one of Elmo's output representations, that is one scalar mix over the biLM's layers
set from the head's, so that one Elmo pass gives every head its own vectors.
"""
from __future__ import annotations

from pathlib import Path
from typing import List, Sequence, Union

import torch

from .elmo import MAX_WORD_LENGTH, char_ids, char_tensor
from .files import ModelError
from .head import Head


class AllenNlpEncoder:
    name = "allennlp"

    def __init__(self, options_file: Path, weight_file: Path, heads: Union[Head, Sequence[Head]],
                 batch_size: int = 256) -> None:
        """`heads`: a Head or a mixed model's heads, one Elmo output representation (scalar mix) each."""
        try:
            from allennlp.modules.elmo import Elmo
        except ImportError as exc:
            raise ModelError(f"backend 'allennlp' needs AllenNLP, which is not importable here ({exc}); "
                             "build its environment with scripts/allennlp-env.sh") from None
        self.heads = [heads] if isinstance(heads, Head) else list(heads)
        if not self.heads:
            raise ModelError("backend 'allennlp' needs at least one head")
        mixes = [head.scalar_mix for head in self.heads]
        # Elmo takes one list of initial scalar parameters for all its outputs: the first head's, then
        # each output's parameters and gamma are set from its own head below
        self.elmo = Elmo(str(options_file), str(weight_file), num_output_representations=len(mixes), dropout=0.0,
                         scalar_mix_parameters=[p.item() for p in mixes[0].scalar_parameters])
        with torch.no_grad():
            for k, mix in enumerate(mixes):
                target = getattr(self.elmo, f"scalar_mix_{k}")
                if len(target.scalar_parameters) != len(mix.scalar_parameters):
                    raise ModelError(f"backend 'allennlp': head {k} mixes {len(mix.scalar_parameters)} layers; "
                                     f"the biLM has {len(target.scalar_parameters)}")
                for theirs, ours in zip(target.scalar_parameters, mix.scalar_parameters):
                    theirs.fill_(ours.item())
                target.gamma.fill_(mix.gamma.item())
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
        """(len(sequences), heads, 2, 2*proj): [mean, first token] of Elmo's representation mixed by each
        head (its output representation), as NativeEncoder.encode gives them."""
        if not sequences:
            return torch.zeros(0, len(self.heads), 2, self.elmo.get_output_dim())
        chunks = []
        for start in range(0, len(sequences), self.batch_size):
            batch = sequences[start: start + self.batch_size]
            steps = max(len(s) for s in batch)
            ids = torch.zeros(len(batch), steps, MAX_WORD_LENGTH, dtype=torch.long)
            for r, seq in enumerate(batch):
                ids[r, : len(seq)] = torch.tensor([char_ids(t) for t in seq])
            self._reset()
            out = self.elmo(ids)
            m = out["mask"].unsqueeze(-1).to(out["elmo_representations"][0].dtype)
            per_head = []
            for rep in out["elmo_representations"]:
                mean = (rep * m).sum(dim=1) / m.sum(dim=1).clamp(min=1.0)
                per_head.append(torch.stack([mean, rep[:, 0] * m[:, 0]], dim=1))
            chunks.append(torch.stack(per_head, dim=1))
        return torch.cat(chunks)
