"""Rule tests of Op Glad IJs (``op_glad_ijs_v0``) against ``docs/rules/op_glad_ijs.md``:
configuration, the deal, the rules' examples, judging, resolution, who turns next, the end.

Positions and the reference rules come from ``op_glad_ijs_ref``; hidden information and
properties are in ``test_op_glad_ijs_properties.py``, the parallel env in
``test_op_glad_ijs_parallel.py``.
"""

from __future__ import annotations

import json
import random
from collections import Counter

import pytest

from card_envs import OptionError
from card_envs.core import kernels as K
from card_envs.op_glad_ijs.layout import MAX_WINDOWS
from op_glad_ijs_ref import (
    act,
    codes_for,
    deck_for,
    raw,
    ref_judge,
    setup,
    window,
)


# --- configuration -----------------------------------------------------------------------------
@pytest.mark.parametrize("opts,T", [({}, 36), ({"two_animals": True}, 42),
                                    ({"two_habitats": True}, 42), ({"advanced": True}, 48),
                                    ({"two_animals": True, "two_habitats": True}, 48)])
def test_types_and_action_space(opts: dict, T: int) -> None:
    env = raw(**opts)
    assert env.game.codes == codes_for(opts) and len(codes_for(opts)) == T
    assert env.action_space("player_0").n == 1 + T + T * (T + 1) // 2
    names = [env.action_to_str(a) for a in range(env.game.num_actions)]
    assert names[0] == "pass" and len(set(names)) == len(names)
    assert names[act(env, "gorilla/ice_floe", "camel/rainforest")] == \
        "slap camel/rainforest + gorilla/ice_floe"
    assert env.game.N == sum(deck_for(opts).values())


def test_default_deck_data_validated(tmp_path) -> None:
    from card_envs.op_glad_ijs.parts import deck as D

    d = json.loads(D.DATA.read_text())
    assert sum(e["count"] for e in d["cards"]) == 108
    good = [{"code": "gorilla/ice_floe", "count": 3, "set": "base"},
            {"code": "camel/rainforest", "count": 2, "set": "base"}]
    env = raw(deck=good, max_turned=50)
    assert env.game.codes == ["gorilla/ice_floe", "camel/rainforest"] and env.game.N == 5
    assert env.game.num_actions == 6
    env.reset(seed=0)
    rnd = random.Random(0)
    while not env.state_array[K.DONE]:
        env.game.check_state(env.state_array)
        env.step(rnd.choice(env.legal_actions()))
    for bad in ([], [{"code": "gorilla/moon", "count": 1, "set": "base"}],
                [{"code": "gorilla/ice_floe", "count": 0, "set": "base"}],
                [{"code": "animals:camel+camel", "count": 1, "set": "two_animals"}],
                [{"code": "animals:camel+toad", "count": 1, "set": "base"}],
                good + good[:1], "deck.json"):
        with pytest.raises(OptionError, match="deck"):
            raw(deck=bad)
    for name in ("advanced", "two_animals", "two_habitats"):
        with pytest.raises(OptionError, match=name):
            raw(**{name: 1})
    with pytest.raises(OptionError, match="max_turned"):
        raw(max_turned=0)


