"""benchmarks/search_speed.py runs end to end (``--quick``): az and mcts searched the same
Slide positions, the table and the JSON hold both, the leaves of a batch-16 az went through the
network in batches, and the batched search and self-play rows are there. (Structure, not
speed: the figures come from running the script.)"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_search_speed_quick(tmp_path: Path) -> None:
    out = tmp_path / "speed.json"
    run = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "search_speed.py"),
                          "--quick", "--json", str(out)], capture_output=True, text=True,
                         timeout=600, cwd=ROOT, check=True)
    assert "az leaves/s" in run.stdout and "mcts it/s" in run.stdout
    d = json.loads(out.read_text())
    assert {"machine", "versions", "args", "results"} <= set(d) and d["versions"]["torch"]
    (game,) = d["results"]
    assert game["env_id"] == "slide_v0" and game["positions"] == 2
    (m,) = game["mcts"]["repeats"]
    assert m["simulations"] == 2 * 200 and m["sims_per_s"] > 0
    one, sixteen = ({r["batch"]: r for r in game["az"]}[b]["repeats"][0] for b in (1, 16))
    assert one["simulations"] == sixteen["simulations"] == 2 * 64
    assert one["forwards"] == one["leaves"] > 0  # batch 1: a forward per leaf
    assert sixteen["forwards"] <= 2 * (64 / 16 + 4) and sixteen["leaves_per_s"] > 0
    b = game["batched"]
    (row,) = b["rows"]
    (rep,) = row["repeats"]
    assert row["batch"] == 16 and b["sims"] == 8 and rep["leaves_per_s"] > 0
    assert rep["forwards"] <= 8 + 1  # one forward pass per wave for all 16 games
    (sp,) = b["selfplay"]["repeats"]
    assert sp["decisions"] == 16 * 4 and sp["decisions_per_s"] > 0
    assert "self-play dec/s" in run.stdout
