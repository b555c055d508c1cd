"""Running the protocol for one candidate: tables in order, in this process or in worker
processes, each finished table saved so an interrupted run resumes, then the report; and
``check``: replay a report and say which rows differ."""

from __future__ import annotations

import hashlib
import json
import math
import multiprocessing
import os
import sys
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from card_envs.benchmark import play, report
from card_envs.benchmark.candidate import Candidate, resolve
from card_envs.benchmark.protocol import (
    LADDER,
    MOVE_LIMIT_S,
    PROTOCOL_VERSION,
    Table,
    tables,
)
from card_envs.core.errors import OptionError, StateDictError
from card_envs.core.files import read_json, write_text_atomic
from card_envs.core.registry import ENV_IDS, env_class

MAX_WORKERS = 64
CHUNK_GAMES = 24  # games per worker task (whole deals)


@dataclass
class BenchmarkResult:
    """A finished run: ``report`` (the JSON's content), ``seconds`` per table (not in the
    report: machine-dependent) and :meth:`table` (the printed summary)."""

    report: dict[str, Any]
    seconds: dict[str, float]
    elapsed: float = 0.0  # wall seconds of this call (tables played here; resumed ones: 0)
    played: int = 0  # games played by this call (not resumed from saved tables)

    @property
    def rows(self) -> list[dict[str, Any]]:
        return self.report["rows"]

    def row(self, env_id: str, players: int, opponent: str) -> dict[str, Any]:
        for r in self.rows:
            if (r["env_id"], r["players"], r["opponent"]) == (env_id, players, opponent):
                return r
        raise KeyError((env_id, players, opponent))

    def table(self) -> str:
        """Win share [95% interval] of the candidate per game and seat count (columns: the
        ladder), the normalised score and the rating."""
        rep = self.report
        opps = [o for o in LADDER if any(r["opponent"] == o for r in self.rows)]
        head = ["game", "seats", *(f"vs {o}" for o in opps), "norm.", "forfeits"]
        lines = [" | ".join(head), " | ".join("---" for _ in head)]
        keys = sorted({(r["env_id"], r["players"]) for r in self.rows},
                      key=lambda k: (ENV_IDS.index(k[0]), k[1]))
        for env_id, n in keys:
            cells, forfeits = [], 0
            for o in opps:
                try:
                    r = self.row(env_id, n, o)
                except KeyError:
                    cells.append("")
                    continue
                forfeits += r["forfeits"]
                cells.append(f"{r['win_share']:.3f} [{r['ci95'][0]:.2f},{r['ci95'][1]:.2f}] "
                             f"({r['games']})")
            norm = rep["normalised"].get(env_id, {}).get(str(n))
            lines.append(" | ".join([env_id.removesuffix("_v0"), str(n), *cells,
                                     "" if norm is None else f"{norm:.2f}", str(forfeits)]))
        out = [f"benchmark of {rep['candidate']['label']} (protocol {rep['protocol']}, "
               f"{rep['mode']}{'' if rep['complete'] else ', partial'}): win share against "
               "n-1 copies of each opponent, fair share 1/n", "", *lines]
        if rep["rating"] is not None:
            lo, hi = rep["rating"]["ci95"]
            out.append(f"\nrating {rep['rating']['elo']:.0f} [{lo:.0f}, {hi:.0f}] (Elo scale, "
                       f"random 0; ladder {rep['rating']['ladder']})")
        reasons = sorted({t for r in self.rows for t in r["forfeit_reasons"]})
        if reasons:
            out.append("forfeits: " + "; ".join(reasons))
        return "\n".join(out)


def _versions() -> dict[str, Any]:
    import card_envs

    return {"card_envs": card_envs.__version__,
            "games": {e: str(env_class(e).game_class.version) for e in ENV_IDS}}


def _cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "card-envs" / "benchmark"


