"""Playing arena runs: participants and lineups, duplicate deals with seat rotation, worker
processes (``workers="auto"``: :func:`auto_workers`) or Ray tasks, replays, :func:`run_arena`,
:func:`rerun` and :func:`warm` (compiling before a run; the rules are in
:mod:`card_envs.arena`)."""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import platform
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from card_envs.agents.base import Agent
from card_envs.agents.registry import check_spec, make_agent
from card_envs.arena.results import ArenaResult
from card_envs.arena.schema import model_files
from card_envs.arena.stats import aggregate, finish_ranks
from card_envs.arena.warmup import notice_label, warm_up_games
from card_envs.core.errors import OptionError
from card_envs.core.progress import compile_notice
from card_envs.core.registry import ENV_IDS, make_raw, manifest, register, resolve_env_id

__all__ = ["AUTO_SECONDS", "agent_seed", "auto_workers", "deal_seed", "rerun", "run_arena",
           "warm"]


def deal_seed(seed: int, deal: int) -> int:
    """The ``reset`` seed of deal number ``deal`` in a run seeded ``seed``."""
    return int(np.random.SeedSequence([seed, deal]).generate_state(2, np.uint32)
               .astype(np.uint64) @ np.array([1, 2**32], np.uint64)) & (2**63 - 1)


def agent_seed(seed: int, game: int, participant: int, lineup: int = 0) -> int:
    """Seed of participant ``participant`` in game ``game`` (index within the lineup) of
    lineup ``lineup``. Lineup 0 keeps the seeds of earlier versions."""
    entropy = [seed, game, participant, 1] + ([lineup] if lineup else [])
    return int(np.random.SeedSequence(entropy).generate_state(1)[0])


def _versions(env: Any) -> dict[str, str]:
    """Versions a result records: card-envs, the game, Python and the libraries in use."""
    import card_envs

    out = {"card_envs": card_envs.__version__, "game": f"{env.game.name} v{env.game.version}",
           "python": platform.python_version(), "numpy": np.__version__}
    for mod in ("numba", "pettingzoo"):
        m = sys.modules.get(mod)
        if m is not None:
            out[mod] = getattr(m, "__version__", "?")
    try:
        from importlib.metadata import version

        out["openskill"] = version("openskill")
    except Exception:  # noqa: BLE001  (metadata missing: not worth failing a run)
        out["openskill"] = "?"
    return out


# --------------------------------------------------------------------------------------------
# participants and lineups
# --------------------------------------------------------------------------------------------
def _spec_label(spec: str) -> str:
    """A spec's participant label: ``" MCTS : ms=50"`` -> ``"mcts:ms=50"``."""
    name, colon, rest = spec.strip().partition(":")
    return name.strip().lower() + (f":{rest.strip()}" if colon and rest.strip() else "")


def _participants(env_id: str, agents: Sequence[str | Agent], n: int,
                  options: dict[str, Any]) -> tuple[list[Agent], list[str], list[str]]:
    """(agent objects, names, labels) of the participants: the pool, repeated to fill the
    seats when it is not larger than the table."""
    if isinstance(agents, str):
        raise TypeError("agents is a list of specs or Agent instances, not one string")
    if not agents:
        raise ValueError("give at least one agent")
    entries = list(agents) if len(agents) > n else [agents[j % len(agents)] for j in range(n)]
    objs: list[Agent] = []
    for e in entries:
        if isinstance(e, str):
            objs.append(make_agent(e, env_id, num_players=n, **options))
        elif isinstance(e, Agent):
            if sum(x is e for x in entries) > 1:  # one instance in two seats shares its state
                raise ValueError(f"agent instance {e!r} fills several seats; pass distinct "
                                 "instances or specs")
            objs.append(e)
        else:
            raise TypeError(f"agents are specs (str) or Agent instances, got {e!r}")
    names = [getattr(o, "name", type(o).__name__) if not isinstance(e, str) else _spec_label(e)
             for e, o in zip(entries, objs)]
    labels = []
    for j, nm in enumerate(names):
        same = [k for k, other in enumerate(names) if other == nm]
        labels.append(nm if len(same) == 1 else f"{nm}#{same.index(j)}")
    return objs, names, labels


