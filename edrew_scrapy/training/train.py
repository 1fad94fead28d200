"""Training: (1) pre-train the ELMo biLM on reTPS sequences, (2) train the classifier head on labelled nodes.

pretrain.py pre-trains the biLM, head_training.py trains the head on its frozen outputs, thresholds.py
holds the validation metrics; this module reads the data, splits it, runs the steps and writes the model
folders with their cards. Everything is seeded; runs are reproducible on CPU.
"""
from __future__ import annotations

import json
import random
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
import torch

from ..data import words
from ..data.splits import GROUP_KEYS, group_key
from ..model.elmo import ElmoBiLm, default_options
from ..model.features import DEFAULT_FEATURES, MAX_TREE_LEVELS, N_FEATURES, is_tree_levels
from ..model.files import is_number, is_positive_int, write_card
from ..model.head import Head, head_config
from ..model.scorer import save_model
from ..page import Page
from .head_training import LR_SCHEDULES, NODE_WEIGHTS, encode_pages, predict, to_device, train_head
from .pretrain import html_files, pretrain_bilm, sequences_from_html, sequences_from_pages
from .support import Curve, log, plot_curves, progress_bar
from .thresholds import choose_threshold, choose_threshold_within_noise, node_prf, page_word_f1, page_word_f1s

# how a snippet set's weak labels train the head, for the card
WEAK_RULE = ("a node holding a must-keep snippet positive, one holding a must-drop snippet negative, every other "
             "node left out of the loss; a page with a snippet found in no node skipped (data.snippets); neither "
             "validation nor the card's metrics read these pages")


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


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
    elif dataset == "mix":
        raise ValueError("a mix of datasets is read with data.mix.load_mixed")
    else:
        raise ValueError(f"unknown dataset {dataset!r}")
    pages = list(progress_bar(it, total=total, desc=f"load {dataset}", unit="page", disable=not progress))
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
    # the key that keeps a site on one side of the validation/test split (data.splits): "domain", the
    # registrable domain of the host, or "host", as models/default and models/swde-book were trained
    group_by: str = "domain"
    # the pages an evaluation split holds out from this model ({"split", "group_by", "pages", "sha1"}, from
    # edrew evaluate), written to the card so that a reused fold model is checked against its split
    held_out: Optional[dict] = None
    limit: Optional[int] = None
    sites: Optional[List[str]] = None
    attrs: Optional[List[str]] = None
    labels_file: Optional[Path] = None
    # dataset "mix": the datasets read together (data.mix.DatasetSpec), each split by group on its own
    datasets: Tuple = ()
    # HTML folders whose reTPS the biLM pre-trains on besides the training pages' (unlabelled pages)
    pretrain_extra: Tuple[Path, ...] = ()
    options: dict = field(default_factory=default_options)
    pretrain_steps: Optional[int] = None
    # a model folder whose biLM (ELMo options + weights) is reused as is: no pre-training, only the head
    # is trained (a user's own labels on the shipped biLM; or CV heads on each fold's own biLM)
    bilm_from: Optional[Path] = None
    # the seed of the train/validation/test split alone (None: --seed): heads of several seeds on one split
    # measure the spread of two trainings on the same held-out pages
    split_seed: Optional[int] = None
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
    # whatever their score (rules.settled), as Scorer.score reads pages at inference; measured and not
    # kept (docs/method-choices.md). Attribute models always train on whole pages: extract() scores every node.
    skip_settled: bool = False
    # shallow features the head reads: the first n of features.FEATURE_NAMES. 16 (without the four
    # declared-kind features) reproduces models/default as shipped; 20, the default, is what the
    # cross-validated fold models read (docs/model.md, "models/default"); 26 adds the container features
    n_features: int = DEFAULT_FEATURES
    # each node's weight in the head's loss (head_training.NODE_WEIGHTS): "log", as every shipped model, or
    # "page-share", the node's share of its page's words (docs/evaluation.md)
    node_weights: str = "log"
    # the head's widths (head.head_config): node_dim, the node vector and the output layer; context_dim, each
    # direction of the page BiLSTM. 48 and 32 are every shipped model's; wider heads are an ablation
    # (docs/evaluation.md, "A wider head")
    node_dim: int = 48
    context_dim: int = 32
    # dropout before the head's node layer and its output layer (head.head_config): 0.2, every shipped model's;
    # others are an ablation (docs/evaluation.md, "More dropout")
    dropout: float = 0.2
    # ancestor levels the head pools over (head.tree_pool): 0, every shipped model's head, or 1-4
    # (docs/evaluation.md, "DOM context")
    tree_levels: int = 0
    # 0: the head kept is its best validation epoch (every shipped model); N > 0: the average of its weights
    # over the last N epochs (head_training.train_head; docs/evaluation.md, "Weight averaging, a decaying rate")
    average_epochs: int = 0
    # the head's learning rate over its epochs (head_training.LR_SCHEDULES): "constant", every shipped model's,
    # or "cosine" (docs/evaluation.md, "Weight averaging, a decaying rate")
    lr_schedule: str = "constant"
    # True: a page whose reference text holds no word (data.words) is unlabelled rather than a page of
    # boilerplate, and neither trains nor validates the head. WCXB dev has 21 such pages (IMDb's top 250, a
    # shop's category page, ...): their content is there, the annotation is not, and as all-negative pages
    # they teach that a listing's items are noise. False, every shipped model's training: they train with
    # every node negative (docs/evaluation.md, "Pages without a reference")
    skip_empty_references: bool = False


