"""Playing the protocol's tables: the candidate at one seat, ``n - 1`` copies of a ladder
opponent at the others, duplicate deals in every seat rotation (the arena's deal and agent
seeds), a candidate's failure recorded as a forfeit of that game, worker processes."""

from __future__ import annotations

import math
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from card_envs.agents.base import Agent
from card_envs.agents.registry import make_agent
from card_envs.arena.runner import agent_seed, deal_seed
from card_envs.arena.stats import finish_ranks
from card_envs.benchmark.candidate import Candidate, resolve, sha256_file
from card_envs.benchmark.protocol import Table
from card_envs.core.registry import make_raw

MAX_REASON = 200  # characters of a forfeit's reason


class Forfeit(Exception):
    """The candidate lost the game by failing to move (the message says how)."""


class _Overtime(BaseException):
    """Raised by the alarm inside a candidate's move that runs past the limit."""


@contextmanager
def _alarm(seconds: float) -> Iterator[None]:
    """Interrupt Python code running longer than ``seconds`` (main thread, POSIX only; the
    elapsed time is checked after the move in any case)."""
    usable = (hasattr(signal, "setitimer") and math.isfinite(seconds)
              and threading.current_thread() is threading.main_thread())
    if not usable:
        yield
        return

    def fire(signum: int, frame: Any) -> None:
        raise _Overtime

    old = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds + 0.5)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0.0)
        signal.signal(signal.SIGALRM, old)


def _short(text: str) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= MAX_REASON else text[:MAX_REASON - 3] + "..."


def checked_move(agent: Agent, env: Any, obs: dict[str, Any], limit: float) -> int:
    """The candidate's action for ``obs``, or :class:`Forfeit` saying why there is none: it
    raised, returned something that is not an integer, an illegal action, or took more than
    ``limit`` seconds."""
    mask = obs["action_mask"]
    t0 = time.perf_counter()
    try:
        with _alarm(limit):
            if agent.needs_state:
                a = agent.act_state(env.state_array.copy(), obs["observation"].copy(),
                                    mask.copy())
            else:
                a = agent.act(obs["observation"].copy(), mask.copy())
    except _Overtime:
        raise Forfeit(f"took more than {limit:g} s for one move") from None
    except Exception as e:  # noqa: BLE001  (whatever the candidate raises loses the game)
        raise Forfeit(_short(f"raised {type(e).__name__}: {e}")) from None
    dt = time.perf_counter() - t0
    if dt > limit:
        raise Forfeit(f"took {dt:.1f} s for one move (limit {limit:g} s)")
    if isinstance(a, bool | np.bool_) or not isinstance(a, int | np.integer):
        raise Forfeit(_short(f"returned {a!r} ({type(a).__name__}), not an integer action"))
    a = int(a)
    if not 0 <= a < len(mask) or not mask[a]:
        raise Forfeit(f"returned {a}, an illegal action")
    return a


def play_game(env: Any, cand: Agent, opps: list[Agent], table: Table, g: int,
              limit: float) -> dict[str, Any]:
    """Game ``g`` of ``table``: deal ``g // n``, the candidate (member 0) at seat ``g % n``,
    opponent ``j`` (member ``j``) at ``(j + g) % n``; the record of its result."""
    n = table.players
    deal, rot = divmod(g, n)
    env.reset(seed=deal_seed(table.seed, deal))
    members: list[Agent] = [cand, *opps]
    for j, a in enumerate(members):
        a.reset(seed=agent_seed(table.seed, g, j))
    by_seat = [members[(s - rot) % n] for s in range(n)]
    index = {ag: s for s, ag in enumerate(env.possible_agents)}
    forfeit = None
    while True:
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            break
        s = index[env.agent_selection]
        agent = by_seat[s]
        if agent is cand:
            try:
                a = checked_move(cand, env, obs, limit)
            except Forfeit as f:
                forfeit = str(f)
                break
        elif agent.needs_state:
            a = agent.act_state(env.state_array.copy(), obs["observation"], obs["action_mask"])
        else:
            a = agent.act(obs["observation"], obs["action_mask"])
        env.step(a)
    if forfeit is not None:  # the candidate ranks last, every opponent ahead of it
        return {"game": g, "seat": rot, "forfeit": forfeit, "points": None,
                "ranks": [n - 1 if s == rot else 0 for s in range(n)],
                "winners": [s != rot for s in range(n)]}
    points = [float(env.infos[ag]["points"]) for ag in env.possible_agents]
    winners = [bool(env.infos[ag]["winner"]) for ag in env.possible_agents]
    return {"game": g, "seat": rot, "forfeit": None, "points": points,
            "ranks": finish_ranks(points, winners), "winners": winners}


_CACHE: dict[str, Any] = {}


def agent_files(cand: Candidate, agent: Agent | None) -> dict[str, str]:
    """sha256 of the files the candidate's agent is made from: its module and its weights (a
    default network differs per game and seat count)."""
    files = dict(cand.files)
    path = getattr(agent, "path", None)
    if isinstance(path, str) and Path(path).is_file():
        files[Path(path).name] = sha256_file(path)
    return files


def play_chunk(table: Table, cand: Candidate, start: int, stop: int, limit: float,
               on_game: Callable[[], None] | None = None
               ) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """Games ``start..stop-1`` of ``table``: their records in game order and
    :func:`agent_files`. After a forfeit the candidate is built afresh, so a failure cannot
    leak into the next game."""
    key = f"{table.env_id}/{table.players}/{table.opponent}/{cand.label}/{id(cand)}"
    if key not in _CACHE:
        _CACHE.clear()
        env = make_raw(table.env_id, num_players=table.players)
        opps = [make_agent(table.opponent, table.env_id, num_players=table.players)
                for _ in range(table.players - 1)]
        _CACHE[key] = (env, opps, None)
    env, opps, agent = _CACHE[key]
    out = []
    files: dict[str, str] | None = None
    for g in range(start, stop):
        if agent is None:
            agent = cand.build(table.env_id, table.players, agent_seed(table.seed, g, 0))
            _CACHE[key] = (env, opps, agent)
        if files is None:
            files = agent_files(cand, agent)
        rec = play_game(env, agent, opps, table, g, limit)
        if rec["forfeit"] is not None:
            agent = None
            _CACHE[key] = (env, opps, None)
        out.append(rec)
        if on_game is not None:
            on_game()
    return out, files if files is not None else dict(cand.files)


def worker_chunk(task: dict[str, Any]) -> tuple[int, list[dict[str, Any]], dict[str, str]]:
    """Worker entry point: rebuild the candidate from its spec and play one chunk."""
    cand = _CANDIDATES.get(task["spec"])
    if cand is None:
        cand = _CANDIDATES[task["spec"]] = resolve(task["spec"], task["table"].env_id)
    recs, files = play_chunk(task["table"], cand, task["start"], task["stop"], task["limit"])
    return task["index"], recs, files


_CANDIDATES: dict[str, Candidate] = {}
