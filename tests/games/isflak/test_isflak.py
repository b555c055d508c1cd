"""Rule tests of Isflak (``isflak_v0``) against the rules ``docs/rules/isflak.md``: the
spec's examples, the rules in detail, and the documented encoding.

The checks do not trust the engine: legal moves, placement, taking cards, going out, the end,
scoring, rewards and the observation are re-implemented in plain Python (``isflak_ref``:
``Ref``, ``brute_mask``, ``ref_obs``) from the state dict and compared with the engine. Whole
random games against the reference: ``test_isflak_games.py``.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from card_envs import Engine, IllegalActionError, OptionError, StateDictError
from card_envs.isflak import layout as L
from card_envs.isflak.layout import (
    DIR_NAMES,
    MAX_SLOTS,
    MOVE0,
    MOVES_PER_PENGUIN,
    SEAT_CARDS,
    SEAT_SCORE,
    obs_seat,
    obs_size,
)
from isflak_ref import (
    ALL_CARDS,
    CELLS,
    COLS,
    ENV_ID,
    RANKS,
    ROWS,
    SUITS,
    TABLE,
    Ref,
    cards_in,
    deck_grid,
    kind,
    load,
    make,
    mask_of,
    move_action,
    on_border,
    pts,
    ref_moves,
    ref_placements,
    ref_rewards,
    ref_winners,
    with_gaps,
)

E, S, SE, NW = (DIR_NAMES.index(x) for x in ("E", "S", "SE", "NW"))


# =============================================================================================
# 1. The examples of the rules (docs/rules/isflak.md)
# =============================================================================================
def test_example_gap_stops_the_slide():
    """A penguin on (2,3) with a gap at (2,5) can move right to (2,4) but not to (2,6)."""
    grid, piles = with_gaps(deck_grid(1)[0], [(2, 5)], 1, 2)
    env = load(2, grid, [[[2, 3]], [[4, 6]]], piles, penguins_per_player=1)
    m = mask_of(env)
    assert move_action(0, E, 1) in m and move_action(0, E, 2) not in m
    assert move_action(0, E, 3) not in m
    assert m == ref_moves(env.state_dict(), 0)
    with pytest.raises(IllegalActionError):
        env.step(move_action(0, E, 3))
    under = grid[2][3]
    env.step(move_action(0, E, 1))
    sd = env.state_dict()
    assert sd["penguins"][0] == [[2, 4]]
    assert sd["grid"][2][3] is None and sd["piles"][0] == [under]  # takes the card it left


def test_example_penguin_blocks_the_diagonal():
    """A penguin on (0,0) with a penguin on (1,1) cannot move down-right at all."""
    grid = deck_grid(2)[0]
    env = load(2, grid, [[[0, 0]], [[1, 1]]], penguins_per_player=1)
    m = mask_of(env)
    assert not any(move_action(0, SE, s) in m for s in range(1, 7))
    assert move_action(0, E, 6) in m and move_action(0, S, 4) in m  # E and S are open
    assert m == {move_action(0, E, s) for s in range(1, 7)} | \
        {move_action(0, S, s) for s in range(1, 5)}


def _placement_grid():
    """Border: 7 number cards, 4 aces, 9 face cards; interior: the rest."""
    numbers = [r + s for s in SUITS for r in RANKS[1:10]]
    faces = [r + s for s in SUITS for r in "JQK"]
    aces = ["A" + s for s in SUITS]
    border = [(r, c) for r in range(ROWS) for c in range(COLS) if on_border(r, c)]
    inner = [(r, c) for r in range(ROWS) for c in range(COLS) if not on_border(r, c)]
    cards = numbers[:7] + aces + faces[:9]
    grid = [[None] * COLS for _ in range(ROWS)]
    for (r, c), card in zip(border, cards):
        grid[r][c] = card
    for (r, c), card in zip(inner, numbers[7:]):
        grid[r][c] = card
    num_cells = [(r, c) for r, c in border if kind(grid[r][c]) == "number"]
    return grid, num_cells


def test_example_placement_face_card_when_numbers_taken_never_ace():
    grid, num_cells = _placement_grid()
    # 7 placements done (start 0): seat 0 slots 0-3, seat 1 slots 0-2 on the 7 number cards
    order = [num_cells[i] for i in range(7)]
    pens = [[list(order[i]) for i in (0, 2, 4, 6)], [list(order[i]) for i in (1, 3, 5)] + [None]]
    env = load(2, grid, pens, cur=1, phase="placement")
    m = mask_of(env)
    faces = {r * COLS + c for r in range(ROWS) for c in range(COLS)
             if on_border(r, c) and kind(grid[r][c]) == "face"}
    aces = {r * COLS + c for r in range(ROWS) for c in range(COLS) if kind(grid[r][c]) == "ace"}
    assert len(faces) == 9 and len(aces) == 4
    assert m == faces and not m & aces
    for a in aces:
        with pytest.raises(IllegalActionError):
            env.step(a)
    env.step(min(faces))
    sd = env.state_dict()
    assert sd["phase"] == "movement" and sd["current_player"] == 0
    assert sd["penguins"][1][3] == [min(faces) // COLS, min(faces) % COLS]
    # with one number card still free, only that number card is legal
    pens[0][3] = None
    env = load(2, grid, pens, cur=0, phase="placement")
    six = order[6]
    assert mask_of(env) == {six[0] * COLS + six[1]}


def test_example_blocked_player_goes_out_and_banks():
    """3 players, 1 penguin each: seat 1 is walled in by gaps; when seat 0 has moved, seat 1
    goes out automatically (banks its card) and seat 2 plays on."""
    base = deck_grid(3)[0]
    gaps = [(r, c) for r in range(0, 3) for c in range(0, 3) if (r, c) != (1, 1)]
    grid, piles = with_gaps(base, gaps, 2, 3)
    pens = [[[4, 6]], [[1, 1]], [[4, 0]]]
    env = load(3, grid, pens, piles, cur=0, penguins_per_player=1)
    under = grid[1][1]
    before = env.state_dict()
    assert ref_moves(before, 1) == set()
    assert before["out"] == [False] * 3  # checked only when the turn reaches it
    env.step(move_action(0, DIR_NAMES.index("N"), 1))  # seat 0: (4,6) -> (3,6)
    sd = env.state_dict()
    assert sd["out"] == [False, True, False]
    assert sd["penguins"][1] == [None] and sd["grid"][1][1] is None
    assert sd["piles"][1] == [under]
    assert sd["current_player"] == 2 and sd["phase"] == "movement"
    assert env.agent_selection == "player_2"
    ref = Ref(before)
    ref.step(move_action(0, DIR_NAMES.index("N"), 1))
    assert ref.sd == sd
    # seat 1 is skipped from then on
    env.step(sorted(mask_of(env))[0])
    assert env.state_dict()["current_player"] == 0


def test_going_out_banks_in_slot_order_and_can_end_the_game_at_once():
    """Seat 0 makes its last possible move; seat 1 (walled in) goes out banking slot 0's card,
    then slot 1's; then seat 0 is walled in too and goes out: the game ends in that step."""
    base = deck_grid(4)[0]
    keep = {(4, 6), (4, 5), (2, 3), (0, 0), (0, 6)}
    gaps = [(r, c) for r in range(ROWS) for c in range(COLS) if (r, c) not in keep]
    grid, piles = with_gaps(base, gaps, 0, 2)
    env = load(2, grid, [[[4, 6], [2, 3]], [[0, 6], [0, 0]]], piles, penguins_per_player=2,
               reward_mode="points")
    W = DIR_NAMES.index("W")
    assert mask_of(env) == {move_action(0, W, 1)}
    before = env.state_dict()
    env.step(move_action(0, W, 1))
    sd = env.state_dict()
    assert sd["piles"][1] == [grid[0][6], grid[0][0]]
    assert sd["piles"][0] == piles[0] + [grid[4][6], grid[4][5], grid[2][3]]
    assert sd["phase"] == "end" and all(sd["out"]) and sd["current_player"] is None
    assert all(c is None for row in sd["grid"] for c in row)
    ref = Ref(before)
    ref.step(move_action(0, W, 1))
    assert ref.sd == sd
    assert [env.rewards[a] for a in env.possible_agents] == \
        [float(p) for p, _ in ref.scores()]


