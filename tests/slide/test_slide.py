"""Rule tests of Slide (``slide_v0``) against the specification ``shared/rules/slide.md``.

The checks do not trust the engine: the push, the legal sides, the final scoring, the winner
rule, the rewards, the observation and a whole game are re-implemented here in plain Python
(``ref_*`` / ``RefSlide`` in ``tests/slide_ref.py``) and compared with the engine step by step.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from card_envs import Engine, IllegalActionError
from card_envs.core import kernels as K
from card_envs.slide import rules as R
from slide_ref import (
    BOTTOM,
    CHECKER_7_10,
    CHECKER_9_10,
    ENV_ID,
    EXAMPLE_GRID,
    FACE_DOWN,
    LEFT,
    PICK0,
    RIGHT,
    SIDE_NAMES,
    TOP,
    TWO_SINGLES_19,
    RefSlide,
    brute_mask,
    edge_end,
    full_counts,
    hyp,
    last_pick_env,
    load_pick_state,
    make,
    mask_of,
    pick_action,
    random_action,
    ref_obs,
    ref_push,
    ref_rewards,
    ref_score,
    ref_sides,
    ref_winners,
)


# =============================================================================================
# 1. The examples of slide.md
# =============================================================================================
def example_position():
    """2 players, round 5, pick phase, seat 0 to act with its gap at (1,2); seat 1's gap is the
    corner (0,0). Middle: 7 and 2. 10 face-down cards per grid (16 - 5 - 1)."""
    g0 = [[1, 2, 3, 4], [5, 6, 0, 8], [9, 10, 1, 2], [3, 4, 5, 6]]
    f0 = [[True, False, False, True], [False, True, False, False],
          [False, False, True, False], [False, False, False, True]]
    g1 = [[0, 7, 8, 9], [10, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 1]]
    f1 = [[False, True, False, True], [False, False, True, False],
          [False, True, False, False], [True, False, False, False]]
    return load_pick_state(2, [g0, g1], [f0, f1], [7, 2], 5, 0, 0, [6, 0])


def test_example_push_from_left_into_gap_at_1_2():
    env = example_position()
    before = env.state_dict()
    assert before["grids"][0][1] == [5, 6, 0, 8]
    assert pick_action(7, LEFT) in mask_of(env)
    env.step(pick_action(7, LEFT))
    after = env.state_dict()
    # row 1 [a b _ d] -> [7 a b d]; a (face down) and b (face up) keep their faces; 7 face up
    assert after["grids"][0][1] == [7, 5, 6, 8]
    assert after["face_up"][0][1] == [True, False, True, False]
    for r in (0, 2, 3):  # other rows untouched
        assert after["grids"][0][r] == before["grids"][0][r]
        assert after["face_up"][0][r] == before["face_up"][0][r]
    assert after["grids"][1] == before["grids"][1]
    assert after["middle"] == [2]
    assert after["current_player"] == 1 and after["phase"] == "pick"


def test_example_corner_gap_allows_right_and_bottom_only():
    env = example_position()
    env.step(pick_action(7, LEFT))
    assert env.agent_selection == "player_1"
    assert env.state_dict()["grids"][1][0][0] == 0
    assert mask_of(env) == {pick_action(2, RIGHT), pick_action(2, BOTTOM)}
    assert ref_sides(0) == [RIGHT, BOTTOM]
    for side in (LEFT, TOP):  # straight into the gap: rejected, state unchanged
        sd = env.state_dict()
        with pytest.raises(IllegalActionError):
            env.step(pick_action(2, side))
        assert env.state_dict() == sd
    env.step(pick_action(2, RIGHT))
    sd = env.state_dict()
    assert sd["grids"][1][0] == [7, 8, 9, 2]
    assert sd["face_up"][1][0] == [True, False, True, True]
    # the round is over: middle empty, token passed left, next reveal phase
    assert sd["middle"] == [] and sd["round"] == 6 and sd["first_player"] == 1
    assert sd["phase"] == "reveal" and sd["current_player"] == 1
    assert sd["reveals"] == [None, None]


def test_example_final_grid_scores_19_with_4_cards():
    assert ref_score(EXAMPLE_GRID) == (19, 4)
    flat = [v for row in EXAMPLE_GRID for v in row]
    for seat in range(R.MAX_PLAYERS):
        state = np.zeros(R.STATE_SIZE, np.int32)
        state[R.GRID + 16 * seat:R.GRID + 16 * seat + 16] = flat
        assert tuple(int(x) for x in R.grid_points(state, seat)) == (19, 4)
    # engine outcome on a finished game that ends with this grid
    env, last = last_pick_env([EXAMPLE_GRID, CHECKER_9_10])
    eng = Engine(ENV_ID, num_players=2)
    state = env.state_array.copy()
    rewards = eng.step(state, last)
    assert eng.is_terminal(state)
    points, winners = eng.outcome(state)
    assert points.tolist() == [19.0, 152.0] and winners.tolist() == [1, 0]
    assert rewards.tolist() == [1.0, -1.0]


@pytest.mark.parametrize("mode", ["win", "points"])
def test_example_final_infos_via_env(mode):
    env, last = last_pick_env([EXAMPLE_GRID, CHECKER_9_10], reward_mode=mode)
    assert env.agent_selection == "player_1"
    assert mask_of(env) == {pick_action(10, s) for s in (LEFT, RIGHT, BOTTOM)}
    env.step(last)
    sd = env.state_dict()
    assert sd["phase"] == "end" and sd["current_player"] is None
    assert sd["grids"] == [EXAMPLE_GRID, CHECKER_9_10]
    assert all(env.terminations.values())
    assert env.infos["player_0"] == {"points": 19.0, "winner": True}
    assert env.infos["player_1"] == {"points": 152.0, "winner": False}
    want = [1.0, -1.0] if mode == "win" else [-19.0, -152.0]
    assert [env.rewards[a] for a in env.possible_agents] == want
    assert [env._cumulative_rewards[a] for a in env.possible_agents] == want
    # the rewards are reported through last() as well
    while env.agents:
        a = env.agent_selection
        _, rew, term, trunc, info = env.last()
        assert term and not trunc
        assert rew == want[env.possible_agents.index(a)] and info == env.infos[a]
        env.step(None)


# =============================================================================================
# 2. Every push direction for every gap position
# =============================================================================================
def _push_case(rng: np.random.Generator, empty: int, round_: int):
    """Random 2-player pick position, seat 0 to act with its gap at ``empty``."""
    deck = rng.permutation(np.repeat(np.arange(1, 11), 10)).tolist()
    grids, faces = [], []
    for q, gap in enumerate((empty, int(rng.integers(16)))):
        vals = [deck.pop() for _ in range(15)]
        down = set(rng.choice(15, size=15 - round_, replace=False).tolist())
        g, f, k = [], [], 0
        for s in range(16):
            if s == gap:
                g.append(0)
                f.append(False)
            else:
                g.append(vals[k])
                f.append(k not in down)
                k += 1
        grids.append([g[4 * r:4 * r + 4] for r in range(4)])
        faces.append([f[4 * r:4 * r + 4] for r in range(4)])
        if q == 1:
            reveals = [empty, gap]
    middle = [deck.pop(), deck.pop()]
    return grids, faces, middle, reveals


@pytest.mark.parametrize("empty", range(16))
def test_push_every_side_every_gap_matches_reference(empty):
    rng = np.random.default_rng(1000 + empty)
    inner = ((empty // 4) in (1, 2)) + ((empty % 4) in (1, 2))
    assert len(ref_sides(empty)) == 2 + inner  # corner 2, edge 3, inner 4
    for _trial in range(3):
        round_ = int(rng.integers(16))
        grids, faces, middle, reveals = _push_case(rng, empty, round_)
        env = load_pick_state(2, grids, faces, middle, round_, 0, 0, reveals)
        assert mask_of(env) == {pick_action(v, s) for v in middle for s in ref_sides(empty)}
        base = env.state_dict()
        for side in range(4):
            e = env.clone()
            a = pick_action(middle[0], side)
            if side not in ref_sides(empty):
                with pytest.raises(IllegalActionError):
                    e.step(a)
                assert e.state_dict() == base
                continue
            e.step(a)
            sd = e.state_dict()
            g, f = ref_push(grids[0], faces[0], empty, side, middle[0])
            assert sd["grids"][0] == g and sd["face_up"][0] == f, (empty, side)
            assert sd["grids"][1] == grids[1] and sd["face_up"][1] == faces[1]
            assert sd["middle"] == [middle[1]]
            # the pushed card lands on the edge, face up
            i, j = edge_end(empty, side)
            assert sd["grids"][0][i][j] == middle[0] and sd["face_up"][0][i][j]
            assert all(v > 0 for row in sd["grids"][0] for v in row)
            # the number of face-down cards does not change
            assert sum(not x for row in sd["face_up"][0] for x in row) == \
                sum(not x for row in faces[0] for x in row) - 1
        assert env.state_dict() == base  # clones are independent


def test_reference_sides_counts():
    corners, edges, inner = (0, 3, 12, 15), (1, 2, 4, 7, 8, 11, 13, 14), (5, 6, 9, 10)
    assert all(len(ref_sides(e)) == 2 for e in corners)
    assert all(len(ref_sides(e)) == 3 for e in edges)
    assert all(len(ref_sides(e)) == 4 for e in inner)


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
# 5. Final scoring, winner rule, rewards, infos
# =============================================================================================
grid_st = st.one_of(
    st.lists(st.integers(1, 10), min_size=16, max_size=16),
    st.lists(st.integers(1, 3), min_size=16, max_size=16),
    st.lists(st.sampled_from([1, 10]), min_size=16, max_size=16),
)


@hyp(300)
@given(flat=grid_st, seat=st.integers(0, R.MAX_PLAYERS - 1))
def test_grid_points_property(flat, seat):
    grid = [flat[4 * r:4 * r + 4] for r in range(4)]
    # direct definition of the rule: a card goes iff an orthogonal neighbour is equal
    keep = [grid[r][c] for r in range(4) for c in range(4)
            if not any(0 <= a < 4 and 0 <= b < 4 and grid[a][b] == grid[r][c]
                       for a, b in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)))]
    assert ref_score(grid) == (sum(keep), len(keep))
    state = np.zeros(R.STATE_SIZE, np.int32)
    state[R.GRID + 16 * seat:R.GRID + 16 * seat + 16] = flat
    assert tuple(int(x) for x in R.grid_points(state, seat)) == ref_score(grid)


def _raw_last_pick(finals: list[list[int]]) -> tuple[np.ndarray, int]:
    """A raw state array one pick before the end (no count check: any grids)."""
    n = len(finals)
    state = np.zeros(R.STATE_SIZE, np.int32)
    for q, flat in enumerate(finals):
        state[R.GRID + 16 * q:R.GRID + 16 * q + 16] = flat
        state[R.FACE + 16 * q:R.FACE + 16 * q + 16] = 1
    last = finals[-1]
    g = R.GRID + 16 * (n - 1)
    state[g:g + 4] = [last[1], 0, last[2], last[3]]
    state[R.FACE + 16 * (n - 1) + 1] = 0
    state[R.MID + last[0] - 1] = 1
    state[K.PHASE] = R.P_PICK
    state[K.CUR] = n - 1
    state[R.ROUND] = 15
    state[R.FIRST] = 0
    state[R.REVEAL:R.REVEAL + R.MAX_PLAYERS] = -1
    state[R.REVEAL:R.REVEAL + n] = 1
    return state, pick_action(last[0], LEFT)


@hyp(150)
@given(data=st.data(), n=st.integers(2, 6))
def test_outcome_winners_and_rewards_property(data, n):
    pool = data.draw(st.lists(grid_st, min_size=1, max_size=3))
    finals = [data.draw(st.one_of(st.sampled_from(pool), grid_st)) for _ in range(n)]
    scores = [ref_score([f[4 * r:4 * r + 4] for r in range(4)]) for f in finals]
    for mode in ("win", "points"):
        eng = Engine(ENV_ID, num_players=n, reward_mode=mode)
        state, last = _raw_last_pick(finals)
        assert eng.legal_mask(state)[last]
        rewards = eng.step(state, last)
        assert eng.is_terminal(state)
        assert state[R.GRID:R.GRID + 16 * n].tolist() == [v for f in finals for v in f]
        points, winners = eng.outcome(state)
        assert points.tolist() == [float(p) for p, _ in scores]
        assert winners.astype(bool).tolist() == ref_winners(scores)
        assert rewards.tolist() == ref_rewards(mode, scores)


@pytest.mark.parametrize("finals, points, winner, win_rewards", [
    # lowest points wins
    ([EXAMPLE_GRID, CHECKER_9_10], [19, 152], [True, False], [1, -1]),
    ([CHECKER_9_10, EXAMPLE_GRID], [152, 19], [False, True], [-1, 1]),
    # equal points (19): fewer cards (2 < 4) wins
    ([EXAMPLE_GRID, TWO_SINGLES_19], [19, 19], [False, True], [-1, 1]),
    ([TWO_SINGLES_19, EXAMPLE_GRID], [19, 19], [True, False], [1, -1]),
    # equal points and cards: shared win; everyone tied -> all 0
    ([EXAMPLE_GRID, EXAMPLE_GRID], [19, 19], [True, True], [0, 0]),
    ([EXAMPLE_GRID, EXAMPLE_GRID, CHECKER_7_10], [19, 19, 136], [True, True, False],
     [1, 1, -1]),
    ([CHECKER_7_10, EXAMPLE_GRID, EXAMPLE_GRID], [136, 19, 19], [False, True, True],
     [-1, 1, 1]),
])
@pytest.mark.parametrize("mode", ["win", "points"])
def test_winner_rule_and_rewards_via_env(finals, points, winner, win_rewards, mode):
    env, last = last_pick_env(finals, reward_mode=mode)
    env.step(last)
    assert all(env.terminations.values())
    for i, a in enumerate(env.possible_agents):
        assert env.infos[a] == {"points": float(points[i]), "winner": winner[i]}
        want = float(win_rewards[i]) if mode == "win" else -float(points[i])
        assert env.rewards[a] == want
    assert [ref_score(g)[0] for g in finals] == points


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
# 7. Hidden information
# =============================================================================================
def _scramble_hidden(state: np.ndarray, n: int, observer: int,
                     rng: np.random.Generator) -> np.ndarray:
    """Change every face-down value arbitrarily and every other seat's unresolved reveal."""
    out = state.copy()
    for i in range(16 * n):
        if out[R.GRID + i] > 0 and out[R.FACE + i] == 0:
            out[R.GRID + i] = rng.integers(1, 11)
    if out[K.PHASE] == R.P_REVEAL:
        for q in range(n):
            if q != observer and out[R.REVEAL + q] >= 0:
                down = [s for s in range(16) if out[R.FACE + 16 * q + s] == 0]
                out[R.REVEAL + q] = rng.choice(down)
    return out


