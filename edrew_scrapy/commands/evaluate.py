"""`edrew evaluate --dataset swde|wcxb|simple PATH`: node P/R/F1 and word-F1 of extractors, per group.
(`--dataset pdf DIR` scores PDF article parsers on a labelled set instead: evaluate_pdf.py.)

Compares, on the same test pages of each split: our model (--model, or --train-model to train it on
each split's training pages; --also-model scores other model folders beside --model, e.g. a
leave-one-dataset-out head beside the shipped default, with paired differences), the reTPS baselines
(--baselines, trained on each split's training pages), the peers (trafilatura, readability, resiliparse,
rs-trafilatura: training/peers.py) and the oracle (the labels themselves: the ceiling of a node classifier).
Prints a table and writes summary.json, summary.csv, pages.csv and chart.png under --out. `--snippets` scores
pages that have must-keep / must-drop snippets instead of a reference (training/snippets.py).

`--dataset NAME=KIND:PATH`, repeated, evaluates several datasets in one run, reported per dataset and per
dataset and page type (never only pooled); `--split holdout` scores the test pages `edrew train` held out
of each dataset with the same --seed and fractions.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import sys
import tempfile
from pathlib import Path
from typing import List, Sequence, Tuple

from ..data.splits import GROUP_KEYS
from ..escape import printable
from ..rules import OPTIONAL_RULES
from .options import (
    DATASET_HELP,
    DATASET_KINDS,
    LR_SCHEDULES,
    NODE_WEIGHTS,
    CommandError,
    UsageError,
    add_region_share,
    add_threads,
    apply_region_share,
    apply_threads,
    check_dataset,
    dataset_path,
    int_at_least,
    non_negative,
    out_problem,
    resolve_datasets,
    swde_filters,
    threshold,
)

TEXT_EXTRACTORS = ("oracle", "trafilatura", "readability", "resiliparse", "rs-trafilatura", "all-nodes",
                   "trafilatura-comments")
# the extractors that are other tools (training/peers.py): checked before a page is read, cached by --peer-cache
PEERS = ("trafilatura", "readability", "resiliparse", "rs-trafilatura", "trafilatura-comments")
DEFAULT_EXTRACTORS = "oracle,trafilatura,readability"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dataset", action="append", required=True, metavar="KIND|[NAME=]KIND:PATH",
                        help=DATASET_HELP + "; pdf: a labelled set of PDF articles (python -m "
                                            "edrew_scrapy.pdf.corpus DIR)")
    parser.add_argument("path", nargs="?", default=None,
                        help="dataset folder (default: $EDREW_WCXB or $EDREW_SWDE)")
    add_threads(parser)
    parser.add_argument("--labels", default=None, help="simple format: the label file (default PATH/labels.jsonl)")
    parser.add_argument("--model", default=None,
                        help="model folder to evaluate ('default' for the shipped model)")
    parser.add_argument("--also-model", action="append", default=[], metavar="NAME=DIR",
                        help="with --model: also score this model folder on the same pages, as extractor NAME "
                             "(repeatable; e.g. the shipped default beside a leave-one-dataset-out head); prints "
                             "the paired word-F1 differences, edrew minus NAME (paired.json)")
    parser.add_argument("--paired", action="store_true",
                        help="with --model: also print the paired word-F1 differences of edrew minus each peer "
                             "and baseline of the run, on the same pages (paired.json)")
    parser.add_argument("--threshold", type=threshold, default=None,
                        help="a fixed threshold on every page instead of the model's, which a main-content "
                             "model caps on each page at half the page's best score")
    add_region_share(parser, "the model card's (a model trained with --train-model: as edrew train's auto)")
    parser.add_argument("--train-model", action="store_true",
                        help="cross-validate our model: train it (edrew train's entry point) on each split's "
                             "training pages and score it on the test pages as 'edrew-cv'")
    parser.add_argument("--train-minutes", type=float, default=10.0,
                        help="--train-model: training budget per split in minutes (default: %(default)s)")
    parser.add_argument("--train-variant", default="d", help="--train-model: model variant (default: %(default)s)")
    parser.add_argument("--train-pretrain-minutes", type=float, default=15.0,
                        help="--train-model: biLM pre-training budget in minutes, at most 40%% of "
                             "--train-minutes (default: %(default)s)")
    parser.add_argument("--train-pretrain-steps", type=int, default=None,
                        help="--train-model: stop biLM pre-training after this many steps")
    parser.add_argument("--train-epochs", type=int, default=30,
                        help="--train-model: head epochs at most (default: %(default)s)")
    parser.add_argument("--train-device", default="cpu",
                        help="--train-model: torch device to train on, e.g. cuda (default: %(default)s)")
    parser.add_argument("--train-bilm", default=None, metavar="DIR",
                        help="--train-model: reuse this model folder's biLM and train only the head; "
                             "'{split}' in DIR is replaced by the split's name, so that each fold reuses a "
                             "biLM pre-trained without its test pages (e.g. an earlier run's OUT/models/{split})")
    parser.add_argument("--train-features", type=int, default=None, metavar="N",
                        help="--train-model: the head reads the first N shallow features (edrew train "
                             "--features; 16 is models/default's set; 26 with the container features; default: 20)")
    parser.add_argument("--train-seed", type=int, default=None,
                        help="--train-model: the training seed (head initialisation, batch order, validation "
                             "domains), without changing the folds that --seed draws (default: --seed)")
    parser.add_argument("--reuse-models", action="store_true",
                        help="--train-model: where OUT/models/SPLIT already holds a model (e.g. trained "
                             "on another machine with --only-split), load it instead of training")
    parser.add_argument("--only-split", default=None,
                        help="run only the named split (e.g. fold3): to train folds in parallel into one "
                             "OUT (models in OUT/models/SPLIT, the report in OUT/splits/SPLIT)")
    parser.add_argument("--extractors", default=DEFAULT_EXTRACTORS,
                        help="comma list of oracle (the labels: a node classifier's ceiling), trafilatura, "
                             "readability, resiliparse, rs-trafilatura (in a Python 3.12 of its own: "
                             "--rs-trafilatura-python), all-nodes (keep every node), trafilatura-comments (its "
                             "reader comments, for --reference-field comments), or 'none' (default: %(default)s)")
    parser.add_argument("--rs-trafilatura-python", default=None, metavar="PYTHON",
                        help="a Python 3.12 that imports rs_trafilatura, for --extractors rs-trafilatura "
                             "(scripts/rs-trafilatura-venv.sh builds one; default: $EDREW_RS_TRAFILATURA_PYTHON, "
                             "else .venv-rs/bin/python)")
    parser.add_argument("--peer-timeout", type=non_negative(float), default=60.0, metavar="SECONDS",
                        help="per page, the seconds a peer in a worker process (rs-trafilatura) may take; a page "
                             "over it is the peer's empty text, counted (failed_timeout), and the worker restarts "
                             "(0: no limit; default: %(default)s)")
    parser.add_argument("--peer-memory-mb", type=non_negative(int), default=4096, metavar="MB",
                        help="the address space a peer's worker process may use; a page over it is the peer's "
                             "empty text, counted (failed_memory), and the worker restarts (0: no limit; default: "
                             "%(default)s)")
    parser.add_argument("--peer-cache", default=None, metavar="DIR",
                        help="keep each peer's text per page in DIR (by the peer's version and the page's bytes) "
                             "and reuse it in later runs: peers over thousands of pages run once")
    parser.add_argument("--snippets", action="store_true",
                        help="the snippet check instead of a reference: per extractor the share of each page's "
                             "with_snippets kept and of its without_snippets leaked (simple-format records, as "
                             "in trafilatura-eval-pages/pages.jsonl; --split none, or holdout: the pages a "
                             "mix's --model held out)")
    parser.add_argument("--baselines", default="none",
                        help="comma list of svm,tree,nb,knn trained per split, 'all', or 'none'")
    parser.add_argument("--split", choices=("kfold", "swde", "cross-site", "holdout", "none"), default=None,
                        help="kfold by domain (default for wcxb/simple), swde = 70/20/10 over unique pages "
                             "(default for swde), cross-site = leave one site out, holdout = the test pages "
                             "edrew train --test-fraction holds out (each dataset of a mix on its own), none = "
                             "test on all pages")
    parser.add_argument("--test-fraction", type=float, default=0.2,
                        help="--split holdout: edrew train's --test-fraction (default: %(default)s)")
    parser.add_argument("--val-fraction", type=float, default=0.1,
                        help="--split holdout: edrew train's --val-fraction (default: %(default)s)")
    parser.add_argument("--reference-title", choices=("keep", "drop"), default="keep",
                        help="drop: compare without the headline where a reference starts with it (dragnet's "
                             "do; WCXB's, fundus's and Readability's leave it out): the first of a reference's "
                             "first three lines whose words lie 80%% in the page's <title> (default: keep)")
    parser.add_argument("--reference-field", default=None, metavar="FIELD",
                        help="simple format: compare with this field of each label record instead of main_content "
                             "(dragnet's 'comments' against --comments; a page without it: an empty reference)")
    parser.add_argument("--folds", type=int_at_least(2), default=5, help="folds for --split kfold")
    parser.add_argument("--group-by", choices=GROUP_KEYS, default="domain",
                        help="split key for --split kfold and cross-site: the registrable domain of the "
                             "page's host (default; uk.shop.com and shop.com are one site), or the host "
                             "alone, as measured before 27 Nov 2026 (a dataset's own groups win either way)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--limit", type=int_at_least(1), default=None, help="evenly spaced sample of N pages")
    parser.add_argument("--sites", default=None, help="swde: comma list of sites")
    parser.add_argument("--attrs", default=None, help="swde: comma list of attributes")
    parser.add_argument("--out", default=None, help="output folder (default output/evaluate-DATASET)")
    parser.add_argument("--pdf-parsers", default="edrew,pdfminer-plain",
                        help="--dataset pdf: comma list of edrew, pdfminer-plain (default: %(default)s)")
    parser.add_argument("--layouts", default=None,
                        help="--dataset pdf: score only these layouts (comma list; default: all in the set)")
    parser.add_argument("--metadata", action="store_true",
                        help="score page metadata instead of content: headline, author, date and page type "
                             "against the labels (WCXB's title, author, publish_date and page type; a simple "
                             "set's title, author, publish_date, page_type), next to trafilatura's "
                             "(in --extractors); the page type cross-validated by --group-by with --folds "
                             "(docs/metadata.md); the publication day by the model's date chooser "
                             "(models/default/dates.json) cross-validated the same way on sets that label dates")
    parser.add_argument("--date-rules", action="store_true",
                        help="with --metadata: the publication day by the fixed rules, not the date chooser")
    parser.add_argument("--no-progress", action="store_true")
    # edrew train's experimental options, for --train-model (docs/evaluation.md); the defaults are the shipped recipe.
    experimental = parser.add_argument_group("experimental (ablations, not used by shipped models)")
    experimental.add_argument("--rules-off", default="none", metavar="RULES",
                              help="with --model: also score the model with each of these decision rules left out "
                                   "(comma list of " + ", ".join(OPTIONAL_RULES) + ", or 'all'), as 'edrew-no-RULE', "
                                   "each page scored once; prints paired word-F1 differences (paired.json)")
    experimental.add_argument("--comments", action="store_true",
                              help="with --model: also score the page's reader comments (the item's `comments`) as "
                                   "'edrew-comments' (against --reference-field comments)")
    experimental.add_argument("--train-skip-settled", action="store_true",
                              help="--train-model: the head trains on pages without the nodes extraction's rules "
                                   "settle (edrew train --skip-settled)")
    experimental.add_argument("--train-skip-empty-references", action="store_true",
                              help="--train-model: the head neither trains nor validates on pages whose reference "
                                   "holds no word (edrew train --skip-empty-references)")
    experimental.add_argument("--train-node-weights", choices=NODE_WEIGHTS, default="log",
                              help="--train-model: each node's weight in the head's loss (edrew train --node-weights)")
    experimental.add_argument("--train-node-dim", type=int, default=48,
                              help="--train-model: width of the head's node vector (edrew train --node-dim)")
    experimental.add_argument("--train-context-dim", type=int, default=32,
                              help="--train-model: width of the head's page BiLSTM (edrew train --context-dim)")
    experimental.add_argument("--train-dropout", type=float, default=0.2,
                              help="--train-model: dropout in the head (edrew train --dropout)")
    experimental.add_argument("--train-bilm-width", type=int, default=1, choices=(1, 2, 3, 4),
                              help="--train-model: the pre-trained biLM's widths times this (edrew train --bilm-width)")
    experimental.add_argument("--train-tree-levels", type=int, default=0, metavar="L",
                              help="--train-model: ancestor levels the head pools over (edrew train --tree-levels)")
    experimental.add_argument("--train-average-epochs", type=int, default=0, metavar="N",
                              help="--train-model: keep the average of the head's weights over its last N epochs "
                                   "(edrew train --average-epochs)")
    experimental.add_argument("--train-lr-schedule", choices=LR_SCHEDULES, default="constant",
                              help="--train-model: the head's learning rate over its epochs (edrew train "
                                   "--lr-schedule)")


def _spread(items: List, limit) -> List:
    if not limit or limit >= len(items):
        return list(items)
    return [items[(i * len(items)) // limit] for i in range(limit)]


def load_pages(args) -> List:
    from tqdm import tqdm

    if args.dataset == "mix":
        from ..data.mix import load_mixed

        return load_mixed(args.datasets, not args.no_progress, args.limit)
    path = check_dataset(args)
    progress = dict(desc=f"load {args.dataset}", unit="page", disable=args.no_progress, leave=False)
    if args.dataset == "wcxb":
        from ..data import wcxb

        ids = _spread(wcxb.page_ids(path), args.limit)
        return list(tqdm(wcxb.iter_pages(path, ids), total=len(ids), **progress))
    if args.dataset == "swde":
        from ..data import swde

        sites, attrs = swde_filters(path, args.sites, args.attrs)
        return _spread(list(tqdm(swde.iter_pages(path, sites, attrs), **progress)), args.limit)
    from ..data import simple

    return _spread(list(tqdm(simple.iter_pages(path, args.labels), **progress)), args.limit)


def make_splits(pages, args) -> List[Tuple[str, List[int], List[int]]]:
    from ..data import splits

    kind = args.split or ("swde" if args.dataset == "swde" else "kfold")
    if kind == "none":
        return [("all", [], list(range(len(pages))))]
    if kind == "swde":
        train, _val, test = splits.swde_split(pages, seed=args.seed)
        return [("70/20/10", train, test)]
    by_group = splits.group_key(args.group_by)
    if kind == "holdout":
        return [("holdout", *holdout_split(pages, args))]
    if kind == "cross-site":
        key = splits.by_site if args.dataset == "swde" else by_group
        return [(f"test={s}", tr, te) for s, tr, te in splits.cross_site_splits(pages, key=key)]
    folds = splits.group_kfold(pages, k=args.folds, key=by_group, seed=args.seed)
    return [(f"fold{i + 1}", tr, te) for i, (tr, te) in enumerate(folds)]


def holdout_split(pages, args) -> Tuple[List[int], List[int]]:
    """(train, test) indices as `edrew train --test-fraction --val-fraction --seed --group-by` splits these
    pages: its training and validation pages, and the test pages it held out (train drops pages without
    nodes first, so the split is drawn on those, and pages without nodes are neither side)."""
    from ..data import splits
    from ..training.train import split_by_group

    key = splits.group_key(args.group_by)
    kept = [i for i, lp in enumerate(pages) if lp.page.nodes]
    if args.dataset == "mix":
        from ..data.mix import split_per_dataset

        train, val, test = split_per_dataset([pages[i] for i in kept], key, args.val_fraction,
                                             args.test_fraction, args.seed)
    else:
        train, val, test = split_by_group([key(pages[i]) for i in kept], args.val_fraction, args.test_fraction,
                                          args.seed)
    return sorted(kept[i] for i in train + val), [kept[i] for i in test]


def check_test_pages(model_dir, pages: Sequence, test: Sequence[int]) -> None:
    """A UsageError when a model trained on a mix (its card's `training.test_pages`) held out other pages of
    a dataset than this --split holdout tests on: it would be scored on pages it learnt from."""
    from ..model.files import ModelError, read_card
    from ..training.train import held_out_record

    try:
        recorded = (read_card(model_dir, verify=False).get("training") or {}).get("test_pages")
    except ModelError as exc:
        raise UsageError(str(exc)) from None
    for name, expected in (recorded or {}).items():
        tested = held_out_record(pages, test, name)
        if tested["pages"] and tested != expected:
            raise UsageError(f"{model_dir} held out {expected.get('pages')} other pages of {name} than this "
                             f"run's {tested['pages']} test pages (another --seed, --test-fraction, "
                             "--val-fraction or --group-by than it was trained with)")


def drop_reference_titles(pages: Sequence) -> int:
    """--reference-title drop: each page's reference without its headline line (data.mix.drop_title_line),
    its node labels aligned again to it; the number of pages changed."""
    from ..data.align import align_reference
    from ..data.mix import drop_title_line
    from ..training.evaluate import reference_text

    changed = 0
    for lp in pages:
        reference = reference_text(lp)
        shorter = drop_title_line(reference, lp.page.title)
        if shorter != reference:
            lp.meta["main_content"] = shorter
            lp.labels = align_reference([n.content for n in lp.page.nodes], shorter).labels
            changed += 1
    return changed


def use_reference_field(pages: Sequence, name: str) -> int:
    """--reference-field: each page's reference is this field of its label record (the simple format's; empty
    where the record has none), its node labels aligned again to it; the number of pages with a non-empty one."""
    from ..data.align import align_reference

    found = 0
    for lp in pages:
        record = lp.meta.get("record")
        if record is None:
            raise UsageError("--reference-field reads the label records of simple-format datasets")
        value = record.get(name) or ""
        if not isinstance(value, str):
            raise UsageError(f"--reference-field {name}: {lp.page_id}'s {name} is not text")
        lp.meta["main_content"] = value
        lp.labels = align_reference([n.content for n in lp.page.nodes], value).labels
        found += bool(value.strip())
    return found


def _safe(split_name: str) -> str:
    """A split's name as a folder name ("test=inkwell" -> "test_inkwell")."""
    return re.sub(r"[^\w.-]+", "_", split_name)


