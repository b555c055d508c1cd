"""The toy game (``tests/support/toy_cards/``, registered by ``conftest.py`` through its manifest
alone) works in every layer: the kit (``test_kit.py`` runs it with the built-in games), the
batched engine, the agents (random, MCTS, IS-MCTS), the arena with worker processes, and the
golden playthroughs (``tests/playthroughs/toy_v0-2p.txt``)."""

from __future__ import annotations

import numpy as np

import card_envs
from card_envs.agents import agent_names
from card_envs.arena import run_arena


def test_registered_through_the_manifest() -> None:
    assert "toy_v0" in card_envs.env_ids() and "toy_v0" not in card_envs.ENV_IDS
    assert card_envs.resolve_env_id("toy") == "toy_v0"
    assert "heuristic" not in agent_names("toy_v0")  # its manifest names none
    env = card_envs.make("toy", num_players=3)
    env.reset(seed=0)
    assert env.agents == ["player_0", "player_1", "player_2"]


def test_batched_engine_plays_whole_games() -> None:
    vec = card_envs.vector.make("toy_v0", num_envs=512, seed=3)  # parallel driver (B >= 128)
    done = 0
    for _ in range(6 * 20):
        _, _, _, rewards, term, trunc = vec.step(vec.sample_actions())
        assert not trunc.any()
        assert np.all(rewards[term].sum(axis=1) <= 0)  # win mode: +1 winners, -1 others
        done += int(term.sum())
    assert done == 512 * 20  # every game lasts exactly 6 steps at two seats


def _untimed(log: list[dict]) -> list[dict]:
    return [{k: v for k, v in g.items() if k != "think_ms"} for g in log]


def test_search_beats_random_in_the_arena() -> None:
    res = run_arena("toy_v0", ["random", "mcts:iterations=300"], 200, seed=1, progress=False)
    rnd, mcts = res.stats
    assert mcts.games == rnd.games == 200
    assert mcts.ci95[0] > 0.5, f"MCTS won {mcts.win_rate:.3f} {mcts.ci95} against random"


def test_arena_with_spawned_workers_equals_one_process() -> None:
    """Workers are spawned processes: the toy game reaches them through its manifest."""
    specs = ["random", "ismcts:iterations=100"]
    two = run_arena("toy_v0", specs, 40, seed=1, workers=2, progress=False)
    one = run_arena("toy_v0", specs, 40, seed=1, workers=1, progress=False)
    assert _untimed(two.log) == _untimed(one.log) and len(one.log) == 40


def test_the_benchmarks_measure_a_game_named_in_the_environment(tmp_path) -> None:
    """A fresh process (here the throughput benchmark) learns of the toy from its folder alone:
    ``CARD_ENVS_GAMES=toy_cards`` and the folder on the path."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    tests = Path(__file__).resolve().parents[1]
    out = tmp_path / "bench.json"
    env = {**os.environ, "CARD_ENVS_GAMES": "toy_cards",
           "PYTHONPATH": os.pathsep.join([str(tests / "support"),
                                          os.environ.get("PYTHONPATH", "")])}
    cmd = [sys.executable, str(tests.parent / "benchmarks" / "throughput.py"), "--games",
           "toy_v0", "--seconds", "0.1", "--repeats", "1", "--batch-sizes", "256",
           "--json", str(out)]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env)
    assert run.returncode == 0, run.stderr[-2000:]
    rows = {(m["game"], m["variant"]) for m in json.loads(out.read_text())["measurements"]}
    assert {("toy_v0", "env()"), ("toy_v0", "Engine"), ("toy_v0", "vector")} <= rows


def test_the_play_server_offers_and_plays_it() -> None:
    """The play page offers the toy and a whole game is played through the server's API, its
    picture drawn by the toy's own view."""
    import random

    from starlette.testclient import TestClient

    from card_envs.ui.server import create_app

    client = TestClient(create_app())
    offer = client.get("/api/config").json()["games"]
    assert {"env_id": "toy_v0", "name": "toy", "min_players": 2, "max_players": 3} in offer
    r = client.post("/api/games", json={"game": "toy", "vs": "mcts:iterations=50", "seed": 3,
                                        "seat": 0})
    assert r.status_code == 201, r.text
    view, rng = r.json(), random.Random(0)
    assert view["svg"].startswith("<svg") and "tricks" in view["svg"]
    while not view["over"]:
        move = rng.choice(view["legal"])
        r = client.post(f"/api/games/{view['id']}/move",
                        json={"action": move["action"], "turn": view["turn"]})
        assert r.status_code == 200, r.text
        view = r.json()
    assert view["turn"] == 6 and len(view["result"]["points"]) == 2  # three cards each
