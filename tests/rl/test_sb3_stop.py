"""Stopping and resuming the stable-baselines3 trainer (card_envs.rl.sb3.train): a real SIGINT
in the middle of a run saves a checkpoint and returns; ``resume=True`` continues the weights,
the optimizer, the steps budget and its schedule, the updates and the history to the end;
another run's folder or a damaged checkpoint is refused with one line."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest

pytest.importorskip("sb3_contrib", reason="train extra")
pytest.importorskip("torch", reason="train extra")

from card_envs.rl import train  # noqa: E402
from card_envs.rl.sb3.callback import SelfPlayCallback  # noqa: E402

ROLLOUT = 16 * 32  # learner steps per update: 16 games, 32 steps each
EPOCHS, MINIBATCHES = 4, 2
KW = dict(minutes=None, steps=8 * ROLLOUT, seed=3, eval_games=4, progress=False,
          torch_threads=1, pool_every=1, num_envs=16,
          ppo={"n_steps": 32, "batch_size": ROLLOUT // MINIBATCHES, "n_epochs": EPOCHS,
               "evals": 4, "pool_size": 2})


def test_a_signal_stops_the_run_and_resume_finishes_its_budget(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "run"
    end = SelfPlayCallback._on_rollout_end

    def interrupted(self: SelfPlayCallback) -> None:  # Ctrl-C during the 3rd rollout's update
        end(self)
        if self.updates == 3:
            os.kill(os.getpid(), signal.SIGINT)

    monkeypatch.setattr(SelfPlayCallback, "_on_rollout_end", interrupted)
    before = signal.getsignal(signal.SIGINT)  # not always Python's default (pytest-xdist)
    res = train("slide_v0", out_dir=out, **KW)
    monkeypatch.undo()
    assert signal.getsignal(signal.SIGINT) is before  # handlers back
    # the 3rd update was finished and saved; the 4th rollout, cut at its first step, dropped
    assert res.stopped == "SIGINT" and res.updates == 3 and res.learner_steps == 3 * ROLLOUT
    assert res.checkpoint == out / "resume" / f"step_{3 * ROLLOUT}" / "model.zip"
    assert res.final_path == res.checkpoint and not (out / "final.zip").exists()
    line = res.stop_line()
    assert "\n" not in line and line.startswith("stopped by SIGINT at 1,536 learner steps")
    assert "resume=True" in line
    state = json.loads((out / "state.json").read_text())
    assert state["counters"]["learner_steps"] == 3 * ROLLOUT
    assert state["counters"]["sb3_updates"] == 3 * EPOCHS
    before = json.loads((out / "history.json").read_text())
    assert [h["learner_steps"] for h in before] == [0, 2 * ROLLOUT]

    res = train("slide_v0", out_dir=out, resume=True, **KW)
    model = res.model
    assert res.stopped is None and res.learner_steps == KW["steps"] and res.updates == 8
    # the budget is the original one (SB3's progress_remaining went on to 0), the optimizer's
    # moments went on: Adam counted every gradient step of both sessions
    assert model._total_timesteps == KW["steps"] and model._current_progress_remaining == 0
    assert model._n_updates == 8 * EPOCHS
    assert {int(s["step"]) for s in model.policy.optimizer.state.values()} == \
        {8 * EPOCHS * MINIBATCHES}
    assert res.history[:len(before)] == before  # the history goes on
    assert [h["learner_steps"] for h in res.history] == [0, 2 * ROLLOUT, 4 * ROLLOUT,
                                                         6 * ROLLOUT, 8 * ROLLOUT]
    assert res.history[-1]["updates"] == 8 and (out / "final.zip").is_file()
    assert len((out / "history.csv").read_text().splitlines()) == 1 + len(res.history)
    assert [p.name for p in (out / "tb").iterdir()] == ["ppo_1"]  # one TensorBoard run
    assert [p.name for p in (out / "resume").iterdir()] == [f"step_{8 * ROLLOUT}"]


def test_resume_refuses_another_run_or_a_damaged_checkpoint(tmp_path: Path) -> None:
    out = tmp_path / "run"
    kw = {**KW, "steps": 2 * ROLLOUT, "ppo": {**KW["ppo"], "evals": 1}}
    with pytest.raises(FileNotFoundError, match="nothing to resume"):
        train("slide_v0", out_dir=out, resume=True, **kw)
    train("slide_v0", out_dir=out, **kw)
    for change, what in (({"players": 3}, "num_players"), ({"seed": 4}, "seed"),
                         ({"steps": 4 * ROLLOUT}, "setting steps"),
                         ({"ppo": {**kw["ppo"], "ent_coef": 0.0}}, "setting ent_coef"),
                         ({"reward_mode": "points"}, "options")):
        with pytest.raises(ValueError, match=what) as e:
            train("slide_v0", out_dir=out, resume=True, **{**kw, **change})
        assert "\n" not in str(e.value)
    with pytest.raises(ValueError, match="env_id"):
        train("isflak_v0", out_dir=out, resume=True, **kw)
    with pytest.raises(ValueError, match="exclude"):
        train("slide_v0", out_dir=out, resume=True, overwrite=True, **kw)

    text = (out / "state.json").read_text()
    state = json.loads(text)
    folder = out / "resume" / state["resume"]

    def refused(what: str) -> None:
        with pytest.raises(ValueError, match=what) as e:
            train("slide_v0", out_dir=out, resume=True, **kw)
        assert "\n" not in str(e.value)
        (out / "state.json").write_text(text)

    (out / "state.json").write_text(json.dumps({**state, "game_version": "0.0"}))
    refused("game_version")
    (out / "state.json").write_text(text[:50])
    refused("state.json is damaged")
    model = (folder / "model.zip").read_bytes()
    (folder / "model.zip").write_bytes(model[:1000])
    refused("model.zip is damaged")
    (folder / "model.zip").write_bytes(b"\0" * len(model))  # the size it had, not a zip
    refused("model.zip is damaged")
    (folder / "model.zip").unlink()
    refused("model.zip is missing")
    (folder / "model.zip").write_bytes(model)
    rng = (folder / "rng.npz").read_bytes()
    (folder / "rng.npz").write_bytes(b"\0" * len(rng))
    refused("rng.npz is damaged")
    (folder / "rng.npz").write_bytes(rng)
    res = train("slide_v0", out_dir=out, resume=True, **kw)  # whole again: nothing left to do
    assert res.stopped is None and res.learner_steps == 2 * ROLLOUT and res.updates == 2
