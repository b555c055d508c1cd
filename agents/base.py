"""The agent interface shared by every baseline: observation + action mask in, action out."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np

from card_envs.agents.params import Param
from card_envs.core.registry import env_class, is_registered


class Agent:
    """A policy for one seat of one game (``env_id``).

    An agent sees exactly what the env gives its seat: ``observation`` (the game's observation
    vector) and ``action_mask`` (int8, 1 = legal) and returns one legal action. All randomness
    comes from ``self.rng`` (a :class:`random.Random`), so an agent built or reset with a fixed
    seed plays the same actions for the same inputs.

    ``options`` are the game's options (``num_players=...``); agents ignore the ones they do
    not need, so the arena can pass the same options to the env and to every agent.
    """

    name: ClassVar[str] = "agent"
    #: True for agents that search the game's rules (MCTS...). The arena then calls
    #: :meth:`act_state` with the true state; such an agent must read it only through
    #: ``Engine.resample(state, seat, rng)``, which keeps exactly what its seat knows.
    needs_state: ClassVar[bool] = False
    #: the parameters this class takes besides ``env_id``, ``seed`` and game options
    #: (:mod:`card_envs.agents.params`: kinds and ranges, checked before anything runs)
    params: ClassVar[dict[str, Param]] = {}

    def __init__(self, env_id: str, seed: int | None = None, **options: Any) -> None:
        if is_registered(env_id):  # a typo in a game option (or agent parameter) is an error
            specs = env_class(env_id).game_class.option_specs()
            unknown = sorted(set(options) - set(specs))
            if unknown:
                raise ValueError(f"{type(self).__name__}: unknown parameter(s) or game "
                                 f"option(s) {unknown}; game options of {env_id!r}: "
                                 f"{sorted(specs)}")
        self.env_id = env_id
        self.options = dict(options)
        self.seed = seed
        self.rng = random.Random(seed)

    def reset(self, seed: int | None = None) -> None:
        """Start a new game. With a ``seed`` the RNG is re-seeded (same seed, same play);
        without one the RNG stream simply continues."""
        if seed is not None:
            self.seed = seed
            self.rng.seed(seed)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "act" in cls.__dict__ and not getattr(cls.__dict__["act"], "_checked", False):
            cls.act = _checked_act(cls.__dict__["act"])

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """The action to play (a legal one: ``action_mask[action] == 1``). Takes the
        observation array and its mask, or what a PettingZoo env gives: ``env.observe(agent)``
        / ``env.last()[0]`` (the dict with ``"observation"`` and ``"action_mask"``) or the
        whole ``env.last()`` tuple; anything else is a ``TypeError`` saying what it expects."""
        raise NotImplementedError

    def act_state(self, state: np.ndarray, observation: np.ndarray,
                  action_mask: np.ndarray) -> int:
        """The action for the seat to act in ``state`` (the engine's int32 state array, not to
        be modified). Agents without ``needs_state`` ignore the state and call :meth:`act`."""
        return self.act(observation, action_mask)

    def act_env(self, env: Any) -> int:
        """The action for ``env.agent_selection`` of a card-envs AEC env (convenience for
        PettingZoo loops: ``env.step(agent.act_env(env))``)."""
        obs = env.observe(env.agent_selection)
        if self.needs_state:
            return self.act_state(env.state_array, obs["observation"], obs["action_mask"])
        return self.act(obs["observation"], obs["action_mask"])

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.env_id!r}, seed={self.seed!r})"


def legal_actions(action_mask: np.ndarray) -> np.ndarray:
    """Indices of the legal actions; ``ValueError`` if there are none (the seat must not
    be asked to act)."""
    legal = np.flatnonzero(action_mask)
    if legal.size == 0:
        raise ValueError("action_mask has no legal action: this seat is not to act")
    return legal


_EXPECTS = ("act() takes (observation, action_mask) arrays, or the observation dict a "
            "PettingZoo env gives (env.observe(agent), env.last()[0]: keys 'observation' and "
            "'action_mask'), or the env.last() tuple")


def as_act_inputs(observation: Any, action_mask: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """``(observation, action_mask)`` arrays from any of the forms :meth:`Agent.act` accepts;
    ``TypeError`` / ``ValueError`` naming what was expected otherwise."""
    if isinstance(observation, tuple) and len(observation) == 5 and action_mask is None:
        observation = observation[0]  # env.last(): (obs, reward, terminated, truncated, info)
    if isinstance(observation, Mapping):
        if action_mask is not None or not {"observation", "action_mask"} <= set(observation):
            raise TypeError(_EXPECTS)
        observation, action_mask = observation["observation"], observation["action_mask"]
    if action_mask is None:
        raise TypeError(f"{_EXPECTS}; got a {type(observation).__name__} and no action_mask")
    try:
        obs = None if observation is None else np.asarray(observation)  # a mask-only agent
        mask = np.asarray(action_mask)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{_EXPECTS}: {e}") from None
    numeric = mask.dtype == np.bool_ or np.issubdtype(mask.dtype, np.number)
    if (obs is not None and obs.ndim != 1) or mask.ndim != 1 or not numeric:
        raise ValueError(f"{_EXPECTS}; got observation shape {getattr(obs, 'shape', None)}, "
                         f"action_mask shape "
                         f"{mask.shape} ({mask.dtype}); both must be 1-D")
    if not mask.any():
        raise ValueError("action_mask has no legal action: this seat is not to act (or the "
                         "game is over); act() is asked only for the seat to act")
    return obs, mask


def _checked_act(fn: Any) -> Any:
    """``fn`` (a subclass's ``act``) behind :func:`as_act_inputs`; the usual call with a numpy
    observation and mask goes straight through."""
    def act(self: Agent, observation: Any, action_mask: Any = None) -> int:
        if action_mask is not None and type(observation) is np.ndarray and \
                type(action_mask) is np.ndarray and observation.ndim == 1 and \
                action_mask.ndim == 1:
            return fn(self, observation, action_mask)
        return fn(self, *as_act_inputs(observation, action_mask))

    act.__doc__, act.__name__, act.__qualname__ = fn.__doc__ or Agent.act.__doc__, \
        fn.__name__, fn.__qualname__
    act._checked = True  # type: ignore[attr-defined]
    return act

