"""If It Fits: the deck, options and setup, hidden information, and invariants of random play
checked against the independent (brute-force) model in tests/games/if_it_fits/if_it_fits_ref.py,
built from the state dict and the deck JSON. Rule tests and the spec's examples:
test_if_it_fits_rules.py."""

from __future__ import annotations

import json
import random
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import card_envs
from card_envs import OptionError, StateDictError
from card_envs.core import kernels as K
from card_envs.if_it_fits.layout import (
    A_END,
    A_ROT,
    A_START,
    FIELDS,
    SIDES,
)
from card_envs.if_it_fits.parts import deck as D
from card_envs.testing import snapshot
from if_it_fits_ref import (
    DECK,
    ENV,
    PROPS,
    Model,
    make,
    play_random,
    same_boxes,
    to_turn,
)


# --- deck ---------------------------------------------------------------------------------
def test_default_deck_file_is_the_spec_deck() -> None:
    assert DECK == D.generate_default()
    t = D.card_table(D.load_default()).reshape(-1, FIELDS)
    box = t[:72]
    assert len(box) == 72 and len(t) == 80
    assert box[:, 2:5].sum(0).tolist() == [30, 30, 30] and box[:, 5].sum() == 9
    shapes = [c["open"] for c in DECK["box_cards"]]
    for _, o in D.SHAPES:
        assert shapes.count("".join(s for s in SIDES if s in o)) == 8
    assert [c["toys"] for c in DECK["special_toy_cards"]] == \
        [{"ball": 2}, {"mouse": 2}, {"yarn": 2}]
    assert [c["open"] for c in DECK["start_cards"]] == ["NESW", "NS", "EW", "NE", "N"]


@pytest.mark.parametrize("bad", [
    {}, {"box_cards": [], "start_cards": [], "special_toy_cards": []},
    {**DECK, "box_cards": DECK["box_cards"][:5]},
    {**DECK, "start_cards": DECK["start_cards"][:4]},
    {**DECK, "box_cards": [{**DECK["box_cards"][0], "open": "NN"}] + DECK["box_cards"][1:]},
    {**DECK, "box_cards": [{**DECK["box_cards"][0], "open": "Q"}] + DECK["box_cards"][1:]},
    {**DECK, "box_cards": [{**DECK["box_cards"][0], "toys": {"fish": 1}}] +
     DECK["box_cards"][1:]},
    {**DECK, "box_cards": [{**DECK["box_cards"][0], "sprayer": -1}] + DECK["box_cards"][1:]},
    {**DECK, "box_cards": [DECK["box_cards"][1]] + DECK["box_cards"][1:]},
    "/nonexistent/deck.json", 7,
])
def test_bad_decks_rejected(bad: Any) -> None:
    with pytest.raises(OptionError, match="deck"):
        make(deck=bad)


@pytest.mark.parametrize("bad", [(2, 11), (11, 4), (22, 11), "11x11", (11.0, 11), (11,)])
def test_bad_table_rejected(bad: Any) -> None:
    with pytest.raises(OptionError, match="table"):
        make(table=bad)
    with pytest.raises(OptionError, match="advanced"):
        make(advanced=1)


def test_user_deck_from_file_and_dict(tmp_path: Any) -> None:
    deck = json.loads(json.dumps(DECK))
    deck["box_cards"] = deck["box_cards"][:20]
    deck["special_toy_cards"] = deck["special_toy_cards"][:1]
    path = tmp_path / "deck.json"
    path.write_text(json.dumps(deck))
    for spec in (deck, str(path)):
        env = make(deck=spec)
        env.reset(seed=1)
        assert len(env.state_dict()["draw_pile"]) == 20 - 4 + 1 + 2
        play_random(env, random.Random(0))
        assert env.state_array[K.DONE]


# --- setup --------------------------------------------------------------------------------
@pytest.mark.parametrize("n,adv", [(2, False), (3, False), (5, False), (4, True)])
def test_setup(n: int, adv: bool) -> None:
    env = make(num_players=n, advanced=adv)
    env.reset(seed=n)
    d = env.state_dict()
    assert d["phase"] == "start_card" and d["current_player"] == 0
    for h in d["hands"]:
        assert len(h) == 2 and all(c[0] in "XTILU" for c in h)  # box cards only
    pile = d["draw_pile"][::-1]  # bottom first
    m = 72 - 2 * n + 3
    assert len(pile) == m + (5 if adv else n)
    assert sorted(c for c in pile if c != "princess") == sorted(
        c["name"] for c in DECK["box_cards"] + DECK["special_toy_cards"]
        if c["name"] not in sum(d["hands"], []))
    segs = d["pile_segments"]
    if adv:
        assert segs == [0, len(pile)] and pile.count("princess") == 5
    else:
        sizes = [segs[j + 1] - segs[j] - 1 for j in range(n)]  # bottom pile first
        assert sum(sizes) == m and max(sizes) - min(sizes) <= 1
        assert sizes == sorted(sizes)  # the top piles get the extra cards
        for j in range(n):
            assert pile[segs[j]:segs[j + 1]].count("princess") == 1
    assert d["supplies"] == [5] * n


