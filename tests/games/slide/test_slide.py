"""Rule tests of Slide (``slide_v0``) against ``docs/rules/slide.md``: the rules' examples,
every push direction for every gap position, action names and illegal actions.

The checks do not trust the engine: the rules are re-implemented in plain Python
(``ref_*`` / ``RefSlide`` in ``tests/games/slide/slide_ref.py``) and compared with the engine.
The other topics: ``test_slide_play.py`` (whole games, invariants, the first-player token),
``test_slide_scoring.py`` (final scoring, winners, rewards), ``test_slide_hidden.py`` (hidden
information, determinization), ``test_slide_queries.py`` (the rule queries).
"""

from __future__ import annotations

import numpy as np
import pytest

from card_envs import Engine, IllegalActionError
from card_envs.slide import layout as L
from card_envs.slide.layout import (
    BOTTOM,
    LEFT,
    PICK0,
    RIGHT,
    SIDES,
    TOP,
)
from card_envs.slide.queries import seat_points as grid_points
from slide_ref import (
    CHECKER_9_10,
    ENV_ID,
    EXAMPLE_GRID,
    edge_end,
    last_pick_env,
    load_pick_state,
    make,
    mask_of,
    pick_action,
    ref_push,
    ref_score,
    ref_sides,
)


# =============================================================================================
# 1. The examples of docs/rules/slide.md
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
    for seat in range(L.MAX_PLAYERS):
        state = np.zeros(L.STATE_SIZE, np.int32)
        state[L.GRID + L.SLOTS * seat:L.GRID + L.SLOTS * seat + L.SLOTS] = flat
        assert tuple(int(x) for x in grid_points(state, seat)) == (19, 4)
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
            assert env.action_to_str(pick_action(v, s)) == f"pick {v} from {SIDES[s]}"
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
