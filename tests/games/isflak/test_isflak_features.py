"""Isflak's action-aligned features (``card_envs.isflak.features``) against the engine.

The cell features are checked against a slow reference computed in plain Python from the
engine's state dict (not from the observation the kernel reads); the move features also against
the state after stepping the move on a clone of the raw env (the card it takes into the pile,
the reach from the target on the board after the move). Positions come from random legal play
(``random.Random``) at every depth, in every variant of the manifest's ``test_cases``."""

from __future__ import annotations

import random
from collections.abc import Iterator

import numpy as np
import pytest

import card_envs
from card_envs.core.features import Features
from card_envs.core.vector import VectorEnv
from card_envs.isflak.features import (
    ACTION_FEATURES,
    CELL_FEATURES,
    dims,
    fill,
    potential,
)
from card_envs.isflak.manifest import MANIFEST
from isflak_ref import COLS, DIRS, ENV_ID, MAX_DIST, MOVE0, decode_move, on_border, pts

AF = {name: i for i, name in enumerate(ACTION_FEATURES)}
NC = len(CELL_FEATURES)
VARIANTS = [dict(c) for c in MANIFEST.test_cases]
IDS = [",".join(f"{k}={v}" for k, v in c.items()) or "default" for c in VARIANTS]


class Board:
    """The board of a state dict: card points, penguin owners, rays (slow reference)."""

    def __init__(self, sd: dict) -> None:
        points = sd["options"]["card_points"]
        self.pts = {(r, c): -1 if code is None else pts(code, points)
                    for r, row in enumerate(sd["grid"]) for c, code in enumerate(row)}
        self.owner = {tuple(rc): seat for seat, pens in enumerate(sd["penguins"])
                      for rc in pens if rc is not None}

    def free(self, rc: tuple[int, int]) -> bool:
        return rc in self.pts and self.pts[rc] >= 0 and rc not in self.owner

    @staticmethod
    def ray(rc: tuple[int, int], d: int) -> Iterator[tuple[int, int]]:
        for s in range(1, MAX_DIST + 1):
            yield rc[0] + DIRS[d][0] * s, rc[1] + DIRS[d][1] * s

    def reach_dir(self, rc: tuple[int, int], d: int) -> list[int]:
        got = []
        for t in self.ray(rc, d):
            if not self.free(t):
                break
            got.append(self.pts[t])
        return got

    def reach(self, rc: tuple[int, int]) -> tuple[int, int, int]:
        """(sum, best, count) of the points of the cells reachable from ``rc``."""
        got = [p for d in range(8) for p in self.reach_dir(rc, d)]
        return sum(got), max(got, default=0), len(got)

    def seen_by(self, rc: tuple[int, int], seat: int) -> tuple[int, int, int, int]:
        """Penguins of ``seat`` / of the others that could move to ``rc`` now, and the points
        beyond ``rc`` (opposite direction) each group would stop reaching with ``rc`` taken."""
        own = opp = own_cut = opp_cut = 0
        for d in range(8):
            for t in self.ray(rc, d):
                if self.free(t):
                    continue
                if t in self.owner:
                    cut = sum(self.reach_dir(rc, (d + 4) % 8))
                    if self.owner[t] == seat:
                        own, own_cut = own + 1, own_cut + cut
                    else:
                        opp, opp_cut = opp + 1, opp_cut + cut
                break
        return own, opp, own_cut, opp_cut

    def cell(self, rc: tuple[int, int], seat: int) -> dict[str, float]:
        """The 11 cell features of ``rc`` seen by ``seat``, unscaled."""
        tot, best, cnt = self.reach(rc)
        own, opp, own_cut, opp_cut = self.seen_by(rc, seat)
        return {"pts": self.pts[rc], "free": self.free(rc), "gap": self.pts[rc] < 0,
                "reach": tot, "best": best, "moves": cnt, "own": own, "opp": opp,
                "border": on_border(*rc), "own_cut": own_cut, "opp_cut": opp_cut}


