"""Rule tests of Op Glad IJs (``op_glad_ijs_v0``) against ``shared/rules/op_glad_ijs.md``.

Positions are built as state dicts (cards conserved: the rest of the deck goes onto draw piles)
and loaded into the raw env; windows are played as one AEC step per seat. Judging, the legal
mask and the observation are re-implemented here from the spec / docstring (``ref_*``) and
compared with the engine.
"""

from __future__ import annotations

import json
import random
from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import card_envs
from card_envs import IllegalActionError, OptionError, StateDictError
from card_envs.core import kernels as K

ENV_ID = "op_glad_ijs_v0"
A = ["camel", "penguin", "toad", "spider", "mountain_goat", "gorilla"]
H = ["desert", "ice_floe", "water_lily", "spider_web", "mountains", "rainforest"]
NORMAL = [f"{A[a]}/{H[h]}" for a in range(6) for h in range(6) if h != a]
RIGHT = [f"{A[a]}/{H[a]}" for a in range(6)]
ANIMALS2 = [f"animals:{A[a]}+{A[(a + 1) % 6]}" for a in range(6)]
HABITATS2 = [f"habitats:{H[h]}+{H[(h + 2) % 6]}" for h in range(6)]


def hyp(n: int = 60) -> settings:
    return settings(max_examples=n, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def codes_for(opts: dict) -> list[str]:
    adv = opts.get("advanced", False)
    return NORMAL + RIGHT + (ANIMALS2 if adv or opts.get("two_animals") else []) + \
        (HABITATS2 if adv or opts.get("two_habitats") else [])


def deck_for(opts: dict) -> Counter:
    return Counter({c: (3 if c in NORMAL else 1) for c in codes_for(opts)})


def raw(**opts):
    return card_envs.make_raw(ENV_ID, **opts)


# --- reference rules (from the spec) -----------------------------------------------------------
def card(code: str) -> tuple[str, set[int], set[int]]:
    """(kind, animals, habitats) of a code."""
    if code.startswith("animals:"):
        return "animals", {A.index(x) for x in code[8:].split("+")}, set()
    if code.startswith("habitats:"):
        return "habitats", set(), {H.index(x) for x in code[9:].split("+")}
    a, h = code.split("/")
    return ("right" if A.index(a) == H.index(h) else "normal"), {A.index(a)}, {H.index(h)}


def ref_judge(middle: list[str], slap: tuple[str, ...]) -> str:
    """'pass', 'right', 'animals', 'habitats', 'pair' (correct) or 'fault'."""
    if not slap:
        return "pass"
    normal = [card(c) for c in middle if card(c)[0] == "normal"]
    vis_a = {x for _, a, _ in normal for x in a}
    vis_h = {x for _, _, h in normal for x in h}
    if len(slap) == 1:
        kind, an, hab = card(slap[0])
        if kind == "right":
            return "right"
        if kind == "animals":
            return "animals" if an <= vis_h else "fault"
        if kind == "habitats":
            return "habitats" if hab <= vis_a else "fault"
        return "fault"
    (k1, a1, h1), (k2, a2, h2) = card(slap[0]), card(slap[1])
    if k1 in ("animals", "habitats") or k2 in ("animals", "habitats"):
        return "fault"
    return "pair" if (a1 & h2) or (a2 & h1) else "fault"


def ref_actions(codes: list[str]) -> list[tuple[str, ...]]:
    """The action table of the docstring: pass, singles, unordered pairs t <= u."""
    T = len(codes)
    return [()] + [(c,) for c in codes] + [(codes[t], codes[u]) for t in range(T)
                                           for u in range(t, T)]


def ref_mask(codes: list[str], middle: list[str]) -> list[int]:
    cnt = Counter(middle)
    out = []
    for s in ref_actions(codes):
        need = Counter(s)
        out.append(int(all(cnt[c] >= k for c, k in need.items())))
    return out


def ref_obs(sd: dict, seat: int, codes: list[str]) -> list[int]:
    n = len(sd["won_piles"])
    idx = {c: i for i, c in enumerate(codes)}
    acts = ref_actions(codes)
    mid = Counter(sd["middle"])
    out = [mid[c] for c in codes]
    own = sd["choices"][seat]
    own_t = [idx[c] for c in acts[own]] if own is not None else []
    out += [idx[sd["last_turned"]], sd["window"], (sd["turned_by"] - seat) % n,
            (sd["turner"] - seat) % n, int(own is not None)]
    out += (own_t + [-1, -1])[:2]
    known = Counter()
    for r in range(n):
        q = (seat + r) % n
        dp, wp, kn = sd["draw_piles"][q], sd["won_piles"][q], sd["known_bottom"][q]
        last = sd["last_slaps"][q]
        lt = [idx[c] for c in acts[last]] if last is not None else []
        out += [len(dp), len(wp), idx[wp[-1]] if wp else -1, kn] + (lt + [-1, -1])[:2]
        known.update(dp[len(dp) - kn:] if kn else [])
    out += [known[c] for c in codes]
    return out


# --- building positions ------------------------------------------------------------------------
def setup(opts: dict | None = None, middle=(), won=None, draws=None, known=None,
          turned_by: int = 0, window: int = 0, rest_to: int | None = None, rng=None):
    """Raw env at the start of a window with the given middle (turned order), won piles
    (top last) and draw piles (top first); the rest of the deck goes on top of the draw piles
    (round robin), or under seat ``rest_to``'s won pile."""
    opts = dict(opts or {})
    env = raw(**opts)
    env.reset(seed=0)
    n = env.game.num_players
    won = [list(w) for w in (won or [[] for _ in range(n)])]
    draws = [list(d) for d in (draws or [[] for _ in range(n)])]
    pool = deck_for(opts)
    for c in list(middle) + [c for w in won for c in w] + [c for d in draws for c in d]:
        pool[c] -= 1
        assert pool[c] >= 0, c
    rest = sorted(pool.elements())
    random.Random(1).shuffle(rest)
    if rest_to is None:
        for i, c in enumerate(rest):
            draws[i % n].insert(0, c)
    else:
        won[rest_to] = rest + won[rest_to]
    d = env.state_dict()
    d.update(middle=list(middle), won_piles=won, draw_piles=draws,
             known_bottom=list(known or [0] * n), turned_by=turned_by,
             turner=(turned_by + 1) % n, window=window, turned_count=max(1, len(middle)),
             last_turned=middle[-1], choices=[None] * n, last_slaps=[None] * n,
             last_gains=[0] * n, current_player=0, phase="react")
    if rng is not None:
        d["rng"] = list(rng)
    env.load_state_dict(d)
    return env


def act(env, *codes: str) -> int:
    """Action index of slapping ``codes`` (computed from the documented table)."""
    table = ref_actions(env.game.codes)
    key = tuple(sorted(codes, key=env.game.codes.index))
    return table.index(key)


def window(env, *slaps) -> dict:
    """Play one window: ``slaps[q]`` is () for pass or a tuple of codes."""
    for q, s in enumerate(slaps):
        assert env.agent_selection == f"player_{q}"
        env.step(act(env, *s) if s else 0)
    return env.state_dict()


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
    from card_envs.op_glad_ijs import deck as D

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
    for w in range(16):
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


# --- hidden information ------------------------------------------------------------------------
def test_pending_choices_are_hidden() -> None:
    env = setup({"num_players": 3}, middle=["gorilla/ice_floe", "camel/rainforest"])
    base = [env.observe(a)["observation"].copy() for a in env.possible_agents]
    for a0 in env.legal_actions():
        e = env.clone()
        e.step(a0)
        for q in (1, 2):
            assert np.array_equal(e.observe(f"player_{q}")["observation"], base[q])
            assert e.state_dict(observer=q)["choices"] == [None, None, None]
        own = e.observe("player_0")["observation"]
        assert own[36 + 4] == 1
        assert e.state_dict(observer=0)["choices"][0] == a0


@hyp(40)
@given(seed=st.integers(0, 2**31 - 1), k=st.integers(0, 300), n=st.integers(2, 6))
def test_reshuffling_unknown_draw_cards_changes_no_observation(seed: int, k: int, n: int) -> None:
    env = raw(num_players=n, advanced=bool(seed % 2))
    env.reset(seed=seed)
    rnd = random.Random(seed)
    for _ in range(k):
        if env.state_array[K.DONE]:
            break
        env.step(rnd.choice(env.legal_actions()))
    obs = [env.observe(a)["observation"].copy() for a in env.possible_agents]
    for q in range(n):  # reshuffle the unknown part of one draw pile at a time
        d = env.state_dict()
        pile, kn = d["draw_piles"][q], d["known_bottom"][q]
        top = pile[:len(pile) - kn]
        rnd.shuffle(top)
        d["draw_piles"][q] = top + pile[len(pile) - kn:]
        alt = env.clone()
        alt.load_state_dict(d)
        for i, a in enumerate(env.possible_agents):
            assert np.array_equal(alt.observe(a)["observation"], obs[i])
            assert alt.state_dict(observer=i)["draw_piles"] == \
                env.state_dict(observer=i)["draw_piles"]


def test_observer_views_and_resample_keep_public_bottom_cards() -> None:
    env = setup(middle=["gorilla/ice_floe", "camel/mountains"],
                won=[["penguin/desert", "spider/desert"], []])
    window(env, ("gorilla/ice_floe",), ())  # fault: spider/desert goes public under pile 0
    sd = env.state_dict()
    for seat in (0, 1):
        view = env.state_dict(observer=seat)
        for q in (0, 1):
            kn = sd["known_bottom"][q]
            pile = view["draw_piles"][q]
            assert pile[len(pile) - kn:] == sd["draw_piles"][q][len(pile) - kn:]
            assert all(c is None for c in pile[:len(pile) - kn])
    unknown = Counter(c for q in (0, 1) for c in
                      sd["draw_piles"][q][:len(sd["draw_piles"][q]) - sd["known_bottom"][q]])
    moved = False
    for r in range(5):
        alt = env.resample(1, r).state_dict()
        assert alt["draw_piles"][0][-1] == "spider/desert" and alt["known_bottom"] == [1, 0]
        assert [len(p) for p in alt["draw_piles"]] == [len(p) for p in sd["draw_piles"]]
        assert Counter(c for q in (0, 1) for c in alt["draw_piles"][q][:len(
            alt["draw_piles"][q]) - alt["known_bottom"][q]]) == unknown
        moved |= alt["draw_piles"] != sd["draw_piles"]
    assert moved


# --- properties --------------------------------------------------------------------------------
@hyp(200)
@given(data=st.data())
def test_judging_and_mask_agree_with_brute_force(data) -> None:
    opts = data.draw(st.sampled_from([{}, {"advanced": True}, {"two_animals": True}]))
    n = data.draw(st.integers(2, 6))
    opts = {**opts, "num_players": n}
    won = [[c] for c in ["camel/ice_floe", "toad/mountains", "spider/desert", "gorilla/desert",
                         "penguin/spider_web", "camel/spider_web"][:n]]
    pool = sorted((deck_for(opts) - Counter(c for w in won for c in w)).elements())
    m = data.draw(st.integers(1, 14))
    mid = data.draw(st.permutations(pool))[:m]
    env = setup(opts, middle=mid, won=won, rng=(data.draw(st.integers(0, 10**6)), 5))
    codes = env.game.codes
    table = ref_actions(codes)
    assert env.observe("player_0")["action_mask"].tolist() == ref_mask(codes, mid)
    legal = env.legal_actions()
    choices = [data.draw(st.sampled_from(legal)) for _ in range(n)]
    before = env.state_dict()
    for q in range(n):
        assert ref_obs(env.state_dict(), q, codes) == \
            env.observe(f"player_{q}")["observation"].tolist()
    for a in choices:
        env.step(a)
    after = env.state_dict()
    judged = [ref_judge(mid, table[a]) for a in choices]
    gain = [len(after["won_piles"][q]) - len(before["won_piles"][q]) for q in range(n)]
    for q in range(n):  # faults: exactly the faulting seats lose their top won card
        if judged[q] == "fault":
            assert gain[q] == -1 and after["draw_piles"][q][-1] == won[q][0]
        else:
            assert gain[q] >= 0
    best = next((c for c in ("right", "animals", "habitats") if c in judged), None)
    if best:
        winners = [q for q in range(n) if gain[q] > 0]
        assert len(winners) == 1 and judged[winners[0]] == best and gain[winners[0]] == m
        assert after["won_piles"][winners[0]][-m:] == mid
    else:
        taken = Counter()
        for q in range(n):
            got = after["won_piles"][q][len(before["won_piles"][q]):] if gain[q] > 0 else []
            assert gain[q] <= 0 or judged[q] == "pair"
            if gain[q] == 2:
                assert Counter(got) == Counter(table[choices[q]])
            elif gain[q] == 1:
                assert got[0] in table[choices[q]]
            taken.update(got)
        left = Counter(mid) - taken
        if after["window"] == 1:  # another window on the same card
            assert Counter(after["middle"]) == left
        elif after["phase"] == "react":  # the next card was turned
            assert Counter(after["middle"]) == left + Counter([after["last_turned"]])
        if any(j == "pair" for j in judged):
            assert sum(max(g, 0) for g in gain) >= 1


@hyp(25)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(2, 6),
       opts=st.sampled_from([{}, {"advanced": True}, {"two_habitats": True}]),
       miss=st.sampled_from([0.0, 0.5, 1.0]))
