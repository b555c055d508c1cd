"""Stopping and resuming the self-play trainer for real: Ctrl-C (to the whole process group, as
a terminal sends it) and SIGTERM stop ``examples/train_az.py`` with one line and exit codes
130 / 143, the printed command continues the run; SIGKILLs at every write of a checkpoint
leave a run that resumes; resumes of another run or of a damaged one fail with one line."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "examples" / "train_az.py"
#: rounds of a fraction of a second (no evaluations but the last round's)
TINY = {"games": 8, "sims": 4, "considered": 4, "determinizations": 2, "steps": 20,
        "window": 2, "minibatch": 64, "reuse": 2.0, "eval_games": 0, "heuristic_games": 0}


def _argv(out: Path, rounds: int, workers: int, *extra: str) -> list[str]:
    s = [w for k, v in {**TINY, "workers": workers}.items() for w in ("-s", f"{k}={v}")]
    return ["--game", "isflak", "--rounds", str(rounds), "--out", str(out), "--no-progress",
            *s, *extra]


def _start(argv: list[str]) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, str(SCRIPT), *argv], cwd=ROOT, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)  # its own process group, as in a terminal


def _round(out: Path) -> int:
    try:
        return int(json.loads((out / "state.json").read_text())["round"])
    except (OSError, ValueError, KeyError):
        return 0


def _wait_for_round(p: subprocess.Popen, out: Path, r: int, timeout: float = 240) -> None:
    end = time.monotonic() + timeout
    while _round(out) < r:
        assert p.poll() is None, p.communicate()
        assert time.monotonic() < end, "the run saved no round in time"
        time.sleep(0.05)


@pytest.mark.parametrize("sig,workers", [(signal.SIGINT, 2), (signal.SIGTERM, 1)],
                         ids=["SIGINT-2-workers", "SIGTERM-1-worker"])
def test_a_signal_stops_the_cli_with_one_line_and_the_printed_command_resumes(
        tmp_path: Path, sig: signal.Signals, workers: int) -> None:
    out = tmp_path / "run"
    p = _start(_argv(out, 1000, workers))
    _wait_for_round(p, out, 2)
    os.killpg(p.pid, sig)  # the learner and its workers, as Ctrl-C in a terminal
    stdout, stderr = p.communicate(timeout=120)
    assert p.returncode == 128 + sig, (stdout, stderr)
    assert "Traceback" not in stdout + stderr and stdout == ""
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"stopped by {sig.name} "), stderr
    saved = _round(out)
    assert f"{out} holds round {saved}" in lines[0] or f"after round {saved}:" in lines[0]
    hint = lines[0].split("continue with: ", 1)[1]
    words = shlex.split(hint)
    assert words[:2] == ["python", "examples/train_az.py"] and words[-1] == "--resume"
    words[words.index("--rounds") + 1] = str(saved + 1)  # finish soon
    done = subprocess.run([sys.executable, str(SCRIPT), *words[2:]], cwd=ROOT, text=True,
                          capture_output=True, timeout=300)
    assert done.returncode == 0, done.stderr
    hist = json.loads((out / "history.json").read_text())
    assert [r["round"] for r in hist] == list(range(1, saved + 2))
    assert (out / "final.safetensors").is_file() and _round(out) == saved + 1
    if sig == signal.SIGINT:  # the worker processes ignored the terminal's Ctrl-C
        assert "KeyboardInterrupt" not in stderr


def test_a_second_ctrl_c_stops_at_once_with_one_line(tmp_path: Path) -> None:
    out = tmp_path / "run"
    p = _start(_argv(out, 1000, 2))
    _wait_for_round(p, out, 1)
    os.killpg(p.pid, signal.SIGINT)
    os.killpg(p.pid, signal.SIGINT)
    stdout, stderr = p.communicate(timeout=120)
    assert p.returncode == 130 and "Traceback" not in stdout + stderr, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(("interrupted", "stopped by SIGINT")), stderr
    assert lines[0].endswith("--resume")


#: a run whose every file replacement and folder removal is announced (to the test, which
#: kills it there) and slowed down
DRIVER = """
import os, shutil, sys, time
from pathlib import Path

