"""The single-state loop rows of benchmarks/throughput.py: the Engine loop (``step_observe``),
the separate calls and OpenSpiel's connect four in the same loop, with their ratios in the
table and the JSON; a clear message, and the other rows, when pyspiel is not installed.
(Structure, not speed: the speed is measured by `make bench`.)"""

from __future__ import annotations

import importlib
import json
import random
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

import card_envs

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "throughput.py"
ARGS = ["--engine-only", "--games", "slide", "isflak", "--seconds", "0.1", "--repeats", "1"]


def _bench_module(name: str) -> ModuleType:
    """A module of benchmarks/, imported as the scripts import each other."""
    if str(SCRIPT.parent) not in sys.path:
        sys.path.insert(0, str(SCRIPT.parent))
    return importlib.import_module(name)


def test_engine_only_rows_and_ratios(tmp_path: Path) -> None:
    pytest.importorskip("pyspiel")
    out = tmp_path / "loop.json"
    run = subprocess.run([sys.executable, str(SCRIPT), *ARGS, "--cpu-time", "--json", str(out)],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "Single-state loop vs OpenSpiel" in run.stdout and "vs OpenSpiel" in run.stdout
    d = json.loads(out.read_text())
    rows = {(m["game"], m["variant"]) for m in d["measurements"]}
    assert rows == {("connect_four (OpenSpiel)", "pyspiel"), ("slide_v0", "Engine"),
                    ("slide_v0", "Engine calls"), ("isflak_v0", "Engine"),
                    ("isflak_v0", "Engine calls")}  # no AEC, batched or PettingZoo rows
    assert d["openspiel"]["available"] and d["openspiel"]["median_steps_per_s"] > 0
    assert d["options"]["cpu_time"] is True and d["versions"]["open_spiel"]
    for env_id in ("slide_v0", "isflak_v0"):
        r = d["engine_vs_openspiel"][env_id]
        assert r["engine_ratio"] > 0 and r["engine_calls_ratio"] > 0
        assert len(r["engine_paired_ratios"]) == 1
    targets = [t for t in d["targets"] if t["unit"] == "x OpenSpiel"]
    assert len(targets) == 2 and all(t["status"] in ("PASS", "FAIL") for t in targets)
    assert len(d["targets"]) == 2  # the AEC and batched targets need their rows


def test_without_pyspiel_the_rest_runs_and_says_how_to_install(tmp_path: Path) -> None:
    out = tmp_path / "loop.json"
    code = ("import runpy, sys; sys.modules['pyspiel'] = None; "
            f"sys.argv = {[str(SCRIPT), *ARGS, '--json', str(out)]!r}; "
            f"runpy.run_path({str(SCRIPT)!r}, run_name='__main__')")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=600, cwd=SCRIPT.parent)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "OpenSpiel (pyspiel) unavailable" in run.stderr and '".[bench]"' in run.stderr
    assert "no OpenSpiel row" in run.stdout and "no OpenSpiel" in run.stdout
    d = json.loads(out.read_text())
    assert d["openspiel"]["available"] is False and "pyspiel" in d["openspiel"]["error"]
    assert d["engine_vs_openspiel"] == {}
    assert {m["variant"] for m in d["measurements"]} == {"Engine", "Engine calls"}
    assert all(t["status"] == "SKIP" for t in d["targets"])


def test_the_loops_play_whole_games() -> None:
    """Each runner plays at least one whole game per call and counts its steps."""
    common = _bench_module("common")
    eng = card_envs.Engine("slide_v0")
    steps, secs = common.engine_runner(eng, 0)(0.0)
    length = 0
    state = eng.new_state(0)
    n = eng.observe_turn(state)
    rnd = random.Random(0)
    while n:
        n = eng.step_observe(state, eng.legal.item(rnd.randrange(n)))
        length += 1
    assert steps == length and secs >= 0
    assert common.engine_calls_runner(card_envs.Engine("slide_v0"), 0)(0.0)[0] > 0
    pyspiel = pytest.importorskip("pyspiel")
    steps, _ = common.openspiel_runner(pyspiel.load_game("connect_four"), 0)(0.0)
    assert 7 <= steps <= 42
