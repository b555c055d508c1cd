"""Performance machinery: benchmarks/throughput.py runs end to end and writes complete JSON
(full and contended modes), its busy-core helper always stops, and the batched engine's
thread tuner follows the faster thread count. (Structure and logic, not speed: speed is
measured by `make bench` and `benchmarks/throughput.py --contended-only`, not in CI.)"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

import card_envs
from card_envs import threads

ROOT = Path(__file__).resolve().parents[2]
BENCHMARKS = ROOT / "benchmarks"
SCRIPT = BENCHMARKS / "throughput.py"


def _bench_module(name: str) -> ModuleType:
    """A module of benchmarks/, imported the way the scripts import each other (their folder
    on ``sys.path``: ``throughput.py`` imports ``common`` and ``contended``)."""
    if str(BENCHMARKS) not in sys.path:
        sys.path.insert(0, str(BENCHMARKS))
    return importlib.import_module(name)


def _throughput_smoke(tmp_path: Path, games: list[str]) -> None:
    out = tmp_path / "bench.json"
    cmd = [sys.executable, str(SCRIPT), "--seconds", "0.1", "--repeats", "1",
           "--batch-sizes", "1", "256", "--json", str(out), "--games", *games]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=True)
    assert "vs anchor" in run.stdout and "Targets:" in run.stdout
    assert "measuring: about" in run.stderr and "s left)" in run.stderr  # how long it takes
    d = json.loads(out.read_text())
    assert {"machine", "versions", "measurements", "targets"} <= set(d)
    rows = {(m["game"], m["variant"], m["batch_size"]) for m in d["measurements"]}
    for env_id in games:
        for variant in ("env()", "raw_env()", "Engine"):
            assert (env_id, variant, None) in rows
        assert (env_id, "vector", 256) in rows
    assert all(m["median_steps_per_s"] > 0 for m in d["measurements"])
    assert d["contended"] is None  # only with --contended


def test_throughput_script_smoke(tmp_path: Path) -> None:
    """Two games (the smallest and the largest state): every variant, the anchor, the JSON."""
    _throughput_smoke(tmp_path, ["slide_v0", "if_it_fits_v0"])


@pytest.mark.stress
def test_throughput_script_smoke_every_game(tmp_path: Path) -> None:
    _throughput_smoke(tmp_path, list(card_envs.ENV_IDS))


def test_busy_core_runs_inside_the_block_and_always_stops() -> None:
    contended = _bench_module("contended")
    with contended.BusyCore() as busy:
        (proc,) = busy.procs
        assert proc.poll() is None, "the busy process spins while the block runs"
    assert proc.poll() is not None and busy.returncodes == [proc.returncode]
    with pytest.raises(KeyboardInterrupt):
        with contended.BusyCore() as busy:
            (proc,) = busy.procs
            raise KeyboardInterrupt
    assert proc.poll() is not None, "stopped on Ctrl-C too"


def test_contended_mode_smoke(tmp_path: Path) -> None:
    out = tmp_path / "contended.json"
    cmd = [sys.executable, str(SCRIPT), "--contended-only", "--games", "slide_v0",
           "--seconds", "0.05", "--warmup", "0", "--repeats", "1", "--contended-batch", "256",
           "--json", str(out)]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=True)
    assert "Contended table" in run.stdout and "cont/single" in run.stdout
    d = json.loads(out.read_text())
    assert d["measurements"] == [] and d["anchor"]["available"] is False
    c = d["contended"]
    assert c["batch_size"] == 256 and set(c["games"]) == {"slide_v0"}
    g = c["games"]["slide_v0"]
    assert set(g["states"]) == {"quiet", "quiet fixed", "single", "contended",
                                "contended fixed", "contended single"}
    assert all(s["median_steps_per_s"] > 0 for s in g["states"].values())
    assert g["ratio_contended_to_single"] > 0 and g["status"] in ("PASS", "FAIL")
    assert g["threads_in_use"]["single"] == g["threads_in_use"]["contended single"] == [1]
    (busy,) = c["busy_processes"]
    assert len(busy["pids"]) == 1 and all(rc is not None for rc in busy["returncodes"])
    assert any(t["target"].startswith("contended") for t in d["targets"])


def test_thread_tuner_follows_the_faster_count(monkeypatch: pytest.MonkeyPatch) -> None:
    """Synthetic timings on a fake clock: 2 threads faster (quiet), then 4x slower than one
    (a busy core), then faster again; the tuner follows, and trying the slow count costs
    little."""
    clock = [0.0]
    monkeypatch.setattr(threads, "perf_counter", lambda: clock[0])
    monkeypatch.setattr(threads, "get_num_threads", lambda: 2)
    B = 4096
    tuner = threads.ThreadTuner()

    def play(us_per_game: dict[int, float], calls: int) -> tuple[float, float]:
        """Returns (seconds taken, seconds the best count would have taken)."""
        spent = 0.0
        for _ in range(calls):
            dt = us_per_game[tuner.threads()] * 1e-6 * B
            clock[0] += dt
            spent += dt
            tuner.record(dt, B)
        return spent, calls * min(us_per_game.values()) * 1e-6 * B

    quiet, busy = {2: 0.14, 1: 0.25}, {2: 1.0, 1: 0.25}
    play(quiet, 300)
    assert tuner.n == 2
    play(busy, 300)
    assert tuner.n == 1, "a busy core: one thread is faster"
    spent, ideal = play(busy, 5000)
    assert tuner.n == 1 and spent < 1.05 * ideal, "trying 2 threads again costs < 5%"
    play(quiet, 2000)
    assert tuner.n == 2, "back to all threads once the core is free"
    spent, ideal = play(quiet, 5000)
    assert spent < 1.02 * ideal
    spent, ideal = play(quiet, 30000)  # settled on all threads: trials come seconds apart
    assert spent < 1.005 * ideal, "on a quiet machine the trials cost < 0.5%"
    monkeypatch.setattr(threads, "get_num_threads", lambda: 1)  # the user's cap
    play(quiet, 8000)  # (every compiled call applies the cap at once; the tuner's next trial
    # adopts it, <= MAX_INTERVAL_ALL later)
    assert tuner.threads() == 1


def test_train_speed_script_smoke(tmp_path: Path) -> None:
    """benchmarks/train_speed.py trains at each seat count given, measures its anchor, writes
    its JSON and the seat-count table (3 seats over 2)."""
    pytest.importorskip("torch")
    cmd = [sys.executable, str(BENCHMARKS / "train_speed.py"), "--games", "slide",
           "--minutes", "0.05", "--eval-games", "0", "--anchor-seconds", "0.2",
           "--players", "2,3", "--out", str(tmp_path)]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    assert "| slide_v0 |" in run.stdout and "3 / 2 seats" in run.stdout
    (path,) = tmp_path.glob("train_speed-*.json")
    d = json.loads(path.read_text())
    two, three = d["rows"]
    assert (two["players"], three["players"]) == (2, 3)
    assert {"machine", "versions"} <= set(d)
    row = three
    assert row["env_steps_per_s"] > 0 and row["engine_steps_per_s"] > 0
    assert set(row["profile"]) == {"engine", "features", "forward", "sampling", "buffer",
                                   "update", "opponents"}


def test_baselines_reads_saved_arena_results(tmp_path: Path) -> None:
    """``baselines.py --arena-from DIR`` takes the ppo row of the arena's own JSON files."""
    from card_envs.arena import run_arena

    bl = _bench_module("baselines")
    res = run_arena("slide_v0", ["ppo", "random"], games=4, seed=11, progress=False)
    res.save(tmp_path / "slide.mcts.json")
    row = bl.from_arena_file(tmp_path / "slide.mcts.json")
    assert row["opponent"] == "random" and row["games"] == 4 and row["seed"] == 11
    assert row["ci_low"] <= row["win_rate"] <= row["ci_high"]


