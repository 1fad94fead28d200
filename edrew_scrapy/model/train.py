"""Training: (1) pre-train the ELMo biLM on reTPS sequences, (2) train the classifier head on labelled nodes.

The biLM is trained as AllenNLP/ELMo language models are: a forward LM reads a sequence left to right
and predicts the next token, a backward LM reads it right to left and predicts the previous one, both
from the top layer through one softmax over a token vocabulary built from the training reTPS.

The classifier keeps the pre-trained biLM frozen (like the thesis's ElmoEmbeddings -> ClassifierDL), so
each distinct reTPS and word is encoded once: pooled per-layer activations are cached and the scalar mix
is still learnt, since pooling and mixing commute. Everything is seeded; runs are reproducible on CPU.
"""
from __future__ import annotations

import json
import math
import random
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple, Union

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from ..page import Page
from .elmo import ElmoBiLm, char_tensor, default_options, pool_sequences
from .features import N_FEATURES, page_features, retps_tokens, text_words
from .head import Head, head_config
from .files import write_card
from .scorer import save_model

UNK, BOS, EOS = "<UNK>", "<S>", "</S>"


def log(message: str) -> None:
    import sys

    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def _progress(iterable=None, **kw):
    from tqdm import tqdm

    return tqdm(iterable, leave=False, dynamic_ncols=True, **kw)


# --- 1. biLM pre-training -------------------------------------------------------------------------------

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
    import gzip

    from ..serializer import serialize

    files = html_files(directory)[:limit] if limit else html_files(directory)
    pages = []
    for path in _progress(files, desc="pretrain html", unit="page", disable=not progress):
        data = path.read_bytes()
        if path.name.endswith(".gz"):
            data = gzip.decompress(data)
        pages.append(serialize(data))
    return sequences_from_pages(pages)


def build_vocab(sequences: Sequence[Sequence[str]], max_size: int = 4096, min_count: int = 2) -> List[str]:
    counts = Counter(t for seq in sequences for t in seq)
    common = [t for t, n in counts.most_common(max_size) if n >= min_count]
    return [UNK, BOS, EOS] + common


@dataclass
class Curve:
    steps: List[float] = field(default_factory=list)
    values: List[float] = field(default_factory=list)

    def add(self, step: float, value: float) -> None:
        self.steps.append(step)
        self.values.append(value)


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
    model = LanguageModel(bilm, vocab).to(_device_of(bilm))
    model.train()
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    curve = Curve()
    order = list(range(len(sequences)))
    deadline = time.monotonic() + minutes * 60
    step, running = 0, None
    bar = _progress(total=max_steps, desc="pretrain biLM", unit="step", disable=not progress)
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


# --- 2. frozen features ------------------------------------------------------------------------------------

@dataclass
class Encoded:
    """Pages as indices into tables of frozen biLM outputs."""

    sequence_index: Dict[str, int]
    sequence_table: torch.Tensor          # (S, n_layers, 2, elmo_dim) float16
    word_index: Dict[str, int]
    word_table: torch.Tensor              # (W, token_dim) float32
    pages: List[dict]                     # per page: seq (N,), words (N, K), nwords (N,), feats (N, F), y, w


def _device_of(module: nn.Module) -> torch.device:
    return next(module.parameters()).device


