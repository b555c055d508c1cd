"""Isflak's rule queries (``card_envs.isflak.queries``) against the engine.

Positions come from random legal play (``random.Random``) in every variant of the manifest's
``test_cases``: the slides and targets of the queries are the legal moves and the moves the
engine makes, the reach is the points of the legal targets, the scoring queries give the
engine's ``outcome`` at the end of every game. The heuristic's board evaluation goes through
the same queries (no private copy of a rule).
"""

from __future__ import annotations

import inspect
import random
from collections.abc import Iterator

import numpy as np
import pytest

import card_envs
import card_envs.agents.isflak as heuristic
from card_envs.core.kernels import CUR, DONE, PHASE
from card_envs.isflak import queries as Q
from card_envs.isflak.layout import (
    CELL,
    CELLS,
    CFG_PTS,
    DECK,
    GRID,
    MAX_DIST,
    NDIR,
    OUT,
    P_MOVE,
    PEN,
    SENTINEL,
)
from card_envs.isflak.manifest import MANIFEST
from card_envs.isflak.parts.board import RAY
from card_envs.isflak.parts.deck import CARD_IDS
from isflak_ref import ENV_ID, decode_move

VARIANTS = [dict(c) for c in MANIFEST.test_cases]
IDS = [",".join(f"{k}={v}" for k, v in c.items()) or "default" for c in VARIANTS]


def games(opts: dict, n_games: int = 4, seed: int = 0) -> Iterator[tuple]:
    """(engine, state) at every step of ``n_games`` random games, the final states included."""
    eng = card_envs.Engine(ENV_ID, **opts)
    rng = random.Random(seed)
    for g in range(n_games):
        state = eng.new_state(seed * 100 + g)
        while True:
            yield eng, state
            if state[DONE]:
                break
            state = after(eng, state, rng.choice(eng.legal_actions(state)))


def after(eng: card_envs.Engine, state: np.ndarray, action: int) -> np.ndarray:
    """A copy of ``state`` with ``action`` applied."""
    out = state.copy()
    eng.apply(out, action)
    return out


def observed(eng: card_envs.Engine, state: np.ndarray, seat: int) -> np.ndarray:
    """The board of ``seat``'s observation (``observed_cells``)."""
    cells = np.zeros(CELLS + 1, np.int64)
    Q.observed_cells(eng.observe(state, seat).astype(np.int16), cells)
    return cells


