"""Command-line options that more than one `edrew` command takes."""
from __future__ import annotations

import argparse
import math
import os
import sys
from pathlib import Path
from typing import Callable, List, Optional, Tuple

from ..escape import printable

# where `edrew train` and `edrew evaluate` look for a dataset folder not given on the command line
DATASET_ENV = {"wcxb": "EDREW_WCXB", "swde": "EDREW_SWDE"}
# --node-weights / --train-node-weights: training.head_training.NODE_WEIGHTS, named here so that parsing a
# command line does not import torch (tests/test_model_train.py checks that the two agree)
NODE_WEIGHTS = ("log", "page-share")
# --lr-schedule / --train-lr-schedule: training.head_training.LR_SCHEDULES, for the same reason
LR_SCHEDULES = ("constant", "cosine")
# --backend: model.base.BACKENDS and DEFAULT_BACKEND, named here so that parsing a command line does not import
# numpy and the model files (~0.3 s; tests/test_model_numpy.py checks that they agree)
BACKENDS = ("numpy", "native", "allennlp")
DEFAULT_BACKEND = "numpy"


class CommandError(Exception):
    """A failure that a command reports in one line, `edrew COMMAND: message`, and exits on with `status`:
    1, input found bad while working (a dataset file, too few pages)."""

    status = 1


class UsageError(CommandError):
    """A command line that cannot work (a bad value, a path that does not exist, an unknown name): exit
    status 2, as argparse's own errors."""

    status = 2