def test_a_start_card_used_twice_is_refused() -> None:
    """``start_cards_used`` names each start card once: a repeat is refused (StateDictError,
    env unchanged), not merged into one."""
    env = make(num_players=3)
    env.reset(seed=0)
    while not env.state_dict()["start_cards_used"]:
        env.step(env.legal_actions()[0])
    d = env.state_dict()
    before = snapshot(env)
    name = d["start_cards_used"][0]
    with pytest.raises(StateDictError, match=f"^start_cards_used lists '{name}' twice$") as e:
        env.load_state_dict({**d, "start_cards_used": d["start_cards_used"] + [name]})
    assert e.value.__cause__ is None and snapshot(env) == before
    env.load_state_dict(d)


def test_start_cards_laid_in_a_row() -> None:
    env = make(num_players=3, start_player=1)
    env.reset(seed=0)
    g = env.game
    B = g.B
    assert env.agent_selection == "player_1"
    env.step(B + A_START + 2)  # S3, open E W
    assert env.game.phase_name(env.state_array) == "start_rotation"
    env.step(B + A_ROT)
    assert env.state_dict()["table"][5][5] == {"card": "S3", "rot": 0}
    assert env.agent_selection == "player_2"
    assert B + A_START + 2 not in env.legal_actions()
    env.step(B + A_START + 0)
    assert set(env.legal_actions()) == {B + A_END, B + A_END + 1}
    env.step(B + A_END)  # west end
    env.step(B + A_ROT + 1)
    env.step(B + A_START + 4)
    env.step(B + A_END + 1)  # east end
    env.step(B + A_ROT)
    d = env.state_dict()
    assert [d["table"][5][c] and d["table"][5][c]["card"] for c in (4, 5, 6)] == \
        ["S1", "S3", "S5"]
    assert d["phase"] == "turn" and d["current_player"] == 1
    assert d["start_cards_used"] == ["S1", "S3", "S5"]
    same_boxes(env)


def test_advanced_start_row_no_wall_to_wall() -> None:
    env = make(advanced=True)
    env.reset(seed=0)
    B = env.game.B
    env.step(B + A_START + 4)  # S5: open N only
    env.step(B + A_ROT)  # E and W are walls
    env.step(B + A_START + 1)  # S2: open N S -> E/W walls: cannot be laid anywhere
    assert env.state_dict()["relaxed"] is True
    assert set(env.legal_actions()) == {B + A_END, B + A_END + 1}


# --- hidden information -------------------------------------------------------------------
def test_other_hands_and_pile_order_are_hidden() -> None:
    env = make(num_players=3)
    env.reset(seed=4)
    play_random(env, random.Random(4), 30)
    d = env.state_dict()
    # swap the box cards of seat 1's hand with box cards from the pile
    d2 = json.loads(json.dumps(d))
    pile_box = [i for i, c in enumerate(d2["draw_pile"]) if c[0] in "XTILU"]
    for k, c in enumerate(d2["hands"][1]):
        if c != "princess":
            i = pile_box[k]
            d2["hands"][1][k], d2["draw_pile"][i] = d2["draw_pile"][i], c
    d2["draw_pile"][:3] = d2["draw_pile"][:3][::-1]
    d2["draw_pile"] = d2["draw_pile"]
    assert d2 != d
    other = make(num_players=3)
    other.reset(seed=0)
    other.load_state_dict(d2)
    for seat in (0, 2):
        a = f"player_{seat}"
        assert np.array_equal(other.observe(a)["observation"], env.observe(a)["observation"])
        assert other.state_dict(observer=seat) == env.state_dict(observer=seat)
    if d2["hands"][1] != d["hands"][1]:
        assert not np.array_equal(other.observe("player_1")["observation"],
                                  env.observe("player_1")["observation"])
    view = env.state_dict(observer=0)
    assert view["hands"][0] == d["hands"][0]
    assert all(x is None for q in (1, 2) for x in view["hands"][q])
    assert all(x is None for x in view["draw_pile"])


