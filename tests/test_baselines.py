"""The pretrained baselines shipped in the package: ``make_agent("ppo", env_id)`` loads each
game's (2 players), plays legal moves through the arena, and its JSON says how it was made."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("sb3_contrib", reason="inference needs torch and sb3-contrib")

from agents import make_agent  # noqa: E402
from agents.ppo import BASELINES, baseline_path  # noqa: E402
from card_envs.arena import run_arena  # noqa: E402
from card_envs.core.registry import ENV_IDS  # noqa: E402


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_every_game_ships_a_baseline_that_plays(env_id: str) -> None:
    meta = json.loads((BASELINES / f"{env_id}.json").read_text())
    assert meta["env_id"] == env_id and meta["players"] == 2 and meta["seed"] == 0
    assert meta["command"].startswith("python examples/train_ppo.py --game ")
    agent = make_agent("ppo", env_id)
    assert agent.path == str(baseline_path(env_id))
    options = {"max_turned": 60} if env_id == "op_glad_ijs_v0" else {}
    res = run_arena(env_id, [agent, "random"], games=4, seed=3, progress=False, **options)
    assert res["ppo"].games == 4


def test_no_baseline_for_other_player_counts() -> None:
    with pytest.raises(ValueError, match="no pretrained ppo baseline for slide_v0 with 3"):
        make_agent("ppo", "slide_v0", num_players=3)