def _play(env, k: int, rng: np.random.Generator) -> None:
    for _ in range(k):
        if all(env.terminations.values()):
            return
        env.step(random_action(env, rng))


@hyp(30)
@given(seed=st.integers(0, 2**31), n=st.integers(2, 6), frac=st.floats(0, 1))
def test_observation_and_observer_dict_ignore_hidden_information(seed, n, frac):
    env = make(n)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    _play(env, int(frac * 32 * n), rng)
    full = env.state_dict()
    eng = Engine(ENV_ID, num_players=n)
    for s in range(n):
        agent = f"player_{s}"
        obs = env.observe(agent)["observation"]
        osd = env.state_dict(observer=s)
        assert env.state_dict(observer=agent) == osd
        # the observer dict: no face-down value, other seats' pending reveals hidden
        assert "rng" not in osd and osd["observer"] == s
        for q in range(n):
            for r in range(4):
                for c in range(4):
                    v, up = full["grids"][q][r][c], full["face_up"][q][r][c]
                    assert osd["grids"][q][r][c] == (v if (up or v == 0) else None)
            if full["phase"] == "reveal" and q != s:
                assert osd["reveals"][q] is None
            else:
                assert osd["reveals"][q] == full["reveals"][q]
        for key in ("face_up", "middle", "round", "first_player", "phase", "current_player",
                    "steps"):
            assert osd[key] == full[key]
        # arbitrary changes of hidden information do not change what the seat sees
        for _t in range(3):
            other = _scramble_hidden(env.state_array, n, s, rng)
            assert eng.observe(other, s).tolist() == obs.tolist()
            assert env.game.state_dict(other, s) == osd
            assert env.game.render(other, s) == env.game.render(env.state_array, s)
            e2 = env.clone()
            e2.state_array[:] = other
            assert e2.observe(agent)["observation"].tolist() == obs.tolist()
            assert e2.state_dict(observer=s) == osd
        # determinization keeps the observer's view and the card counts
        for _t in range(2):
            rs = env.resample(s, np.random.default_rng(rng.integers(2**32)))
            assert rs.observe(agent)["observation"].tolist() == obs.tolist()
            assert (rs.observe(agent)["action_mask"] == env.observe(agent)["action_mask"]).all()
            assert rs.state_dict(observer=s) == osd
            rsd = rs.state_dict()
            assert all(c <= 10 for c in full_counts(rsd).values())
            assert sum(full_counts(rsd).values()) == 16 * n
            env.game.check_state(rs.state_array)
            assert rsd["face_up"] == full["face_up"]
            assert rsd["reveals"][s] == full["reveals"][s]
            assert env.state_dict() == full  # the original is untouched
    # the resampled game is playable to the end
    rs = env.resample(0, 123)
    _play(rs, 10**6, rng)
    assert all(rs.terminations.values())