def _names(value: str, allowed) -> List[str]:
    if not value or value == "none":
        return []
    names = list(allowed) if value == "all" else [v.strip() for v in value.split(",") if v.strip()]
    bad = [n for n in names if n not in allowed]
    if bad:
        raise UsageError(f"unknown {', '.join(bad)}; choose from {', '.join(allowed)}")
    return names


def _link(src: Path, dest: Path) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.symlink(os.path.abspath(src), dest)
    except OSError:  # no symlinks on this file system
        shutil.copyfile(src, dest)


def write_subset(dataset: str, pages: Sequence, dest: Path) -> Path:
    """A dataset folder, in the dataset's own layout, holding only `pages` (links to the files), so the
    training entry point, which reads whole folders, sees one split's training pages."""
    if dataset == "wcxb":
        for lp in pages:
            src = Path(lp.meta["source"])
            _link(src, dest / "html" / src.name)
            _link(src.parent.parent / "ground-truth" / f"{lp.page_id}.json",
                  dest / "ground-truth" / f"{lp.page_id}.json")
    elif dataset == "swde":
        truth_files = set()
        for lp in pages:
            src = Path(lp.meta["source"])
            _link(src, dest / "pages" / src.parent.name / src.name)
            truth_files.update((src.parent.parent.parent / "groundtruth").glob(
                f"{lp.meta['vertical']}-{lp.page_type_or_site}-*.txt"))
        for f in truth_files:
            _link(f, dest / "groundtruth" / f.name)
    else:
        dest.mkdir(parents=True, exist_ok=True)
        with open(dest / "labels.jsonl", "w", encoding="utf-8") as out:
            for lp in pages:
                record = dict(lp.meta["record"], file=os.path.abspath(lp.meta["source"]), id=lp.page_id)
                out.write(json.dumps(record, ensure_ascii=False) + "\n")
    return dest


