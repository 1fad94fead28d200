"""`edrew train --dataset wcxb|swde|simple PATH --out DIR`: pre-train the biLM, train the classifier.

`--dataset NAME=KIND:PATH`, repeated, trains on several datasets at once (data.mix), each split by group
on its own (the test pages of each held out, the card's per-dataset metrics).

Writes a model directory (ELMo options + HDF5 weights, head, card with threshold, metrics, checksums)
and training.png; with several --variant values one directory per variant and an ablation table.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import List

from ..data.splits import GROUP_KEYS
from .options import (
    DATASET_HELP,
    LR_SCHEDULES,
    NODE_WEIGHTS,
    CommandError,
    UsageError,
    add_region_share,
    check_dataset,
    int_at_least,
    out_problem,
    report_errors,
    resolve_datasets,
    swde_filters,
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dataset", action="append", required=True, metavar="KIND|[NAME=]KIND:PATH",
                        help=DATASET_HELP)
    parser.add_argument("path", nargs="?", default=None, help="dataset folder (default $EDREW_WCXB / $EDREW_SWDE)")
    parser.add_argument("--out", required=True, help="model directory to write")
    parser.add_argument("--variant", default="d",
                        help="a (reTPS only), b (+text), c (+features), d (+page context); a comma list "
                             "trains each on the same split (an ablation) (default: %(default)s)")
    parser.add_argument("--pretrain-html", default=None,
                        help="folder of HTML files to pre-train the biLM on (default: the training pages)")
    parser.add_argument("--pretrain-extra", action="append", default=[], metavar="DIR",
                        help="a folder of HTML files whose pages the biLM pre-trains on besides the training "
                             "pages (or --pretrain-html); repeatable (unlabelled pages)")
    parser.add_argument("--bilm", default=None, metavar="MODEL_DIR",
                        help="reuse the biLM of an existing model folder ('default' for the shipped one): "
                             "no pre-training, only the classifier head is trained")
    parser.add_argument("--pretrain-minutes", type=float, default=15.0)
    parser.add_argument("--pretrain-steps", type=int, default=None)
    parser.add_argument("--max-minutes", type=float, default=55.0, help="budget for the whole run")
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--split-seed", type=int, default=None,
                        help="seed of the train/validation/test split alone (default: --seed), so that heads of "
                             "several seeds hold out the same pages")
    parser.add_argument("--threads", type=int_at_least(1), default=1,
                        help="torch threads (at most 2 here: on a busy 2-core machine 1 is fastest)")
    parser.add_argument("--device", default="cpu",
                        help="torch device to train on, e.g. cuda: the same steps and epochs as on the CPU, "
                             "faster; set --pretrain-steps and --epochs to follow a CPU recipe, since the minute "
                             "budgets buy more steps there (default: %(default)s)")
    parser.add_argument("--val-fraction", type=float, default=0.1)
    parser.add_argument("--test-fraction", type=float, default=0.0,
                        help="held-out pages (grouped by domain/site) for the reported test metrics")
    parser.add_argument("--group-by", choices=GROUP_KEYS, default="domain",
                        help="wcxb/simple: keep each registrable domain (default; uk.shop.com and shop.com "
                             "are one site) or each host on one side of the validation/test split; the "
                             "shipped models were trained with host")
    parser.add_argument("--limit", type=int, default=None, help="use an evenly spaced sample of N pages")
    parser.add_argument("--sites", default=None, help="swde: comma list of sites")
    parser.add_argument("--attrs", default=None, help="swde: comma list of attributes")
    parser.add_argument("--labels", default=None, help="simple: label file (default PATH/labels.jsonl)")
    parser.add_argument("--metric", choices=("auto", "word", "node"), default="auto",
                        help="validation metric for the threshold and early stopping (auto: word-F1 for "
                             "wcxb, node F1 otherwise)")
    add_region_share(parser, "0.7 with the word metric, none with the node metric; written to the model card")
    parser.add_argument("--features", type=int, default=None, metavar="N",
                        help="shallow features the head reads: the first N (16: without the four declared-kind "
                             "features, as models/default was trained; 26: with the six container features; "
                             "default: 20)")
    parser.add_argument("--no-progress", action="store_true")
    # Each measured against the shipped recipe and not kept (docs/evaluation.md); the defaults are that recipe.
    experimental = parser.add_argument_group("experimental (ablations, not used by shipped models)")
    experimental.add_argument("--skip-settled", action="store_true",
                              help="train a main-content model's head on pages without the nodes that extraction's "
                                   "rules settle whatever their score, as it reads them when it scores (an ablation: "
                                   "not better on WCXB; default: whole pages)")
    experimental.add_argument("--skip-empty-references", action="store_true",
                              help="leave out of the head's training and validation the pages whose reference text "
                                   "holds no word, as unannotated rather than all boilerplate (an ablation: worse on "
                                   "WCXB; default: they train with every node negative, as the shipped models did)")
    experimental.add_argument("--node-weights", choices=NODE_WEIGHTS, default="log",
                              help="each node's weight in the head's loss: log (0.5 + log(1 + words), as the shipped "
                                   "models) or page-share (its share of its page's words; an ablation, "
                                   "docs/evaluation.md) (default: log)")
    experimental.add_argument("--node-dim", type=int, default=48,
                              help="width of the head's node vector and output layer (default: %(default)s, as the "
                                   "shipped models)")
    experimental.add_argument("--context-dim", type=int, default=32,
                              help="width of each direction of the head's page BiLSTM (default: %(default)s, as the "
                                   "shipped models)")
    experimental.add_argument("--dropout", type=float, default=0.2,
                              help="dropout before the head's node and output layers (default: %(default)s, as the "
                                   "shipped models; docs/evaluation.md, \"More dropout\")")
    experimental.add_argument("--bilm-width", type=int, default=1, choices=(1, 2, 3, 4),
                              help="the pre-trained biLM's widths (character-CNN filters, projection, LSTM cell) times "
                                   "this (default: %(default)s, as the shipped models; an ablation)")
    experimental.add_argument("--tree-levels", type=int, default=0, metavar="L",
                              help="the head also reads, for each of the node's first L ancestor elements, the mean "
                                   "vector of the nodes under it (0-4; default: %(default)s, as the shipped models; "
                                   "docs/evaluation.md, \"DOM context\")")
    experimental.add_argument("--average-epochs", type=int, default=0, metavar="N",
                              help="keep the average of the head's weights over its last N epochs instead of its best "
                                   "validation epoch (default: %(default)s, as the shipped models; docs/evaluation.md, "
                                   "\"Weight averaging, a decaying rate\")")
    experimental.add_argument("--lr-schedule", choices=LR_SCHEDULES, default="constant",
                              help="the head's learning rate over its epochs: constant (as the shipped models) or "
                                   "cosine (decayed to 0 by the last epoch; an ablation, docs/evaluation.md)")


def device_problem(name: str):
    """Why torch cannot train on device `name`, or None."""
    import torch

    try:
        device = torch.device(name)
    except RuntimeError as exc:
        return str(exc)
    if device.type == "cuda" and not torch.cuda.is_available():
        return "this torch build sees no CUDA device"
    return None


def _model_dir(name):
    if not name:
        return None
    from ..model.files import model_directory

    return model_directory(name)


def _check_pretrain_html(folder: str, option: str = "--pretrain-html") -> None:
    """A UsageError before any work when --pretrain-html (or --pretrain-extra) names no folder of HTML files."""
    from ..training.pretrain import html_files

    if not Path(folder).is_dir():
        raise UsageError(f"{option} {folder}: "
                         + ("not a folder" if Path(folder).exists() else "folder does not exist"))
    if not html_files(Path(folder)):
        raise UsageError(f"{option} {folder}: no .html, .htm, .xhtml or .gz HTML files in it")


def _new_folders(out: Path) -> List[Path]:
    """`out` and those of its parents that do not exist yet, deepest first: a run that fails removes them
    again while they are empty, rather than leave an empty model folder that looks like a result."""
    missing = []
    out = out.absolute()
    for folder in (out, *out.parents):
        if folder.exists():
            break
        missing.append(folder)
    return missing


def run(args: argparse.Namespace) -> int:
    return report_errors("train", _run, args)


def _run(args: argparse.Namespace) -> int:
    from ..model.files import require_torch

    require_torch("training")  # before anything is read or written; cli.main prints it in one line
    from ..model.elmo import wide_options
    from ..training.train import TrainConfig, ablation_table, check_config, train

    variants = tuple(v.strip() for v in args.variant.split(",") if v.strip())
    problem = device_problem(args.device)
    if problem:
        raise UsageError(f"--device {args.device}: {problem}")
    problem = out_problem(args.out)
    if problem:
        raise UsageError(f"--out {args.out}: {problem}")
    resolve_datasets(args)
    path = check_dataset(args) if args.dataset != "mix" else str(args.datasets[0].path)
    sites, attrs = swde_filters(path, args.sites, args.attrs) if args.dataset == "swde" else (None, None)
    if args.pretrain_html:
        _check_pretrain_html(args.pretrain_html)
    for folder in args.pretrain_extra:
        _check_pretrain_html(folder, "--pretrain-extra")
    if args.bilm:  # its card now, rather than after the pages are read (training checks its files)
        from ..model.files import ModelError, read_card

        try:
            read_card(_model_dir(args.bilm), verify=False)
        except ModelError as exc:
            raise UsageError(f"--bilm: {exc}") from None
    config = TrainConfig(
        dataset=args.dataset, path=Path(path), out=Path(args.out), variants=variants,
        pretrain_html=Path(args.pretrain_html) if args.pretrain_html else None,
        pretrain_extra=tuple(Path(p) for p in args.pretrain_extra), datasets=args.datasets,
        pretrain_minutes=args.pretrain_minutes, pretrain_steps=args.pretrain_steps,
        max_minutes=args.max_minutes, epochs=args.epochs, seed=args.seed, split_seed=args.split_seed,
        threads=args.threads,
        val_fraction=args.val_fraction, test_fraction=args.test_fraction, group_by=args.group_by,
        limit=args.limit, sites=sites, attrs=attrs,
        labels_file=Path(args.labels) if args.labels else None, progress=not args.no_progress,
        metric=args.metric, region_share=args.region_share, device=args.device, bilm_from=_model_dir(args.bilm),
        skip_settled=args.skip_settled, skip_empty_references=args.skip_empty_references,
        node_weights=args.node_weights,
        node_dim=args.node_dim, context_dim=args.context_dim, tree_levels=args.tree_levels, dropout=args.dropout,
        average_epochs=args.average_epochs, lr_schedule=args.lr_schedule,
        **({} if args.features is None else {"n_features": args.features}),
        options=wide_options(args.bilm_width),
        command="edrew train " + " ".join(sys.argv[2:] if len(sys.argv) > 2 else []),
    )
    try:
        check_config(config)
    except ValueError as exc:  # an option's value: before the model folder is made
        raise UsageError(str(exc)) from None
    made = _new_folders(Path(args.out))
    try:
        summary = train(config)
    except (ValueError, OSError) as exc:  # a broken dataset file (DatasetError names it), too few pages
        for folder in made:
            try:
                folder.rmdir()
            except OSError:  # the run wrote something there: keep it
                break
        raise CommandError(str(exc)) from None
    table = ablation_table(summary)
    if len(variants) > 1:
        (Path(args.out) / "ablation.md").write_text(table + "\n", encoding="utf-8")
    print(table)
    print(f"total {summary['total_seconds']:.0f} s; model(s) in {args.out}")
    return 0
