"""Flipology's action-aligned features (``card_envs.flipology.features``) against the engine.

Random positions of every manifest test case (random legal moves, every depth of a game):
``legal`` is the action mask; each feature agrees with the state (the card an action names)
or with the state after stepping the action in a clone (faces, chains, points, swaps,
removals, peeks, placements, picks); the features are unchanged by ``resample`` of the seat
to act; the batched driver (``card_envs.core.features.Features``) equals ``fill`` per row.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator

import numpy as np
import pytest

import card_envs
from card_envs.core import kernels as K
from card_envs.core.env import CardEnv
from card_envs.core.features import Features
from card_envs.core.vector import VectorEnv
from card_envs.flipology import features as FX
from card_envs.flipology import layout as L
from card_envs.flipology.manifest import MANIFEST
from card_envs.flipology.parts.deck import default_deck
from card_envs.flipology.parts.effects import abs_pos
from card_envs.flipology.queries import moon_up, public_score, seat_points

ENV_ID = MANIFEST.env_id
CASES = MANIFEST.test_cases
AF = {name: i for i, name in enumerate(FX.ACTION_FEATURES)}
ROLES = FX.ROLES
FEATURE_OF_KIND = {"sloth": "sloth_koala", "koala": "sloth_koala", "hermit_crab": "hermit"}


def positions(opts: dict, games: int, seed: int = 0) -> Iterator[CardEnv]:
    """Every position (the env itself: clone it to change it) of ``games`` random games."""
    env = card_envs.make_raw(ENV_ID, **opts)
    rnd = random.Random(seed)
    for g in range(games):
        env.reset(seed=seed * 1000 + g)
        while not env.state_array[K.DONE]:
            yield env
            env.step(rnd.choice(env.legal_actions()))


def feats(env) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(observation of the seat to act, global, per-action) of ``env``."""
    g = env.game
    obs = env.observe(env.agent_selection)["observation"]
    G, F = FX.dims(g)
    glob = np.full(G, np.nan, np.float32)  # every entry must be written
    act = np.full((F, g.num_actions), np.nan, np.float32)
    FX.fill(obs, g.cfg, glob, act)
    return obs, glob, act


def cur(env) -> int:
    return int(env.state_array[K.CUR])


def pts(env) -> list[int]:
    s, g = env.state_array, env.game
    return [seat_points(s, g.cfg, q) for q in range(g.num_players)]


def test_names_and_dims() -> None:
    for opts in CASES:
        g = card_envs.make_raw(ENV_ID, **opts).game
        assert FX.dims(g) == (len(FX.GLOBAL_FEATURES), len(FX.ACTION_FEATURES))
    assert FX.ACTION_FEATURES[0] == "legal"
    assert len(set(FX.ACTION_FEATURES)) == len(FX.ACTION_FEATURES)
    assert len(set(FX.GLOBAL_FEATURES)) == len(FX.GLOBAL_FEATURES)


@pytest.mark.parametrize("opts", CASES, ids=str)
def test_legal_is_the_action_mask(opts: dict) -> None:
    phases = Counter()
    for env in positions(opts, 8, seed=1):
        obs, glob, act = feats(env)
        assert np.isfinite(glob).all() and np.isfinite(act).all()
        assert np.abs(act).max() <= 4 and np.abs(glob).max() <= 10
        mask = env.observe(env.agent_selection)["action_mask"]
        assert np.array_equal(act[0], mask.astype(np.float32))
        ph = env.game.phase_name(env.state_array)
        phases[ph] += 1
        assert glob[FX.GLOBAL_FEATURES.index(f"phase_{ph}")] == 1
        assert glob[FX.GLOBAL_FEATURES.index("to_act")] == 1
        other = (cur(env) + 1) % env.game.num_players  # a seat not to act: nothing legal
        o2 = env.observe(f"player_{other}")["observation"]
        G, F = FX.dims(env.game)
        g2, a2 = np.empty(G, np.float32), np.empty((F, env.game.num_actions), np.float32)
        FX.fill(o2, env.game.cfg, g2, a2)
        assert not a2[0].any() and g2[FX.GLOBAL_FEATURES.index("to_act")] == 0
    assert phases["turn"] and phases["effect"] and phases["setup"]


