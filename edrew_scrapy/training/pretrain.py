"""Step 1 of training: pre-train the ELMo biLM on reTPS sequences.

The biLM is trained as AllenNLP/ELMo language models are: a forward LM reads a sequence left to right
and predicts the next token, a backward LM reads it right to left and predicts the previous one, both
from the top layer through one softmax over a token vocabulary built from the training reTPS.
"""
from __future__ import annotations

import math
import random
import time
from collections import Counter
from pathlib import Path
from typing import Iterable, List, Optional, Sequence, Tuple

import torch
from torch import nn
from torch.nn import functional as F

from ..model.elmo import ElmoBiLm, char_tensor
from ..model.features import retps_tokens
from ..page import Page
from .support import Curve, device_of, progress_bar

UNK, BOS, EOS = "<UNK>", "<S>", "</S>"


def sequences_from_pages(pages: Iterable[Page]) -> List[List[str]]:
    """The distinct reTPS token lists of each page (a sequence repeated on a page counts once)."""
    out: List[List[str]] = []
    for page in pages:
        seen = set()
        for node in page.nodes:
            if node.retps not in seen:
                seen.add(node.retps)
                out.append(retps_tokens(node))
    return out


def html_files(directory: Path) -> List[Path]:
    suffixes = (".html", ".htm", ".html.gz", ".htm.gz", ".xhtml")
    return sorted(p for p in Path(directory).rglob("*") if p.is_file() and p.name.lower().endswith(suffixes))


def sequences_from_html(directory: Path, limit: Optional[int] = None, progress: bool = True) -> List[List[str]]:
    """Serialize every HTML file under `directory` (gzipped too) into reTPS sequences."""
    from ..data import read_source
    from ..serializer import serialize

    files = html_files(directory)[:limit] if limit else html_files(directory)
    pages = []
    for path in progress_bar(files, desc="pretrain html", unit="page", disable=not progress):
        pages.append(serialize(read_source(path)))  # a broken file: a DatasetError naming it
    return sequences_from_pages(pages)


def build_vocab(sequences: Sequence[Sequence[str]], max_size: int = 4096, min_count: int = 2) -> List[str]:
    counts = Counter(t for seq in sequences for t in seq)
    common = [t for t, n in counts.most_common(max_size) if n >= min_count]
    return [UNK, BOS, EOS] + common


class LanguageModel(nn.Module):
    """biLM + softmax shared by both directions, for pre-training only (the softmax is not shipped)."""

    def __init__(self, bilm: ElmoBiLm, vocab: List[str]) -> None:
        super().__init__()
        self.bilm = bilm
        self.vocab = {t: i for i, t in enumerate(vocab)}
        self.softmax = nn.Linear(bilm.options["lstm"]["projection_dim"], len(vocab))

    def loss(self, batch: List[List[str]]) -> torch.Tensor:
        words = sorted({t for s in batch for t in s})
        position = {t: i for i, t in enumerate(words)}
        table = self.bilm.token_embedder(char_tensor(words))
        lengths = torch.tensor([len(s) for s in batch])
        steps = int(lengths.max())
        ids = torch.zeros(len(batch), steps, dtype=torch.long)
        targets = torch.full((len(batch), steps + 2), -100, dtype=torch.long)
        unk = self.vocab[UNK]
        for r, seq in enumerate(batch):
            ids[r, : len(seq)] = torch.tensor([position[t] for t in seq])
            targets[r, : len(seq) + 2] = torch.tensor(
                [self.vocab[BOS]] + [self.vocab.get(t, unk) for t in seq] + [self.vocab[EOS]])
        device = table.device
        ids, targets = ids.to(device), targets.to(device)
        layers, _ = self.bilm.forward_embedded(table[ids], lengths)
        top = layers[-1]
        half = top.shape[-1] // 2
        forward_logits = self.softmax(top[:, :-1, :half])    # position t predicts t+1
        backward_logits = self.softmax(top[:, 1:, half:])    # position t predicts t-1
        f_loss = F.cross_entropy(forward_logits.reshape(-1, forward_logits.shape[-1]), targets[:, 1:].reshape(-1))
        b_loss = F.cross_entropy(backward_logits.reshape(-1, backward_logits.shape[-1]), targets[:, :-1].reshape(-1))
        return 0.5 * (f_loss + b_loss)


def pretrain_bilm(bilm: ElmoBiLm, sequences: List[List[str]], *, minutes: float, seed: int, batch_size: int = 64,
                  lr: float = 2e-3, max_steps: Optional[int] = None, progress: bool = True,
                  vocab_size: int = 4096) -> Tuple[Curve, dict]:
    """Train the biLM as a bidirectional LM until `minutes` or `max_steps`; returns the loss curve."""
    rng = random.Random(seed)
    vocab = build_vocab(sequences, vocab_size)
    model = LanguageModel(bilm, vocab).to(device_of(bilm))
    model.train()
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    curve = Curve()
    order = list(range(len(sequences)))
    deadline = time.monotonic() + minutes * 60
    step, running = 0, None
    bar = progress_bar(total=max_steps, desc="pretrain biLM", unit="step", disable=not progress)
    while order:
        rng.shuffle(order)
        for start in range(0, len(order), batch_size):
            batch = [sequences[i] for i in order[start: start + batch_size]]
            loss = model.loss(batch)
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            optimizer.step()
            step += 1
            running = loss.item() if running is None else 0.95 * running + 0.05 * loss.item()
            if step % 10 == 0:
                curve.add(step, running)
                bar.set_postfix(loss=f"{running:.3f}")
            bar.update(1)
            if (max_steps and step >= max_steps) or time.monotonic() > deadline:
                bar.close()
                bilm.eval()
                return curve, {"steps": step, "final_loss": running, "perplexity": math.exp(running),
                               "vocab": len(vocab), "sequences": len(sequences)}
    bar.close()
    bilm.eval()
    return curve, {"steps": step, "final_loss": running, "vocab": len(vocab), "sequences": len(sequences)}