def _lineups(k: int, n: int) -> list[tuple[int, ...]]:
    """Participant indices per lineup: one full table, or every n-combination of k > n."""
    return [tuple(range(n))] if k <= n else list(itertools.combinations(range(k), n))


# --------------------------------------------------------------------------------------------
# playing
# --------------------------------------------------------------------------------------------
def _play(env: Any, objs: Sequence[Agent], labels: Sequence[str], n: int, seed: int,
          lineup: int, members: Sequence[int], start: int, stop: int, games: int,
          deal_seeds: Sequence[int], on_game: Callable[[], None] | None = None,
          record: bool = False) -> list[dict[str, Any]]:
    """Play games ``start..stop-1`` of lineup ``lineup``; return their log entries (with
    ``record``, each has its replay under ``"_replay"``: ``env.replay()``)."""
    possible = env.possible_agents
    index = {ag: s for s, ag in enumerate(possible)}
    out = []
    for g in range(start, stop):
        deal, rot = divmod(g, n)
        env.reset(seed=deal_seeds[deal])
        digest = hashlib.sha1(env.state_array.tobytes()).hexdigest()
        # member j sits at seat (j + rot) % n, so seat s holds member (s - rot) % n
        by_seat = [members[(s - rot) % n] for s in range(n)]
        for j in members:
            objs[j].reset(seed=agent_seed(seed, g, j, lineup))
        movers: list[Callable[[Any], int]] = []
        for j in by_seat:
            a = objs[j]
            if a.needs_state:
                movers.append(lambda obs, a=a: a.act_state(env.state_array.copy(),
                                                           obs["observation"],
                                                           obs["action_mask"]))
            else:
                movers.append(lambda obs, act=a.act: act(obs["observation"],
                                                         obs["action_mask"]))
        last, step, clock = env.last, env.step, time.perf_counter
        moves = [0] * n
        think = [0.0] * n
        while True:
            obs, _, term, trunc, _ = last()
            if term or trunc:
                break
            s = index[env.agent_selection]
            t0 = clock()
            a = movers[s](obs)
            think[s] += clock() - t0
            moves[s] += 1
            step(a)
        points = [float(env.infos[ag]["points"]) for ag in possible]
        winners = [bool(env.infos[ag]["winner"]) for ag in possible]
        seats = [labels[j] for j in by_seat]
        out.append({"game": lineup * games + g, "lineup": lineup, "deal": deal,
                    "rotation": rot, "seats": seats, "points": points,
                    "winners": winners, "ranks": finish_ranks(points, winners),
                    "digest": digest, "moves": moves,
                    "think_ms": [round(1000.0 * t, 3) for t in think]})
        if record:  # the env records its own game (card_envs.core.replay)
            out[-1]["_replay"] = env.replay(players=seats)
        if on_game is not None:
            on_game()
    return out


def _write_replays(log: list[dict[str, Any]], env_id: str, folder: str | Path | None) -> None:
    """Move every log entry's ``"_replay"`` into ``folder/<env_id>_game<NNNNNN>.json``."""
    out = None if folder is None else Path(folder)
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
    for g in log:
        rep = g.pop("_replay", None)
        if out is not None and rep is not None:
            (out / f"{env_id}_game{g['game']:06d}.json").write_text(json.dumps(rep))


_WORKER_CACHE: dict[str, tuple[Any, list[Any], list[str]]] = {}


def _play_chunk(task: dict[str, Any]) -> list[dict[str, Any]]:
    """Worker entry point: rebuild env and agents from specs (cached per process) and play
    one chunk."""
    if task.get("manifest") is not None:  # a game registered at run time in the parent
        register(task["manifest"])
    key = json.dumps([task["env_id"], task["specs"], task["n"], task["game_options"]],
                     default=repr, sort_keys=True)
    if key not in _WORKER_CACHE:
        _WORKER_CACHE.clear()
        env = make_raw(task["env_id"], num_players=task["n"], **task["game_options"])
        objs, _, labels = _participants(task["env_id"], task["specs"], task["n"],
                                        task["game_options"])
        _WORKER_CACHE[key] = (env, objs, labels)
    env, objs, labels = _WORKER_CACHE[key]
    return _play(env, objs, labels, task["n"], task["seed"], task["lineup"], task["members"],
                 task["start"], task["stop"], task["games"], task["deal_seeds"],
                 record=bool(task.get("record")))


