"""PNG plots of arena results: the head-to-head win-rate matrix and the ratings.

matplotlib is imported only when a plot is drawn (``pip install card-envs[plot]``); figures
are drawn on matplotlib's Agg canvas without pyplot, so the global backend is left alone.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from card_envs.arena.stats import Z95

if TYPE_CHECKING:
    from card_envs.arena.results import ArenaResult

__all__ = ["plot_ratings", "plot_winrate_matrix"]


def _figure(width: float, height: float) -> Any:
    """A matplotlib figure on the Agg canvas (no pyplot); ``ImportError`` naming the extra."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as e:
        raise ImportError("arena plots need matplotlib: pip install card-envs[plot]") from e
    fig = Figure(figsize=(width, height), dpi=100)
    FigureCanvasAgg(fig)
    return fig


def _save(fig: Any, path: str | Path) -> Path:
    """Write ``fig`` as a PNG at ``path`` (creating its folder); return the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, format="png")
    return path


def plot_winrate_matrix(result: ArenaResult, path: str | Path) -> Path:
    """Heatmap of ``result.matrix`` (row agent ahead of column agent, ties 1/2), as a PNG at
    ``path``; returns the path."""
    import numpy as np

    if result.matrix is None:
        raise ValueError("this result has no head-to-head matrix")
    labs = result.matrix.labels
    k = len(labs)
    rates = np.array([[math.nan if v is None else v for v in row]
                      for row in result.matrix.rates], float)
    size = 1.2 + 0.9 * k
    fig = _figure(max(size + 1.5, 5.0), size + 0.5)
    ax = fig.add_subplot()
    im = ax.imshow(rates, cmap="RdYlGn", vmin=0.0, vmax=1.0)
    for i in range(k):
        for j in range(k):
            v, g = rates[i, j], result.matrix.games[i][j]
            if not math.isnan(v):
                ax.text(j, i, f"{v:.2f}\n(n={g})", ha="center", va="center", fontsize=8)
    ax.set_xticks(range(k), labs, rotation=30, ha="right")
    ax.set_yticks(range(k), labs)
    ax.set_xlabel("opponent")
    ax.set_ylabel("agent")
    ax.set_title(f"{result.env_id}\nrow ahead of column (share)", fontsize=10)
    fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04)
    return _save(fig, path)


def plot_ratings(result: ArenaResult, path: str | Path) -> Path:
    """openskill ratings as ``mu`` with ``-+1.96 sigma`` error bars (best at the top) and the
    ordinal ``mu - 3 sigma`` marked, as a PNG at ``path``; returns the path."""
    if not result.ratings:
        raise ValueError("this result has no ratings")
    rs = sorted(result.ratings, key=lambda r: r.mu)
    fig = _figure(6.5, 1.2 + 0.45 * len(rs))
    ax = fig.add_subplot()
    y = list(range(len(rs)))
    ax.errorbar([r.mu for r in rs], y, xerr=[Z95 * r.sigma for r in rs], fmt="o", capsize=4,
                label="mu ± 1.96 sigma")
    ax.plot([r.ordinal for r in rs], y, "|", markersize=12, color="gray",
            label="ordinal (mu - 3 sigma)")
    ax.set_yticks(y, [r.label for r in rs])
    ax.set_ylim(-0.7, len(rs) - 0.3)
    ax.set_xlabel("Plackett-Luce rating")
    ax.set_title(f"{result.env_id}: ratings over {result.total_games} games", fontsize=10)
    ax.legend(fontsize=8, loc="best")
    ax.grid(axis="x", alpha=0.3)
    return _save(fig, path)
