"""The toy game (``tests/toy_cards/``, registered by ``conftest.py`` through its manifest
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
