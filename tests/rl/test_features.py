"""Game feature modules for PPO (the numba kernels in ``card_envs.<game>.features``, their torch
modules in ``card_envs.rl.features``) and their hook in the trainer (the manifests'
``train.features``, ``ActionFeaturePolicy``).

The features are checked against slow references computed in plain Python from the engine's
state dict (not from the observation the module reads), or against the engine's own moves, on
seeded random positions at several player counts; then shapes, the fallback, a model's save /
load as an arena agent, and the shaping potentials."""

from __future__ import annotations

import dataclasses
import random
import warnings
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sb3_contrib", reason="train extra")
torch = pytest.importorskip("torch", reason="train extra")

import card_envs  # noqa: E402
from card_envs.core import registry  # noqa: E402
from card_envs.core.registry import manifest  # noqa: E402
from card_envs.isflak.features import ACTION_FEATURES, CELL_FEATURES  # noqa: E402
from card_envs.rl import trainer  # noqa: E402
from card_envs.rl.features.isflak import RayFeatures  # noqa: E402
from card_envs.rl.features.slide import PushFeatures  # noqa: E402
from card_envs.rl.policy import ActionFeaturePolicy, MaskedPolicy  # noqa: E402
from card_envs.rl.shaping import PotentialShaping, game_potential  # noqa: E402
from card_envs.slide.features import ACTION_FEATURES as SLIDE_FEATURES  # noqa: E402
from positions import random_states  # noqa: E402

DIRS = [(-1, 0), (-1, 1), (0, 1), (1, 1), (1, 0), (1, -1), (0, -1), (-1, -1)]
AF = {name: i for i, name in enumerate(ACTION_FEATURES)}
SAF = {name: i for i, name in enumerate(SLIDE_FEATURES)}


# --------------------------------------------------------------------------------------------
# Isflak: slow reference from the state dict
# --------------------------------------------------------------------------------------------
def _points(code: str | None, card_points: dict) -> int:
    if code is None:
        return -1
    rank = code[:-1]
    return card_points["ace" if rank == "A" else "face" if rank in "JQK" else "number"]


class _Board:
    def __init__(self, sd: dict) -> None:
        self.pts = {(r, c): _points(sd["grid"][r][c], sd["options"]["card_points"])
                    for r in range(5) for c in range(7)}
        self.owner = {}
        for seat, pens in enumerate(sd["penguins"]):
            for rc in pens:
                if rc is not None:
                    self.owner[tuple(rc)] = seat

    def free(self, rc: tuple[int, int]) -> bool:
        return rc in self.pts and self.pts[rc] >= 0 and rc not in self.owner

    def ray(self, rc: tuple[int, int], d: int):
        r, c = rc
        for s in range(1, 7):
            yield s, (r + DIRS[d][0] * s, c + DIRS[d][1] * s)

    def reach(self, rc: tuple[int, int]) -> tuple[int, int, int]:
        """(sum, best, count) of the points of the cells reachable from ``rc``."""
        got = []
        for d in range(8):
            for _, t in self.ray(rc, d):
                if not self.free(t):
                    break
                got.append(self.pts[t])
        return sum(got), max(got, default=0), len(got)

    def reach_dir(self, rc: tuple[int, int], d: int) -> int:
        tot = 0
        for _, t in self.ray(rc, d):
            if not self.free(t):
                break
            tot += self.pts[t]
        return tot

    def seen_by(self, rc: tuple[int, int], seat: int) -> tuple[int, int, int, int]:
        """Penguins of ``seat`` / of the others that could move to ``rc`` now, and the points
        beyond ``rc`` (opposite direction) each group would stop reaching with ``rc`` taken."""
        own = opp = own_cut = opp_cut = 0
        for d in range(8):
            for _, t in self.ray(rc, d):
                if self.free(t):
                    continue
                if t in self.owner:
                    mine = self.owner[t] == seat
                    own += mine
                    opp += not mine
                    cut = self.reach_dir(rc, (d + 4) % 8)
                    own_cut += cut if mine else 0
                    opp_cut += 0 if mine else cut
                break
        return own, opp, own_cut, opp_cut


def _random_positions(n: int, games: int, seed: int, **opts):
    """(env, obs, mask) of every decision in ``games`` random games."""
    rnd = random.Random(seed)
    for g in range(games):
        env = card_envs.make_raw("isflak_v0", num_players=n, **opts)
        env.reset(seed=seed * 100 + g)
        for _agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            yield env, obs["observation"], obs["action_mask"]
            env.step(rnd.choice(np.flatnonzero(obs["action_mask"]).tolist()))