def held_out(args, split_name: str, test_pages: Sequence) -> dict:
    """What a split holds out from its model: written to the model's card when it is trained, compared
    when it is reused (--reuse-models, --train-bilm), so that a model of other folds (another --seed,
    --folds or --group-by) is never scored on pages it was trained on."""
    import hashlib

    ids = "\n".join(sorted(str(p.page_id) for p in test_pages))
    return {"split": split_name, "group_by": args.group_by, "pages": len(test_pages),
            "sha1": hashlib.sha1(ids.encode("utf-8")).hexdigest()}


def validation_pages(pages: Sequence, train: Sequence[int], group_by: str, val_fraction: float, seed: int) -> List:
    """The validation pages `edrew train` draws from a split's training pages (`train`, indices into `pages`):
    those with text nodes, split by `group_by` with the training seed (--train-seed, else --seed), as
    `training.train.train` splits them. For scripts that score a fold model on the pages its threshold and
    epoch were chosen on. A model trained with --skip-empty-references validated on these less the pages
    whose reference holds no word."""
    from ..data.splits import group_key
    from ..training.train import split_by_group

    key = group_key(group_by)
    train_pages = [pages[i] for i in train if pages[i].page.nodes]  # as train() keeps them
    _, val, _ = split_by_group([key(lp) for lp in train_pages], val_fraction, 0.0, seed)
    return [train_pages[i] for i in val] or train_pages[-1:]  # train()'s fallback for a one-domain set