@torch.inference_mode()
def encode_pages(bilm: ElmoBiLm, pages: Sequence[Page], labels: Sequence[Sequence[int]], batch_size: int = 512,
                 progress: bool = True, skip: Optional[Callable] = None, n_features: int = N_FEATURES) -> Encoded:
    """Frozen biLM vectors of every page's distinct reTPS and words, and one item per page for the head.

    `skip`: nodes for which it is true are left out of their page's item (its rows, the node sequence the
    head's page BiLSTM reads), as `Scorer.score(pages, skip=...)` leaves them out at inference; their
    shallow features are still computed on the whole page. Each item's "at" holds the page's node indices
    it keeps and "n" the page's node count, so `predict` returns arrays aligned with page.nodes again.
    """
    bilm.eval()
    seq_tokens: Dict[str, List[str]] = {}
    words: Dict[str, int] = {}
    page_words = []
    page_rows = []
    for page in pages:
        at = [i for i, node in enumerate(page.nodes) if skip is None or not skip(node)]
        page_rows.append(at)
        for i in at:
            node = page.nodes[i]
            if node.retps not in seq_tokens:
                seq_tokens[node.retps] = retps_tokens(node)
        lists = [text_words(page.nodes[i].content) for i in at]
        page_words.append(lists)
        for ws in lists:
            for w in ws:
                words.setdefault(w, len(words))
    keys = list(seq_tokens)
    order = sorted(range(len(keys)), key=lambda i: -len(seq_tokens[keys[i]]))
    table = torch.empty(len(keys), bilm.num_layers, 2, bilm.output_dim, dtype=torch.float16)
    token_cache: Dict[str, torch.Tensor] = {}
    for start in _progress(range(0, len(order), batch_size), desc="encode reTPS", unit="batch",
                           disable=not progress):
        idx = order[start: start + batch_size]
        batch = [seq_tokens[keys[i]] for i in idx]
        new = sorted({t for s in batch for t in s} - token_cache.keys())
        if new:
            for t, v in zip(new, bilm.token_embedder(char_tensor(new))):
                token_cache[t] = v
        vocab = sorted({t for s in batch for t in s})
        pos = {t: k for k, t in enumerate(vocab)}
        tab = torch.stack([token_cache[t] for t in vocab])
        lengths = torch.tensor([len(s) for s in batch])
        ids = torch.zeros(len(batch), int(lengths.max()), dtype=torch.long)
        for r, s in enumerate(batch):
            ids[r, : len(s)] = torch.tensor([pos[t] for t in s])
        layers, mask = bilm.forward_embedded(tab[ids.to(tab.device)], lengths)
        table[torch.tensor(idx)] = pool_sequences(layers, mask).to(torch.float16).cpu()
    word_list = list(words)
    word_vecs = [bilm.token_embedder(char_tensor(word_list[i: i + 4096])).cpu()
                 for i in range(0, len(word_list), 4096)]
    word_table = torch.cat(word_vecs) if word_vecs else torch.zeros(0, bilm.options["lstm"]["projection_dim"])
    seq_index = {k: i for i, k in enumerate(keys)}
    encoded_pages = []
    for page, y, lists, at in zip(pages, labels, page_words, page_rows):
        width = max((len(ws) for ws in lists), default=1)
        nodes = [page.nodes[i] for i in at]
        feats = page_features(page, n_features)
        y = list(y)
        encoded_pages.append({
            "seq": torch.tensor([seq_index[n.retps] for n in nodes], dtype=torch.long),
            "words": torch.tensor([[words[w] for w in ws] + [0] * (width - len(ws)) for ws in lists],
                                  dtype=torch.long).reshape(len(lists), width),
            "nwords": torch.tensor([len(ws) for ws in lists], dtype=torch.float32),
            "feats": torch.from_numpy(feats if len(at) == len(page.nodes) else feats[at]),
            "y": torch.tensor([y[i] for i in at], dtype=torch.float32),
            # long nodes weigh more: the page metric counts words, not nodes
            "w": torch.tensor([0.5 + math.log1p(len(n.content.split())) for n in nodes], dtype=torch.float32),
            "at": torch.tensor(at, dtype=torch.long),
            "n": len(page.nodes),
        })
    return Encoded(seq_index, table, words, word_table, encoded_pages)


# --- 3. head training ------------------------------------------------------------------------------------------

def _text_from_table(word_table: torch.Tensor, words: torch.Tensor, nwords: torch.Tensor) -> torch.Tensor:
    vecs = word_table[words]                                   # (..., K, D)
    mask = (torch.arange(words.shape[-1], device=words.device) < nwords.unsqueeze(-1)).unsqueeze(-1)
    mean = (vecs * mask).sum(dim=-2) / nwords.clamp(min=1).unsqueeze(-1)
    top = vecs.masked_fill(~mask, float("-inf")).max(dim=-2).values
    return torch.cat([mean, top], dim=-1)


def _collate(enc: Encoded, items: List[dict]) -> dict:
    n = max(len(p["y"]) for p in items)
    k = max(p["words"].shape[1] for p in items)
    b = len(items)
    seq = torch.zeros(b, n, dtype=torch.long)
    words = torch.zeros(b, n, k, dtype=torch.long)
    nwords = torch.ones(b, n)
    feats = torch.zeros(b, n, items[0]["feats"].shape[1])
    y = torch.zeros(b, n)
    w = torch.zeros(b, n)
    for r, p in enumerate(items):
        m = len(p["y"])
        seq[r, :m] = p["seq"]
        words[r, :m, : p["words"].shape[1]] = p["words"]
        nwords[r, :m] = p["nwords"]
        feats[r, :m] = p["feats"]
        y[r, :m] = p["y"]
        w[r, :m] = p["w"]
    return {"seq": seq, "words": words, "nwords": nwords, "feats": feats, "y": y, "w": w,
            "lengths": torch.tensor([len(p["y"]) for p in items])}


