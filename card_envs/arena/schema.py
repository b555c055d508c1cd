"""The schema of an arena results file (``card-envs arena --json``, :meth:`ArenaResult.save`),
checked before anything in it is used.

A results file is input like any other: it may have been edited. :func:`check_result` accepts
exactly the keys :meth:`ArenaResult.to_json` writes, each of its type and in its range; the env
id must be registered, ``options`` and ``game_options`` must be that game's options (given as
data: an option that could name a file to read is refused) and valid together, and every agent
spec is parsed by the validator of the command line (:func:`card_envs.agents.registry.check_spec`:
names, parameters and their ranges), without building any agent or loading any model. Any
problem is one :class:`~card_envs.core.errors.StateDictError` naming the field.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from card_envs.agents.registry import check_spec
from card_envs.core.checks import check_nesting, int_in, seq, short_repr
from card_envs.core.errors import OptionError, StateDictError
from card_envs.core.game import check_untrusted_options
from card_envs.core.registry import env_class, env_ids, is_registered

__all__ = ["JSON_FORMAT", "MAX_GAMES", "check_result", "model_files"]

JSON_FORMAT = "card-envs-arena/2"  # the "format" of a results file
MAX_GAMES = 10**7  # games per lineup
MAX_SEED = 2**64 - 1
MAX_DEPTH = 16  # the deepest real file: log -> game -> list (options: a deck, 5 levels)
MAX_ITEMS = 10**8  # values in the whole file
MAX_TEXT = 1000  # characters of a label, spec, version or digest
MAX_WORKERS = 4096

TOP = ("format", "env_id", "num_players", "games", "total_games", "seed", "options",
       "game_options", "agent_specs", "lineups", "agents", "matrix", "ratings", "deal_seeds",
       "log", "elapsed", "workers", "versions", "points_order")
STATS = ("label", "agent", "games", "wins", "sole_wins", "ties", "win_rate", "ci95",
         "mean_points", "points_sum", "points_sd", "points_ci95", "seat_games", "seat_wins",
         "moves", "think_ms")
MATRIX = ("labels", "rate", "score", "games")
RATING = ("label", "mu", "sigma", "ordinal")
LOG = ("game", "lineup", "deal", "rotation", "seats", "points", "winners", "ranks", "digest")
LOG_OPTIONAL = ("moves", "think_ms")


def _bad(what: str, want: str, value: Any) -> StateDictError:
    return StateDictError(f"arena result: {what} must be {want}, got {short_repr(value)}")


def _keys(d: Any, what: str, required: tuple[str, ...], optional: tuple[str, ...] = ()
          ) -> Mapping[str, Any]:
    if not isinstance(d, Mapping):
        raise _bad(what, "an object", d)
    missing = [k for k in required if k not in d]
    unknown = sorted(short_repr(k) for k in d if k not in required + optional)
    if missing or unknown:
        raise StateDictError(f"arena result: {what}: missing key(s) {missing}, unknown key(s) "
                             f"{unknown}")
    return d


def _int(x: Any, what: str, lo: int, hi: int) -> int:
    return int_in(x, lo, hi, f"arena result: {what}")


def _num(x: Any, what: str, none: bool = False, lo: float = -math.inf,
         hi: float = math.inf) -> float | None:
    if x is None and none:
        return None
    ok = isinstance(x, (int, float)) and not isinstance(x, bool)
    if not ok or not math.isfinite(x) or not lo <= x <= hi:
        raise _bad(what, f"a finite number in [{lo:g}, {hi:g}]" + (" or null" if none else ""),
                   x)
    return x


def _text(x: Any, what: str) -> str:
    if not isinstance(x, str) or len(x) > MAX_TEXT:
        raise _bad(what, f"a text of at most {MAX_TEXT} characters", x)
    return x


def _list(x: Any, what: str, length: int | None = None, max_len: int | None = None) -> list:
    return seq(x, f"arena result: {what}", length, max_len)


def _label(x: Any, what: str, known: set[str]) -> None:
    if not isinstance(x, str) or x not in known:
        raise _bad(what, "an agent label", x)


def _options(x: Any, env_id: str, what: str, full: bool) -> dict[str, Any]:
    if not isinstance(x, Mapping):
        raise _bad(what, "an object", x)
    try:
        check_untrusted_options(env_id, x)
        if not full and "num_players" in x:
            raise OptionError("num_players is the result's num_players, not a game option")
    except OptionError as e:
        raise StateDictError(f"arena result: {what}: {e}") from None
    return dict(x)


def check_result(d: Any) -> None:
    """Check a results dict (``json.load`` of a results file) against the schema:
    :class:`StateDictError` naming the first problem."""
    if not isinstance(d, Mapping):
        raise _bad("the file", "a JSON object", d)
    if d.get("format") != JSON_FORMAT:
        raise StateDictError(f"not an arena result of format {JSON_FORMAT!r} (format "
                             f"{short_repr(d.get('format'))})")
    check_nesting(d, MAX_DEPTH, MAX_ITEMS, "arena result")
    _keys(d, "the file", TOP)
    env_id = d["env_id"]
    if not isinstance(env_id, str) or not is_registered(env_id):
        raise _bad("env_id", f"a registered env id {list(env_ids())}", env_id)
    gc = env_class(env_id).game_class
    n = _int(d["num_players"], "num_players", gc.min_players, gc.max_players)
    games = _int(d["games"], "games", 1, MAX_GAMES)
    _int(d["seed"], "seed", 0, MAX_SEED)
    _int(d["workers"], "workers", 1, MAX_WORKERS)
    _num(d["elapsed"], "elapsed", lo=0)
    _text(d["points_order"], "points_order")
    opts = _options(d["options"], env_id, "options", full=True)
    game_opts = _options(d["game_options"], env_id, "game_options", full=False)
    try:  # the options together: what run_arena would build
        gc(**{**game_opts, "num_players": n})
        gc(**opts)
    except OptionError as e:
        raise StateDictError(f"arena result: options: {e}") from None
    versions = d["versions"]
    if not isinstance(versions, Mapping) or len(versions) > 64 or \
            not all(isinstance(k, str) and isinstance(v, str) and len(v) <= MAX_TEXT
                    for k, v in versions.items()):
        raise _bad("versions", "an object of texts", versions)

    specs = _list(d["agent_specs"], "agent_specs", max_len=1000)
    if not specs:
        raise StateDictError("arena result: agent_specs is empty")
    for i, spec in enumerate(specs):
        if spec is None:
            continue
        _text(spec, f"agent_specs[{i}]")
        try:
            check_spec(spec, env_id)
        except ValueError as e:
            raise StateDictError(f"arena result: agent_specs[{i}]: {e}") from None

    stats = _list(d["agents"], "agents", max_len=1000)
    labels = []
    for i, s in enumerate(stats):
        w = f"agents[{i}]"
        _keys(s, w, STATS)
        labels.append(_text(s["label"], f"{w}.label"))
        _text(s["agent"], f"{w}.agent")
        g = _int(s["games"], f"{w}.games", 0, MAX_GAMES * 10**3)
        _num(s["wins"], f"{w}.wins", lo=0, hi=g)
        _int(s["sole_wins"], f"{w}.sole_wins", 0, g)
        _int(s["ties"], f"{w}.ties", 0, g)
        _num(s["win_rate"], f"{w}.win_rate", lo=0, hi=1)
        for key in ("ci95", "points_ci95"):
            if s[key] is not None or key == "ci95":
                for k, v in enumerate(_list(s[key], f"{w}.{key}", length=2)):
                    _num(v, f"{w}.{key}[{k}]")
        _num(s["mean_points"], f"{w}.mean_points", none=True)
        _num(s["points_sum"], f"{w}.points_sum")
        _num(s["points_sd"], f"{w}.points_sd", lo=0)
        for k, v in enumerate(_list(s["seat_games"], f"{w}.seat_games", length=n)):
            _int(v, f"{w}.seat_games[{k}]", 0, g)
        for k, v in enumerate(_list(s["seat_wins"], f"{w}.seat_wins", length=n)):
            _num(v, f"{w}.seat_wins[{k}]", lo=0, hi=g)
        _int(s["moves"], f"{w}.moves", 0, 2**63 - 1)
        _num(s["think_ms"], f"{w}.think_ms", lo=0)
    if len(set(labels)) != len(labels):
        raise StateDictError(f"arena result: agents labels repeat: {short_repr(labels)}")
    known = set(labels)

    lineups = _list(d["lineups"], "lineups", max_len=10**6)
    for i, lu in enumerate(lineups):
        for k, lab in enumerate(_list(lu, f"lineups[{i}]", length=n)):
            _label(lab, f"lineups[{i}][{k}]", known)

    m = d["matrix"]
    if m is not None:
        _keys(m, "matrix", MATRIX)
        k = len(_list(m["labels"], "matrix.labels", max_len=len(labels)))
        for j, lab in enumerate(m["labels"]):
            _label(lab, f"matrix.labels[{j}]", known)
        for key, none in (("rate", True), ("score", False), ("games", False)):
            for i, row in enumerate(_list(m[key], f"matrix.{key}", length=k)):
                for j, v in enumerate(_list(row, f"matrix.{key}[{i}]", length=k)):
                    if key == "games":
                        _int(v, f"matrix.games[{i}][{j}]", 0, 2**63 - 1)
                    else:
                        _num(v, f"matrix.{key}[{i}][{j}]", none=none, lo=0)

    for i, r in enumerate(_list(d["ratings"], "ratings", max_len=len(labels))):
        _keys(r, f"ratings[{i}]", RATING)
        _label(r["label"], f"ratings[{i}].label", known)
        for key in ("mu", "sigma", "ordinal"):
            _num(r[key], f"ratings[{i}].{key}")

    deals = -(-games // n)
    for i, s in enumerate(_list(d["deal_seeds"], "deal_seeds", length=deals)):
        _int(s, f"deal_seeds[{i}]", 0, MAX_SEED)

    log = _list(d["log"], "log", length=_int(d["total_games"], "total_games", 0,
                                             MAX_GAMES * max(1, len(lineups))))
    for i, g in enumerate(log):
        w = f"log[{i}]"
        _keys(g, w, LOG, LOG_OPTIONAL)
        _int(g["game"], f"{w}.game", 0, 2**63 - 1)
        _int(g["lineup"], f"{w}.lineup", 0, max(0, len(lineups) - 1))
        _int(g["deal"], f"{w}.deal", 0, max(0, deals - 1))
        _int(g["rotation"], f"{w}.rotation", 0, n - 1)
        for k, lab in enumerate(_list(g["seats"], f"{w}.seats", length=n)):
            _label(lab, f"{w}.seats[{k}]", known)
        for k, v in enumerate(_list(g["points"], f"{w}.points", length=n)):
            _num(v, f"{w}.points[{k}]")
        for k, v in enumerate(_list(g["winners"], f"{w}.winners", length=n)):
            if not isinstance(v, bool):
                raise _bad(f"{w}.winners[{k}]", "true or false", v)
        for k, v in enumerate(_list(g["ranks"], f"{w}.ranks", length=n)):
            _int(v, f"{w}.ranks[{k}]", 0, n - 1)
        _text(g["digest"], f"{w}.digest")
        if "moves" in g:
            for k, v in enumerate(_list(g["moves"], f"{w}.moves", length=n)):
                _int(v, f"{w}.moves[{k}]", 0, 2**63 - 1)
        if "think_ms" in g:
            for k, v in enumerate(_list(g["think_ms"], f"{w}.think_ms", length=n)):
                _num(v, f"{w}.think_ms[{k}]", lo=0)


def model_files(specs: list[str | None], env_id: str) -> list[str]:
    """The files that the agent ``specs`` would load (``ppo:PATH``, ``rllib:PATH``)."""
    from card_envs.agents.params import class_params

    out = []
    for spec in specs:
        if spec is None:
            continue
        cls, _, params = check_spec(spec, env_id)
        decl = class_params(cls)
        out += [str(v) for k, v in params.items() if decl[k].file and v is not None]
    return out
