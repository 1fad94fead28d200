"""`edrew train --dataset wcxb|swde|simple PATH --out DIR`: pre-train the biLM, train the classifier.

Writes a model directory (ELMo options + HDF5 weights, head, card with threshold, metrics, checksums)
and training.png; with several --variant values one directory per variant and an ablation table.
"""
from __future__ import annotations

import argparse
import os
import sys

DATASET_ENV = {"wcxb": "EDREW_WCXB", "swde": "EDREW_SWDE"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dataset", choices=("wcxb", "swde", "simple"), required=True)
    parser.add_argument("path", nargs="?", default=None, help="dataset folder (default $EDREW_WCXB / $EDREW_SWDE)")
    parser.add_argument("--out", required=True, help="model directory to write")
    parser.add_argument("--variant", default="d",
                        help="a (reTPS only), b (+text), c (+features), d (+page context); a comma list "
                             "trains each on the same split (an ablation) (default: %(default)s)")
    parser.add_argument("--pretrain-html", default=None,
                        help="folder of HTML files to pre-train the biLM on (default: the training pages)")
    parser.add_argument("--pretrain-minutes", type=float, default=15.0)
    parser.add_argument("--pretrain-steps", type=int, default=None)
    parser.add_argument("--max-minutes", type=float, default=55.0, help="budget for the whole run")
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--threads", type=int, default=1,
                        help="torch threads (at most 2 here: on a busy 2-core machine 1 is fastest)")
    parser.add_argument("--val-fraction", type=float, default=0.1)
    parser.add_argument("--test-fraction", type=float, default=0.0,
                        help="held-out pages (grouped by domain/site) for the reported test metrics")
    parser.add_argument("--limit", type=int, default=None, help="use an evenly spaced sample of N pages")
    parser.add_argument("--sites", default=None, help="swde: comma list of sites")
    parser.add_argument("--attrs", default=None, help="swde: comma list of attributes")
    parser.add_argument("--labels", default=None, help="simple: label file (default PATH/labels.jsonl)")
    parser.add_argument("--metric", choices=("auto", "word", "node"), default="auto",
                        help="validation metric for the threshold and early stopping (auto: word-F1 for "
                             "wcxb, node F1 otherwise)")
    parser.add_argument("--no-progress", action="store_true")


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from ..model.train import TrainConfig, ablation_table, train

    path = args.path or os.environ.get(DATASET_ENV.get(args.dataset, ""), "")
    if not path:
        env = DATASET_ENV.get(args.dataset)
        print(f"edrew train: give the {args.dataset} folder" + (f" or set {env}" if env else ""), file=sys.stderr)
        return 2
    variants = tuple(v.strip() for v in args.variant.split(",") if v.strip())
    config = TrainConfig(
        dataset=args.dataset, path=Path(path), out=Path(args.out), variants=variants,
        pretrain_html=Path(args.pretrain_html) if args.pretrain_html else None,
        pretrain_minutes=args.pretrain_minutes, pretrain_steps=args.pretrain_steps,
        max_minutes=args.max_minutes, epochs=args.epochs, seed=args.seed, threads=args.threads,
        val_fraction=args.val_fraction, test_fraction=args.test_fraction, limit=args.limit,
        sites=args.sites.split(",") if args.sites else None, attrs=args.attrs.split(",") if args.attrs else None,
        labels_file=Path(args.labels) if args.labels else None, progress=not args.no_progress,
        metric=args.metric, command="edrew train " + " ".join(sys.argv[2:] if len(sys.argv) > 2 else []),
    )
    try:
        summary = train(config)
    except (ValueError, OSError) as exc:
        print(f"edrew train: {exc}", file=sys.stderr)
        return 1
    table = ablation_table(summary)
    if len(variants) > 1:
        (Path(args.out) / "ablation.md").write_text(table + "\n", encoding="utf-8")
    print(table)
    print(f"total {summary['total_seconds']:.0f} s; model(s) in {args.out}")
    return 0
