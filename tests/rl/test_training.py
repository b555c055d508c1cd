"""PPO self-play training (card_envs.rl.sb3.train) and the rollout benchmark.

One seeded Slide run (under 60 s) must beat random significantly; two short runs with the same
seed must end with the same parameters and evaluation logs; train() writes its files; the
rollout benchmark runs end to end with tiny sizes."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sb3_contrib", reason="train extra")
torch = pytest.importorskip("torch", reason="train extra")

from card_envs.arena import run_arena  # noqa: E402
from card_envs.rl import TrainResult, train  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SLIDE_STEPS = 30 * 4096  # learner steps of the main run (30 updates)


@pytest.fixture(scope="module")
def slide_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[TrainResult, float]:
    torch.set_num_threads(1)
    out = tmp_path_factory.mktemp("slide")
    t0 = time.process_time()  # CPU time: the run is single-threaded, so this is its wall
    # time on a quiet machine, and other processes on a busy one (xdist, CI) do not inflate it
    res = train("slide_v0", minutes=None, steps=SLIDE_STEPS, seed=0, out_dir=out,
                eval_games=50, progress=False, torch_threads=1, ppo={"evals": 2})
    return res, time.process_time() - t0


def test_slide_training_beats_random_significantly(slide_run: tuple[TrainResult, float]
                                                   ) -> None:
    from card_envs.agents.ppo import PPOAgent

    res, seconds = slide_run
    assert seconds < 60, f"training took {seconds:.0f} s of CPU"
    # a fresh evaluation on other deals than the training's evaluations, from the saved models
    rates = {}
    for name, path in (("final", res.final_path),
                       ("initial", res.out_dir / res.history[0]["checkpoint"])):
        agent = PPOAgent("slide_v0", path=str(path))
        arena = run_arena("slide_v0", [agent, "random"], games=200, seed=777, progress=False)
        rates[name] = arena["ppo"]
    st = rates["final"]
    lo, _ = st.ci95
    assert st.win_rate > 0.6 and lo > 0.5, (st.win_rate, st.ci95)
    # the untrained greedy policy already beats random in Slide (~75%): training must add to it
    assert st.win_rate > rates["initial"].win_rate + 0.05, (st.win_rate, rates["initial"].win_rate)
    assert res.env_steps_per_second > 0 and res.env_steps > res.learner_steps > 0


def test_train_writes_its_files(slide_run: tuple[TrainResult, float]) -> None:
    res, _ = slide_run
    out = res.out_dir
    assert res.final_path == out / "final.zip" and res.final_path.stat().st_size > 0
    hist = json.loads((out / "history.json").read_text())
    assert hist == json.loads(json.dumps(res.history))
    assert [h["learner_steps"] for h in hist] == [0, SLIDE_STEPS // 2, SLIDE_STEPS]
    for h in hist:
        assert (out / h["checkpoint"]).is_file()
        for opp in ("random", "heuristic"):
            assert h[f"{opp}_ci_low"] <= h[f"{opp}_win_rate"] <= h[f"{opp}_ci_high"]
    csv_lines = (out / "history.csv").read_text().splitlines()
    assert len(csv_lines) == 1 + len(hist) and "random_win_rate" in csv_lines[0]
    png = (out / "learning_curve.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000
    assert any((out / "tb").rglob("events.out.tfevents.*"))
    assert json.loads((out / "config.json").read_text())["steps"] == SLIDE_STEPS
    assert "random" in res.table() and "env steps/s" in res.table()


def test_training_is_deterministic_for_a_seed(tmp_path: Path) -> None:
    torch.set_num_threads(1)
    kw = dict(minutes=None, steps=2 * 64 * 32, seed=3, eval_games=10, progress=False,
              torch_threads=1, pool_every=1,
              ppo={"n_steps": 32, "batch_size": 512, "evals": 1, "pool_size": 1})
    runs = [train("slide_v0", out_dir=tmp_path / str(i), **kw) for i in range(2)]
    a, b = (r.model.policy.state_dict() for r in runs)
    assert a.keys() == b.keys()
    assert all(torch.equal(a[k], b[k]) for k in a)
    strip = ("seconds", "env_steps_per_s", "eval_seconds", "wall_seconds", "rollout_seconds",
             "update_seconds", "rollout_env_steps_per_s")
    logs = [[{k: v for k, v in h.items() if k not in strip} for h in r.history] for r in runs]
    assert logs[0] == logs[1] and len(logs[0]) == 2
    assert runs[0].env_steps == runs[1].env_steps
    # a different seed trains differently
    c = train("slide_v0", out_dir=tmp_path / "c", **{**kw, "seed": 4}).model.policy.state_dict()
    assert not all(torch.equal(a[k], c[k]) for k in a)


def test_rollout_benchmark_smoke(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("rollout_bench",
                                                  ROOT / "benchmarks" / "rollout.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    out = tmp_path / "rollout.json"
    mod.main(["--quick", "--envs", "4", "--n-steps", "4", "--seconds", "0.05", "--json",
              str(out)])
    d = json.loads(out.read_text())
    assert {"machine", "versions", "results", "target_ratio"} <= set(d)
    assert d["results"]
    for row in d["results"]:  # one row per (net, loop) measured
        assert row["num_envs"] == 4 and row["ratio"] > 0
        for v in ("BatchedVecEnv", "DummyVecEnv"):
            assert row[v]["median_env_steps_per_s"] > 0 and row[v]["env_steps"] > 0


def test_an_existing_run_is_not_mixed_into(tmp_path) -> None:
    """A second run into the same folder is refused (checkpoints and TensorBoard runs would
    mix) unless overwrite=True, which replaces only the run's own files."""
    from card_envs.rl.runs import prepare_out_dir as _prepare_out_dir

    out = tmp_path / "run"
    _prepare_out_dir(out, overwrite=False)  # a new folder: fine
    (out / "checkpoints").mkdir(parents=True)
    (out / "history.json").write_text("[]")
    (out / "notes.txt").write_text("mine")
    with pytest.raises(FileExistsError, match="already holds a run.*overwrite"):
        _prepare_out_dir(out, overwrite=False)
    _prepare_out_dir(out, overwrite=True)
    assert not (out / "checkpoints").exists() and not (out / "history.json").exists()
    assert (out / "notes.txt").read_text() == "mine"
    p = subprocess.run([sys.executable, str(ROOT / "examples" / "train_ppo.py"), "--help"],
                       capture_output=True, text=True, timeout=120, check=True)
    assert "--overwrite" in p.stdout and "--device" in p.stdout


