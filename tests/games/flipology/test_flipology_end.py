"""Flipology's end: Hermit crabs, scoring, the Moon, the tie-break and the series
(``docs/rules/flipology.md``).

Positions are set up by swapping chosen cards into place in a real dealt game (so every
card stays conserved), then the engine is driven through its public actions; helpers and
independent references: ``tests/games/flipology/flipology_ref.py``.
"""

from __future__ import annotations

import random

import numpy as np

import card_envs
from card_envs.core import kernels as K
from card_envs.flipology import layout as L
from flipology_ref import (
    ENV_ID,
    act_pos,
    after_setup,
    all_down,
    arrange,
    card_of,
    exact,
    obs_sections,
    phase,
    ref_points,
)


def play_out(env, choose=None, rnd=None) -> None:
    rnd = rnd or random.Random(0)
    while not env.state_array[K.DONE]:
        legal = env.legal_actions()
        a = choose(env, legal) if choose else None
        env.step(a if a is not None else rnd.choice(legal))


def test_hermit_crab_picks_sloth_face_down() -> None:
    env = after_setup()
    g = env.game
    arrange(env, exact(env, {3: "hermit_crab", 10: "cat"}), {**all_down(env), 3: 1})
    s = env.state_array.copy()
    sloth = [c for c in card_of(g, "sloth") if s[L.DISC + c]]
    if not sloth:  # put a Sloth into the discard pile
        c = card_of(g, "sloth", avoid=set(s[L.POS:L.POS + g.npos].tolist()))[0]
        deck = list(s[L.DECK:L.DECK + s[L.DECKN]])
        x = int(np.flatnonzero(s[L.DISC:L.DISC + g.ncards])[0])
        s[L.DISC + x] = 0
        s[L.DECK + deck.index(c)] = x
        s[L.DISC + c] = 1
        s[L.SEQ + c], s[L.SEQ + x] = s[L.SEQ + x], s[L.SEQ + c]
        sloth = [c]
    s[L.ROUND] = 2
    s[L.TURN] = 1
    s[K.CUR] = 1
    env.load_state_dict(g.state_dict(s))
    env.step(act_pos(env, 10))
    assert phase(env) == "hermit" and env.state_array[K.CUR] == 0
    assert env.game.disc0 + sloth[0] in env.legal_actions()
    view = env.state_dict(observer=0)
    assert None not in view["discard"]  # the owner sees the whole pile
    env.step(g.disc0 + sloth[0])
    assert phase(env) == "hermit_count"
    assert env.legal_actions() == [g.skip + L.A_COUNT_UP, g.skip + L.A_COUNT_DOWN]
    env.step(g.skip + L.A_COUNT_DOWN)
    assert env.state_array[K.DONE]
    d = env.state_dict()
    assert d["picked"] == [[sloth[0], "down"]] and d["hermit_bonus"][0] == g.points[sloth[0]]
    points, _ = g.outcome(env.state_array)
    assert points.tolist() == ref_points(g, d)


def _finish_with(env, faces: dict) -> None:
    """Jump to the last turn of round 3 (seat n-1, start player 0) with ``faces``; it flips
    its face-down Cat at the right end of its row (+ its points, no effect)."""
    s = env.state_array.copy()
    n = env.game.num_players
    for p, f in faces.items():
        s[L.FACE + p] = f
        if f:
            s[L.KNOW + s[L.POS + p]] = L.ALL_SEATS
    s[L.ROUND], s[L.TURN], s[K.CUR] = 2, n - 1, n - 1
    env.load_state_dict(env.game.state_dict(s))
    env.step(act_pos(env, (n - 1) * env.game.seatpos + env.game.rowlen - 1))


def test_moon_lowest_wins_and_points_reward_negated() -> None:
    env = after_setup(moon=True, reward_mode="points")
    arrange(env, exact(env, {0: "moon", 1: ("koala", 8), 7: ("panda", 9), 13: ("cat", 4)}),
            {**all_down(env), 0: 1, 1: 1, 7: 1})
    _finish_with(env, {})
    pts, win = env.game.outcome(env.state_array)
    assert pts.tolist() == [-1, 13] and win.tolist() == [1, 0]
    assert env._cumulative_rewards == {"player_0": 1.0, "player_1": -13.0}


