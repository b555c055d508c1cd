"""If It Fits action-aligned features (card_envs/if_it_fits/features.py), checked against the
engine on random positions of every manifest test case: ``legal`` is the action mask; every
action that does one thing (a rotation, a cat, a special toy card, a Princess, a sleeping cat's
direction) is stepped on a clone and its features compared with the engine's boxes, scores
and next mask; every choice whose details come later (a cell, a hand card, a start card, a
sleeping cat's cell) reports one of its legal follow-ups, the one with the most points; the
features do not change when the hidden information is redrawn; the batched driver."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import numpy as np
import pytest

import card_envs
from card_envs.core.features import Features
from card_envs.core.vector import VectorEnv
from card_envs.if_it_fits import features as FX
from card_envs.if_it_fits.layout import (
    A_DRAW,
    A_HAND,
    A_ROT,
    CF_TABLE,
    F_BALL,
    F_SPRAY,
    FIELDS,
    PHASES,
    S_FRONTN,
    S_SEL,
    S_SELCELL,
    S_SELSTART,
    S_TOY,
)
from card_envs.if_it_fits.manifest import MANIFEST
from card_envs.if_it_fits.queries import cat_allowed, find, sleep_cell_ok, toy_slot_ok
from if_it_fits_ref import boxes

CASES = MANIFEST.test_cases
IDS = ("basic", "advanced3", "small5")
NAMES = FX.ACTION_FEATURES
COL = {name: k for k, name in enumerate(NAMES)}
COL_TO_ACT = FX.GLOBAL_FEATURES.index("to_act")
# one thing happens: stepped and compared with the engine
DIRECT = ("rotation", "start_rotation", "toy_cell", "cat", "toy_slot", "princess", "sleep_dir")
# the details come in the next step: one of the follow-ups is reported
CHOICE = ("cell", "start_end", "start_card", "play", "sleep_cell", "turn")


def fill(env: Any, agent: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(glob, act)`` of ``agent``'s (default: the seat to act) observation; NaN-filled
    first, so an entry ``fill`` leaves unwritten shows."""
    g = env.game
    obs = env.observe(agent or env.agent_selection)["observation"]
    G, F = FX.dims(g)
    glob = np.full(G, np.nan, np.float32)
    act = np.full((F, g.num_actions), np.nan, np.float32)
    FX.fill(obs, g.cfg, glob, act)
    return glob, act


def positions(options: dict, seed: int, games: int = 2) -> list[Any]:
    """Clones of every position of ``games`` random games (random.Random legal moves; a turn
    draws 9 times in 10, so the games last and reach the special toy cards and discards)."""
    rng = random.Random(seed)
    out = []
    for k in range(games):
        env = card_envs.make_raw(MANIFEST.env_id, **options)
        env.reset(seed=seed * 100 + k)
        draw = env.game.B + A_DRAW
        while not env.terminations[env.agent_selection]:
            out.append(env.clone())
            legal = env.legal_actions()
            env.step(draw if draw in legal and rng.random() < 0.9 else rng.choice(legal))
    return out


_CACHE: dict[int, list[Any]] = {}


def cached(case: int) -> list[Any]:
    if case not in _CACHE:
        _CACHE[case] = positions(CASES[case], 7 + case)
    return _CACHE[case]


def phase(env: Any) -> str:
    return env.game.phase_name(env.state_array)