def check_held_out(model_dir: Path, expected: dict) -> None:
    """A UsageError when the model in `model_dir` was trained for another split than `expected`; a warning
    when its card does not say (models trained before 27 Nov 2026)."""
    from ..model.files import ModelError, read_card

    try:
        card = read_card(model_dir, verify=False)
    except ModelError as exc:
        raise UsageError(str(exc)) from None
    recorded = (card.get("training") or {}).get("held_out")
    if recorded is None:
        print(f"edrew evaluate: {printable(model_dir)}: its card does not say which pages it held out (trained before "
              f"27 Nov 2026): make sure it was trained on this split ({expected['split']}, --group-by "
              f"{expected['group_by']}, the same --seed and --folds)", file=sys.stderr)
    elif recorded != expected:
        raise UsageError(f"{model_dir} was trained for other test pages ({recorded.get('split')}, --group-by "
                         f"{recorded.get('group_by')}, {recorded.get('pages')} pages) than this run's "
                         f"{expected['split']} (--group-by {expected['group_by']}, {expected['pages']} pages): "
                         f"it would be scored on pages it was trained on")


def train_config(args, folder: Path, model_dir: Path, split_name: str, held: dict = None):
    """The TrainConfig of one split's model, from the --train-* options."""
    from ..model.elmo import wide_options
    from ..training.train import TrainConfig

    return TrainConfig(dataset=args.dataset, path=folder, out=model_dir,
                       variants=(args.train_variant,), max_minutes=args.train_minutes,
                       pretrain_minutes=args.train_pretrain_minutes,
                       pretrain_steps=args.train_pretrain_steps, epochs=args.train_epochs,
                       device=args.train_device, progress=not args.no_progress,
                       region_share=args.region_share, skip_settled=args.train_skip_settled,
                       skip_empty_references=args.train_skip_empty_references,
                       node_weights=args.train_node_weights,
                       node_dim=args.train_node_dim, context_dim=args.train_context_dim,
                       dropout=args.train_dropout,
                       tree_levels=args.train_tree_levels, average_epochs=args.train_average_epochs,
                       lr_schedule=args.train_lr_schedule,
                       options=wide_options(args.train_bilm_width),
                       seed=args.seed if args.train_seed is None else args.train_seed,
                       group_by=args.group_by, held_out=held,
                       bilm_from=Path(args.train_bilm.replace("{split}", model_dir.name))
                       if args.train_bilm else None,
                       command=f"edrew evaluate --train-model ({split_name})",
                       **({} if args.train_features is None else {"n_features": args.train_features}))


