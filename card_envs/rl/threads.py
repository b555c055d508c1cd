"""The thread policy of a training process (:class:`ThreadPlan`): how many threads the learner
(torch's intra-op pool) and the sampler (numba's parallel loops of the batched engine and the
features) use, and whether the two overlap.

Why a plan and not each library's default: on 2 cores, numba's loops and torch's pool each
start one thread per core and spin while they wait for the slowest; with another process busy
on one core, every parallel call waits for the thread that lost its core, and the run went at
0.45x of the same run pinned to one core (docs/performance.md, "Training on a busy machine").
The native PPO therefore overlaps its two halves instead: the sampler plays the next rollout in
its own thread while the learner updates on the previous one, each on its share of the cores.
Neither half waits for a thread of the other, and a core lost to another process slows both
halves a little instead of stalling every parallel loop.

The user's thread counts are caps the plan never exceeds: ``threads=`` (the whole run), the
calling thread's ``numba.get_num_threads()`` (``NUMBA_NUM_THREADS``, ``numba.set_num_threads``),
the CPUs the process may run on (``os.sched_getaffinity``: ``taskset``, a container's cpuset)
and, for the learner's torch threads, ``torch_threads=`` or ``torch.get_num_threads()``.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from typing import Any

from card_envs.core.errors import OptionError

__all__ = ["ThreadPlan", "check_threads", "plan_threads", "usable_cores"]

MAX_THREADS = 1024


def usable_cores() -> int:
    """CPUs this process may run on (its affinity mask where the OS has one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def check_threads(name: str, value: Any) -> int | None:
    """``value`` as a thread count (``None`` stays ``None``), or one-line ``OptionError``."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_THREADS:
        raise OptionError(f"{name} must be a whole number in 1..{MAX_THREADS} or None, "
                          f"got {value!r}")
    return int(value)


@dataclass(frozen=True)
class ThreadPlan:
    """Threads of one training run. ``cap``: the most threads busy at once; ``overlap``: the
    sampler runs beside the learner (two threads) or they take turns; ``learner``: torch's
    intra-op threads (the update, and the sampler's forward passes); ``sampler``: the numba
    threads the sampler's batched engine may use (its tuner picks up to this many)."""

    cores: int
    cap: int
    overlap: bool
    learner: int
    sampler: int

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def plan_threads(pipeline: bool, threads: int | None = None,
                 torch_threads: int | None = None) -> ThreadPlan:
    """The plan for a run: overlap when pipelined and at least two threads are allowed
    (``threads``, numba's count, the usable cores), the cap split between the halves (learner
    ``cap // 2``, sampler the rest); else one half at a time, each with the whole cap.
    ``torch_threads`` (else ``torch.get_num_threads()``) caps the learner's share too."""
    import numba
    import torch

    threads = check_threads("threads", threads)
    torch_threads = check_threads("torch_threads", torch_threads)
    cores = usable_cores()
    cap = max(1, min([cores, numba.get_num_threads()] + ([threads] if threads else [])))
    torch_cap = torch_threads if torch_threads is not None else torch.get_num_threads()
    if pipeline and cap >= 2:
        half = cap // 2
        return ThreadPlan(cores, cap, True, max(1, min(half, torch_cap)), cap - half)
    return ThreadPlan(cores, cap, False, max(1, min(cap, torch_cap)), cap)