def head_logits(head: Head, enc: Encoded, batch: dict) -> torch.Tensor:
    """Logits (B, N); `enc`'s tables and `batch` must be on the head's device (see `to_device`)."""
    elmo = head.mix(enc.sequence_table[batch["seq"]].float())
    text = _text_from_table(enc.word_table, batch["words"], batch["nwords"]) if head.config["use_text"] else None
    feats = batch["feats"] if head.config["use_features"] else None
    return head(elmo, text, feats, batch["lengths"])


def to_device(enc: Encoded, device: torch.device) -> Encoded:
    """The same encodings with their tables on `device` (the per-page index tensors move per batch)."""
    if enc.sequence_table.device == torch.device(device):
        return enc
    return Encoded(enc.sequence_index, enc.sequence_table.to(device), enc.word_index, enc.word_table.to(device),
                   enc.pages)


def _batch(enc: Encoded, items: List[dict], device: torch.device) -> dict:
    batch = _collate(enc, items)
    if device.type == "cpu":
        return batch
    return {k: (v if k == "lengths" else v.to(device)) for k, v in batch.items()}


@torch.inference_mode()
def predict(head: Head, enc: Encoded, indices: Sequence[int]) -> List[np.ndarray]:
    head.eval()
    device = _device_of(head)
    enc = to_device(enc, device)
    out = []
    for i in indices:
        item = enc.pages[i]
        probs = np.zeros(item["n"], dtype=np.float32)
        if len(item["y"]):  # a page whose nodes were all skipped scores 0.0 everywhere, as Scorer.score does
            batch = _batch(enc, [item], device)
            probs[item["at"].numpy()] = torch.sigmoid(head_logits(head, enc, batch))[0].cpu().numpy()
        out.append(probs)
    return out


def page_word_f1(probs: Sequence[np.ndarray], pages: Sequence[Page], references: Sequence[str],
                 threshold: float, region_share: Optional[float] = None) -> float:
    from ..data.align import word_f1
    from ..extract import relevant_mask

    scores = []
    for p, page, ref in zip(probs, pages, references):
        mask = relevant_mask(page, p, threshold, region_share)
        text = "\n".join(n.content for n, k in zip(page.nodes, mask) if k)
        scores.append(word_f1(text, ref)[2])
    return float(np.mean(scores)) if scores else 0.0


def node_prf(probs: Sequence[np.ndarray], labels: Sequence[Sequence[int]], threshold: float) -> Tuple[float, float, float]:
    p = np.concatenate([np.asarray(x) for x in probs]) >= threshold if probs else np.zeros(0, bool)
    t = np.concatenate([np.asarray(y) for y in labels]).astype(bool) if labels else np.zeros(0, bool)
    tp, fp, fn = int((p & t).sum()), int((p & ~t).sum()), int((~p & t).sum())
    prec = tp / (tp + fp) if tp + fp else 0.0
    rec = tp / (tp + fn) if tp + fn else 0.0
    return prec, rec, (2 * prec * rec / (prec + rec) if prec + rec else 0.0)


THRESHOLDS = [round(0.05 * i, 2) for i in range(1, 20)]


def choose_threshold(score: Callable[[float], float]) -> Tuple[float, float]:
    """The threshold of the grid with the best validation score (ties: the one nearest 0.5)."""
    best = max(THRESHOLDS, key=lambda t: (round(score(t), 6), -abs(t - 0.5)))
    return best, score(best)


