"""Op Glad IJs' action-aligned features (``card_envs.op_glad_ijs.features``) against the engine.

Positions come from seeded random play of every variant in the manifest's ``test_cases``, at
several depths. ``legal`` is compared with the action masks, the judge classes with the plain
Python reference of the rules (``op_glad_ijs_ref.ref_judge``, from the state dict), ``gain``,
``again``, ``split`` and ``outranked`` with what the engine does when the window is played out
on a clone (the other seats' choices set through the state dict), the global features with the
state dict. Then: invariance under ``resample``, and the batched driver on a ``VectorEnv``."""

from __future__ import annotations

import functools
import random

import numpy as np
import pytest

import card_envs
from card_envs.core.features import Features
from card_envs.core.registry import manifest
from card_envs.core.vector import VectorEnv
from card_envs.op_glad_ijs import features as FX
from card_envs.op_glad_ijs.layout import MAX_PLAYERS, MAX_WINDOWS
from card_envs.op_glad_ijs.parts.deck import ANIMALS, HABITATS
from op_glad_ijs_ref import ENV_ID, card, ref_judge, setup

CASES = manifest(ENV_ID).test_cases
RANDOM_IDS = [",".join(f"{k}={v}" for k, v in c.items()) or "default" for c in CASES]
AF = {name: i for i, name in enumerate(FX.ACTION_FEATURES)}
GF = {name: i for i, name in enumerate(FX.GLOBAL_FEATURES)}
CLASSES = ("right", "animals", "habitats", "pair")  # the correct classes, by priority
DEPTHS = (0, 1, 2, 5, 9, 17, 30, 55, 90, 150, 240)