def test_face_down_cards_unknown_to_their_owner():
    env = make(3)
    env.reset(seed=5)
    for s in range(3):
        obs = env.observe(f"player_{s}")["observation"]
        assert obs[:48].tolist() == [FACE_DOWN] * 48
        assert obs[48 + 10:48 + 20].tolist() == [10] * 10  # nothing seen yet
        assert all(v is None for g in env.state_dict(observer=s)["grids"]
                   for row in g for v in row)


def test_pending_reveal_hidden_until_resolved():
    n = 3
    env = make(n)
    env.reset(seed=11)
    obs0 = {a: env.observe(a)["observation"].copy() for a in env.possible_agents}
    env.step(5)  # seat 0 chooses r1c1
    o = {a: env.observe(a)["observation"] for a in env.possible_agents}
    t = 16 * n + 20
    assert o["player_0"][t + 4] == 5  # own choice visible
    assert o["player_1"][t + 4] == -1 and o["player_2"][t + 4] == -1
    for a in ("player_1", "player_2"):  # only the seat to act changed
        diff = np.flatnonzero(o[a] != obs0[a]).tolist()
        assert diff == [t + 3]
    assert env.state_dict(observer=1)["reveals"] == [None, None, None]
    assert env.state_dict(observer=0)["reveals"] == [5, None, None]
    env.step(0)
    # other choice of seat 0 -> identical observation for seats 1, 2
    alt = make(n)
    alt.reset(seed=11)
    alt.step(9)
    alt.step(0)
    for a in ("player_1", "player_2"):
        assert (alt.observe(a)["observation"] == env.observe(a)["observation"]).all()
    # resampling for seat 2 redraws seat 0's and 1's pending choices among face-down slots
    seen = {tuple(env.resample(2, r).state_dict()["reveals"][:2]) for r in range(40)}
    assert len(seen) > 1
    assert all(env.resample(0, r).state_dict()["reveals"][0] == 5 for r in range(10))
    env.step(15)  # resolution: everyone sees everything that was chosen
    sd = env.state_dict(observer=1)
    assert sd["phase"] == "pick" and sd["reveals"] == [5, 0, 15]
    assert sorted(sd["middle"]) == sd["middle"] and len(sd["middle"]) == 3


