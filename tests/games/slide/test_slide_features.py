"""Slide's action-aligned features (``card_envs.slide.features``) against the engine.

Every feature is a fact about the own grid: the tests step each legal action on a clone of the
raw env and compare the feature with the state (``state_dict()``) after it, the engine's final
scoring (``game.outcome``) and the next action mask, with the push and scoring references of
``tests/games/slide/slide_ref.py`` (written from the rules, not from the kernels). Positions
come from random legal play (``random.Random``) at every depth of whole games, in every variant
of the manifest's ``test_cases``."""

from __future__ import annotations

import random
from collections.abc import Iterator

import numpy as np
import pytest

import card_envs
from card_envs.core.features import Features
from card_envs.core.vector import VectorEnv
from card_envs.slide.features import ACTION_FEATURES, GLOBAL_FEATURES, dims, fill, potential
from card_envs.slide.layout import COPIES, NUM_ACTIONS, PICK0, ROUNDS
from card_envs.slide.manifest import MANIFEST
from slide_ref import (
    ENV_ID,
    edge_end,
    load_pick_state,
    pick_action,
    ref_push,
    ref_score,
    ref_sides,
)

AF = {name: i for i, name in enumerate(ACTION_FEATURES)}
GF = {name: i for i, name in enumerate(GLOBAL_FEATURES)}
VARIANTS = [dict(c) for c in MANIFEST.test_cases]
IDS = [",".join(f"{k}={v}" for k, v in c.items()) or "default" for c in VARIANTS]
LEFT, RIGHT, TOP, BOTTOM = 0, 1, 2, 3


def feats(env, agent: str) -> tuple[np.ndarray, np.ndarray]:
    """``fill`` of ``agent``'s observation, into NaN-filled buffers (every entry must be
    written)."""
    G, F = dims(env.game)
    glob = np.full(G, np.nan, np.float32)
    act = np.full((F, NUM_ACTIONS), np.nan, np.float32)
    fill(env.observe(agent)["observation"], env.game.cfg, glob, act)
    assert np.isfinite(glob).all() and np.isfinite(act).all()
    return glob, act


def positions(opts: dict, games: int, seed: int, keep: float = 1.0) -> Iterator:
    """Raw envs at a share ``keep`` of the decisions of ``games`` random games (every depth;
    the last round always), not to be stepped by the caller."""
    rnd = random.Random(seed)
    for g in range(games):
        env = card_envs.make_raw(ENV_ID, **opts)
        env.reset(seed=seed * 100 + g)
        while not all(env.terminations.values()):
            if rnd.random() < keep or env.state_dict()["round"] == ROUNDS - 1:
                yield env
            env.step(rnd.choice(env.legal_actions()))


def up_grid(grid, face) -> list[list[int]]:
    """The grid with the face-down cards taken out (0)."""
    return [[v if f else 0 for v, f in zip(rg, rf)] for rg, rf in zip(grid, face)]


def up_points(grid, face) -> int:
    """Face-up points: the rules' final scoring of the face-up cards alone."""
    return ref_score(up_grid(grid, face))[0]


def nbs(r: int, c: int) -> list[tuple[int, int]]:
    return [(a, b) for a, b in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1))
            if 0 <= a < 4 and 0 <= b < 4]


def paired(grid, face) -> set[tuple[int, int]]:
    """Face-up cards with an equal face-up orthogonal neighbour."""
    g = up_grid(grid, face)
    return {(r, c) for r in range(4) for c in range(4)
            if g[r][c] and any(g[a][b] == g[r][c] for a, b in nbs(r, c))}


def around(grid, face, r: int, c: int) -> tuple[int, int]:
    """(face-down, face-up) orthogonal neighbours of ``(r, c)``."""
    cells = [(grid[a][b], face[a][b]) for a, b in nbs(r, c) if grid[a][b]]
    return sum(not f for _, f in cells), sum(bool(f) for _, f in cells)


def gap_of(grid) -> int:
    return next(r * 4 + c for r in range(4) for c in range(4) if grid[r][c] == 0)


# --------------------------------------------------------------------------------------------
def test_names_and_dims() -> None:
    assert ACTION_FEATURES[0] == "legal" and len(set(ACTION_FEATURES)) == len(ACTION_FEATURES)
    for opts in VARIANTS:
        game = card_envs.make_raw(ENV_ID, **opts).game
        assert dims(game) == (len(GLOBAL_FEATURES), len(ACTION_FEATURES))
        fx = Features(game)
        assert fx.width == game.obs_size + len(GLOBAL_FEATURES) + len(ACTION_FEATURES) * 56


