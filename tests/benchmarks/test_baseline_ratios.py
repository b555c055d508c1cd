"""benchmarks/baseline_ratios.py on synthetic throughput.py JSON: what it records, when it flags
a game SLOWER, what it refuses, and the command line ``make bench`` runs."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCHMARKS = ROOT / "benchmarks"
SCRIPT = BENCHMARKS / "baseline_ratios.py"


def _module() -> ModuleType:
    if str(BENCHMARKS) not in sys.path:
        sys.path.insert(0, str(BENCHMARKS))
    return importlib.import_module("baseline_ratios")


def _result(ratios: dict[tuple[str, int], float], anchor: float = 100_000.0,
            load: float | None = 0.0, threads: int = 2,
            processor: str = "Test CPU") -> dict[str, Any]:
    """A throughput.py result with the given batched ratios (plus rows check must ignore)."""
    rows: list[dict[str, Any]] = [
        {"game": "connect_four_v3 (anchor)", "variant": "env()", "batch_size": None,
         "median_steps_per_s": anchor, "ratio_to_anchor": 1.0, "max_other_cpu_load": load},
    ]
    for (game, b), r in ratios.items():
        rows.append({"game": game, "variant": "env()", "batch_size": None,
                     "median_steps_per_s": 12 * anchor, "ratio_to_anchor": 12.0,
                     "max_other_cpu_load": load})
        rows.append({"game": game, "variant": "vector", "batch_size": b,
                     "median_steps_per_s": r * anchor, "ratio_to_anchor": r,
                     "max_other_cpu_load": load})
    return {"machine": {"processor": processor, "cpu_count": 2},
            "numba": {"num_threads": threads, "threading_layer": "omp"},
            "options": {"players": 2},
            "anchor": {"env_id": "connect_four_v3", "median_steps_per_s": anchor},
            "measurements": rows}


BASE = {("slide_v0", 4096): 50.0, ("op_glad_ijs_v0", 4096): 30.0, ("slide_v0", 256): 20.0}


def test_record_takes_the_median_of_the_runs_batched_rows_only() -> None:
    m = _module()
    runs = [_result({k: v * f for k, v in BASE.items()}) for f in (0.9, 1.0, 1.3)]
    base = m.make_baseline(runs, today="2026-12-04")
    got = {(r["game"], r["batch_size"]): r["ratio"] for r in base["ratios"]}
    assert got == BASE  # the median run; env() rows and the anchor are not recorded
    assert base["recorded"] == "2026-12-04" and base["runs"] == 3
    assert base["numba_threads"] == 2 and base["machine"]["processor"] == "Test CPU"


@pytest.mark.parametrize("bad, message", [
    ({"anchor": {"env_id": "connect_four_v3", "median_steps_per_s": None}}, "no anchor"),
    ({"measurements": []}, "no batched"),
])
def test_record_refuses_runs_without_anchor_or_batched_rows(bad: dict, message: str) -> None:
    m = _module()
    with pytest.raises(ValueError, match=message):
        m.make_baseline([{**_result(BASE), **bad}])


def test_record_refuses_a_busy_machine() -> None:
    m = _module()
    with pytest.raises(ValueError, match="quiet machine"):
        m.make_baseline([_result(BASE, load=0.9)])
    assert m.make_baseline([_result(BASE, load=0.9)], max_load=1.0)["ratios"]


def test_check_flags_a_drop_beyond_the_tolerance_only() -> None:
    m = _module()
    base = m.make_baseline([_result(BASE)])
    now = {("slide_v0", 4096): 50.0 * 0.79,  # 21% down: SLOWER
           ("op_glad_ijs_v0", 4096): 30.0 * 0.81,  # 19% down: within 20%
           ("slide_v0", 256): 20.0 * 1.25,  # 25% up
           ("isflak_v0", 4096): 70.0}  # not in the baseline
    rows = {(r["game"], r["batch_size"]): r for r in m.compare(base, _result(now), 0.20)}
    assert rows[("slide_v0", 4096)]["status"] == "SLOWER"
    assert rows[("slide_v0", 4096)]["change"] == pytest.approx(0.79)
    assert rows[("op_glad_ijs_v0", 4096)]["status"] == "ok"
    assert rows[("slide_v0", 256)]["status"] == "faster"
    assert rows[("isflak_v0", 4096)]["status"] == "new"
    tight = {(r["game"], r["batch_size"]): r["status"]
             for r in m.compare(base, _result(now), 0.10)}
    assert tight[("op_glad_ijs_v0", 4096)] == "SLOWER"  # the tolerance is the threshold
    missing = m.compare(base, _result({("slide_v0", 4096): 50.0}), 0.20)
    assert {r["game"]: r["status"] for r in missing if r["batch_size"] == 4096} == {
        "slide_v0": "ok", "op_glad_ijs_v0": "missing"}
    with pytest.raises(ValueError):
        m.compare(base, _result(now), 1.5)


def test_check_compares_ratios_not_absolute_rates() -> None:
    m = _module()
    base = m.make_baseline([_result(BASE, anchor=100_000.0)])
    # a machine 40% slower overall: every rate and the anchor drop together
    rows = m.compare(base, _result(BASE, anchor=60_000.0), 0.20)
    assert {r["status"] for r in rows} == {"ok"}


def _write(path: Path, obj: dict[str, Any]) -> str:
    path.write_text(json.dumps(obj))
    return str(path)


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True,
                          text=True, timeout=120)


def test_command_line_record_then_check(tmp_path: Path) -> None:
    baseline = str(tmp_path / "baseline_ratios.json")
    first = _write(tmp_path / "a.json", _result(BASE))
    run = _cli("check", first, "--baseline", baseline)
    assert run.returncode == 0 and "no baseline" in run.stdout
    run = _cli("record", first, "--baseline", baseline)
    assert run.returncode == 0, run.stderr
    assert len(json.loads(Path(baseline).read_text())["ratios"]) == 3

    slower = {**BASE, ("op_glad_ijs_v0", 4096): 30.0 * 0.7}
    later = _write(tmp_path / "b.json", _result(slower, threads=1, processor="Other CPU"))
    run = _cli("check", later, "--baseline", baseline)
    assert run.returncode == 0, run.stderr  # flags, does not fail without --strict
    line = next(x for x in run.stdout.splitlines() if "op_glad_ijs_v0" in x)
    assert "SLOWER" in line and "0.70" in line
    assert "1 SLOWER: op_glad_ijs_v0 B=4096" in run.stdout
    assert "numba threads differ" in run.stdout and "processor differs" in run.stdout
    assert _cli("check", later, "--baseline", baseline, "--strict").returncode == 1
    same = _cli("check", first, "--baseline", baseline, "--strict")
    assert same.returncode == 0 and "all within 20%" in same.stdout

    busy = _write(tmp_path / "c.json", _result(BASE, load=1.0))
    run = _cli("record", busy, "--baseline", baseline)
    assert run.returncode != 0 and "not recorded" in run.stderr


def test_recorded_baseline_is_readable() -> None:
    """The shipped baseline file has a ratio for every batched row it lists, for every game."""
    m = _module()
    assert m.BASELINE.is_file(), "record one: python benchmarks/baseline_ratios.py record ..."
    base = json.loads(m.BASELINE.read_text())
    assert base["ratios"] and all(r["ratio"] > 0 and r["batch_size"] >= 1
                                  for r in base["ratios"])
    assert base["recorded"] and base["machine"]["cpu_count"] >= 1
    import card_envs

    missing = set(card_envs.ENV_IDS) - {r["game"] for r in base["ratios"]}
    assert not missing, f"no baseline ratio for {sorted(missing)}"