def test_custom_deck_without_nulls() -> None:
    """Unknown cards stand in the visible state by a card of the deck: with no null card in
    the deck, another one (not a Sloth/Koala); legal and the points stay right."""
    deck = default_deck()
    deck["cards"] = [e for e in deck["cards"] if e["kind"] != "null"]
    seen = Counter()
    for env in positions({"num_players": 3, "deck": deck}, 4, seed=6):
        _, _, act = feats(env)
        assert np.array_equal(act[0], env.observe(env.agent_selection)["action_mask"])
        check_card(env, act)
        if env.state_array[K.PHASE] == L.P_EFFECT:
            check_actions(env, act, seen)
    assert seen["flip"]


def check_card(env, act: np.ndarray) -> None:
    """The card block of every position against the state (what the seat to act knows)."""
    g, s, me = env.game, env.state_array, cur(env)
    unseen = _unseen(env, me)
    for a in range(g.npos):
        p = abs_pos(g.cfg, me, a)
        c = int(s[L.POS + p])
        col = act[:, a]
        if c < 0:
            assert not col[1:].any()
            continue
        rel, i = divmod(a, g.seatpos)
        lv, cc = divmod(i, g.rowlen)
        assert col[AF["own"]] == (rel == 0) and col[AF["face_up"]] == s[L.FACE + p]
        assert col[AF["seat"]] == np.float32(rel / (g.num_players - 1))
        assert col[AF["level"]] == np.float32(lv / 2)
        assert col[AF["col"]] == np.float32(cc / (g.rowlen - 1))
        known = bool(s[L.KNOW + c] >> me & 1)
        assert col[AF["known"]] == known
        kinds = [n for n in FX.ACTION_FEATURES[AF["dog"]:AF["null"] + 1] if col[AF[n]]]
        if known:
            k = int(g.cfg[L.T_KIND + c])
            assert col[AF["points"]] == np.float32(g.cfg[L.T_PTS + c] / 10)
            assert col[AF["unseen_kind"]] == np.float32(unseen[k] / 8)
            name = FEATURE_OF_KIND.get(L.KIND_NAMES[k], L.KIND_NAMES[k])
            assert kinds == ([name] if name in AF else []), (kinds, name)
        else:
            assert col[AF["points"]] == 0 and kinds == []
        nb = [q for q in g.cfg[L.T_ADJ + ((s[L.LEVELS] - 1) * L.MAXPOS + p) * 4:][:4]
              if q >= 0 and s[L.POS + q] >= 0]
        assert col[AF["nb_up"]] == np.float32(sum(s[L.FACE + q] for q in nb) / 4)
        assert col[AF["nb_down"]] == np.float32(sum(1 - s[L.FACE + q] for q in nb) / 4)
    for c in range(g.ncards):  # the pick actions name the discarded cards the seat knows
        col = act[:, g.disc0 + c]
        if s[L.DISC + c] and s[L.KNOW + c] >> me & 1:
            assert col[AF["known"]] == 1 and col[AF["points"]] == np.float32(g.points[c] / 10)
            name = FEATURE_OF_KIND.get(L.KIND_NAMES[g.kinds[c]], L.KIND_NAMES[g.kinds[c]])
            assert name not in AF or col[AF[name]] == 1
        else:
            assert not col[1:].any()


def _unseen(env, me: int) -> Counter:
    """Cards in play per kind that seat ``me`` does not know (hidden places of the state)."""
    g, s = env.game, env.state_array
    out = Counter()
    for c in range(g.ncards):
        if not g.aside[c] and not s[L.KNOW + c] >> me & 1:
            out[g.kinds[c]] += 1
    return out


def _chain_moved(env, before: dict, after_env) -> bool:
    """The step continued a chain: an effect triggered (the chain count grew) or a Monkey's
    choice between two triggered effects is pending."""
    s = after_env.state_array
    c0 = 0 if before["phase"] == L.P_TURN else before["chain"]
    monkey_choice = (s[K.PHASE] == L.P_EFFECT and s[L.EF_KIND] == L.MONKEY
                     and s[L.EF_STEP] == L.MONKEY_CHOOSE)
    return bool(s[L.CHAIN] > c0 or monkey_choice)