# =============================================================================================
# 2. Rules in detail
# =============================================================================================
def test_layout_matches_the_documented_encoding():
    """The layout constants the tests import are the numbers the env docstring documents."""
    assert (L.ROWS, L.COLS, CELLS, MOVE0, MOVES_PER_PENGUIN, L.MAX_DIST) == (5, 7, 35, 35, 48, 6)
    assert L.DIRS == ((-1, 0), (-1, 1), (0, 1), (1, 1), (1, 0), (1, -1), (0, -1), (-1, -1))
    assert DIR_NAMES == ("N", "NE", "E", "SE", "S", "SW", "W", "NW")
    assert "".join(L.SUITS) == "SHDC" and L.RANKS[0] == "A" and L.RANKS[10:] == ("J", "Q", "K")
    assert [move_action(0, 0, 1), move_action(3, 7, 6)] == [35, 35 + (3 * 8 + 7) * 6 + 5]
    assert (L.num_actions(4), obs_size(2, 4), MAX_SLOTS) == (35 + 192, 70 + 2 * 7 + 3, 16)
    assert (L.OBS_POINTS, L.OBS_OWNER, obs_seat(0, 4), obs_seat(1, 4)) == (0, 35, 70, 77)
    assert (L.SEAT_OUT, SEAT_SCORE, SEAT_CARDS, L.SEAT_FIELDS) == (0, 1, 2, 3)  # after the slots
    assert L.obs_tail(2, 4) + L.T_PHASE == 84 and (L.T_TO_ACT, L.T_PLACED) == (1, 2)
    assert L.PHASES == ("placement", "movement", "end")