def _chunks(nlineups: int, games: int, n: int, workers: int,
            first_deal: int = 0) -> list[tuple[int, int, int]]:
    """(lineup, start, stop) pieces of whole deals from ``first_deal`` on, about four per
    worker."""
    deals = -(-games // n)
    per = max(1, -(-((deals - first_deal) * nlineups) // (4 * workers)))
    out = []
    for lu in range(nlineups):
        for d0 in range(first_deal, deals, per):
            out.append((lu, d0 * n, min(games, (d0 + per) * n)))
    return out


#: ``workers="auto"`` plays each lineup's first deal in this process, then hands the rest to
#: worker processes when it would take longer than this here: starting two workers (each
#: imports card-envs, loads the kernels from the cache and builds its agents) costs about 1 s
#: on a quiet 2-core machine and 2-3 s on a busy one (docs/performance.md)
AUTO_SECONDS = 5.0


def auto_workers(projected_seconds: float, cpus: int | None = None) -> int:
    """The worker count ``workers="auto"`` picks for games that would take
    ``projected_seconds`` in one process: 1 below :data:`AUTO_SECONDS`, else one per
    ``AUTO_SECONDS`` of play, at least 2 and at most the CPU cores (1 on one core)."""
    cpus = cpus or os.cpu_count() or 1
    if projected_seconds < AUTO_SECONDS or cpus < 2:
        return 1
    return max(2, min(cpus, int(projected_seconds // AUTO_SECONDS)))


def run_arena(env_id: str, agents: Sequence[str | Agent], games: int, num_players: int = 2,
              seed: int = 0, progress: bool = True, workers: int | str = "auto",
              backend: str = "local", address: str | None = None,
              replays: str | Path | None = None, **game_options: Any) -> ArenaResult:
    """Play ``games`` games *per lineup* of ``env_id`` between the pool ``agents`` (specs or
    instances) over duplicate deals with seat rotation (:mod:`card_envs.arena`) and return the
    results. ``game_options`` go to the env and to the agents (e.g. ``start_player``,
    ``reward_mode``). ``workers > 1`` plays in that many spawned processes (specs only;
    ``workers <= 0``: one per CPU core); results do not depend on ``workers``. ``"auto"`` (the
    default) plays each lineup's first deal here and, if the rest would take more than
    :data:`AUTO_SECONDS` here, the rest in :func:`auto_workers` processes. Starting workers
    costs more than a whole run of cheap agents (random against the heuristic, 200 Slide
    games: 0.19 s here, 0.9 s with two workers), less than longer runs save (40 Isflak games
    of ``mcts:iterations=1000`` against the heuristic: 3.7 s here, 2.9 s with two workers;
    measured on 2 cores, ``benchmarks/cold_start.py --workers-only``, docs/performance.md).
    With agent instances it plays everything here.

    ``backend="ray"`` plays the same chunks of deals as Ray tasks (specs only; the ``rllib``
    extra), on the Ray instance this process is connected to, else on ``address``
    (``"auto"``: the running cluster, ``ray start --head``), else on a local Ray started for
    the run (:mod:`card_envs.arena.ray_backend`); results equal ``workers=1``'s.
    ``replays``: a folder that gets each game's replay JSON (``<env_id>_game<NNNNNN>.json``,
    format ``card-envs-replay``: the deal's reset seed and every action)."""
    from card_envs.core.progress import tqdm_class

    tqdm = tqdm_class()
    env_id = resolve_env_id(env_id)
    if games < 1:
        raise ValueError(f"games must be >= 1, got {games}")
    n = num_players
    specs: list[str | None] = [a if isinstance(a, str) else None for a in agents]
    if backend not in ("local", "ray"):
        raise ValueError(f"backend must be 'local' or 'ray', got {backend!r}")
    if address is not None and backend != "ray":
        raise ValueError("address is the Ray cluster of backend='ray'")
    auto = workers == "auto"
    if auto:
        workers = 1  # for now: decided after the first deal of every lineup
    elif not isinstance(workers, int | np.integer) or isinstance(workers, bool):
        raise ValueError(f"workers is an integer or 'auto', got {workers!r}")
    elif workers <= 0:
        workers = os.cpu_count() or 1
    auto = auto and backend == "local" and all(s is not None for s in specs)
    if (workers > 1 or backend == "ray") and any(s is None for s in specs):
        raise ValueError("agent instances cannot be sent to worker processes; pass agent specs "
                         "(strings such as 'heuristic' or 'mcts:ms=50') or use workers=1")
    for a in agents if not isinstance(agents, str) else ():
        if isinstance(a, str):
            check_spec(a, env_id)  # a mistake is reported before anything compiles
    # compiled (or loaded from the cache) here, with a line saying so, before any timed move;
    # worker processes then load every kernel from the cache instead of compiling it again
    with compile_notice(notice_label(env_id, agents), enabled=progress):
        env = make_raw(env_id, num_players=n, **game_options)
        objs, names, labels = _participants(env_id, agents, n, game_options)
        warm_up_games(env, objs)
    if games % n:
        up = -(-games // n) * n
        warnings.warn(f"{games} games per lineup at {n} seats: the last deal is played in only "
                      f"{games % n} of its {n} seat rotations, so seats are not balanced; "
                      f"use a multiple of {n} (e.g. {up})", UserWarning, stacklevel=2)
    options = dict(env.game.options)
    lineups = _lineups(len(objs), n)
    record = replays is not None
    ray_session = None
    if backend == "ray":
        from card_envs.arena.ray_backend import RaySession

        ray_session = RaySession(address)  # connects, or starts a local Ray
        workers = max(workers, ray_session.cpus)
    chunks = _chunks(len(lineups), games, n, workers)
    workers = min(workers, len(chunks))
    deal_seeds = [deal_seed(seed, b) for b in range(-(-games // n))]
    total = games * len(lineups)
    t0 = time.perf_counter()
    bar = tqdm(total=total, disable=not progress, unit="game", desc=env_id, leave=False,
               file=sys.stderr)
    try:
        if ray_session is not None:
            from card_envs.arena.ray_backend import run_tasks

            tasks = _tasks(env_id, specs, n, game_options, seed, lineups, games, deal_seeds,
                           chunks, record)
            log = run_tasks(_play_chunk, tasks,
                            on_done=lambda c: bar.update(chunks[c][2] - chunks[c][1]))
        else:
            log = []
            first = min(n, games) if auto else 0  # "auto": the first deal here, timed
            spent = 0.0
            for lu, members in enumerate(lineups):
                t_lu = time.perf_counter()
                log += _play(env, objs, labels, n, seed, lu, members, 0, first, games,
                             deal_seeds, on_game=lambda: bar.update(1), record=record)
                spent += time.perf_counter() - t_lu
            if auto:
                workers = auto_workers(spent * (games - first) / first)
                chunks = _chunks(len(lineups), games, n, workers, first_deal=1)
                workers = min(workers, max(1, len(chunks)))
            if workers <= 1:
                for lu, members in enumerate(lineups):
                    log += _play(env, objs, labels, n, seed, lu, members, first, games,
                                 games, deal_seeds, on_game=lambda: bar.update(1),
                                 record=record)
                log.sort(key=lambda g: g["game"])
            else:
                log += _run_parallel(_tasks(env_id, specs, n, game_options, seed, lineups,
                                            games, deal_seeds, chunks, record), workers, bar,
                                     chunks)
                log.sort(key=lambda g: g["game"])
    finally:
        bar.close()
        if ray_session is not None:
            ray_session.close()
    _write_replays(log, env_id, replays)
    stats, matrix, ratings = aggregate(labels, names, n, log)
    elapsed = time.perf_counter() - t0
    return ArenaResult(env_id, n, games, seed, options, stats, deal_seeds, log, elapsed,
                       _versions(env), agent_specs=specs, game_options=dict(game_options),
                       lineups=[[labels[j] for j in m] for m in lineups], matrix=matrix,
                       ratings=ratings, workers=workers)


def warm(env_id: str, agents: Sequence[str | Agent] = ("random",), num_players: int = 2,
         progress: bool = True, **game_options: Any) -> dict[str, Any]:
    """Compile (or load from the cache) everything a run of ``agents`` (specs or instances, as
    in :func:`~card_envs.arena.run_arena`) at ``env_id`` with ``game_options`` uses: build the
    env and the agents and play :func:`warm_up_games`. With ``progress`` a line on stderr
    says what is compiled and how long it took (``compiling slide_v0: random, heuristic
    (first run only) ... 9 s``), only when something is not in the cache. Returns
    ``{"env_id", "seconds", "compiles"}`` (``compiles``: kernels compiled, 0 when everything
    came from the cache)."""
    env_id = resolve_env_id(env_id)
    for a in agents if not isinstance(agents, str) else ():
        if isinstance(a, str):
            check_spec(a, env_id)  # a mistake is reported before anything compiles
    t0 = time.perf_counter()
    with compile_notice(notice_label(env_id, agents), enabled=progress) as watch:
        env = make_raw(env_id, num_players=num_players, **game_options)
        objs, _, _ = _participants(env_id, agents, num_players, game_options)
        warm_up_games(env, objs)
    return {"env_id": env_id, "seconds": time.perf_counter() - t0, "compiles": watch.compiles}


def _tasks(env_id: str, specs: list[str | None], n: int, game_options: dict[str, Any],
           seed: int, lineups: list[tuple[int, ...]], games: int, deal_seeds: list[int],
           chunks: list[tuple[int, int, int]], record: bool) -> list[dict[str, Any]]:
    """One :func:`_play_chunk` task per chunk (plain data: specs, seeds, game range)."""
    extra = None if env_id in ENV_IDS else manifest(env_id)  # spawned workers know built-ins
    return [{"env_id": env_id, "specs": list(specs), "n": n, "game_options": game_options,
             "seed": seed, "lineup": lu, "members": list(lineups[lu]), "start": start,
             "stop": stop, "games": games, "deal_seeds": deal_seeds, "manifest": extra,
             "record": record} for lu, start, stop in chunks]


def _run_parallel(tasks: list[dict[str, Any]], workers: int, bar: Any,
                  chunks: list[tuple[int, int, int]]) -> list[dict[str, Any]]:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    parts: dict[int, list[dict[str, Any]]] = {}
    ctx = multiprocessing.get_context("spawn")  # numba and fork do not mix
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
        futures = {}
        for c, task in enumerate(tasks):
            futures[pool.submit(_play_chunk, task)] = c
        try:
            for fut in as_completed(futures):
                c = futures[fut]
                parts[c] = fut.result()
                bar.update(chunks[c][2] - chunks[c][1])
        except BaseException:  # a failing chunk (or Ctrl-C): drop the chunks not started
            for fut in futures:
                fut.cancel()
            raise
    return [g for c in range(len(chunks)) for g in parts[c]]


def rerun(result: ArenaResult, workers: int = 1, progress: bool = False,
          backend: str = "local", address: str | None = None,
          replays: str | Path | None = None, allow_model_files: bool = False) -> ArenaResult:
    """Play the run recorded in ``result`` (or in its JSON, via
    :meth:`ArenaResult.from_json`) again: the same games (``untimed_log()`` equal: only the
    ``think_ms`` wall-clock times differ) unless the code, the versions or a time-budgeted
    agent (``mcts:ms=...``) changed.

    The run's settings come from the result (checked against the schema when it was read);
    where replays go is the caller's choice (``replays``), never the file's. A result read
    from a file that names model files (``ppo:PATH``, ``rllib:PATH``) is refused unless
    ``allow_model_files=True``: loading a model runs code stored in it (pickle), so only load
    files you trust."""
    args = result.run_args
    if result.from_file and not allow_model_files:
        files = model_files(args["agents"], args["env_id"])
        if files:
            raise OptionError(f"this result names model files {files}; loading a model runs "
                              "code stored in it (pickle): pass allow_model_files=True if you "
                              "trust them")
    return run_arena(**args, workers=workers, progress=progress, backend=backend,
                     address=address, replays=replays)
