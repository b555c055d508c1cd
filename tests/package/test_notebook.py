"""The notebooks run end to end: the quick start (15 s of training; its PPO agent beats random)
and the benchmark of a user-written agent (one game at 2 and 3 seats, plotted against the
leaderboard).

The notebook is executed with nbclient in a kernel that runs *this* interpreter: a temporary
kernelspec (``argv[0] = sys.executable``) on ``JUPYTER_PATH``, so neither a ``python3`` kernel
installed elsewhere nor ``python`` on ``PATH`` can pick another environment."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat", reason="dev extra")
nbclient = pytest.importorskip("nbclient", reason="dev extra")
pytest.importorskip("ipykernel", reason="dev extra")
pytest.importorskip("sb3_contrib", reason="train extra")
pytest.importorskip("matplotlib", reason="plot extra")

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "examples" / "notebooks" / "quickstart.ipynb"
BENCH_NOTEBOOK = ROOT / "examples" / "notebooks" / "benchmark.ipynb"
KERNEL = "card-envs-test-python"


def _kernelspec(tmp_path: Path) -> Path:
    """A kernelspec named ``KERNEL`` that starts ipykernel with this interpreter."""
    d = tmp_path / "jupyter" / "kernels" / KERNEL
    d.mkdir(parents=True)
    spec = {"argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            "display_name": "card-envs test", "language": "python"}
    (d / "kernel.json").write_text(json.dumps(spec))
    return tmp_path / "jupyter"


def _text(cell: dict) -> str:
    return "".join(o.get("text", "") for o in cell.get("outputs", [])
                   if o.get("output_type") == "stream" and o.get("name") == "stdout")


@pytest.mark.parametrize("path", [NOTEBOOK, BENCH_NOTEBOOK], ids=lambda p: p.stem)
def test_notebook_outputs_are_cleared(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert not cell.outputs and cell.execution_count is None, cell.source[:60]


def test_quickstart_notebook_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUPYTER_PATH", str(_kernelspec(tmp_path)))
    monkeypatch.setenv("QUICKSTART_SECONDS", "15")
    monkeypatch.delenv("MPLBACKEND", raising=False)  # ipykernel's inline backend (no display)
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell("import sys; print('KERNEL-PYTHON', sys.executable)"))
    client = nbclient.NotebookClient(nb, kernel_name=KERNEL, timeout=300,
                                     resources={"metadata": {"path": str(ROOT)}})
    client.execute()  # raises CellExecutionError on the first failing cell

    code = [c for c in nb.cells if c.cell_type == "code"]
    for cell in code:
        errors = [o for o in cell.outputs if o.output_type == "error"]
        assert not errors, f"cell failed: {cell.source[:80]!r}"
    assert _text(code[-1]).split("KERNEL-PYTHON", 1)[1].strip() == sys.executable

    out = "".join(_text(c) for c in code)
    assert "player_0: reward" in out and "player_1: reward" in out  # the random game
    assert "PPO vs heuristic:" in out
    assert any("image/png" in o.get("data", {}) for c in code for o in c.outputs)  # the plot
    m = re.search(r"PPO win rate vs random: ([0-9.]+)", _text(code[-2]))
    assert m, _text(code[-2])
    assert float(m.group(1)) > 0.5


def test_benchmark_notebook_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUPYTER_PATH", str(_kernelspec(tmp_path)))
    monkeypatch.setenv("BENCHMARK_GAMES", "isflak")
    monkeypatch.setenv("BENCHMARK_SEATS", "2,3")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("MPLBACKEND", raising=False)
    nb = nbformat.read(BENCH_NOTEBOOK, as_version=4)
    client = nbclient.NotebookClient(nb, kernel_name=KERNEL, timeout=600,
                                     resources={"metadata": {"path": str(ROOT)}})
    client.execute()
    code = [c for c in nb.cells if c.cell_type == "code"]
    out = "".join(_text(c) for c in code)
    assert "benchmark of sometimes_random" in out or "benchmark of SometimesRandom" in out, out
    for game in ("isflak | 2 |", "isflak | 3 |"):
        assert game in out
    assert "rating:" in out
    assert any("image/png" in o.get("data", {}) for c in code for o in c.outputs)
