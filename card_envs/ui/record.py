"""Replays: one game as JSON (seed or start state, options, actions). The engine is
deterministic, so that is the whole game.

Format (``format_version`` 1, shared with ``card_envs.core.replay``)::

    {"format": "card-envs-replay", "format_version": 1,
     "env_id": "slide_v0", "game_version": "0", "options": {...},
     "seed": 123, "start": null,        # the reset seed; or null and the full state dict
     "actions": [3, 17, ...],           # every action applied, in AEC order
     "players": ["heuristic", "random"],              # optional seat labels
     "result": {"points": [...], "winners": [...]}}   # optional, when the game ended

:func:`play_back_envs` is the one reader of the format in the ui layer (it replays the actions
on ``make_raw(env_id, **options)``), so switching it to the core's reader is one function.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from agents import make_agent
from card_envs.core import kernels as K
from card_envs.core.errors import IllegalActionError, StateDictError
from card_envs.core.registry import env_class, env_ids, make_raw, resolve_env_id

__all__ = ["FORMAT", "FORMAT_VERSION", "load_replay", "make_replay", "play_back_envs",
           "record_game", "result_of", "save_replay"]

FORMAT = "card-envs-replay"
FORMAT_VERSION = 1


def json_safe(x: Any) -> Any:
    """``x`` with tuples as lists (options such as If It Fits' ``table``), for JSON."""
    if isinstance(x, dict):
        return {str(k): json_safe(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [json_safe(v) for v in x]
    return x


def result_of(env: Any) -> dict[str, Any] | None:
    """``{"points": [...], "winners": [bool per seat], "truncated": bool}`` of a finished
    game (points as ints where they are whole), else None."""
    if not _over(env):
        return None
    points, winners = env.game.outcome(env.state_array)
    return {"points": [int(p) if float(p).is_integer() else float(p) for p in points],
            "winners": [bool(w) for w in winners],
            "truncated": bool(env.state_array[K.DONE] == K.DONE_TRUNCATED)}


def _over(env: Any) -> bool:
    return bool(env.state_array[K.DONE])


def make_replay(env: Any, seed: int | None, actions: Sequence[int],
                start: dict[str, Any] | None = None,
                players: Sequence[str] | None = None) -> dict[str, Any]:
    """The replay dict of ``env``'s game: dealt from ``seed`` (or loaded from ``start``, a
    full state dict), then ``actions``; the result when it is over."""
    if (seed is None) == (start is None):
        raise ValueError("a replay starts from a seed or from a start state (exactly one)")
    d: dict[str, Any] = {
        "format": FORMAT, "format_version": FORMAT_VERSION,
        "env_id": env.game.env_id, "game_version": env.game.version,
        "options": json_safe(env.game.options),
        "seed": None if seed is None else int(seed), "start": start,
        "actions": [int(a) for a in actions],
    }
    if players is not None:
        d["players"] = [str(p) for p in players]
    res = result_of(env)
    if res is not None:
        d["result"] = res
    return d


def _check_header(d: Any) -> None:
    if not isinstance(d, dict):
        raise StateDictError(f"a replay is a JSON object, got {type(d).__name__}")
    if d.get("format") != FORMAT:
        raise StateDictError(f"not a card-envs replay: format is {d.get('format')!r}, "
                             f"expected {FORMAT!r}")
    if d.get("format_version") != FORMAT_VERSION:
        raise StateDictError(f"replay format_version {d.get('format_version')!r} is not "
                             f"supported (this version reads {FORMAT_VERSION})")
    env_id = d.get("env_id")
    if not isinstance(env_id, str) or env_id not in env_ids():
        raise StateDictError(f"replay env_id {env_id!r} is not a registered game "
                             f"({list(env_ids())})")
    if not isinstance(d.get("options", {}), dict):
        raise StateDictError(f"replay options must be an object, got {d.get('options')!r}")
    actions = d.get("actions")
    if not isinstance(actions, list) or not all(type(a) is int for a in actions):
        raise StateDictError("replay actions must be a list of integers")
    seed, start = d.get("seed"), d.get("start")
    if seed is None and not isinstance(start, dict):
        raise StateDictError("a replay needs a seed (an integer) or a start state dict")
    if seed is not None and (type(seed) is not int or seed < 0):
        raise StateDictError(f"replay seed must be a non-negative integer, got {seed!r}")
    players = d.get("players")
    if players is not None and not (isinstance(players, list) and
                                    all(isinstance(p, str) for p in players)):
        raise StateDictError("replay players must be a list of strings")


def play_back_envs(d: dict[str, Any]) -> Iterator[tuple[Any, int | None]]:
    """Replay ``d`` step by step: yields ``(env, seat)`` with the env before the game's first
    action (``seat`` None), then after each action (``seat``: who played it). The same env
    object is yielded each time, advanced; clone it to keep a position.

    A malformed replay, another game version or options the game refuses raise
    :class:`StateDictError`; an action that is not legal where it stands raises
    :class:`IllegalActionError` naming its index."""
    _check_header(d)
    env_id = resolve_env_id(d["env_id"])
    options = d.get("options", {})
    unknown = sorted(set(options) - set(env_class(env_id).game_class.option_specs()))
    if unknown:
        raise StateDictError(f"replay options {unknown} are not options of {env_id}")
    try:
        env = make_raw(env_id, **options)
    except (ValueError, TypeError) as e:  # OptionError is a ValueError
        raise StateDictError(f"replay options: {e}") from e
    if d.get("game_version") != env.game.version:
        raise StateDictError(f"replay of {env_id} game version {d.get('game_version')!r}, but "
                             f"this card-envs plays version {env.game.version!r}: its actions "
                             "would not replay the same game")
    if d.get("seed") is not None:
        env.reset(seed=d["seed"])
    else:
        env.reset(seed=0)
        env.load_state_dict(d["start"])
    yield env, None
    for k, a in enumerate(d["actions"]):
        seat = int(env.state_array[K.CUR])
        if seat < 0:
            raise IllegalActionError(f"replay action {k} ({a}): the game is already over after "
                                     f"{k} actions", a, "end", [])
        try:
            env.step(a)
        except IllegalActionError as e:
            raise IllegalActionError(f"replay action {k}: {e}", a, e.phase, e.legal) from e
        yield env, seat


def save_replay(d: dict[str, Any], path: str | Path) -> None:
    """Write ``d`` as JSON (checked first: a malformed replay is never written)."""
    _check_header(d)
    Path(path).write_text(json.dumps(d, separators=(",", ":")) + "\n", encoding="utf-8")


def load_replay(path: str | Path) -> dict[str, Any]:
    """Read a replay file (``StateDictError`` if it is not JSON or not a replay)."""
    try:
        d = json.loads(Path(path).read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise StateDictError(f"{path}: not JSON ({e})") from e
    _check_header(d)
    return d


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
    actions: list[int] = []
    while not _over(env):
        a = int(players[int(env.state_array[K.CUR])].act_env(env))
        env.step(a)
        actions.append(a)
    return make_replay(env, seed, actions, players=list(agents))