@pytest.mark.parametrize("opts", VARIANTS, ids=IDS)
def test_legal_is_the_action_mask_and_illegal_rows_are_zero(opts: dict) -> None:
    seen = 0
    for env in positions(opts, games=3, seed=1, keep=0.5):
        for agent in env.possible_agents:
            _, act = feats(env, agent)
            mask = env.observe(agent)["action_mask"]
            np.testing.assert_array_equal(act[AF["legal"]], mask.astype(np.float32))
            assert not act[:, mask == 0].any()
            seen += int(mask.any())
    assert seen > 40


@pytest.mark.parametrize("opts", VARIANTS, ids=IDS)
def test_global_features_are_the_position(opts: dict) -> None:
    for env in positions(opts, games=2, seed=2, keep=0.3):
        sd = env.state_dict()
        n = len(sd["grids"])
        for seat, agent in enumerate(env.possible_agents):
            glob, _ = feats(env, agent)
            g, f = sd["grids"][seat], sd["face_up"][seat]
            ups = sum(bool(x) for row in f for x in row)
            downs = sum(v > 0 and not x for rg, rf in zip(g, f) for v, x in zip(rg, rf))
            others = [up_points(sd["grids"][q], sd["face_up"][q]) for q in range(n) if q != seat]
            want = {"points": up_points(g, f) / 50, "paired": len(paired(g, f)) / 16,
                    "face_up": ups / 16, "face_down": downs / 16, "round": sd["round"] / 15,
                    "reveal_phase": sd["phase"] == "reveal", "pick_phase": sd["phase"] == "pick",
                    "to_act": sd["current_player"] == seat,
                    "opp_points_min": min(others) / 50,
                    "opp_points_mean": sum(others) / len(others) / 50,
                    "middle": len(sd["middle"]) / 6}
            for name, v in want.items():
                assert glob[GF[name]] == pytest.approx(float(v), abs=1e-6), name


@pytest.mark.parametrize("opts", VARIANTS, ids=IDS)
def test_pick_features_against_the_engine(opts: dict) -> None:
    checked = final = 0
    for env in positions(opts, games=2, seed=3, keep=0.35):
        sd = env.state_dict()
        if sd["phase"] != "pick":
            continue
        seat = sd["current_player"]
        agent = env.agent_selection
        _, act = feats(env, agent)
        grid, face = sd["grids"][seat], sd["face_up"][seat]
        e = gap_of(grid)
        er, ec = divmod(e, 4)
        before = paired(grid, face)
        pts0 = up_points(grid, face)
        index = [[r * 4 + c + 1 if grid[r][c] else 0 for c in range(4)] for r in range(4)]
        for a in env.legal_actions():
            v, side = (a - PICK0) // 4 + 1, (a - PICK0) % 4
            x = {name: float(act[i, a]) for name, i in AF.items()}
            c = env.clone()
            c.step(a)
            after = c.state_dict()
            g2, f2 = after["grids"][seat], after["face_up"][seat]
            assert ref_push(grid, face, e, side, v) == (g2, f2)  # the engine's push
            src, _ = ref_push(index, [[True] * 4] * 4, e, side, -1)  # where each card came from
            pts = up_points(g2, f2)
            assert x["legal"] == 1 and x["pick"] == 1 and x["reveal"] == 0
            assert x["points"] * 50 == pytest.approx(pts)
            assert x["delta"] * 10 == pytest.approx(pts - pts0)
            now = paired(g2, f2)
            assert x["paired"] * 16 == pytest.approx(len(now))
            came = {(r, cc): divmod(src[r][cc] - 1, 4) if src[r][cc] > 0 else None
                    for r in range(4) for cc in range(4)}
            formed = sum(1 for p in now if came[p] is None or came[p] not in before)
            broken = sum(1 for p, q in came.items() if q in before and p not in now)
            assert x["formed"] * 4 == pytest.approx(formed)
            assert x["broken"] * 4 == pytest.approx(broken)
            assert x["value"] * 10 == pytest.approx(v)
            lr, lc = edge_end(e, side)
            assert g2[lr][lc] == v and f2[lr][lc]
            joins = any(g2[i][j] == v and f2[i][j] for i, j in nbs(lr, lc))
            assert x["joins"] == float(joins)
            assert x["left"] * 5 == pytest.approx(after["middle"].count(v))
            visible = sum(g[i][j] == v and fu[i][j] for g, fu in zip(sd["grids"], sd["face_up"])
                          for i in range(4) for j in range(4)) + sd["middle"].count(v)
            assert x["unseen"] * 10 == pytest.approx(COPIES - visible)
            down, up = around(g2, f2, lr, lc)
            assert (x["down_nb"] * 4, x["up_nb"] * 4) == pytest.approx((down, up))
            shifted = {LEFT: ec, RIGHT: 3 - ec, TOP: er, BOTTOM: 3 - er}[side]
            assert x["shifted"] * 3 == pytest.approx(shifted)
            assert x["sides"] == x["line_up"] == x["line_down"] == 0
            if not any(gv > 0 and not fv for rg, rf in zip(g2, f2) for gv, fv in zip(rg, rf)):
                # the grid is final: "points" is what the engine scores at the end
                assert x["points"] * 50 == pytest.approx(c.game.outcome(c.state_array)[0][seat])
                final += 1
            checked += 1
    assert checked > 30 and final > 3