def report_errors(command: str, run: Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    """`run(args)`, a CommandError printed in one line, `edrew COMMAND: message`, and returned as its status."""
    try:
        return run(args)
    except CommandError as exc:
        print(f"edrew {command}: {printable(exc)}", file=sys.stderr)
        return exc.status


# what a lone --dataset names (with the PATH argument); a mix names each dataset as [NAME=]KIND:PATH
DATASET_KINDS = ("wcxb", "swde", "simple")
DATASET_HELP = ("wcxb, swde or simple with the PATH argument; or, repeated, each dataset of a mix as "
                "[NAME=]KIND:PATH (KIND wcxb, simple, or snippets: weak labels from a simple label file's "
                "with_snippets / without_snippets; a simple PATH may be its label file), trained on "
                "together and reported per dataset (NAME: default the folder's name)")


def resolve_datasets(args: argparse.Namespace, kinds=DATASET_KINDS) -> None:
    """--dataset as given (a list: the option repeats) into `args.dataset`, one of `kinds` or "mix", and
    `args.datasets`, the mix's DatasetSpecs; a UsageError for a mix of forms or a folder not there. Once
    resolved, a second call leaves them as they are."""
    if isinstance(args.dataset, str):
        args.datasets = getattr(args, "datasets", ())
        return
    values = args.dataset
    plain = [v for v in values if ":" not in v]
    if len(values) == 1 and plain:
        if plain[0] not in kinds:
            raise UsageError(f"--dataset {plain[0]}: choose from {', '.join(kinds)}, or name each "
                             "dataset as [NAME=]KIND:PATH")
        args.dataset, args.datasets = plain[0], ()
        return
    if plain:
        raise UsageError(f"--dataset {plain[0]}: a mix names each dataset as [NAME=]KIND:PATH")
    if args.path:
        raise UsageError(f"{args.path}: the PATH argument goes with one --dataset KIND; a mix gives each "
                         "folder in its --dataset [NAME=]KIND:PATH")
    swde_only = [f"--{name}" for name in ("sites", "attrs", "labels") if getattr(args, name, None)]
    if swde_only:
        raise UsageError(f"{' and '.join(swde_only)} do not apply to a mix (a simple set's label file goes "
                         "in its KIND:PATH)")
    from ..data.mix import check_specs, parse_spec

    try:
        specs = [parse_spec(v) for v in values]
        check_specs(specs)
    except ValueError as exc:
        raise UsageError(f"--dataset {exc}") from None
    args.dataset, args.datasets = "mix", tuple(specs)


def dataset_path(args: argparse.Namespace) -> str:
    """The dataset folder: PATH as given, else the dataset's environment variable; "" for neither."""
    return args.path or os.environ.get(DATASET_ENV.get(args.dataset, ""), "")


def no_dataset_path(dataset: str) -> str:
    """The error for a command given no dataset folder."""
    env = DATASET_ENV.get(dataset)
    return f"give the {dataset} folder" + (f" or set {env}" if env else "")


def wcxb_root(args: argparse.Namespace) -> Path:
    """The WCXB folder the training commands read (PATH, else $EDREW_WCXB) and their --folds, checked
    before any work."""
    root = Path(args.path or os.environ.get("EDREW_WCXB", ""))
    if not str(root) or not (root / "ground-truth").is_dir():
        raise UsageError(f"{root or 'no folder given'}: not a WCXB folder (give PATH or set EDREW_WCXB)")
    if args.folds < 2:
        raise UsageError("--folds must be 2 or more")
    return root


def check_dataset(args: argparse.Namespace) -> str:
    """The dataset folder, checked before any work: a UsageError when none is given, it does not exist,
    or (simple format) --labels names no file."""
    path = dataset_path(args)
    if not path:
        raise UsageError(no_dataset_path(args.dataset))
    if not Path(path).exists():
        raise UsageError(f"{path}: dataset folder does not exist")
    if not Path(path).is_dir():
        raise UsageError(f"{path}: the dataset must be a folder, not a file")
    if getattr(args, "labels", None) and not Path(args.labels).is_file():
        raise UsageError(f"--labels {args.labels}: no such file")
    swde_only = [f"--{name}" for name in ("sites", "attrs") if getattr(args, name, None)]
    if swde_only and args.dataset != "swde":  # accepted and ignored, a run over everything would follow
        raise UsageError(f"{' and '.join(swde_only)} filter SWDE datasets only, not --dataset {args.dataset}")
    return path


def swde_filters(path, sites: Optional[str], attrs: Optional[str]) -> Tuple[Optional[List[str]], Optional[List[str]]]:
    """--sites and --attrs as lists (None: all); a UsageError naming the dataset's own when one is not
    there, rather than a run that scores nothing."""
    from ..data import swde

    def names(text):
        return [n.strip() for n in text.split(",") if n.strip()] if text else None

    sites_, attrs_ = names(sites), names(attrs)
    # a folder with no sites at all is left to the command's "no pages found in PATH (expected ...)"
    known = sorted({site for _, site, _ in swde.site_folders(path)})
    bad = [s for s in sites_ or () if s not in known]
    if bad and known:
        raise UsageError(f"--sites: no site {', '.join(bad)} in {path} (it has {', '.join(known)})")
    known = swde.attributes(path, sites_)
    bad = [a for a in attrs_ or () if a not in known]
    if bad and known:
        raise UsageError(f"--attrs: no attribute {', '.join(bad)} in {path}"
                         f"{' for ' + ', '.join(sites_) if sites_ else ''} (it has {', '.join(known)})")
    return sites_, attrs_


def out_problem(path) -> Optional[str]:
    """Why a folder cannot be written at `path` (a file there or above it, no permission), or None: checked
    before any work, so that a long run does not end without its output."""
    target = Path(path).absolute()
    for folder in (target, *target.parents):
        if folder.exists():
            if not folder.is_dir():
                return "a file, not a folder" if folder == target else f"{folder} is a file, not a folder"
            if not os.access(folder, os.W_OK | os.X_OK):
                return f"{folder} is not writable"
            return None
    return None


def _number(text: str, not_a_number: str) -> float:
    """float(text), or argparse's error with the option's own message."""
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(not_a_number) from None


def seconds(text: str) -> float:
    """--timeout: a positive, finite number of seconds (argparse refuses anything else with exit 2)."""
    value = _number(text, f"not a number of seconds: {text!r}")
    if not (value > 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, not {text!r}")
    return value


def non_negative(kind):
    """An argparse type: a finite number of `kind`, 0 or more (0 turns a limit off)."""
    def parse(value: str):
        try:
            number = kind(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {value!r}") from None
        if not 0 <= number < float("inf"):  # NaN too
            raise argparse.ArgumentTypeError(f"must be 0 (no limit) or more: {value!r}")
        return number
    return parse


def int_at_least(minimum: int):
    """An argparse type: an integer >= minimum."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"an integer, not {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, not {value}")
        return value

    parse.__name__ = f"integer >= {minimum}"
    return parse


def add_threads(parser: argparse.ArgumentParser) -> None:
    """--threads: the intra-op threads (numpy's BLAS, torch's) while the command scores pages."""
    parser.add_argument("--threads", type=int_at_least(1), default=1,
                        help="threads for scoring (numpy's BLAS, torch's; default: 1: the model's operations are "
                             "small, so more threads cost more than they save, many times more on a busy machine)")


def add_backend(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--backend", choices=BACKENDS, default=DEFAULT_BACKEND,
                        help="how the model runs: numpy (the default; never imports torch), native (PyTorch, the "
                             "same scores) or allennlp (needs AllenNLP, see docs/scrapy.md)")


def apply_threads(args: argparse.Namespace) -> None:
    """--threads, for the whole process: the libraries' default is a thread per core (docs/method-choices.md).
    torch is imported only for a command that runs it (a --backend other than numpy, or no --backend)."""
    from ..model.base import set_threads

    set_threads(args.threads, getattr(args, "backend", "native"))


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
    share = _number(text, f"auto, none or a number in (0.5, 1], not {text!r}")
    if not 0.5 < share <= 1:
        raise argparse.ArgumentTypeError(f"the share must lie in (0.5, 1], not {share}")
    return share


def threshold(text: str) -> float:
    """--threshold: a probability; above 1 nothing could be kept, below 0 everything."""
    value = _number(text, f"a number in [0, 1], not {text!r}")
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"the threshold is a probability in [0, 1], not {value}")
    return value


def apply_region_share(scorer, value):
    """--region-share on a loaded model: auto keeps its card's share."""
    from ..extract import override_region_share

    return scorer if value == "auto" else override_region_share(scorer, 0 if value is None else value)
