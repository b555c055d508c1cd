"""Arena statistics: confidence intervals, finishing ranks, per-participant stats, the
head-to-head matrix and openskill ratings, aggregated from a run's game log."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["Z95", "AgentStats", "HeadToHead", "Rating", "aggregate", "finish_ranks",
           "mean_interval", "wilson_interval"]

Z95 = 1.959963984540054  # two-sided 95% normal quantile


def wilson_interval(successes: float, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion (``successes`` may be fractional,
    e.g. with half wins); ``(0.0, 1.0)`` when ``n == 0``."""
    if n <= 0:
        return 0.0, 1.0
    p = successes / n
    z2 = z * z
    denom = 1.0 + z2 / n
    center = (p + z2 / (2 * n)) / denom
    half = z * math.sqrt(max(p * (1 - p) / n + z2 / (4 * n * n), 0.0)) / denom
    return max(0.0, center - half), min(1.0, center + half)


def mean_interval(mean: float, sd: float, n: int, z: float = Z95) -> tuple[float, float] | None:
    """Normal-approximation interval ``mean -+ z sd / sqrt(n)``; ``None`` when ``n < 2``."""
    if n < 2:
        return None
    half = z * sd / math.sqrt(n)
    return mean - half, mean + half


def finish_ranks(points: Sequence[float], winners: Sequence[bool]) -> list[int]:
    """Finishing rank per seat (0 = best; equal results share a rank, competition style):
    winners first, then points in the direction the winners show (:mod:`card_envs.arena`). Without
    any winner flag every seat ranks 0."""
    n = len(points)
    if not any(winners):
        return [0] * n
    wpts = [p for p, w in zip(points, winners) if w]
    if all(p == max(points) for p in wpts):
        sign = 1.0
    elif all(p == min(points) for p in wpts):
        sign = -1.0
    else:  # points do not order this game's result: only the winner flags count
        sign = 0.0
    keys = [(1 if w else 0, sign * p) for p, w in zip(points, winners)]
    return [sum(1 for other in keys if other > k) for k in keys]


@dataclass
class AgentStats:
    """One participant's results over every game it played."""

    label: str
    agent: str
    games: int = 0
    wins: float = 0.0  # sole win 1, a win shared by k seats 1/k
    sole_wins: int = 0
    ties: int = 0  # shared wins
    points_sum: float = 0.0
    seat_games: list[int] = field(default_factory=list)
    points_sd: float = 0.0  # sample standard deviation of the final points
    seat_wins: list[float] = field(default_factory=list)
    moves: int = 0  # decisions taken
    think_ms: float = 0.0  # wall time spent choosing them (ms; machine-dependent)

    @property
    def ms_per_move(self) -> float:
        return self.think_ms / self.moves if self.moves else float("nan")

    @property
    def win_rate(self) -> float:
        return self.wins / self.games if self.games else 0.0

    @property
    def ci95(self) -> tuple[float, float]:
        """95% Wilson interval of the win rate."""
        return wilson_interval(self.wins, self.games)

    @property
    def mean_points(self) -> float:
        return self.points_sum / self.games if self.games else float("nan")

    @property
    def points_ci95(self) -> tuple[float, float] | None:
        """95% normal interval of the mean points (``None`` with fewer than 2 games)."""
        return mean_interval(self.mean_points, self.points_sd, self.games)

    def to_json(self) -> dict[str, Any]:
        lo, hi = self.ci95
        pci = self.points_ci95
        return {"label": self.label, "agent": self.agent, "games": self.games,
                "wins": self.wins, "sole_wins": self.sole_wins, "ties": self.ties,
                "win_rate": self.win_rate, "ci95": [lo, hi],
                "mean_points": self.mean_points if self.games else None,
                "points_sum": self.points_sum, "points_sd": self.points_sd,
                "points_ci95": None if pci is None else list(pci),
                "seat_games": list(self.seat_games), "seat_wins": list(self.seat_wins),
                "moves": self.moves, "think_ms": self.think_ms}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> AgentStats:
        return cls(d["label"], d["agent"], d["games"], d["wins"], d["sole_wins"], d["ties"],
                   d["points_sum"], list(d["seat_games"]), d["points_sd"], list(d["seat_wins"]),
                   d.get("moves", 0), d.get("think_ms", 0.0))