def test_resample_redraws_face_down_values():
    env = make(2)
    env.reset(seed=3)
    grids = {json.dumps(env.resample(0, r).state_dict()["grids"]) for r in range(5)}
    assert len(grids) == 5


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


# =============================================================================================
# 9. Action names and illegal actions
# =============================================================================================
def test_action_to_str_names():
    env = make(2)
    env.reset(seed=0)
    assert env.action_space("player_0").n == 56
    assert env.action_to_str(6) == "reveal r1c2"
    assert env.action_to_str(pick_action(7, LEFT)) == "pick 7 from left"
    for a in range(16):
        assert env.action_to_str(a) == f"reveal r{a // 4}c{a % 4}"
    for v in range(1, 11):
        for s in range(4):
            assert env.action_to_str(pick_action(v, s)) == f"pick {v} from {SIDE_NAMES[s]}"
    names = [env.action_to_str(a) for a in range(56)]
    assert len(set(names)) == 56
    with pytest.raises(IllegalActionError):
        env.action_to_str(56)


def test_illegal_actions_rejected_and_state_unchanged():
    env = make(2)
    env.reset(seed=9)
    sd = env.state_dict()
    for a in (PICK0, 55, -1, 56):  # no pick in the reveal phase; out of range
        with pytest.raises(IllegalActionError):
            env.step(a)
        assert env.state_dict() == sd
    env.step(3)
    env.step(3)
    env.step(pick_action(env.state_dict()["middle"][0], LEFT))
    env.step(pick_action(env.state_dict()["middle"][0], BOTTOM))
    sd = env.state_dict()
    assert sd["phase"] == "reveal" and sd["current_player"] == 1
    # seat 1 pushed in from the bottom of column 3: its only face-up card is r3c3
    face_up_1 = [r * 4 + c for r in range(4) for c in range(4) if sd["face_up"][1][r][c]]
    assert face_up_1 == [15]
    with pytest.raises(IllegalActionError) as ei:
        env.step(15)  # already face up
    assert ei.value.phase == "reveal" and 15 not in ei.value.legal
    assert env.state_dict() == sd
    assert mask_of(env) == {s for s in range(16) if s != 15}
