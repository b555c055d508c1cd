"""Op Glad IJs (``op_glad_ijs_v0``): hidden information, brute-force properties (judging,
the mask and the observation against the reference in ``op_glad_ijs_ref``), card
conservation, state-dict validation and the heuristic agent."""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from card_envs import StateDictError
from card_envs.core import kernels as K
from card_envs.op_glad_ijs.layout import MAX_WINDOWS, O_CHOSEN
from op_glad_ijs_ref import (
    ENV_ID,
    act,
    deck_for,
    hyp,
    raw,
    ref_actions,
    ref_judge,
    ref_mask,
    ref_obs,
    setup,
    window,
)


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
        assert own[e.game.T + O_CHOSEN] == 1
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
    from card_envs.agents.op_glad_ijs import OpGladIJsHeuristicAgent

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
                {**d, "choices": [0, None]}, {**d, "window": MAX_WINDOWS}):
        with pytest.raises(StateDictError):
            env.load_state_dict(bad)


# --- agents ------------------------------------------------------------------------------------
def test_heuristic_never_faults_and_beats_random() -> None:
    from card_envs.agents.op_glad_ijs import OpGladIJsHeuristicAgent
    from card_envs.agents.random_agent import RandomAgent

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
