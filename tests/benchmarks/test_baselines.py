"""The pretrained baselines shipped in the package: ``make_agent("ppo", env_id)`` loads each
game's (2 players) from weights-only safetensors files (no pickle, torch alone), plays legal
moves through the arena, and its JSON says how it was made and how it scored."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("torch", reason="the ppo agent runs its network with torch")

from card_envs.agents import make_agent  # noqa: E402
from card_envs.agents.ppo import BASELINES, baseline_path  # noqa: E402
from card_envs.arena import run_arena  # noqa: E402
from card_envs.core.registry import ENV_IDS, env_class  # noqa: E402


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_every_game_ships_a_baseline_that_plays(env_id: str) -> None:
    meta = json.loads((BASELINES / f"{env_id}.json").read_text())
    assert meta["env_id"] == env_id and meta["num_players"] == 2
    assert meta["game_version"] == env_class(env_id).game_class.version
    assert meta["info"]["seed"] == 0
    assert meta["info"]["command"].startswith("python examples/train_ppo.py --game ")
    assert "heuristic" in meta["arena"]  # measured by benchmarks/baselines.py
    path = baseline_path(env_id)
    assert path.stat().st_size <= 2 << 20
    agent = make_agent("ppo", env_id)
    assert agent.path == str(path) and agent.native
    options = {"max_turned": 60} if env_id == "op_glad_ijs_v0" else {}
    res = run_arena(env_id, [agent, "random"], games=4, seed=3, progress=False, **options)
    assert res["ppo"].games == 4


def test_only_weights_files_ship() -> None:
    names = sorted(p.name for p in BASELINES.iterdir())
    assert names == sorted([f"{e}.safetensors" for e in ENV_IDS] + [f"{e}.json" for e in ENV_IDS])


def test_no_baseline_for_other_player_counts() -> None:
    with pytest.raises(ValueError, match="no pretrained ppo baseline for slide_v0 with 3"):
        make_agent("ppo", "slide_v0", num_players=3)
