"""Compiling several games in parallel processes (``card_envs.arena.precompile``): two processes
writing the same numba cache index at the same moment leave a sound cache under the lock; a
real precompile of two games fills the cache and stamps them, and a second one starts no
worker; a worker's failure (an exception, a dead process) is printed and recorded, not
hidden."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from card_envs.arena import precompile as pc

ROOT = Path(__file__).resolve().parents[2]
N_FUNCTIONS = 40

#: one racer: compiles f0..f{N-1} of racemod for its own argument type, meeting the other
#: racer before each function (files as a barrier), so both save the same index at once
RACER = r"""
import os, sys, time
folder, me, lock = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
sys.path.insert(0, folder)
if lock:
    from card_envs.arena.precompile import lock_numba_cache
    assert lock_numba_cache()
import racemod
other = "b" if me == "a" else "a"
arg = 1 if me == "a" else 1.5
for i in range(racemod.N):
    open(os.path.join(folder, "sync", f"{me}{i}"), "w").close()
    while not os.path.exists(os.path.join(folder, "sync", f"{other}{i}")):
        time.sleep(0.0002)
    getattr(racemod, f"f{i}")(arg)
"""

#: a fresh process: every function for both types, from the cache alone (compiles counted)
READER = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
from numba.core import event
compiles = []
class L(event.Listener):
    def on_start(self, ev):
        compiles.append(ev.data["dispatcher"].py_func.__name__)
    def on_end(self, ev):
        pass
event.register("numba:compile", L())
import racemod
ok = all(getattr(racemod, f"f{i}")(1) == 1 + i and getattr(racemod, f"f{i}")(1.5) == 1.5 + i
         for i in range(racemod.N))
print(json.dumps({"ok": ok, "compiles": compiles}))
"""


def _race(tmp_path: Path, lock: bool) -> tuple[Path, list[str]]:
    """Two racers on one cache; returns the cache folder and its mismatches."""
    folder, cache = tmp_path / "mod", tmp_path / "cache"
    (folder / "sync").mkdir(parents=True)
    (folder / "racemod.py").write_text(
        "from numba import njit\n\n" + f"N = {N_FUNCTIONS}\n"
        + "".join(f"\n\n@njit(cache=True)\ndef f{i}(x):\n    return x + {i}\n"
                  for i in range(N_FUNCTIONS)))
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    racers = [subprocess.Popen([sys.executable, "-c", RACER, str(folder), me, str(int(lock))],
                               env=env, cwd=ROOT, stderr=subprocess.PIPE, text=True)
              for me in ("a", "b")]
    for p in racers:
        _, err = p.communicate(timeout=600)
        assert p.returncode == 0, err[-3000:]
    return cache, pc.cache_mismatches(cache)


def test_two_processes_writing_one_index_under_the_lock(tmp_path: Path) -> None:
    cache, bad = _race(tmp_path, lock=True)
    assert bad == []
    assert len(list(cache.rglob("*.nbc"))) == 2 * N_FUNCTIONS  # both types of every function
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    p = subprocess.run([sys.executable, "-c", READER, str(tmp_path / "mod")], env=env,
                       capture_output=True, text=True, timeout=600, check=True)
    out = json.loads(p.stdout.strip().splitlines()[-1])
    assert out == {"ok": True, "compiles": []}  # every entry loads its own code


def test_lock_is_installed_once() -> None:
    from numba.core.caching import IndexDataCacheFile

    code = ("from card_envs.arena.precompile import lock_numba_cache as f; "
            "from numba.core.caching import IndexDataCacheFile as C; "
            "assert f(); s = C.save; assert f() and C.save is s and C._card_envs_locked; "
            "assert s.__wrapped__.__name__ == 'save'")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
    assert not getattr(IndexDataCacheFile, "_card_envs_locked", False)  # not in this process


PRECOMPILE = r"""
import io, json, sys
from card_envs.arena.precompile import precompile, pending
err = io.StringIO()
first = precompile(["slide", "isflak"], ["random"], stream=err)
second = precompile(["slide", "isflak"], ["random"], stream=err)
print(json.dumps({"first": first, "second": second, "text": err.getvalue(),
                  "pending": pending(["slide_v0", "isflak_v0", "flipology_v0"], ["random"])}))
"""