def sample(case: int, phases: tuple[str, ...], per_phase: int) -> list[Any]:
    """Up to ``per_phase`` positions in each of ``phases`` (spread over the games)."""
    by: dict[str, list[Any]] = {}
    for env in cached(case):
        by.setdefault(phase(env), []).append(env)
    out = []
    for p in phases:
        got = by.get(p, [])
        step = max(1, len(got) // per_phase)
        out += got[::step][:per_phase]
    return out


# --- engine facts -------------------------------------------------------------------------
def facts(before: Any, after: Any, seat: int, cell: int) -> dict[str, float]:
    """What the engine says about the box holding ``cell`` after the action (and the score
    changes), scaled as the features are."""
    g = before.game
    C, n = g.cols, g.num_players
    b0, b1 = boxes(g, before.state_array), boxes(g, after.state_array)
    box = next(b for b in b1 if (cell // C, cell % C) in b["cells"])
    cards = g.arr(after.state_array, "cell", g.T)
    members = {(r, c) for r, c in box["cells"] if cards[r * C + c] > 0}
    merged = [b for b in b0 if {(r, c) for r, c in b["cells"]} <= set(box["cells"])]
    st = after.state_array.copy()
    root = find(st, g.cfg, cell)
    p0, p1 = g.outcome(before.state_array)[0], g.outcome(after.state_array)[0]
    others = [q for q in range(n) if q != seat]
    mine = sum(box["cats"][seat])
    theirs = sum(sum(box["cats"][q]) for q in others) + box["princesses"]
    return {
        "size": len(members) / 10, "value": box["value"] / 10,
        "gain": (box["value"] - sum(b["value"] for b in merged)) / 5,
        "open": st[g.lay["front"] + root] / 4,
        "closes": (sum(b["closed"] for b in b1) - sum(b["closed"] for b in b0)) / 2,
        "mine": mine / 5, "others": theirs / 5,
        "allowed": float(cat_allowed(st, g.cfg, seat, root)),
        "points": (p1[seat] - p0[seat]) / 5,
        "opp_points": (max(p1[others]) - max(p0[others])) / 5,
        "joins_boxes": len(merged),
    }


def card_faces(g: Any, cid: int) -> tuple[list[int], int]:
    """(toys, sprayers) of card ``cid``."""
    tb = CF_TABLE + cid * FIELDS
    return [int(g.cfg[tb + F_BALL + k]) for k in range(3)], int(g.cfg[tb + F_SPRAY])


def check_direct(env: Any, a: int, col: np.ndarray) -> None:
    """Action ``a`` (a DIRECT phase) stepped on a clone against its feature column."""
    g = env.game
    seat = env.possible_agents.index(env.agent_selection)
    st = env.state_array
    T, B, C = g.T, g.B, g.cols
    ph = phase(env)
    f = dict(zip(NAMES, col.tolist(), strict=True))
    after = env.clone()
    after.step(a)
    if a >= B and ph == "cat":  # skip
        assert not np.any(col[1:])
        return
    if ph in ("rotation", "start_rotation", "sleep_dir"):
        cell = int(st[S_SELCELL])
    else:
        cell = a - T if T <= a < B else a
    e = facts(env, after, seat, cell)
    joined = e.pop("joins_boxes")
    if ph in ("rotation", "start_rotation", "toy_cell"):
        cid = {"toy_cell": int(st[S_TOY]), "start_rotation": g.nb + int(st[S_SELSTART]),
               "rotation": g.hand(st, seat)[int(st[S_SEL])]}[ph]
        assert f["joins"] == pytest.approx(joined / 2)
        nxt = [x for x in after.legal_actions() if T <= x < B] if phase(after) == "cat" else []
        assert f["cat_slots"] == pytest.approx(len(nxt) / 2)
        assert f["rot"] == (0 if ph == "toy_cell" else a - B - A_ROT)
    else:
        assert f["joins"] == 0 and f["cat_slots"] == 0 and f["rot"] == 0
        cid = int(st[S_TOY]) if ph == "toy_slot" else -1
    toys = card_faces(g, cid)[0] if cid >= 0 else [0, 0, 0]
    box = next(b for b in boxes(g, after.state_array) if (cell // C, cell % C) in b["cells"])
    lead = max(box["toys"])
    assert f["toys"] == pytest.approx(sum(toys) / 3)
    assert f["match"] == pytest.approx(
        max(t for t, bt in zip(toys, box["toys"], strict=True) if bt == lead) / 3)
    for k, v in e.items():
        assert f[k] == pytest.approx(v, abs=1e-6), (ph, g.action_to_str(a), k)
    r, c = divmod(cell, C)
    half = 0.5 if T <= a < B else 0.0
    assert f["row"] == pytest.approx((r + half) / (g.rows - 1))
    assert f["col"] == pytest.approx(c / (C - 1))


# --- tests --------------------------------------------------------------------------------
def test_names_and_dims() -> None:
    assert FX.ACTION_FEATURES[0] == "legal"
    assert len(set(FX.ACTION_FEATURES)) == len(FX.ACTION_FEATURES)
    assert len(set(FX.GLOBAL_FEATURES)) == len(FX.GLOBAL_FEATURES)
    for options in CASES:
        g = card_envs.make_raw(MANIFEST.env_id, **options).game
        assert FX.dims(g) == (len(FX.GLOBAL_FEATURES), len(FX.ACTION_FEATURES))


@pytest.mark.parametrize("case", range(len(CASES)), ids=IDS)
def test_legal_is_the_action_mask(case: int) -> None:
    """Every position of two random games: ``legal`` = the mask of the seat to act, every
    entry written, illegal actions all 0, and nothing legal for a seat not to act."""
    for env in cached(case):
        glob, act = fill(env)
        assert not np.isnan(glob).any() and not np.isnan(act).any()
        mask = env.observe(env.agent_selection)["action_mask"]
        assert np.array_equal(act[0], mask), phase(env)
        assert not act[:, mask == 0].any()
        assert np.abs(act).max() <= 4 and np.abs(glob).max() <= 4
        other = next(a for a in env.possible_agents if a != env.agent_selection)
        glob2, act2 = fill(env, other)
        assert not act2.any() and not np.isnan(glob2).any() and glob2[COL_TO_ACT] == 0



def test_random_play_reaches_every_phase() -> None:
    """The positions the tests use cover every phase with a choice, across the cases."""
    seen = Counter(phase(env) for case in range(len(CASES)) for env in cached(case))
    assert set(seen) == set(PHASES) - {"end"}, seen


def test_direct_actions_match_the_engine() -> None:
    """Each legal action of the phases where one thing happens, stepped on a clone, in every
    case: the target box, the boxes closed, the cats, the cat rule, the next cat step and the
    score changes are the engine's; every feature takes a non-zero value somewhere."""
    checked: Counter = Counter()
    nonzero: set[str] = set()
    for case in range(len(CASES)):
        for env in sample(case, DIRECT, 20):
            _, act = fill(env)
            for a in env.legal_actions():
                check_direct(env, a, act[:, a])
                checked[phase(env)] += 1
                nonzero |= {NAMES[k] for k in np.flatnonzero(act[:, a])}
    assert set(checked) == set(DIRECT), checked
    assert nonzero == set(NAMES), set(NAMES) - nonzero


@pytest.mark.parametrize("case", range(len(CASES)), ids=IDS)
def test_choices_report_their_best_follow_up(case: int) -> None:
    """A choice whose details come next reports the features of one of its legal follow-ups
    with the most ``points`` (its ``points`` is their maximum); a draw reports nothing."""
    g = cached(case)[0].game
    P = COL["points"]
    for env in sample(case, CHOICE, 8):
        _, act = fill(env)
        for a in env.legal_actions():
            if a == g.B + A_DRAW:
                assert not act[1:, a].any()
                continue
            after = env.clone()
            after.step(a)
            _, nxt = fill(after)
            follow = nxt[:, after.legal_actions()]
            best = follow[P].max()
            assert act[P, a] == pytest.approx(best), (phase(env), g.action_to_str(a))
            top = follow[:, np.isclose(follow[P], best)]
            assert any(np.allclose(act[1:, a], top[1:, j]) for j in range(top.shape[1])), \
                (phase(env), g.action_to_str(a))


def test_discard_pass_and_skip() -> None:
    """A discard reports the card's toys only; pass and skip report nothing."""
    discards = 0
    for case in range(len(CASES)):
        g = cached(case)[0].game
        for env in sample(case, ("discard", "pass", "cat"), 10):
            _, act = fill(env)
            seat = env.possible_agents.index(env.agent_selection)
            for a in env.legal_actions():
                if phase(env) == "discard":
                    cid = g.hand(env.state_array, seat)[a - g.B - A_HAND]
                    toys = sum(card_faces(g, cid)[0]) if cid < g.nc else 0
                    assert act[COL["toys"], a] == pytest.approx(toys / 3)
                    assert not np.delete(act[:, a], [0, COL["toys"]]).any()
                    discards += 1
                elif a >= g.B:
                    assert not act[1:, a].any()
    assert discards


@pytest.mark.parametrize("case", range(len(CASES)), ids=IDS)
def test_globals_match_the_engine(case: int) -> None:
    """The global features against the engine's scores, boxes and move queries."""
    glob_names = {name: k for k, name in enumerate(FX.GLOBAL_FEATURES)}
    for env in cached(case)[::10]:
        g, st = env.game, env.state_array
        seat = env.possible_agents.index(env.agent_selection)
        glob, _ = fill(env)
        v = dict(zip(FX.GLOBAL_FEATURES, glob.tolist(), strict=True))
        pts = g.outcome(st)[0]
        others = [q for q in range(g.num_players) if q != seat]
        assert v["points"] == pytest.approx(pts[seat] / 10)
        assert v["best_other"] == pytest.approx(max(pts[others]) / 10)
        assert v["lead"] == pytest.approx((pts[seat] - max(pts[others])) / 10, abs=1e-6)
        bx = boxes(g, st)
        assert v["boxes"] == pytest.approx(len(bx) / 30)
        assert v["closed_boxes"] == pytest.approx(sum(b["closed"] for b in bx) / 20)
        assert v["my_boxes"] == pytest.approx(sum(sum(b["cats"][seat]) > 0 for b in bx) / 5)
        s2 = st.copy()
        free = sum(bool(toy_slot_ok(s2, g.cfg, seat, s)) for s in range(g.S))
        assert v["free_slots"] == pytest.approx(free / 10)
        frontier = g.arr(s2, "flist", int(s2[S_FRONTN]))
        assert v["frontier"] == pytest.approx(len(frontier) / 20)
        sleep = sum(bool(sleep_cell_ok(s2, g.cfg, seat, int(i))) for i in frontier)
        assert v["sleep_cells"] == pytest.approx(sleep / 20)
        sd = env.state_dict()
        assert v["supply"] == pytest.approx(sd["supplies"][seat] / 5)
        assert v["hand"] == pytest.approx(len(sd["hands"][seat]) / 3)
        assert v["pile"] == pytest.approx(len(sd["draw_pile"]) / g.lay["pilemax"])
        assert v["end"] == sd["end_triggered"] and v["to_act"] == 1
        onehot = glob[glob_names["phase_" + PHASES[0]]:]
        assert onehot.tolist() == [float(p == sd["phase"]) for p in PHASES]


@pytest.mark.parametrize("case", range(len(CASES)), ids=IDS)
def test_unchanged_when_hidden_information_is_redrawn(case: int) -> None:
    """``env.resample(seat)`` redraws what the seat cannot know: its features stay."""
    for k, env in enumerate(cached(case)[::20]):
        for agent in (env.agent_selection, env.possible_agents[-1]):
            glob, act = fill(env, agent)
            for j in range(2):
                other = env.resample(agent, rng=k * 10 + j)
                glob2, act2 = fill(other, agent)
                assert np.array_equal(glob, glob2) and np.array_equal(act, act2)


@pytest.mark.parametrize("case", [0, 2], ids=["basic", "small5"])
def test_batched_driver(case: int) -> None:
    """``Features.compute`` on a VectorEnv batch: per-row ``fill``, ``split`` gives the
    observations back, ``legal`` is the batch's action mask."""
    g = card_envs.make_raw(MANIFEST.env_id, **CASES[case]).game
    fx = Features(g)
    vec = VectorEnv(g, 256, seed=5)
    vec.reset()
    G, F = FX.dims(g)
    for _ in range(3):
        for _ in range(15):
            vec.step(vec.sample_actions())
        obs = vec.observations.copy()
        x = fx.compute(obs)
        o, glob, act = fx.split(x)
        assert np.array_equal(o, obs.astype(np.float32))
        assert np.array_equal(act[:, 0], vec.action_masks)
        for i in range(0, 256, 5):
            gl = np.empty(G, np.float32)
            ac = np.empty((F, g.num_actions), np.float32)
            FX.fill(obs[i], g.cfg, gl, ac)
            assert np.array_equal(glob[i], gl) and np.array_equal(act[i], ac)
        assert np.array_equal(fx.compute(obs[:10]), x[:10])  # the serial driver


def test_potential_is_the_points_lead() -> None:
    """The shaping potential: the observer's points now minus the best other seat's, / 10,
    from the engine's own scoring; 0 at the deal; rows of another length are refused."""
    env = card_envs.make_raw(MANIFEST.env_id)
    env.reset(seed=0)
    obs = np.stack([env.observe(a)["observation"] for a in env.possible_agents])
    np.testing.assert_array_equal(FX.potential(obs, 2), np.zeros(2))
    lead_seen = False
    for env in cached(0)[::7]:
        pts = env.game.outcome(env.state_array)[0]
        obs = np.stack([env.observe(a)["observation"] for a in env.possible_agents])
        want = [(pts[s] - max(pts[q] for q in range(2) if q != s)) / 10 for s in range(2)]
        np.testing.assert_allclose(FX.potential(obs, 2), want, atol=1e-6)
        lead_seen |= any(w != 0 for w in want)
    assert lead_seen
    with pytest.raises(ValueError, match="observations"):
        FX.potential(obs[:, :-1], 2)
    with pytest.raises(ValueError, match="observations"):
        FX.potential(obs, 3)