def _run_key(cand: Candidate, mode: str, limit: float) -> str:
    blob = json.dumps([PROTOCOL_VERSION, mode, limit, cand.identity(), _versions()],
                      sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


def _check_workers(workers: Any) -> int:
    if isinstance(workers, bool) or not isinstance(workers, int) or \
            not 1 <= workers <= MAX_WORKERS:
        raise OptionError(f"workers is an integer in 1..{MAX_WORKERS}, got {workers!r}")
    return workers


def _check_limit(limit: Any) -> float:
    if isinstance(limit, bool) or not isinstance(limit, int | float) or \
            not math.isfinite(limit) or not 0 < limit <= 3600:
        raise OptionError(f"move_limit is a number of seconds in (0, 3600], got {limit!r}")
    return float(limit)


def _load_cached(path: Path, table: Table) -> dict[str, Any] | None:
    """A saved table's row, or None if absent or not a valid row of this table."""
    if not path.is_file():
        return None
    try:
        row = read_json(path, 1 << 20, "benchmark table")
        report.check_row(row, path.name)
    except (StateDictError, OSError):
        return None
    same = (row["env_id"], row["players"], row["opponent"], row["seed"], row["deals"])
    return row if same == (table.env_id, table.players, table.opponent, table.seed,
                           table.deals) else None


def run(agent: Any, mode: str = "full", games: list[str] | None = None,
        seats: list[int] | None = None, workers: int = 1, json_path: str | Path | None = None,
        progress: bool = True, resume: bool = True, cache_dir: str | Path | None = None,
        move_limit: float = MOVE_LIMIT_S) -> BenchmarkResult:
    """Benchmark ``agent`` (:mod:`card_envs.benchmark`): every table of the protocol (or of
    the ``games`` / ``seats`` given), ``workers`` processes, the report written to
    ``json_path``. Finished tables are saved under ``cache_dir`` (default
    ``~/.cache/card-envs/benchmark/``) so the same call resumes after an interruption
    (``resume=False``: play everything again)."""
    import time

    from card_envs.core.progress import tqdm_class

    t_start = time.perf_counter()
    workers = _check_workers(workers)
    limit = _check_limit(move_limit)
    todo = tables(mode, games, seats)
    cand = resolve(agent, todo[0].env_id)
    if workers > 1 and cand.spec is None:
        raise OptionError(f"the candidate {cand.label!r} cannot be rebuilt in a worker process "
                          "(defined in __main__ or a notebook); pass 'module:Name' of an "
                          "importable module, or workers=1")
    folder = Path(cache_dir) if cache_dir is not None else _cache_root()
    folder = folder / _run_key(cand, mode, limit)
    rows: dict[int, dict[str, Any]] = {}
    if resume:
        for i, t in enumerate(todo):
            row = _load_cached(folder / f"{t.key}.json", t)
            if row is not None:
                rows[i] = row
    left = [i for i in range(len(todo)) if i not in rows]
    _preflight(cand, [todo[i] for i in left])
    folder.mkdir(parents=True, exist_ok=True)
    total = sum(todo[i].games for i in left)
    seconds: dict[str, float] = {}
    tqdm = tqdm_class()
    bar = tqdm(total=total, disable=not progress, unit="game", desc="benchmark",
               file=sys.stderr)
    if rows and progress:
        print(f"resuming: {len(rows)} of {len(todo)} tables saved in {folder}", file=sys.stderr)

    def finish(i: int, records: list[dict[str, Any]], files: dict[str, str]) -> None:
        records.sort(key=lambda r: r["game"])
        rows[i] = report.table_row(todo[i], records, files)
        write_text_atomic(folder / f"{todo[i].key}.json", json.dumps(rows[i]))

    try:
        if workers == 1:
            for i in left:
                t = todo[i]
                bar.set_description(f"{t.env_id.removesuffix('_v0')} {t.players}p "
                                    f"vs {t.opponent}")
                t0 = time.perf_counter()
                recs, files = play.play_chunk(t, cand, 0, t.games, limit,
                                              on_game=lambda: bar.update(1))
                seconds[t.key] = time.perf_counter() - t0
                finish(i, recs, files)
        else:
            _run_parallel(todo, left, cand, limit, workers, bar, finish)
    finally:
        bar.close()
    ordered = [rows[i] for i in range(len(todo))]
    full = games is None and seats is None
    from card_envs.benchmark.leaderboard import ladder_ratings

    rep = {"format": report.FORMAT, "format_version": report.FORMAT_VERSION,
           "protocol": PROTOCOL_VERSION, "mode": mode, "complete": full,
           "candidate": cand.identity(), "versions": _versions(), "move_limit_s": limit,
           "rows": ordered, "normalised": report.normalised(ordered),
           "rating": report.rating(ordered, ladder_ratings())}
    if json_path is not None:
        write_text_atomic(json_path, report.dumps(rep))
    return BenchmarkResult(rep, seconds, time.perf_counter() - t_start, total)


def _preflight(cand: Candidate, todo: list[Table]) -> None:
    """Build the candidate and the opponents of every table before anything is played, so a
    spec, a module or a network that cannot play a game or seat count is one clear error
    (:class:`OptionError`) instead of a run that fails halfway."""
    from card_envs.agents.registry import make_agent

    seen: set[tuple[str, int]] = set()
    for t in todo:
        where = f"{t.env_id} with {t.players} seats"
        if (t.env_id, t.players) not in seen:
            seen.add((t.env_id, t.players))
            try:
                cand.build(t.env_id, t.players, 0)
            except Exception as e:  # noqa: BLE001  (whatever it is, it cannot play this table)
                raise OptionError(f"the candidate {cand.label!r} cannot play {where}: "
                                  f"{type(e).__name__}: {e}") from None
        if t.opponent == "ppo":
            try:
                make_agent("ppo", t.env_id, num_players=t.players)
            except ValueError as e:
                raise OptionError(f"the ladder's ppo for {where}: {e}") from None


def _run_parallel(todo: list[Table], left: list[int], cand: Candidate, limit: float,
                  workers: int, bar: Any, finish: Any) -> None:
    tasks = []
    for i in left:
        t = todo[i]
        per = max(1, CHUNK_GAMES // t.players) * t.players
        for start in range(0, t.games, per):
            tasks.append({"index": i, "table": t, "spec": cand.spec, "start": start,
                          "stop": min(t.games, start + per), "limit": limit})
    parts: dict[int, list[dict[str, Any]]] = {i: [] for i in left}
    need = {i: todo[i].games for i in left}
    files: dict[int, dict[str, str]] = {}
    ctx = multiprocessing.get_context("spawn")  # numba and fork do not mix
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
        futures = [pool.submit(play.worker_chunk, task) for task in tasks]
        try:
            for fut in as_completed(futures):
                i, recs, fl = fut.result()
                parts[i] += recs
                files.setdefault(i, fl)
                bar.update(len(recs))
                if len(parts[i]) == need[i]:
                    finish(i, parts[i], files[i])
        except BaseException:
            for fut in futures:
                fut.cancel()
            raise


def check(path: str | Path, workers: int = 1, progress: bool = True) -> list[str]:
    """Replay the report in ``path`` (read as untrusted: schema-checked) with the candidate
    and protocol it names, and return one line per row that differs (empty: it reproduces).
    :class:`OptionError` if it cannot be replayed here (another protocol version, a
    candidate that cannot be rebuilt from its spec, a file whose sha256 differs)."""
    rep = report.read_report(path)
    if rep["protocol"] != PROTOCOL_VERSION:
        raise OptionError(f"{path}: protocol {rep['protocol']}, this card-envs runs protocol "
                          f"{PROTOCOL_VERSION}")
    spec = rep["candidate"]["spec"]
    if spec is None:
        raise OptionError(f"{path}: the candidate {rep['candidate']['label']!r} has no spec "
                          "to rebuild it from (it was run from __main__ or a notebook)")
    env_ids = sorted({r["env_id"] for r in rep["rows"]}, key=ENV_IDS.index)
    seats = sorted({r["players"] for r in rep["rows"]})
    partial = not rep["complete"]
    new = run(spec, rep["mode"], games=env_ids if partial else None,
              seats=seats if partial else None, workers=workers, progress=progress,
              resume=False, move_limit=rep["move_limit_s"])
    if new.report["candidate"]["files"] != rep["candidate"]["files"]:
        raise OptionError(f"{path}: the candidate's files differ from the report's "
                          f"({new.report['candidate']['files']} here)")
    return report.differences(rep, new.report)


__all__ = ["BenchmarkResult", "check", "run"]