def check_actions(env, act: np.ndarray, seen: Counter) -> None:
    """Step every legal action in a clone and compare its features with the result."""
    g, s, me = env.game, env.state_array.copy(), cur(env)
    before = {"phase": int(s[K.PHASE]), "chain": int(s[L.CHAIN]), "pts": pts(env),
              "game": int(s[L.GAME])}
    kind, step, src = int(s[L.EF_KIND]), int(s[L.EF_STEP]), int(s[L.EF_SRC])
    for a in env.legal_actions():
        col = act[:, a]
        roles = [r for r in ROLES if col[AF[r]]]
        assert len(roles) == 1, (a, roles)
        role = roles[0]
        seen[role] += 1
        e2 = env.clone()
        e2.step(a)
        t = e2.state_array
        if t[L.GAME] != before["game"]:
            continue  # a series' next game was dealt: nothing left to compare
        moved = _chain_moved(env, before, e2)
        after = pts(e2)
        d_own = after[me] - before["pts"][me]
        d_opp = sum(after) - sum(before["pts"]) - d_own
        if a < g.npos:
            p = abs_pos(g.cfg, me, a)
            c = int(s[L.POS + p])
            known = bool(s[L.KNOW + c] >> me & 1)
        if role == "flip":
            second = kind == L.MONKEY and step == L.MONKEY_SECOND
            if before["phase"] == L.P_EFFECT and kind == L.MONKEY and step == 0:
                _check_monkey_first(e2, p, int(s[L.FACE + p]), col)
                continue
            ok = known and (not second or s[L.KNOW + s[L.POS + s[L.EF_A]]] >> me & 1)
            if ok:
                assert col[AF["triggers"]] == moved, (a, kind, step)
            else:
                assert col[AF["triggers"]] == 0
            if not moved:
                assert t[L.FACE + p] - s[L.FACE + p] == col[AF["turn"]]
                if ok:
                    assert (col[AF["d_own"]], col[AF["d_opp"]]) == (
                        np.float32(d_own / 10), np.float32(d_opp / 10)), (a, kind, step)
            if kind in (L.RAIN, L.SUN) and before["phase"] == L.P_EFFECT:
                assert not moved and col[AF["triggers"]] == 0
        elif role in ("swap", "remove"):
            assert not moved and col[AF["triggers"]] == 0 and col[AF["turn"]] == 0
            if role == "swap":
                assert t[L.POS + p] == s[L.POS + src] and t[L.POS + src] == c
                assert t[L.FACE + p] == 1 and t[L.FACE + src] == s[L.FACE + p]
                if known or g.kinds[c] not in (L.SLOTH, L.KOALA):
                    assert (col[AF["d_own"]], col[AF["d_opp"]]) == (
                        np.float32(d_own / 10), np.float32(d_opp / 10))
            else:
                assert t[L.POS + p] == g.ncards and t[L.DISC + c] == 1
                if known:
                    assert (col[AF["d_own"]], col[AF["d_opp"]]) == (
                        np.float32(d_own / 10), np.float32(d_opp / 10))
        elif role == "choose":
            assert a in (_rel(g, me, s[L.EF_A]), _rel(g, me, s[L.EF_B]))
            assert col[AF["triggers"]] == 1 and moved
        elif role == "copy":
            assert col[AF[L.KIND_NAMES[g.kinds[c]]]] == 1 and s[L.FACE + p] == 1
            if t[K.PHASE] == L.P_EFFECT and t[L.EF_COPY] and t[L.EF_SRC] == src:
                assert t[L.EF_KIND] == g.kinds[c]
        elif role == "peek":
            assert t[L.KNOW + c] >> me & 1 and s[L.FACE + p] == 0 and p // g.seatpos != me
            assert col[AF["known"]] == known
        elif role == "place":
            slot = a - g.hand0
            hc = int(s[L.HAND + me * L.HANDMAX + slot])
            placed = int(s[L.PLACED])
            q = me * g.seatpos + (int(s[L.LEVELS]) - 1) * g.rowlen + placed
            assert t[L.POS + q] == hc and t[L.FACE + q] == 0
            assert col[AF["col"]] == np.float32(placed / (g.rowlen - 1))
            assert col[AF["level"]] == np.float32((s[L.LEVELS] - 1) / 2) and col[AF["own"]]
            assert col[AF["points"]] == np.float32(g.points[hc] / 10)
            assert col[AF["d_own"]] == np.float32(d_own / 10) and d_opp == 0
        elif role == "pick":
            assert t[L.BONUS + me] - s[L.BONUS + me] == round(col[AF["d_own"]] * 10)
            c = a - g.disc0 if a < g.skip else int(s[L.HCARD])
            assert col[AF["points"]] == np.float32(g.points[c] / 10) and col[AF["known"]]
            if a < g.skip:
                assert t[L.KNOW + (a - g.disc0)] & 1 << me
        elif role == "regrow":
            assert t[L.REGROW + me] == 1 and a == g.skip + L.A_REGROW
        else:  # pass: skip, keep
            assert a in (g.skip + L.A_SKIP, g.skip + L.A_KEEP)
            assert d_own == 0 and not col[AF["d_own"]]
            if a == g.skip + L.A_KEEP:
                assert t[L.REGROW + me] == 0