def train_on(args, pages: Sequence, model_dir: Path, split_name: str, held: dict = None):
    """Train our model on `pages` with edrew train's entry point; the loaded Scorer, or None (reported)."""
    from ..model.scorer import load_model
    from ..training.train import train

    with tempfile.TemporaryDirectory(prefix="edrew-fold-") as tmp:
        folder = write_subset(args.dataset, pages, Path(tmp) / "data")
        config = train_config(args, folder, model_dir, split_name, held)
        if config.bilm_from is not None and (config.bilm_from / "card.json").is_file():
            check_held_out(config.bilm_from, held)  # a fold's biLM saw its training pages too
        try:
            summary = train(config)
        except ValueError as exc:  # e.g. too few training pages in this split
            print(f"edrew evaluate: {split_name}: model not trained: {printable(exc)}", file=sys.stderr)
            return None
    return load_model(next(iter(summary["variants"].values()))["dir"])


def run(args: argparse.Namespace) -> int:
    apply_threads(args)
    try:
        resolve_datasets(args, (*DATASET_KINDS, "pdf"))
        if args.dataset == "pdf" and args.metadata:
            raise UsageError("--metadata scores web pages (wcxb or simple sets), not PDF articles")
        if args.dataset == "pdf":
            from .evaluate_pdf import run_pdf

            return run_pdf(args)
        if args.metadata:
            from .evaluate_metadata import run_metadata

            return run_metadata(args)
        return _run(args)
    except CommandError as exc:
        print(f"edrew evaluate: {printable(exc)}", file=sys.stderr)
        return exc.status