def test_pile_reversal_changes_no_observation() -> None:
    env = make()
    to_turn(env, 3)
    d = env.state_dict()
    other = make()
    other.reset(seed=0)
    d2 = {**d, "draw_pile": d["draw_pile"][::-1], "pile_segments": [0, len(d["draw_pile"])]}
    other.load_state_dict(d2)
    for a in env.possible_agents:
        assert np.array_equal(other.observe(a)["observation"], env.observe(a)["observation"])


def test_resample_keeps_observer_view() -> None:
    env = make(num_players=4)
    env.reset(seed=2)
    play_random(env, random.Random(2), 60)
    for seat in range(4):
        alt = env.resample(seat, np.random.default_rng(seat))
        assert np.array_equal(alt.observe(f"player_{seat}")["observation"],
                              env.observe(f"player_{seat}")["observation"])
        assert alt.state_dict(observer=seat) == env.state_dict(observer=seat)


# --- invariants against the independent model -----------------------------------------------
@PROPS
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(2, 5), adv=st.booleans(),
       small=st.booleans())
def test_random_play_matches_brute_force(seed: int, n: int, adv: bool, small: bool) -> None:
    opts = {"num_players": n, "advanced": adv}
    if small:
        opts["table"] = (5, 7)
    env = make(**opts)
    env.reset(seed=seed)
    rnd = random.Random(seed)
    steps = 0
    while not env.state_array[K.DONE]:
        d = env.state_dict()
        m = Model(d)
        assert set(env.legal_actions()) == m.legal(), d["phase"]
        if steps % 3 == 0:
            same_boxes(env)
            tot = sum(len(h) for h in d["hands"]) + len(d["draw_pile"]) + \
                len(d["discarded"]) + sum(x is not None and "card" in x
                                          for row in d["table"] for x in row) + \
                sum(x is not None and "toy" in x for row in d["slots"] for x in row) + \
                (d["drawn_toy"] is not None) + sum(
                    x is not None and x.get("sleeping_cat") == "princess"
                    for row in d["table"] for x in row) + sum(
                    x is not None and x.get("cat") == "princess" for row in d["slots"]
                    for x in row)
            assert tot == 75 + d["start_cards_laid"] + env.game.npr  # cards conserved
            cats = [d["supplies"][q] + sum(
                x is not None and x.get("sleeping_cat") == q for row in d["table"]
                for x in row) + sum(x is not None and x.get("cat") == q
                                    for row in d["slots"] for x in row) for q in range(n)]
            assert cats == [5] * n  # cats conserved
        env.step(rnd.choice(env.legal_actions()))
        steps += 1
        assert steps < 2000
    d = env.state_dict()
    pts, minus = Model(d).score()
    got = [env.infos[a]["points"] for a in env.possible_agents]
    assert got == pts
    best = max(pts)
    top = [q for q in range(n) if pts[q] == best]
    least = min(minus[q] for q in top)
    winners = [q for q in top if minus[q] == least]
    assert [env.infos[a]["winner"] for a in env.possible_agents] == \
        [q in winners for q in range(n)]
    assert all(h == [] for h in d["hands"]) and d["end_triggered"]


@PROPS
@given(seed=st.integers(0, 2**31 - 1))
def test_advanced_relax_flag_is_exact(seed: int) -> None:
    env = make(advanced=True, table=(5, 7))
    env.reset(seed=seed)
    rnd = random.Random(seed)
    while not env.state_array[K.DONE]:
        d = env.state_dict()
        if d["phase"] == "cell":
            m = Model({**d, "relaxed": False})
            strict_cells = m.legal()
            assert d["relaxed"] == (not strict_cells)
        env.step(rnd.choice(env.legal_actions()))


def test_heuristic_beats_random_quickly() -> None:
    from card_envs.agents.registry import make_agent

    wins = 0
    games = 30
    for g in range(games):
        env = card_envs.make(ENV)
        env.reset(seed=1000 + g)
        seats = {f"player_{(g + k) % 2}": a for k, a in
                 enumerate((make_agent("heuristic", ENV, seed=g),
                            make_agent("random", ENV, seed=g)))}
        final = {}
        for agent in env.agent_iter():
            obs, rew, term, trunc, info = env.last()
            if term or trunc:
                final[agent] = rew
            env.step(None if term or trunc else
                     seats[agent].act(obs["observation"], obs["action_mask"]))
        h = next(a for a, s in seats.items() if s.name == "heuristic")
        wins += final[h] > 0
    assert wins >= 0.7 * games