@dataclass
class HeadToHead:
    """Pairwise results: ``score[a][b]`` = games in which ``a`` finished ahead of ``b`` (ties
    1/2), ``games[a][b]`` = games with both; indices follow ``labels``."""

    labels: list[str]
    score: list[list[float]]
    games: list[list[int]]

    def rate(self, a: str, b: str) -> float | None:
        """Share of their common games in which ``a`` finished ahead of ``b`` (``None`` if
        they never met)."""
        i, j = self.labels.index(a), self.labels.index(b)
        return self.score[i][j] / self.games[i][j] if self.games[i][j] else None

    @property
    def rates(self) -> list[list[float | None]]:
        """The win-rate matrix (``None`` on the diagonal and for pairs that never met)."""
        return [[s / g if g else None for s, g in zip(srow, grow)]
                for srow, grow in zip(self.score, self.games)]

    def to_json(self) -> dict[str, Any]:
        return {"labels": list(self.labels), "rate": self.rates,
                "score": [list(r) for r in self.score], "games": [list(r) for r in self.games]}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> HeadToHead:
        return cls(list(d["labels"]), [list(r) for r in d["score"]],
                   [list(r) for r in d["games"]])


@dataclass
class Rating:
    """An openskill Plackett-Luce rating."""

    label: str
    mu: float
    sigma: float

    @property
    def ordinal(self) -> float:
        """Conservative skill ``mu - 3 sigma`` (openskill's ``ordinal()``)."""
        return self.mu - 3.0 * self.sigma

    def to_json(self) -> dict[str, Any]:
        return {"label": self.label, "mu": self.mu, "sigma": self.sigma,
                "ordinal": self.ordinal}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Rating:
        return cls(d["label"], d["mu"], d["sigma"])


def aggregate(labels: list[str], names: list[str], n: int, log: list[dict[str, Any]]
               ) -> tuple[list[AgentStats], HeadToHead, list[Rating]]:
    """Stats, head-to-head matrix and ratings of participants ``labels`` (agent ``names``) at
    ``n`` seats from a run's log, in log order (deterministic)."""
    from openskill.models import PlackettLuce

    k = len(labels)
    pos = {lab: i for i, lab in enumerate(labels)}
    stats = [AgentStats(lab, nm, seat_games=[0] * n, seat_wins=[0.0] * n)
             for lab, nm in zip(labels, names)]
    pts: list[list[float]] = [[] for _ in range(k)]
    score = [[0.0] * k for _ in range(k)]
    met = [[0] * k for _ in range(k)]
    model = PlackettLuce()
    skill = [model.rating(name=lab) for lab in labels]
    for g in log:
        who = [pos[lab] for lab in g["seats"]]
        winners, ranks = g["winners"], g["ranks"]
        nwin = sum(winners)
        for s, i in enumerate(who):
            st = stats[i]
            st.games += 1
            st.seat_games[s] += 1
            st.points_sum += g["points"][s]
            st.moves += g.get("moves", [0] * n)[s]
            st.think_ms += g.get("think_ms", [0.0] * n)[s]
            pts[i].append(g["points"][s])
            if winners[s]:
                share = 1.0 if nwin == 1 else 1.0 / nwin
                st.wins += share
                st.seat_wins[s] += share
                if nwin == 1:
                    st.sole_wins += 1
                else:
                    st.ties += 1
        for s, t in itertools.combinations(range(n), 2):
            a, b = who[s], who[t]
            if a == b:
                continue
            met[a][b] += 1
            met[b][a] += 1
            if ranks[s] < ranks[t]:
                score[a][b] += 1.0
            elif ranks[s] > ranks[t]:
                score[b][a] += 1.0
            else:
                score[a][b] += 0.5
                score[b][a] += 0.5
        new = model.rate([[skill[i]] for i in who], ranks=list(ranks))
        for i, team in zip(who, new):
            skill[i] = team[0]
    for st, p in zip(stats, pts):
        st.points_sd = float(np.std(p, ddof=1)) if len(p) > 1 else 0.0
    ratings = [Rating(lab, float(r.mu), float(r.sigma)) for lab, r in zip(labels, skill)]
    return stats, HeadToHead(list(labels), score, met), ratings

