"""The arena on Ray (``run_arena(..., backend="ray")``) on a real local Ray cluster (2 CPUs,
loopback, shut down after): the same games and results as the in-process run for the same
seed (a round-robin, a game registered at run time, search agents), the CLI helpers, the
errors; and replays (``replays=``): one JSON per game, equal across backends, that replays
to the logged points in the AEC env."""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from card_envs.agents.random_agent import RandomAgent
from card_envs.arena import run_arena
from card_envs.arena.ray_backend import RaySession, add_ray_arguments, ray_kwargs
from card_envs.core.registry import make_raw

ROOT = Path(__file__).resolve().parents[2]
HAVE_RAY = importlib.util.find_spec("ray") is not None
needs_ray = pytest.mark.skipif(not HAVE_RAY, reason="the rllib extra (ray) is not installed")


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)}


@pytest.fixture(scope="module")
def cluster() -> Any:
    import ray

    ray.init(num_cpus=2, include_dashboard=False, address="local",
             _node_ip_address="127.0.0.1", log_to_driver=False)
    yield ray
    ray.shutdown()


NO_RAY = r"""
import sys
sys.modules["ray"] = None  # `import ray` raises ImportError from here on
from card_envs.agents.registry import agent_names, make_agent
from card_envs.arena import run_arena
from card_envs.rl import rllib
assert "rllib" in agent_names("slide_v0")
for call in (lambda: make_agent("rllib:runs/x", "slide_v0"),
             lambda: run_arena("slide", ["random", "random"], 2, backend="ray"),
             lambda: rllib.RLlibCardEnv({"env_id": "slide_v0"}),
             lambda: rllib.ppo_config("slide_v0")):
    try:
        call()
    except ImportError as e:
        assert "rllib" in str(e), e
    else:
        raise AssertionError("no ImportError")
print("ok")
"""


