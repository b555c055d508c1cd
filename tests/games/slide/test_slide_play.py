"""Slide (``slide_v0``) whole games against the plain-Python reference: length, masks,
observations, outcome; invariants during random play; the start player and the first-player
token (rules: ``docs/rules/slide.md``).

The checks do not trust the engine: the rules are re-implemented in plain Python
(``ref_*`` / ``RefSlide`` in ``tests/games/slide/slide_ref.py``) and compared with the engine.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from card_envs import Engine
from slide_ref import (
    ENV_ID,
    RefSlide,
    brute_mask,
    full_counts,
    hyp,
    make,
    random_action,
    ref_obs,
    ref_rewards,
    ref_winners,
)


# =============================================================================================
# 3 + 4. Whole random games against the reference: length, masks, observations, outcome
# =============================================================================================
@pytest.mark.parametrize("n", range(2, 7))
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_game_matches_reference(n, seed):
    mode = "points" if seed == 2 else "win"
    env = make(n, reward_mode=mode, start_player="random" if seed == 1 else 0)
    env.reset(seed=seed)
    sd = env.state_dict()
    assert sd["phase"] == "reveal" and sd["round"] == 0 and sd["middle"] == []
    assert all(not x for g in sd["face_up"] for row in g for x in row)
    ref = RefSlide(n, sd["grids"], sd["first_player"])
    rng = np.random.default_rng(seed)
    steps = 0
    while True:
        sd = env.state_dict()
        assert (sd["grids"], sd["face_up"]) == (ref.grids, ref.faces), steps
        assert (sd["phase"], sd["round"], sd["first_player"], sd["current_player"]) == \
            (ref.phase, ref.round, ref.first, ref.cur), steps
        assert sd["middle"] == sorted(ref.middle)
        assert sd["steps"] == steps
        if sd["phase"] != "end":
            assert sd["reveals"] == ref.reveals
        # masks: brute force from the state == reference == env
        want = brute_mask(sd)
        assert want == set(ref.legal())
        for agent in env.possible_agents:
            ob = env.observe(agent)
            seat = env.possible_agents.index(agent)
            assert ob["action_mask"].dtype == np.int8
            assert ob["observation"].tolist() == ref_obs(sd, seat), (agent, steps)
            assert env.observation_space(agent).contains(ob)
            if sd["phase"] != "end" and seat == sd["current_player"]:
                assert set(np.flatnonzero(ob["action_mask"]).tolist()) == want
            else:
                assert not ob["action_mask"].any()
        if sd["phase"] == "end":
            break
        assert env.agent_selection == f"player_{sd['current_player']}"
        assert len(want) >= 1
        a = int(rng.choice(sorted(want)))
        env.step(a)
        ref.step(a)
        steps += 1
        if not all(env.terminations.values()):  # rewards only at the end
            assert all(r == 0 for r in env.rewards.values())
    # 16 rounds of 2n decisions each
    assert steps == 16 * 2 * n and ref.reveal_phases == 16
    scores = ref.scores()
    wins = ref_winners(scores)
    for i, agent in enumerate(env.possible_agents):
        assert env.infos[agent] == {"points": float(scores[i][0]), "winner": wins[i]}
        assert env.rewards[agent] == ref_rewards(mode, scores)[i]
    points, winners = Engine(ENV_ID, num_players=n).outcome(env.state_array)
    assert points.tolist() == [float(p) for p, _ in scores]
    assert winners.astype(bool).tolist() == wins


@pytest.mark.parametrize("n", range(2, 7))
def test_game_lasts_exactly_16_rounds(n):
    for seed in range(4):
        env = make(n, start_player="random")
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        steps, reveal_phases, pick_phases, prev_phase = 0, 1, 0, "reveal"
        rounds_seen = set()
        while not all(env.terminations.values()):
            sd = env.state_dict()
            rounds_seen.add(sd["round"])
            env.step(random_action(env, rng))
            steps += 1
            phase = env.state_dict()["phase"]
            if phase != prev_phase:
                reveal_phases += phase == "reveal"
                pick_phases += phase == "pick"
                # every phase lasts exactly n steps
                assert steps % n == 0
            prev_phase = phase
        assert steps == 16 * 2 * n
        assert reveal_phases == 16 and pick_phases == 16
        assert rounds_seen == set(range(16))
        assert env.state_dict()["steps"] == 16 * 2 * n


def test_engine_game_length_and_terminal():
    for n in range(2, 7):
        eng = Engine(ENV_ID, num_players=n)
        state = eng.new_state(7)
        rng = np.random.default_rng(n)
        k = 0
        while not eng.is_terminal(state):
            r = eng.apply(state, int(rng.choice(eng.legal_actions(state))))
            k += 1
            if not eng.is_terminal(state):
                assert not r.any()
        assert k == 32 * n
        assert eng.current_player(state) == -1 and eng.legal_actions(state) == []


# =============================================================================================
# 6. Invariants during random play
# =============================================================================================
@hyp(20)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 6))
def test_invariants_during_random_play(seed, n):
    env = make(n)
    env.reset(seed=seed)
    sd = env.state_dict()
    deal = full_counts(sd)
    assert sum(deal.values()) == 16 * n
    assert all(1 <= v <= 10 and c <= 10 for v, c in deal.items())
    rng = np.random.default_rng(seed)
    prev_phase = "reveal"
    while True:
        sd = env.state_dict()
        env.game.check_state(env.state_array)
        counts = full_counts(sd)
        assert counts == deal  # no card appears or vanishes
        assert all(c <= 10 for c in counts.values())
        cards = [sum(v > 0 for row in g for v in row) for g in sd["grids"]]
        down = [sum(v > 0 and not up for rv, ru in zip(g, f) for v, up in zip(rv, ru))
                for g, f in zip(sd["grids"], sd["face_up"])]
        for g, f in zip(sd["grids"], sd["face_up"]):  # empty slots are never face up
            assert all(not (v == 0 and up) for rv, ru in zip(g, f) for v, up in zip(rv, ru))
        if sd["phase"] != "pick":
            assert cards == [16] * n
        else:
            assert all(c in (15, 16) for c in cards)
            assert sum(16 - c for c in cards) == len(sd["middle"])
        if sd["phase"] == "reveal":
            assert down == [16 - sd["round"]] * n
            assert sd["middle"] == []
            if prev_phase == "pick":  # a round just ended: the middle was emptied
                assert sd["current_player"] == sd["first_player"]
        if sd["phase"] == "end":
            assert down == [0] * n and sd["middle"] == []
            assert all(up for f in sd["face_up"] for row in f for up in row)
            break
        prev_phase = sd["phase"]
        env.step(random_action(env, rng))


# =============================================================================================
# 8. Start player and the first-player token
# =============================================================================================
@pytest.mark.parametrize("n", range(2, 7))
def test_random_start_player_is_seeded_and_covers_all_seats(n):
    firsts = []
    for seed in range(80):
        a, b = make(n, start_player="random"), make(n, start_player="random")
        a.reset(seed=seed)
        b.reset(seed=seed)
        assert a.state_dict() == b.state_dict()
        f = a.state_dict()["first_player"]
        assert a.agent_selection == f"player_{f}"
        assert Engine(ENV_ID, num_players=n, start_player="random").new_state(seed).tolist() \
            == a.state_array.tolist()
        firsts.append(f)
    assert set(firsts) == set(range(n))
    for k in range(n):
        e = make(n, start_player=k)
        e.reset(seed=1)
        assert e.state_dict()["first_player"] == k and e.agent_selection == f"player_{k}"
    e = make(n)
    e.reset(seed=1)
    assert e.state_dict()["first_player"] == 0


@pytest.mark.parametrize("n", [2, 3, 5])
def test_token_passes_left_each_round(n):
    env = make(n, start_player="random")
    env.reset(seed=42)
    start = env.state_dict()["first_player"]
    rng = np.random.default_rng(0)
    order: list[tuple[str, int, int]] = []
    while not all(env.terminations.values()):
        sd = env.state_dict()
        assert sd["first_player"] == (start + sd["round"]) % n
        order.append((sd["phase"], sd["round"], sd["current_player"]))
        env.step(random_action(env, rng))
    for rnd in range(16):
        first = (start + rnd) % n
        for phase in ("reveal", "pick"):
            seats = [p for ph, r, p in order if ph == phase and r == rnd]
            assert seats == [(first + i) % n for i in range(n)]  # clockwise from the token