@pytest.mark.parametrize("opts", VARIANTS, ids=IDS)
def test_slide_ray_and_targets_are_the_legal_moves(opts: dict) -> None:
    for eng, state in games(opts):
        if state[DONE] or state[PHASE] != P_MOVE:
            continue
        legal = set(eng.legal_actions(state))
        peng = eng.game.peng
        cur = int(state[CUR])
        cells = state[CELL:CELL + CELLS + 1]
        for k in range(peng):
            pos = int(state[PEN + cur * peng + k])
            for d in range(NDIR):
                acts = [a for a in legal if decode_move(a)[:2] == (k, d)]
                n = Q.slide(state, pos, d, CELL)
                assert n == len(acts) == Q.slide(cells, pos, d)
                moves, total, best, stop = Q.ray(cells, pos, d)
                targets = [Q.move_target(pos, a) for a in sorted(acts)]
                assert moves == n
                assert targets == [RAY[(pos * NDIR + d) * MAX_DIST + s] for s in range(n)]
                pts = [Q.cell_points(cells, t) for t in targets]
                assert total == sum(pts) and best == max(pts, default=-1)
                assert stop == (SENTINEL if n == MAX_DIST else
                                RAY[(pos * NDIR + d) * MAX_DIST + n])
                assert not cells[stop] & 1  # a gap, a penguin or the edge
                for a in acts:
                    assert Q.move_slot(a) == k
        if legal:
            a = sorted(legal)[len(legal) // 2]
            pos = int(state[PEN + cur * peng + Q.move_slot(a)])
            slot = PEN + cur * peng + Q.move_slot(a)
            nxt = after(eng, state, a)
            # the penguin stands on the target, unless its seat went out at once (and banked it)
            assert nxt[slot] == Q.move_target(pos, a) or (nxt[slot] == -1 and nxt[OUT + cur])


@pytest.mark.parametrize("opts", VARIANTS, ids=IDS)
def test_board_queries_against_the_state(opts: dict) -> None:
    """The observed board is the rules' CELL array (owners relative); ``occupy`` is what a
    placement does to it; ``reach`` is every legal target's points; ``rays`` is ``ray`` from
    every cell."""
    points = None
    for eng, state in games(opts, n_games=3):
        points = eng.game.options["card_points"]
        cells = observed(eng, state, 0)  # seat 0: relative owner codes are the absolute ones
        assert cells.tolist() == state[CELL:CELL + CELLS + 1].tolist()
        for c in range(CELLS):
            grid = int(state[GRID + c])
            own = Q.cell_owner(cells, c)
            assert Q.cell_points(cells, c) == (-1 if grid < 0 else Q.card_points(grid, points))
            assert Q.cell_code(Q.cell_points(cells, c), own) == cells[c]
        seat = int(state[CUR]) if not state[DONE] else 0
        rel = observed(eng, state, seat)
        table = Q.rays(rel)
        for c in range(CELLS + 1):
            for d in range(NDIR):
                moves, total, best, stop = Q.ray(rel, c, d) if c < CELLS else (0, 0, -1,
                                                                                  SENTINEL)
                col = c * NDIR + d
                assert table[:, col].tolist() == [moves, total, best, Q.cell_owner(rel, stop)]
        if not state[DONE] and state[PHASE] == P_MOVE:
            legal = eng.legal_actions(state)
            peng = eng.game.peng
            for k in range(peng):
                pos = int(state[PEN + seat * peng + k])
                pts = [Q.cell_points(rel, Q.move_target(pos, a)) for a in legal
                       if Q.move_slot(a) == k]
                assert Q.reach(rel, pos) == (sum(pts), max(pts, default=-1))
        elif not state[DONE]:  # placement: a penguin of the seat to act on a free card
            a = eng.legal_actions(state)[0]
            board = state[CELL:CELL + CELLS + 1].copy()
            Q.occupy(board, a, seat + 1)
            assert board.tolist() == after(eng, state, a)[CELL:CELL + CELLS + 1].tolist()
    assert points is not None


@pytest.mark.parametrize("opts", VARIANTS, ids=IDS)
def test_scoring_queries_give_the_outcome(opts: dict) -> None:
    ends = 0
    for eng, state in games(opts, n_games=6, seed=1):
        if not state[DONE]:
            continue
        ends += 1
        game = eng.game
        n = game.num_players
        points, winners = eng.outcome(state)
        sd = game.state_dict(state)
        opt = sd["options"]["card_points"]
        piles = [[CARD_IDS[code] for code in pile] for pile in sd["piles"]]
        mine = [Q.pile_points(p, opt) for p in piles]
        assert mine == points.tolist()
        assert max(mine) <= Q.max_pile_points(opt)
        out = np.zeros(n, np.int64)
        Q.find_winners(np.array(mine, np.float64), np.array([len(p) for p in piles],
                                                             np.float64), n, out)
        assert out.tolist() == winners.tolist()
    assert ends == 6


@pytest.mark.parametrize("opts", VARIANTS, ids=IDS)
def test_card_points_are_the_config_table_and_bound_the_observation(opts: dict) -> None:
    game = card_envs.Engine(ENV_ID, **opts).game
    pts = game.options["card_points"]
    assert [Q.card_points(c, pts) for c in range(DECK)] == \
        game.cfg[CFG_PTS + 1:CFG_PTS + 1 + DECK].tolist()
    best35 = sorted((Q.card_points(c, pts) for c in range(DECK)), reverse=True)[:CELLS]
    assert Q.max_pile_points(pts) == sum(best35)
    assert Q.max_pile_points(pts) in game.obs_high.tolist()


def test_every_query_is_documented_and_listed() -> None:
    for name in Q.__all__:
        fn = getattr(Q, name)
        assert (inspect.getdoc(getattr(fn, "py_func", fn)) or "").strip(), name


def test_the_heuristic_goes_through_the_queries() -> None:
    """The heuristic's board, moves and reach are the queries themselves; its source walks no
    ray and decodes no cell of its own."""
    for name in ("observed_cells", "occupy", "move_slot", "move_target", "reach",
                 "cell_owner", "cell_points"):
        assert getattr(heuristic, name) is getattr(Q, name), name
    source = inspect.getsource(heuristic)
    for private in ("RAY", "RAYLEN", "NDIR", "MAX_DIST", "MOVES_PER_PENGUIN", "PTS_SHIFT",
                    "OWN_SHIFT", "F_FREE", "def _reach"):
        assert private not in source, private
    # and the scores it gives follow the query's reach: a lone own penguin on an empty board
    # (one free card next to it) is scored with that card as its best next card
    cells = np.zeros(CELLS + 1, np.int64)
    cells[0] = Q.cell_code(2, 1)
    cells[1] = Q.cell_code(3, 0)
    w = np.array([0.0, 0.0, 1.0, 0.0])
    assert heuristic._evaluate(cells, 0, w) == Q.reach(cells, 0)[1] == 3