def test_without_ray_the_errors_name_the_extra() -> None:
    out = subprocess.run([sys.executable, "-c", NO_RAY], capture_output=True, text=True,
                         env=_env(), cwd=ROOT, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.split()[-1] == "ok"


def _strip(d: dict[str, Any]) -> dict[str, Any]:
    """A result's JSON without what may differ between equal runs (wall-clock times)."""
    out = {k: v for k, v in d.items() if k not in ("elapsed", "workers")}
    out["log"] = [{k: v for k, v in g.items() if k != "think_ms"} for g in d["log"]]
    out["agents"] = [{k: v for k, v in a.items() if k != "think_ms"} for a in d["agents"]]
    return out


@needs_ray
@pytest.mark.parametrize("env_id,agents,games,players", [
    ("slide_v0", ["heuristic", "random"], 10, 2),
    ("isflak_v0", ["random", "heuristic", "random"], 6, 2),     # 3 lineups
    ("toy_v0", ["random", "random", "random"], 6, 3),           # registered at run time
    ("slide_v0", ["mcts:iterations=8", "random"], 4, 2),        # a search agent (true state)
])
def test_ray_arena_equals_the_local_arena(cluster: Any, env_id: str, agents: list[str],
                                          games: int, players: int) -> None:
    local = run_arena(env_id, agents, games, num_players=players, seed=21, progress=False)
    on_ray = run_arena(env_id, agents, games, num_players=players, seed=21, progress=False,
                       backend="ray")
    assert on_ray.untimed_log() == local.untimed_log()
    assert _strip(on_ray.to_json()) == _strip(local.to_json())
    assert on_ray.workers >= 1 and cluster.is_initialized()  # the session it found is kept


@needs_ray
def test_replays_replay_to_the_logged_points(cluster: Any, tmp_path: Path) -> None:
    local_dir, ray_dir = tmp_path / "local", tmp_path / "ray"
    res = run_arena("slide", ["heuristic", "random", "random"], 4, num_players=2, seed=5,
                    progress=False, replays=local_dir)
    run_arena("slide", ["heuristic", "random", "random"], 4, num_players=2, seed=5,
              progress=False, replays=ray_dir, backend="ray")
    files = sorted(p.name for p in local_dir.iterdir())
    assert files == [f"slide_v0_game{g:06d}.json" for g in range(12)]  # 3 lineups x 4
    assert files == sorted(p.name for p in ray_dir.iterdir())
    assert all("_replay" not in g for g in res.log)  # the log itself is unchanged
    for g in res.log:
        name = f"slide_v0_game{g['game']:06d}.json"
        d = json.loads((local_dir / name).read_text())
        assert d == json.loads((ray_dir / name).read_text())
        assert d["format"] == "card-envs-replay" and d["format_version"] == 1
        assert (d["env_id"], d["game_version"], d["start"]) == ("slide_v0", "0", None)
        assert d["seed"] == res.deal_seeds[g["deal"]] and d["players"] == g["seats"]
        assert d["result"] == {"points": g["points"], "winners": g["winners"],
                               "truncated": False}  # points compare equal as int or float
        env = make_raw(d["env_id"], **d["options"])
        env.reset(seed=d["seed"])
        for a in d["actions"]:
            env.step(a)
        assert all(env.terminations.values())
        assert [env.infos[a]["points"] for a in env.possible_agents] == g["points"]
        assert len(d["actions"]) == sum(g["moves"])


def test_replay_record_is_the_game_so_far() -> None:
    env = make_raw("slide_v0", num_players=3, start_player="random")
    env.reset(seed=8)
    actions = []
    for _ in range(5):
        a = env.legal_actions()[0]
        env.step(a)
        actions.append(a)
    d = env.replay()
    assert d["seed"] == 8 and d["actions"] == actions
    assert json.loads(json.dumps(d)) == d  # JSON-safe
    assert "players" not in d and "result" not in d  # optional, absent here
    again = make_raw(d["env_id"], **d["options"])
    again.reset(seed=d["seed"])
    for a in d["actions"]:
        again.step(a)
    assert (again.state_array == env.state_array).all()


@needs_ray
def test_ray_arena_starts_and_stops_its_own_ray(tmp_path: Path) -> None:
    """Without a connection, backend="ray" starts a local Ray for the run and shuts it
    down (in a fresh process, beside the module's cluster)."""
    script = (
        "import json, sys, ray\n"
        "from card_envs.arena import run_arena\n"
        "res = run_arena('slide', ['heuristic', 'random'], 4, seed=2, progress=False,\n"
        "                backend='ray')\n"
        "ref = run_arena('slide', ['heuristic', 'random'], 4, seed=2, progress=False)\n"
        "print(json.dumps([res.untimed_log() == ref.untimed_log(), ray.is_initialized()]))\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         cwd=tmp_path, env=_env(), timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    assert json.loads(out.stdout.strip().splitlines()[-1]) == [True, False]


@needs_ray
def test_ray_backend_errors_and_cli_helpers(cluster: Any) -> None:
    with pytest.raises(ValueError, match="agent instances"):
        run_arena("slide", [RandomAgent("slide_v0"), "random"], 2, progress=False,
                  backend="ray")
    with pytest.raises(ValueError, match="backend"):
        run_arena("slide", ["random", "random"], 2, progress=False, backend="dask")
    with pytest.raises(ValueError, match="address"):
        run_arena("slide", ["random", "random"], 2, progress=False, address="auto")
    ap = argparse.ArgumentParser()
    add_ray_arguments(ap)
    assert ray_kwargs(ap.parse_args([])) == {}
    assert ray_kwargs(ap.parse_args(["--ray"])) == {"backend": "ray", "address": None}
    assert ray_kwargs(ap.parse_args(["--ray", "--address", "auto"])) == \
        {"backend": "ray", "address": "auto"}
    with pytest.raises(ValueError, match="--address needs --ray"):
        ray_kwargs(ap.parse_args(["--address", "auto"]))
    with RaySession() as s:  # already connected: reused, left running
        assert s.cpus == 2 and not s.started
    assert cluster.is_initialized()
    with pytest.raises(ValueError, match="unknown agent"):  # raised in the driver, early
        run_arena("slide", ["nosuchagent", "random"], 2, progress=False, backend="ray")


@needs_ray
def test_keep_builtin_print_undoes_rays_print_patch(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ray's progress bars replace ``builtins.print`` (numba cannot compile kernels that call
    a replaced print); the backend puts the original back and turns the patch off."""
    import builtins

    from ray.experimental import tqdm_ray

    from card_envs.arena.ray_backend import keep_builtin_print

    monkeypatch.delenv("RAY_TQDM_PATCH_PRINT", raising=False)
    monkeypatch.setattr(builtins, "print", tqdm_ray.safe_print)
    keep_builtin_print()
    assert builtins.print is tqdm_ray._print
    assert os.environ["RAY_TQDM_PATCH_PRINT"] == "0"