def _model_dir(name):
    from ..model.files import model_directory

    return model_directory(name)


def _load_model(directory, region_share):
    """A model to score with; a bad one is named as a UsageError (the ModelError names the file)."""
    from ..model.files import ModelError
    from ..model.scorer import load_model

    try:
        return apply_region_share(load_model(directory), region_share)
    except ModelError as exc:
        raise UsageError(str(exc)) from None


def _check_splits(splits, n_pages: int, trains: bool) -> None:
    """A UsageError for a split with no test pages (an empty table that looks like a result), or with
    no training pages when a model or baseline is to be trained on them (a baseline fitted on nothing
    predicts 0 everywhere and is reported as if measured)."""
    for name, train, test in splits:
        if not test:
            raise UsageError(f"split {name} has no test pages: {n_pages} pages are too few for this split")
        if trains and not train:
            raise UsageError(f"split {name} has no training pages for --train-model or --baselines "
                             f"({n_pages} pages; with --split none nothing is trained: give --model instead)")


def _run(args: argparse.Namespace) -> int:
    from ..training import evaluate as ev
    from ..training import peers
    from ..training.baselines import BASELINES

    text_names = _names(args.extractors, TEXT_EXTRACTORS)
    baseline_names = _names(args.baselines, BASELINES)
    if not (args.model or text_names or baseline_names or args.train_model):
        raise UsageError("nothing to evaluate (no --model, extractors or baselines)")
    if args.snippets:
        _check_snippet_options(args, text_names, baseline_names)
    try:  # a peer that is not installed is named now, before any page is read
        versions = peers.check_peers([n for n in text_names if n in PEERS], args.rs_trafilatura_python)
    except peers.PeerMissing as exc:
        raise UsageError(str(exc)) from None
    if args.train_model:
        from .train import device_problem

        problem = device_problem(args.train_device)
        if problem:
            raise UsageError(f"--train-device {args.train_device}: {problem}")
        from ..training.train import check_config

        try:  # once, before any page is read, rather than "model not trained" for every split
            check_config(train_config(args, Path("."), Path("."), "check"))
        except ValueError as exc:  # named as edrew train names it: give this command's --train-* names
            message = re.sub(r"--(?=[a-z])", "--train-", str(exc)).replace("--train-max-minutes", "--train-minutes")
            raise UsageError(message) from None
    out = args.out or os.path.join("output", f"evaluate-{args.dataset}")
    problem = out_problem(out)
    if problem:  # before any work: not after a whole evaluation that then cannot be written
        raise UsageError(f"--out {out}: {problem}")
    resolve_datasets(args)
    if args.dataset == "mix" and args.train_model:
        raise UsageError("--train-model trains one dataset's folds; for a mix train with edrew train --dataset "
                         "... --test-fraction and score it here with --split holdout --model")
    if args.dataset != "mix":
        check_dataset(args)
    rules_off = _names(args.rules_off, OPTIONAL_RULES)
    if (rules_off or args.comments) and not args.model:
        raise UsageError("--rules-off and --comments score the --model given: name one")
    also = also_models(args.also_model, reserved=[*text_names, *baseline_names, *TEXT_EXTRACTORS])
    if (also or args.paired) and not args.model:
        raise UsageError("--also-model and --paired compare with the --model given: name one")
    extractors = {}
    rs_worker = None
    if args.model:
        scorer = ev.ScoresOnce(_load_model(args.model, args.region_share))
        extractors["edrew"] = ev.scorer_extractor(scorer, args.threshold)
        for rule in rules_off:
            extractors[f"edrew-no-{rule}"] = ev.scorer_extractor(scorer, args.threshold, rules_off=(rule,))
        if args.comments:
            extractors["edrew-comments"] = ev.scorer_extractor(scorer, args.threshold, comments=True)
        for name, directory in also.items():  # each loaded now, so a bad folder is named before any page is read
            extractors[name] = ev.scorer_extractor(ev.ScoresOnce(_load_model(directory, args.region_share)),
                                                   args.threshold)
    fixed = {"oracle": ev.oracle_extractor, "trafilatura": ev.trafilatura_extractor,
             "readability": ev.readability_extractor, "resiliparse": peers.resiliparse_extractor,
             "all-nodes": ev.all_nodes_extractor, "trafilatura-comments": ev.trafilatura_comments_extractor}
    if "rs-trafilatura" in text_names:
        rs_worker = peers.RsTrafilatura(peers.rs_trafilatura_python(args.rs_trafilatura_python),
                                        timeout=args.peer_timeout, memory_mb=args.peer_memory_mb)
        fixed["rs-trafilatura"] = rs_worker
    cache = peers.PeerCache(args.peer_cache) if args.peer_cache else None
    for name in text_names:
        extractor = fixed[name]
        extractors[name] = cache.wrap(name, versions[name], extractor) if cache and name in PEERS else extractor
    try:
        # edrew minus each: the --also-model folders, and with --paired the peers and baselines too
        compared = [*also, *([n for n in text_names if n in PEERS] + baseline_names if args.paired else [])]
        return _evaluate(args, extractors, baseline_names, rules_off, out, compared)
    finally:
        if rs_worker is not None:
            rs_worker.close()
        if cache is not None and (cache.hits or cache.misses):
            print(f"--peer-cache {args.peer_cache}: {cache.hits} texts reused, {cache.misses} extracted",
                  file=sys.stderr)