@pytest.mark.parametrize("opts", VARIANTS, ids=IDS)
def test_reveal_features_against_the_engine(opts: dict) -> None:
    rnd = random.Random(4)
    checked = 0
    for env in positions(opts, games=2, seed=4, keep=0.25):
        sd = env.state_dict()
        if sd["phase"] != "reveal":
            continue
        seat = sd["current_player"]
        glob, act = feats(env, env.agent_selection)
        pts0 = up_points(sd["grids"][seat], sd["face_up"][seat])
        for s in rnd.sample(env.legal_actions(), min(3, len(env.legal_actions()))):
            x = {name: float(act[i, s]) for name, i in AF.items()}
            c = env.clone()
            c.step(s)
            while c.state_dict()["phase"] == "reveal":  # the other seats reveal
                c.step(rnd.choice(c.legal_actions()))
            after = c.state_dict()
            g, f = after["grids"][seat], after["face_up"][seat]
            r, cc = divmod(s, 4)
            assert g[r][cc] == 0  # the reveal opened s
            assert x["legal"] == x["reveal"] == 1 and x["pick"] == 0
            assert x["points"] * 50 == pytest.approx(up_points(g, f)) == pts0
            assert x["paired"] == glob[GF["paired"]] == pytest.approx(len(paired(g, f)) / 16)
            assert x["delta"] == x["formed"] == x["broken"] == x["value"] == x["joins"] == 0
            assert x["left"] == x["unseen"] == x["shifted"] == 0
            down, up = around(g, f, r, cc)
            assert (x["down_nb"] * 4, x["up_nb"] * 4) == pytest.approx((down, up))
            line = [(r, j) for j in range(4) if j != cc] + [(i, cc) for i in range(4) if i != r]
            assert x["line_up"] * 6 == pytest.approx(sum(bool(f[i][j]) for i, j in line))
            assert x["line_down"] * 6 == pytest.approx(
                sum(g[i][j] > 0 and not f[i][j] for i, j in line))
            while c.state_dict()["current_player"] != seat:  # earlier seats pick
                c.step(rnd.choice(c.legal_actions()))
            sides = {(a - PICK0) % 4 for a in c.legal_actions()}  # the engine's own pick mask
            assert x["sides"] * 4 == pytest.approx(len(sides))
            assert sides == set(ref_sides(s))
            checked += 1
    assert checked > 20


