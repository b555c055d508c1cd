"""Isflak's public rule queries: what the kernels, the heuristic, the features and the views
need to know of the rules, each written here once.

The board queries are compiled (``@njit``) and read a board ``cells`` in the rules' ``CELL``
encoding (:mod:`card_envs.isflak.layout`): per cell, bit 0 set for a free card (a card without a
penguin), bits 1-3 the owner code of the penguin on it (0 none), bits 4-8 1 + the points of its
card (0: a gap); entry 35 is the always-0 sentinel of rays that leave the board. The rules pass
their state array itself (no view in the hot loops): index ``CELL + cell`` for the one-cell
queries, ``at=CELL`` for those that follow rays. The heuristic and the features build the board
from an observation with :func:`observed_cells` (owner codes then are 1 + the relative seat).
The card and scoring queries are plain Python over the ``card_points`` option (a dict with the
keys ``"ace"``, ``"face"``, ``"number"``), for the codecs and the views.

=========================  ==========================================  =========================
query                      answers                                     called by
=========================  ==========================================  =========================
:func:`cell_code`          the ``CELL`` entry of a card and a penguin  rules, statedict,
                                                                       observed_cells
:func:`cell_points`        the points of a cell's card (-1 gap)        rules, observe,
                                                                       heuristic, features
:func:`cell_owner`         the owner code of a cell's penguin          observe, heuristic
:func:`observed_cells`     the board of an observation                 heuristic, features
:func:`occupy`             a penguin steps onto a free card            rules, heuristic
:func:`ray`                the cells a penguin slides to in one        slide, reach
                           direction, their points, what stops it
:func:`slide`              how far it slides there                     rules (legal moves)
:func:`rays`               :func:`ray` from every cell at once         features
:func:`reach`              all it reaches in one move, their points    heuristic
:func:`move_slot`          which penguin a movement action moves       rules, heuristic
:func:`move_target`        where a movement action takes it            rules, heuristic
:func:`find_winners`       the winners of a finished game              rules, view
:func:`card_points`        what a card is worth                        game, statedict
:func:`pile_points`        what a pile is worth                        statedict, view
:func:`max_pile_points`    the most a pile can be worth                game, observe
=========================  ==========================================  =========================
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np

from card_envs.core.jit import njit
from card_envs.core.kernels import winners_by_keys
from card_envs.isflak.layout import (
    CELLS,
    F_FREE,
    MAX_DIST,
    MOVE0,
    MOVES_PER_PENGUIN,
    NDIR,
    OBS_OWNER,
    OBS_POINTS,
    OWN_MASK,
    OWN_SHIFT,
    PTS_SHIFT,
    SENTINEL,
)
from card_envs.isflak.parts.board import ORDER, RAY
from card_envs.isflak.parts.deck import KIND, KIND_NAMES

__all__ = [
    "cell_code", "cell_points", "cell_owner", "observed_cells", "occupy", "ray", "slide",
    "rays", "reach", "move_slot", "move_target", "find_winners", "card_points", "pile_points",
    "max_pile_points",
]


# --- cells --------------------------------------------------------------------------------------
@njit(cache=True, inline="always")
def cell_code(points: int, owner: int) -> int:
    """The ``CELL`` entry of a cell whose card is worth ``points`` (-1: a gap, entry 0) with the
    penguin of owner code ``owner`` on it (0: none, the card is free)."""
    if points < 0:
        return 0
    return (F_FREE if owner == 0 else 0) | owner << OWN_SHIFT | (points + 1) << PTS_SHIFT


@njit(cache=True, inline="always")
def cell_points(cells: np.ndarray, cell: int) -> int:
    """The points of the card on ``cell`` (-1 for a gap or the off-board sentinel)."""
    return (cells[cell] >> PTS_SHIFT) - 1


@njit(cache=True, inline="always")
def cell_owner(cells: np.ndarray, cell: int) -> int:
    """The owner code of the penguin on ``cell`` (0: none)."""
    return (cells[cell] >> OWN_SHIFT) & OWN_MASK


@njit(cache=True, inline="always")
def observed_cells(obs: np.ndarray, cells: np.ndarray) -> None:
    """Write the board of an observation (its card points and penguin owners, the owner codes
    1 + relative seat) into ``cells`` (36 entries, ``CELL`` encoding)."""
    for c in range(CELLS):
        cells[c] = cell_code(int(obs[OBS_POINTS + c]), int(obs[OBS_OWNER + c]))
    cells[SENTINEL] = 0


@njit(cache=True, inline="always")
def occupy(cells: np.ndarray, cell: int, owner: int) -> None:
    """A penguin of owner code ``owner`` steps onto the free card on ``cell``."""
    cells[cell] += (owner << OWN_SHIFT) - F_FREE


# --- moves --------------------------------------------------------------------------------------
@njit(cache=True, inline="always")
def ray(cells: np.ndarray, cell: int, d: int, at: int = 0) -> tuple[int, int, int, int]:
    """A penguin on ``cell`` looking in direction ``d`` (0-7, ``DIRS``): ``(moves, total, best,
    stop)``, the number of cells it can slide to (the free cards before the first gap, penguin
    or the board's edge; the target ``s`` steps away, 1 <= s <= moves, is
    ``RAY[(cell*8 + d)*6 + s-1]``), the sum and the best of their points (best -1 if none) and
    the cell that stops it (a gap, a penguin, or ``SENTINEL`` at the edge). The board starts at
    ``cells[at]`` (the rules pass the state itself with ``at=CELL``)."""
    r = (cell * NDIR + d) * MAX_DIST
    total = 0
    best = -1
    for s in range(MAX_DIST):
        t = RAY[r + s]
        if not cells[at + t] & F_FREE:
            return s, total, best, t
        p = cell_points(cells, at + t)
        total += p
        if p > best:
            best = p
    return MAX_DIST, total, best, SENTINEL


@njit(cache=True, inline="always")
def slide(cells: np.ndarray, cell: int, d: int, at: int = 0) -> int:
    """How many cells a penguin on ``cell`` can slide in direction ``d``: the ``moves`` of
    :func:`ray` (compiled, the points it does not use cost nothing)."""
    return ray(cells, cell, d, at)[0]


#: the rows of :func:`rays`' table
R_MOVES, R_TOTAL, R_BEST, R_OWNER = 0, 1, 2, 3


@njit(cache=True, inline="always")
def rays(cells: np.ndarray) -> np.ndarray:
    """:func:`ray` from every cell in every direction at once: a float table ``(4, 36*8)``,
    column ``c*8 + d`` (the off-board sentinel's columns: nothing reachable), rows ``R_MOVES``,
    ``R_TOTAL``, ``R_BEST`` as in :func:`ray` and ``R_OWNER``, the owner code of the penguin that
    stops the ray (0: a gap or the edge). One pass per direction: the ray from ``c`` is its
    first step ``t`` plus the ray from ``t`` (``ORDER[d]`` has ``t`` first)."""
    n = CELLS + 1
    W = n * NDIR
    buf = np.empty(4 * W + 3 * n)
    table = buf[:4 * W].reshape((4, W))
    moves, total, best, owner = table[R_MOVES], table[R_TOTAL], table[R_BEST], table[R_OWNER]
    pts = buf[4 * W:4 * W + n]  # the board as floats: the pass below reads each cell often
    occ = buf[4 * W + n:4 * W + 2 * n]
    free = buf[4 * W + 2 * n:]
    for c in range(n):
        pts[c] = cell_points(cells, c)
        occ[c] = cell_owner(cells, c)
        free[c] = cells[c] & F_FREE
    for d in range(NDIR):
        i = SENTINEL * NDIR + d
        moves[i] = 0.0
        total[i] = 0.0
        best[i] = -1.0
        owner[i] = 0.0
    for d in range(NDIR):
        for j in range(CELLS):
            c = ORDER[d, j]
            t = RAY[(c * NDIR + d) * MAX_DIST]
            i = c * NDIR + d
            k = t * NDIR + d
            f = free[t]  # 1: the ray goes on through t
            p = pts[t]
            moves[i] = f * (1.0 + moves[k])
            total[i] = f * (p + total[k])
            best[i] = f * (max(p, best[k]) + 1.0) - 1.0
            owner[i] = occ[t] + f * owner[k]
    return table


@njit(cache=True)
def reach(cells: np.ndarray, cell: int) -> tuple[int, int]:
    """``(total, best)`` of the cards a penguin on ``cell`` reaches in one move: the sum of
    their points (each reachable cell once) and the best of them (-1: it cannot move)."""
    total = 0
    best = -1
    for d in range(NDIR):
        _, t, b, _ = ray(cells, cell, d)
        total += t
        if b > best:
            best = b
    return total, best


@njit(cache=True, inline="always")
def move_slot(action: int) -> int:
    """The penguin (0..P-1, of the seat to act) a movement action moves."""
    return (action - MOVE0) // MOVES_PER_PENGUIN


@njit(cache=True, inline="always")
def move_target(cell: int, action: int) -> int:
    """The cell a movement action takes its penguin to from ``cell`` (a legal action's target;
    ``SENTINEL`` beyond the board)."""
    return RAY[cell * MOVES_PER_PENGUIN + (action - MOVE0) % MOVES_PER_PENGUIN]


# --- scoring ------------------------------------------------------------------------------------
@njit(cache=True, inline="always")
def find_winners(points: np.ndarray, cards: np.ndarray, n: int, out: np.ndarray) -> None:
    """The winners among seats ``0..n-1`` of a finished game (``out[q]`` 1 or 0): the most
    points, on a tie the most cards; seats still tied share the win."""
    winners_by_keys(points, cards, n, out)


def card_points(card: int, points: Mapping[str, int]) -> int:
    """What card id ``card`` is worth under the ``card_points`` option ``points``."""
    return int(points[KIND_NAMES[int(KIND[card])]])


def pile_points(pile: Iterable[int], points: Mapping[str, int]) -> int:
    """What a pile of card ids is worth under the ``card_points`` option ``points``."""
    return sum(card_points(card, points) for card in pile)


def max_pile_points(points: Mapping[str, int]) -> int:
    """The most a pile can be worth under ``points``: the best 35 of the 4 aces, 12 faces and
    36 number cards."""
    left, total = CELLS, 0
    for p, cnt in sorted([(points["ace"], 4), (points["face"], 12), (points["number"], 36)],
                         reverse=True):
        k = min(cnt, left)
        total += p * k
        left -= k
    return total