def announced(f, what):
    def g(*a, **k):
        print(what, a[1] if what == "write" else a[0], flush=True)
        time.sleep(0.03)
        return f(*a, **k)
    return g

os.replace = announced(os.replace, "write")
shutil.rmtree = announced(shutil.rmtree, "remove")
from card_envs.rl.az import train_az

out = Path(sys.argv[1])
train_az("isflak_v0", rounds=int(sys.argv[2]), out_dir=out, settings=%r, progress=False,
         resume=(out / "state.json").exists())
print("finished", flush=True)
"""


def test_sigkill_at_any_write_of_a_checkpoint_leaves_a_run_that_resumes(tmp_path: Path
                                                                         ) -> None:
    """A run killed (SIGKILL) at a write of its round's checkpoint (the 1st: the round's
    network, 2nd: the optimizer, [3rd, 4th: the replay window,] 5th: the games, 6th:
    history.json, 7th: state.json, 8th: the removal of the previous round's folder): each
    time the next run resumes from the last complete round, and the run ends with every
    round once."""
    from card_envs.rl.az.run_folder import saved_round

    out = tmp_path / "run"
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER % {**TINY, "workers": 1})
    first = subprocess.run([sys.executable, str(driver), str(out), "1"], text=True,
                           capture_output=True, timeout=300)
    assert first.returncode == 0 and _round(out) == 1, first.stderr
    seen = set()
    for target in (1, 2, 5, 6, 7, 8):
        before = saved_round(out)
        p = subprocess.Popen([sys.executable, str(driver), str(out), "1000"], text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             start_new_session=True)
        n = 0
        for line in p.stdout:
            if line.startswith(("write", "remove")) and str(out) in line:
                n += 1
                if n == target:
                    os.killpg(p.pid, signal.SIGKILL)
                    seen.add(Path(line.split(maxsplit=1)[1].strip()).name)
                    break
        _, err = p.communicate(timeout=60)
        assert p.returncode == -signal.SIGKILL, err  # it resumed and reached that write
        assert saved_round(out) in (before, before + 1)
    assert {"state.json", "history.json", "optimizer.safetensors"} <= seen, seen
    assert any(name.startswith("round_") for name in seen)  # a removal or the network
    last = saved_round(out)
    end = subprocess.run([sys.executable, str(driver), str(out), str(last + 1)], text=True,
                         capture_output=True, timeout=300)
    assert end.returncode == 0, end.stderr
    hist = json.loads((out / "history.json").read_text())
    assert [r["round"] for r in hist] == list(range(1, last + 2))
    assert len(list((out / "resume").iterdir())) == 1


TIMING = {"selfplay_seconds", "train_seconds", "eval_seconds", "decisions_per_second",
          "elapsed"}


def _rows(history: list[dict]) -> list[str]:
    """The history without timings and evaluations (a stopped round skips its evaluation)."""
    return [json.dumps({k: v for k, v in r.items() if k not in TIMING
                        and not k.startswith(("vs_start", "net_vs_heuristic"))},
                       sort_keys=True) for r in history]


@pytest.mark.parametrize("when", ["self-play", "update"])
def test_a_stopped_run_resumes_as_if_never_stopped(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch,
                                                   when: str) -> None:
    """SIGINT in round 2's self-play drops the round (round 1 stays saved); in its update, the
    round is finished and saved. Either way the resumed run equals one never stopped."""
    import card_envs.rl.az.train as az_train
    from card_envs.rl.az import train_az
    from card_envs.rl.az.workers import _Local

    s = {**TINY, "workers": 1, "eval_games": 2}
    straight = train_az("isflak_v0", rounds=3, out_dir=tmp_path / "a", settings=s,
                        progress=False, init="ppo")  # a start that is the same every time
    calls = {"play": 0, "update": 0}
    handle, update = _Local.handle, az_train.update

    def play(self: _Local, cmd: str, arg: object) -> object:
        calls["play"] += cmd == "play"
        if cmd == "play" and calls["play"] == TINY["steps"] + 5:  # round 2, 5th move
            os.kill(os.getpid(), signal.SIGINT)
        return handle(self, cmd, arg)

    def updating(*a: object, **k: object) -> object:
        calls["update"] += 1
        if calls["update"] == 1:  # round 2's (no game ended in round 1)
            os.kill(os.getpid(), signal.SIGINT)
        return update(*a, **k)

    if when == "self-play":
        monkeypatch.setattr(_Local, "handle", play)
    else:
        monkeypatch.setattr(az_train, "update", updating)
    out = tmp_path / "b"
    res = train_az("isflak_v0", rounds=3, out_dir=out, settings=s, progress=False,
                   init="ppo", command="python examples/train_az.py --game isflak --rounds 3")
    monkeypatch.undo()
    saved = 1 if when == "self-play" else 2
    assert res.stopped == "SIGINT" and res.rounds_saved == saved and _round(out) == saved
    assert res.dropped == (when == "self-play") and not (out / "final.safetensors").exists()
    assert res.stop_line().endswith("continue with: python examples/train_az.py --game "
                                    "isflak --rounds 3 --resume")
    assert ("not saved" in res.stop_line()) == (when == "self-play")
    assert "vs_start" not in res.history[-1] or when == "self-play"  # skipped evaluation
    resumed = train_az("isflak_v0", rounds=3, out_dir=out, settings=s, progress=False,
                       resume=True)
    assert _rows(resumed.history) == _rows(straight.history)
    assert any(r["updates"] for r in straight.history), "no update: the test proves nothing"


def _cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    import importlib.util

    spec = importlib.util.spec_from_file_location("train_az_cli", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    try:
        code = mod.main(argv)
    except SystemExit as e:
        code = e.code
    captured = capsys.readouterr()
    return code, captured.err


def test_the_cli_refuses_another_or_a_damaged_run_with_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    assert _cli(_argv(out, 1, 1), capsys)[0] == 0
    cases = [
        (_argv(out, 2, 1, "--players", "3", "--resume"), "num_players"),
        (_argv(out, 2, 1, "--seed", "4", "--resume"), "seed"),
        (_argv(out, 2, 1, "-s", "sims=8", "--resume"), "setting sims"),
        (_argv(out, 2, 1, "-o", "start_player=1", "--resume"), "options"),
        ([*_argv(out, 2, 1, "--resume")[:1], "slide", *_argv(out, 2, 1, "--resume")[2:]],
         "env_id"),
    ]
    for argv, what in cases:
        code, err = _cli(argv, capsys)
        assert code == 2 and what in err and len(err.strip().splitlines()) == 1, (what, err)

    state = json.loads((out / "state.json").read_text())

    def damaged(edit: object, what: str) -> None:
        (out / "state.json").write_text(json.dumps(state))
        edit()
        code, err = _cli(_argv(out, 2, 1, "--resume"), capsys)
        assert code == 2 and what in err and len(err.strip().splitlines()) == 1, (what, err)
        assert "Traceback" not in err

    name = state["resume"]
    opt = out / "resume" / name / "optimizer.safetensors"
    blob = opt.read_bytes()
    damaged(lambda: (out / "state.json").write_text(json.dumps({**state,
                                                                "game_version": "0.0"})),
            "game_version")
    damaged(lambda: (out / "state.json").write_text(json.dumps(state)[:40]),
            "state.json is damaged")
    damaged(lambda: opt.write_bytes(blob[:100]), "optimizer.safetensors is damaged")
    damaged(lambda: opt.unlink(), "optimizer.safetensors is missing")
    opt.write_bytes(blob)
    sp = next((out / "resume" / name).glob("selfplay_*.npz"))
    arrays = sp.read_bytes()
    sp.write_bytes(b"\0" * len(arrays))  # the same size, not an .npz
    damaged(lambda: None, "is damaged")
    sp.write_bytes(arrays)
    damaged(lambda: (out / "state.json").unlink(), "nothing to resume")
    (out / "state.json").write_text(json.dumps(state))
    assert _cli(_argv(out, 2, 1, "--resume"), capsys)[0] == 0  # whole again: it resumes
