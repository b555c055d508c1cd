"""The arena on Ray: :func:`~card_envs.arena.run_arena` with ``backend="ray"`` sends its chunks
of deals (the same :func:`~card_envs.arena.runner._play_chunk` tasks the worker processes
play) to a Ray cluster as tasks, one CPU each, and gathers them in chunk order, so the
results equal a ``workers=1`` run of the same seed.

Which Ray: the one this process is already connected to (``ray.init(...)`` before the run:
it is kept afterwards); else ``address`` (``"auto"``: the cluster of ``ray start --head`` on
this machine, ``"ray://host:10001"``: Ray Client); else a local Ray started for the run and
shut down after it. Ray is the ``rllib`` extra's (``pip install 'card-envs[rllib]'``);
``docs/distributed.md`` has the cluster set-ups.

Command line (``card-envs arena``): :func:`add_ray_arguments` adds ``--ray`` and ``--address``,
:func:`ray_kwargs` turns them into ``run_arena`` keyword arguments.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from typing import Any

__all__ = ["RaySession", "add_ray_arguments", "import_ray", "keep_builtin_print",
           "local_runtime_env", "ray_kwargs", "run_tasks"]

_REMOTE: dict[str, Any] = {}


def import_ray() -> Any:
    """``ray``, or an ImportError naming the extra that brings it."""
    try:
        import ray
    except ImportError as e:
        raise ImportError("the Ray backend needs ray: pip install 'card-envs[rllib]' (or "
                          "pip install 'ray[default]')") from e
    return ray


def keep_builtin_print() -> None:
    """Keep Python's own ``print``: Ray's progress-bar manager (``ray.experimental.tqdm_ray``)
    replaces ``builtins.print`` in the driver, and numba cannot compile a kernel that calls a
    replaced ``print`` (numba's own ``get_num_threads`` does: the batched engine's threaded
    driver then fails to compile). Sets ``RAY_TQDM_PATCH_PRINT=0`` (unless set) and undoes a
    replacement already made."""
    import builtins

    os.environ.setdefault("RAY_TQDM_PATCH_PRINT", "0")
    tq = sys.modules.get("ray.experimental.tqdm_ray")
    original = getattr(tq, "_print", None)
    if original is not None and builtins.print is not original:
        builtins.print = original


def local_runtime_env() -> dict[str, Any]:
    """The runtime environment of a Ray started on this machine: its workers import what
    this process imports (a checkout that is not installed, ``tests/``...)."""
    paths = [p for p in sys.path if p and os.path.isdir(p)]
    return {"env_vars": {"PYTHONPATH": os.pathsep.join(paths)}}


def add_ray_arguments(parser: argparse.ArgumentParser) -> None:
    """``--ray`` and ``--address`` (for ``card-envs arena``)."""
    parser.add_argument("--ray", action="store_true",
                        help="play the games as Ray tasks (a local Ray unless --address); "
                             "results equal --workers 1's")
    parser.add_argument("--address", default=None, metavar="ADDRESS",
                        help="with --ray: the Ray cluster to join ('auto': the one `ray start "
                             "--head` runs on this machine; ray://HOST:10001 for Ray Client)")


def ray_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    """``run_arena`` keyword arguments of ``--ray`` / ``--address`` (``{}`` without ``--ray``;
    ``ValueError`` for ``--address`` without ``--ray``)."""
    if not getattr(args, "ray", False):
        if getattr(args, "address", None):
            raise ValueError("--address needs --ray")
        return {}
    return {"backend": "ray", "address": args.address}


class RaySession:
    """A connection to Ray for one run: reuses the current one, else joins ``address``, else
    starts a local Ray (no dashboard); :meth:`close` shuts down only what it started.
    ``cpus``: the cluster's CPUs (at least 1)."""

    def __init__(self, address: str | None = None) -> None:
        ray = import_ray()
        keep_builtin_print()
        self._ray = ray
        self.started = False
        if not ray.is_initialized():
            kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
            if address is None:
                kwargs["runtime_env"] = local_runtime_env()
            ray.init(address=address, **kwargs)
            self.started = True
        self.cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))

    def close(self) -> None:
        if self.started and self._ray.is_initialized():
            self._ray.shutdown()
        self.started = False

    def __enter__(self) -> RaySession:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _ray_chunk(play: Callable[[dict[str, Any]], list[dict[str, Any]]], task: dict[str, Any],
               paths: list[str]) -> list[dict[str, Any]]:
    """A Ray task: one arena chunk (the driver's import paths that exist here come first)."""
    for p in reversed(paths):
        if p not in sys.path and os.path.isdir(p):
            sys.path.insert(0, p)
    return play(task)


def run_tasks(play: Callable[[dict[str, Any]], list[dict[str, Any]]],
              tasks: list[dict[str, Any]], on_done: Callable[[int], None] | None = None
              ) -> list[dict[str, Any]]:
    """Play ``tasks`` as Ray tasks ``play(task)`` (the arena's
    :func:`~card_envs.arena.runner._play_chunk`: sent by reference, imported on the node)
    on the connected Ray; their log entries in task order. ``on_done(i)`` after task ``i``.
    A failing task cancels the others and raises its error."""
    ray = import_ray()
    keep_builtin_print()
    if "chunk" not in _REMOTE:
        _REMOTE["chunk"] = ray.remote(num_cpus=1, max_retries=0)(_ray_chunk)
    paths = [p for p in sys.path if p and os.path.isdir(p)]
    refs = [_REMOTE["chunk"].remote(play, t, paths) for t in tasks]
    index = {r: i for i, r in enumerate(refs)}
    parts: dict[int, list[dict[str, Any]]] = {}
    pending = list(refs)
    try:
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            for r in done:
                i = index[r]
                parts[i] = ray.get(r)
                if on_done is not None:
                    on_done(i)
    except BaseException:  # a failing chunk (or Ctrl-C): drop the others
        for r in pending:
            ray.cancel(r, force=True)
        raise
    return [g for i in range(len(tasks)) for g in parts[i]]
