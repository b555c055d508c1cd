"""card-envs' own PPO (:mod:`card_envs.rl.ppo`), its network (:mod:`card_envs.agents.net`) and its
weights files (:mod:`card_envs.agents.weights`)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from card_envs.agents import make_agent  # noqa: E402
from card_envs.agents.net import (  # noqa: E402
    NetPolicy,
    load_policy,
    sample_segments,
    save_policy,
    segment_log_softmax,
)
from card_envs.agents.weights import WeightsError, read_weights, write_weights  # noqa: E402
from card_envs.core.errors import OptionError  # noqa: E402
from card_envs.core.features import Features, PolicyInput  # noqa: E402
from card_envs.core.registry import ENV_IDS, env_class  # noqa: E402
from card_envs.core.vector import make  # noqa: E402
from card_envs.rl.ppo import PPO_DEFAULTS, train_ppo  # noqa: E402
from card_envs.rl.trajectories import credit as _credit  # noqa: E402
from card_envs.rl.trajectories import gae as _gae  # noqa: E402
from card_envs.rl.trajectories import link as _link  # noqa: E402


def _batch(env_id: str, n: int = 256, steps: int = 9):
    vec = make(env_id, n, seed=4)
    vec.reset(seed=4)
    for _ in range(steps):
        vec.step(vec.sample_actions())
    return vec


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_policy_input_is_the_features_of_the_legal_actions(env_id: str) -> None:
    vec = _batch(env_id)
    game = vec.game
    pin = PolicyInput(game)
    x, rows, acts, off = pin.compute(vec.observations, vec.action_masks)
    assert x.shape == (vec.num_envs, pin.in_dim) and np.isfinite(x).all()
    assert acts.size == vec.action_masks.sum() == off[-1]
    seg = np.repeat(np.arange(vec.num_envs), np.diff(off))
    assert (vec.action_masks[seg, acts] == 1).all()
    fx = Features(game)
    obs, glob, act = fx.split(fx.compute(vec.observations))
    np.testing.assert_array_equal(rows, act[seg, :, acts])
    np.testing.assert_array_equal(x[:, pin.in_dim - pin.global_dim:], glob)
    o = obs.astype(np.float64)
    np.testing.assert_allclose(x[:, :game.obs_size], np.sign(o) * np.log1p(np.abs(o)),
                               rtol=1e-6)


def test_segment_log_softmax_and_sampling_match_a_dense_masked_softmax() -> None:
    rng = np.random.default_rng(0)
    masks = (rng.random((50, 12)) < 0.3).astype(np.int8)
    masks[np.arange(50), rng.integers(12, size=50)] = 1
    dense = rng.normal(size=(50, 12))
    off = np.concatenate([[0], np.cumsum(masks.sum(1))])
    seg, acts = np.nonzero(masks)
    logits = dense[seg, acts]
    got = segment_log_softmax(torch.tensor(logits), torch.tensor(seg), 50).numpy()
    ref = torch.log_softmax(torch.tensor(np.where(masks > 0, dense, -np.inf)), 1).numpy()
    np.testing.assert_allclose(got, ref[seg, acts], rtol=1e-10)
    a, lp = np.empty(50, np.int64), np.empty(50)
    sample_segments(logits, off, acts.astype(np.int64), logits, True, a, lp)
    np.testing.assert_array_equal(a, np.where(masks > 0, dense, -np.inf).argmax(1))
    np.testing.assert_allclose(lp, ref[np.arange(50), a])
    # sampled: frequencies follow the probabilities of row 0
    counts = np.zeros(12)
    for _ in range(4000):
        sample_segments(logits, off, acts.astype(np.int64), rng.random(len(logits)), False,
                        a, lp)
        counts[a[0]] += 1
    p = np.exp(ref[0])
    assert np.abs(counts / 4000 - p).max() < 0.03


def test_trajectories_are_linked_per_game_and_seat_and_discounted() -> None:
    # two games, two seats: game 0 alternates seats 0,1,0 and ends; game 1: seat 1 moves once
    pending = np.full((2, 2), -1, np.int64)
    nxt = np.full(8, -1, np.int64)
    rew, done = np.zeros(8, np.float32), np.zeros(8, np.bool_)
    _link(0, np.array([0, 1]), np.array([0, 1]), pending, nxt)       # samples 0 (g0 s0), 1
    _credit(np.array([[0.5, 0.0], [0.0, 0.0]], np.float32), np.array([False, False]),
            pending, rew, done)
    _link(2, np.array([0]), np.array([1]), pending, nxt)              # sample 2 (g0 s1)
    _credit(np.zeros((2, 2), np.float32), np.array([False, False]), pending, rew, done)
    _link(3, np.array([0]), np.array([0]), pending, nxt)              # sample 3 (g0 s0)
    _credit(np.array([[1.0, -1.0], [0.0, 0.0]], np.float32), np.array([True, False]),
            pending, rew, done)
    assert nxt[:4].tolist() == [3, -1, -1, -1]
    assert rew[:4].tolist() == [0.5, 0.0, -1.0, 1.0] and done[:4].tolist() == [0, 0, 1, 1]
    assert pending.tolist() == [[-1, -1], [-1, 1]]  # game 1, seat 1: cut by the rollout
    val = np.array([0.1, 0.2, 0.3, 0.4], np.float32)
    boot = np.array([0, 0.7, 0, 0], np.float32)
    z = np.zeros(4, np.float32)
    adv, ret = np.zeros(4, np.float32), np.zeros(4, np.float32)
    g, lam = 0.9, 0.8
    _gae(rew[:4], val, nxt[:4], done[:4], boot, z, z, 0.0, g, lam, adv, ret)
    a3 = 1.0 - 0.4
    a0 = 0.5 + g * 0.4 - 0.1 + g * lam * a3
    np.testing.assert_allclose(adv, [a0, g * 0.7 - 0.2, -1.0 - 0.3, a3], rtol=1e-6)
    np.testing.assert_allclose(ret, adv + val, rtol=1e-6)


def test_weights_round_trip_and_match_the_safetensors_library(tmp_path: Path) -> None:
    st = pytest.importorskip("safetensors.numpy")
    t = {"a": np.arange(6, dtype=np.float32).reshape(2, 3), "b": np.array([1, -2], np.int64)}
    write_weights(tmp_path / "w.safetensors", t, {"k": "v"})
    back, meta = read_weights(tmp_path / "w.safetensors")
    assert meta == {"k": "v"} and all((back[k] == t[k]).all() for k in t)
    lib = st.load_file(tmp_path / "w.safetensors")
    assert all((lib[k] == t[k]).all() for k in t)
    st.save_file(t, tmp_path / "lib.safetensors", metadata={"x": "y"})
    back, meta = read_weights(tmp_path / "lib.safetensors")
    assert meta == {"x": "y"} and all((back[k] == t[k]).all() for k in t)


def _header_file(path: Path, header: object, data: bytes = b"\0" * 8) -> Path:
    h = json.dumps(header).encode()
    path.write_bytes(len(h).to_bytes(8, "little") + h + data)
    return path


@pytest.mark.parametrize("bad", [
    b"", b"\x05\0\0\0\0\0\0\0{}", b"\xff" * 8 + b"{}", (4).to_bytes(8, "little") + b"\xff\xfe{}",
    {"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}},
    {"a": {"dtype": "X9", "shape": [2], "data_offsets": [0, 8]}},
    {"a": {"dtype": "F32", "shape": [-2], "data_offsets": [0, 8]}},
    {"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 80]}},
    {"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
     "b": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}},
    {"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8], "extra": 1}},
    {"__metadata__": {"k": 3}}, [1, 2],
])
def test_a_bad_weights_file_is_refused_with_a_clear_error(tmp_path: Path, bad: object) -> None:
    p = tmp_path / "bad.safetensors"
    if isinstance(bad, bytes):
        p.write_bytes(bad)
    else:
        _header_file(p, bad)
    with pytest.raises(WeightsError):
        read_weights(p)


def test_a_policy_for_another_game_version_or_player_count_is_refused(tmp_path: Path,
                                                                      monkeypatch) -> None:
    pol = NetPolicy("slide_v0", hidden=(16,), scorer=4)
    path = save_policy(pol, tmp_path / "p")
    assert path.suffix == ".safetensors" and path.with_suffix(".json").is_file()
    assert load_policy(path, "slide", 2).env_id == "slide_v0"
    with pytest.raises(WeightsError, match="a policy for slide_v0, not isflak_v0"):
        make_agent(f"ppo:path={path}", "isflak_v0")
    with pytest.raises(WeightsError, match="trained for 2 players, not 3"):
        load_policy(path, "slide_v0", 3)
    monkeypatch.setattr(env_class("slide_v0").game_class, "version", "99")
    with pytest.raises(WeightsError, match="version"):
        load_policy(path, "slide_v0", 2)
    monkeypatch.undo()
    # weights that do not fit the configuration, or are not finite
    t, meta = read_weights(path)
    t["value.weight"] = np.zeros((1, 3), np.float32)
    write_weights(tmp_path / "q.safetensors", t, meta)
    with pytest.raises(WeightsError, match="do not match"):
        load_policy(tmp_path / "q.safetensors")
    t, meta = read_weights(path)
    t["value.bias"] = np.array([np.nan], np.float32)
    write_weights(tmp_path / "n.safetensors", t, meta)
    with pytest.raises(WeightsError, match="finite"):
        load_policy(tmp_path / "n.safetensors")
    write_weights(tmp_path / "m.safetensors", t, {})
    with pytest.raises(WeightsError, match="not a card-envs policy"):
        load_policy(tmp_path / "m.safetensors")


def test_a_corrupt_sb3_zip_is_a_clear_error(tmp_path: Path) -> None:
    pytest.importorskip("sb3_contrib")
    p = tmp_path / "model.zip"
    p.write_bytes(b"PK\x03\x04 not really a zip")
    with pytest.raises(WeightsError, match="not a MaskablePPO model"):
        make_agent(f"ppo:path={p}", "slide_v0")


def test_the_ppo_agent_needs_torch_only() -> None:
    """The shipped baseline loads and plays with stable-baselines3 and sb3-contrib unimportable,
    and loading its weights unpickles nothing (numba's own kernel cache, warmed first, is
    allowed its pickle)."""
    code = (
        "import sys\n"
        "sys.modules['stable_baselines3'] = None\nsys.modules['sb3_contrib'] = None\n"
        "from card_envs.arena import run_arena\n"
        "from card_envs.agents.net import load_policy\n"
        "from card_envs.agents.ppo import baseline_path\n"
        "r = run_arena('slide_v0', ['ppo', 'random'], games=2, seed=1, progress=False)\n"
        "import pickle\n"
        "def no(*a, **k): raise AssertionError('pickle used')\n"
        "pickle.load = pickle.loads = pickle.Unpickler = no\n"
        "p = load_policy(baseline_path('slide_v0'), 'slide_v0', 2)\n"
        "print(r['ppo'].games, p.env_id)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "2 slide_v0"


def test_bad_settings_are_refused_before_anything_runs(tmp_path: Path) -> None:
    for settings, match in (({"learning_rate": float("nan")}, "learning_rate"),
                            ({"num_envs": 1}, "num_envs"), ({"hidden": []}, "hidden"),
                            ({"league": {"mcts": 1}}, "league"), ({"bogus": 1}, "unknown"),
                            ({"anneal_lr": 1}, "anneal_lr"), ({"critic": "oracle"}, "critic")):
        with pytest.raises(OptionError, match=match):
            train_ppo("slide_v0", steps=10, out_dir=tmp_path / "r", settings=settings,
                      progress=False)
    for samplers in (0, True, 2.0, 10**9):
        with pytest.raises(OptionError, match="samplers"):
            train_ppo("slide_v0", steps=10, out_dir=tmp_path / "r", samplers=samplers,
                      progress=False)
    assert not (tmp_path / "r").exists()


SMALL = {"num_envs": 128, "n_steps": 16, "minibatch": 1024, "hidden": [32], "scorer": 8,
         "eval_games": 0, "evals": 0}


def test_games_split_between_samplers_deal_the_same_games(tmp_path: Path) -> None:
    """Two samplers of 64 games deal games 0..63 and 64..127 of one 128-game batch: the same
    first positions as one sampler; the run records every finished game's deal once."""
    from card_envs.rl.ppo.run import PPORun, split_games

    assert split_games(10, 3) == [4, 3, 3]
    cfg = {**PPO_DEFAULTS, **SMALL, "hidden": [32]}
    one = PPORun("slide_v0", 2, cfg, {}, 3, samplers=1)
    two = PPORun("slide_v0", 2, cfg, {}, 3, samplers=2)
    both = np.concatenate([s.vec.states for s in two.samplers])
    assert np.array_equal(both, one.vec.states)
    res = train_ppo("slide_v0", minutes=None, steps=20_000, out_dir=tmp_path / "two",
                    settings=SMALL, progress=False, torch_threads=1, seed=5, samplers=2)
    assert res.games > 0 and res.duplicate_deals == 0 and res.restarts == 0
    summary = json.loads((tmp_path / "two" / "summary.json").read_text())
    assert summary["games_per_sampler"] == [64, 64] and summary["ray"] is None


