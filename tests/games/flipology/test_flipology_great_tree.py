"""Flipology's Great Tree variant: Regrowth, rows, adjacency, start players
(``docs/rules/flipology.md``).

Positions are set up by swapping chosen cards into place in a real dealt game (so every
card stays conserved), then the engine is driven through its public actions; helpers and
independent references: ``tests/games/flipology/flipology_ref.py``.
"""

from __future__ import annotations

import numpy as np

import card_envs
from card_envs.core import kernels as K
from card_envs.flipology import layout as L
from card_envs.flipology.game import adjacency
from flipology_ref import (
    ENV_ID,
    KINDS,
    act_pos,
    after_setup,
    arrange,
    legal_positions,
    phase,
)

RL, NL, _ = L.ROW_SHAPES[L.GREAT_TREE]  # row length, levels (, hand size)
SP = RL * NL  # positions per seat


def pos(seat: int, level: int, col: int) -> int:
    """Absolute Great Tree position."""
    return seat * SP + level * RL + col


def test_great_tree_setup_regrowth_and_rows() -> None:
    env = card_envs.make_raw(ENV_ID, variant="great_tree", num_players=2)
    env.reset(seed=1)
    g = env.game
    assert phase(env) == "regrow" and env.legal_actions() == [g.skip + L.A_REGROW,
                                                                g.skip + L.A_KEEP]
    hand = list(env.state_dict()["hands"][0])
    env.step(g.skip + L.A_REGROW)
    assert env.state_dict()["hands"][0] != hand and env.state_dict()["regrow_used"][0]
    assert not set(hand) & set(env.state_dict()["hands"][0])
    for _ in range(4):  # the 5th card is placed automatically
        env.step(env.legal_actions()[0])
    assert phase(env) == "regrow" and env.state_array[K.CUR] == 1
    env.step(g.skip + L.A_KEEP)
    for _ in range(4):
        env.step(env.legal_actions()[0])
    assert phase(env) == "turn"
    kinds = {KINDS[k] for k in g.kinds if True}
    assert "rain" in kinds  # the deck has Rain and Hermit crabs, set aside in the Great Tree
    for c in range(g.ncards):
        if KINDS[g.kinds[c]] in ("rain", "hermit_crab"):
            assert g.aside[c]
    turns = 0
    while env.state_dict()["levels"] == 1:  # round 1: two turns each
        if phase(env) == "turn":
            turns += 1
            assert legal_positions(env) == {pos(int(env.state_array[K.CUR]), 0, c)
                                            for c in range(RL)}
        env.step(env.legal_actions()[0])
    assert turns == 4
    d = env.state_dict()
    # new start player: highest public score; previous start keeps it when tied
    pub = [sum((-g.points[c] if KINDS[g.kinds[c]] in ("sloth", "koala") else g.points[c])
               for c, f in zip(d["rows"][s][0], d["face_up"][s][0]) if f and c != "null")
           for s in range(2)]
    assert d["start_player"] == (0 if pub[0] >= pub[1] else 1)
    # seat 0 used its regrowth, seat 1 may still regrow
    assert d["phase"] == ("setup" if d["start_player"] == 0 else "regrow")
    for _ in range(200):
        if phase(env) == "turn":
            break
        if phase(env) == "regrow":
            assert env.state_array[K.CUR] == 1
        env.step(env.legal_actions()[0])
    assert env.state_dict()["levels"] == 2
    assert min(legal_positions(env) - {0}) % SP >= RL  # turns flip the top row


def test_great_tree_adjacency_vertical_and_frog_corner() -> None:
    adj, d2 = adjacency(2, RL, NL, 2)
    assert set(adj[7]) - {-1} == {6, 8, 2}  # level 1 col 2: left, right, below
    assert set(adj[0]) - {-1} == {1, 15 + 4, 5}  # row end touches seat 1's end
    assert 1 in d2[5] and 6 in d2[0]  # around a corner
    assert 10 not in d2[0]  # level 2 does not exist yet
    adj3, d3 = adjacency(2, RL, NL, 3)
    assert 10 in d3[0] and 12 in d3[2]


