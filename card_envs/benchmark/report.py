"""A benchmark report: one row per table (win share, per-seat shares, mean points, pairwise
score, forfeits, a digest of every game), the normalised score per game, the rating; its JSON
(deterministic: no timings, no machine) and the checks a report read from a file goes through."""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Any

from card_envs.arena.stats import mean_interval, wilson_interval
from card_envs.benchmark.protocol import LADDER, MODES, REFERENCE, SEATS, Table
from card_envs.benchmark.rating import fit_one, pair_counts
from card_envs.core.checks import check_nesting
from card_envs.core.errors import StateDictError
from card_envs.core.files import read_json
from card_envs.core.registry import ENV_IDS

FORMAT = "card-envs-benchmark"
FORMAT_VERSION = 1
MAX_BYTES = 4 << 20  # a full report is about 60 kB
MAX_TEXT = 1000
MAX_REASONS = 5  # distinct forfeit reasons kept per table


def _r(x: float | None, digits: int = 6) -> float | None:
    return None if x is None else round(float(x), digits)


def table_row(table: Table, records: list[dict[str, Any]], files: dict[str, str]
              ) -> dict[str, Any]:
    """The report row of one table from its game records (in game order)."""
    n, games = table.players, len(records)
    wins = [0.0] * n
    seat_games = [0] * n
    pts = []
    reasons: list[str] = []
    for r in records:
        seat_games[r["seat"]] += 1
        if r["winners"][r["seat"]]:
            wins[r["seat"]] += 1.0 / sum(r["winners"])
        if r["forfeit"] is None:
            pts.append(r["points"][r["seat"]])
        elif r["forfeit"] not in reasons and len(reasons) < MAX_REASONS:
            reasons.append(r["forfeit"])
    share = sum(wins) / games
    lo, hi = wilson_interval(sum(wins), games)
    mean = sum(pts) / len(pts) if pts else None
    sd = (math.sqrt(sum((p - mean) ** 2 for p in pts) / (len(pts) - 1))
          if mean is not None and len(pts) > 1 else 0.0)
    pci = mean_interval(mean, sd, len(pts)) if mean is not None else None
    score, pairs = pair_counts(records, n)
    digest = hashlib.sha256(json.dumps(records, sort_keys=True).encode()).hexdigest()[:16]
    return {"env_id": table.env_id, "players": n, "opponent": table.opponent,
            "seed": table.seed, "deals": table.deals, "games": games,
            "win_share": _r(share), "ci95": [_r(lo), _r(hi)],
            "seat_win_share": [_r(w / g) if g else None for w, g in zip(wins, seat_games)],
            "seat_ci95": [[_r(x) for x in wilson_interval(w, g)] if g else None
                          for w, g in zip(wins, seat_games)],
            "mean_points": _r(mean),
            "points_ci95": None if pci is None else [_r(pci[0]), _r(pci[1])],
            "pair_score": _r(score), "pairs": int(pairs),
            "forfeits": sum(r["forfeit"] is not None for r in records),
            "forfeit_reasons": reasons, "candidate_files": dict(sorted(files.items())),
            "digest": digest}


def normalised(rows: list[dict[str, Any]]) -> dict[str, dict[str, float | None]]:
    """Per game: the normalised score at each seat count (``"2"``, ``"3"``...) from the row
    against ``n - 1`` heuristics, and their ``"mean"`` (:data:`~.protocol.REFERENCE`)."""
    out: dict[str, dict[str, float | None]] = {}
    for row in rows:
        if row["opponent"] != "heuristic":
            continue
        ref = REFERENCE.get(row["env_id"], {}).get(row["players"])
        val = None
        if ref is not None and ref[1] != ref[0]:
            val = _r((row["win_share"] - ref[0]) / (ref[1] - ref[0]), 4)
        out.setdefault(row["env_id"], {})[str(row["players"])] = val
    for scores in out.values():
        vals = [v for v in scores.values() if v is not None]
        scores["mean"] = _r(sum(vals) / len(vals), 4) if len(vals) == len(scores) else None
    return out


def rating(rows: list[dict[str, Any]], ladder: dict[str, float]) -> dict[str, Any] | None:
    """The candidate's rating from every row's pairwise score against the ladder's ratings."""
    scores: dict[str, list[float]] = {}
    for row in rows:
        s = scores.setdefault(row["opponent"], [0.0, 0.0])
        s[0] += row["pair_score"]
        s[1] += row["pairs"]
    res = fit_one({k: (v[0], v[1]) for k, v in scores.items()}, ladder)
    if res is None:
        return None
    return {"elo": res[0], "ci95": [res[1], res[2]],
            "pairs": int(sum(v[1] for v in scores.values())),
            "ladder": {k: ladder[k] for k in sorted(scores) if k in ladder}}


