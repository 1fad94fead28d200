"""Command-line options that more than one `edrew` command takes."""
from __future__ import annotations

import argparse
import os

# where `edrew train` and `edrew evaluate` look for a dataset folder not given on the command line
DATASET_ENV = {"wcxb": "EDREW_WCXB", "swde": "EDREW_SWDE"}
# --node-weights / --train-node-weights: model.head_training.NODE_WEIGHTS, named here so that parsing a
# command line does not import torch (tests/test_model_train.py checks that the two agree)
NODE_WEIGHTS = ("log", "page-share")


def dataset_path(args: argparse.Namespace) -> str:
    """The dataset folder: PATH as given, else the dataset's environment variable; "" for neither."""
    return args.path or os.environ.get(DATASET_ENV.get(args.dataset, ""), "")


def no_dataset_path(command: str, dataset: str) -> str:
    """The error line for a command given no dataset folder."""
    env = DATASET_ENV.get(dataset)
    return f"edrew {command}: give the {dataset} folder" + (f" or set {env}" if env else "")


def add_region_share(parser: argparse.ArgumentParser, auto: str) -> None:
    """--region-share auto|none|SHARE; `auto` says what auto means for this command."""
    parser.add_argument("--region-share", type=region_share, default="auto", metavar="auto|none|SHARE",
                        help="keep only the page's main region, the deepest element that holds SHARE (0.5 < "
                             "SHARE <= 1) of the kept words, with the other main-content rules (no customer "
                             "reviews on declared product pages, no screen-reader-only or form-control text, "
                             "text repeated in another layout once, the best nodes "
                             "when nothing reaches the "
                             f"threshold); none: relevant text anywhere, none of those rules; auto: {auto}")


def region_share(text: str):
    """"auto", None (for "none") or a share in (0.5, 1]."""
    if text in ("auto", "none"):
        return None if text == "none" else text
    try:
        share = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"auto, none or a number in (0.5, 1], not {text!r}") from None
    if not 0.5 < share <= 1:
        raise argparse.ArgumentTypeError(f"the share must lie in (0.5, 1], not {share}")
    return share


def threshold(text: str) -> float:
    """--threshold: a probability; above 1 nothing could be kept, below 0 everything."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a number in [0, 1], not {text!r}") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"the threshold is a probability in [0, 1], not {value}")
    return value


def apply_region_share(scorer, value):
    """--region-share on a loaded model: auto keeps its card's share."""
    from ..extract import override_region_share

    return scorer if value == "auto" else override_region_share(scorer, 0 if value is None else value)
