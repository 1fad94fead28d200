"""`edrew` command line: one subcommand per module in edrew_scrapy.commands.

Each command module exposes `add_arguments(parser)` and `run(args) -> int`, and is imported only when
its command runs, so `edrew nodes` never pays for torch. torch is an extra (`edrew-scrapy[train]`): a
command that needs it where it is missing says so in one line.
"""
from __future__ import annotations

import argparse
import importlib
import sys
from typing import List, Optional

# name -> one-line help; the module edrew_scrapy.commands.<name> implements it
COMMANDS = {
    "nodes": "print the text nodes of pages with their reTPS, bucket and path",
    "evaluate": "node P/R/F1 and word-F1 of EDREW, reTPS baselines and peers; the snippet check",
    "extract": "print the relevant content of pages (jsonl or text) scored by a model",
    "pdf": "structure and sentences of PDF articles, one XML file each",
    "inspect": "write an HTML report of one page: its nodes coloured by score, the rule that decided each",
    "train": "pre-train the reTPS biLM and train the relevance classifier on a labelled dataset",
    "combine": "one model folder whose scores mix the heads of model folders on the same biLM",
    "merge": "merge the JSON Lines feeds of a distributed crawl's processes, each page item once",
    "train-pagetype": "train the page-type classifier on WCXB page types, cross-validated by domain",
    "train-dates": "train the publication day's chooser on WCXB dates, cross-validated by domain",
}


def _module(command: str) -> str:
    return command.replace("-", "_")


def build_parser() -> argparse.ArgumentParser:
    from . import __version__

    parser = argparse.ArgumentParser(prog="edrew", description="EDREW relevant-content extraction")
    # what a bug report needs first; edrew_scrapy.__version__ is the package's own (setup.cfg's)
    parser.add_argument("--version", action="version", version=f"edrew-scrapy {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, help_text in COMMANDS.items():
        module = importlib.import_module(f"edrew_scrapy.commands.{_module(name)}")
        module.add_arguments(sub.add_parser(name, help=help_text, description=help_text))
    return parser


def main(argv: Optional[List[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    module = importlib.import_module(f"edrew_scrapy.commands.{_module(args.command)}")
    try:
        return int(module.run(args) or 0)
    except BrokenPipeError:  # `edrew nodes page.html | head` is normal use
        return 0
    except KeyboardInterrupt:
        return 130
    except ModuleNotFoundError as exc:  # torch, left out of the default install: the extra that adds it
        if (exc.name or "").partition(".")[0] != "torch":
            raise
        from .escape import printable
        from .model.files import TorchMissing, torch_missing

        if not isinstance(exc, TorchMissing):
            exc = torch_missing("this command", exc)
        elif getattr(exc, "purpose", "").startswith("backend ") and not hasattr(args, "backend"):
            # "backend 'native'" would name an option the command does not have (edrew evaluate)
            exc = torch_missing("this command", exc.cause)
        print(f"edrew {args.command}: {printable(exc)}", file=sys.stderr)
        return 2
    except OSError as exc:  # writing the output failed (a full disk, a closed terminal): one line, no traceback
        from .escape import printable

        print(f"edrew {args.command}: {printable(exc)}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
