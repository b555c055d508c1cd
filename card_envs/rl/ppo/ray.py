"""card-envs' own PPO on Ray: the samplers (:class:`~card_envs.rl.ppo.sampler.Sampler`) as Ray
actors on any node of a cluster, the learner in the driver
(``train_ppo(..., ray="auto", samplers=K)``, ``examples/train_ppo.py --ray ADDRESS``).

Each update the learner puts its weights in Ray's object store once (plus the snapshots the
league plays, each put once), every actor loads them, plays its share of the games and returns
its rollout; the learner merges the rollouts in sampler order and updates. The actors are the
in-process samplers' code with the same seeds, so a run with K actors equals a local run with
K samplers (``samplers=K`` without ``ray``) for the same seed and torch threads.

**A sampler process that dies** (a node lost, the process killed) is restarted by Ray
(``max_restarts=-1``); its unfinished rollout is dropped and asked again of the restarted
actor, which deals new games (its *generation* changes its seed: no deal is played twice) and
reloads the weights and snapshots. Only returned rollouts count: no game is lost from or
counted twice in ``games``; ``restarts`` counts the restarts.

Placement: one CPU per actor, spread over the nodes (``scheduling_strategy="SPREAD"``).
Needs ray (the ``rllib`` extra).
"""

from __future__ import annotations

import os
import time
from typing import Any

import numpy as np

__all__ = ["RaySamplers", "SamplerActor"]


class SamplerActor:
    """The body of a sampler actor: one :class:`~card_envs.rl.ppo.sampler.Sampler` on one CPU
    (torch and the batch on one thread)."""

    def __init__(self, env_id: str, players: int, cfg: dict[str, Any], options: dict[str, Any],
                 seed: int, index: int, sizes: list[int], paths: list[str]) -> None:
        import sys

        for p in reversed(paths):  # the driver's import paths that exist here come first
            if p not in sys.path and os.path.isdir(p):
                sys.path.insert(0, p)
        import torch

        from card_envs.arena.ray_backend import keep_builtin_print
        from card_envs.rl.ppo.sampler import Sampler

        keep_builtin_print()
        torch.set_num_threads(1)
        self.sampler = Sampler(env_id, players, cfg, options, seed, index, sizes, threads=1)
        self._weights_id: Any = None

    def restart(self, generation: int) -> int:
        """New deals for a restarted process; returns the process id."""
        self.sampler.restart(generation)
        return os.getpid()

    def where(self) -> dict[str, Any]:
        """This actor's node id, process id and generation."""
        import ray

        return {"node": ray.get_runtime_context().get_node_id(), "pid": os.getpid(),
                "generation": self.sampler.generation}

    def rollout(self, weights: dict[str, Any], pool: list[tuple[int, Any]]) -> Any:
        """Load the weights (``{"net", "critic"}``) and the league's snapshots, play one
        rollout and return it (copied out of the buffers by Ray's serialization)."""
        import ray

        s = self.sampler
        s.set_weights(weights["net"], weights["critic"])
        have = set(s.snapshot_ids)  # refs nested in a list arrive unresolved: fetch new ones
        s.sync_pool([(sid, w if sid in have or not isinstance(w, ray.ObjectRef)
                      else ray.get(w)) for sid, w in pool])
        return s.rollout()


class RaySamplers:
    """K sampler actors for one run of :class:`~card_envs.rl.ppo.run.PPORun` (module
    docstring). ``address``: the Ray to join (``None``: the one this process is connected to,
    else a local Ray started for the run and shut down by :meth:`close`)."""

    def __init__(self, address: str | None = None, name: str | None = None) -> None:
        from card_envs.arena.ray_backend import RaySession, import_ray

        self.ray = import_ray()
        self.session = RaySession(address)
        self.name = name or f"card-envs-sampler-{os.getpid()}-{int(time.time() * 1e3)}"
        self.actors: list[Any] = []
        self.generation: list[int] = []
        self.restarts = 0
        self.placement: list[dict[str, Any]] = []
        self._pool_refs: dict[int, Any] = {}

    def start(self, env_id: str, players: int, cfg: dict[str, Any], options: dict[str, Any],
              seed: int, sizes: list[int]) -> None:
        """Start one actor per entry of ``sizes`` (games each) and wait until all are up."""
        import sys

        ray = self.ray
        cls = ray.remote(num_cpus=1, max_restarts=-1, max_task_retries=0)(SamplerActor)
        paths = [p for p in sys.path if p and os.path.isdir(p)]
        self.actors = [cls.options(name=f"{self.name}-{k}", scheduling_strategy="SPREAD")
                       .remote(env_id, players, cfg, options, seed, k, sizes, paths)
                       for k in range(len(sizes))]
        self.generation = [0] * len(sizes)
        self.placement = ray.get([a.where.remote() for a in self.actors])

    def _recover(self, k: int) -> None:
        """Actor ``k`` died: wait for Ray to restart it, then give it a new generation."""
        ray = self.ray
        self.restarts += 1
        self.generation[k] += 1
        deadline = time.monotonic() + 300.0
        while True:
            try:
                ray.get(self.actors[k].restart.remote(self.generation[k]), timeout=60)
                self.placement[k] = ray.get(self.actors[k].where.remote(), timeout=60)
                return
            except (ray.exceptions.RayActorError, ray.exceptions.GetTimeoutError):
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)

    def rollout(self, net: dict[str, np.ndarray], critic: dict[str, np.ndarray] | None,
                pool: list[tuple[int, Any]]) -> list[Any]:
        """One rollout of every actor with these weights (each put in the object store once);
        rollouts of a dead actor are asked again of its restarted process."""
        ray = self.ray
        wref = ray.put({"net": net, "critic": critic})
        for sid, w in pool:  # each snapshot goes to the object store once
            if sid not in self._pool_refs:
                self._pool_refs[sid] = ray.put(w)
        ids = {sid for sid, _ in pool}
        self._pool_refs = {k: v for k, v in self._pool_refs.items() if k in ids}
        pref = [(sid, self._pool_refs[sid]) for sid, _ in pool]
        refs = [a.rollout.remote(wref, pref) for a in self.actors]
        out: list[Any] = [None] * len(refs)
        for k, ref in enumerate(refs):
            while True:
                try:
                    out[k] = ray.get(ref)
                    break
                except ray.exceptions.RayActorError:
                    self._recover(k)
                    ref = self.actors[k].rollout.remote(wref, pref)
        return out

    def close(self) -> None:
        for a in self.actors:
            try:
                self.ray.kill(a)
            except Exception:  # noqa: BLE001 - already gone
                pass
        self.actors = []
        self.session.close()