def train_head(head: Head, enc: Encoded, train_idx: Sequence[int], val_idx: Sequence[int],
               validate: Callable[[List[np.ndarray]], float], *, epochs: int, minutes: float, seed: int,
               batch_pages: int = 8, lr: float = 3e-3, progress: bool = True) -> Tuple[dict, Dict[str, Curve], dict]:
    """Adam on weighted BCE; keeps the state with the best validation score. Returns (state, curves, run):
    `run` says how many epochs ran, which one was kept, and whether the minute budget cut training short.
    A model whose kept epoch ran whole is retrained exactly, on any machine, with `--epochs <best>`: the
    shuffles are seeded, and the best of the first `best` epochs is that one."""
    rng = random.Random(seed)
    device = _device_of(head)
    enc = to_device(enc, device)
    # pages whose every node was skipped (encode_pages) have nothing to learn from
    order = [i for i in train_idx if len(enc.pages[i]["y"])]
    if not order:
        raise ValueError("no training page has a node to learn from")
    ys = torch.cat([enc.pages[i]["y"] for i in order])
    pos = float(ys.sum())
    pos_weight = torch.tensor(min(max((len(ys) - pos) / max(pos, 1.0), 1.0), 10.0), device=device)
    optimizer = torch.optim.Adam(head.parameters(), lr=lr)
    curves = {"train_loss": Curve(), "val_score": Curve()}
    best_state, best_score = None, -1.0
    run = {"epochs_run": 0, "best_epoch": 0, "best_epoch_whole": True, "stopped_by": "epochs"}
    deadline = time.monotonic() + minutes * 60
    for epoch in range(1, epochs + 1):
        head.train()
        rng.shuffle(order)
        # pages of similar size together keep padding small
        chunks = [order[i: i + batch_pages * 8] for i in range(0, len(order), batch_pages * 8)]
        batches = []
        for chunk in chunks:
            chunk = sorted(chunk, key=lambda i: len(enc.pages[i]["y"]))
            batches += [chunk[i: i + batch_pages] for i in range(0, len(chunk), batch_pages)]
        rng.shuffle(batches)
        total, count, whole = 0.0, 0, True
        for batch_idx in _progress(batches, desc=f"train head epoch {epoch}", unit="batch", disable=not progress):
            batch = _batch(enc, [enc.pages[i] for i in batch_idx], device)
            logits = head_logits(head, enc, batch)
            loss_all = F.binary_cross_entropy_with_logits(logits, batch["y"], pos_weight=pos_weight, reduction="none")
            loss = (loss_all * batch["w"]).sum() / batch["w"].sum().clamp(min=1e-6)
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(head.parameters(), 5.0)
            optimizer.step()
            total += loss.item()
            count += 1
            if time.monotonic() > deadline:
                whole = count == len(batches)
                break
        curves["train_loss"].add(epoch, total / max(count, 1))
        score = validate(predict(head, enc, val_idx))
        curves["val_score"].add(epoch, score)
        log(f"  epoch {epoch}: train loss {total / max(count, 1):.4f}, validation {score:.4f}")
        run["epochs_run"] = epoch
        if score > best_score:
            best_score = score
            best_state = {k: v.detach().clone() for k, v in head.state_dict().items()}
            run.update(best_epoch=epoch, best_epoch_whole=whole)
        if time.monotonic() > deadline:
            if epoch < epochs:
                run["stopped_by"] = "minutes"
            break
    head.load_state_dict(best_state)
    head.eval()
    return best_state, curves, run


# --- splits, plots, the whole run --------------------------------------------------------------------------------

def split_by_group(groups: Sequence[str], val_fraction: float, test_fraction: float, seed: int
                   ) -> Tuple[List[int], List[int], List[int]]:
    """Page indices (train, val, test); all pages of a group (domain or site) land on one side."""
    by: Dict[str, List[int]] = {}
    for i, g in enumerate(groups):
        by.setdefault(g or f"#{i}", []).append(i)
    names = sorted(by)
    random.Random(seed).shuffle(names)
    n = len(groups)
    test, val, train = [], [], []
    for name in names:
        if len(test) < test_fraction * n:
            test += by[name]
        elif len(val) < val_fraction * n:
            val += by[name]
        else:
            train += by[name]
    return sorted(train), sorted(val), sorted(test)


def plot_curves(path: Path, curves: Dict[str, Curve], title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(curves), figsize=(5 * len(curves), 3.5), squeeze=False)
    for ax, (name, curve) in zip(axes[0], curves.items()):
        ax.plot(curve.steps, curve.values, marker="." if len(curve.steps) < 60 else None)
        ax.set_title(name)
        ax.set_xlabel("step" if "pretrain" in name else "epoch")
        ax.grid(alpha=0.3)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


