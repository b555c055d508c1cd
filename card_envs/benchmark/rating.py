"""One rating scale over every game and seat count: a Bradley-Terry model fitted to pairwise
results. Every game of a table gives one result between the candidate and each of its ``n - 1``
opponents (finished ahead: a win; behind: a loss; level: half of each). Ratings are on the Elo
scale (``400 log10`` of the Bradley-Terry strength: 200 points apart, the stronger finishes ahead
76% of the time) with random at 0."""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

ELO = 400.0 / math.log(10.0)  # Elo points per natural-log unit of strength
ANCHOR = "random"


def pair_counts(records: list[dict], players: int) -> tuple[float, float]:
    """(candidate's score, games' pairs) of a table's game records: per game and opponent 1 if
    the candidate finished ahead, 1/2 if level, 0 if behind."""
    score = 0.0
    for r in records:
        me = r["ranks"][r["seat"]]
        for s, rank in enumerate(r["ranks"]):
            if s != r["seat"]:
                score += 1.0 if me < rank else 0.5 if me == rank else 0.0
    return score, float(len(records) * (players - 1))


def fit(results: list[tuple[str, str, float, float]], anchor: str = ANCHOR,
        iterations: int = 10000, tol: float = 1e-10) -> dict[str, float]:
    """Joint fit: ``results`` are ``(a, b, a's score, pairs)`` (a's score out of ``pairs``
    meetings with ``b``); the Elo rating of every name, ``anchor`` at 0 (Hunter's MM
    algorithm; a name that never lost or never won is held by a weak prior of one draw against
    the anchor, so every rating is finite)."""
    names = sorted({r[0] for r in results} | {r[1] for r in results} | {anchor})
    ix = {n: k for k, n in enumerate(names)}
    k = len(names)
    wins = np.zeros(k)
    meet = np.zeros((k, k))
    for a, b, s, m in results:
        if a == b or m <= 0:
            continue
        wins[ix[a]] += s
        wins[ix[b]] += m - s
        meet[ix[a], ix[b]] += m
        meet[ix[b], ix[a]] += m
    for n in names:  # the prior: one draw against the anchor (half a win each way)
        if n != anchor:
            wins[ix[n]] += 0.5
            wins[ix[anchor]] += 0.5
            meet[ix[n], ix[anchor]] += 1.0
            meet[ix[anchor], ix[n]] += 1.0
    gamma = np.ones(k)
    for _ in range(iterations):
        denom = (meet / (gamma[:, None] + gamma[None, :])).sum(axis=1)
        new = np.where(denom > 0, wins / np.maximum(denom, 1e-300), gamma)
        new /= new[ix[anchor]]
        if np.max(np.abs(np.log(new) - np.log(gamma))) < tol:
            gamma = new
            break
        gamma = new
    return {n: round(float(ELO * math.log(gamma[ix[n]])), 1) for n in names}


def fit_one(scores: Mapping[str, tuple[float, float]], ladder: Mapping[str, float]
            ) -> tuple[float, float, float] | None:
    """The candidate's rating against opponents of fixed ``ladder`` ratings: ``scores`` maps an
    opponent to (candidate's score, pairs). Returns ``(rating, low, high)`` (95% interval from
    the likelihood's curvature), or ``None`` when no opponent has a rating."""
    data = [(ladder[o] / ELO, s, m) for o, (s, m) in scores.items() if o in ladder and m > 0]
    if not data:
        return None
    # the same weak prior as fit(): one draw against the anchor
    data.append((ladder.get(ANCHOR, 0.0) / ELO, 0.5, 1.0))
    r = 0.0
    info = 1.0
    for _ in range(100):
        grad, info = 0.0, 0.0
        for ro, s, m in data:
            p = 1.0 / (1.0 + math.exp(ro - r))
            grad += s - m * p
            info += m * p * (1.0 - p)
        step = grad / max(info, 1e-12)
        r += max(-2.0, min(2.0, step))
        if abs(step) < 1e-10:
            break
    half = 1.96 / math.sqrt(max(info, 1e-12))
    return (round(ELO * r, 1), round(ELO * (r - half), 1), round(ELO * (r + half), 1))