def check_config(config: TrainConfig) -> None:
    """ValueError naming the option, before any page is read or a minute spent pre-training."""
    from ..model.head import VARIANTS

    if config.group_by not in GROUP_KEYS:
        raise ValueError(f"--group-by must be domain or host, got {config.group_by!r}")
    if not (isinstance(config.n_features, int) and 0 < config.n_features <= N_FEATURES):
        raise ValueError(f"--features must be 1..{N_FEATURES}, got {config.n_features!r}")
    if config.node_weights not in NODE_WEIGHTS:
        raise ValueError(f"--node-weights must be one of {', '.join(NODE_WEIGHTS)}, got {config.node_weights!r}")
    for name in ("node_dim", "context_dim"):
        value = getattr(config, name)
        if not (is_positive_int(value) and value <= 1024):
            raise ValueError(f"--{name.replace('_', '-')} must be 1..1024, got {value!r}")
    if not (is_number(config.dropout) and 0 <= config.dropout < 1):
        raise ValueError(f"--dropout must be a number in [0, 1), got {config.dropout!r}")
    if not is_tree_levels(config.tree_levels):
        raise ValueError(f"--tree-levels must be 0..{MAX_TREE_LEVELS}, got {config.tree_levels!r}")
    if not (is_positive_int(config.average_epochs) or config.average_epochs == 0):
        raise ValueError(f"--average-epochs must be 0 or a positive number of epochs, got {config.average_epochs!r}")
    if config.lr_schedule not in LR_SCHEDULES:
        raise ValueError(f"--lr-schedule must be one of {', '.join(LR_SCHEDULES)}, got {config.lr_schedule!r}")
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
    if config.threads is not None and config.threads < 1:  # torch.set_num_threads would raise later
        raise ValueError(f"--threads must be at least 1, got {config.threads}")


def _html_corpus(folder: Path, sequences: int) -> dict:
    """A folder of unlabelled pre-training HTML as the card lists it: licence, pages, distinct reTPS."""
    from ..data.mix import credit_of_folder

    return dict(credit_of_folder(folder), pages=len(html_files(folder)), sequences=sequences)


def _metric_name(config: TrainConfig) -> str:
    if config.metric != "auto":
        return config.metric
    return "word" if config.dataset in ("wcxb", "mix") else "node"