# --------------------------------------------------------------------------------------------
# reading a report: every field checked (a report is a file: untrusted)
# --------------------------------------------------------------------------------------------
TOP = ("format", "format_version", "protocol", "mode", "complete", "candidate", "versions",
       "move_limit_s", "rows", "normalised", "rating")
ROW = ("env_id", "players", "opponent", "seed", "deals", "games", "win_share", "ci95",
       "seat_win_share", "seat_ci95", "mean_points", "points_ci95", "pair_score", "pairs",
       "forfeits", "forfeit_reasons", "candidate_files", "digest")


def _fail(where: str, what: str) -> StateDictError:
    return StateDictError(f"benchmark report: {where}: {what}")


def _num(x: Any, where: str, lo: float = -1e12, hi: float = 1e12, none: bool = False) -> None:
    if x is None and none:
        return
    if isinstance(x, bool) or not isinstance(x, int | float) or not math.isfinite(x) \
            or not lo <= x <= hi:
        raise _fail(where, f"expected a number in [{lo:g}, {hi:g}], got {x!r:.60}")


def _int(x: Any, where: str, lo: int, hi: int) -> None:
    if isinstance(x, bool) or not isinstance(x, int) or not lo <= x <= hi:
        raise _fail(where, f"expected an integer in [{lo}, {hi}], got {x!r:.60}")


def _text(x: Any, where: str) -> None:
    if not isinstance(x, str) or len(x) > MAX_TEXT:
        raise _fail(where, f"expected text of at most {MAX_TEXT} characters")


def _keys(d: Any, where: str, keys: tuple[str, ...]) -> None:
    if not isinstance(d, dict) or set(d) != set(keys):
        have = sorted(d) if isinstance(d, dict) else type(d).__name__
        raise _fail(where, f"expected the keys {list(keys)}, got {have}")


def check_report(d: Any) -> None:
    """Raise :class:`StateDictError` naming the first field of ``d`` that a report cannot
    hold (wrong keys, types, ranges, unknown games or opponents, too much text)."""
    check_nesting(d, 8, 10**6, "benchmark report")
    _keys(d, "top level", TOP)
    if d["format"] != FORMAT or d["format_version"] != FORMAT_VERSION:
        raise _fail("format", f"expected {FORMAT} version {FORMAT_VERSION}, got "
                              f"{d['format']!r:.60} version {d['format_version']!r:.20}")
    _int(d["protocol"], "protocol", 1, 10**6)
    if d["mode"] not in MODES:
        raise _fail("mode", f"expected one of {list(MODES)}")
    if not isinstance(d["complete"], bool):
        raise _fail("complete", "expected true or false")
    _keys(d["candidate"], "candidate", ("label", "spec", "files"))
    _text(d["candidate"]["label"], "candidate.label")
    if d["candidate"]["spec"] is not None:
        _text(d["candidate"]["spec"], "candidate.spec")
    for where, files in [("candidate.files", d["candidate"]["files"])]:
        if not isinstance(files, dict) or len(files) > 100:
            raise _fail(where, "expected a mapping of file names to sha256")
        for k, v in files.items():
            _text(k, where)
            _text(v, where)
    if not isinstance(d["versions"], dict) or len(d["versions"]) > 50:
        raise _fail("versions", "expected a mapping")
    for k, v in d["versions"].items():
        _text(k, "versions")
        if isinstance(v, dict):
            for kk, vv in v.items():
                _text(kk, f"versions.{k}")
                _text(vv, f"versions.{k}")
        else:
            _text(v, f"versions.{k}")
    _num(d["move_limit_s"], "move_limit_s", 0.0, 1e6)
    if not isinstance(d["rows"], list) or len(d["rows"]) > 10000:
        raise _fail("rows", "expected a list")
    for i, row in enumerate(d["rows"]):
        check_row(row, f"rows[{i}]")
    if not isinstance(d["normalised"], dict):
        raise _fail("normalised", "expected a mapping")
    for env_id, scores in d["normalised"].items():
        if env_id not in ENV_IDS or not isinstance(scores, dict):
            raise _fail("normalised", f"unknown game {env_id!r:.60}")
        for k, v in scores.items():
            if k not in [*map(str, SEATS), "mean"]:
                raise _fail(f"normalised.{env_id}", f"unknown key {k!r:.20}")
            _num(v, f"normalised.{env_id}.{k}", none=True)
    if d["rating"] is not None:
        _keys(d["rating"], "rating", ("elo", "ci95", "pairs", "ladder"))
        _num(d["rating"]["elo"], "rating.elo")
        _int(d["rating"]["pairs"], "rating.pairs", 0, 10**9)
        if not isinstance(d["rating"]["ci95"], list) or len(d["rating"]["ci95"]) != 2:
            raise _fail("rating.ci95", "expected two numbers")
        for x in d["rating"]["ci95"]:
            _num(x, "rating.ci95")
        if not isinstance(d["rating"]["ladder"], dict):
            raise _fail("rating.ladder", "expected a mapping")
        for k, v in d["rating"]["ladder"].items():
            _text(k, "rating.ladder")
            _num(v, f"rating.ladder.{k}")