DATASET_CREDITS = {
    "wcxb": {"name": "WCXB v1.0 development split", "credit": "WCXB, Murrough Foley, 2026, CC-BY-4.0",
             "licence": "CC-BY-4.0"},
    "swde": {"name": "SWDE", "credit": "SWDE, Hao et al., SIGIR 2011 (From One Tree to a Forest)",
             "licence": "research dataset, see the dataset's SOURCE.md"},
    "simple": {"name": "user dataset", "credit": "", "licence": "as given by the dataset's owner"},
}


def load_labelled(dataset: str, path: Path, limit: Optional[int] = None, sites=None, attrs=None,
                  labels_file=None, progress: bool = True) -> list:
    """LabelledPage objects from the data readers (edrew_scrapy.data)."""
    if dataset == "wcxb":
        from ..data import wcxb

        ids = wcxb.page_ids(path)
        if limit:
            ids = [ids[(i * len(ids)) // limit] for i in range(min(limit, len(ids)))]
        it = wcxb.iter_pages(path, ids)
        total = len(ids)
    elif dataset == "swde":
        from ..data import swde

        it, total = swde.iter_pages(path, sites, attrs), None
    elif dataset == "simple":
        from ..data import simple

        it, total = simple.iter_pages(path, labels_file), None
    else:
        raise ValueError(f"unknown dataset {dataset!r}")
    pages = list(_progress(it, total=total, desc=f"load {dataset}", unit="page", disable=not progress))
    if limit and dataset != "wcxb":
        pages = [pages[(i * len(pages)) // limit] for i in range(min(limit, len(pages)))]
    return pages


@dataclass
class TrainConfig:
    dataset: str
    path: Path
    out: Path
    variants: Tuple[str, ...] = ("d",)
    pretrain_html: Optional[Path] = None
    pretrain_minutes: float = 15.0
    max_minutes: float = 55.0
    epochs: int = 30
    seed: int = 1
    threads: int = 1
    val_fraction: float = 0.1
    test_fraction: float = 0.0
    limit: Optional[int] = None
    sites: Optional[List[str]] = None
    attrs: Optional[List[str]] = None
    labels_file: Optional[Path] = None
    options: dict = field(default_factory=default_options)
    pretrain_steps: Optional[int] = None
    # a model folder whose biLM (ELMo options + weights) is reused as is: no pre-training, only the head
    # is trained (a user's own labels on the shipped biLM; or CV heads on each fold's own biLM)
    bilm_from: Optional[Path] = None
    progress: bool = True
    metric: str = "auto"   # "word" (page word-F1, WCXB's) or "node" (node F1, the thesis's); auto by dataset
    # the main-region step of extraction (edrew_scrapy.extract.relevant_mask), written to the card and used
    # when the threshold is chosen: "auto" = MAIN_REGION_SHARE for main-content models (metric "word"),
    # none for attribute models; a float in (0.5, 1]; None: off
    region_share: Union[str, float, None] = "auto"
    command: str = ""
    # "cpu" (the documented recipe) or a torch device such as "cuda": the same steps and epochs, faster; its
    # results differ from a CPU run's in the last digits (other kernels), so a model card names its device
    device: str = "cpu"
    # True: a main-content model's head trains on each page without the nodes extract()'s rules settle
    # whatever their score (extract.settled), as Scorer.score reads pages at inference. Measured on WCXB
    # cross-validation (same fold biLMs and seed): 0.855 against 0.858 on whole pages, so off by default
    # (docs/evaluation.md). Attribute models always train on whole pages: extract() scores every node.
    skip_settled: bool = False
    # shallow features the head reads: the first n of features.FEATURE_NAMES. 16 (without the four
    # declared-kind features) reproduces models/default as shipped; 20, the default, is what the
    # cross-validated fold models read (docs/model.md, "models/default")
    n_features: int = N_FEATURES


def check_config(config: TrainConfig) -> None:
    """ValueError naming the option, before any page is read or a minute spent pre-training."""
    from .head import VARIANTS

    if not (isinstance(config.n_features, int) and 0 < config.n_features <= N_FEATURES):
        raise ValueError(f"--features must be 1..{N_FEATURES}, got {config.n_features!r}")
    bad = [v for v in config.variants if v not in VARIANTS]
    if bad or not config.variants:
        raise ValueError(f"--variant: unknown {', '.join(map(repr, bad)) or 'none given'} (choose from "
                         f"{', '.join(VARIANTS)})")
    if config.epochs < 1:
        raise ValueError(f"--epochs must be at least 1, got {config.epochs}")
    if config.pretrain_steps is not None and config.pretrain_steps < 1:
        raise ValueError(f"--pretrain-steps must be at least 1, got {config.pretrain_steps}")
    if not config.max_minutes > 0 or not config.pretrain_minutes > 0:
        raise ValueError("--max-minutes and --pretrain-minutes must be positive")
    # validation pages choose the threshold and the epoch: some are needed; test pages may be none
    if not (0 < config.val_fraction < 1 and 0 <= config.test_fraction < 1
            and config.val_fraction + config.test_fraction < 1):
        raise ValueError(f"--val-fraction ({config.val_fraction}) must lie in (0, 1), --test-fraction "
                         f"({config.test_fraction}) in [0, 1), and leave training pages (their sum below 1)")
    if config.limit is not None and config.limit < 3:
        raise ValueError(f"--limit must be at least 3 pages, got {config.limit}")


def _metric_name(config: TrainConfig) -> str:
    if config.metric != "auto":
        return config.metric
    return "word" if config.dataset == "wcxb" else "node"


def _region_share(config: TrainConfig, metric: str) -> Optional[float]:
    from ..extract import MAIN_REGION_SHARE

    if config.region_share == "auto":
        return MAIN_REGION_SHARE if metric == "word" else None
    return None if config.region_share is None else float(config.region_share)


def train(config: TrainConfig) -> dict:
    """The whole run; writes one model directory per variant and returns a summary."""
    from ..evaluate import reference_text

    check_config(config)
    started = time.monotonic()
    deadline = started + config.max_minutes * 60
    torch.set_num_threads(config.threads)
    seed_everything(config.seed)
    out = Path(config.out)
    out.mkdir(parents=True, exist_ok=True)

    labelled = load_labelled(config.dataset, config.path, config.limit, config.sites, config.attrs,
                             config.labels_file, config.progress)
    labelled = [lp for lp in labelled if lp.page.nodes]
    if len(labelled) < 3:
        raise ValueError(f"{config.path}: only {len(labelled)} labelled pages with nodes; need at least 3")
    if not any(any(lp.labels) for lp in labelled):
        what = {"swde": "no node matches a value of the attributes" + (f" {','.join(config.attrs)}" if config.attrs else ""),
                "wcxb": "no node aligns with the reference texts"}.get(config.dataset, "no node matches the labels")
        raise ValueError(f"{config.path}: {what}; nothing to learn from")
    pages = [lp.page for lp in labelled]
    labels = [list(lp.labels) for lp in labelled]
    references = [reference_text(lp) for lp in labelled]
    if config.dataset == "swde":
        # the thesis's protocol: unique pages shuffled and cut (sites on both sides; 2 sites here)
        from ..data.splits import swde_split

        train_idx, val_idx, test_idx = swde_split(
            labelled, (1.0 - config.val_fraction - config.test_fraction, config.val_fraction, config.test_fraction),
            seed=config.seed)
        split_rule = "SWDE protocol: unique pages, seeded shuffle (edrew_scrapy.data.splits.swde_split)"
    else:
        train_idx, val_idx, test_idx = split_by_group([lp.domain for lp in labelled], config.val_fraction,
                                                      config.test_fraction, config.seed)
        split_rule = "pages grouped by domain, seeded shuffle of groups"
    if not val_idx:
        val_idx = train_idx[-1:]
    load_seconds = time.monotonic() - started
    log(f"loaded {len(labelled)} pages in {load_seconds:.0f} s: {len(train_idx)} train, {len(val_idx)} val, "
        f"{len(test_idx)} test")

    # 1. biLM
    device = torch.device(config.device)
    if config.bilm_from:
        options, bilm, pre_info = reuse_bilm(Path(config.bilm_from))
        pre_curve = Curve()
        log(f"reusing the biLM of {config.bilm_from} (pre-trained {pre_info.get('steps', '?')} steps)")
    else:
        options = json.loads(json.dumps(config.options))
        bilm = ElmoBiLm(options)
        if config.pretrain_html:
            sequences = sequences_from_html(config.pretrain_html, progress=config.progress)
            pretrain_source = str(config.pretrain_html)
        else:
            sequences = sequences_from_pages(pages[i] for i in train_idx)
            pretrain_source = f"reTPS of the {len(train_idx)} training pages"
    bilm = bilm.to(device)
    if not config.bilm_from:
        t0 = time.monotonic()
        pre_minutes = max(min(config.pretrain_minutes, (deadline - t0) / 60 * 0.4), 0.05)
        pre_curve, pre_info = pretrain_bilm(bilm, sequences, minutes=pre_minutes, seed=config.seed,
                                            max_steps=config.pretrain_steps, progress=config.progress)
        pre_info.update(source=pretrain_source, seconds=round(time.monotonic() - t0, 1))
        log(f"pre-trained the biLM: {pre_info['steps']} steps, loss {pre_info['final_loss']:.3f}, "
            f"{len(sequences)} sequences, {pre_info['seconds']:.0f} s")

    # 2. frozen encodings, shared by every variant
    metric = _metric_name(config)
    region_share = _region_share(config, metric)
    skip = None
    if region_share is not None and config.skip_settled:
        from ..extract import settled as skip
    t0 = time.monotonic()
    enc = to_device(encode_pages(bilm, pages, labels, progress=config.progress, skip=skip,
                                    n_features=config.n_features), device)  # every head's
    encode_seconds = time.monotonic() - t0
    log(f"encoded {len(enc.sequence_index)} distinct reTPS and {len(enc.word_index)} words in {encode_seconds:.0f} s")

    def scorer_for(idx):
        def score(probs, threshold):
            if metric == "word":
                return page_word_f1(probs, [pages[i] for i in idx], [references[i] for i in idx], threshold,
                                    region_share)
            return node_prf(probs, [labels[i] for i in idx], threshold)[2]
        return score

    val_score = scorer_for(val_idx)
    summary = {"variants": {}, "pretrain": pre_info, "load_seconds": round(load_seconds, 1),
               "encode_seconds": round(encode_seconds, 1), "metric": metric,
               "split": {"train": len(train_idx), "val": len(val_idx), "test": len(test_idx)}}
    credit = DATASET_CREDITS[config.dataset]
    token_dim = options["lstm"]["projection_dim"]
    for k, variant in enumerate(config.variants):
        seed_everything(config.seed)
        t0 = time.monotonic()
        minutes_left = max((deadline - t0) / 60 / (len(config.variants) - k), 0.05)
        head = Head(head_config(variant, bilm.output_dim, bilm.num_layers, token_dim,
                                n_features=config.n_features)).to(device)
        _, curves, head_run = train_head(head, enc, train_idx, val_idx,
                               lambda probs: choose_threshold(lambda t: val_score(probs, t))[1],
                               epochs=config.epochs, minutes=minutes_left, seed=config.seed,
                               progress=config.progress)
        if region_share is None:
            val_probs = predict(head, enc, val_idx)
            threshold, _ = choose_threshold(lambda t: val_score(val_probs, t))
            metrics = {"validation": _metrics(val_probs, val_idx, pages, labels, references, threshold, None)}
            if test_idx:
                metrics["test"] = _metrics(predict(head, enc, test_idx), test_idx, pages, labels, references,
                                           threshold, None)
        else:  # chosen below, once the files exist, on the scores extract() computes from them
            threshold, metrics = 0.5, {}
        head_seconds = time.monotonic() - t0
        target = out if len(config.variants) == 1 else out / f"variant-{variant}"
        card = {
            "name": target.name, "version": _package_version(),
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "variant": variant, "threshold": threshold, "threshold_metric": metric, "region_share": region_share,
            "training": {
                "dataset": credit["name"], "credit": credit["credit"], "licence": credit["licence"],
                "path": str(config.path), "pages": len(pages), "nodes": int(sum(len(y) for y in labels)),
                "relevant_nodes": int(sum(sum(y) for y in labels)), "split": summary["split"],
                "split_rule": split_rule,
                "seed": config.seed, "threads": config.threads, "device": device.type, "pretrain": pre_info,
                "head_pages": "without the nodes extract.settled marks" if skip else "whole pages",
                "head_seconds": round(head_seconds, 1), "head_epochs": head_run,
                "total_seconds": round(time.monotonic() - started, 1), "command": config.command,
            },
            "metrics": metrics,
        }
        written = save_model(target, options, bilm.cpu(), head.cpu(), card)
        bilm.to(device)
        if region_share is not None:
            # A main-content model is used through extract.score_pages, which leaves the nodes its rules
            # settle unscored, so the head reads each page without them and the other scores differ from
            # predict()'s: the threshold and the metrics are taken on exactly that, from the files just written.
            threshold, metrics = _choose_on_shipped_path(target, pages, labels, references, val_idx, test_idx,
                                                         region_share, val_score)
            head_seconds = time.monotonic() - t0
            card.update(threshold=threshold, metrics=metrics)
            card["training"].update(threshold_scores="extract.score_pages (settled nodes unscored)",
                                    head_seconds=round(head_seconds, 1),
                                    total_seconds=round(time.monotonic() - started, 1))
            written = write_card(target, dict(card, head=head.config))
        plot_curves(target / "training.png",
                    {"pretrain biLM loss": pre_curve, "head train loss": curves["train_loss"],
                     f"validation {metric}-F1": curves["val_score"]},
                    f"{config.dataset} variant {variant}")
        log(f"variant {variant}: threshold {threshold}, validation {metrics['validation']}, {head_seconds:.0f} s")
        summary["variants"][variant] = {"dir": str(target), "threshold": threshold, "metrics": metrics,
                                        "head_seconds": round(head_seconds, 1),
                                        "card": written["training"]}
    summary["total_seconds"] = round(time.monotonic() - started, 1)
    (out / "summary.json").write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return summary


def reuse_bilm(directory: Path) -> Tuple[dict, ElmoBiLm, dict]:
    """(options, biLM, pre-training record) of an existing model folder; its files are checked against its
    card (sha256) as when the model is loaded for scoring."""
    from . import files
    from .scorer import build_bilm

    try:
        card = files.read_card(directory)
        options = files.read_options(directory / files.OPTIONS)
        bilm = build_bilm(options)
        files.read_elmo_weights(directory / files.WEIGHTS, bilm)
    except files.ModelError as exc:
        raise ValueError(f"cannot reuse the biLM: {exc}") from None
    earlier = dict(card.get("training", {}).get("pretrain") or {})
    return options, bilm, dict(earlier, reused_from=str(directory), seconds=0.0)


def shipped_probs(directory: Path, pages: Sequence[Page]) -> List[np.ndarray]:
    """P(relevant) per node as extract() computes it with the model in `directory`, page by page."""
    from ..extract import score_pages
    from .scorer import load_model

    scorer = load_model(directory)
    return [np.asarray(score_pages(scorer, [page])[0]) for page in pages]


def _choose_on_shipped_path(directory: Path, pages, labels, references, val_idx, test_idx, region_share,
                            val_score: Callable) -> Tuple[float, dict]:
    """(threshold, metrics) of a written main-content model, both on extract()'s scores."""
    val_probs = shipped_probs(directory, [pages[i] for i in val_idx])
    threshold, _ = choose_threshold(lambda t: val_score(val_probs, t))
    metrics = {"validation": _metrics(val_probs, val_idx, pages, labels, references, threshold, region_share)}
    if test_idx:
        test_probs = shipped_probs(directory, [pages[i] for i in test_idx])
        metrics["test"] = _metrics(test_probs, test_idx, pages, labels, references, threshold, region_share)
    return threshold, metrics


def _metrics(probs, idx, pages, labels, references, threshold, region_share=None) -> dict:
    p, r, f = node_prf(probs, [labels[i] for i in idx], threshold)
    word = page_word_f1(probs, [pages[i] for i in idx], [references[i] for i in idx], threshold, region_share)
    return {"pages": len(idx), "node_precision": round(p, 4), "node_recall": round(r, 4), "node_f1": round(f, 4),
            "word_f1": round(word, 4)}


def _package_version() -> str:
    try:
        from importlib.metadata import version

        return version("edrew-scrapy")
    except Exception:  # not installed (running from a checkout)
        return "0.1.0"


def ablation_table(summary: dict) -> str:
    rows = ["| variant | split | pages | node P | node R | node F1 | word F1 | threshold | head s |",
            "|---|---|---|---|---|---|---|---|---|"]
    for variant, info in summary["variants"].items():
        for split, m in info["metrics"].items():
            rows.append(f"| {variant} | {split} | {m['pages']} | {m['node_precision']:.3f} | {m['node_recall']:.3f} | "
                        f"{m['node_f1']:.3f} | {m['word_f1']:.3f} | {info['threshold']:.2f} | {info['head_seconds']:.0f} |")
    return "\n".join(rows)