def test_species_tie_break() -> None:
    env = after_setup()
    # seat 0: two different frogs (two species) + mole + hawk: 4 species; seat 1: two
    # copies of the same hawk (one species) + mole + cat: 3 species
    arrange(env, exact(env, {0: ("frog", 4), 1: ("frog", 5), 2: ("mole", 1), 3: ("hawk", 3),
                  7: ("hawk", 4), 8: ("hawk", 4), 9: ("mole", 1), 13: ("cat", 4)}),
            {**all_down(env), 0: 1, 1: 1, 2: 1, 3: 1, 7: 1, 8: 1, 9: 1})
    _finish_with(env, {})
    pts, win = env.game.outcome(env.state_array)
    assert pts.tolist() == [13, 13] and win.tolist() == [1, 0]


def test_series_bonus_moon_25_and_next_start() -> None:
    env = after_setup(series=True, moon=True)
    arrange(env, exact(env, {0: ("panda", 9), 7: ("kiwi", 9), 8: ("dog", 5), 13: ("cat", 4)}),
            {**all_down(env), 0: 1, 7: 1, 8: 1})
    _finish_with(env, {})
    d = env.state_dict()
    assert d["totals"] == [9, 18 + 10] and d["game_number"] == 1 and d["start_player"] == 1
    assert d["phase"] == "setup" and d["current_player"] == 1
    env2 = after_setup(series=True, moon=True)
    arrange(env2, exact(env2, {0: "moon", 7: ("kiwi", 9), 13: ("cat", 4)}),
            {**all_down(env2), 0: 1, 7: 1})
    _finish_with(env2, {})
    assert env2.state_dict()["totals"] == [25, 0]


def test_series_ends_at_100_or_max_games() -> None:
    env = card_envs.make_raw(ENV_ID, series=True, max_games=2)
    env.reset(seed=3)
    play_out(env)
    d = env.state_dict()
    pts, win = env.game.outcome(env.state_array)
    assert d["game_number"] == 2 or max(d["totals"]) >= 100
    assert pts.tolist() == d["totals"]
    assert win.tolist() == [int(t == max(d["totals"])) for t in d["totals"]]
    env = card_envs.make_raw(ENV_ID, series=True)
    env.reset(seed=4)
    play_out(env)
    d = env.state_dict()
    assert max(d["totals"]) >= 100 or d["game_number"] == 20


def test_series_shared_win_next_start_first_winner_clockwise() -> None:
    env = after_setup(num_players=3, series=True)
    arrange(env, exact(env, {7: ("panda", 9), 8: ("cat", 4), 14: ("kiwi", 9), 20: ("cat", 4)}),
            {**all_down(env), 7: 1, 8: 1, 14: 1})
    _finish_with(env, {})
    d = env.state_dict()
    assert d["totals"] == [0, 23, 23] and d["start_player"] == 1


def _to_discard(env, kind: str) -> int:
    """Swap a card of ``kind`` (from the deck) into the discard pile; returns its id."""
    s = env.state_array.copy()
    g = env.game
    deck = list(s[L.DECK:L.DECK + s[L.DECKN]])
    c = next(x for x in card_of(g, kind) if x in deck)
    x = int(np.flatnonzero(s[L.DISC:L.DISC + g.ncards])[0])
    s[L.DISC + x], s[L.DISC + c] = 0, 1
    s[L.SEQ + c], s[L.SEQ + x] = s[L.SEQ + x], s[L.SEQ + c]
    s[L.DECK + deck.index(c)] = x
    s[L.KNOW + c], s[L.KNOW + x] = s[L.KNOW + x], 0
    env.load_state_dict(g.state_dict(s))
    return c


def test_two_hermit_crabs_each_pick_once_in_order() -> None:
    env = after_setup()
    arrange(env, exact(env, {3: "hermit_crab", 4: "hermit_crab", 13: ("cat", 4)}),
            {**all_down(env), 3: 1, 4: 1})
    panda = _to_discard(env, "panda")
    _finish_with(env, {})
    g = env.game
    assert phase(env) == "hermit" and env.state_array[K.CUR] == 0
    assert env.observe("player_0")["observation"][obs_sections(g).discard + panda] == 1
    env.step(g.disc0 + panda)
    assert phase(env) == "hermit" and g.disc0 + panda not in env.legal_actions()
    env.step(g.skip)
    assert env.state_array[K.DONE]
    assert env.state_dict()["hermit_bonus"] == [9, 0]
    assert g.outcome(env.state_array)[0].tolist() == [9 + 4, 4]
