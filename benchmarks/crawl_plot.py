"""Draw the add-on/plain ratios of benchmarks/crawl.py runs (their --json files), one column a crawl.

    python benchmarks/crawl_plot.py "heavy, network=net.json" "heavy, no delay=cpu.json" --out docs/img/crawl-speed.png

Each point is one round: the add-on crawl's pages/s over the plain crawl's of the same round (the crawl
ratio, from the spider's opening to its closing, for runs with --delay-ms; the whole process's without);
the black bar is the median; the dashed lines are issue #34's targets (0.95x with network delays, 0.5x without).
"""
from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+", metavar="LABEL=JSON", help="a label and the --json file of one run")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--title", default="Add-on crawl against plain crawl, same rounds (2-core machine)")
    args = ap.parse_args()

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    columns = []  # (label, ratios, network?)
    for spec in args.runs:
        label, _, path = spec.rpartition("=")
        run = json.loads(Path(path).read_text())
        network = run["args"].get("delay_ms") not in (None, "None")
        key = "crawl_ratio" if network else "ratio"
        by_name: dict = {}
        for reading in run["readings"]:
            if reading["name"] != "plain":
                by_name.setdefault(reading["name"], []).append(reading[key])
        for name, ratios in by_name.items():
            columns.append((f"{label}\n{name}", ratios, network))

    fig, ax = plt.subplots(figsize=(max(6.0, 1.6 * len(columns)), 4.2))
    for x, (_, ratios, network) in enumerate(columns):
        ax.scatter([x] * len(ratios), ratios, color="tab:blue" if network else "tab:orange", zorder=3)
        ax.hlines(statistics.median(ratios), x - 0.25, x + 0.25, color="black", zorder=2)
    ax.axhline(0.95, color="tab:blue", linestyle="--", linewidth=1, label="target with network delays (0.95x)")
    ax.axhline(0.5, color="tab:orange", linestyle="--", linewidth=1, label="target without delays (0.5x)")
    ax.set_xticks(range(len(columns)), [c[0] for c in columns], fontsize=8)
    ax.set_ylabel("add-on pages/s / plain pages/s")
    ax.set_ylim(0, 1.15)
    ax.set_title(args.title, fontsize=10)
    ax.legend(fontsize=8, loc="upper right")
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=110)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
