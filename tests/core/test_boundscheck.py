"""Random play, the batched engine and the fuzz passes of every game and variant (state dicts,
options, agent specs whose accepted agents search, results files) with numba's bounds checks
on (``NUMBA_BOUNDSCHECK=1``): no kernel may index out of bounds.

numba's on-disk cache does not know about that flag (cached machine code compiled without the
checks would be loaded as is), so the pass runs in a subprocess with its own, empty
``NUMBA_CACHE_DIR`` (``card_envs/__init__.py`` then leaves numba's cache location alone), and
``tests/support/fuzz.py --boundscheck`` first proves in that same process that an out-of-bounds read
raises ``IndexError``, in a kernel defined there and in a card_envs kernel.

The batched engine runs through its serial driver (fewer than ``vector.SERIAL_BELOW`` games):
the same driver code and kernels as the ``prange`` build, but numba neither bounds-checks nor
propagates exceptions inside ``prange`` loops (numba issues #2811 and #9380; checked here:
an out-of-bounds read in a ``prange`` body returns garbage under ``NUMBA_BOUNDSCHECK=1``).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parents[1] / "support"  # where fuzz.py lives


def run_bounds_checked(tmp_path: Path, *args: str, timeout: int) -> str:
    """Run ``tests/support/fuzz.py --boundscheck *args`` with bounds checks and a fresh
    cache; return its output after checking it passed."""
    cache = tmp_path / "numba-cache"
    env = {**os.environ, "NUMBA_BOUNDSCHECK": "1", "NUMBA_CACHE_DIR": str(cache),
           "PYTHONHASHSEED": "0"}
    env.pop("NUMBA_DISABLE_JIT", None)
    out = subprocess.run([sys.executable, "-X", "faulthandler", str(HERE / "fuzz.py"),
                          "--boundscheck", *args], capture_output=True, text=True, env=env,
                         timeout=timeout, cwd=HERE.parents[1])
    text = out.stdout + out.stderr
    assert out.returncode == 0, text[-8000:]
    assert "local kernel: IndexError" in text and "card_envs kernel: IndexError" in text, text
    assert text.count("IndexError") == 2, f"an IndexError besides the two proofs:\n{text}"
    assert "all passes OK (bounds-checked)" in text, text[-8000:]
    assert any(cache.rglob("*.nbi")), "the kernels were not compiled into the fresh cache"
    return text


def test_bounds_checked_passes(tmp_path: Path) -> None:
    """Every case once: random games, 300 batched steps, a few fuzz examples."""
    run_bounds_checked(tmp_path, "--examples", "6", "--option-examples", "4", "--games", "1",
                       "--vector-envs", "4", "--vector-steps", "300", "--pairs", "1",
                       "--spec-examples", "12", "--results-examples", "3", timeout=900)


@pytest.mark.stress
def test_bounds_checked_passes_stress(tmp_path: Path) -> None:
    """10x the examples and transplant pairs, more games and batched steps."""
    run_bounds_checked(tmp_path, "--examples", "60", "--option-examples", "40", "--games", "5",
                       "--vector-envs", "100", "--vector-steps", "2000", "--pairs", "10",
                       "--spec-examples", "120", "--results-examples", "30", timeout=3600)
