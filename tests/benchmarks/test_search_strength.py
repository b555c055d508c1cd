"""benchmarks/search_strength.py runs end to end on a tiny budget: every cell of the curve is
played, saved, read back on a second run (resume: nothing replayed), and summarized with a
plot. (Structure, not strength: the figures come from running the script.)"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_search_strength_tiny_curve_and_resume(tmp_path: Path) -> None:
    cmd = [sys.executable, str(ROOT / "benchmarks" / "search_strength.py"), "--part", "curve",
           "--games", "isflak", "--deals", "1", "--ms", "5", "--workers", "1", "--out",
           str(tmp_path), "--plot", str(tmp_path / "curve.png")]
    first = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=ROOT,
                           check=False)
    assert first.returncode == 0, first.stderr[-3000:]
    for agent in ("az:ms=5", "mcts:ms=5", "ppo"):
        assert agent in first.stdout
    cells = sorted(p.name for p in tmp_path.glob("isflak_v0__*.json"))
    assert len(cells) == 3 and (tmp_path / "curve.png").stat().st_size > 1000
    summary = json.loads((tmp_path / "summary_curve.json").read_text())
    assert {"machine", "rows", "args"} <= set(summary) and len(summary["rows"]) == 3
    assert all(r["games"] == 2 and 0 <= r["win_rate"] <= 1 for r in summary["rows"])
    stamp = {p.name: p.stat().st_mtime_ns for p in tmp_path.glob("isflak_v0__*.json")}
    again = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=ROOT,
                           check=False)
    assert again.returncode == 0, again.stderr[-3000:]
    assert {p.name: p.stat().st_mtime_ns for p in tmp_path.glob("isflak_v0__*.json")} == stamp
    assert json.loads((tmp_path / "summary_curve.json").read_text())["rows"] == \
        summary["rows"] and "isflak_v0" in again.stdout
