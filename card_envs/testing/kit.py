"""The kit's building blocks: a game configuration (:class:`Case`), random play, digests and
snapshots of everything observable."""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import card_envs
from card_envs.core import kernels as K
from card_envs.core.registry import manifest, manifests


@dataclass(frozen=True)
class Case:
    """One game configuration: an env id and its options."""

    env_id: str
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def id(self) -> str:
        opts = ",".join(f"{k}={v}" for k, v in sorted(self.options.items()))
        return f"{self.env_id}[{opts}]" if opts else self.env_id

    def raw(self, **kw: Any) -> Any:
        """A raw env of this configuration (an illegal action raises)."""
        return card_envs.make_raw(self.env_id, **self.options, **kw)

    def wrapped(self, **kw: Any) -> Any:
        """A wrapped env of this configuration (an illegal action loses)."""
        return card_envs.make(self.env_id, **self.options, **kw)


def random_action(env: Any, rnd: random.Random) -> int | None:
    """A uniformly random legal action of the agent to act (None for a finished agent)."""
    agent = env.agent_selection
    if env.terminations[agent] or env.truncations[agent]:
        return None
    return rnd.choice(np.flatnonzero(env.observe(agent)["action_mask"]).tolist())


def play_steps(env: Any, rnd: random.Random, k: int) -> int:
    """Play up to ``k`` random legal actions while the game runs; returns how many."""
    done = 0
    while done < k and not env.state_array[K.DONE]:
        env.step(random_action(env, rnd))
        done += 1
    return done


def digest(env_id: str, options: dict[str, Any], seed: int, games: int = 3) -> str:
    """SHA-256 of observations, masks, rewards and infos over ``games`` seeded random games
    (reset(seed) for the first, reset() for the rest); used across processes."""
    env = card_envs.make_raw(env_id, **options)
    rnd = random.Random(seed)
    h = hashlib.sha256()
    env.reset(seed=seed)
    for g in range(games):
        if g:
            env.reset()
        for agent in env.agent_iter():
            obs, rew, term, trunc, info = env.last()
            h.update(obs["observation"].tobytes())
            h.update(obs["action_mask"].tobytes())
            h.update(repr((agent, rew, term, trunc, sorted(info.items()))).encode())
            env.step(None if term or trunc else
                     rnd.choice(np.flatnonzero(obs["action_mask"]).tolist()))
    return h.hexdigest()


def snapshot(env: Any) -> str:
    """Everything observable about an env's state, as a JSON string (for 'unchanged')."""
    return json.dumps({
        "state": env.state_dict(),
        "agent": env.agent_selection,
        "agents": list(env.agents),
        "rewards": env.rewards,
        "cum": env._cumulative_rewards,
        "terms": env.terminations,
        "mask": env.observe(env.agent_selection)["action_mask"].tolist()
        if env.agent_selection in env.agents else None,
    }, sort_keys=True)


def cases(env_ids: Any = None) -> list[Case]:
    """The kit cases: every ``test_cases`` entry of every registered game's manifest (or of
    the games ``env_ids`` names)."""
    chosen = manifests() if env_ids is None else [manifest(e) for e in env_ids]
    return [Case(m.env_id, dict(o)) for m in chosen for o in m.test_cases]