def test_a_hand_made_pick() -> None:
    """The rules' example push (row ``[a b _ d]`` from the left with a 7 gives ``[7 a b d]``)
    on a grid with one face-down card (the 3 at (2,0)); the numbers worked out by hand."""
    own = [[7, 1, 4, 4], [2, 9, 0, 5], [3, 6, 8, 8], [10, 2, 3, 1]]
    face = [[v > 0 for v in row] for row in own]
    face[2][0] = False
    other = [[0, 5, 6, 7], [1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 1, 2]]
    oface = [[v > 0 for v in row] for row in other]
    oface[3][3] = False
    env = load_pick_state(2, [own, other], [face, oface], [7, 9], 14, 0, 0, [6, 0])
    glob, act = feats(env, env.agent_selection)
    assert glob[GF["points"]] * 50 == pytest.approx(46)  # 49 minus the face-down 3
    assert glob[GF["paired"]] * 16 == pytest.approx(4)   # the 4s and the 8s
    want = {  # side: points, formed, broken, joins, shifted, (down_nb, up_nb)
        LEFT: (39, 2, 0, 1, 2, (1, 2)),    # [7 2 9 5]: the 7 pairs the 7 above it
        RIGHT: (53, 0, 0, 0, 1, (0, 3)),   # [2 9 5 7]
        TOP: (61, 0, 2, 0, 1, (0, 3)),     # column 2 [7 4 8 3]: the 4s part
        BOTTOM: (69, 0, 2, 0, 2, (0, 3)),  # column 2 [4 8 3 7]: the 8s part
    }
    for side, (pts, formed, broken, joins, shifted, nb) in want.items():
        a = pick_action(7, side)
        row = {name: float(act[i, a]) for name, i in AF.items()}
        assert row["legal"] == 1
        assert row["points"] * 50 == pytest.approx(pts)
        assert row["delta"] * 10 == pytest.approx(pts - 46)
        assert (row["formed"] * 4, row["broken"] * 4) == pytest.approx((formed, broken))
        assert row["joins"] == joins and row["shifted"] * 3 == pytest.approx(shifted)
        assert (row["down_nb"] * 4, row["up_nb"] * 4) == pytest.approx(nb)
        assert row["left"] == 0 and row["unseen"] * 10 == pytest.approx(10 - 4)  # 4 sevens seen


@pytest.mark.parametrize("opts", VARIANTS, ids=IDS)
def test_features_ignore_what_the_seat_cannot_know(opts: dict) -> None:
    rng = np.random.default_rng(5)
    n = 0
    for env in positions(opts, games=2, seed=5, keep=0.2):
        for seat in {env.possible_agents.index(env.agent_selection), 0}:
            agent = env.possible_agents[seat]
            other = env.resample(seat, rng)
            g1, a1 = feats(env, agent)
            g2, a2 = feats(other, agent)
            np.testing.assert_array_equal(g1, g2)
            np.testing.assert_array_equal(a1, a2)
            o1, o2 = env.observe(agent)["observation"], other.observe(agent)["observation"]
            np.testing.assert_array_equal(potential(o1[None], len(env.possible_agents)),
                                          potential(o2[None], len(env.possible_agents)))
            n += 1
    assert n > 20


@pytest.mark.parametrize("opts", VARIANTS, ids=IDS)
def test_batched_driver_equals_fill(opts: dict) -> None:
    game = card_envs.make_raw(ENV_ID, **opts).game
    vec = VectorEnv(game, 256, seed=7)
    fx = Features(game)
    G, F = dims(game)
    for k in range(3):
        for _ in range(5 + 7 * k):
            vec.step(vec.sample_actions())
        x = fx.compute(vec.observations)
        assert x.shape == (256, fx.width) and x.dtype == np.float32
        obs, glob, act = fx.split(x)
        np.testing.assert_array_equal(obs, vec.observations.astype(np.float32))
        np.testing.assert_array_equal(act[:, 0], vec.action_masks.astype(np.float32))
        for i in range(0, 256, 17):
            g1 = np.empty(G, np.float32)
            a1 = np.empty((F, NUM_ACTIONS), np.float32)
            fill(vec.observations[i], game.cfg, g1, a1)
            np.testing.assert_array_equal(glob[i], g1)
            np.testing.assert_array_equal(act[i], a1)
        small = fx.compute(vec.observations[:8])  # the serial driver
        np.testing.assert_array_equal(small, x[:8])
        np.testing.assert_array_equal(fx.compute(vec.observations[3]), x[3])


@pytest.mark.parametrize("opts", VARIANTS, ids=IDS)
def test_potential_is_the_face_up_points_gap(opts: dict) -> None:
    n = opts.get("num_players", 2)
    env = card_envs.make_raw(ENV_ID, **opts)
    env.reset(seed=0)
    obs = np.stack([env.observe(a)["observation"] for a in env.possible_agents])
    np.testing.assert_array_equal(potential(obs, n), np.zeros(n))  # the deal: all face down
    for env in positions(opts, games=1, seed=6, keep=0.2):
        sd = env.state_dict()
        obs = np.stack([env.observe(a)["observation"] for a in env.possible_agents])
        pts = [up_points(g, f) for g, f in zip(sd["grids"], sd["face_up"])]
        want = [(min(p for q, p in enumerate(pts) if q != s) - pts[s]) / 20 for s in range(n)]
        np.testing.assert_allclose(potential(obs, n), want)
    with pytest.raises(ValueError, match="observations"):
        potential(obs[:, :-1], n)
    with pytest.raises(ValueError, match="observations"):
        potential(obs, n + 1)