def test_cards_conserved_and_game_ends(seed: int, n: int, opts: dict, miss: float) -> None:
    """Mixed heuristic / random play to the end (by the rules or the cut-off)."""
    from agents.op_glad_ijs import OpGladIJsHeuristicAgent

    opts = {**opts, "num_players": n, "max_turned": 300}
    env = raw(**opts)
    env.reset(seed=seed)
    rnd = random.Random(seed)
    agents = [OpGladIJsHeuristicAgent(ENV_ID, seed=q, miss_rate=miss, **opts) for q in range(n)]
    deck = deck_for(opts)
    for _ in range(50_000):
        if env.state_array[K.DONE]:
            break
        sd = env.state_dict()
        allc = Counter(sd["middle"] + sd["out"])
        for q in range(n):
            allc.update(sd["draw_piles"][q] + sd["won_piles"][q])
        assert allc == deck
        q = int(env.agent_selection[-1])
        o = env.observe(env.agent_selection)
        a = agents[q].act(o["observation"], o["action_mask"]) if q % 2 == 0 else \
            rnd.choice(env.legal_actions())
        env.step(a)
    else:
        pytest.fail("game did not end")
    sd = env.state_dict()
    assert sum(len(w) for w in sd["won_piles"]) + len(sd["out"]) + \
        sum(len(d) for d in sd["draw_piles"]) == sum(deck.values())
    assert sd["middle"] == []


