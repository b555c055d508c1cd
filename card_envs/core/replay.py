"""Replays: one game as JSON, the seed (or start state) and every action, played back exactly.

The engines are deterministic, so a game is its start and its actions. An env records both
(:meth:`CardEnv.replay`, also mid-game and for the parallel env, whose windows are recorded in
the kernel's AEC order); :func:`play_back` rebuilds the game, :func:`iter_states` steps through
it (for viewers), :func:`save` / :func:`load` write and read files.

Format (``format_version`` 1)::

    {
      "format": "card-envs-replay", "format_version": 1,
      "env_id": "slide_v0", "game_version": "0",
      "options": {...},          # the game options the env was made with (normalized)
      "seed": 123,               # the reset seed, or null when the game started from ...
      "start": null,             # ... this full state dict (env.state_dict()): a reset without
                                 #     seed, env.load_state_dict(...) or env.resample(...)
      "actions": [3, 17, ...],   # every applied action, in AEC order
      "players": ["heuristic", "random"],                     # optional: a label per seat
      "result": {"points": [...], "winners": [...], "truncated": false},  # optional: the end
      "forfeit": {"agents": ["player_1"], "actions": [12]}    # optional: see below
    }

``result`` is filled when the game has ended: per seat its points and whether it won (bools),
and whether the cut-off ended it. ``forfeit`` replaces ``result`` when an illegal action ended
the game (``illegal_action="lose"``): the offenders (one in the AEC env, possibly several in a
parallel window) and their actions, applied after ``actions``.

Errors: a malformed replay, another format version, an unknown env id, a different game
version, bad options or start state, or a ``result`` that the actions do not give raise
:class:`~card_envs.core.errors.StateDictError`; an illegal action in ``actions`` raises
:class:`~card_envs.core.errors.IllegalActionError` naming its index.

A replay file may come from anyone, so :func:`load` reads it with limits: at most
:data:`MAX_BYTES` (64 MiB) of UTF-8 JSON, no integer longer than 40 digits, no ``NaN``, no key
twice in an object, nesting at most :data:`MAX_DEPTH` levels, at most :data:`MAX_ACTIONS`
actions, a seed below 2**64, one label of at most :data:`MAX_LABEL` characters per seat in
``players``. ``options`` holds only the game's own options (not env arguments such as
``illegal_action``), and an option that could read a file (If It Fits' ``deck``) must be
given as data, not as a path.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from card_envs.core import kernels as K
from card_envs.core import registry
from card_envs.core.checks import check_nesting, is_int, short_repr
from card_envs.core.errors import IllegalActionError, OptionError, StateDictError
from card_envs.core.files import read_json, write_text_atomic
from card_envs.core.game import STATE_MAX_DEPTH, STATE_MAX_ITEMS, Game, check_untrusted_options

FORMAT = "card-envs-replay"
FORMAT_VERSION = 1
REQUIRED = ("format", "format_version", "env_id", "game_version", "options", "seed", "start",
            "actions")
OPTIONAL = ("players", "result", "forfeit")

#: limits on a replay (a file may come from anyone). The longest games the options allow are
#: Op Glad IJs' at 6 seats and ``max_turned=1000000``: random play takes about 6.5 actions per
#: turned card (129,708 actions for ``max_turned=20000``), so about 6.5 million actions, at
#: about 4.1 bytes each in the file: 27 MB.
MAX_ACTIONS = 10_000_000
MAX_BYTES = 64 * 2**20
#: a replay holds its options and maybe a start state dict (with options again)
MAX_DEPTH = STATE_MAX_DEPTH + 2
MAX_ITEMS = MAX_ACTIONS + 3 * STATE_MAX_ITEMS
MAX_LABEL = 1000

__all__ = ["FORMAT", "FORMAT_VERSION", "ReplayStep", "check", "iter_states", "load",
           "play_back", "record", "save"]


class ReplayStep(NamedTuple):
    """One position of a replay: ``env`` after ``index`` actions (the same env object, moved
    on by the next step: ``env.clone()`` it to keep it), the ``action`` that led here and the
    ``seat`` that took it (None at the start). ``forfeit``: the final step of a game ended by
    an illegal action (``action``/``seat``: the first offender's)."""

    index: int
    action: int | None
    seat: int | None
    env: Any  # a raw CardEnv / ParallelCardEnv (this module sits below the envs)
    forfeit: bool = False


def _num(x: float) -> int | float:
    return int(x) if float(x).is_integer() else float(x)


def record(game: Game, seed: int | None, start: np.ndarray | None, actions: list[int],
           state: np.ndarray, forfeit: Mapping[str, list] | None = None,
           players: list[str] | None = None) -> dict[str, Any]:
    """The replay dict of a game dealt from ``seed`` (or started at state ``start``) and moved
    on by ``actions`` to ``state`` (``forfeit``: the record of an illegal action that ended
    it); what :meth:`CardEnv.replay` returns."""
    n = game.num_players
    if players is not None:
        if not isinstance(players, (list, tuple)) or len(players) != n or \
                not all(isinstance(p, str) for p in players):
            raise OptionError(f"players must be a list of {n} strings (one label per seat), "
                              f"got {players!r}")
    try:
        options = json.loads(json.dumps(game.options))
    except TypeError as e:  # pragma: no cover - validated options are JSON values
        raise OptionError(f"{game.env_id}: the options are not JSON-safe: {e}") from e
    d: dict[str, Any] = {
        "format": FORMAT, "format_version": FORMAT_VERSION,
        "env_id": game.env_id, "game_version": game.version,
        "options": options,
        "seed": seed,
        "start": None if seed is not None else game.state_dict(start, None),
        "actions": list(actions),
    }
    if players is not None:
        d["players"] = list(players)
    if forfeit is not None:
        d["forfeit"] = {k: list(v) for k, v in forfeit.items()}
    elif state[K.DONE]:
        points, winners = game.outcome(state)
        d["result"] = {"points": [_num(p) for p in points],
                       "winners": [bool(w) for w in winners],
                       "truncated": bool(state[K.DONE] == K.DONE_TRUNCATED)}
    return d


def check(d: Any) -> None:
    """Validate a replay dict's form (not yet its actions): :class:`StateDictError` naming
    the first problem. A replay may come from anyone: its size is bounded (see the limits
    above) and its options must be the game's own, given as data."""
    if not isinstance(d, Mapping):
        raise StateDictError(f"a replay is a JSON object (dict), got {type(d).__name__}")
    check_nesting(d, MAX_DEPTH, MAX_ITEMS, "replay")
    if d.get("format") != FORMAT:
        raise StateDictError(f"not a card-envs replay: format is {short_repr(d.get('format'))}, "
                             f"expected {FORMAT!r}")
    v = d.get("format_version")
    if not is_int(v) or v != FORMAT_VERSION:
        raise StateDictError(f"replay format_version {short_repr(v)} is not supported (this "
                             f"card-envs reads version {FORMAT_VERSION})")
    missing = [k for k in REQUIRED if k not in d]
    unknown = sorted(map(short_repr, set(d) - set(REQUIRED) - set(OPTIONAL)))
    if missing or unknown:
        unknown = unknown[:10] + ([f"... ({len(unknown) - 10} more)"] if len(unknown) > 10
                                  else [])
        raise StateDictError(f"replay: missing key(s) {missing}, unknown key(s) "
                             f"[{', '.join(unknown)}]; the keys are {list(REQUIRED)} and "
                             f"optionally {list(OPTIONAL)}")
    env_id = d["env_id"]
    if not isinstance(env_id, str) or not registry.is_registered(env_id):
        raise StateDictError(f"replay of unknown env id {short_repr(env_id)}; env ids are "
                             f"{list(registry.env_ids())}")
    game_class = registry.env_class(env_id).game_class
    version = game_class.version
    if d["game_version"] != version:
        raise StateDictError(f"replay is of {env_id} game version {short_repr(d['game_version'])}"
                             f", this card-envs has version {version!r}: the actions would not "
                             "replay")
    try:
        check_untrusted_options(game_class, d["options"])
        n = game_class._validate(d["options"])["num_players"]
    except OptionError as e:
        raise StateDictError(f"replay options: {e}") from e
    seed, start = d["seed"], d["start"]
    if (seed is None) == (start is None):
        raise StateDictError("a replay has exactly one of seed (an int) and start (a state "
                             f"dict); got seed={short_repr(seed)} and start "
                             f"{'null' if start is None else 'set'}")
    if seed is not None and (not is_int(seed) or not 0 <= seed < 2**64):
        raise StateDictError(f"replay seed must be a non-negative integer below 2**64, got "
                             f"{short_repr(seed)}")
    if start is not None and not isinstance(start, Mapping):
        raise StateDictError(f"replay start must be a state dict, got {type(start).__name__}")
    acts = d["actions"]
    if not isinstance(acts, (list, tuple)):
        raise StateDictError(f"replay actions must be a list of ints, got {type(acts).__name__}")
    if len(acts) > MAX_ACTIONS:
        raise StateDictError(f"replay has {len(acts)} actions, more than the {MAX_ACTIONS} "
                             "allowed")
    for k, a in enumerate(acts):
        if not is_int(a) or not -2**31 <= a < 2**31:
            raise StateDictError(f"replay action {k} must be an int (an action index), got "
                                 f"{short_repr(a)}")
    players = d.get("players")
    if players is not None and (not isinstance(players, (list, tuple)) or len(players) != n
                                or not all(isinstance(p, str) and len(p) <= MAX_LABEL
                                           for p in players)):
        raise StateDictError(f"replay players must be a list of {n} strings (one label per "
                             f"seat, at most {MAX_LABEL} characters each), got "
                             f"{short_repr(players)}")
    if "result" in d and "forfeit" in d:
        raise StateDictError("a replay has a result or a forfeit, not both")
    res = d.get("result")
    if res is not None and (not isinstance(res, Mapping)
                            or not {"points", "winners"} <= set(res)):
        raise StateDictError(f"replay result must be an object with points and winners, got "
                             f"{short_repr(res)}")
    f = d.get("forfeit")
    if f is not None:
        if not isinstance(f, Mapping) or set(f) != {"agents", "actions"} or \
                not isinstance(f["agents"], list) or not isinstance(f["actions"], list) or \
                not 0 < len(f["agents"]) == len(f["actions"]) <= n or \
                not all(isinstance(a, str) for a in f["agents"]) or \
                not all(is_int(a) and -2**31 <= a < 2**31 for a in f["actions"]):
            raise StateDictError("replay forfeit must be {agents: [names], actions: [ints]} "
                                 f"of equal length, 1 to {n}; got {short_repr(f)}")


def _start_env(d: Mapping[str, Any], env_kwargs: dict[str, Any]) -> Any:
    cls = registry.env_class(d["env_id"])
    clash = sorted(set(env_kwargs) & set(d["options"]))
    if clash:
        raise OptionError(f"play_back: {clash} are game options, fixed by the replay")
    try:
        env = cls(**{**env_kwargs, "illegal_action": "raise"}, **d["options"])
    except OptionError as e:
        raise StateDictError(f"replay options: {e}") from e
    if d["seed"] is not None:
        env.reset(seed=int(d["seed"]))
    else:
        try:
            env.load_state_dict(dict(d["start"]))
        except StateDictError as e:
            raise StateDictError(f"replay start state: {e}") from e
    return env


def _apply_forfeit(env: Any, f: Mapping[str, Any], k: int) -> int:
    """End ``env``'s game by the replay's forfeit after checking that every offender's action
    was indeed illegal; the first offender's seat."""
    if env._over:
        raise StateDictError(f"replay forfeit after action {k}: the game is already over")
    seats = []
    for agent, a in zip(f["agents"], f["actions"]):
        if agent not in env._seats or agent not in env.agents:
            raise StateDictError(f"replay forfeit names {agent!r}, not a live agent "
                                 f"({env.agents})")
        seat = env._seats[agent]
        s = env.state_array.copy()
        s[K.CUR] = seat
        mask = np.zeros(env.game.num_actions, np.int8)
        env._k_mask(s, env._cfg, mask)
        if 0 <= a < len(mask) and mask[a]:
            raise StateDictError(f"replay forfeit: action {a} "
                                 f"({env.game.action_to_str(a)}) of {agent} is legal, so it "
                                 "did not end the game")
        seats.append(seat)
    env._forfeit_seats(list(f["agents"]))
    env._forfeit_rec = {"agents": list(f["agents"]), "actions": [int(a) for a in f["actions"]]}
    return seats[0]


def iter_states(d: Mapping[str, Any], **env_kwargs: Any) -> Iterator[ReplayStep]:
    """Step through a replay: the start (index 0), then the env after each action (one
    :class:`ReplayStep` each; the env is made with ``env_kwargs``, e.g. ``render_mode="svg",
    render_observer=0``). Raises as :func:`play_back`, when it reaches the problem."""
    check(d)
    want = env_kwargs.pop("illegal_action", "raise")
    env = _start_env(d, env_kwargs)
    yield ReplayStep(0, None, None, env)
    acts = d["actions"]
    for k, a in enumerate(acts):
        a = int(a)
        if env._over:
            raise IllegalActionError(f"replay action {k} ({a}): the game ended after {k} "
                                     f"actions", a, env.game.phase_name(env.state_array), [])
        seat = env._seats[env.agent_selection]
        try:
            env.step(a)
        except IllegalActionError as e:
            raise IllegalActionError(f"replay action {k} ({a}) by player_{seat} is illegal: "
                                     f"{e}", a, e.phase, e.legal) from None
        yield ReplayStep(k + 1, a, seat, env)
    f = d.get("forfeit")
    if f is not None:
        seat = _apply_forfeit(env, f, len(acts))
        env.illegal_action = want
        yield ReplayStep(len(acts) + 1, int(f["actions"][0]), seat, env, True)
        return
    res = d.get("result")
    if res is not None:
        got = env.replay()
        if "result" not in got:
            raise StateDictError(f"replay result {dict(res)} but the game is not over after "
                                 f"its {len(acts)} actions")
        mine = {k: got["result"][k] for k in res if k in got["result"]}
        if mine != dict(res) or set(res) - set(got["result"]):
            raise StateDictError(f"replay result {dict(res)} differs from the replayed "
                                 f"game's {got['result']}")
    env.illegal_action = want


def play_back(d: Mapping[str, Any], **env_kwargs: Any) -> Any:
    """The AEC env after the whole replay (made with ``env_kwargs``; a raw env unless
    ``illegal_action`` is given), so ``env.replay()`` gives the game again."""
    steps = iter_states(d, **env_kwargs)
    env = next(steps).env
    for _ in steps:
        pass
    return env


def save(d: Mapping[str, Any], path: str | Path) -> None:
    """Write a replay as JSON (one top-level key per line), after :func:`check`; the file
    appears whole or not at all."""
    check(d)
    body = ",\n".join(f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in d.items())
    write_text_atomic(path, "{\n" + body + "\n}\n")


def load(path: str | Path) -> dict[str, Any]:
    """Read and :func:`check` a replay file: :class:`StateDictError` naming the file if it
    is not one (larger than :data:`MAX_BYTES`, not UTF-8, not JSON, out of bounds, ...);
    ``OSError`` if it cannot be read."""
    d = read_json(path, MAX_BYTES, "replay")
    try:
        check(d)
    except StateDictError as e:
        raise StateDictError(f"{path}: {e}") from e.__cause__
    return d