def _snippet_check(args, pages: Sequence, extractors: dict, out) -> int:
    """--snippets: every extractor on every page that has snippets; prints and writes the shares kept and leaked."""
    from ..training import snippets as sn

    try:
        results = sn.evaluate_snippets(pages, extractors, progress=not args.no_progress)
    except ValueError as exc:  # a record whose snippets are not a list of strings
        raise CommandError(str(exc)) from None
    if not results:
        raise CommandError(f"no page in {dataset_path(args) or 'the mix'} has with_snippets or without_snippets")
    rows = sn.summarize_snippets(results)
    title = f"{args.dataset}: snippet check, {len({(r.dataset, r.page_id) for r in results})} pages with snippets"
    print(title)
    print(sn.format_snippet_table(rows))
    _print_failures(args, results)
    settings = _settings(args)
    try:
        paths = sn.write_snippet_report(rows, results, out, title, settings)
    except OSError as exc:
        raise CommandError(f"cannot write the report in {out}: {exc}") from None
    print(f"wrote {', '.join(str(p) for p in paths.values())}")
    return 0


def _settings(args) -> dict:
    """The run's options, datasets and command line, for the report's JSON."""
    settings = {k: v for k, v in vars(args).items() if k != "func"}
    settings["datasets"] = [{"name": d.name, "kind": d.kind, "path": str(d.labels or d.path)} for d in args.datasets]
    settings["command_line"] = shlex.join(["edrew"] + sys.argv[1:])
    return settings


def _print_failures(args, results) -> None:
    """The pages each peer failed on (the failed_* columns of the summary), under the table."""
    from ..training.peers import describe_failures

    for line in describe_failures(results, args.peer_timeout, args.peer_memory_mb):
        print(line)


def _print_paired(rows: Sequence[dict]) -> None:
    w = max([24, *(len(str(r["base"])) for r in rows)])
    for row in rows:
        print(f"{row['other']} - {row['base']:<{w}} {row['group']:<28} {row['pages']:>5} "
              f"{row['mean']:+.4f} ± {row['se']:.4f}  {row['up']:>4} up {row['down']:>4} down")


def _check_snippet_options(args, text_names: Sequence[str], baseline_names: Sequence[str]) -> None:
    """A UsageError for what the snippet check cannot score: it has no node labels and no reference."""
    if args.split not in (None, "none", "holdout"):
        raise UsageError("--snippets scores every page (--split none) or the test pages a mix's --model held out "
                         "(--split holdout): nothing is trained")
    unlabelled = [n for n in text_names if n == "oracle"] + list(baseline_names)
    if unlabelled or args.train_model:
        raise UsageError(f"--snippets: {', '.join(unlabelled) or '--train-model'} needs node labels, which snippet "
                         "pages do not have (--extractors without oracle, no --baselines or --train-model)")
    if args.paired:
        raise UsageError("--paired compares word-F1 with a reference; the snippet check has none")
    if args.comments or args.reference_field or args.reference_title != "keep":
        raise UsageError("--snippets compares with each page's snippets: --comments, --reference-field and "
                         "--reference-title do not apply")


def also_models(values: Sequence[str], reserved: Sequence[str]) -> dict:
    """--also-model NAME=DIR values as {NAME: DIR}; a UsageError for a malformed one, a name given twice, or a
    name another extractor of the run has (its rows and pages would be mixed with that extractor's)."""
    models = {}
    for value in values:
        name, sep, directory = value.partition("=")
        if not sep or not directory or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", name):
            raise UsageError(f"--also-model {value!r}: give NAME=DIR (NAME: letters, digits, '.', '_', '-')")
        if name in models or name in reserved or name == "edrew" or name.startswith("edrew-"):
            raise UsageError(f"--also-model {value!r}: the name {name!r} is taken (edrew, edrew-*, the "
                             f"extractors and baselines, another --also-model)")
        models[name] = directory
    return models