def check_row(row: Any, where: str) -> None:
    """Raise :class:`StateDictError` if ``row`` is not a report row."""
    _keys(row, where, ROW)
    if row["env_id"] not in ENV_IDS:
        raise _fail(f"{where}.env_id", f"unknown game {row['env_id']!r:.60}")
    _int(row["players"], f"{where}.players", min(SEATS), max(SEATS))
    if row["opponent"] not in LADDER:
        raise _fail(f"{where}.opponent", f"not a ladder opponent: {row['opponent']!r:.60}")
    _int(row["seed"], f"{where}.seed", 0, 2**64 - 1)
    _int(row["deals"], f"{where}.deals", 1, 10**6)
    _int(row["games"], f"{where}.games", 1, 10**7)
    _int(row["pairs"], f"{where}.pairs", 0, 10**8)
    _int(row["forfeits"], f"{where}.forfeits", 0, row["games"])
    for key in ("win_share",):
        _num(row[key], f"{where}.{key}", 0.0, 1.0)
    _num(row["pair_score"], f"{where}.pair_score", 0.0, row["pairs"])
    _num(row["mean_points"], f"{where}.mean_points", none=True)
    for key, n in (("ci95", 2), ("points_ci95", 2), ("seat_win_share", row["players"])):
        v = row[key]
        if v is None and key == "points_ci95":
            continue
        if not isinstance(v, list) or len(v) != n:
            raise _fail(f"{where}.{key}", f"expected a list of {n}")
        for x in v:
            _num(x, f"{where}.{key}", none=key == "seat_win_share")
    seat_ci = row["seat_ci95"]
    if not isinstance(seat_ci, list) or len(seat_ci) != row["players"]:
        raise _fail(f"{where}.seat_ci95", f"expected a list of {row['players']}")
    for pair in seat_ci:
        if pair is not None and (not isinstance(pair, list) or len(pair) != 2):
            raise _fail(f"{where}.seat_ci95", "expected [low, high] pairs")
        for x in pair or ():
            _num(x, f"{where}.seat_ci95", 0.0, 1.0)
    if not isinstance(row["forfeit_reasons"], list) or len(row["forfeit_reasons"]) > MAX_REASONS:
        raise _fail(f"{where}.forfeit_reasons", f"expected at most {MAX_REASONS} texts")
    for t in row["forfeit_reasons"]:
        _text(t, f"{where}.forfeit_reasons")
    if not isinstance(row["candidate_files"], dict) or len(row["candidate_files"]) > 100:
        raise _fail(f"{where}.candidate_files", "expected a mapping")
    for k, v in row["candidate_files"].items():
        _text(k, f"{where}.candidate_files")
        _text(v, f"{where}.candidate_files")
    _text(row["digest"], f"{where}.digest")


def read_report(path: str | Path) -> dict[str, Any]:
    """A report from a file, checked (:class:`StateDictError` naming the problem)."""
    d = read_json(path, MAX_BYTES, "benchmark report")
    check_report(d)
    return d


def dumps(report: dict[str, Any]) -> str:
    """The report's JSON text (the same bytes for the same report)."""
    return json.dumps(report, indent=1, sort_keys=False, ensure_ascii=True) + "\n"


def row_label(row: dict[str, Any]) -> str:
    return f"{row['env_id']} {row['players']} seats vs {row['opponent']}"


def differences(report: dict[str, Any], replayed: dict[str, Any]) -> list[str]:
    """One line per row (and summary) in which ``replayed`` differs from ``report``."""
    out = []
    mine = {(r["env_id"], r["players"], r["opponent"]): r for r in report["rows"]}
    theirs = {(r["env_id"], r["players"], r["opponent"]): r for r in replayed["rows"]}
    for key in list(mine) + [k for k in theirs if k not in mine]:
        a, b = mine.get(key), theirs.get(key)
        if a is None or b is None:
            out.append(f"row {' '.join(map(str, key))}: only in the "
                       f"{'replay' if a is None else 'report'}")
            continue
        fields = [k for k in ROW if a[k] != b[k]]
        if fields:
            f = fields[0]
            more = f" (and {', '.join(fields[1:])})" if fields[1:] else ""
            out.append(f"row {row_label(a)}: {f} is {a[f]!r} in the report, {b[f]!r} "
                       f"replayed{more}")
    for key in ("normalised", "rating", "candidate", "protocol", "mode"):
        if report[key] != replayed[key] and not out:
            out.append(f"{key}: {report[key]!r:.200} in the report, {replayed[key]!r:.200} "
                       "replayed")
    return out