@pytest.mark.stress
@pytest.mark.parametrize("same_harness", [False, True])
def test_compare_commits_smoke(tmp_path: Path, same_harness: bool) -> None:
    """benchmarks/compare_commits.py runs both trees (a revision in a temporary worktree and
    this tree), tabulates new/old and removes its worktree; ``--same-harness`` times both
    packages with this tree's probe."""
    def worktrees() -> str:
        return subprocess.run(["git", "-C", str(ROOT), "worktree", "list"],
                              capture_output=True, text=True, check=True).stdout

    before = worktrees()
    out = tmp_path / "cmp.json"
    cmd = [sys.executable, str(BENCHMARKS / "compare_commits.py"), "HEAD", "--rounds", "1",
           "--seconds", "0.05", "--repeats", "1", "--batch-sizes", "256", "--games",
           "slide_v0", "--json", str(out)] + (["--same-harness"] if same_harness else [])
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "geometric mean new/old" in run.stdout
    d = json.loads(out.read_text())
    rows = {(t["game"], t["variant"], t["batch_size"]) for t in d["table"]}
    assert ("slide_v0", "vector", 256) in rows
    assert (("slide_v0", "env()", None) in rows) != same_harness
    if same_harness:
        assert d["mode"] == "same-harness" and len(d["runs"]["old"]) == 1
        assert d["table"][0]["old_median_steps_per_s"] > 0
    assert all(t["new_over_old"] > 0 for t in d["table"])
    assert worktrees() == before


@pytest.mark.stress
def test_profile_batched_smoke(tmp_path: Path) -> None:
    """benchmarks/profile_batched.py: every driver replays the recorded games (the script
    checks it), the table and the JSON."""
    out = tmp_path / "profile.json"
    cmd = [sys.executable, str(BENCHMARKS / "profile_batched.py"), "--games", "slide_v0",
           "--batch-sizes", "256", "--warmup", "3", "--steps", "3", "--rounds", "1",
           "--seconds", "0.05", "--json", str(out)]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=True)
    assert "out-cached" in run.stdout and "x anchor" in run.stdout
    (row,) = json.loads(out.read_text())["rows"]
    assert row["game"] == "slide_v0" and row["batch_size"] == 256
    drivers = _bench_module("profile_batched").DRIVERS
    assert set(row["ns_per_step"]) == {name for name, *_ in drivers}
    assert all(v > 0 for v in row["ns_per_step"].values()) and row["vec_loop_ratio_to_anchor"] > 0