def _evaluate(args, extractors, baseline_names, rules_off, out, compared=()) -> int:
    from ..training import evaluate as ev
    from ..training.baselines import ReTPSBaseline

    try:
        pages = load_pages(args)
    except (ValueError, OSError) as exc:  # a broken dataset file (DatasetError): the reader names it
        raise CommandError(str(exc)) from None
    if pages and args.reference_field:
        print(f"--reference-field {args.reference_field}: {use_reference_field(pages, args.reference_field)} of "
              f"{len(pages)} pages have one", file=sys.stderr)
    if pages and args.reference_title == "drop":
        print(f"--reference-title drop: the headline line left out of {drop_reference_titles(pages)} of "
              f"{len(pages)} references", file=sys.stderr)
    if not pages:
        layout = {"wcxb": "html/ and ground-truth/", "swde": "pages/<vertical>-<site>-<n>/ and groundtruth/",
                  "simple": "HTML files and labels.jsonl"}.get(args.dataset, "pages")
        raise CommandError(f"no {args.dataset} pages found in {dataset_path(args)} (expected {layout})")
    if args.snippets and args.split == "holdout":
        test = make_splits(pages, args)[0][2]
        if args.model:
            check_test_pages(_model_dir(args.model), pages, test)
        return _snippet_check(args, [pages[i] for i in test], extractors, out)
    if args.snippets:
        return _snippet_check(args, pages, extractors, out)
    from ..data.mix import is_weak

    weak = sorted({p.meta.get("dataset", "") for p in pages if is_weak(p)})
    if weak:  # their reference would be the few snippet nodes: word-F1 against it says nothing
        raise UsageError(f"{', '.join(weak)}: weak labels have no reference text; score them with --snippets")
    try:
        splits = make_splits(pages, args)
    except ValueError as exc:  # more folds than domains (or sites) to fill them
        raise UsageError(str(exc)) from None
    if args.model and splits and splits[0][0] == "holdout":
        check_test_pages(_model_dir(args.model), pages, splits[0][2])
    if args.only_split:
        named = [s for s in splits if s[0] == args.only_split]
        if not named:
            raise UsageError(f"no split named {args.only_split!r} (the splits: {', '.join(s[0] for s in splits)})")
        splits = named
    _check_splits(splits, len(pages), trains=bool(args.train_model or baseline_names))
    # every score would be measured against nothing (a --reference-field may be empty on most pages)
    if not args.reference_field and not any(any(p.labels) for p in pages):
        raise CommandError(f"no page in {dataset_path(args) or 'the mix'} has a relevant node to score against "
                           f"(SWDE: no values in groundtruth/ for these pages; WCXB: empty main_content)")
    results = []
    for split_name, train, test in splits:
        split_extractors = {}
        if args.train_model and train:
            model_dir = Path(out) / "models" / _safe(split_name)
            held = held_out(args, split_name, [pages[i] for i in test])
            if args.reuse_models and (model_dir / "card.json").is_file():
                check_held_out(model_dir, held)
                scorer = _load_model(model_dir, args.region_share)
            else:
                scorer = train_on(args, [pages[i] for i in train], model_dir, split_name, held)
            if scorer is not None:
                split_extractors["edrew-cv"] = ev.scorer_extractor(scorer, args.threshold)
        split_extractors.update(extractors)
        for name in baseline_names:
            model = ReTPSBaseline(name, seed=args.seed).fit([pages[i] for i in train])
            split_extractors[name] = ev.predictor_extractor(model.predict)
        results.extend(ev.evaluate_pages([pages[i] for i in test], split_extractors,
                                         progress=not args.no_progress, desc=split_name))
    rows = ev.summarize(results)
    split_kind = args.split or ("swde" if args.dataset == "swde" else "kfold")
    title = f"{args.dataset}: {len(pages)} pages, split {split_kind}"
    print(title)
    print(ev.format_table(rows))
    _print_failures(args, results)
    paired = [row for rule in rules_off for row in ev.paired_differences(results, f"edrew-no-{rule}", "edrew")]
    if paired:
        print("\nword-F1 with each rule minus without it, same pages (mean, standard error, pages up / down):")
        _print_paired(paired)
    versus = [row for name in compared for row in ev.paired_differences(results, name, "edrew")]
    if versus:
        print("\nword-F1 of edrew minus each, same pages (mean, standard error, pages up / down):")
        _print_paired(versus)
        paired += versus
    settings = _settings(args)
    # Folds run in parallel into one OUT (--only-split) share OUT/models; each keeps its own report.
    report_dir = Path(out) / "splits" / _safe(args.only_split) if args.only_split else out
    try:
        paths = ev.write_report(rows, results, report_dir, title, settings)
        if paired:
            paths["paired"] = Path(report_dir) / "paired.json"
            paths["paired"].write_text(json.dumps(paired, indent=1), encoding="utf-8")
    except OSError as exc:  # the disk filled, or the folder went away, during the run
        raise CommandError(f"cannot write the report in {report_dir}: {exc}") from None
    print(f"wrote {', '.join(str(p) for p in paths.values())}")
    return 0