@pytest.mark.parametrize("n,opts", [(2, {}), (3, {}), (4, {"penguins_per_player": 3}),
                                    (2, {"card_points": {"ace": 5, "face": 0, "number": 2}})])
def test_isflak_action_features_equal_a_slow_reference(n: int, opts: dict) -> None:
    checked_moves = 0
    feat = None
    for env, obs, mask in _random_positions(n, games=3, seed=n, **opts):
        if feat is None:
            feat = RayFeatures(obs.shape[0], num_players=n, num_actions=mask.shape[0])
        glob, act = (t[0].numpy() for t in feat(torch.as_tensor(obs[None])))
        assert glob.shape == (35 * len(CELL_FEATURES),) and act.shape == (mask.shape[0],
                                                                          len(ACTION_FEATURES))
        sd = env.state_dict()
        seat = sd["current_player"]
        board = _Board(sd)
        peng = feat.peng
        if sd["phase"] == "placement":
            assert np.all(act[:35, AF["legal"]] >= mask[:35])     # a superset of the mask
            assert not act[35:, AF["legal"]].any()
            for cell in range(35):
                rc = divmod(cell, 7)
                assert act[cell, AF["pts"]] * 3 == pytest.approx(board.pts[rc])
                assert act[cell, AF["place"]] == 1 and act[cell, AF["move"]] == 0
            continue
        assert not act[:35, AF["legal"]].any()
        np.testing.assert_array_equal(act[35:, AF["legal"]] > 0, mask[35:] > 0)
        for a in np.flatnonzero(mask[35:]) + 35:
            m = a - 35
            k, d, s = m // 48, (m % 48) // 6, m % 6 + 1
            src = tuple(sd["penguins"][seat][k])
            tgt = (src[0] + DIRS[d][0] * s, src[1] + DIRS[d][1] * s)
            row = act[a]
            # the points this move secures: the card on the target cell
            assert row[AF["pts"]] * 3 == pytest.approx(board.pts[tgt])
            # reach from the target on the board after the move (the source becomes a gap)
            after = _Board(sd)
            after.pts[src] = -1
            del after.owner[src]
            after.owner[tgt] = seat
            tot, best, cnt = after.reach(tgt)
            assert row[AF["reach"]] * 10 == pytest.approx(tot)
            assert row[AF["best"]] * 3 == pytest.approx(best)
            assert row[AF["moves"]] * 10 == pytest.approx(cnt)
            own, opp, own_cut, opp_cut = board.seen_by(tgt, seat)
            assert row[AF["own"]] * 2 == pytest.approx(own) and row[AF["opp"]] * 2 == opp
            assert row[AF["own_cut"]] * 10 == pytest.approx(own_cut)
            assert row[AF["opp_cut"]] * 10 == pytest.approx(opp_cut)
            assert row[AF["src_pts"]] * 3 == pytest.approx(board.pts[src])
            assert row[AF["src_reach"]] * 10 == pytest.approx(board.reach(src)[0])
            assert row[AF["dist"]] * 6 == pytest.approx(s)
            assert row[AF["move"]] == 1 and row[AF["place"]] == 0 and row[AF["free"]] == 1
            checked_moves += 1
        assert peng == (mask.shape[0] - 35) // 48
    assert checked_moves > 50


