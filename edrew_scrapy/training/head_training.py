"""Step 2 of training: the classifier head on labelled nodes, over frozen biLM outputs.

The head keeps the pre-trained biLM frozen (like the thesis's ElmoEmbeddings -> ClassifierDL), so each
distinct reTPS and word is encoded once: pooled per-layer activations are cached and the scalar mix is
still learnt, since pooling and mixing commute.
"""
from __future__ import annotations

import math
import random
import time
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from ..model.elmo import ElmoBiLm, char_tensor, pool_sequences
from ..model.features import DEFAULT_FEATURES, MAX_TREE_LEVELS, ancestor_groups, page_features, retps_tokens, text_words
from ..model.head import Head
from ..page import Page
from ..words import count_words
from .support import Curve, device_of, log, progress_bar

# How much each node's error counts in the head's loss:
#   log: 0.5 + log(1 + words). Long nodes weigh more, since the page metric counts words, not nodes,
#        but a 1,000-word block only about 6 times a one-word link (the default, as every shipped model).
#   page-share: (words + 0.1) / the same summed over the page, the node's share of its page's word-F1:
#        each page weighs the same in a batch, and within it a node as much as its words.
NODE_WEIGHTS = ("log", "page-share")
# the head's learning rate over training (train_head): constant, as every shipped model, or cosine decay to 0
LR_SCHEDULES = ("constant", "cosine")


def cosine_factor(step: int, total: int) -> float:
    """The learning rate's share at optimizer step `step` of `total`: 1 at the first, 0 from the last on."""
    return 0.5 * (1.0 + math.cos(math.pi * min(step, total) / max(total, 1)))


def _node_weights(words: List[int], how: str) -> torch.Tensor:
    if how == "log":
        return torch.tensor([0.5 + math.log1p(n) for n in words], dtype=torch.float32)
    share = torch.tensor(words, dtype=torch.float32) + 0.1
    return share / share.sum().clamp(min=1e-6)


@dataclass
class Encoded:
    """Pages as indices into tables of frozen biLM outputs."""

    sequence_index: Dict[str, int]
    sequence_table: torch.Tensor          # (S, n_layers, 2, elmo_dim) float16
    word_index: Dict[str, int]
    word_table: torch.Tensor              # (W, token_dim) float32
    # per page: seq (N,), words (N, K), nwords (N,), feats (N, F), groups (MAX_TREE_LEVELS, N), y, w
    pages: List[dict]


