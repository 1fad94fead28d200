"""Draw docs/img/architecture.png: how a page flows through a crawl, and where models come from.

Run from the repository root after a change of the layout it shows: `python docs/img/architecture.py`.
"""

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch  # noqa: E402

OUT = Path(__file__).with_suffix(".png")


def box(ax, x, y, w, h, title, lines, color):
    ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0.04,rounding_size=0.12",
                                fc=color, ec="#333333", lw=1.3))
    ax.text(x + w / 2, y + h - 0.28, title, ha="center", va="top", fontsize=11.5, weight="bold")
    ax.text(x + w / 2, y + h - 0.72, "\n".join(lines), ha="center", va="top", fontsize=8.6,
            family="DejaVu Sans Mono", linespacing=1.35)


def arrow(ax, x1, y1, x2, y2, label=None, dy=0.16):
    ax.add_patch(FancyArrowPatch((x1, y1), (x2, y2), arrowstyle="-|>", mutation_scale=16, lw=1.6,
                                 color="#222222"))
    if label:
        upward = abs(x1 - x2) < 1 and abs(y1 - y2) > 0.5  # label beside a vertical arrow, not across it
        ax.text((x1 + x2) / 2 + (0.2 if upward else 0), (y1 + y2) / 2 + dy, label,
                ha="left" if upward else "center", va="bottom", fontsize=8.3, style="italic", color="#333333")


def main():
    fig, ax = plt.subplots(figsize=(15.2, 6.8), dpi=110)
    ax.set_xlim(0, 15.2)
    ax.set_ylim(0, 6.8)
    ax.axis("off")

    top, h, w = 3.3, 2.55, 2.35
    xs = [0.15, 3.25, 6.35, 9.45, 12.65]
    box(ax, xs[0], top, w, h, "Scrapy response", ["HTML bytes", "+ declared charset", "+ URL", "",
        "downloader", "middleware", "(off the reactor)"], "#e8eef7")
    box(ax, xs[1], top, w, h, "Serializer", ["serializer/", "tokenizer.py", "tokens.py  words.py", "",
        "-> Page of Nodes:", "content, reTPS,", "XPath, flags"], "#fdf1dc")
    box(ax, xs[2], top, w, h, "Scorer", ["model/scorer.py", "elmo.py  trie.py", "head.py  features.py", "",
        "-> P(relevant)", "per node"], "#e4f3e4")
    box(ax, xs[3], top, w, h, "Decision rules", ["rules/", "", "threshold (page cap)",
        "boilerplate, forms,", "screen-reader text,", "reviews, duplicates,", "main region"], "#f6e3ec")
    box(ax, xs[4], top, w, h, "Items", ["scrapy/", "spidermiddleware", ".py, items.py", "(builder hook)",
        "PageItem / NodeItem", "-> feed exports"], "#ececec")
    mid = top + h / 2
    for a, b, label in [(0, 1, "bytes"), (1, 2, "Page"), (2, 3, "scores"), (3, 4, "kept")]:
        arrow(ax, xs[a] + w + 0.02, mid, xs[b] - 0.02, mid, label)

    # serializer, scorer and rules run together, away from the reactor
    ax.add_patch(FancyBboxPatch((xs[1] - 0.12, top - 0.42), xs[3] + w - xs[1] + 0.24, h + 0.9,
                                boxstyle="round,pad=0.02,rounding_size=0.15", fc="none", ec="#777777",
                                lw=1.1, ls="--"))
    ax.text(xs[1] - 0.02, top - 0.34,
            "in a worker process (scrapy/worker.py; EDREW_WORKERS=0: threads); no Scrapy imported here",
            fontsize=8.4, color="#555555", va="bottom")

    by, bh = 0.35, 1.75
    box(ax, 0.15, by, 4.0, bh, "Labelled data",
        ["data/ (wcxb, swde, simple)", "data/align.py: reference", "-> node labels"], "#f2f2f2")
    box(ax, 5.3, by, 4.0, bh, "Training",
        ["training/: pretrain the biLM,", "train the head, choose", "threshold -> models/NAME/"], "#e4f3e4")
    box(ax, 10.95, by, 4.0, bh, "Evaluation",
        ["evaluate.py, baselines.py", "edrew evaluate: word-F1,", "node F1, peers"], "#f2f2f2")
    arrow(ax, 4.17, by + bh / 2, 5.28, by + bh / 2)
    arrow(ax, 9.32, by + bh / 2, 10.93, by + bh / 2)
    arrow(ax, 7.3, by + bh + 0.02, xs[2] + w / 2, top - 0.44, "   model files (card.json, HDF5, safetensors)",
          dy=-0.05)
    ax.text(7.6, 6.75, "edrew-scrapy: how a page flows through a crawl", ha="center", va="top",
            fontsize=13.5, weight="bold")
    fig.savefig(OUT, bbox_inches="tight", facecolor="white")


if __name__ == "__main__":
    main()