def test_same_seed_same_weights(tmp_path: Path) -> None:
    runs = [train_ppo("slide_v0", minutes=None, steps=6000, out_dir=tmp_path / str(k),
                      settings=SMALL, progress=False, torch_threads=1, seed=5)
            for k in range(2)]
    a, b = (read_weights(r.final_path)[0] for r in runs)
    assert a.keys() == b.keys() and all((a[k] == b[k]).all() for k in a)
    assert runs[0].env_steps == runs[1].env_steps >= 6000


def test_the_full_information_critic_trains_and_stays_out_of_the_weights(tmp_path: Path
                                                                         ) -> None:
    runs = [train_ppo("op_glad_ijs_v0", minutes=None, steps=6000, out_dir=tmp_path / str(k),
                      settings={**SMALL, "critic": critic}, progress=False, torch_threads=1,
                      seed=5) for k, critic in enumerate(("full", "full", "own"))]
    full, again, own = (read_weights(r.final_path)[0] for r in runs)
    assert all((full[k] == again[k]).all() for k in full)  # deterministic
    assert full.keys() == own.keys()  # the policy's weights only: the critic is for training
    assert any(not np.array_equal(full[k], own[k]) for k in full)
    # the critic's input: the learner's own view plus the other seat's
    from card_envs.rl.ppo.run import PPORun
    run = runs[0]
    r = PPORun("op_glad_ijs_v0", 2, {**run.config}, {}, 0).samplers[0]
    vec = r.vec
    for _ in range(5):
        vec.step(vec.sample_actions())
    games = np.arange(vec.num_envs, dtype=np.int64)
    seats = vec.current_player.astype(np.int64)
    cx = np.zeros((games.size, r.policy.pinput.in_dim), np.float32)
    r._other_views(games, seats, cx, 1)
    obs = np.zeros_like(vec.observations)
    r.observe_seats(vec.states, vec.cfg, games, 1 - seats, obs)
    want = r.policy.pinput.compute(obs, np.zeros_like(vec.action_masks), 1)[0]
    assert np.array_equal(cx, want) and not np.array_equal(cx, r.policy.pinput.compute(
        vec.observations, vec.action_masks, 1)[0])


