"""The native PPO stopped and resumed (:mod:`card_envs.rl.ppo.checkpoint`), its pipeline and its
thread plan (:mod:`card_envs.rl.threads`)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from card_envs.agents.weights import read_weights  # noqa: E402
from card_envs.core.errors import OptionError  # noqa: E402
from card_envs.rl.ppo import train_ppo  # noqa: E402
from card_envs.rl.threads import plan_threads  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SMALL = {"num_envs": 64, "n_steps": 8, "minibatch": 128, "evals": 3, "eval_games": 10,
         "pool_every": 2}
TIMINGS = {"wall_seconds", "rollout_seconds", "update_seconds", "env_steps_per_s",
           "eval_seconds"}


def _run(out: Path, game: str = "slide_v0", **kw: Any):
    args: dict[str, Any] = dict(minutes=None, steps=64 * 8 * 12, seed=3, progress=False,
                                torch_threads=1, settings=dict(SMALL))
    settings = kw.pop("settings", {})
    args.update(kw)
    args["settings"].update(settings)
    return train_ppo(game, out_dir=out, **args)


def _history(res: Any) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if k not in TIMINGS} for r in res.history]


def _stop_when(path: Path, rows: int) -> threading.Thread:
    """SIGINT this process once ``path`` (history.json) has ``rows`` rows."""
    def watch() -> None:
        while True:
            try:
                if len(json.loads(path.read_text())) >= rows:
                    break
            except (OSError, ValueError):
                pass
            time.sleep(0.002)
        os.kill(os.getpid(), signal.SIGINT)

    t = threading.Thread(target=watch, daemon=True)
    t.start()
    return t


@pytest.mark.parametrize(("game", "pipeline", "critic", "players"), [
    ("slide_v0", True, "own", 2), ("isflak_v0", False, "own", 2),
    ("op_glad_ijs_v0", True, "full", 2), ("flipology_v0", True, "own", 3),
    ("slide_v0", True, "full", 4)])
def test_a_run_stopped_by_sigint_and_resumed_ends_as_the_run_never_stopped(
        tmp_path: Path, game: str, pipeline: bool, critic: str, players: int) -> None:
    settings = {"pipeline": pipeline, "critic": critic}
    whole = _run(tmp_path / "whole", game, settings=settings, players=players)
    assert whole.stopped is None and whole.updates == 12
    out = tmp_path / "stopped"
    watcher = _stop_when(out / "history.json", 2)  # mid-run: after the second evaluation
    part = _run(out, game, settings=settings, players=players)
    watcher.join(5)
    assert part.stopped == "SIGINT" and 0 < part.updates < 12
    assert (out / "resume" / "state.json").is_file() and part.checkpoint is not None
    assert not (out / "final.safetensors").exists()
    rest = _run(out, game, settings=settings, players=players, resume=True)
    assert rest.stopped is None and rest.updates == whole.updates
    assert rest.env_steps == whole.env_steps and rest.games == whole.games
    a = read_weights(tmp_path / "whole" / "final.safetensors")[0]
    b = read_weights(out / "final.safetensors")[0]
    assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)
    assert _history(rest) == _history(whole)
    assert json.loads((out / "summary.json").read_text())["resumed"] is True


def test_resume_refuses_another_run_with_one_line(tmp_path: Path) -> None:
    out = tmp_path / "run"
    _run(out, steps=64 * 8 * 3)
    cases = [(dict(game="isflak_v0"), "env_id"), (dict(players=3), "num_players"),
             (dict(seed=4), "seed"), (dict(settings={"ent_coef": 0.02}), "setting ent_coef"),
             (dict(samplers=2), "samplers"), (dict(reward_mode="points"), "options")]
    for kw, what in cases:
        with pytest.raises(ValueError) as e:
            _run(out, resume=True, **kw)
        msg = str(e.value)
        assert "cannot resume" in msg and what in msg and "\n" not in msg, msg
    with pytest.raises(FileNotFoundError, match="nothing to resume"):
        _run(tmp_path / "empty", resume=True)
    with pytest.raises(OptionError, match="ray"):
        _run(out, resume=True, ray="local")


def test_a_damaged_checkpoint_is_refused_with_one_line(tmp_path: Path) -> None:
    out = tmp_path / "run"
    _run(out, steps=64 * 8 * 3)
    state = out / "resume" / "state.json"
    folder = out / "resume" / json.loads(state.read_text())["folder"]
    weights = folder / "learner.safetensors"
    good = weights.read_bytes()
    weights.write_bytes(good[: len(good) // 2])  # truncated
    with pytest.raises(ValueError, match="learner.safetensors is damaged"):
        _run(out, resume=True)
    weights.write_bytes(good)
    (folder / "sampler_0.npz").unlink()
    with pytest.raises(ValueError, match="sampler_0.npz is missing"):
        _run(out, resume=True)
    text = state.read_text()
    state.write_text(text[: len(text) // 2])
    with pytest.raises(ValueError, match="state.json is damaged"):
        _run(out, resume=True)
    saved = json.loads(text)
    saved["folder"] = "../../elsewhere"
    state.write_text(json.dumps(saved))
    with pytest.raises(ValueError, match="names no checkpoint folder"):
        _run(out, resume=True)


def test_a_kill_during_a_checkpoint_write_leaves_the_previous_one(tmp_path: Path) -> None:
    out = tmp_path / "run"
    # the second checkpoint's sampler file is written, then the process hangs in the write
    script = f"""
import sys, time
import card_envs.rl.ppo.checkpoint as ck
from card_envs.rl.ppo import train_ppo
calls = []
real = ck.save_npz
def slow(path, arrays):
    real(path, arrays)
    calls.append(path)
    if len(calls) == 3:  # 1st checkpoint: sampler + learner; 2nd: its sampler file
        print("in checkpoint", flush=True)
        time.sleep(60)
