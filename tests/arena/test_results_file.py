"""Results files are input: ``ArenaResult.from_json`` / ``load`` check them against the schema
(keys, types, ranges, the game's options, agent specs as the CLI parses them) and ``rerun``
takes from them only the run's settings: never an output folder, never a model file unless the
caller trusts it."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from card_envs import OptionError, StateDictError
from card_envs.agents.ppo import baseline_path
from card_envs.arena import ArenaResult, rerun, run_arena


@pytest.fixture(scope="module")
def good() -> dict[str, Any]:
    res = run_arena("slide", ["random", "heuristic"], 4, seed=2, progress=False,
                    start_player="random")
    return json.loads(json.dumps(res.to_json()))


def tampered(d: dict[str, Any], **changes: Any) -> dict[str, Any]:
    out = copy.deepcopy(d)
    out.update(changes)
    return out


def test_a_real_file_round_trips(good: dict[str, Any], tmp_path: Path) -> None:
    res = ArenaResult.from_json(good)
    assert res.to_json() == good and res.from_file
    res.save(tmp_path / "r.json")
    assert ArenaResult.load(tmp_path / "r.json").to_json() == good


def test_tampered_settings_are_refused(good: dict[str, Any]) -> None:
    """What used to override the run: game_options holding run settings, a replays folder,
    agent specs that crash, options that read files, and plain type and range errors."""
    cases = [
        ({"game_options": {"agents": ["random"] * 2}}, "unknown option"),
        ({"game_options": {"replays": "/tmp/anywhere"}}, "unknown option"),
        ({"game_options": {"workers": 64}}, "unknown option"),
        ({"game_options": {"num_players": 3}}, "num_players"),
        ({"game_options": {"start_player": 9}}, "start_player"),
        ({"game_options": []}, "game_options must be an object"),
        ({"agent_specs": ["mcts:c=nan", "random"]}, "c must be a finite number"),
        ({"agent_specs": ["mcts:iterations=10**9", "random"]}, "iterations must be"),
        ({"agent_specs": ["grandmaster", "random"]}, "unknown agent"),
        ({"agent_specs": []}, "empty"),
        ({"env_id": "../../etc"}, "registered env id"),
        ({"env_id": "chess_v0"}, "registered env id"),
        ({"num_players": 9}, "num_players"),
        ({"num_players": True}, "num_players"),
        ({"games": 0}, "games"),
        ({"games": 10**12}, "games"),
        ({"seed": -1}, "seed"),
        ({"seed": 2**64}, "seed"),
        ({"seed": 1.5}, "seed"),
        ({"workers": 0}, "workers"),
        ({"elapsed": -1}, "elapsed"),
        ({"deal_seeds": [1, 2, 3]}, "deal_seeds"),
        ({"extra": 1}, "unknown key"),
        ({"versions": {"x": 1}}, "versions"),
        ({"format": "card-envs-arena/1"}, "not an arena result"),
        ({"lineups": [["random", "nobody"]]}, "lineups"),
        ({"total_games": 5}, "log must have 5"),
        ({"options": {"num_players": 2, "start_player": 0, "reward_mode": "win",
                      "deck": "/etc/passwd"}}, "unknown option"),
    ]
    for change, words in cases:
        with pytest.raises(StateDictError, match=words):
            ArenaResult.from_json(tampered(good, **change))
    d = tampered(good)
    d["agents"][0]["win_rate"] = float("nan")
    with pytest.raises(StateDictError, match=r"agents\[0\].win_rate"):
        ArenaResult.from_json(d)
    d = tampered(good)
    d["log"][3]["seats"] = [["random"], "heuristic"]  # unhashable: found by the fuzz
    with pytest.raises(StateDictError, match=r"log\[3\].seats\[0\] must be an agent label"):
        ArenaResult.from_json(d)
    d = tampered(good)
    d["log"][1]["seats"] = ["random", "x" * 5000]
    with pytest.raises(StateDictError, match=r"log\[1\].seats"):
        ArenaResult.from_json(d)
    d = tampered(good)
    deep: Any = 1
    for _ in range(20):
        deep = [deep]
    d["log"][0]["points"] = [1, deep]
    with pytest.raises(StateDictError, match="nested deeper"):
        ArenaResult.from_json(d)
    with pytest.raises(StateDictError, match="JSON object"):
        ArenaResult.from_json([good])


def test_if_it_fits_deck_path_in_a_result_is_never_read(tmp_path: Path) -> None:
    res = run_arena("if_it_fits", ["random"], 2, seed=0, progress=False)
    d = res.to_json()
    d["game_options"] = {"deck": str(tmp_path / "deck.json")}
    with pytest.raises(StateDictError, match="as data"):
        ArenaResult.from_json(d)


def test_bad_files_are_one_clear_error(good: dict[str, Any], tmp_path: Path) -> None:
    p = tmp_path / "r.json"
    for raw, words in ((b"\xff\xfe{}", "UTF-8"), (b"{" * 100000, "not a JSON|nested"),
                       (json.dumps(good).replace('"seed": 2', '"seed": ' + "9" * 5000)
                        .encode(), "digits"),
                       (json.dumps(good).replace('"elapsed": ', '"elapsed": NaN, "x": ')
                        .encode(), "NaN"),
                       (b"[]", "JSON object")):
        p.write_bytes(raw)
        with pytest.raises(StateDictError, match=words):
            ArenaResult.load(p)


def test_rerun_writes_only_where_the_caller_says(good: dict[str, Any], tmp_path: Path) -> None:
    res = ArenaResult.from_json(good)
    out = tmp_path / "mine"
    again = rerun(res, replays=out)
    assert again.untimed_log() == res.untimed_log()
    written = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    assert written and all(p.parts[0] == "mine" for p in written)


def test_rerun_loads_model_files_of_a_file_only_when_trusted(tmp_path: Path) -> None:
    path = str(baseline_path("slide_v0"))
    res = run_arena("slide", [f"ppo:{path}", "random"], 2, seed=0, progress=False)
    assert not res.from_file
    rerun(res)  # built here: its model files are the caller's own
    back = ArenaResult.from_json(json.loads(json.dumps(res.to_json())))
    with pytest.raises(OptionError, match="allow_model_files=True"):
        rerun(back)
    assert rerun(back, allow_model_files=True).untimed_log() == res.untimed_log()