def test_bad_state_dicts() -> None:
    env = setup(middle=["gorilla/ice_floe"])
    d = env.state_dict()
    for bad in ({**d, "middle": ["gorilla/ice_floe", "gorilla/ice_floe"]},
                {**d, "middle": ["dragon/ice_floe"]}, {**d, "known_bottom": [99, 0]},
                {**d, "choices": [0, None]}, {**d, "window": 16}):
        with pytest.raises(StateDictError):
            env.load_state_dict(bad)


# --- the parallel env --------------------------------------------------------------------------
def test_parallel_api_and_seed() -> None:
    from pettingzoo.test import parallel_api_test, parallel_seed_test

    from card_envs import op_glad_ijs_v0

    parallel_api_test(op_glad_ijs_v0.parallel_env(max_turned=150), num_cycles=400)
    parallel_api_test(op_glad_ijs_v0.parallel_env(num_players=5, advanced=True,
                                                   reward_mode="cards"), num_cycles=100)
    parallel_seed_test(lambda: op_glad_ijs_v0.parallel_env(num_players=3), num_cycles=100)


@pytest.mark.parametrize("opts", [{"num_players": 3, "reward_mode": "cards"},
                                  {"num_players": 2, "max_turned": 60}])
def test_parallel_matches_aec(opts: dict) -> None:
    from card_envs import op_glad_ijs_v0

    par = op_glad_ijs_v0.parallel_env(illegal_action="raise", **opts)
    aec = raw(**opts)
    obs, _ = par.reset(seed=5)
    aec.reset(seed=5)
    rnd = random.Random(2)
    while par.agents:
        for a in par.agents:
            assert np.array_equal(obs[a]["observation"], aec.observe(a)["observation"])
        acts = {a: rnd.choice(np.flatnonzero(obs[a]["action_mask"]).tolist())
                for a in par.agents}
        cum = {a: 0.0 for a in aec.possible_agents}
        for a in par.agents:
            assert aec.agent_selection == a
            aec.step(acts[a])
            for b in aec.possible_agents:
                cum[b] += aec.rewards[b]
        obs, rew, term, trunc, info = par.step(acts)
        assert par.state_dict() == aec.state_dict()
        assert rew == pytest.approx(cum)
        if not par.agents:
            assert term == aec.terminations and trunc == aec.truncations
            assert info == aec.infos