@torch.inference_mode()
def encode_pages(bilm: ElmoBiLm, pages: Sequence[Page], labels: Sequence[Sequence[int]], batch_size: int = 512,
                 progress: bool = True, skip: Optional[Callable] = None, n_features: int = DEFAULT_FEATURES,
                 node_weights: str = "log", known: Optional[Sequence[Optional[Sequence[int]]]] = None) -> Encoded:
    """Frozen biLM vectors of every page's distinct reTPS and words, and one item per page for the head.

    `skip`: nodes for which it is true are left out of their page's item (its rows, the node sequence the
    head's page BiLSTM reads), as `Scorer.score(pages, skip=...)` leaves them out at inference; their
    shallow features are still computed on the whole page. Each item's "at" holds the page's node indices
    it keeps and "n" the page's node count, so `predict` returns arrays aligned with page.nodes again.

    `node_weights`: each node's weight in the loss (NODE_WEIGHTS).

    `known`: per page, None (every node labelled) or one 0/1 per node (a page of weak labels, data.snippets):
    a node marked 0 weighs 0 in the loss, so what its label says is never learnt.
    """
    if node_weights not in NODE_WEIGHTS:
        raise ValueError(f"node_weights must be one of {', '.join(NODE_WEIGHTS)}, got {node_weights!r}")
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
    for start in progress_bar(range(0, len(order), batch_size), desc="encode reTPS", unit="batch",
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
    masks = known if known is not None else [None] * len(pages)
    for page, y, lists, at, mask in zip(pages, labels, page_words, page_rows, masks):
        width = max((len(ws) for ws in lists), default=1)
        nodes = [page.nodes[i] for i in at]
        feats = page_features(page, n_features)
        y = list(y)
        w = _node_weights([count_words(n.content) for n in nodes], node_weights)
        if mask is not None:
            w = w * torch.tensor([float(mask[i]) for i in at], dtype=torch.float32)
        encoded_pages.append({
            "seq": torch.tensor([seq_index[n.retps] for n in nodes], dtype=torch.long),
            "words": torch.tensor([[words[w] for w in ws] + [0] * (width - len(ws)) for ws in lists],
                                  dtype=torch.long).reshape(len(lists), width),
            "nwords": torch.tensor([len(ws) for ws in lists], dtype=torch.float32),
            "feats": torch.from_numpy(feats if len(at) == len(page.nodes) else feats[at]),
            # over the nodes the head reads, as Scorer.score groups them
            "groups": torch.from_numpy(ancestor_groups([n.path for n in nodes], MAX_TREE_LEVELS)),
            "y": torch.tensor([y[i] for i in at], dtype=torch.float32),
            "w": w,
            "known": mask is not None,
            "at": torch.tensor(at, dtype=torch.long),
            "n": len(page.nodes),
        })
    return Encoded(seq_index, table, words, word_table, encoded_pages)


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
    groups = torch.full((b, MAX_TREE_LEVELS, n), -1, dtype=torch.long)
    for r, p in enumerate(items):
        m = len(p["y"])
        seq[r, :m] = p["seq"]
        words[r, :m, : p["words"].shape[1]] = p["words"]
        nwords[r, :m] = p["nwords"]
        feats[r, :m] = p["feats"]
        y[r, :m] = p["y"]
        w[r, :m] = p["w"]
        groups[r, :, :m] = p["groups"]
    return {"seq": seq, "words": words, "nwords": nwords, "feats": feats, "y": y, "w": w, "groups": groups,
            "lengths": torch.tensor([len(p["y"]) for p in items])}


def head_logits(head: Head, enc: Encoded, batch: dict) -> torch.Tensor:
    """Logits (B, N); `enc`'s tables and `batch` must be on the head's device (see `to_device`)."""
    elmo = head.mix(enc.sequence_table[batch["seq"]].float())
    text = _text_from_table(enc.word_table, batch["words"], batch["nwords"]) if head.config["use_text"] else None
    feats = batch["feats"] if head.config["use_features"] else None
    groups = batch["groups"] if head.config.get("tree_levels") else None
    return head(elmo, text, feats, batch["lengths"], groups)


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
    device = device_of(head)
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


def train_head(head: Head, enc: Encoded, train_idx: Sequence[int], val_idx: Sequence[int],
               validate: Callable[[List[np.ndarray]], float], *, epochs: int, minutes: float, seed: int,
               batch_pages: int = 8, lr: float = 3e-3, progress: bool = True,
               average_epochs: int = 0, lr_schedule: str = "constant") -> Tuple[dict, Dict[str, Curve], dict]:
    """Adam on weighted BCE (a weak page's unlabelled nodes weigh 0); keeps the state with the best validation
    score. Returns (state, curves, run):
    `run` says how many epochs ran, which one was kept, and whether the minute budget cut training short.
    A model whose kept epoch ran whole is retrained exactly, on any machine, with `--epochs <best>`: the
    shuffles are seeded, and the best of the first `best` epochs is that one.

    `average_epochs` N > 0: the head kept is instead the uniform average of its weights after every step
    of the last N epochs (stochastic weight averaging, SWA), and validation picks no epoch: a remedy for
    the noise of choosing an epoch on ~120 validation pages. The averaging consumes no random numbers, so
    the trajectory, and `curves["val_score"]`, are the ones the same seed gives without it;
    `curves["val_average"]` is the average's validation score per epoch.

    `lr_schedule`: "constant" (every shipped model) or "cosine", the learning rate decayed per step from
    `lr` to 0 over `epochs` (a minute budget that ends training early leaves it where it got to): at a
    constant rate the validation score moves by about 0.01 from one epoch to the next.

    Both were measured on two WCXB folds and lost 0.004-0.006 there (docs/evaluation.md, "Weight averaging,
    a decaying rate"); they stay for ablations."""
    if lr_schedule not in LR_SCHEDULES:
        raise ValueError(f"lr_schedule must be one of {', '.join(LR_SCHEDULES)}, got {lr_schedule!r}")
    rng = random.Random(seed)
    device = device_of(head)
    enc = to_device(enc, device)
    # pages whose every node was skipped (encode_pages), or whose weak labels name no node, have nothing to
    # learn from
    order = [i for i in train_idx if len(enc.pages[i]["y"])
             and not (enc.pages[i].get("known") and not bool(enc.pages[i]["w"].any()))]
    if not order:
        raise ValueError("no training page has a node to learn from")
    ys = torch.cat([enc.pages[i]["y"][enc.pages[i]["w"] > 0] if enc.pages[i].get("known") else enc.pages[i]["y"]
                    for i in order])  # the balance of the labelled nodes only
    pos = float(ys.sum())
    pos_weight = torch.tensor(min(max((len(ys) - pos) / max(pos, 1.0), 1.0), 10.0), device=device)
    optimizer = torch.optim.Adam(head.parameters(), lr=lr)
    scheduler = None
    curves = {"train_loss": Curve(), "val_score": Curve()}
    best_state, best_score = None, -1.0
    run = {"epochs_run": 0, "best_epoch": 0, "best_epoch_whole": True, "stopped_by": "epochs"}
    average, average_from = None, epochs + 1
    if average_epochs:
        average = torch.optim.swa_utils.AveragedModel(head)
        average_from = max(1, epochs - average_epochs + 1)
        curves["val_average"] = Curve()
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
        if lr_schedule == "cosine" and scheduler is None:  # every epoch has as many batches as the first
            total_steps = len(batches) * epochs
            scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step, n=total_steps: cosine_factor(step, n))
        total, count, whole = 0.0, 0, True
        for batch_idx in progress_bar(batches, desc=f"train head epoch {epoch}", unit="batch", disable=not progress):
            batch = _batch(enc, [enc.pages[i] for i in batch_idx], device)
            logits = head_logits(head, enc, batch)
            loss_all = F.binary_cross_entropy_with_logits(logits, batch["y"], pos_weight=pos_weight, reduction="none")
            loss = (loss_all * batch["w"]).sum() / batch["w"].sum().clamp(min=1e-6)
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(head.parameters(), 5.0)
            optimizer.step()
            if scheduler is not None:
                scheduler.step()
            if epoch >= average_from:
                average.update_parameters(head)
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
        if epoch >= average_from:
            averaged = validate(predict(average.module, enc, val_idx))
            curves["val_average"].add(epoch, averaged)
            log(f"  epoch {epoch}: validation of the average of epochs {average_from}-{epoch} {averaged:.4f}")
        if time.monotonic() > deadline:
            if epoch < epochs:
                run["stopped_by"] = "minutes"
            break
    if average is not None and int(average.n_averaged):
        best_state = {k: v.detach().clone() for k, v in average.module.state_dict().items()}
        run.update(kept="average", average_epochs=[average_from, run["epochs_run"]],
                   average_steps=int(average.n_averaged))
    elif average is not None:  # the minute budget ended training before the averaging began
        run.update(kept="best epoch", average_epochs=None)
    head.load_state_dict(best_state)
    head.eval()
    return best_state, curves, run
