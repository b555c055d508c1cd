"""Gumbel AlphaZero self-play (``card_envs.rl.az``): the run folder and its networks, a resumed
run equal to one never stopped, a kill in the middle of a checkpoint, refused resumes and
settings, any seat count, self-play samples and batched evaluation."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")

from card_envs.agents.net import load_policy  # noqa: E402
from card_envs.agents.registry import make_agent  # noqa: E402
from card_envs.agents.weights import WeightsError  # noqa: E402
from card_envs.core.errors import OptionError  # noqa: E402
from card_envs.rl.az import AZ_DEFAULTS, AZSettings, train_az  # noqa: E402

#: a run small enough for a test: 8 games, 4 simulations, 12 moves a round
SMALL = {"games": 8, "workers": 1, "sims": 4, "considered": 4, "determinizations": 2,
         "steps": 12, "window": 2, "minibatch": 64, "reuse": 2.0, "eval_games": 4,
         "heuristic_games": 4}
TIMING = {"selfplay_seconds", "train_seconds", "eval_seconds", "decisions_per_second",
          "elapsed"}


def _run(out: Path, rounds: int, game: str = "slide_v0", **kw) -> object:
    kw.setdefault("init", "ppo")  # the PPO start: its value-head conversion is covered too
    return train_az(game, rounds=rounds, out_dir=out, settings={**SMALL, **kw.pop("s", {})},
                    progress=False, **kw)


#: a resume test's run: Isflak's games end within two rounds, so samples and updates happen
#: before and after the stop
LIVE = {"game": "isflak_v0", "s": {"steps": 20}}
EVAL = ("vs_start", "net_vs_heuristic", "eval_seconds")


def _same_rows(a: list[dict], b: list[dict], stopped: tuple[int, ...] = ()) -> None:
    """Equal histories but for timings; a run that stopped after round ``r`` in ``stopped``
    evaluated that round (a run's last round always is), the run that went on need not have."""
    assert len(a) == len(b)
    assert any(x["updates"] > 0 for x in a), "the run never trained: the test proves nothing"
    for x, y in zip(a, b):
        skip = TIMING | ({k for k in {*x, *y} if k.startswith(EVAL)}
                         if x["round"] in stopped else set())
        kx = {k: v for k, v in x.items() if k not in skip}
        ky = {k: v for k, v in y.items() if k not in skip}
        assert json.dumps(kx, sort_keys=True) == json.dumps(ky, sort_keys=True)


def test_a_run_writes_its_folder_and_playable_networks(tmp_path: Path) -> None:
    res = _run(tmp_path / "run", 2)
    out = tmp_path / "run"
    for name in ("history.json", "state.json", "final.safetensors", "final.json",
                 "start.safetensors", "learning_curve.png", "checkpoints/round_0002.safetensors"):
        assert (out / name).is_file(), name
    assert len(list((out / "resume").iterdir())) == 1  # only the last round's state is kept
    hist = json.loads((out / "history.json").read_text())
    assert [r["round"] for r in hist] == [1, 2] and hist == json.loads(json.dumps(res.history))
    last = hist[-1]
    for key in ("samples", "policy_loss", "value_loss", "value_corr", "vs_start",
                "vs_start_ci", "net_vs_heuristic", "decisions_per_second"):
        assert key in last, key
    assert 0 <= last["vs_start"] <= 1 and last["vs_start_games"] == 4
    assert "round" in res.table() and res.final_path == out / "final.safetensors"
    pol = load_policy(res.final_path, "slide_v0", 2)
    assert pol.net.value_dim == 2  # one value per seat
    with pytest.raises(WeightsError, match="players"):
        load_policy(res.final_path, "slide_v0", 3)
    with pytest.raises(WeightsError, match="slide_v0"):
        load_policy(res.final_path, "isflak_v0", 2)
    # the network alone (ppo) and under search (az)
    import card_envs

    env = card_envs.make_raw("slide_v0")
    env.reset(seed=1)
    for spec in (f"ppo:path={res.final_path}", f"az:iterations=16,path={res.final_path}"):
        a = make_agent(spec, "slide_v0", seed=0)
        assert env.observe(env.agent_selection)["action_mask"][a.act_env(env)] == 1


def test_resume_equals_an_uninterrupted_run(tmp_path: Path) -> None:
    """Two rounds, stopped, then a third on resume: the same history and the same weights as
    three rounds in one go (one torch thread: the default)."""
    straight = _run(tmp_path / "a", 3, **LIVE)
    _run(tmp_path / "b", 2, **LIVE)
    resumed = train_az("isflak_v0", rounds=3, out_dir=tmp_path / "b",
                       settings={**SMALL, **LIVE["s"]}, resume=True, progress=False)
    _same_rows(straight.history, resumed.history, stopped=(2,))
    wa = load_policy(straight.final_path).net.state_dict()
    wb = load_policy(resumed.final_path).net.state_dict()
    assert all(np.array_equal(wa[k].numpy(), wb[k].numpy()) for k in wa)


def test_a_kill_during_a_checkpoint_leaves_the_last_round(tmp_path: Path) -> None:
    """Round 3's files half written (a kill before ``state.json`` named them): resume
    continues from round 2 and plays round 3 again, as the run would have."""
    out = tmp_path / "run"
    _run(out, 2, **LIVE)
    (out / "resume" / "round_0003").mkdir()
    (out / "resume" / "round_0003" / "optimizer.safetensors").write_bytes(b"\0" * 10)
    (out / "checkpoints" / "round_0003.safetensors").write_bytes(b"trunc")
    res = train_az("isflak_v0", rounds=3, out_dir=out, settings={**SMALL, **LIVE["s"]},
                   resume=True, progress=False)
    assert [r["round"] for r in res.history] == [1, 2, 3]
    load_policy(out / "checkpoints" / "round_0003.safetensors", "isflak_v0", 2)
    straight = _run(tmp_path / "straight", 3, **LIVE)
    _same_rows(straight.history, res.history, stopped=(2,))


def test_resume_refuses_another_run_with_one_line(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with pytest.raises(FileNotFoundError, match="nothing to resume"):
        train_az("slide_v0", rounds=1, out_dir=out, settings=SMALL, resume=True)
    _run(out, 1)
    with pytest.raises(FileExistsError, match="already holds a run"):
        _run(out, 1)
    for kw, what in (({"settings": {**SMALL, "sims": 8}}, "setting sims"),
                     ({"settings": SMALL, "seed": 5}, "seed"),
                     ({"settings": SMALL, "num_players": 3}, "num_players")):
        with pytest.raises(ValueError, match=what) as e:
            train_az("slide_v0", rounds=2, out_dir=out, resume=True, **kw)
        assert "\n" not in str(e.value)
    with pytest.raises(ValueError, match="env_id"):
        train_az("isflak_v0", rounds=2, out_dir=out, settings=SMALL, resume=True)


@pytest.mark.parametrize("bad", [{"sims": 0}, {"sims": math.nan}, {"games": True},
                                 {"lr": math.inf}, {"reuse": -1.0}, {"window": 1.5},
                                 {"workers": 100}, {"considered": "8"}, {"prior_temp": 0}])
def test_settings_are_checked_before_anything_runs(tmp_path: Path, bad: dict) -> None:
    key = next(iter(bad))
    with pytest.raises(OptionError, match=key) as e:
        train_az("slide_v0", rounds=1, out_dir=tmp_path / "x", settings=bad)
    assert "\n" not in str(e.value) and not (tmp_path / "x").exists()


def test_run_arguments_are_checked(tmp_path: Path) -> None:
    out = tmp_path / "x"
    with pytest.raises(OptionError, match="unknown az setting"):
        train_az("slide_v0", rounds=1, out_dir=out, settings={"simulations": 4})
    with pytest.raises(OptionError, match="rounds or minutes"):
        train_az("slide_v0", out_dir=out)
    with pytest.raises(OptionError, match="minutes"):
        train_az("slide_v0", minutes=math.nan, out_dir=out)
    with pytest.raises(OptionError, match="num_players"):
        train_az("slide_v0", rounds=1, out_dir=out, num_players=7)
    with pytest.raises(OptionError, match="games"):
        train_az("slide_v0", rounds=1, out_dir=out, settings={"games": 1, "workers": 2})
    with pytest.raises(ValueError, match="no pretrained ppo baseline"):
        train_az("slide_v0", rounds=1, out_dir=out, num_players=5, init="ppo", settings=SMALL)
    with pytest.raises(FileNotFoundError, match="init"):
        train_az("slide_v0", rounds=1, out_dir=out, init=str(tmp_path / "none"),
                 settings=SMALL)
    assert AZSettings().check().as_dict() == AZ_DEFAULTS


@pytest.mark.parametrize("n", [3, 4])
def test_any_seat_count_from_scratch(tmp_path: Path, n: int) -> None:
    res = _run(tmp_path / "run", 1, game="isflak_v0", init="scratch", num_players=n,
               s={"steps": 40})
    pol = load_policy(res.final_path, "isflak_v0", n)
    assert pol.net.value_dim == n
    row = res.history[0]
    assert row["samples"] > 0 and 0 <= row["vs_start"] <= 1
    a = make_agent(f"az:iterations=16,path={res.final_path}", "isflak_v0", seed=0,
                   num_players=n)
    assert a.evaluator.value_dim == n


def test_self_play_samples(tmp_path: Path) -> None:
    """Samples are legal-move policies summing to 1, targets are win shares summing to 1 with
    the sample's seat first, and a game's samples agree on its result."""
    from card_envs.agents.az_search import NetEvaluator
    from card_envs.agents.net import NetPolicy
    from card_envs.rl.az.selfplay import SelfPlay

    sp = SelfPlay("isflak_v0", {"num_players": 3}, slots=6, first=0, seed=1, sims=4,
                  considered=4, determinizations=1, max_nodes=400, c_visit=50.0, c_scale=0.1,
                  prior_temp=1.0)
    d = sp.play(NetEvaluator(NetPolicy("isflak_v0", 3, value_dim=3)), 60)
    n = len(d["seat"])
    assert n > 50 and len(d["lengths"]) >= 6
    off = np.concatenate([[0], np.cumsum(d["pi_len"])])
    assert np.array_equal(d["pi_len"], d["mask"].sum(1))
    for k in range(n):
        assert math.isclose(d["pi"][off[k]:off[k + 1]].sum(), 1.0, rel_tol=1e-5)
    assert np.allclose(d["z"].sum(1), 1.0) and ((d["z"] >= 0) & (d["z"] <= 1)).all()
    for g in np.unique(d["game"]):
        rows = np.flatnonzero(d["game"] == g)
        absolute = [np.roll(d["z"][r], d["seat"][r]) for r in rows]
        assert all(np.allclose(a, absolute[0]) for a in absolute)


def test_batched_matches_are_symmetric_and_seeded() -> None:
    """A network against itself under the same search: every deal in every seat, a share
    near 1/n, the same result twice."""
    from card_envs.agents.az_search import NetEvaluator
    from card_envs.agents.net import NetPolicy
    from card_envs.rl.az.evaluate import network_match, search_match

    pol = NetPolicy("isflak_v0", 2, value_dim=2)
    ev = NetEvaluator(pol)
    a = search_match("isflak_v0", ev, ev, 6, seed=3, sims=4, determinizations=1)
    b = search_match("isflak_v0", ev, ev, 6, seed=3, sims=4, determinizations=1)
    assert a == b and a["games"] == 12
    assert math.isclose(a["win_share"], 0.5)  # the same player in both seats of each deal
    m = network_match("isflak_v0", pol, "random", 5, seed=1)
    assert m["games"] == 10 and 0 <= m["win_share"] <= 1 and len(m["seat_shares"]) == 2


def test_worker_processes_play_the_same_run_twice(tmp_path: Path) -> None:
    """Two self-play processes (one thread each): a run is reproducible, evaluations included,
    and resumes across a restart of the processes."""
    two = {"workers": 2, "steps": 20}
    a = _run(tmp_path / "a", 3, game="isflak_v0", s=two)
    _run(tmp_path / "b", 2, game="isflak_v0", s=two)
    b = train_az("isflak_v0", rounds=3, out_dir=tmp_path / "b", settings={**SMALL, **two},
                 resume=True, progress=False)
    _same_rows(a.history, b.history, stopped=(2,))