@pytest.mark.parametrize("n,start", [(2, 0), (5, 0), (5, 3), (4, "random"), (6, 2)])
def test_deal(n: int, start) -> None:
    env = raw(num_players=n, start_player=start)
    env.reset(seed=3)
    sd = env.state_dict()
    s0 = sd["turned_by"]
    if start != "random":
        assert s0 == start
    sizes = [len(p) for p in sd["draw_piles"]]
    sizes[s0] += 1  # the start player already turned the first card
    extra = 96 % n
    expect = [96 // n + (1 if (q - s0) % n < extra else 0) for q in range(n)]
    assert sizes == expect
    assert len(sd["middle"]) == 1 and sd["middle"][0] == sd["last_turned"]
    assert sd["window"] == 0 and sd["turner"] == (s0 + 1) % n
    assert env.agent_selection == "player_0"


# --- the spec's examples -----------------------------------------------------------------------
def test_example_gorilla_ice_floe_camel_rainforest_pair_is_correct() -> None:
    mid = ["gorilla/ice_floe", "camel/rainforest"]
    assert ref_judge(mid, tuple(mid)) == "pair"
    env = setup(middle=mid + ["toad/desert"])
    sd = window(env, tuple(mid), ())
    assert sd["won_piles"][0] == mid  # earlier-turned first
    assert sd["middle"][0] == "toad/desert" and len(sd["middle"]) == 2  # + the next card


def test_example_right_habitat_wins_all_three() -> None:
    mid = ["camel/desert", "penguin/mountains", "toad/desert"]
    env = setup(middle=mid)
    sd = window(env, (), ("camel/desert",))
    assert sd["won_piles"][1] == mid and len(sd["middle"]) == 1  # only the next card


ADV_MID = ["toad/desert", "spider/ice_floe", "camel/mountains", "animals:camel+penguin",
           "habitats:desert+water_lily", "gorilla/rainforest"]


def test_example_priority_right_over_specials() -> None:
    for order in range(3):
        slaps = [("gorilla/rainforest",), ("animals:camel+penguin",),
                 ("habitats:desert+water_lily",)]
        slaps = slaps[order:] + slaps[:order]
        assert [ref_judge(ADV_MID, s) for s in slaps].count("right") == 1
        env = setup({"num_players": 3, "advanced": True}, middle=ADV_MID)
        sd = window(env, *slaps)
        winner = [s[0] for s in slaps].index("gorilla/rainforest")
        assert sd["won_piles"][winner] == ADV_MID
        assert all(sd["won_piles"][q] == [] for q in range(3) if q != winner)
        assert sd["known_bottom"] == [0, 0, 0]  # the others were correct: no fault


def test_example_one_hand_on_normal_card_is_a_fault() -> None:
    won = [["penguin/desert", "spider/desert"], []]
    env = setup(middle=["gorilla/ice_floe", "camel/mountains"], won=won)
    before = env.state_dict()
    sd = window(env, ("gorilla/ice_floe",), ())
    assert sd["won_piles"][0] == ["penguin/desert"]
    assert sd["draw_piles"][0][-1] == "spider/desert"  # slid under the own draw pile
    assert len(sd["draw_piles"][0]) == len(before["draw_piles"][0]) + 1
    assert sd["known_bottom"] == [1, 0] and sd["middle"][:2] == before["middle"]
    for seat in (0, 1):  # everyone saw it: public in every view
        assert env.state_dict(observer=seat)["draw_piles"][0][-1] == "spider/desert"


def test_example_two_players_same_only_pair_split() -> None:
    mid = ["gorilla/ice_floe", "camel/rainforest"]
    seen = set()
    for r in range(40):
        env = setup(middle=mid, rng=(r, 7))
        sd = window(env, tuple(mid), tuple(mid))
        assert sorted(sd["won_piles"][0] + sd["won_piles"][1]) == sorted(mid)
        assert len(sd["won_piles"][0]) == len(sd["won_piles"][1]) == 1
        seen.add(sd["won_piles"][0][0])
    assert seen == set(mid)  # which card to whom is drawn at random


# --- more rules --------------------------------------------------------------------------------
def test_special_cards_priority_and_conditions() -> None:
    opts = {"num_players": 3, "advanced": True}
    mid = [c for c in ADV_MID if c != "gorilla/rainforest"] + ["gorilla/desert"]
    env = setup(opts, middle=mid)  # 2-animals beats 2-habitats beats a pair
    sd = window(env, ("habitats:desert+water_lily",), ("animals:camel+penguin",),
                ("camel/mountains", "gorilla/desert"))
    assert sd["won_piles"] == [[], mid, []]
    env = setup(opts, middle=mid)
    sd = window(env, ("habitats:desert+water_lily",), (), ("camel/mountains", "gorilla/desert"))
    assert sd["won_piles"] == [mid, [], []]
    # 2-animals whose habitats are not both visible on normal cards: a fault
    mid2 = ["animals:camel+penguin", "toad/desert", "penguin/ice_floe", "spider/desert"]
    assert ref_judge(mid2, ("animals:camel+penguin",)) == "fault"  # ice_floe only on a right card
    env = setup(opts, middle=mid2, won=[["gorilla/desert"], [], []])
    sd = window(env, ("animals:camel+penguin",), (), ())
    assert sd["won_piles"][0] == [] and sd["known_bottom"][0] == 1
    # a pair including a special card is always a fault
    env = setup(opts, middle=ADV_MID, won=[[], ["toad/spider_web"], []])
    sd = window(env, (), ("animals:camel+penguin", "toad/desert"), ())
    assert sd["won_piles"][1] == [] and sd["known_bottom"] == [0, 1, 0]


def test_pairs_sharing_a_card_first_takes_both() -> None:
    mid = ["gorilla/ice_floe", "camel/rainforest", "toad/rainforest"]
    winners = set()
    for r in range(30):
        env = setup({"num_players": 3}, middle=mid, rng=(r, 1))
        sd = window(env, (mid[0], mid[1]), (mid[0], mid[2]), ())
        got = [len(w) for w in sd["won_piles"]]
        assert sorted(got) == [0, 0, 2] and sd["known_bottom"] == [0, 0, 0]
        w = got.index(2)
        winners.add(w)
        assert sd["turned_by"] == w and len(sd["middle"]) == 2
    assert winners == {0, 1}


def test_three_on_the_only_pair_two_get_one_each() -> None:
    mid = ["gorilla/ice_floe", "camel/rainforest"]
    for r in range(20):
        env = setup({"num_players": 3}, middle=mid, rng=(r, 3))
        sd = window(env, tuple(mid), tuple(mid), tuple(mid))
        assert sorted(len(w) for w in sd["won_piles"]) == [0, 1, 1]


def test_two_pairs_of_the_same_types_both_taken() -> None:
    mid = ["gorilla/ice_floe", "camel/rainforest", "gorilla/ice_floe", "camel/rainforest"]
    env = setup(middle=mid)
    sd = window(env, tuple(mid[:2]), tuple(mid[:2]))
    assert [len(w) for w in sd["won_piles"]] == [2, 2] and len(sd["middle"]) == 1


def test_pair_with_right_habitat_card_wins_only_the_two() -> None:
    mid = ["toad/desert", "gorilla/rainforest", "penguin/spider_web", "gorilla/ice_floe"]
    assert ref_judge(mid, ("gorilla/rainforest", "gorilla/ice_floe")) == "pair"
    env = setup(middle=mid)
    sd = window(env, ("gorilla/ice_floe", "gorilla/rainforest"), ())
    assert sd["won_piles"][0] == ["gorilla/rainforest", "gorilla/ice_floe"]
    assert sd["middle"][:2] == ["toad/desert", "penguin/spider_web"]


def test_more_windows_and_who_turns_next() -> None:
    # two disjoint pairs: a slap takes one, the other is still a target -> window 1
    mid = ["gorilla/ice_floe", "camel/rainforest", "toad/desert", "camel/water_lily"]
    env = setup({"num_players": 3}, middle=mid, turned_by=0)
    sd = window(env, (), (mid[0], mid[1]), ())
    assert sd["window"] == 1 and sd["turner"] == 1 and sd["middle"] == mid[2:]
    sd = window(env, (), (), ())  # nobody took: the phase ends, the last taker turns
    assert sd["window"] == 0 and sd["turned_by"] == 1 and len(sd["middle"]) == 3
    # nothing left to slap after the take: the phase ends at once
    env = setup({"num_players": 3}, middle=mid[:2] + ["penguin/mountains"], turned_by=0)
    sd = window(env, (), (), (mid[0], mid[1]))
    assert sd["window"] == 0 and sd["turned_by"] == 2 and sd["turner"] == 0
    # nobody slaps: next clockwise from the player who turned the card
    env = setup({"num_players": 3}, middle=mid[:1], turned_by=2)
    sd = window(env, (), (), ())
    assert sd["turned_by"] == 0


def test_right_habitat_pair_fault_left_of_slapper_turns() -> None:
    mid = ["penguin/desert", "gorilla/rainforest", "toad/mountains"]
    assert ref_judge(mid, ("gorilla/rainforest", "toad/mountains")) == "fault"
    env = setup({"num_players": 4}, middle=mid, turned_by=3,
                won=[[], [], ["camel/ice_floe"], ["toad/desert"]])
    sd = window(env, (), ("penguin/desert",), ("gorilla/rainforest", "toad/mountains"),
                ("gorilla/rainforest", "penguin/desert"))
    # seats 2 and 3 both qualify; first clockwise from the turner (3) is 3 itself -> seat 0
    assert sd["turned_by"] == 0
    assert sd["known_bottom"] == [0, 0, 1, 1]  # the penalty applies to that slap as well


def test_empty_draw_pile_is_skipped_and_still_reacts() -> None:
    env = setup({"num_players": 3}, middle=["penguin/desert"], turned_by=0)
    d = env.state_dict()
    d["draw_piles"][2] += d["draw_piles"][1]
    d["draw_piles"][1] = []
    env.load_state_dict(d)
    window(env, (), (), ())
    assert env.state_dict()["turned_by"] == 2  # seat 1 has no cards: skipped
    # a seat with an empty draw pile still acts in every window, and can win
    mid = ["gorilla/ice_floe", "camel/rainforest", "toad/desert", "camel/water_lily"]
    env = setup({"num_players": 3}, middle=mid, turned_by=0)
    d = env.state_dict()
    d["draw_piles"][0] += d["draw_piles"][1]
    d["draw_piles"][1] = []
    env.load_state_dict(d)
    assert env.observe("player_0")["action_mask"].sum() > 1
    sd = window(env, (), tuple(mid[:2]), ())
    assert sd["won_piles"][1] == mid[:2] and sd["window"] == 1 and sd["turner"] == 1
    sd = window(env, (), (), ())
    assert sd["turned_by"] == 2  # the last taker has no draw cards: clockwise to seat 2


def test_end_of_game_and_out_cards() -> None:
    mid = ["gorilla/ice_floe", "camel/rainforest", "toad/desert"]
    env = setup(middle=mid, draws=[[], []], rest_to=1)
    assert env.state_dict()["draw_piles"] == [[], []]
    window(env, tuple(mid[:2]), ())
    sd = env.state_dict()
    assert sd["current_player"] is None and sd["phase"] == "end" and sd["out"] == ["toad/desert"]
    assert all(env.terminations.values()) and not any(env.truncations.values())
    assert env.infos["player_1"] == {"points": 93.0, "winner": True}
    assert env.infos["player_0"] == {"points": 2.0, "winner": False}
    assert env.rewards == {"player_0": -1.0, "player_1": 1.0}
    # a fault that refills an empty draw pile: the game goes on
    env = setup(middle=mid, draws=[[], []], won=[["penguin/desert"], []], rest_to=1)
    window(env, ("toad/desert",), ())
    sd = env.state_dict()
    assert sd["current_player"] == 0 and sd["turned_by"] == 0
    assert sd["middle"][-1] == "penguin/desert" and sd["known_bottom"] == [0, 0]


def test_tie_is_shared_win() -> None:
    mid = ["gorilla/ice_floe", "camel/rainforest"]
    env = setup(middle=mid, draws=[[], []], won=[[], []], rest_to=0)
    d = env.state_dict()
    rest = d["won_piles"][0]
    half = len(rest) // 2
    d["won_piles"] = [rest[:half], rest[half:]]
    env.load_state_dict(d)
    window(env, (), ())
    assert all(env.infos[a]["winner"] for a in env.possible_agents)
    assert env.rewards == {"player_0": 0.0, "player_1": 0.0}


def test_window_limit_16() -> None:
    pairs = [("camel/ice_floe", "penguin/desert")] * 3 + [("toad/ice_floe", "penguin/water_lily")] \
        * 3 + [("spider/desert", "camel/spider_web")] * 3 + \
        [("gorilla/desert", "camel/rainforest")] * 3 + [("toad/spider_web", "spider/water_lily")] \
        * 3 + [("gorilla/water_lily", "toad/rainforest")] * 2
    mid = [c for p in pairs for c in p]
    env = setup(middle=mid)
    assert MAX_WINDOWS == 16  # the rules: at most 16 windows per turned card
    for w in range(MAX_WINDOWS):
        assert env.state_dict()["window"] == w
        window(env, pairs[w], ())
    assert env.state_dict()["window"] == 0 and len(env.state_dict()["middle"]) == 3


def test_truncation_and_cards_reward() -> None:
    env = raw(max_turned=3, reward_mode="cards")
    env.reset(seed=1)
    rnd = random.Random(0)
    total = Counter()
    while not env.state_array[K.DONE]:
        before = [len(w) for w in env.state_dict()["won_piles"]]
        last = env.agent_selection == "player_1"
        env.step(rnd.choice(env.legal_actions()))
        after = [len(w) for w in env.state_dict()["won_piles"]]
        if last:
            assert [env.rewards[f"player_{q}"] for q in range(2)] == \
                [a - b for a, b in zip(after, before)]
            total.update({q: a - b for q, (a, b) in enumerate(zip(after, before))})
    sd = env.state_dict()
    assert sd["turned_count"] == 3 and sd["truncated"]
    assert all(env.truncations.values()) and not any(env.terminations.values())
    assert [total[q] for q in range(2)] == [len(w) for w in sd["won_piles"]]