def features(env, agent: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``fill``'s ``(glob, act)`` of ``agent``'s observation (default: the seat to act)."""
    g = env.game
    G, F = FX.dims(g)
    glob = np.full(G, np.nan, np.float32)
    act = np.full((F, g.num_actions), np.nan, np.float32)
    FX.fill(env.observe(agent or env.agent_selection)["observation"], g.cfg, glob, act)
    return glob, act


def _move(env, rnd: random.Random) -> int:
    """A random legal action, biased toward passes and correct slaps (to reach varied middles:
    uniform play mostly faults); correct slaps are read from the features (play only)."""
    legal = env.legal_actions()
    x = rnd.random()
    if x < 0.35:
        return 0
    if x < 0.6:
        _, act = features(env)
        good = [a for a in legal if act[AF["fault"], a] == 0 and a != 0]
        if good:
            return rnd.choice(good)
    return rnd.choice(legal)


# crafted windows (op_glad_ijs_ref.setup): every class, splits, "again" both ways, the window cap
_ADV = {"num_players": 3, "advanced": True}
_WON3 = [["spider/rainforest", "toad/ice_floe"], [], ["penguin/rainforest"]]
CRAFTED = (
    (_ADV, ["gorilla/ice_floe", "camel/rainforest", "gorilla/ice_floe", "camel/rainforest",
            "penguin/desert", "camel/ice_floe", "camel/desert", "animals:camel+penguin",
            "habitats:desert+water_lily", "toad/desert", "spider/mountains",
            "habitats:spider_web+rainforest", "animals:toad+spider"], _WON3, 0),
    (_ADV, ["gorilla/ice_floe", "camel/rainforest", "animals:camel+penguin", "toad/desert",
            "mountain_goat/water_lily"], _WON3, 2),
    (_ADV, ["penguin/desert", "camel/ice_floe", "camel/desert", "gorilla/ice_floe",
            "camel/rainforest"], _WON3, MAX_WINDOWS - 1),
    ({}, ["gorilla/ice_floe", "camel/rainforest", "toad/spider_web"], [["toad/ice_floe"], []],
     0),
    ({}, ["camel/desert", "penguin/mountains", "toad/desert"], [[], ["toad/ice_floe"]], 1),
)
CASE_IDS = RANDOM_IDS + ["crafted"]


@functools.cache
def positions(case: int) -> tuple:
    """Clones of running games: of ``CASES[case]`` after ``DEPTHS`` random moves (two seeds),
    or (``case == len(CASES)``) the ``CRAFTED`` windows, with each seat to act in turn."""
    out = []
    if case == len(CASES):
        for opts, middle, won, window in CRAFTED:
            env = setup(opts, middle=middle, won=won, window=window)
            for _ in range(env.game.num_players):
                out.append(env.clone())
                env.step(0)
        return tuple(out)
    for seed in (case * 10 + 1, case * 10 + 2):
        env = card_envs.make_raw(ENV_ID, **CASES[case])
        env.reset(seed=seed)
        rnd = random.Random(seed)
        for k in range(DEPTHS[-1] + 1):
            if over(env):
                env.reset(seed=seed + 100)
            if k in DEPTHS:
                out.append(env.clone())
            env.step(_move(env, rnd))
    return tuple(out)


def over(env) -> bool:
    return env.terminations[env.agent_selection] or env.truncations[env.agent_selection]


@functools.cache
def finished(case: int):
    """A game of ``CASES[case]`` played to its end (cut off after 3 turned cards)."""
    env = card_envs.make_raw(ENV_ID, **{**CASES[case], "max_turned": 3})
    env.reset(seed=case)
    rnd = random.Random(case)
    while not over(env):
        env.step(_move(env, rnd))
    return env


def slap_codes(env, a: int) -> tuple[str, ...]:
    return tuple(env.game.codes[t] for t in env.game.action_types(a) if t >= 0)


def ref_class(env, middle: list[str], a: int) -> str:
    return ref_judge(middle, slap_codes(env, a))


def play_window(env, plan: dict[int, int]) -> tuple[dict, dict]:
    """Play the current window out on a clone: seat ``q`` chooses ``plan.get(q, 0)`` (pass),
    also the seats that had already chosen (reset through the state dict). Returns the state
    dicts before and after."""
    e = env.clone()
    sd = e.state_dict()
    cur, n = sd["current_player"], e.game.num_players
    for q in range(cur):
        sd["choices"][q] = plan.get(q, 0)
    e.load_state_dict(sd)
    for q in range(cur, n):
        e.step(plan.get(q, 0))
    return sd, e.state_dict()


def gains(before: dict, after: dict) -> list[int]:
    return [len(w1) - len(w0) for w0, w1 in zip(before["won_piles"], after["won_piles"])]


# --- names, dims, legal ------------------------------------------------------------------------
def test_names_and_dims() -> None:
    assert FX.ACTION_FEATURES[0] == "legal"
    assert len(set(FX.ACTION_FEATURES)) == len(FX.ACTION_FEATURES)
    assert len(set(FX.GLOBAL_FEATURES)) == len(FX.GLOBAL_FEATURES)
    for case in CASES:
        g = card_envs.make_raw(ENV_ID, **case).game
        assert FX.dims(g) == (len(FX.GLOBAL_FEATURES), len(FX.ACTION_FEATURES))
        fx = Features(g)
        assert fx.width == g.obs_size + fx.global_dim + fx.action_dim * g.num_actions
        assert fx.global_names == FX.GLOBAL_FEATURES
    with pytest.raises(ValueError, match="Op Glad IJs"):
        FX.dims(card_envs.make_raw("slide_v0").game)


@pytest.mark.parametrize("case", range(len(CASES) + 1), ids=CASE_IDS)
def test_legal_is_the_action_mask(case: int) -> None:
    for env in positions(case):
        cur = env.agent_selection
        mask = env.observe(cur)["action_mask"]
        for agent in env.agents:
            glob, act = features(env, agent)
            assert np.isfinite(glob).all() and np.isfinite(act).all()  # every entry written
            seat = env.agents.index(agent)
            if agent == cur:
                expect = mask
            elif seat < env.agents.index(cur):  # has chosen: not to act in this window
                expect = np.zeros_like(mask)
                assert glob[GF["chosen"]] == 1
            else:  # still waiting: the slaps it will have (the middle stays)
                expect = mask
            np.testing.assert_array_equal(act[AF["legal"]], expect)
            assert not act[:, act[AF["legal"]] == 0].any()  # illegal actions: all 0
    if case < len(CASES):
        ended = finished(case)
        for agent in ended.agents:  # game over: nothing legal
            _, act = features(ended, agent)
            assert not act.any() and not ended.observe(agent)["action_mask"].any()


# --- per-action features against the reference and the engine ----------------------------------
@pytest.mark.parametrize("case", range(len(CASES) + 1), ids=CASE_IDS)
def test_classes_and_outranked_match_the_rules(case: int) -> None:
    seen = set()
    for env in positions(case):
        middle = env.state_dict()["middle"]
        glob, act = features(env)
        legal = env.legal_actions()
        cls = {a: ref_class(env, middle, a) for a in legal}
        best = min((CLASSES.index(c) for c in cls.values() if c in CLASSES), default=None)
        for a in legal:
            row = [act[AF[c], a] for c in FX.CLASS_NAMES]
            assert row == [float(c == cls[a]) for c in FX.CLASS_NAMES], (a, cls[a])
            seen.add(cls[a])
            ranked = cls[a] in CLASSES and CLASSES.index(cls[a]) > best
            assert act[AF["outranked"], a] == float(ranked)
        for i, c in enumerate(CLASSES):
            assert glob[GF[f"best_{c}"]] == float(best == i)
        assert glob[GF["target"]] == float(best is not None)
    assert {"pass", "pair", "fault"} <= seen
    if case == len(CASES):
        assert seen == set(FX.CLASS_NAMES)


@pytest.mark.parametrize("case", range(len(CASES) + 1), ids=CASE_IDS)
def test_gain_and_again_alone_match_the_engine(case: int) -> None:
    """Every other seat passes: the observer's won pile changes by ``gain`` x 10; ``again``
    says whether another window of the same card opens."""
    rnd = random.Random(case)
    agains = set()
    for env in positions(case):
        _, act = features(env)
        seat = env.agents.index(env.agent_selection)
        legal = env.legal_actions()
        correct = [a for a in legal if a and not act[AF["fault"], a]]
        for a in [0] + correct[:12] + rnd.sample(legal, min(4, len(legal))):
            before, after = play_window(env, {seat: a})
            assert gains(before, after)[seat] == round(10 * float(act[AF["gain"], a])), a
            again = after["phase"] == "react" and after["window"] == before["window"] + 1 \
                and after["turned_count"] == before["turned_count"]
            assert act[AF["again"], a] == float(again), a
            agains.add(again)
    if case == len(CASES):
        assert agains == {True, False}


@pytest.mark.parametrize("case", range(len(CASES) + 1), ids=CASE_IDS)
def test_split_and_outranked_match_the_engine(case: int) -> None:
    """A rival slapping the same correct pair splits it iff ``split``; a rival taking the
    best available class leaves an ``outranked`` slap with nothing."""
    splits, ranked = set(), 0
    for env in positions(case):
        _, act = features(env)
        seat = env.agents.index(env.agent_selection)
        rival = (seat + 1) % env.game.num_players
        legal = env.legal_actions()
        pairs = [a for a in legal if act[AF["pair"], a]]
        for a in pairs[:6]:
            before, after = play_window(env, {seat: a, rival: a})
            split = act[AF["split"], a] == 1
            g = gains(before, after)
            assert (g[seat], g[rival]) == ((1, 1) if split else (2, 2)), a
            splits.add(split)
        best = {c: [a for a in legal if act[AF[c], a]] for c in CLASSES}
        top = next((best[c] for c in CLASSES if best[c]), [])
        for a in [a for a in legal if act[AF["outranked"], a]][:6]:
            before, after = play_window(env, {seat: a, rival: top[0]})
            g = gains(before, after)
            assert g[seat] == 0 and g[rival] > 0, a
            ranked += 1
    if case == len(CASES):
        assert splits == {True, False} and ranked > 0


@pytest.mark.parametrize("case", range(len(CASES) + 1), ids=CASE_IDS)
def test_globals_match_the_state_dict(case: int) -> None:
    ended = (finished(case),) if case < len(CASES) else ()
    for env in positions(case) + ended:
        n = env.game.num_players
        for agent in env.agents:
            seat = env.agents.index(agent)
            sd = env.state_dict(observer=seat)
            glob, _ = features(env, agent)
            mid = [card(c) for c in sd["middle"]]
            normal = [c for c in mid if c[0] == "normal"]
            share = env.game.N / n
            expect = {"middle": len(mid) / 10,
                      "right_cards": sum(c[0] == "right" for c in mid) / 2,
                      "animals_cards": sum(c[0] == "animals" for c in mid) / 2,
                      "habitats_cards": sum(c[0] == "habitats" for c in mid) / 2,
                      "new_in_middle": float(sd["last_turned"] in sd["middle"]),
                      "window": sd["window"] / MAX_WINDOWS,
                      "chosen": float(sd["choices"][seat] is not None),
                      "turned_by_me": float(sd["turned_by"] == seat),
                      "turner_me": float(sd["turner"] == seat)}
            _, new_a, new_h = card(sd["last_turned"])
            for i, (a, h) in enumerate(zip(ANIMALS, HABITATS)):
                expect[f"animal_{a}"] = float(any(i in c[1] for c in normal))
                expect[f"habitat_{h}"] = float(any(i in c[2] for c in normal))
                expect[f"new_animal_{a}"] = float(i in new_a)
                expect[f"new_habitat_{h}"] = float(i in new_h)
            won = [len(sd["won_piles"][(seat + r) % n]) for r in range(n)]
            expect["lead"] = (won[0] - max(won[1:])) / share
            for r in range(MAX_PLAYERS):
                q = (seat + r) % n
                expect[f"draw_{r}"] = len(sd["draw_piles"][q]) / share if r < n else 0
                expect[f"won_{r}"] = won[r] / share if r < n else 0
                expect[f"known_{r}"] = sd["known_bottom"][q] / share if r < n else 0
            assert set(expect) | {f"best_{c}" for c in CLASSES} | {"target"} \
                == set(FX.GLOBAL_FEATURES)
            for name, v in expect.items():
                assert glob[GF[name]] == pytest.approx(v, abs=1e-6), name


# --- hidden information, the batched driver ----------------------------------------------------
@pytest.mark.parametrize("case", range(len(CASES) + 1), ids=CASE_IDS)
def test_features_unchanged_by_resample(case: int) -> None:
    rng = np.random.default_rng(case)
    for env in positions(case)[::2]:
        for agent in env.agents:
            glob, act = features(env, agent)
            for _ in range(2):
                other = env.resample(agent, rng)
                g2, a2 = features(other, agent)
                np.testing.assert_array_equal(glob, g2)
                np.testing.assert_array_equal(act, a2)


@pytest.mark.parametrize("case", range(len(CASES)), ids=RANDOM_IDS)
def test_batched_driver_equals_fill(case: int) -> None:
    game = card_envs.make_raw(ENV_ID, **CASES[case]).game
    vec = VectorEnv(game, 256, seed=case)
    fx = Features(game)
    G, F = FX.dims(game)
    glob = np.empty(G, np.float32)
    act = np.empty((F, game.num_actions), np.float32)
    for _ in range(3):
        for _ in range(7):
            vec.step(vec.sample_actions())
        x = fx.compute(vec.observations)
        obs, gx, ax = fx.split(x)
        np.testing.assert_array_equal(obs, vec.observations.astype(np.float32))
        np.testing.assert_array_equal(ax[:, AF["legal"]], vec.action_masks)
        for i in range(0, 256, 5):
            FX.fill(vec.observations[i], game.cfg, glob, act)
            np.testing.assert_array_equal(gx[i], glob)
            np.testing.assert_array_equal(ax[i], act)
        small = fx.compute(vec.observations[:7])  # the serial build
        np.testing.assert_array_equal(small, x[:7])


@pytest.mark.parametrize("case", range(len(CASES)))
def test_potential_is_the_won_pile_lead(case: int) -> None:
    """The shaping potential: own won pile minus the largest other one (the state dict's won
    piles), / POTENTIAL_CARDS, for every seat; 0 at the deal; wrong rows refused."""
    env = card_envs.make_raw(ENV_ID, **CASES[case])
    env.reset(seed=3)
    n = env.game.num_players
    obs = np.stack([env.observe(a)["observation"] for a in env.possible_agents])
    np.testing.assert_array_equal(FX.potential(obs, n), np.zeros(n))
    seen = False
    for env in positions(case):
        won = [len(p) for p in env.state_dict()["won_piles"]]
        obs = np.stack([env.observe(a)["observation"] for a in env.possible_agents])
        want = [(won[s] - max(won[q] for q in range(n) if q != s)) / FX.POTENTIAL_CARDS
                for s in range(n)]
        np.testing.assert_allclose(FX.potential(obs, n), want)
        seen |= any(w != 0 for w in want)
    assert seen
    with pytest.raises(ValueError, match="observations"):
        FX.potential(obs[:, :-1], n)
