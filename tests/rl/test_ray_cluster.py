"""card-envs on a two-node Ray cluster started by the test on 127.0.0.1 (``ray.cluster_utils``:
a head and a worker node, one CPU each): the own PPO trainer with its samplers on both nodes
equals the same run in one process, keeps training when a sampler process is killed mid-run
(Ray restarts it; no game lost from or counted twice in the counts), and the arena across the
nodes equals the in-process arena. RLlib's batched runners train on both nodes too."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

ray = pytest.importorskip("ray", reason="the rllib extra (ray[rllib]) is not installed")
from ray.cluster_utils import Cluster  # noqa: E402

from card_envs.agents.weights import read_weights  # noqa: E402
from card_envs.arena import run_arena  # noqa: E402
from card_envs.rl import train_ppo  # noqa: E402

SMALL = {"num_envs": 64, "n_steps": 8, "minibatch": 256, "eval_games": 20, "evals": 1,
         "pool_every": 1, "pool_size": 2}


@pytest.fixture(scope="module")
def cluster() -> Any:
    """Two Ray nodes on 127.0.0.1 (one CPU each, no dashboard), this process connected.
    Ray's driver rewrites a loopback address to the machine's network address unless
    ``ray_constants.ENABLE_RAY_CLUSTER`` is off (what ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``
    sets): turned off while the cluster runs, so every address stays on 127.0.0.1."""
    from ray._private import ray_constants

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ray_constants, "ENABLE_RAY_CLUSTER", False)
        c = Cluster(initialize_head=True, head_node_args={
            "num_cpus": 1, "node_ip_address": "127.0.0.1", "include_dashboard": False})
        try:
            c.add_node(num_cpus=1, node_ip_address="127.0.0.1")
            c.wait_for_nodes()
            ray.init(address=c.address, log_to_driver=False, _node_ip_address="127.0.0.1")
            assert len([n for n in ray.nodes() if n["Alive"]]) == 2
            assert {n["NodeManagerAddress"] for n in ray.nodes()} == {"127.0.0.1"}
            yield c
        finally:
            ray.shutdown()
            c.shutdown()


def _weights(path: Path) -> dict[str, np.ndarray]:
    return read_weights(path)[0]


@pytest.mark.stress  # ~3 min (a local and a Ray run); the other cluster tests stay in CI
def test_own_trainer_samples_on_both_nodes_and_equals_a_local_run(cluster: Any,
                                                                   tmp_path: Path) -> None:
    kw = {"minutes": None, "steps": 2500, "settings": SMALL, "progress": False,
          "torch_threads": 1, "seed": 4, "samplers": 2}
    local = train_ppo("slide_v0", out_dir=tmp_path / "local", **kw)
    remote = train_ppo("slide_v0", out_dir=tmp_path / "ray", ray=True, **kw)
    summary = json.loads((tmp_path / "ray" / "summary.json").read_text())
    nodes = {p["node"] for p in summary["ray"]["placement"]}
    assert len(nodes) == 2  # one sampler on each node
    a, b = _weights(local.final_path), _weights(remote.final_path)
    assert all(np.array_equal(a[k], b[k]) for k in a)
    assert remote.env_steps == local.env_steps and remote.updates == local.updates >= 3
    keys = ("env_steps", "learner_steps", "games", "random_win_rate", "heuristic_win_rate")
    assert [{k: r[k] for k in keys} for r in local.history] == \
        [{k: r[k] for k in keys} for r in remote.history]
    for name in ("history.json", "learning_curve.png", "final.safetensors", "summary.json"):
        assert (tmp_path / "ray" / name).is_file()


def _kill_one_sampler(stop: threading.Event, killed: list[int]) -> None:
    """Kill the process of the first sampler actor once the run has played a while."""
    while not stop.is_set():
        names = [n for n in ray.util.list_named_actors() if "card-envs-sampler" in n]
        if names:
            break
        time.sleep(0.1)
    else:
        return
    time.sleep(2.0)  # a few updates in
    actor = ray.get_actor(sorted(names)[0])
    pid = ray.get(actor.where.remote())["pid"]
    os.kill(pid, signal.SIGKILL)
    killed.append(pid)


def test_training_survives_a_killed_sampler_without_losing_or_repeating_games(
        cluster: Any, tmp_path: Path) -> None:
    stop, killed = threading.Event(), []
    t = threading.Thread(target=_kill_one_sampler, args=(stop, killed), daemon=True)
    t.start()
    try:
        res = train_ppo("slide_v0", minutes=None, steps=40_000, out_dir=tmp_path / "run",
                        settings={**SMALL, "evals": 0}, progress=False, torch_threads=1,
                        seed=1, samplers=2, ray=True)
    finally:
        stop.set()
        t.join(timeout=30)
    assert killed, "the run ended before a sampler could be killed"
    assert res.restarts >= 1
    assert res.env_steps >= 40_000 and res.games > 100
    assert res.duplicate_deals == 0  # the restarted sampler dealt new games
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["games"] == res.games and summary["ray"]["restarts"] == res.restarts
    assert any(p["generation"] >= 1 for p in summary["ray"]["placement"])
    # only whole rollouts count: each update trained on one rollout of every sampler (64
    # games x 8 moves in all), the killed one's unfinished rollout is not in the counts
    assert res.env_steps == res.updates * 64 * 8
    assert (tmp_path / "run" / "final.safetensors").is_file()


def _strip(d: dict[str, Any]) -> dict[str, Any]:
    """A result's JSON without what may differ between equal runs (wall-clock times)."""
    out = {k: v for k, v in d.items() if k not in ("elapsed", "workers")}
    out["log"] = [{k: v for k, v in g.items() if k != "think_ms"} for g in d["log"]]
    out["agents"] = [{k: v for k, v in a.items() if k != "think_ms"} for a in d["agents"]]
    return out


def test_arena_across_both_nodes_equals_the_local_arena(cluster: Any) -> None:
    agents = ["heuristic", "random"]
    local = run_arena("isflak", agents, 24, seed=5, workers=1, progress=False)
    remote = run_arena("isflak", agents, 24, seed=5, backend="ray", progress=False)
    assert remote.untimed_log() == local.untimed_log()
    assert _strip(remote.to_json()) == _strip(local.to_json())


def test_rllib_batched_runners_train_on_both_nodes(cluster: Any) -> None:
    from card_envs.rl.rllib import ppo_config

    algo = ppo_config("slide_v0", num_env_runners=2, envs_per_runner=64, selfplay="league",
                      snapshots=1, snapshot_every=1,
                      ppo={"train_batch_size_per_learner": 1024, "minibatch_size": 256,
                           "num_epochs": 1}).build_algo()
    try:
        nodes = set(algo.env_runner_group.foreach_env_runner(
            lambda r: ray.get_runtime_context().get_node_id(), local_env_runner=False))
        assert len(nodes) == 2
        for _ in range(3):
            res = algo.train()
        er = res["env_runners"]
        assert er["num_env_steps_sampled_lifetime"] >= 3 * 1024
        assert er["num_env_steps_all_seats"] > er["num_env_steps_sampled"]  # opponents too
        assert np.isfinite(res["learners"]["default_policy"]["policy_loss"])
    finally:
        algo.stop()