def test_options_defaults_and_validation():
    for n, p in TABLE.items():
        env = make(n)
        assert env.game.options["penguins_per_player"] == p
        assert env.action_space("player_0").n == MOVE0 + MOVES_PER_PENGUIN * p
    assert make(2).game.options["card_points"] == {"ace": 3, "face": 2, "number": 1}
    assert make(2, card_points=(4, 2, 0)).game.options["card_points"] == \
        {"ace": 4, "face": 2, "number": 0}
    assert make(2, card_points={"number": 1, "face": 1, "ace": 1}).game.options[
        "card_points"] == {"ace": 1, "face": 1, "number": 1}
    assert make(2, penguins_per_player=8).action_space("player_0").n == \
        MOVE0 + MOVES_PER_PENGUIN * 8
    space = make(2).observation_space("player_0")["observation"]
    assert space.dtype == np.int8 and space.shape == (obs_size(2, 4),)
    # best possible pile score
    assert int(space.high[obs_seat(0, 4) + 4 + SEAT_SCORE]) == 4 * 3 + 12 * 2 + 19 * 1
    big = make(3, card_points=(20, 10, 20)).observation_space("player_0")["observation"]
    assert big.dtype == np.int16 and int(big.high[obs_seat(0, 3) + 3 + SEAT_SCORE]) == 700
    for n, bad in ((2, 9), (3, 6), (6, 3), (2, 0), (2, -1), (2, 2.0), (2, True), (2, "4")):
        with pytest.raises(OptionError, match="penguins_per_player"):
            make(n, penguins_per_player=bad)
    for bad in ((1, 2), {"ace": 1, "face": 2}, {"ace": 1, "face": 2, "number": 3, "x": 1},
                (1, 2, -1), (1, 2, 21), (1, 2.5, 1), "321", 3, (True, 1, 1)):
        with pytest.raises(OptionError, match="card_points"):
            make(2, card_points=bad)


