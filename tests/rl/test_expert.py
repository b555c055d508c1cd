"""Expert iteration (card_envs.rl.expert): self-play samples, seeds, the run folder, resume,
bad settings."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")

from card_envs.core.errors import OptionError  # noqa: E402
from card_envs.rl.expert import expert_iteration, self_play_games  # noqa: E402

GAME = "isflak_v0"
TINY = {"games": 3, "sims": 16, "determinizations": 2, "eval_games": 2, "eval_sims": 8,
        "heuristic_games": 2, "minibatch": 64}


def _task(games: list[int], seed: int = 3) -> dict:
    from card_envs.agents.ppo import baseline_path

    return {"env_id": GAME, "path": str(baseline_path(GAME)), "sims": 16, "dets": 2,
            "c_puct": 0.5, "explore": 4, "seed": seed, "round": 1, "games": games,
            "options": {}}


def test_self_play_samples_are_targets_of_legal_moves() -> None:
    d = self_play_games(_task([0, 1]))
    n = len(d["z"])
    assert n > 10 and d["obs"].shape[0] == d["mask"].shape[0] == d["pi"].shape[0] == n
    pi = d["pi"].astype(np.float64)
    assert np.allclose(pi.sum(1), 1.0, atol=1e-2)
    assert not (pi[d["mask"] == 0] > 0).any()  # visits only on legal moves
    assert set(np.unique(d["z"])) <= {-1.0, 0.0, 1.0}
    assert ((d["q"] >= 0) & (d["q"] <= 1)).all()
    for g in np.unique(d["game"]):  # 2 players: one seat's result is the other's negative
        z = {int(s): float(v) for s, v in zip(d["seat"][d["game"] == g], d["z"][d["game"] == g])}
        assert len(z) == 2 and z[0] == -z[1]


def test_self_play_depends_on_the_seed_not_on_the_split() -> None:
    whole = self_play_games(_task([0, 1]))
    parts = [self_play_games(_task([0])), self_play_games(_task([1]))]
    for k in ("obs", "mask", "pi", "z", "seat"):
        assert np.array_equal(whole[k], np.concatenate([p[k] for p in parts])), k
    other = self_play_games(_task([0, 1], seed=4))
    assert not np.array_equal(other["obs"], whole["obs"]) or \
        not np.array_equal(other["pi"], whole["pi"])


def test_a_run_writes_its_folder_and_resumes(tmp_path: Path) -> None:
    out = tmp_path / "run"
    res = expert_iteration(GAME, rounds=1, out_dir=out, settings=TINY, workers=1,
                           progress=False)
    for name in ("final.safetensors", "final.json", "history.json", "state.json",
                 "buffer.npz", "learning_curve.png", "checkpoints/round_0001.safetensors"):
        assert (out / name).is_file(), name
    row = res.history[0]
    assert row["round"] == 1 and row["samples"] > 0 and math.isfinite(row["policy_loss"])
    assert 0 <= row["vs_start_win_rate"] <= 1 and 0 <= row["net_vs_heuristic"] <= 1
    assert "round" in res.table()
    # the saved network says its value head needs no shaping term; az and ppo load it
    assert json.loads((out / "final.json").read_text())["info"]["settings"]["shaping"] == 0
    from card_envs.agents import make_agent

    az = make_agent(f"az:iterations=8,path={res.final_path}", GAME, seed=0)
    assert az.shaping == 0.0
    with pytest.raises(FileExistsError, match="already holds a run"):
        expert_iteration(GAME, rounds=1, out_dir=out, settings=TINY, workers=1,
                         progress=False)
    res2 = expert_iteration(GAME, rounds=2, out_dir=out, workers=1, progress=False,
                            resume=True)
    assert [r["round"] for r in res2.history] == [1, 2]
    assert res2.settings["games"] == TINY["games"]  # the run's settings are kept
    assert (out / "checkpoints/round_0002.safetensors").is_file()


@pytest.mark.parametrize("bad", [{"sims": float("nan")}, {"sims": 0}, {"games": -1},
                                 {"lr": float("inf")}, {"value_mix": 2.0}, {"bogus": 1},
                                 {"games": True}])
def test_bad_settings_are_refused_before_anything_runs(bad: dict, tmp_path: Path) -> None:
    with pytest.raises(OptionError):
        expert_iteration(GAME, rounds=1, out_dir=tmp_path / "x", settings=bad, workers=1,
                         progress=False)
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize("kw", [{"rounds": 0}, {"minutes": float("nan")}, {"workers": 0}])
def test_bad_run_arguments_are_refused(kw: dict, tmp_path: Path) -> None:
    with pytest.raises(OptionError):
        expert_iteration(GAME, out_dir=tmp_path / "x", progress=False, **kw)