@pytest.mark.parametrize("env_id,opts", [("slide_v0", {}), ("isflak_v0", {"num_players": 3}),
                                         ("if_it_fits_v0", {"reward_mode": "points"})])
def test_batched_evaluation_plays_the_arenas_games(env_id: str, opts: dict) -> None:
    """All games advance together, yet the result equals the arena's on the same seed: the
    same duplicate deals, seat rotations, agent seeds and win accounting."""
    from card_envs.agents.base import Agent
    from card_envs.rl.evaluation import evaluate_batched

    n = opts.get("num_players", 2)
    options = {k: v for k, v in opts.items() if k != "num_players"}
    games, seed = 12 * n, 77
    res = evaluate_batched("heuristic", env_id, "random", games, num_players=n, seed=seed,
                           **options)
    arena = run_arena(env_id, ["heuristic"] + ["random"] * (n - 1), games, num_players=n,
                      seed=seed, progress=False, **options)
    assert res["games"] == games == arena.stats[0].games
    assert res["win_rate"] == pytest.approx(arena.stats[0].win_rate)
    assert (res["ci_low"], res["ci_high"]) == pytest.approx(arena.stats[0].ci95)

    class First(Agent):  # the same policy, one game at a time
        def act(self, observation, action_mask):
            return int(np.flatnonzero(action_mask)[0])

    sizes = []

    def first(obs, masks):  # ... and batched
        sizes.append(len(obs))
        return masks.argmax(axis=1).astype(np.int64)

    res = evaluate_batched(first, env_id, "heuristic", games, num_players=n, seed=seed,
                           **options)
    arena = run_arena(env_id, [First(env_id, num_players=n, **options)] + ["heuristic"] *
                      (n - 1), games, num_players=n, seed=seed, progress=False, **options)
    assert res["win_rate"] == pytest.approx(arena.stats[0].win_rate)
    assert max(sizes) > 1, "the policy was called on batches of games"


def test_batched_model_evaluation_equals_the_arena_one() -> None:
    """The trainer's evaluation (batched by default) gives the arena's numbers for a model."""
    import warnings

    from sb3_contrib import MaskablePPO

    from card_envs.rl import BatchedVecEnv
    from card_envs.rl.evaluation import evaluate

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = MaskablePPO("MlpPolicy", BatchedVecEnv("isflak_v0", 4, seed=0), n_steps=8,
                            batch_size=8, seed=0, device="cpu")
    fast = evaluate(model, "isflak_v0", games=40, seed=5)
    slow = evaluate(model, "isflak_v0", games=40, seed=5, batched=False)
    for opp in ("random", "heuristic"):
        assert {k: v for k, v in fast[opp].items() if k != "seconds"} == \
            {k: v for k, v in slow[opp].items() if k != "seconds"}
