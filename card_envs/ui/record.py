"""Replays: one game as JSON (seed or start state, options, actions). The engine is
deterministic, so that is the whole game.

Format (``format_version`` 1, shared with ``card_envs.core.replay``)::

    {"format": "card-envs-replay", "format_version": 1,
     "env_id": "slide_v0", "game_version": "0", "options": {...},
     "seed": 123, "start": null,        # the reset seed; or null and the full state dict
     "actions": [3, 17, ...],           # every action applied, in AEC order
     "players": ["heuristic", "random"],              # optional seat labels
     "result": {"points": [...], "winners": [...]}}   # optional, when the game ended

:mod:`card_envs.core.replay` records, checks, saves and loads the format (``save``, ``load``);
this module adapts it for the page and the CLI.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from card_envs.agents import make_agent
from card_envs.core import kernels as K
from card_envs.core import replay as R
from card_envs.core.registry import make_raw, resolve_env_id

__all__ = ["FORMAT", "FORMAT_VERSION", "make_replay", "play_back_envs",
           "record_game", "result_of"]

FORMAT, FORMAT_VERSION = R.FORMAT, R.FORMAT_VERSION


def json_safe(x: Any) -> Any:
    """``x`` with tuples as lists (options such as If It Fits' ``table``), for JSON."""
    if isinstance(x, dict):
        return {str(k): json_safe(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [json_safe(v) for v in x]
    return x


def result_of(env: Any) -> dict[str, Any] | None:
    """``{"points", "winners", "truncated"}`` of a finished game (as in its replay), else
    None."""
    return env.replay().get("result")


def make_replay(env: Any, players: Sequence[str] | None = None) -> dict[str, Any]:
    """The replay dict of ``env``'s game so far (``env.replay``: the seed or start state it
    recorded, every applied action, the result when it is over)."""
    return env.replay(None if players is None else [str(p) for p in players])


def play_back_envs(d: dict[str, Any]) -> Iterator[tuple[Any, int | None]]:
    """Replay ``d`` step by step: yields ``(env, seat)`` with the env before the game's first
    action (``seat`` None), then after each action (``seat``: who played it). The same env
    object is yielded each time, advanced; clone it to keep a position. Errors as
    :func:`card_envs.core.replay.iter_states` (``StateDictError``, ``IllegalActionError``
    naming the action's index)."""
    for step in R.iter_states(d):
        yield step.env, step.seat


def record_game(env_id: str, agents: Sequence[str], seed: int = 0,
                **options: Any) -> dict[str, Any]:
    """Play one game of ``agents`` (specs, one per seat; ``num_players`` defaults to their
    count) from ``seed`` and return its replay."""
    env_id = resolve_env_id(env_id)
    options.setdefault("num_players", len(agents))
    env = make_raw(env_id, **options)
    n = env.game.num_players
    if len(agents) != n:
        raise ValueError(f"{env_id} with {n} players needs {n} agent specs, got {len(agents)}")
    opts = dict(env.game.options)
    players = [make_agent(spec, env_id, seed=seed * 1009 + i, **opts)
               for i, spec in enumerate(agents)]
    env.reset(seed=seed)
    while not env.state_array[K.DONE]:
        env.step(int(players[int(env.state_array[K.CUR])].act_env(env)))
    return make_replay(env, players=list(agents))
