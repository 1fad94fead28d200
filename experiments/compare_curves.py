"""Validation curves of several training runs side by side, one panel per fold, from their logs.

`edrew train` and `edrew evaluate --train-model` log one line per head epoch ("epoch 7: train loss
0.5757, validation 0.8619"); this reads those lines, so runs cut short (a machine's time limit) still
plot what they reached; a run with `--average-epochs` adds its weight average's curve. Used for the
DOM-context and weight-averaging ablations in docs/evaluation.md:

    python experiments/compare_curves.py --out docs/img/dom-context-validation.png \
        shipped:fold1:output/cv-dom/gpu-fold1.log "DOM context":fold1:output/tree/gpu-fold1.log ...
"""
from __future__ import annotations

import argparse
import re
import sys
from collections import defaultdict
from pathlib import Path
from typing import Dict, List, Tuple

EPOCH = re.compile(r"epoch (\d+): train loss ([0-9.]+), validation ([0-9.]+)")
# a head trained with --average-epochs also logs its weight average's score ("epoch 16: validation of the
# average of epochs 16-16 0.8713")
AVERAGE = re.compile(r"epoch (\d+): validation of the average of epochs \d+-\d+ ([0-9.]+)")


def read_curve(path: Path, average: bool = False) -> List[Tuple[int, float]]:
    """(epoch, validation score) per logged epoch; a run restarted in the same log keeps its last pass.
    `average`: the weight average's scores instead of the epochs' own."""
    pattern, group = (AVERAGE, 2) if average else (EPOCH, 3)
    curve: Dict[int, float] = {}
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        match = pattern.search(line)
        if match:
            curve[int(match.group(1))] = float(match.group(group))
    return sorted(curve.items())


def parse_run(text: str) -> Tuple[str, str, Path]:
    label, sep, rest = text.partition(":")
    fold, sep2, path = rest.partition(":")
    if not (sep and sep2 and label and fold and path):
        raise argparse.ArgumentTypeError(f"expected LABEL:FOLD:LOG, got {text!r}")
    return label, fold, Path(path)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=parse_run, metavar="LABEL:FOLD:LOG")
    parser.add_argument("--out", type=Path, required=True, help="the PNG to write")
    args = parser.parse_args(argv)
    panels: Dict[str, Dict[str, List[Tuple[int, float]]]] = defaultdict(dict)
    for label, fold, path in args.runs:
        if not path.is_file():
            parser.error(f"{path}: no such log")
        curve = read_curve(path)
        if not curve:
            parser.error(f"{path}: no 'epoch N: train loss X, validation Y' lines")
        panels[fold][label] = curve
        best = max(curve, key=lambda point: point[1])
        print(f"{fold:8} {label:20} epochs {len(curve):3}  best validation {best[1]:.4f} (epoch {best[0]})")
        averaged = read_curve(path, average=True)
        if averaged:
            panels[fold][f"{label}, weight average"] = averaged
            print(f"{fold:8} {label + ', weight average':20} last {averaged[-1][1]:.4f} (epochs to {averaged[-1][0]})")

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    folds = sorted(panels)
    fig, axes = plt.subplots(1, len(folds), figsize=(4 * len(folds), 3.4), squeeze=False)
    for ax, fold in zip(axes[0], folds):
        for label, curve in panels[fold].items():
            ax.plot([e for e, _ in curve], [v for _, v in curve], marker=".", label=label)
        ax.set_title(fold)
        ax.set_xlabel("head epoch")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("validation word-F1 (best threshold)")
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=110)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
