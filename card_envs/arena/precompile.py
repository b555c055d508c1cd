"""Compiling several games at once, before their arenas: each game's kernels are compiled (or
loaded from the on-disk cache, :mod:`card_envs.core.jit`) by :func:`card_envs.arena.warm` in
worker processes, one game per task, so that a first run of ``card-envs arena --game all``
compiles on every core. numba compiles under a process-wide lock, so threads would not help.

**Shared kernels.** The games share kernels (``card_envs.core.kernels``, the search's rollout
policy), each compiled for the argument types of the game that calls it, and numba's on-disk
cache keeps one index per function: two processes adding entries to one index at the same time
can pair an entry with the other process's machine code (numba numbers the data files from the
index it read), which crashes the process that loads it later (``NRT_adapt_ndarray_to_python
descr is NULL``). The worker processes therefore hold a file lock on the cache folder while
they read or write an index and its data (:func:`lock_numba_cache`): entries of one function
written by two processes are serialized, so every index entry names its own code
(``tests/arena/test_precompile.py`` checks it with two processes compiling the same functions
at the same moment).

**Failures are reported, never hidden.** A worker that raises, or dies, leaves its game
uncompiled: :func:`precompile` prints one line saying so (always, even without ``progress``)
and the arena then compiles that game in its own process, as it does without this step, with
its own ``compiling ...`` line. Mistakes in names and options are raised as they would be
by the arena (``ValueError``, ``TypeError``).

**Only once.** A worker that warmed a game writes a stamp into the cache folder
(``warm/<env_id>-<digest>.ok``, the digest over the agents, seats and options); games with a
stamp are not sent to workers again, so a later run starts no worker process at all.
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import os
import pickle
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TextIO

__all__ = ["COMPILE_SECONDS", "cache_mismatches", "lock_numba_cache", "pending", "precompile"]

#: cold compile seconds of each game with random, heuristic and mcts (2-core machine, one
#: process, docs/performance.md): the longest go to the workers first
COMPILE_SECONDS = {"if_it_fits_v0": 37.0, "flipology_v0": 23.0, "slide_v0": 13.0,
                   "op_glad_ijs_v0": 13.0, "isflak_v0": 7.0}
_LOCK_FILE = ".card_envs_cache.lock"


def lock_numba_cache() -> bool:
    """Make this process hold an ``flock`` on a lock file in a cache folder while numba reads
    (shared) or writes (exclusive) an index and its data there (numba's
    ``IndexDataCacheFile.load`` and ``save``). Returns False, changing nothing, where that is
    not possible (no ``fcntl``, or a numba without those methods); idempotent."""
    if not _lock_supported():
        return False
    import fcntl

    from numba.core.caching import IndexDataCacheFile

    if getattr(IndexDataCacheFile, "_card_envs_locked", False):
        return True

    def locked(method: Callable[..., Any], mode: int) -> Callable[..., Any]:
        @functools.wraps(method)
        def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
            folder = self._cache_path
            os.makedirs(folder, exist_ok=True)
            with open(os.path.join(folder, _LOCK_FILE), "a+b") as f:
                fcntl.flock(f, mode)
                try:
                    return method(self, *args, **kwargs)
                finally:
                    fcntl.flock(f, fcntl.LOCK_UN)
        return wrapper

    IndexDataCacheFile.save = locked(IndexDataCacheFile.save, fcntl.LOCK_EX)
    IndexDataCacheFile.load = locked(IndexDataCacheFile.load, fcntl.LOCK_SH)
    IndexDataCacheFile._card_envs_locked = True
    return True


class _DataReader(pickle.Unpickler):
    """Reads a numba cache data file without rebuilding its environment (which would import
    the function's module: a generated one is not importable by name)."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) == ("numba.core.environment", "_rebuild_env"):
            return lambda *args: None
        return super().find_class(module, name)


def cache_mismatches(folder: str | Path) -> list[str]:
    """Index entries under ``folder`` (a numba cache folder) whose data file holds the code of
    another signature than the entry's, or is missing: what two processes writing one index
    at once without :func:`lock_numba_cache` can leave behind. Empty when the cache is sound."""
    bad = []
    for index in sorted(Path(folder).rglob("*.nbi")):
        with open(index, "rb") as f:
            pickle.load(f)  # numba's version
            _, overloads = pickle.loads(f.read())
        for key, name in overloads.items():
            data = index.parent / name
            if not data.exists():
                bad.append(f"{index.name}: {name} missing")
                continue
            sig = _DataReader(io.BytesIO(data.read_bytes())).load()[3]  # the signature
            if tuple(sig.args) != tuple(key[0]):
                bad.append(f"{index.name}: {name} holds {sig.args}, indexed as {key[0]}")
    return bad


def _stamp(env_id: str, agents: Sequence[str], num_players: int,
           options: dict[str, Any]) -> Path:
    """The file saying that ``env_id`` was warmed with these agents, seats and options."""
    from card_envs.core.jit import cache_dir

    key = json.dumps([env_id, sorted(agents), num_players, options], sort_keys=True,
                     default=repr)
    digest = hashlib.sha1(key.encode()).hexdigest()[:12]
    return cache_dir() / "warm" / f"{env_id}-{digest}.ok"


def pending(env_ids: Sequence[str], agents: Sequence[str], num_players: int = 2,
            **game_options: Any) -> list[str]:
    """The games of ``env_ids`` that no worker has warmed yet with these agents, seats and
    options in the current kernel cache (no stamp)."""
    return [e for e in env_ids
            if not _stamp(e, agents, num_players, game_options).exists()]


def _warm_task(task: dict[str, Any]) -> dict[str, Any]:
    """Worker: compile (or load) one game's kernels, write its stamp, report the time."""
    from card_envs.arena.runner import warm
    from card_envs.core.registry import register

    lock_numba_cache()
    if task.get("manifest") is not None:  # a game registered at run time in the parent
        register(task["manifest"])
    res = warm(task["env_id"], task["agents"], num_players=task["num_players"],
               progress=False, **task["options"])
    stamp = _stamp(task["env_id"], task["agents"], task["num_players"], task["options"])
    stamp.parent.mkdir(parents=True, exist_ok=True)
    stamp.write_text(json.dumps({"seconds": res["seconds"], "compiles": res["compiles"]}))
    return {**res, "pid": os.getpid()}


def _describe(exc: BaseException) -> str:
    """``KindOfError: message`` on one line, at most 300 characters."""
    text = " ".join(f"{type(exc).__name__}: {exc}".split())
    return text if len(text) <= 300 else text[:297] + "..."


def precompile(env_ids: Sequence[str], agents: Sequence[str], num_players: int = 2,
               processes: int | str = "auto", progress: bool = True,
               stream: TextIO | None = None, **game_options: Any) -> dict[str, Any]:
    """Compile the kernels that arenas of ``agents`` (specs) at ``env_ids`` will use, the
    games in parallel worker processes (spawned; one game per task, the longest compiles
    first), so that each arena then only loads them from the cache.

    ``processes``: ``"auto"`` is one per core, at most one per game left to compile; with 1 (or
    one game left, or one core) nothing is done here and each arena compiles its own game, as
    without this step. Games a worker warmed before (:func:`pending`) are skipped.
    With ``progress``, a bar on ``stream`` (stderr) and a line per game. A worker's failure is
    always printed (the arena then compiles that game itself). Returns ``{"games": rows per
    warmed game (env_id, seconds, compiles, pid), "failed": {env_id: error}, "processes",
    "seconds"}``."""
    from card_envs.agents.registry import check_spec
    from card_envs.core.registry import ENV_IDS, manifest, resolve_env_id

    out = stream or sys.stderr
    env_ids = [resolve_env_id(e) for e in env_ids]
    if not all(isinstance(a, str) for a in agents):
        raise TypeError("precompile takes agent specs (str): instances cannot be sent to "
                        "worker processes")
    for e in env_ids:
        for a in agents:
            check_spec(a, e)  # mistakes before anything starts
    todo = pending(env_ids, list(agents), num_players, **game_options)
    cpus = os.cpu_count() or 1
    if processes == "auto":
        processes = min(cpus, len(todo))
    elif not isinstance(processes, int) or isinstance(processes, bool):
        raise ValueError(f"processes is an integer or 'auto', got {processes!r}")
    elif processes <= 0:
        processes = cpus
    processes = min(processes, len(todo))
    summary: dict[str, Any] = {"games": [], "failed": {}, "processes": processes,
                               "seconds": 0.0}
    if processes < 2 or not _lock_supported():
        summary["processes"] = 0
        return summary
    todo.sort(key=lambda e: -COMPILE_SECONDS.get(e, 20.0))
    t0 = time.perf_counter()
    tasks = [{"env_id": e, "agents": list(agents), "num_players": num_players,
              "options": game_options,
              "manifest": None if e in ENV_IDS else manifest(e)} for e in todo]
    _run_pool(tasks, processes, progress, out, summary)
    summary["seconds"] = time.perf_counter() - t0
    if progress and summary["games"]:
        n = len(summary["games"])
        print(f"compiled {n} game{'s' * (n > 1)} in {processes} processes (first run only; "
              f"cached for later runs) ... {summary['seconds']:.0f} s", file=out, flush=True)
    return summary


def _lock_supported() -> bool:
    """Whether worker processes can lock the cache (:func:`lock_numba_cache` would work)."""
    try:
        import fcntl  # noqa: F401

        from numba.core.caching import IndexDataCacheFile
    except ImportError:
        return False
    return all(callable(getattr(IndexDataCacheFile, m, None)) for m in ("save", "load"))


def _run_pool(tasks: list[dict[str, Any]], processes: int, progress: bool, out: TextIO,
              summary: dict[str, Any],
              work: Callable[[dict[str, Any]], dict[str, Any]] = _warm_task) -> None:
    """Run ``work`` (:func:`_warm_task`) on every task in ``processes`` spawned workers; fill
    ``summary`` (rows, failures). An ``OptionError`` (bad game options, which the arena would
    raise as well) is raised after the pool ends; any other failure, a dead worker included,
    is printed and recorded in ``summary["failed"]``."""
    import multiprocessing
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

    from card_envs.arena.warmup import notice_label
    from card_envs.core.errors import OptionError
    from card_envs.core.progress import tqdm_class

    bar = tqdm_class()(total=len(tasks), disable=not progress, unit="game", leave=False,
                       desc=f"compiling in {processes} processes", file=out)
    user_error: BaseException | None = None
    tty = progress and getattr(out, "isatty", lambda: False)()
    try:
        ctx = multiprocessing.get_context("spawn")  # numba and fork do not mix
        with ProcessPoolExecutor(max_workers=processes, mp_context=ctx) as pool:
            futures = {pool.submit(work, t): t for t in tasks}
            left = set(futures)
            while left:
                done, left = wait(left, timeout=1.0, return_when=FIRST_COMPLETED)
                if tty:
                    bar.refresh()  # the elapsed time moves while a game compiles
                for fut in done:
                    task = futures[fut]
                    env_id = task["env_id"]
                    bar.update(1)
                    try:
                        row = fut.result()
                    except OptionError as e:  # the arena would raise it too: stop there
                        user_error = user_error or e
                        continue
                    except Exception as e:  # noqa: BLE001  (reported, then compiled here)
                        summary["failed"][env_id] = _describe(e)
                        bar.write(f"compiling {env_id} in a worker process failed "
                                  f"({_describe(e)}); it is compiled in this process "
                                  "instead, before its games", file=out)
                        continue
                    summary["games"].append(row)
                    if progress:
                        what = "compiled" if row["compiles"] else "loaded from the cache:"
                        bar.write(f"{what} {notice_label(env_id, task['agents'])} (first run "
                                  f"only) ... {row['seconds']:.0f} s", file=out)
        if user_error is not None:
            raise user_error
    finally:
        bar.close()
