"""Slide's rule queries (``card_envs.slide.queries``) against the engine and the plain-Python
reference (``slide_ref.py``): the scoring and the winners equal ``outcome`` at the end of random
games, the gap and the sides give exactly the legal picks, a pick's grid is the engine's push,
and the heuristic, the features and the view ask the queries instead of keeping their own
copies of the rules."""

from __future__ import annotations

import inspect

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

import card_envs.agents.slide as heuristic
from card_envs.slide import features, queries, view
from card_envs.slide import layout as L
from card_envs.slide.parts import estimate
from slide_ref import (
    brute_mask,
    hyp,
    make,
    pick_action,
    random_action,
    ref_push,
    ref_score,
    ref_sides,
    ref_winners,
)


def _played(n: int, seed: int, each_step) -> object:
    """Play a random ``n``-seat game, calling ``each_step(env)`` before every action; returns
    the finished env."""
    env = make(n)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    while not env.terminations[env.agent_selection]:
        each_step(env)
        env.step(random_action(env, rng))
    return env


def _grid(flat) -> list[list[int]]:
    return [list(flat[4 * r:4 * r + 4]) for r in range(4)]


def test_scores_and_winners_are_the_engines_outcome() -> None:
    for n, seed in ((2, 1), (3, 2), (6, 3)):
        env = _played(n, seed, lambda env: None)
        state = env.state_array
        points, winners = env.game.outcome(state)
        scores = [tuple(int(x) for x in queries.seat_points(state, q)) for q in range(n)]
        assert [p for p, _ in scores] == points.astype(int).tolist()
        grids = state[L.GRID:L.GRID + L.SLOTS * n].reshape(n, L.SLOTS)
        assert scores == [tuple(int(x) for x in queries.grid_points(g)) for g in grids]
        assert scores == [ref_score(_grid(g)) for g in grids]
        out = np.zeros(n, np.int64)
        queries.winning_seats(np.array([p for p, _ in scores]),
                              np.array([c for _, c in scores]), n, out)
        assert out.tolist() == winners.tolist() == [int(w) for w in ref_winners(scores)]


@hyp(200)
@given(flat=st.lists(st.integers(0, L.FACE_DOWN_CODE), min_size=16, max_size=16))
def test_vanishing_and_face_up_points(flat) -> None:
    """``paired`` marks the face-up cards with an equal neighbour; ``grid_points`` of a code
    grid is the reference scoring with the face-down cards taken out."""
    g = np.array(flat, np.int64)
    mask = np.zeros(16, np.int64)
    k = queries.paired(g, mask)
    up = _grid([0 if v == L.FACE_DOWN_CODE else v for v in flat])
    expect = [int(0 < up[r][c] and any(0 <= a < 4 and 0 <= b < 4 and up[a][b] == up[r][c]
                                       for a, b in ((r - 1, c), (r + 1, c), (r, c - 1),
                                                    (r, c + 1))))
              for r in range(4) for c in range(4)]
    assert mask.tolist() == expect and k == sum(expect)
    assert [bool(queries.vanishes(g, i)) for i in range(16)] == [bool(x) for x in expect]
    assert tuple(int(x) for x in queries.grid_points(g)) == ref_score(up)


def test_gap_and_sides_are_the_legal_picks_and_push_is_the_engines() -> None:
    checked = 0

    def check(env) -> None:
        nonlocal checked
        seat = env.agents.index(env.agent_selection)
        obs = env.observe(env.agent_selection)
        o, mask = obs["observation"], obs["action_mask"]
        sd = env.state_dict()
        legal = set(np.flatnonzero(mask).tolist())
        assert legal == brute_mask(sd)
        e = int(queries.gap(o[:16]))
        if sd["phase"] == "reveal":
            assert e == -1
            return
        assert e == sd["reveals"][seat]
        sides = [s for s in range(4) if queries.side_ok(e, s)]
        assert sides == ref_sides(e)
        assert legal == {pick_action(v, s) for v in set(sd["middle"]) for s in sides}
        g = np.array(sd["grids"][seat], np.int64).reshape(16)
        out = np.empty(16, np.int64)
        for s in sides:
            v = sd["middle"][0]
            queries.push(g, e, s, v, out)
            after, _ = ref_push(sd["grids"][seat], sd["face_up"][seat], e, s, v)
            assert _grid(out.tolist()) == after
            state = env.state_array.copy()
            env.game.k_step(state, env.game.cfg, pick_action(v, s), np.zeros(6))
            base = L.GRID + seat * L.SLOTS
            assert (state[base:base + L.SLOTS] == out).all()
        checked += 1

    for n, seed in ((2, 4), (4, 5)):
        _played(n, seed, check)
    assert checked > 40


def test_heuristic_features_and_view_ask_the_queries() -> None:
    """No private copy of a rule: the heuristic, its estimate, the features and the view use
    the queries' own functions, and none of them defines a push, a gap or a scoring."""
    for name in ("gap", "push", "side_ok"):
        assert getattr(heuristic, name) is getattr(queries, name)
    assert estimate.vanishes is queries.vanishes
    for name in ("gap", "grid_points", "paired", "shift_in", "side_ok"):
        assert getattr(features, name) is getattr(queries, name)
    for name in ("grid_points", "paired", "winning_seats"):
        assert getattr(view, name) is getattr(queries, name)
    for module in (heuristic, estimate, features, view):
        own = {n for n, f in vars(module).items()
               if callable(f) and getattr(getattr(f, "py_func", f), "__module__", None) ==
               module.__name__}
        assert not own & {"_push", "push", "gap", "shift_in", "side_ok", "grid_points",
                          "_face_up_points", "_paired", "paired", "vanishes"}
    src = inspect.getsource(heuristic)
    assert "shift_in(" not in src and "g[i - 1] ==" not in src