def _region_share(config: TrainConfig, metric: str) -> Optional[float]:
    from ..rules import MAIN_REGION_SHARE

    if config.region_share == "auto":
        return MAIN_REGION_SHARE if metric == "word" else None
    return None if config.region_share is None else float(config.region_share)


def train(config: TrainConfig) -> dict:
    """The whole run; writes one model directory per variant and returns a summary."""
    from .evaluate import reference_text

    check_config(config)
    started = time.monotonic()
    deadline = started + config.max_minutes * 60
    torch.set_num_threads(config.threads)
    seed_everything(config.seed)
    out = Path(config.out)
    out.mkdir(parents=True, exist_ok=True)

    weak_stats: dict = {}
    if config.dataset == "mix":
        from ..data.mix import load_mixed

        labelled = load_mixed(config.datasets, config.progress, config.limit, weak_stats)
    else:
        labelled = load_labelled(config.dataset, config.path, config.limit, config.sites, config.attrs,
                                 config.labels_file, config.progress)
    labelled = [lp for lp in labelled if lp.page.nodes]
    if len(labelled) < 3:
        raise ValueError(f"{config.path}: only {len(labelled)} labelled pages with nodes; need at least 3")
    if not any(any(lp.labels) for lp in labelled):
        attrs = f" {','.join(config.attrs)}" if config.attrs else ""
        what = {"swde": "no node matches a value of the attributes" + attrs,
                "wcxb": "no node aligns with the reference texts"}.get(config.dataset, "no node matches the labels")
        raise ValueError(f"{config.path}: {what}; nothing to learn from")
    pages = [lp.page for lp in labelled]
    labels = [list(lp.labels) for lp in labelled]
    references = [reference_text(lp) for lp in labelled]
    split_seed = config.seed if config.split_seed is None else config.split_seed
    if config.dataset == "swde":
        # the thesis's protocol: unique pages shuffled and cut (sites on both sides; 2 sites here)
        from ..data.splits import swde_split

        train_idx, val_idx, test_idx = swde_split(
            labelled, (1.0 - config.val_fraction - config.test_fraction, config.val_fraction, config.test_fraction),
            seed=split_seed)
        groups = [lp.domain for lp in labelled]  # the sites, for the message below
        split_rule = "SWDE protocol: unique pages, seeded shuffle (edrew_scrapy.data.splits.swde_split)"
    elif config.dataset == "mix":
        from ..data.mix import split_per_dataset

        key = group_key(config.group_by)
        groups = [key(lp) for lp in labelled]
        train_idx, val_idx, test_idx = split_per_dataset(labelled, key, config.val_fraction, config.test_fraction,
                                                         split_seed)
        split_rule = (f"each dataset's pages grouped by "
                      f"{'host' if config.group_by == 'host' else 'registrable domain'}, seeded shuffle of its "
                      "groups (data.mix.split_per_dataset); a group held out in one dataset is held out in all")
    else:
        key = group_key(config.group_by)
        groups = [key(lp) for lp in labelled]
        train_idx, val_idx, test_idx = split_by_group(groups, config.val_fraction, config.test_fraction, split_seed)
        split_rule = (f"pages grouped by {'host' if config.group_by == 'host' else 'registrable domain'}, "
                      "seeded shuffle of groups")
    if not train_idx:  # e.g. every page from one domain, which then goes whole to validation
        raise ValueError(f"{config.path}: no pages left to train on: each domain goes whole to validation or test, "
                         f"and the {len(labelled)} pages come from {len(set(groups))} domain(s)")
    if not val_idx:
        val_idx = train_idx[-1:]
    lm_idx = train_idx  # the biLM learns from markup alone: an unannotated page still serves it
    # pages of weak labels (data.snippets) train the head but have no reference text: they neither choose
    # the epoch and threshold nor count in the card's metrics; their test pages are still held out
    weak = {i for i, lp in enumerate(labelled) if lp.known is not None}
    weak_val_idx = [i for i in val_idx if i in weak]  # held aside, for the card's counts
    val_idx = [i for i in val_idx if i not in weak] or [i for i in train_idx if i not in weak][-1:]
    scored_test_idx = [i for i in test_idx if i not in weak]
    for name, counts in weak_stats.items():
        log(f"{name}: weak labels on {counts.labelled_pages} of {counts.pages} pages; {counts.skipped_unmatched} "
            f"skipped (a snippet matched no node), {counts.without_snippets} without snippets")
    unreferenced = [i for i in train_idx + val_idx if not words(references[i]) and i not in weak]
    if config.skip_empty_references and unreferenced:
        dropped = set(unreferenced)
        train_idx = [i for i in train_idx if i not in dropped]
        val_idx = [i for i in val_idx if i not in dropped]
        if not train_idx or not val_idx:
            raise ValueError(f"{config.path}: --skip-empty-references leaves no "
                             f"{'training' if not train_idx else 'validation'} page with a reference text")
        log(f"left out {len(unreferenced)} training/validation pages whose reference holds no word")
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
        # every folder of unlabelled HTML with its licence, for the card: a shipped biLM may only have read
        # pages that may train a shipped model (the labelled training pages are in training.datasets)
        corpora = []
        if config.pretrain_html:
            sequences = sequences_from_html(config.pretrain_html, progress=config.progress)
            pretrain_source = str(config.pretrain_html)
            corpora.append(_html_corpus(config.pretrain_html, len(sequences)))
        else:
            sequences = sequences_from_pages(pages[i] for i in lm_idx)
            pretrain_source = f"reTPS of the {len(lm_idx)} training pages"
        for folder in config.pretrain_extra:
            extra = sequences_from_html(folder, progress=config.progress)
            sequences += extra
            pretrain_source += f" + {len(extra)} distinct reTPS of the HTML under {folder}"
            corpora.append(_html_corpus(folder, len(extra)))
        if not sequences:  # no step would run, and there would be no loss to report
            raise ValueError(f"{pretrain_source}: no text nodes to pre-train the biLM on")
    bilm = bilm.to(device)
    if not config.bilm_from:
        t0 = time.monotonic()
        pre_minutes = max(min(config.pretrain_minutes, (deadline - t0) / 60 * 0.4), 0.05)
        pre_curve, pre_info = pretrain_bilm(bilm, sequences, minutes=pre_minutes, seed=config.seed,
                                            max_steps=config.pretrain_steps, progress=config.progress)
        pre_info.update(source=pretrain_source, seconds=round(time.monotonic() - t0, 1),
                        **({"html": corpora} if corpora else {}))
        log(f"pre-trained the biLM: {pre_info['steps']} steps, loss {pre_info['final_loss']:.3f}, "
            f"{len(sequences)} sequences, {pre_info['seconds']:.0f} s")

    # 2. frozen encodings, shared by every variant
    metric = _metric_name(config)
    region_share = _region_share(config, metric)
    skip = None
    if region_share is not None and config.skip_settled:
        from ..rules import settled as skip
    t0 = time.monotonic()
    # the frozen encodings every head trains on
    enc = to_device(encode_pages(bilm, pages, labels, progress=config.progress, skip=skip,
                                 n_features=config.n_features, node_weights=config.node_weights,
                                 known=[lp.known for lp in labelled]), device)
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
               "split": {"train": len(train_idx), "val": len(val_idx) + len(weak_val_idx), "test": len(test_idx)}}
    if config.dataset == "mix":
        from ..data.mix import credit_of, dataset_of

        sets = [credit_of(spec) for spec in config.datasets]
        for entry in sets:
            entry.update({side: sum(dataset_of(labelled[i]) == entry["name"] for i in idx)
                          for side, idx in (("train", train_idx), ("val", val_idx + weak_val_idx), ("test", test_idx))})
        credit = {"name": " + ".join(e["dataset"] for e in sets), "credit": "; ".join(e["credit"] for e in sets),
                  "licence": ", ".join(dict.fromkeys(e["licence"] for e in sets))}
        names = [dataset_of(lp) for lp in labelled]
        held = {name: held_out_record(labelled, test_idx, name) for name in dict.fromkeys(names)}
    else:
        credit, sets, names, held = DATASET_CREDITS[config.dataset], None, None, None
    token_dim = options["lstm"]["projection_dim"]
    for k, variant in enumerate(config.variants):
        seed_everything(config.seed)
        t0 = time.monotonic()
        minutes_left = max((deadline - t0) / 60 / (len(config.variants) - k), 0.05)
        head = Head(head_config(variant, bilm.output_dim, bilm.num_layers, token_dim,
                                node_dim=config.node_dim, context_dim=config.context_dim,
                                tree_levels=config.tree_levels, dropout=config.dropout,
                                n_features=config.n_features)).to(device)
        _, curves, head_run = train_head(head, enc, train_idx, val_idx,
                               lambda probs: choose_threshold(lambda t: val_score(probs, t))[1],
                               epochs=config.epochs, minutes=minutes_left, seed=config.seed,
                               progress=config.progress, average_epochs=config.average_epochs,
                               lr_schedule=config.lr_schedule)
        if region_share is None:
            val_probs = predict(head, enc, val_idx)
            threshold = final_threshold(metric, val_probs, val_idx, pages, references, None, val_score)
            metrics = {"validation": _metrics(val_probs, val_idx, pages, labels, references, threshold, None)}
            if scored_test_idx:
                metrics["test"] = _metrics(predict(head, enc, scored_test_idx), scored_test_idx, pages, labels,
                                           references, threshold, None)
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
                "split_rule": split_rule, **({"held_out": config.held_out} if config.held_out else {}),
                **({"datasets": sets, "test_pages": held} if sets else {}),
                **({"weak_labels": {name: dict(c.as_dict(), rule=WEAK_RULE) for name, c in weak_stats.items()}}
                   if weak_stats else {}),
                "seed": config.seed, **({"split_seed": split_seed} if split_seed != config.seed else {}),
                "threads": config.threads, "device": device.type, "pretrain": pre_info,
                "threshold_rule": ("the grid value nearest 0.5 within one standard error of the best validation "
                                   "mean" if metric == "word" else "the best validation score"),
                "head_pages": "without the nodes extract.settled marks" if skip else "whole pages",
                "node_weights": config.node_weights, "average_epochs": config.average_epochs,
                "lr_schedule": config.lr_schedule,
                "empty_references": {"pages": len(unreferenced),
                                     "use": "left out" if config.skip_empty_references else "every node negative"},
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
            threshold, metrics = _choose_on_shipped_path(target, pages, labels, references, val_idx, scored_test_idx,
                                                         region_share, metric, val_score, names)
            head_seconds = time.monotonic() - t0
            card.update(threshold=threshold, metrics=metrics)
            card["training"].update(threshold_scores="extract.score_pages (settled nodes unscored)",
                                    head_seconds=round(head_seconds, 1),
                                    total_seconds=round(time.monotonic() - started, 1))
            written = write_card(target, dict(card, head=head.config))
        plot_curves(target / "training.png",
                    {"pretrain biLM loss": pre_curve, "head train loss": curves["train_loss"],
                     f"validation {metric}-F1": curves["val_score"],
                     **({f"validation {metric}-F1, weight average": curves["val_average"]}
                        if "val_average" in curves else {})},
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
    from ..model import files
    from ..model.scorer import build_bilm, check_bilm_weights

    try:
        card = files.read_card(directory)
        options = files.read_options(directory / files.OPTIONS)
        check_bilm_weights(options, directory / files.OPTIONS, directory / files.WEIGHTS)
        bilm = build_bilm(options, directory / files.OPTIONS)
        files.read_elmo_weights(directory / files.WEIGHTS, bilm)
    except files.ModelError as exc:
        raise ValueError(f"cannot reuse the biLM: {exc}") from None
    training = card.get("training")
    earlier = training.get("pretrain") if isinstance(training, dict) else None
    earlier = dict(earlier) if isinstance(earlier, dict) else {}  # a record only: never worth a failure
    return options, bilm, dict(earlier, reused_from=str(directory), seconds=0.0)


def shipped_probs(directory: Path, pages: Sequence[Page]) -> List[np.ndarray]:
    """P(relevant) per node as extract() computes it with the model in `directory`, page by page."""
    from ..extract import score_pages
    from ..model.scorer import load_model

    scorer = load_model(directory)
    return [np.asarray(score_pages(scorer, [page])[0]) for page in pages]


def final_threshold(metric: str, val_probs, val_idx, pages, references, region_share, val_score: Callable) -> float:
    """The card's threshold. With the word metric (a mean over pages) the grid value nearest 0.5 within one
    standard error of the best (`choose_threshold_within_noise`): the best of 19 values on a hundred-odd
    validation pages is partly noise. The node metric pools all nodes, with no per-page spread to weigh the
    gain against: its best value."""
    if metric == "word":
        val_pages, val_refs = [pages[i] for i in val_idx], [references[i] for i in val_idx]
        return choose_threshold_within_noise(
            lambda t: page_word_f1s(val_probs, val_pages, val_refs, t, region_share))[0]
    return choose_threshold(lambda t: val_score(val_probs, t))[0]


def _choose_on_shipped_path(directory: Path, pages, labels, references, val_idx, test_idx, region_share,
                            metric: str, val_score: Callable, names=None) -> Tuple[float, dict]:
    """(threshold, metrics) of a written main-content model, both on extract()'s scores; with `names` (the
    dataset of each page of a mix) also each dataset's own, "validation/NAME" and "test/NAME"."""
    val_probs = shipped_probs(directory, [pages[i] for i in val_idx])
    threshold = final_threshold(metric, val_probs, val_idx, pages, references, region_share, val_score)
    metrics = {"validation": _metrics(val_probs, val_idx, pages, labels, references, threshold, region_share)}
    sides = [("validation", val_idx, val_probs)]
    if test_idx:
        test_probs = shipped_probs(directory, [pages[i] for i in test_idx])
        metrics["test"] = _metrics(test_probs, test_idx, pages, labels, references, threshold, region_share)
        sides.append(("test", test_idx, test_probs))
    for side, idx, probs in sides if names else ():
        for name in dict.fromkeys(names[i] for i in idx):
            mine = [k for k, i in enumerate(idx) if names[i] == name]
            metrics[f"{side}/{name}"] = _metrics([probs[k] for k in mine], [idx[k] for k in mine], pages, labels,
                                                 references, threshold, region_share)
    return threshold, metrics


def held_out_record(labelled: Sequence, test_idx: Sequence[int], name: str) -> dict:
    """The test pages of dataset `name` in a mix: their number and the sha1 of their sorted ids, which
    `edrew evaluate --split holdout` prints, so that a model is scored on exactly the pages it held out."""
    import hashlib

    from ..data.mix import dataset_of

    ids = sorted(str(labelled[i].page_id) for i in test_idx if dataset_of(labelled[i]) == name)
    return {"pages": len(ids), "sha1": hashlib.sha1("\n".join(ids).encode("utf-8")).hexdigest()}


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
                        f"{m['node_f1']:.3f} | {m['word_f1']:.3f} | {info['threshold']:.2f} | "
                        f"{info['head_seconds']:.0f} |")
    return "\n".join(rows)