def test_parallel_bad_input_changes_nothing() -> None:
    from card_envs import op_glad_ijs_v0

    par = op_glad_ijs_v0.raw_parallel_env()
    obs, _ = par.reset(seed=1)
    before = par.state_dict()
    masked = int(np.flatnonzero(obs["player_0"]["action_mask"] == 0)[0])
    for bad in ({"player_0": 0}, {"player_0": 0, "player_1": 0, "player_9": 0},
                {"player_0": 0, "player_1": -1}, {"player_0": 1.0, "player_1": 0},
                {"player_0": 0, "player_1": masked}, [0, 0], None):
        with pytest.raises(IllegalActionError):
            par.step(bad)
        assert par.state_dict() == before
    lose = op_glad_ijs_v0.parallel_env()
    lose.reset(seed=1)
    with pytest.warns(UserWarning):
        _, rew, term, _, info = lose.step({"player_0": 0, "player_1": masked})
    assert rew == {"player_0": 0.0, "player_1": -1.0} and all(term.values())
    assert lose.agents == [] and info["player_0"]["illegal_action"] == ["player_1"]
    with pytest.raises(IllegalActionError, match="over"):
        lose.step({"player_0": 0, "player_1": 0})


# --- agents ------------------------------------------------------------------------------------
def test_heuristic_never_faults_and_beats_random() -> None:
    from agents.op_glad_ijs import OpGladIJsHeuristicAgent
    from agents.random_agent import RandomAgent

    wins = 0
    games = 20
    for g in range(games):
        env = raw()
        env.reset(seed=g)
        h = OpGladIJsHeuristicAgent(ENV_ID, seed=g)
        r = RandomAgent(ENV_ID, seed=g)
        hseat = g % 2
        while not env.state_array[K.DONE]:
            q = int(env.agent_selection[-1])
            o = env.observe(env.agent_selection)
            a = (h if q == hseat else r).act(o["observation"], o["action_mask"])
            if q == hseat:
                mid = env.state_dict()["middle"]
                assert ref_judge(mid, ref_actions(env.game.codes)[a]) != "fault"
            env.step(a)
        wins += env.infos[f"player_{hseat}"]["winner"]
    assert wins >= games - 1
    with pytest.raises(ValueError):
        OpGladIJsHeuristicAgent(ENV_ID, miss_rate=2.0)
    lazy = OpGladIJsHeuristicAgent(ENV_ID, seed=0, miss_rate=1.0)
    env = setup(middle=["gorilla/rainforest"])
    o = env.observe("player_0")
    assert lazy.act(o["observation"], o["action_mask"]) == 0
    assert OpGladIJsHeuristicAgent(ENV_ID, seed=0).act(o["observation"], o["action_mask"]) == \
        act(env, "gorilla/rainforest")