SCALE = {"pts": 3, "free": 1, "gap": 1, "reach": 10, "best": 3, "moves": 10, "own": 2,
         "opp": 2, "border": 1, "own_cut": 10, "opp_cut": 10, "src_pts": 3, "src_reach": 10,
         "dist": MAX_DIST, "move": 1, "place": 1, "legal": 1}


def feats(env, agent: str) -> tuple[np.ndarray, np.ndarray]:
    """``fill`` of ``agent``'s observation into NaN-filled buffers (every entry written)."""
    G, F = dims(env.game)
    glob = np.full(G, np.nan, np.float32)
    act = np.full((F, env.game.num_actions), np.nan, np.float32)
    fill(env.observe(agent)["observation"], env.game.cfg, glob, act)
    assert np.isfinite(glob).all() and np.isfinite(act).all()
    return glob, act


def positions(opts: dict, games: int, seed: int, keep: float = 1.0) -> Iterator:
    """Raw envs at a share ``keep`` of the decisions of ``games`` random games."""
    rnd = random.Random(seed)
    for g in range(games):
        env = card_envs.make_raw(ENV_ID, **opts)
        env.reset(seed=seed * 100 + g)
        while not all(env.terminations.values()):
            if rnd.random() < keep:
                yield env
            env.step(rnd.choice(env.legal_actions()))


def rc_of(cell: int) -> tuple[int, int]:
    return divmod(cell, COLS)


# --------------------------------------------------------------------------------------------
def test_names_and_dims() -> None:
    assert ACTION_FEATURES[0] == "legal" and len(set(ACTION_FEATURES)) == len(ACTION_FEATURES)
    for opts in VARIANTS:
        game = card_envs.make_raw(ENV_ID, **opts).game
        assert dims(game) == (35 * NC, len(ACTION_FEATURES))
        assert Features(game).width == game.obs_size + 35 * NC + 17 * game.num_actions


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


def test_legal_placements_are_a_superset_when_kinds_share_points() -> None:
    """With equal face and number points the observation cannot tell the kinds apart."""
    opts = {"card_points": [3, 1, 1]}
    n = 0
    for env in positions(opts, games=2, seed=2):
        if env.state_dict()["phase"] != "placement":
            continue
        _, act = feats(env, env.agent_selection)
        mask = env.observe(env.agent_selection)["action_mask"]
        assert np.all(act[AF["legal"]] >= mask) and not act[AF["legal"], MOVE0:].any()
        n += 1
    assert n == 16


@pytest.mark.parametrize("opts", VARIANTS, ids=IDS)
def test_cell_and_placement_features_equal_a_slow_reference(opts: dict) -> None:
    placements = 0
    for env in positions(opts, games=2, seed=3, keep=0.15):
        sd = env.state_dict()
        board = Board(sd)
        for seat, agent in enumerate(env.possible_agents):
            glob, act = feats(env, agent)
            for cell in range(35):
                want = board.cell(rc_of(cell), seat)
                got = glob[cell * NC:(cell + 1) * NC] * [SCALE[f] for f in CELL_FEATURES]
                np.testing.assert_allclose(got, [float(want[f]) for f in CELL_FEATURES],
                                           atol=1e-5, err_msg=f"cell {cell}")
        if sd["phase"] != "placement":
            continue
        seat = sd["current_player"]
        _, act = feats(env, env.agent_selection)
        for a in env.legal_actions():
            c = env.clone()
            c.step(a)
            after = c.state_dict()
            assert list(rc_of(a)) in after["penguins"][seat]  # the engine put it there
            want = board.cell(rc_of(a), seat)
            for f in CELL_FEATURES:
                assert act[AF[f], a] * SCALE[f] == pytest.approx(float(want[f]), abs=1e-5), f
            # a penguin on the cell does not change what it reaches
            assert act[AF["reach"], a] * 10 == pytest.approx(Board(after).reach(rc_of(a))[0])
            assert act[AF["place"], a] == 1 and act[AF["move"], a] == 0
            placements += 1
    assert placements > 10


