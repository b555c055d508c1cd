"""The leaderboard: the reports shipped with the package (every built-in agent through the
protocol), their joint rating fit (which fixes the ladder's ratings a new candidate is rated
against), the leaderboard's Markdown and a plot of a candidate among them."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from card_envs.benchmark.protocol import LADDER
from card_envs.benchmark.rating import fit
from card_envs.benchmark.report import read_report
from card_envs.core.registry import ENV_IDS

REPORTS = Path(__file__).resolve().parent / "data"
#: the built-in agents of the leaderboard, in its order, and how each is run
AGENTS = {
    "random": "card-envs benchmark --agent random --workers 2",
    "heuristic": "card-envs benchmark --agent heuristic --workers 2",
    "mcts:iterations=200": "card-envs benchmark --agent mcts:iterations=200 --quick --workers 2",
    "mcts:iterations=1000": "card-envs benchmark --agent mcts:iterations=1000 --quick --workers 2",
    "ppo": "card-envs benchmark --agent ppo --workers 2",
    "az:iterations=200": "card-envs benchmark --agent az:iterations=200 --quick --workers 2",
}


def report_name(label: str) -> str:
    """The file name of a shipped report: ``mcts:iterations=200`` -> ``mcts_iterations_200``."""
    return "".join(c if c.isalnum() else "_" for c in label)


def shipped() -> list[dict[str, Any]]:
    """The shipped reports (checked as any report file), in :data:`AGENTS` order."""
    return list(_shipped())


@functools.lru_cache(maxsize=1)
def _shipped() -> tuple[dict[str, Any], ...]:
    out = []
    for label in AGENTS:
        path = REPORTS / f"{report_name(label)}.json"
        if path.is_file():
            out.append(read_report(path))
    return tuple(out)


def results(reports: Sequence[dict[str, Any]]) -> list[tuple[str, str, float, float]]:
    """Every report's pairwise results ``(candidate, opponent, score, pairs)`` pooled over its
    rows (a candidate against copies of itself tells nothing and is left out)."""
    out = []
    for rep in reports:
        me = rep["candidate"]["label"]
        for row in rep["rows"]:
            if row["opponent"] != me:
                out.append((me, row["opponent"], row["pair_score"], float(row["pairs"])))
    return out


@functools.lru_cache(maxsize=1)
def _ladder() -> tuple[tuple[str, float], ...]:
    reps = _shipped()
    if not reps:
        return ()
    ratings = fit(results(reps))
    return tuple((k, ratings[k]) for k in LADDER if k in ratings)


def ladder_ratings() -> dict[str, float]:
    """The ladder opponents' ratings from the joint fit of the shipped reports (empty when no
    report ships): a candidate's rating is fitted against these, held fixed."""
    return dict(_ladder())


def ratings(reports: Sequence[dict[str, Any]] | None = None) -> dict[str, float]:
    """The joint fit of ``reports`` (default: the shipped ones), every candidate and ladder
    opponent on one scale (random 0)."""
    return fit(results(shipped() if reports is None else reports))


def markdown(reports: Sequence[dict[str, Any]] | None = None) -> str:
    """The leaderboard as Markdown: the rating table, then per game a table of each agent's
    win share against ``n - 1`` heuristics at every seat count, and the normalised scores."""
    reps = shipped() if reports is None else list(reports)
    if not reps:
        return "No benchmark report ships with this version.\n"
    rated = ratings(reps)
    lines = ["| agent | rating (Elo, random 0) | 95% interval | protocol | command |",
             "|---|---:|---|---|---|"]
    for rep in sorted(reps, key=lambda r: -(r["rating"] or {"elo": -1e9})["elo"]):
        lab = rep["candidate"]["label"]
        rt = rep["rating"]
        ci = f"[{rt['ci95'][0]:.0f}, {rt['ci95'][1]:.0f}]" if rt else ""
        cmd = AGENTS.get(lab, f"card-envs benchmark --agent {lab}")
        lines.append(f"| `{lab}` | {rated.get(lab, float('nan')):.0f} | {ci} | "
                     f"{rep['mode']} | `{cmd}` |")
    seats = sorted({r["players"] for rep in reps for r in rep["rows"]})
    for env_id in ENV_IDS:
        head = ["agent", *(f"{n} seats" for n in seats), "normalised (mean)"]
        block = [f"\n### {env_id}\n",
                 "Win share against `n - 1` heuristics [95% interval] (games); fair share 1/n.\n",
                 "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for rep in reps:
            cells = []
            for n in seats:
                row = next((r for r in rep["rows"] if r["env_id"] == env_id
                            and r["players"] == n and r["opponent"] == "heuristic"), None)
                cells.append("" if row is None else
                             f"{row['win_share']:.3f} [{row['ci95'][0]:.2f}, "
                             f"{row['ci95'][1]:.2f}] ({row['games']})")
            norm = rep["normalised"].get(env_id, {}).get("mean")
            block.append(f"| `{rep['candidate']['label']}` | " + " | ".join(cells)
                         + f" | {'' if norm is None else f'{norm:.2f}'} |")
        lines += block
    return "\n".join(lines) + "\n"


def plot(candidate: dict[str, Any] | Any | None = None, path: str | Path | None = None,
         reports: Sequence[dict[str, Any]] | None = None) -> Any:
    """A bar chart of ratings with their 95% intervals: the leaderboard's agents and
    ``candidate`` (a report, or a :class:`~card_envs.benchmark.run.BenchmarkResult`; none:
    the leaderboard alone) highlighted. Saved to ``path`` when given; returns the matplotlib
    figure."""
    import matplotlib

    if path is not None:
        matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    cand = getattr(candidate, "report", candidate)
    mine = None if cand is None else cand["candidate"]["label"]
    reps = [r for r in (shipped() if reports is None else reports)
            if r["candidate"]["label"] != mine] + ([cand] if cand is not None else [])
    reps = [r for r in reps if r["rating"] is not None]
    reps.sort(key=lambda r: r["rating"]["elo"])
    fig, ax = plt.subplots(figsize=(7, 0.45 * len(reps) + 1.2))
    for y, rep in enumerate(reps):
        rt = rep["rating"]
        ax.barh(y, rt["elo"], color="#d62728" if rep is cand else "#1f77b4", alpha=0.85)
        ax.errorbar(rt["elo"], y, xerr=[[rt["elo"] - rt["ci95"][0]], [rt["ci95"][1] - rt["elo"]]],
                    color="black", capsize=3)
    ax.set_yticks(range(len(reps)), [r["candidate"]["label"] for r in reps])
    ax.set_xlabel("rating (Elo scale, random = 0), 95% interval")
    ax.set_title("card-envs benchmark: every game and seat count on one scale")
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=110)
    return fig