def test_precompile_two_games_then_nothing(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["CARD_ENVS_CACHE_DIR"] = str(tmp_path)
    p = subprocess.run([sys.executable, "-c", PRECOMPILE], env=env, capture_output=True,
                       text=True, timeout=900, cwd=ROOT, check=False)
    assert p.returncode == 0, p.stderr[-3000:]
    out = json.loads(p.stdout.strip().splitlines()[-1])
    first, second = out["first"], out["second"]
    if (os.cpu_count() or 1) < 2:
        assert first["processes"] == 0 and first["games"] == []  # nothing to share out
        return
    assert first["processes"] == 2 and first["failed"] == {}
    rows = {r["env_id"]: r for r in first["games"]}
    assert set(rows) == {"slide_v0", "isflak_v0"}
    assert all(r["compiles"] > 0 for r in rows.values())
    assert rows["slide_v0"]["pid"] != rows["isflak_v0"]["pid"]  # one game per process
    assert "compiled slide_v0: random (first run only) ... " in out["text"]
    assert "compiled 2 games in 2 processes (first run only; cached for later runs)" \
        in out["text"]
    assert second == {"games": [], "failed": {}, "processes": 0, "seconds": 0.0}
    assert out["pending"] == ["flipology_v0"]
    assert pc.cache_mismatches(tmp_path) == []
    # the arena then only loads: nothing compiles in a fresh process
    code = ("from card_envs.arena import warm; import json; print(json.dumps("
            "[warm(g, ['random'], progress=False)['compiles'] for g in ('slide', 'isflak')]))")
    p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=600, cwd=ROOT, check=True)
    assert json.loads(p.stdout.strip().splitlines()[-1]) == [0, 0]


def _failing_work(task: dict[str, Any]) -> dict[str, Any]:
    """A worker that fails for Isflak, dies for Flipology and warms nothing for the rest."""
    if task["env_id"] == "isflak_v0":
        raise RuntimeError("no such kernel")
    if task["env_id"] == "flipology_v0":
        os._exit(3)
    return {"env_id": task["env_id"], "seconds": 0.0, "compiles": 1, "pid": os.getpid()}


def test_worker_failures_are_printed_and_recorded() -> None:
    tasks = [{"env_id": e, "agents": ["random"]} for e in ("isflak_v0", "slide_v0")]
    out = io.StringIO()
    summary: dict[str, Any] = {"games": [], "failed": {}}
    pc._run_pool(tasks, 2, False, out, summary, work=_failing_work)  # no progress: still said
    assert summary["failed"] == {"isflak_v0": "RuntimeError: no such kernel"}
    assert [r["env_id"] for r in summary["games"]] == ["slide_v0"]
    assert out.getvalue().strip() == (
        "compiling isflak_v0 in a worker process failed (RuntimeError: no such kernel); "
        "it is compiled in this process instead, before its games")

    summary = {"games": [], "failed": {}}
    out = io.StringIO()
    pc._run_pool([{"env_id": "flipology_v0", "agents": ["random"]}], 2, True, out,
                 summary, work=_failing_work)
    assert list(summary["failed"]) == ["flipology_v0"]
    assert summary["failed"]["flipology_v0"].startswith("BrokenProcessPool")
    assert "compiling flipology_v0 in a worker process failed (BrokenProcessPool" \
        in out.getvalue()


def test_nothing_to_share_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.setenv("CARD_ENVS_CACHE_DIR", str(tmp_path))
    empty = {"games": [], "failed": {}, "processes": 0, "seconds": 0.0}
    err = io.StringIO()
    assert pc.precompile(["slide"], ["random", "heuristic"], stream=err) == empty
    assert pc.precompile(["slide", "isflak"], ["random"], processes=1, stream=err) == empty
    assert err.getvalue() == ""
    assert pc.pending(["slide", "isflak"], ["random"]) == ["slide", "isflak"]
    with pytest.raises(ValueError):
        pc.precompile(["slide", "isflak"], ["nosuchagent"], stream=err)
    with pytest.raises(ValueError):
        pc.precompile(["slide", "isflak"], ["random"], processes="many", stream=err)


def test_cli_option_and_mistakes_before_any_worker(capsys: pytest.CaptureFixture[str]) -> None:
    from card_envs.cli import main

    assert main(["arena", "--compile-workers", "many"]) == 2
    assert "--compile-workers" in capsys.readouterr().err
    assert main(["arena", "--game", "all", "--agents", "random,nobody", "--no-progress"]) == 2
    out = capsys.readouterr()
    assert "unknown agent 'nobody'" in out.err and "worker" not in out.err
    assert out.out == ""  # no game started