def test_training_learns_to_beat_random_and_records_its_speed(tmp_path: Path) -> None:
    res = train_ppo("slide_v0", minutes=None, steps=600_000, out_dir=tmp_path / "run",
                    settings={"eval_games": 200, "evals": 1}, progress=False, seed=0)
    start, end = res.history[0], res.history[-1]
    # the untrained greedy policy already beats random (about 0.86: the features); training
    # lifts it further and gains clearly against the heuristic
    assert end["random_win_rate"] >= 0.9
    assert end["heuristic_win_rate"] >= start["heuristic_win_rate"] + 0.1
    for key in ("env_steps", "learner_steps", "wall_seconds", "update_seconds",
                "rollout_seconds"):
        assert key in end
    assert end["env_steps"] >= end["learner_steps"] > 0 and end["wall_seconds"] > 0
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert set(summary["profile"]) == {"engine", "features", "forward", "sampling", "buffer",
                                       "update", "opponents"}
    assert (tmp_path / "run" / "learning_curve.png").is_file()
    agent = make_agent(f"ppo:path={res.final_path}", "slide_v0")
    assert agent.native


def test_the_example_trains_with_the_native_trainer_by_default(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parents[2]
    cmd = [sys.executable, str(root / "examples" / "train_ppo.py"), "--game", "slide",
           "--minutes", "0", "--steps", "3000", "--envs", "128", "-p", "n_steps=8",
           "-p", "hidden=[16]", "--eval-games", "0", "--no-progress", "--out",
           str(tmp_path / "run")]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert "env steps/s end to end" in out.stdout
    rec = json.loads((tmp_path / "run" / "final.json").read_text())
    assert rec["info"]["command"].startswith("python examples/train_ppo.py --game slide")
    assert rec["net"]["hidden"] == [16]
    bad = subprocess.run(cmd[:-2] + ["-p", "learning_rate=nan", "--out", str(tmp_path / "b")],
                         capture_output=True, text=True, timeout=600)
    assert bad.returncode == 2 and "learning_rate" in bad.stderr
    assert "Traceback" not in bad.stderr
