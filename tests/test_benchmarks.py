"""Smoke test of benchmarks/throughput.py: it runs end to end and writes complete JSON.
(It asserts structure, not speed: speed is measured by `make bench`, not in CI.)"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import card_envs

ROOT = Path(__file__).resolve().parent.parent


def test_throughput_script_smoke(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    cmd = [sys.executable, str(ROOT / "benchmarks" / "throughput.py"), "--seconds", "0.1",
           "--repeats", "1", "--batch-sizes", "1", "256", "--json", str(out)]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=True)
    assert "vs anchor" in run.stdout and "Targets:" in run.stdout
    d = json.loads(out.read_text())
    assert {"machine", "versions", "measurements", "targets"} <= set(d)
    rows = {(m["game"], m["variant"], m["batch_size"]) for m in d["measurements"]}
    for env_id in card_envs.ENV_IDS:
        for variant in ("env()", "raw_env()", "Engine"):
            assert (env_id, variant, None) in rows
        assert (env_id, "vector", 256) in rows
    assert all(m["median_steps_per_s"] > 0 for m in d["measurements"])