def test_placement_order_slots_and_border_rule():
    env = make(3, start_player=1)
    env.reset(seed=4)
    sd = env.state_dict()
    assert sd["phase"] == "placement" and sd["current_player"] == 1
    assert all(c is not None for row in sd["grid"] for c in row)
    seats = []
    while env.state_dict()["phase"] == "placement":
        sd = env.state_dict()
        m = mask_of(env)
        assert m == ref_placements(sd)
        assert all(on_border(a // COLS, a % COLS) for a in m)
        assert all(kind(sd["grid"][a // COLS][a % COLS]) != "ace" for a in m)
        seats.append(sd["current_player"])
        a = max(m)
        env.step(a)
        q = seats[-1]
        k = (len(seats) - 1) // 3
        assert env.state_dict()["penguins"][q][k] == [a // COLS, a % COLS]
    assert seats == [(1 + i) % 3 for i in range(9)]
    sd = env.state_dict()
    assert sd["phase"] == "movement" and sd["current_player"] == 1  # start player again


def test_move_takes_origin_card_and_scores():
    flat = [c for c in ALL_CARDS if c not in ("KS", "AH")][:CELLS]
    flat[0], flat[3] = "KS", "AH"
    grid = [flat[r * COLS:(r + 1) * COLS] for r in range(ROWS)]
    env = load(2, grid, [[[0, 0]], [[4, 6]]], penguins_per_player=1)
    env.step(move_action(0, E, 3))  # (0,0) -> (0,3), takes the king
    sd = env.state_dict()
    assert sd["piles"][0] == ["KS"] and sd["grid"][0][0] is None
    assert env.observe("player_0")["observation"][obs_seat(0, 1) + 1 + SEAT_SCORE] == 2
    env.step(sorted(mask_of(env))[0])
    env.step(move_action(0, S, 1))  # leaves the ace
    assert env.state_dict()["piles"][0] == ["KS", "AH"]
    o = env.observe("player_1")["observation"]
    # seat 0 is relative seat 1 for p1
    assert o[obs_seat(1, 1) + 1 + SEAT_SCORE] == 5 and o[obs_seat(1, 1) + 1 + SEAT_CARDS] == 2


def _final_env(piles_end: list[list[str]], mode: str, P: int = 1):
    """2-3 seats; only seat 0 still in, one move from being walled in; the others out.
    ``piles_end``: the piles after seat 0's last move and going out."""
    n = len(piles_end)
    used = {c for p in piles_end for c in p}
    assert len(used) == sum(map(len, piles_end)) <= CELLS
    # seat 0 moves (0,0) -> (0,1) taking piles_end[0][-2]; then is out banking piles_end[0][-1]
    first, last = piles_end[0][-2], piles_end[0][-1]
    rest = [c for c in ALL_CARDS if c not in used]
    grid = [[None] * COLS for _ in range(ROWS)]
    grid[0][0], grid[0][1] = first, last
    free = CELLS - sum(map(len, piles_end))
    walled = {(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)}  # (0,1) ends walled in by gaps
    cells = [(r, c) for r in range(ROWS) for c in range(COLS) if (r, c) not in walled]
    assert free <= len(cells)
    for (r, c), card in zip(cells[:free], rest):
        grid[r][c] = card
    piles = [list(p) for p in piles_end]
    piles[0] = piles[0][:-2]
    env = load(n, grid, [[[0, 0]]] + [[None]] * (n - 1), piles, [False] + [True] * (n - 1),
               penguins_per_player=1, reward_mode=mode)
    assert mask_of(env) == {move_action(0, E, 1)}
    return env, move_action(0, E, 1)


@pytest.mark.parametrize("piles, points, winners", [
    ([["2S", "3S", "4S", "AS"], ["KH", "QH"]], [6, 4], [True, False]),
    ([["KS", "QS"], ["2H", "3H", "4H", "5H"]], [4, 4], [False, True]),  # tie: more cards wins
    ([["2S", "3S", "4S", "5S"], ["KH", "QH"]], [4, 4], [True, False]),
    ([["2S", "3S", "JS"], ["KH", "2H", "3H"]], [4, 4], [True, True]),  # still tied: shared
    ([["2S", "3S", "JS"], ["KH", "2H", "3H"], ["JD", "2D", "3D"]], [4, 4, 4], [True] * 3),
    ([["2S", "3S", "JS"], ["KH", "2H", "3H"], ["AD", "2D"]], [4, 4, 4], [True, True, False]),
    ([["2S", "3S", "KS"], ["KH", "2H", "3H"], ["AD"]], [4, 4, 3], [True, True, False]),
])
@pytest.mark.parametrize("mode", ["win", "points"])
def test_end_scoring_tiebreak_and_rewards(piles, points, winners, mode):
    env, last = _final_env(piles, mode)
    env.step(last)
    sd = env.state_dict()
    assert sd["phase"] == "end" and sd["current_player"] is None and all(sd["out"])
    assert all(env.terminations.values())
    scores = [(p, len(pl)) for p, pl in zip(points, piles)]
    assert [sum(pts(c, {"ace": 3, "face": 2, "number": 1}) for c in pl) for pl in piles] == \
        points
    assert ref_winners(scores) == winners
    for i, a in enumerate(env.possible_agents):
        assert env.infos[a] == {"points": float(points[i]), "winner": winners[i]}
        assert env.rewards[a] == ref_rewards(mode, scores)[i]


def test_card_points_option_changes_scores():
    env, last = _final_env([["2S", "3S", "4S", "AS"], ["KH", "QH"]], "points")
    pts_ = {"ace": 0, "face": 5, "number": 2}
    env2 = make(2, penguins_per_player=1, reward_mode="points", card_points=pts_)
    d = env.state_dict()
    d["options"] = env2.game.options
    env2.load_state_dict(d)
    env2.step(last)
    assert [env2.rewards[a] for a in env2.possible_agents] == [6.0, 10.0]
    assert env2.infos["player_1"]["winner"]


def test_random_start_player_seeded_and_covers_seats():
    firsts = set()
    for seed in range(40):
        a, b = make(4, start_player="random"), make(4, start_player="random")
        a.reset(seed=seed)
        b.reset(seed=seed)
        assert a.state_dict() == b.state_dict()
        firsts.add(a.state_dict()["current_player"])
    assert firsts == set(range(4))


def test_bad_state_dicts_rejected():
    env = make(2)
    env.reset(seed=1)
    for _ in range(12):
        env.step(env.legal_actions()[0])
    good = env.state_dict()
    bad = []
    d = json.loads(json.dumps(good))
    (r0, c0), (r1, c1) = [(r, c) for r in range(ROWS) for c in range(COLS)
                          if good["grid"][r][c] is not None][:2]
    d["grid"][r0][c0] = d["grid"][r1][c1]  # duplicate card
    bad.append(d)
    d = json.loads(json.dumps(good))
    d["piles"][0].append(next(c for c in ALL_CARDS if c not in cards_in(good)))  # 36 cards
    bad.append(d)
    d = json.loads(json.dumps(good))
    d["penguins"][1][0] = d["penguins"][0][0]  # two penguins on one cell
    bad.append(d)
    d = json.loads(json.dumps(good))
    d["out"][0] = True  # out but with penguins
    bad.append(d)
    d = json.loads(json.dumps(good))
    d["grid"][0][0] = "1X"
    bad.append(d)
    for b in bad:
        with pytest.raises(StateDictError):
            env.load_state_dict(b)
    assert env.state_dict() == good


def test_engine_search_helpers():
    eng = Engine(ENV_ID)
    s = eng.new_state(3)
    t = eng.clone(s)
    a = eng.legal_actions(s)[0]
    eng.apply(t, a)
    assert not np.array_equal(s, t) and eng.legal_actions(s)[0] == a
    with pytest.raises(IllegalActionError):
        eng.apply(s, MOVE0 + 5)  # a move in the placement phase
    env = make(2)
    env.reset(seed=3)
    assert np.array_equal(env.state_array, s)
    # perfect information: resample only re-seeds the RNG (no chance after the deal)
    alt = env.resample(0, 1).state_dict()
    assert {**alt, "rng": None} == {**env.state_dict(), "rng": None}
    assert env.state_dict(observer=1) == {**{k: v for k, v in env.state_dict().items()
                                             if k != "rng"}, "observer": 1}


def test_action_names():
    env = make(2)
    assert env.action_to_str(9) == "place r1c2"
    assert env.action_to_str(move_action(3, NW, 6)) == "move penguin 3 NW 6"
    assert env.action_to_str(move_action(0, E, 1)) == "move penguin 0 E 1"
