"""Whole random games of Isflak (``isflak_v0``) against the plain-Python reference
(``isflak_ref``, written from ``docs/rules/isflak.md``), with invariants; the same game without
the JIT; the heuristic agent. The spec's examples and the rules in detail: ``test_isflak.py``.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from card_envs.isflak.layout import MAX_SLOTS, SEAT_SCORE, obs_seat
from isflak_ref import (
    ALL_CARDS,
    CELLS,
    COLS,
    DIRS,
    ENV_ID,
    ROWS,
    Ref,
    brute_mask,
    cards_in,
    deck_grid,
    decode_move,
    hyp,
    load,
    make,
    mask_of,
    occupied,
    pts,
    ref_moves,
    ref_obs,
    ref_rewards,
    ref_winners,
    with_gaps,
)

# =============================================================================================
# 3. Whole random games against the reference, with invariants
# =============================================================================================
CONFIGS = [(2, {}), (3, {"start_player": "random"}), (4, {"reward_mode": "points"}),
           (6, {}), (2, {"penguins_per_player": 8}), (5, {"penguins_per_player": 3}),
           (3, {"penguins_per_player": 1, "card_points": [7, 0, 1]}),
           (2, {"card_points": {"ace": 20, "face": 10, "number": 20}})]  # int16 observations


@pytest.mark.parametrize("n, opts", CONFIGS)
@pytest.mark.parametrize("seed", [0, 1])
def test_random_game_matches_reference(n, opts, seed):
    env = make(n, **opts)
    env.reset(seed=seed)
    ref = Ref(env.state_dict())
    P = ref.P
    rnd = random.Random(seed)
    sd = env.state_dict()
    cards0 = sorted(cards_in(sd))
    assert len(cards0) == CELLS and len(set(cards0)) == CELLS and set(cards0) <= set(ALL_CARDS)
    steps = 0
    while True:
        sd = env.state_dict()
        assert sd == ref.sd, steps
        env.game.check_state(env.state_array)
        assert sorted(cards_in(sd)) == cards0  # conservation: grid (incl. under penguins) + piles
        assert len(occupied(sd)) == sum(p is not None for row in sd["penguins"] for p in row)
        assert all(sd["grid"][r][c] is not None for r, c in occupied(sd))
        want = brute_mask(sd)
        for seat, agent in enumerate(env.possible_agents):
            ob = env.observe(agent)
            assert ob["observation"].tolist() == ref_obs(sd, seat), (steps, seat)
            assert env.observation_space(agent).contains(ob)
            if seat == sd["current_player"]:
                assert set(np.flatnonzero(ob["action_mask"]).tolist()) == want
            else:
                assert not ob["action_mask"].any()
        for q, pile in enumerate(sd["piles"]):  # points = recount of the pile
            o = env.observe(env.possible_agents[q])["observation"]
            assert o[obs_seat(0, P) + P + SEAT_SCORE] == sum(pts(c, ref.points) for c in pile)
        if sd["phase"] == "end":
            break
        assert want
        a = rnd.choice(sorted(want))
        if sd["phase"] == "movement":  # the path is free cards only
            k, d, s = decode_move(a)
            r0, c0 = sd["penguins"][sd["current_player"]][k]
            for i in range(1, s + 1):
                r, c = r0 + DIRS[d][0] * i, c0 + DIRS[d][1] * i
                assert sd["grid"][r][c] is not None and (r, c) not in occupied(sd)
        env.step(a)
        ref.step(a)
        steps += 1
        if sd["phase"] != "end" and not all(env.terminations.values()):
            assert all(r == 0 for r in env.rewards.values())
    assert all(sd["out"]) and not occupied(sd)
    assert steps >= n * P
    scores = ref.scores()
    mode = env.game.options["reward_mode"]
    for i, agent in enumerate(env.possible_agents):
        assert env.infos[agent] == {"points": float(scores[i][0]),
                                    "winner": ref_winners(scores)[i]}
        assert env.rewards[agent] == ref_rewards(mode, scores)[i]


@hyp(25)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(2, 6), data=st.data())
def test_invariants_during_random_play(seed, n, data):
    P = data.draw(st.integers(1, MAX_SLOTS // n))
    env = make(n, penguins_per_player=P, start_player="random")
    env.reset(seed=seed)
    rnd = random.Random(seed)
    cards0 = sorted(cards_in(env.state_dict()))
    for _ in range(CELLS + 1 + MAX_SLOTS):  # placements + at most 35 cards taken by moves
        sd = env.state_dict()
        assert sorted(cards_in(sd)) == cards0
        env.game.check_state(env.state_array)
        assert set(env.legal_actions()) == brute_mask(sd)
        if sd["phase"] == "end":
            break
        prev = sd
        a = rnd.choice(env.legal_actions())
        env.step(a)
        sd = env.state_dict()
        if prev["phase"] == "movement":  # the penguin slid along a line of free cards
            p = prev["current_player"]
            k, d, s = decode_move(a)
            r0, c0 = prev["penguins"][p][k]
            for i in range(1, s + 1):
                r, c = r0 + DIRS[d][0] * i, c0 + DIRS[d][1] * i
                assert prev["grid"][r][c] is not None and (r, c) not in occupied(prev)
            assert sd["penguins"][p][k] == [r, c] or (sd["out"][p] and sd["grid"][r][c] is None)
            assert sd["grid"][r0][c0] is None and sd["piles"][p][len(prev["piles"][p])] == \
                prev["grid"][r0][c0]
            others = [q for q in range(n) if q != p and not sd["out"][q]]
            assert all(sd["penguins"][q] == prev["penguins"][q] for q in others)
    else:
        pytest.fail("game did not end")
    assert sd["steps"] <= n * P + CELLS


@hyp(60)
@given(data=st.data(), n=st.integers(2, 6))
def test_arbitrary_positions_masks_and_moves_match_reference(data, n):
    """Random gaps and penguins anywhere: the mask equals the brute-force recount and every
    legal move gives the reference's next state."""
    P = data.draw(st.integers(1, MAX_SLOTS // n))
    cells = [(r, c) for r in range(ROWS) for c in range(COLS)]
    perm = data.draw(st.permutations(cells))
    n_gaps = data.draw(st.integers(0, CELLS - n * P))
    gaps, pen_cells = perm[:n_gaps], perm[n_gaps:n_gaps + n * P]
    grid, piles = with_gaps(deck_grid(data.draw(st.integers(0, 99)), avoid_aces=False)[0],
                            gaps, 0, n)
    out = [False] * n
    pens = [[list(pen_cells[q * P + k]) for k in range(P)] for q in range(n)]
    for q in range(1, n):  # some other seats are already out (their cells are gaps)
        if data.draw(st.booleans()):
            out[q] = True
            for k in range(P):
                r, c = pens[q][k]
                piles[q].append(grid[r][c])
                grid[r][c] = None
            pens[q] = [None] * P
    d = {"grid": grid, "penguins": pens, "piles": piles, "out": out, "options": {}}
    assume(ref_moves(d, 0))  # seat 0 must be able to act
    env = load(n, grid, pens, piles, out, cur=0, penguins_per_player=P)
    sd = env.state_dict()
    want = ref_moves(sd, 0)
    assert mask_of(env) == want
    for a in sorted(want):
        e = env.clone()
        e.step(a)
        ref = Ref(sd)
        ref.step(a)
        assert e.state_dict() == ref.sd
        e.game.check_state(e.state_array)


def test_same_game_without_jit():
    """NUMBA_DISABLE_JIT=1 runs the kernels as plain Python: same observations and rewards."""
    from card_envs.testing import digest

    opts = {"num_players": 3, "start_player": "random"}
    code = ("from card_envs.testing import digest; "
            f"print(digest({ENV_ID!r}, {opts!r}, seed=5, games=1))")
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1"}
    out = subprocess.run([sys.executable, "-W", "ignore", "-c", code],
                         capture_output=True, text=True, env=env, check=True, timeout=300)
    assert out.stdout.strip() == digest(ENV_ID, opts, seed=5, games=1)


# =============================================================================================
# 4. The heuristic agent
# =============================================================================================
def test_heuristic_beats_random_and_plays_legal_moves():
    from card_envs.arena import run_arena

    res = run_arena(ENV_ID, ["heuristic", "random"], games=200, seed=5, progress=False)
    assert res["heuristic"].win_rate >= 0.9
    res = run_arena(ENV_ID, ["heuristic", "random", "random"], games=30, num_players=3,
                    seed=1, progress=False, penguins_per_player=2,
                    card_points={"ace": 1, "face": 5, "number": 0})
    assert res["heuristic"].games == 30
