"""The first run: nothing compiles on import; a run compiles only its own game and agents, up
front (``card_envs.arena.warm``), with one line saying so only when the kernel cache misses;
the cache is keyed on exactly the sources compiled code depends on.

The cold runs happen in fresh processes with an empty ``CARD_ENVS_CACHE_DIR``."""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from card_envs.core import jit
from card_envs.core.progress import compile_notice

ROOT = Path(__file__).resolve().parents[2]

#: run in a fresh process: compiles recorded by numba's event API (a cache hit is not one)
PROBE = """
import json, sys
from numba.core import event
names = []
class L(event.Listener):
    def on_start(self, ev):
        f = ev.data["dispatcher"].py_func
        names.append(f.__module__ + ":" + f.__qualname__)
    def on_end(self, ev):
        pass
event.register("numba:compile", L())
import card_envs, card_envs.arena, card_envs.cli, card_envs.agents.registry
out = {"import": list(names)}
from card_envs.arena import run_arena, warm
w = warm("slide", ["random", "heuristic", "mcts:iterations=20"], progress=True)
out["warm"], out["warm_compiles"] = list(names[len(out["import"]):]), w["compiles"]
n = len(names)
run_arena("slide", ["random", "heuristic", "mcts:iterations=20"], 4, progress=False)
out["run"] = names[n:]
n = len(names)
card_envs.vector.warm("slide", 256, progress=True)
out["vector"] = names[n:]
print(json.dumps(out))
"""


def _probe(cache: Path) -> tuple[dict, str]:
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["CARD_ENVS_CACHE_DIR"] = str(cache)
    p = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                       timeout=900, env=env, cwd=ROOT, check=False)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout.strip().splitlines()[-1]), p.stderr


def test_cold_then_warm_process(tmp_path: Path) -> None:
    cold, err = _probe(tmp_path)
    assert cold["import"] == []  # importing compiles nothing
    assert cold["warm_compiles"] == len(cold["warm"]) > 0
    # only Slide, the core and the agents used (plus numba's own helpers) are compiled
    allowed = ("card_envs.core.", "card_envs.slide.", "card_envs.agents.search:",
               "card_envs.agents.slide:", "_card_envs_search_slide_v0_", "numba.")
    others = [n for n in cold["warm"] if not n.startswith(allowed)]
    assert not others, others
    assert cold["run"] == []  # the warm-up game compiled everything the run uses
    lines = err.strip().splitlines()
    assert re.fullmatch(r"compiling slide_v0: random, heuristic, mcts:iterations=20 "
                        r"\(first run only\) \.\.\. \d+ s", lines[0]), lines
    assert re.fullmatch(r"compiling the batched slide_v0 engine \(once per process\) "
                        r"\.\.\. \d+ s", lines[-1]), lines
    assert len(lines) == 2, lines

    assert any(n.startswith("_card_envs_vector_slide_v0_") for n in cold["vector"])

    # the same cache: nothing compiled but the wrappers that run the cached parallel batch
    # drivers on a chosen number of threads (numba cannot cache those)
    warm, err = _probe(tmp_path)
    assert warm["import"] == warm["warm"] == warm["run"] == [] and warm["warm_compiles"] == 0
    wrapper = "card_envs.core.vector:_with_threads"
    assert any(n.startswith(wrapper) for n in warm["vector"]), warm["vector"]
    assert all(n.startswith((wrapper, "numba.")) for n in warm["vector"]), warm["vector"]
    lines = [ln for ln in err.strip().splitlines() if ln.startswith("compiling")]
    assert len(lines) == 1 and lines[0].startswith("compiling the batched slide_v0"), err


def test_compile_notice_is_silent_without_compiling(capsys: pytest.CaptureFixture) -> None:
    with compile_notice("nothing") as watch:
        pass
    with compile_notice("nothing", enabled=False):
        pass
    assert watch.compiles == 0 and capsys.readouterr().err == ""


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    return {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names} | \
        {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}


def test_the_cache_key_covers_what_compiled_code_depends_on() -> None:
    files = set(jit.kernel_sources())
    package, agents = ROOT / "card_envs", ROOT / "agents"
    upper = ("arena", "rl", "ui", "testing", "cli.py")  # never compiled: outside the key
    compiling = [p for p in agents.rglob("*.py")] + \
        [p for p in package.rglob("*.py") if p.relative_to(package).parts[0] not in upper]
    compiling = [p for p in compiling
                 if any(m == "numba" or m.endswith(".jit") for m in _imports(p))]
    missing = [p for p in compiling if p not in files and p.name not in jit._UNCACHED_FILES]
    assert compiling and not missing, missing
    for game in ("slide", "isflak", "op_glad_ijs", "flipology", "if_it_fits"):
        assert package / game / "layout.py" in files and package / game / "rules.py" in files
        assert package / game / "view.py" not in files  # a picture edit keeps the kernels
    assert package / "if_it_fits" / "parts" / "picture.py" not in files
    assert agents / "search.py" in files and package / "core" / "kernels.py" in files
    assert not any(p.is_relative_to(package / d) for p in files for d in upper)
