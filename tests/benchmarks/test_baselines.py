"""The pretrained baselines shipped in the package: ``make_agent("ppo", env_id, num_players=n)``
loads each game's network for 2, 3 and 4 seats from weights-only safetensors files (no pickle,
torch alone), plays legal moves through the arena, and its JSON says how it was made and how
it scored."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("torch", reason="the ppo agent runs its network with torch")

from card_envs.agents import make_agent  # noqa: E402
from card_envs.agents.ppo import BASELINES, baseline_path  # noqa: E402
from card_envs.arena import run_arena  # noqa: E402
from card_envs.core.registry import ENV_IDS, env_class  # noqa: E402

SEATS = (2, 3, 4)


def _stem(env_id: str, n: int) -> str:
    return env_id if n == 2 else f"{env_id}_{n}p"


@pytest.mark.parametrize("n", SEATS)
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_every_game_ships_a_baseline_that_plays(env_id: str, n: int) -> None:
    meta = json.loads((BASELINES / f"{_stem(env_id, n)}.json").read_text())
    assert meta["env_id"] == env_id and meta["num_players"] == n
    assert meta["game_version"] == env_class(env_id).game_class.version
    assert meta["info"]["seed"] == 0
    assert meta["info"]["command"].startswith("python examples/train_ppo.py --game ")
    assert (f"--players {n}" in meta["info"]["command"]) == (n != 2)
    assert "heuristic" in meta["arena"]  # measured by benchmarks/baselines.py
    assert meta["arena"]["heuristic"]["games"] >= 200
    path = baseline_path(env_id, n)
    assert path.stat().st_size <= 2 << 20
    agent = make_agent("ppo", env_id, num_players=n)
    assert agent.path == str(path) and agent.native
    options = {"max_turned": 60} if env_id == "op_glad_ijs_v0" else {}
    res = run_arena(env_id, [agent] + ["random"] * (n - 1), games=n, num_players=n, seed=3,
                    progress=False, **options)
    assert res["ppo"].games == n


def test_only_weights_files_ship() -> None:
    names = sorted(p.name for p in BASELINES.iterdir())
    stems = [_stem(e, n) for e in ENV_IDS for n in SEATS]
    assert names == sorted([f"{s}.safetensors" for s in stems] + [f"{s}.json" for s in stems])


def test_no_baseline_for_other_player_counts() -> None:
    with pytest.raises(ValueError, match="no pretrained ppo baseline for slide_v0 with 5 "
                                         r"players \(shipped for 2, 3, 4 players\)"):
        make_agent("ppo", "slide_v0", num_players=5)
    two = baseline_path("slide_v0")
    with pytest.raises(ValueError, match="players"):
        make_agent(f"ppo:path={two}", "slide_v0", num_players=3)
