"""Word-F1 per dataset, our models against the peers, from several `edrew evaluate` reports, in one bar chart.

    python experiments/plot_sets.py OUT.png [LABEL=]OUT/summary.json ... [--groups a,b,c] [--title TEXT]

Each report's `edrew` rows are drawn as LABEL (default: the report's folder name); the peers' rows
(trafilatura, readability, ...) once, from the first report that has them for a group; the oracle never. A
group is a dataset (or DATASET/type) row of the reports; `--groups` picks and orders them (default: every
group but ALL). The bars are mean word-F1 per page, each value printed above its bar.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("reports", nargs="+", metavar="[LABEL=]SUMMARY_JSON")
    parser.add_argument("--groups", default=None)
    parser.add_argument("--title", default="word-F1 per dataset")
    args = parser.parse_args(argv)

    values = {}  # (group, extractor) -> row
    for spec in args.reports:
        label, _, path = spec.rpartition("=") if "=" in spec else ("", "", spec)
        rows = json.loads(Path(path).read_text(encoding="utf-8"))["summary"]
        label = label or Path(path).parent.name
        for row in rows:
            name = row["extractor"]
            if name == "oracle":
                continue
            name = label if name == "edrew" else name
            values.setdefault((row["group"], name), row)
    groups = (args.groups.split(",") if args.groups
              else list(dict.fromkeys(g for g, _ in values if g != "ALL")))
    extractors = list(dict.fromkeys(e for g, e in values if g in groups))

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    fig, ax = plt.subplots(figsize=(max(7.0, 1.4 * len(groups) * max(1, len(extractors)) / 3), 4.5))
    width = 0.8 / max(1, len(extractors))
    x = np.arange(len(groups))
    for k, name in enumerate(extractors):
        rows = [values.get((g, name)) for g in groups]
        heights = [r["word_f1"] if r else 0.0 for r in rows]
        xs = x + (k - (len(extractors) - 1) / 2) * width
        ax.bar(xs, heights, width, label=name)
        for xi, r in zip(xs, rows):
            if r:
                ax.text(xi, r["word_f1"] + 0.01, f"{r['word_f1']:.3f}", ha="center", va="bottom", fontsize=6,
                        rotation=90)
    ax.set_xticks(x)
    ax.set_xticklabels([f"{g}\n({values[(g, extractors[0])]['pages']} pages)" if (g, extractors[0]) in values
                        else g for g in groups], fontsize=8)
    ax.set_ylim(0.5, 1.05)
    ax.set_ylabel("word-F1 (mean per page)")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(ncol=min(len(extractors), 5), fontsize=8, loc="lower center", bbox_to_anchor=(0.5, 1.0), frameon=False)
    fig.suptitle(args.title, y=1.02, fontsize=10)
    fig.tight_layout()
    fig.savefig(args.out, dpi=120, bbox_inches="tight")
    plt.close(fig)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
