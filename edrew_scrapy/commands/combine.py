"""`edrew combine --base DIR --add NAME=DIR --weight W [--add ... --weight ...] --out DIR`: one model folder
whose scores mix the heads of model folders that share the base's biLM (edrew_scrapy.model.combine).

Each --add's head gets the --weight given in the same position; the base's head(s) share what is left
(1 - the added weights); --not-on-page-types names page types on which the added heads sit out. The exit
status is 2 when the folders cannot be combined (the message names the file and what is wrong)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Tuple


def _named_folder(value: str) -> Tuple[str, Path]:
    name, sep, folder = value.partition("=")
    if not sep or not name or not folder:
        raise argparse.ArgumentTypeError(f"expected NAME=DIR, not {value!r}")
    return name, Path(folder)


def _weight(value: str) -> float:
    try:
        weight = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {value!r}") from None
    if not 0 < weight < 1:
        raise argparse.ArgumentTypeError(f"a weight is a number in (0, 1), not {value}")
    return weight


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--base", required=True,
                        help="the model folder whose files and card the result keeps ('default': models/default)")
    parser.add_argument("--add", action="append", required=True, type=_named_folder, metavar="NAME=DIR",
                        help="a single-head model folder on the base's biLM; its head becomes head-NAME.safetensors")
    parser.add_argument("--weight", action="append", required=True, type=_weight, metavar="W",
                        help="the weight of the --add in the same position, in (0, 1)")
    parser.add_argument("--not-on-page-types", default="", metavar="TYPES",
                        help="comma list of page types (edrew_scrapy.pagetype) on which the added heads sit out: "
                             "the base's head scores those pages alone")
    parser.add_argument("--out", required=True, type=Path,
                        help="the folder to write: new or empty, or the base folder itself (in place)")


def run(args: argparse.Namespace) -> int:
    from ..escape import printable
    from ..model.combine import combine
    from ..model.files import ModelError, model_directory

    if len(args.add) != len(args.weight):
        print(f"edrew combine: {len(args.add)} --add but {len(args.weight)} --weight", file=sys.stderr)
        return 2
    try:
        not_on = [t.strip() for t in args.not_on_page_types.split(",") if t.strip()]
        card = combine(model_directory(args.base), args.add, args.weight, args.out, not_on)
    except ModelError as exc:
        print(f"edrew combine: {printable(exc)}", file=sys.stderr)
        return 2
    mix = ", ".join(f"{entry['name']} {entry['weight']:g} ({entry['file']})" for entry in card["heads"])
    print(f"{args.out}: heads {mix}", file=sys.stderr)
    return 0
