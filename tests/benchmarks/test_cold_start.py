"""benchmarks/cold_start.py runs end to end (``--quick``): a cold process on an empty kernel
cache compiles, the warm one after it does not, and the JSON holds both, per game and phase,
and the workers table. (Structure, not speed: the figures are measured by running the script.)
It compiles on an empty cache by design (~30 s), so it runs with the slow tests (``make
stress``); tests/core/test_first_run.py checks the cold and warm behaviour in the suite."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.stress
def test_cold_start_quick(tmp_path: Path) -> None:
    out = tmp_path / "cold.json"
    run = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "cold_start.py"), "--quick",
                          "--workers-table", "--json", str(out)], capture_output=True,
                         text=True, timeout=900, cwd=ROOT, check=True)
    assert "cold compile s" in run.stdout and "2 / 1" in run.stdout
    d = json.loads(out.read_text())
    assert {"machine", "versions", "args", "runs", "workers"} <= set(d)
    cold, warm = d["runs"]
    assert (cold["kind"], warm["kind"]) == ("cold", "warm")
    assert cold["cache_dir"] == warm["cache_dir"] and "card_envs_cold_" in cold["cache_dir"]
    (c,), (w,) = cold["games"], warm["games"]
    assert c["env_id"] == w["env_id"] == "slide_v0"
    assert c["compiles"] > 0 and w["compiles"] == 0  # the second process found the cache
    assert c["vector_first_step_s"] > 0 and w["vector_first_step_s"] > 0
    (row,) = d["workers"]
    assert {x["workers_used"] for x in row["2"]} == {2}
    assert {x["workers_used"] for x in row["auto"]} == {1}  # 4 cheap games: no workers
