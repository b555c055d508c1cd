#!/usr/bin/env python
"""The self-play runs' learning curves side by side, and their table: for each run folder of
``examples/train_az.py`` (its ``history.json``), the search with the round's network against
the search with the start network, the network alone against the heuristic and the value
head's correlation with the results, against minutes of self-play and training.

    python benchmarks/az_curves.py runs/az/*/ --plot docs/images/az_selfplay.png

Prints one line per run (its last evaluated round, the decisions played, decisions per
second) and writes the plot (one panel per measure, one line per run).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any


def load(folder: Path) -> tuple[str, list[dict[str, Any]]]:
    """``(label, history rows)`` of one run folder (label: game and seats)."""
    hist = json.loads((folder / "history.json").read_text())
    state = json.loads((folder / "state.json").read_text())
    n = int(state["num_players"])
    label = state["env_id"].removesuffix("_v0") + ("" if n == 2 else f" {n}p")
    return label, hist


def table(runs: list[tuple[str, list[dict[str, Any]]]]) -> str:
    head = (f"{'run':<16}{'rounds':>7}{'minutes':>8}{'decisions':>11}{'dec/s':>7}"
            f"{'new vs start':>20}{'net vs heuristic':>20}{'v corr':>7}")
    lines = [head, "-" * len(head)]

    def cell(r: dict[str, Any], key: str) -> str:
        if key not in r:
            return "-"
        lo, hi = r[f"{key}_ci"]
        return f"{r[key]:.3f} [{lo:.2f}, {hi:.2f}]"

    for label, hist in runs:
        if not hist:
            continue
        # the last evaluated round (the last round if none is yet: a run in progress)
        last = ([r for r in hist if "vs_start" in r] or hist)[-1]
        decisions = sum(r["decisions"] for r in hist)
        busy = sum(r["selfplay_seconds"] for r in hist)
        lines.append(f"{label:<16}{last['round']:>7}{last['elapsed'] / 60:>8.1f}"
                     f"{decisions:>11}{decisions / busy:>7.0f}{cell(last, 'vs_start'):>20}"
                     f"{cell(last, 'net_vs_heuristic'):>20}{last['value_corr']:>7.2f}")
    return "\n".join(lines)


def plot(runs: list[tuple[str, list[dict[str, Any]]]], path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(14, 3.8))
    for label, hist in runs:
        ev = [r for r in hist if "vs_start" in r]
        x = [r["elapsed"] / 60 for r in ev]
        axes[0].plot(x, [r["vs_start"] for r in ev], "o-", ms=3, label=label)
        heur = [r for r in ev if "net_vs_heuristic" in r]
        axes[1].plot([r["elapsed"] / 60 for r in heur], [r["net_vs_heuristic"] for r in heur],
                     "o-", ms=3, label=label)
        axes[2].plot([r["elapsed"] / 60 for r in hist], [r["value_corr"] for r in hist], "-",
                     label=label)
    titles = ("search: new network vs start network", "network alone vs heuristic",
              "value head vs results (correlation)")
    for ax, title in zip(axes, titles):
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("minutes of self-play and training")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("win share")
    axes[0].set_ylim(0, 1)
    axes[1].set_ylim(0, 1)
    for n in sorted({h[0].get("num_players", 2) for _, h in runs if h}):  # fair shares
        for ax in axes[:2]:
            ax.axhline(1.0 / n, color="0.6", lw=0.8, ls=":" if n > 2 else "-")
    axes[2].legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("runs", nargs="+", type=Path, help="run folders of examples/train_az.py")
    ap.add_argument("--plot", type=Path, default=None, help="PNG path")
    args = ap.parse_args(argv)
    runs = [load(f) for f in args.runs if (f / "history.json").is_file()]
    if not runs:
        ap.error("no run folder with a history.json")
    print(table(runs))
    if args.plot:
        print(f"wrote {plot(runs, args.plot)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