@pytest.mark.parametrize("opts", VARIANTS, ids=IDS)
def test_move_features_against_the_engine(opts: dict) -> None:
    checked = 0
    for env in positions(opts, games=2, seed=4, keep=0.3):
        sd = env.state_dict()
        if sd["phase"] != "movement":
            continue
        seat = sd["current_player"]
        board = Board(sd)
        _, act = feats(env, env.agent_selection)
        for a in env.legal_actions():
            k, d, s = decode_move(a)
            src = tuple(sd["penguins"][seat][k])
            tgt = (src[0] + DIRS[d][0] * s, src[1] + DIRS[d][1] * s)
            x = {f: float(act[i, a]) * SCALE[f] for f, i in AF.items()}
            c = env.clone()
            c.step(a)
            after = c.state_dict()
            pile = sd["piles"][seat]
            taken = after["piles"][seat][len(pile)]  # the card the move takes
            assert taken == sd["grid"][src[0]][src[1]]
            assert x["src_pts"] == pytest.approx(pts(taken, sd["options"]["card_points"]))
            assert x["src_reach"] == pytest.approx(board.reach(src)[0])
            assert x["pts"] == pytest.approx(board.pts[tgt]) and x["free"] == 1
            if after["penguins"][seat][k] is not None:  # still on the board after the move
                assert tuple(after["penguins"][seat][k]) == tgt
                tot, best, cnt = Board(after).reach(tgt)
                assert (x["reach"], x["best"], x["moves"]) == pytest.approx((tot, best, cnt))
            want = board.cell(tgt, seat)
            for f in ("own", "opp", "own_cut", "opp_cut", "border", "gap"):
                assert x[f] == pytest.approx(float(want[f])), f
            assert x["dist"] == pytest.approx(s) and x["move"] == 1 and x["place"] == 0
            checked += 1
    assert checked > 50


@pytest.mark.parametrize("opts", VARIANTS, ids=IDS)
def test_features_ignore_a_resample(opts: dict) -> None:
    rng = np.random.default_rng(5)
    for env in positions(opts, games=1, seed=5, keep=0.2):
        seat = env.possible_agents.index(env.agent_selection)
        other = env.resample(seat, rng)
        for agent in env.possible_agents:
            for x, y in zip(feats(env, agent), feats(other, agent)):
                np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("opts", VARIANTS, ids=IDS)
def test_batched_driver_equals_fill(opts: dict) -> None:
    game = card_envs.make_raw(ENV_ID, **opts).game
    vec = VectorEnv(game, 256, seed=7)
    fx = Features(game)
    G, F = dims(game)
    for k in range(3):
        for _ in range(4 + 9 * k):
            vec.step(vec.sample_actions())
        x = fx.compute(vec.observations)
        obs, glob, act = fx.split(x)
        np.testing.assert_array_equal(obs, vec.observations.astype(np.float32))
        np.testing.assert_array_equal(act[:, 0], vec.action_masks.astype(np.float32))
        for i in range(0, 256, 17):
            g1 = np.empty(G, np.float32)
            a1 = np.empty((F, game.num_actions), np.float32)
            fill(vec.observations[i], game.cfg, g1, a1)
            np.testing.assert_array_equal(glob[i], g1)
            np.testing.assert_array_equal(act[i], a1)
        np.testing.assert_array_equal(fx.compute(vec.observations[:8]), x[:8])


@pytest.mark.parametrize("opts", VARIANTS, ids=IDS)
def test_potential_is_the_secured_points_gap(opts: dict) -> None:
    n = opts.get("num_players", 2)
    for env in positions(opts, games=1, seed=6, keep=0.2):
        sd = env.state_dict()
        board = Board(sd)
        points = sd["options"]["card_points"]
        secured = [sum(pts(code, points) for code in sd["piles"][q]) +
                   sum(board.pts[rc] for rc, o in board.owner.items() if o == q)
                   for q in range(n)]
        obs = np.stack([env.observe(a)["observation"] for a in env.possible_agents])
        want = [(secured[s] - max(v for q, v in enumerate(secured) if q != s)) / 10
                for s in range(n)]
        np.testing.assert_allclose(potential(obs, n), want)