def test_isflak_features_are_batched_and_pure() -> None:
    rows = [(obs.copy(), mask.copy()) for _, obs, mask in _random_positions(2, 2, seed=9)]
    x = torch.as_tensor(np.stack([o for o, _ in rows]))
    feat = RayFeatures(x.shape[1], num_players=2, num_actions=rows[0][1].shape[0])
    glob, act = feat(x)
    assert glob.shape == (len(rows), 35 * len(CELL_FEATURES))
    assert act.shape == (len(rows), 227, len(ACTION_FEATURES))
    for i in (0, len(rows) // 2, len(rows) - 1):  # one at a time = in a batch
        g1, a1 = feat(x[i:i + 1].float())
        torch.testing.assert_close(g1[0], glob[i])
        torch.testing.assert_close(a1[0], act[i])


@pytest.mark.parametrize("n,opts", [(2, {}), (3, {}), (5, {"penguins_per_player": 3})])
def test_isflak_numba_and_torch_backends_agree(n: int, opts: dict) -> None:
    rows = [obs.copy() for _, obs, _ in _random_positions(n, 2, seed=40 + n, **opts)]
    x = torch.as_tensor(np.stack(rows)).float()
    from card_envs.isflak.rules import num_actions

    peng = opts.get("penguins_per_player", {2: 4, 3: 3}.get(n, 2))
    feat = RayFeatures(x.shape[1], num_players=n, num_actions=num_actions(peng))
    g1, a1 = feat(x)
    g2, a2 = feat.forward_torch(x)
    torch.testing.assert_close(g1, g2)
    torch.testing.assert_close(a1, a2)
    with pytest.raises(ValueError):
        RayFeatures(x.shape[1], num_players=n, num_actions=num_actions(peng), backend="cuda")


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6])
def test_isflak_features_every_player_count(n: int) -> None:
    from card_envs.isflak.rules import num_actions, obs_size

    for peng in (1, 16 // n):
        feat = RayFeatures(obs_size(n, peng), num_players=n, num_actions=num_actions(peng))
        glob, act = feat(torch.zeros(3, obs_size(n, peng)))
        assert act.shape == (3, num_actions(peng), feat.action_dim)
    with pytest.raises(ValueError):
        RayFeatures(obs_size(n, 2) + 1, num_players=n, num_actions=num_actions(2))


# --------------------------------------------------------------------------------------------
# the training hook
# --------------------------------------------------------------------------------------------
def test_policy_spec_uses_game_features_or_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    from card_envs.isflak.rules import num_actions, obs_size

    pol, kw = trainer.policy_spec("isflak_v0", obs_size(2, 4), 2, num_actions(4))
    assert pol is ActionFeaturePolicy
    assert kw["features_extractor_kwargs"]["game_features"] == manifest(
        "isflak_v0").train.features
    pol, kw = trainer.policy_spec("isflak_v0", obs_size(2, 4), 2, num_actions(4),
                                   {"action_head": False})
    assert pol is MaskedPolicy and "game_features" in kw["features_extractor_kwargs"]
    pol, kw = trainer.policy_spec("isflak_v0", obs_size(2, 4), 2, num_actions(4),
                                   {"game_features": False})
    assert pol is MaskedPolicy and "game_features" not in kw["features_extractor_kwargs"]
    # a configuration the module rejects: a warning and the base features
    with pytest.warns(UserWarning, match="without game features"):
        pol, kw = trainer.policy_spec("isflak_v0", obs_size(2, 4) + 1, 2, num_actions(4))
    assert pol is MaskedPolicy and "game_features" not in kw["features_extractor_kwargs"]
    slide = manifest("slide_v0")
    monkeypatch.setitem(registry._MANIFESTS, "slide_v0", dataclasses.replace(
        slide, train=dataclasses.replace(slide.train, features=None)))
    assert trainer.policy_spec("slide_v0", 57, 2, 56)[0] is MaskedPolicy


@pytest.mark.parametrize("n,opts", [(2, {}), (3, {"penguins_per_player": 2})])
def test_model_with_features_trains_saves_and_loads(tmp_path: Path, n: int, opts: dict) -> None:
    from agents.ppo import PPOAgent
    from card_envs.arena import run_arena

    torch.set_num_threads(1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = trainer.train("isflak_v0", minutes=None, steps=2 * 16 * 32, players=n, seed=1,
                             out_dir=tmp_path, eval_games=4, progress=False, torch_threads=1,
                             ppo={"num_envs": 16, "n_steps": 32, "batch_size": 256,
                                  "evals": 1}, **opts)
    assert isinstance(res.model.policy, ActionFeaturePolicy)
    assert res.config["features"] == manifest("isflak_v0").train.features
    agent = PPOAgent("isflak_v0", path=str(res.final_path), num_players=n, **opts)
    loaded = agent.model.policy
    assert isinstance(loaded, ActionFeaturePolicy)
    ref = res.model.policy.state_dict()
    got = loaded.state_dict()
    assert ref.keys() == got.keys() and all(torch.equal(ref[k], got[k]) for k in ref)
    # same greedy actions as the in-memory model on real positions
    rows = list(_random_positions(n, 1, seed=5, **opts))
    for _, obs, mask in rows[::3]:
        a1, _ = res.model.predict(obs, action_masks=mask.astype(bool), deterministic=True)
        assert agent.act(obs, mask) == int(a1) or mask.sum() == 1
        assert mask[int(a1)]
    out = run_arena("isflak_v0", [agent] + ["random"] * (n - 1), games=2, num_players=n,
                    seed=3, progress=False, **opts)
    assert out["ppo"].games == 2


def test_aligned_head_scores_legal_rows_only() -> None:
    from card_envs.isflak.rules import num_actions, obs_size
    from card_envs.rl.sb3 import BatchedVecEnv

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        venv = BatchedVecEnv("isflak_v0", 8, seed=0)
    from sb3_contrib import MaskablePPO

    pol, kw = trainer.policy_spec("isflak_v0", obs_size(2, 4), 2, num_actions(4))
    model = MaskablePPO(pol, venv, policy_kwargs=kw, device="cpu", n_steps=8, batch_size=64)
    obs = np.stack([o for _, o, _ in _random_positions(2, 1, seed=2)])
    x = torch.as_tensor(obs).float()
    feats = model.policy.extract_features(x)
    latent = model.policy.mlp_extractor.forward_actor(feats)
    hidden = model.policy.mlp_extractor.hidden_pi
    legal = feats[:, model.policy.features_extractor.global_dim:].view(len(obs), -1, 227)[:, 0]
    scores = latent[:, hidden:]
    assert torch.all(scores[legal == 0] == 0)
    assert model.policy.features_extractor.features_dim == feats.shape[1]


# --------------------------------------------------------------------------------------------
# Slide: the expected points equal the heuristic's own simulation of each pick
# --------------------------------------------------------------------------------------------
def _slide_positions(n: int, count: int, seed: int):
    """(observation, mask) of the seat to act in ``count`` random Slide positions."""
    eng, states = random_states("slide_v0", n, count, seed, max_moves=32 * n)
    return [(eng.observe(st, eng.current_player(st)), eng.legal_mask(st)) for st in states]


@pytest.mark.parametrize("n", [2, 3, 5])
def test_slide_expected_points_equal_the_heuristic(n: int) -> None:
    from agents.slide import action_scores

    SF = SLIDE_FEATURES
    f = {name: i for i, name in enumerate(SF)}
    rows = _slide_positions(n, 60, seed=10 + n)
    fx = PushFeatures(rows[0][0].shape[0], n, 56)
    glob, act = fx(torch.as_tensor(np.stack([o for o, _ in rows])))
    assert glob.shape == (len(rows), fx.global_dim) and act.shape == (len(rows), 56, len(SF))
    picks = 0
    for i, (obs, mask) in enumerate(rows):
        a = act[i].numpy()
        np.testing.assert_array_equal(a[:, f["legal"]] > 0, mask > 0)
        unseen = obs[16 * n + 10:16 * n + 20].astype(np.float64)
        ref = action_scores(obs[:16].astype(np.int64), unseen, mask.astype(np.int8), 1)
        for x in np.flatnonzero(mask[16:]) + 16:
            assert a[x, f["expected"]] * 30 == pytest.approx(ref[x], abs=1e-4)
            picks += 1
        g1, a1 = fx(torch.as_tensor(obs[None]))  # one at a time = in the batch
        torch.testing.assert_close(a1[0], act[i])
    assert picks > 20


@pytest.mark.parametrize("n", [2, 4])
def test_slide_numba_and_torch_backends_agree(n: int) -> None:
    rows = _slide_positions(n, 80, seed=30 + n)
    x = torch.as_tensor(np.stack([o for o, _ in rows])).float()
    fx = PushFeatures(x.shape[1], n, 56)
    g1, a1 = fx(x)
    g2, a2 = fx.forward_torch(x)
    torch.testing.assert_close(g1, g2, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(a1, a2, atol=1e-5, rtol=1e-5)
    with pytest.raises(ValueError):
        PushFeatures(x.shape[1], n, 56, backend="cuda")


def test_potentials_are_zero_at_the_deal_and_antisymmetric() -> None:
    from card_envs.isflak.features import potential as isflak_potential
    from card_envs.rl.sb3 import BatchedVecEnv
    from card_envs.slide.features import potential as slide_potential

    for env_id, pot in (("isflak_v0", isflak_potential), ("slide_v0", slide_potential)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            venv = BatchedVecEnv(env_id, 6, seed=0)
        obs = venv.reset()
        assert np.allclose(pot(obs, 2), 0.0) or env_id == "isflak_v0"
        rng = np.random.default_rng(0)
        for _ in range(12):
            masks = venv.action_masks()
            obs, *_ = venv.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))
        phi = pot(obs, 2)
        assert phi.shape == (6,) and np.all(np.isfinite(phi)) and np.any(phi != 0)


def test_potential_shaping_telescopes() -> None:
    from card_envs.rl.sb3 import BatchedVecEnv

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain = BatchedVecEnv("isflak_v0", 4, seed=3)
        inner = BatchedVecEnv("isflak_v0", 4, seed=3)
    shaped = PotentialShaping(inner, game_potential("isflak_v0"), 2, scale=1.0, gamma=1.0)
    plain.reset()
    phi0 = game_potential("isflak_v0")(shaped.reset(), 2)
    rng = np.random.default_rng(1)
    tot_plain = np.zeros(4)
    tot_shaped = np.zeros(4)
    done_any = np.zeros(4, bool)
    for _ in range(60):
        masks = plain.action_masks()
        acts = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        _, r1, d1, _ = plain.step(acts)
        _, r2, d2, _ = shaped.step(acts)
        assert np.array_equal(d1, d2)
        live = ~done_any
        tot_plain[live] += r1[live]
        tot_shaped[live] += r2[live]
        done_any |= d1
    # with gamma = 1 and phi = 0 at the end, the shaping of a whole game telescopes to
    # -phi(s_0), s_0 the learner's first observation (not 0 when another seat placed first)
    assert done_any.all()
    np.testing.assert_allclose(tot_shaped - tot_plain, -phi0, atol=1e-5)


# --------------------------------------------------------------------------------------------
# Slide: the push features against the engine's own moves (was tests/test_slide_features.py)
# --------------------------------------------------------------------------------------------
def face_up_score(grid: np.ndarray) -> tuple[int, int]:
    """(score of the face-up cards without an equal face-up neighbour, paired face-up cards)
    of a 16-code grid (0 empty, 1-10 up, 11 down): a slow reference."""
    g = grid.reshape(4, 4)
    score = pairs = 0
    for r in range(4):
        for c in range(4):
            v = g[r, c]
            if not 1 <= v <= 10:
                continue
            eq = any(0 <= r + dr < 4 and 0 <= c + dc < 4 and g[r + dr, c + dc] == v
                     for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1)))
            pairs += eq
            score += 0 if eq else int(v)
    return score, pairs