ck.save_npz = slow
train_ppo("slide_v0", minutes=None, steps=64 * 8 * 12, seed=3, progress=False,
          torch_threads=1, settings={SMALL!r}, out_dir={str(out)!r})
"""
    p = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                         cwd=ROOT)
    try:
        assert p.stdout is not None
        line = p.stdout.readline()
        assert line.strip() == "in checkpoint", line
        tmp = list((out / "resume").glob(".update_*.tmp"))
        assert tmp, "the kill must land inside a checkpoint write"
        p.send_signal(signal.SIGKILL)
        p.wait(30)
    finally:
        if p.poll() is None:
            p.kill()
    rest = _run(out, resume=True)  # from the first checkpoint
    assert rest.stopped is None and rest.updates == 12
    assert not list((out / "resume").glob(".update_*.tmp"))  # cleaned by the next save


def _cli(*args: str, **env: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "examples/train_ppo.py", *args], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, **env})


def test_ctrl_c_in_the_example_prints_one_line_and_resume_finishes(tmp_path: Path) -> None:
    out = tmp_path / "run"
    args = ["--game", "slide", "--steps", "400000", "--minutes", "0", "--eval-games", "10",
            "--no-progress",
            "--out", str(out), "-p", "num_envs=64", "-p", "n_steps=8", "-p", "minibatch=128"]
    p = _cli(*args)
    try:
        deadline = time.time() + 120
        while not (out / "resume" / "state.json").exists():  # the first checkpoint
            assert p.poll() is None and time.time() < deadline
            time.sleep(0.05)
        p.send_signal(signal.SIGINT)
        stdout, stderr = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 130, stderr
    assert "Traceback" not in stderr
    last = stderr.strip().splitlines()[-1]
    assert last.startswith("stopped by SIGINT after") and "--resume" in last, last
    assert last.endswith("--resume")
    again = _cli(*args[:3], "3000", *args[4:], "--resume")  # a smaller budget: soon done
    stdout, stderr = again.communicate(timeout=240)
    assert again.returncode == 0, stderr
    assert (out / "final.safetensors").is_file()
    refused = _cli(*args, "--resume", "--players", "3")
    _, stderr = refused.communicate(timeout=120)
    assert refused.returncode == 2 and "cannot resume" in stderr
    assert "Traceback" not in stderr and len(stderr.strip().splitlines()) <= 2


def test_the_thread_plan_never_exceeds_a_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    import numba

    cores = len(os.sched_getaffinity(0))
    plan = plan_threads(True)
    assert plan.cap <= min(cores, numba.get_num_threads())
    assert plan.learner + plan.sampler <= max(plan.cap, 2) and plan.learner >= 1
    assert plan.overlap == (plan.cap >= 2)
    one = plan_threads(True, threads=1)
    assert (one.cap, one.overlap, one.learner, one.sampler) == (1, False, 1, 1)
    serial = plan_threads(False, threads=2, torch_threads=1)
    assert not serial.overlap and serial.learner == 1 and serial.sampler <= 2
    old = numba.get_num_threads()
    numba.set_num_threads(1)  # the user's numba cap in this thread
    try:
        assert plan_threads(True).cap == 1
    finally:
        numba.set_num_threads(old)
    for bad in (0, -1, 2.5, "2", True, 10**6):
        with pytest.raises(OptionError, match="threads must be a whole number"):
            plan_threads(True, threads=bad)
        with pytest.raises(OptionError, match="torch_threads must be a whole number"):
            plan_threads(True, torch_threads=bad)


def test_the_run_keeps_to_its_threads_and_restores_them(tmp_path: Path) -> None:
    import numba

    before = (torch.get_num_threads(), numba.get_num_threads())
    res = _run(tmp_path / "run", steps=64 * 8 * 2, threads=1)
    assert res.stopped is None
    assert (torch.get_num_threads(), numba.get_num_threads()) == before
    plan = json.loads((tmp_path / "run" / "summary.json").read_text())["threads"]
    assert plan["cap"] == 1 and plan["overlap"] is False


@pytest.mark.parametrize("value", ["0", "abc", "-2"])
def test_a_bad_numba_thread_count_is_one_clear_error(value: str) -> None:
    r = subprocess.run([sys.executable, "-c", "import card_envs"], cwd=ROOT, text=True,
                       capture_output=True, env={**os.environ, "NUMBA_NUM_THREADS": value})
    assert r.returncode != 0
    assert "NUMBA_NUM_THREADS must be a whole number >= 1" in r.stderr
    assert "numba/np/ufunc" not in r.stderr  # not a crash inside numba


@pytest.mark.parametrize("trainer", ["native", "sb3"])
def test_resume_of_nothing_is_one_line_from_the_example(tmp_path: Path, trainer: str) -> None:
    p = _cli("--game", "slide", "--trainer", trainer, "--minutes", "1", "--no-progress",
             "--out", str(tmp_path / "none"), "--resume")
    _, stderr = p.communicate(timeout=120)
    assert p.returncode == 2 and "nothing to resume" in stderr, stderr
    assert "Traceback" not in stderr and len(stderr.strip().splitlines()) <= 2


def test_a_bad_numba_thread_count_is_one_line_from_the_example() -> None:
    p = _cli("--game", "slide", "--minutes", "1", NUMBA_NUM_THREADS="0")
    _, stderr = p.communicate(timeout=60)
    assert p.returncode == 2, stderr
    assert stderr.strip().splitlines() == [
        "train_ppo.py: error: NUMBA_NUM_THREADS must be a whole number >= 1 (the most numba "
        "threads to use), got '0'"]