def test_great_tree_monkey_chooses_two_of_four() -> None:
    env = after_setup(variant="great_tree")
    while env.state_dict()["levels"] < 2 or phase(env) != "turn":
        env.step(env.legal_actions()[0])
    cur = int(env.state_array[K.CUR])
    arrange(env, {pos(cur, 1, 2): "monkey"}, {pos(cur, 1, 2): 0})
    env.step(act_pos(env, pos(cur, 1, 2)))
    left, right, below = pos(cur, 1, 1), pos(cur, 1, 3), pos(cur, 0, 2)
    assert legal_positions(env) == {left, right, below}  # level 2 not dealt yet: 3
    env.step(act_pos(env, below))
    assert legal_positions(env) == {left, right}


def _gt_level2(seed: int = 0):
    env = after_setup(seed=seed, variant="great_tree")
    while env.state_dict()["levels"] < 2 or phase(env) != "turn":
        env.step(env.legal_actions()[0])
    return env


def test_great_tree_hawk_reaches_own_lower_row_snake_stays_in_its_row() -> None:
    env = _gt_level2()
    cur = int(env.state_array[K.CUR])
    arrange(env, {pos(cur, 1, 1): "hawk"}, {p: 0 for p in range(env.game.npos)
                                            if env.state_array[L.POS + p] >= 0})
    env.step(act_pos(env, pos(cur, 1, 1)))
    top = {pos(cur, 1, c) for c in range(RL)}
    dealt = {p for p in range(env.game.npos) if env.state_array[L.POS + p] >= 0}
    assert legal_positions(env) == dealt - top  # own level-0 row included
    env = _gt_level2(seed=1)
    cur = int(env.state_array[K.CUR])
    arrange(env, {pos(cur, 1, 1): "snake"}, {p: 0 for p in range(env.game.npos)
                                             if env.state_array[L.POS + p] >= 0})
    env.step(act_pos(env, pos(cur, 1, 1)))
    assert legal_positions(env) == {pos(cur, 1, c) for c in (0, 2, 3, 4)}


def test_great_tree_new_start_player_rule() -> None:
    from card_envs.flipology.parts.rounds import new_start

    env = after_setup(variant="great_tree", num_players=3)
    g = env.game
    arrange(env, {pos(0, 0, 0): ("panda", 9), pos(1, 0, 0): ("kiwi", 9),
                  pos(2, 0, 0): ("quokka", 9)},
            {p: 0 for p in range(g.npos) if env.state_array[L.POS + p] >= 0})
    s = env.state_array.copy()
    s[L.FACE + pos(1, 0, 0)] = s[L.FACE + pos(2, 0, 0)] = 1
    new_start(s, g.cfg)
    assert s[L.START] == 1  # seats 1 and 2 tied highest: first clockwise from seat 0
    s[L.START] = 0
    s[L.FACE + pos(0, 0, 0)] = 1
    new_start(s, g.cfg)
    assert s[L.START] == 0  # the previous start player is tied for highest: no change


def test_great_tree_resample_respects_regrowth() -> None:
    env = card_envs.make_raw(ENV_ID, variant="great_tree")
    env.reset(seed=2)
    g = env.game
    returned = env.state_dict()["hands"][0]
    env.step(g.skip + L.A_REGROW)  # seat 0 returns its 5 cards to the deck
    assert sorted(env.state_dict(observer=0)["returned"][0]) == sorted(returned)
    assert env.state_dict(observer=1)["returned"][0] == [None] * 5
    rng = np.random.default_rng(0)
    for _ in range(50):
        alt = env.resample(0, rng)
        g.check_state(alt.state_array)
        d = alt.state_dict()
        assert not set(returned) & set(d["hands"][1])  # dealt before the Regrowth
        assert set(returned) <= set(d["deck"])