@pytest.mark.parametrize("n_players", [2, 3])
def test_slide_push_features_match_the_engine(n_players):
    eng, states = random_states("slide_v0", n_players, 60, seed=n_players,
                                max_moves=32 * n_players)
    fx = PushFeatures(eng.game.obs_size, n_players, eng.game.num_actions)
    checked_picks = 0
    for st in states:
        seat = eng.current_player(st)
        obs = eng.observe(st, seat)
        mask = eng.legal_mask(st)
        glob, act = fx(torch.as_tensor(obs[None]).float())
        act = act[0].numpy()
        assert act.shape == (56, len(SLIDE_FEATURES))
        np.testing.assert_array_equal(act[:, SAF["legal"]] > 0, mask > 0)
        now, _ = face_up_score(obs[:16])
        assert glob[0, 0].item() == pytest.approx(now / 50)
        for a in np.flatnonzero(mask):
            if a < 16:
                assert act[a, SAF["reveal"]] == 1
                assert act[a, SAF["score"]] == pytest.approx(now / 50)
                continue
            after = eng.clone(st)
            eng.step(after, int(a))
            grid = eng.observe(after, seat)[:16]
            score, pairs = face_up_score(grid)
            assert act[a, SAF["score"]] == pytest.approx(score / 50), a
            assert act[a, SAF["delta"]] == pytest.approx((score - now) / 10), a
            assert act[a, SAF["pairs"]] == pytest.approx(pairs / 16), a
            assert act[a, SAF["value"]] == pytest.approx(((a - 16) // 4 + 1) / 10)
            checked_picks += 1
        # the other seats' view gives no legal rows (not their turn)
        other = (seat + 1) % n_players
        _, act_o = fx(torch.as_tensor(eng.observe(st, other)[None]).float())
        assert act_o[0, :, SAF["legal"]].sum() == 0
    assert checked_picks > 50


def test_slide_features_reject_other_layouts():
    with pytest.raises(ValueError):
        PushFeatures(57, 3)
    with pytest.raises(ValueError):
        PushFeatures(57, 2, num_actions=50)