def _rel(g, me: int, p: int) -> int:
    sp, n = g.seatpos, g.num_players
    return ((p // sp - me) % n) * sp + p % sp


def _check_monkey_first(e2, p: int, face0: int, col: np.ndarray) -> None:
    """A Monkey's first neighbour (Great Tree) flips with the second choice: step each second
    choice; where nothing further triggers, the first card's face changed by ``turn``."""
    assert e2.state_array[L.EF_A] == p
    for b in e2.legal_actions():
        e3 = e2.clone()
        e3.step(b)
        t = e3.state_array
        if t[L.CHAIN] == e2.state_array[L.CHAIN] and not (
                t[K.PHASE] == L.P_EFFECT and t[L.EF_STEP] == L.MONKEY_CHOOSE):
            assert t[L.FACE + p] - face0 == col[AF["turn"]]


@pytest.mark.parametrize("opts", CASES, ids=str)
def test_features_against_the_engine(opts: dict) -> None:
    seen = Counter()
    for i, env in enumerate(positions(opts, 4, seed=2)):
        _, _, act = feats(env)
        check_card(env, act)
        if i % 2 == 0 or env.state_array[K.PHASE] == L.P_EFFECT:
            check_actions(env, act, seen)
    assert seen["flip"] and seen["place"], seen


def test_every_role_is_met() -> None:
    """Across the test cases random play reaches every kind of choice."""
    seen = Counter()
    for opts in CASES:
        for env in positions(opts, 12, seed=3):
            if env.state_array[K.PHASE] != L.P_TURN:
                _, _, act = feats(env)
                check_actions(env, act, seen)
    for role in ROLES:
        assert seen[role], (role, seen)


@pytest.mark.parametrize("opts", CASES, ids=str)
def test_resample_leaves_the_features(opts: dict) -> None:
    rng = np.random.default_rng(0)
    for i, env in enumerate(positions(opts, 3, seed=4)):
        if i % 3:
            continue
        me = cur(env)
        obs, glob, act = feats(env)
        for _ in range(2):
            r = env.resample(me, rng)
            o2, g2, a2 = feats(r)
            assert np.array_equal(obs, o2)
            assert np.array_equal(glob, g2) and np.array_equal(act, a2)


@pytest.mark.parametrize("opts", [CASES[0], CASES[3]], ids=str)
def test_batched_driver_equals_fill(opts: dict) -> None:
    g = card_envs.make_raw(ENV_ID, **opts).game
    vec = VectorEnv(g, 256, 7)
    fx = Features(g)
    G, F = FX.dims(g)
    for _ in range(3):
        for _ in range(9):
            vec.step(vec.sample_actions())
        x = fx.compute(vec.observations)
        assert x.shape == (256, fx.width) and x.dtype == np.float32
        obs, glob, act = fx.split(x)
        assert np.array_equal(obs, vec.observations.astype(np.float32))
        assert np.array_equal(act[:, 0], vec.action_masks.astype(np.float32))
        for i in range(0, 256, 5):
            g1, a1 = np.empty(G, np.float32), np.empty((F, g.num_actions), np.float32)
            FX.fill(vec.observations[i], g.cfg, g1, a1)
            assert np.array_equal(glob[i], g1) and np.array_equal(act[i], a1)
        one = fx.compute(vec.observations[3])
        assert np.array_equal(one, x[3])


def _known_points(env, me: int, q: int) -> int:
    """Seat ``q``'s end points counting only the cards seat ``me`` knows (independent of
    ``queries``: face-up cards, Sloths/Koalas minus face up and plus face down)."""
    g, s = env.game, env.state_array
    tot = int(s[L.BONUS + q])
    for p in range(q * g.seatpos, (q + 1) * g.seatpos):
        c = int(s[L.POS + p])
        if c < 0 or c >= g.ncards or not s[L.KNOW + c] >> me & 1:
            continue
        v = g.points[c]
        if g.kinds[c] in (L.SLOTH, L.KOALA):
            tot += -v if s[L.FACE + p] else v
        elif s[L.FACE + p]:
            tot += v
    return tot


@pytest.mark.parametrize("opts", CASES, ids=str)
def test_global_features_against_the_state(opts: dict) -> None:
    GF = {name: i for i, name in enumerate(FX.GLOBAL_FEATURES)}
    for env in positions(opts, 3, seed=5):
        g, s, me = env.game, env.state_array, cur(env)
        n, nc = g.num_players, g.ncards
        _, glob, _ = feats(env)
        want: dict[str, float] = {f"phase_{name}": s[K.PHASE] == ph
                                  for ph, name in enumerate(L.PHASES)}
        want["to_act"] = 1
        want["start"] = s[L.START] == me
        want["round"] = s[L.ROUND] / 3
        want["turn"] = s[L.TURN] / (n if opts.get("variant") != "great_tree" else 2 * n)
        want["levels"] = s[L.LEVELS] / 3
        ef = int(s[L.EF_KIND])
        for k in FX.EFFECT_KINDS:
            want[f"ef_{L.KIND_NAMES[k]}"] = (ef == k)
        want["ef_copy"] = s[L.EF_COPY]
        want["ef_step"] = s[L.EF_STEP] / 3
        want["chain"] = s[L.CHAIN] / 8
        want["own_points"] = seat_points(s, g.cfg, me) / 30
        others = [(me + r) % n for r in range(1, n)]
        want["opp_known_max"] = max(_known_points(env, me, q) for q in others) / 30
        want["bonus"] = s[L.BONUS + me] / 10
        want["own_public"] = public_score(s, g.cfg, me) / 30
        want["opp_public_max"] = max(public_score(s, g.cfg, q) for q in others) / 30
        mine = range(me * g.seatpos, (me + 1) * g.seatpos)
        want["own_down"] = sum(s[L.POS + p] >= 0 and not s[L.FACE + p]
                               for p in mine) / g.seatpos
        hidden = sum(s[L.POS + p] >= 0 and not s[L.KNOW + s[L.POS + p]] >> me & 1
                     for p in range(g.npos))
        want["hidden"] = hidden / g.seatpos
        want["moon_up"] = moon_up(s, g.cfg)
        want["moon_game"] = bool(opts.get("moon"))
        want["series"] = bool(opts.get("series"))
        want["total"] = s[L.TOTAL + me] / 100
        want["opp_total_max"] = max(s[L.TOTAL + q] for q in others) / 100
        want["game"] = s[L.GAME] / g.options["max_games"]
        want["deck"] = s[L.DECKN] / nc
        unknown = sum(1 for c in range(nc) if s[L.DISC + c] and not s[L.KNOW + c] >> me & 1)
        want["unknown_discards"] = unknown / 10
        unseen = _unseen(env, me)
        want["unseen"] = sum(unseen.values()) / nc
        hid = [c for c in range(nc) if not g.aside[c] and not s[L.KNOW + c] >> me & 1]
        want["unseen_mean"] = sum(g.points[c] for c in hid) / len(hid) / 10 if hid else 0
        for k in FX.SEEN_KINDS:
            want[f"unseen_{L.KIND_NAMES[k]}"] = (unseen[k] / 8)
        assert set(want) == set(GF)
        for name, value in want.items():
            assert glob[GF[name]] == np.float32(value), (name, glob[GF[name]], value)
