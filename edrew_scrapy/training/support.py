"""What the training stages share: log lines, progress bars, curves and their plot, a module's device."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List

import torch
from torch import nn


def log(message: str) -> None:
    import sys

    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def progress_bar(iterable=None, **kw):
    from tqdm import tqdm

    return tqdm(iterable, leave=False, dynamic_ncols=True, **kw)


@dataclass
class Curve:
    steps: List[float] = field(default_factory=list)
    values: List[float] = field(default_factory=list)

    def add(self, step: float, value: float) -> None:
        self.steps.append(step)
        self.values.append(value)


def plot_curves(path: Path, curves: Dict[str, Curve], title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(curves), figsize=(5 * len(curves), 3.5), squeeze=False)
    for ax, (name, curve) in zip(axes[0], curves.items()):
        ax.plot(curve.steps, curve.values, marker="." if len(curve.steps) < 60 else None)
        ax.set_title(name)
        ax.set_xlabel("step" if "pretrain" in name else "epoch")
        ax.grid(alpha=0.3)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def device_of(module: nn.Module) -> torch.device:
    return next(module.parameters()).device
