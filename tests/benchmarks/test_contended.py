"""benchmarks/contended.py run on its own: the engine part end to end (quick), and a smoke
version of its training comparison (``stress``: three ~25 s training runs of Slide) that fails
when training with one core busy drops below half of training pinned to one core."""

from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCHMARKS = ROOT / "benchmarks"
SCRIPT = BENCHMARKS / "contended.py"


def _contended() -> ModuleType:
    if str(BENCHMARKS) not in sys.path:
        sys.path.insert(0, str(BENCHMARKS))
    return importlib.import_module("contended")


def require_taskset() -> None:
    """Skip without ``taskset``, except under CI (``CI=true``), where that is a failure."""
    if shutil.which("taskset") is not None:
        return
    msg = "taskset (util-linux) is missing: the one-core training run needs it"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(msg)
    pytest.skip(msg)


def test_require_taskset_fails_under_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shutil, "which", lambda name: None)
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="taskset"):
        require_taskset()
    monkeypatch.setenv("CI", "false")
    with pytest.raises(pytest.skip.Exception, match="taskset"):
        require_taskset()


def test_training_ratios_and_the_one_core_command() -> None:
    c = _contended()
    cmd = c.train_command("slide_v0", 0.5, 200, Path("/tmp/x"), pin="0")
    assert cmd[:3] == ["taskset", "-c", "0"] and cmd[3] == sys.executable
    assert cmd[cmd.index("--minutes") + 1] == "0.5" and "--no-progress" in cmd
    runs = {"quiet": {"env_steps_per_s": 150.0}, "one core": {"env_steps_per_s": 100.0},
            "contended": {"env_steps_per_s": 40.0}}
    r = c.game_ratios(None, runs)
    assert r["training_contended_to_one_core"] == pytest.approx(0.4)
    assert r["training_quiet_to_one_core"] == pytest.approx(1.5)
    assert r["training_status"] == "FAIL"
    runs["contended"]["env_steps_per_s"] = 60.0
    assert c.game_ratios(None, runs)["training_status"] == "PASS"
    runs["one core"] = {"env_steps_per_s": None, "error": "taskset not found"}
    assert c.game_ratios(None, runs)["training_status"] == "FAIL"  # not measured: not a pass


def test_contended_script_engine_only(tmp_path: Path) -> None:
    out = tmp_path / "c.json"
    cmd = [sys.executable, str(SCRIPT), "--engine-only", "--games", "slide_v0", "--seconds",
           "0.05", "--warmup", "0", "--repeats", "1", "--contended-batch", "256",
           "--json", str(out)]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=True)
    assert "c/single" in run.stdout and "Contended table" in run.stdout
    d = json.loads(out.read_text())
    assert {"machine", "versions", "numba", "games"} <= set(d)
    g = d["games"]["slide_v0"]
    assert g["training"] == {} and g["ratios"]["training_status"] == "SKIP"
    assert g["engine"]["states"]["contended"]["median_steps_per_s"] > 0
    assert g["ratios"]["engine_contended_to_single"] > 0


@pytest.mark.stress
def test_contended_training_keeps_half_the_one_core_rate(tmp_path: Path) -> None:
    """Slide, ~25 s of training per state: contended (both cores, one busy) must keep at least
    half the rate of the run pinned to one core with the other idle."""
    require_taskset()
    out = tmp_path / "c.json"
    cmd = [sys.executable, str(SCRIPT), "--training-only", "--games", "slide_v0",
           "--minutes", "0.4", "--eval-games", "20", "--json", str(out)]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    g = json.loads(out.read_text())["games"]["slide_v0"]
    for state, t in g["training"].items():
        assert t["error"] is None and t["env_steps_per_s"] > 0, (state, t)
    ratio = g["ratios"]["training_contended_to_one_core"]
    loads = {s: t["other_cpu_load"] for s, t in g["training"].items()}
    assert ratio >= 0.5, (f"contended training ran at {ratio:.2f}x the one-core (taskset) "
                          f"rate: {run.stdout}\nother CPU load per state: {loads}")
