"""The result of an arena run (:class:`ArenaResult`): stats, matrix, ratings, settings and
the per-game log, its text table and its JSON form."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from card_envs.arena.schema import JSON_FORMAT, check_result
from card_envs.arena.stats import AgentStats, HeadToHead, Rating
from card_envs.core.files import read_json, write_text_atomic
from card_envs.core.registry import env_class, is_registered

__all__ = ["JSON_FORMAT", "ArenaResult"]

MAX_FILE = 1 << 30  # bytes of a results file


def _jsonable(x: Any) -> Any:
    """``x`` in plain JSON form (tuples -> lists, numpy scalars -> Python)."""
    def default(o: Any) -> Any:
        if isinstance(o, np.generic):
            return o.item()
        if isinstance(o, np.ndarray):
            return o.tolist()
        return repr(o)
    return json.loads(json.dumps(x, default=default))


@dataclass
class ArenaResult:
    """What :func:`run_arena` returns: per-participant stats, head-to-head matrix, ratings,
    settings and per-game log. ``games`` is the number of games *per lineup*."""

    env_id: str
    num_players: int
    games: int
    seed: int
    options: dict[str, Any]  # the env's full (normalized) options
    stats: list[AgentStats]
    deal_seeds: list[int]
    # per game, in rating order: game (run index), lineup, deal, rotation, seats (labels by
    # seat), points, winners, ranks (0 = best), digest (sha1 of the state after reset)
    log: list[dict[str, Any]]
    elapsed: float
    versions: dict[str, str]
    agent_specs: list[str | None] = field(default_factory=list)  # the pool; None = instance
    game_options: dict[str, Any] = field(default_factory=dict)  # as passed to run_arena
    lineups: list[list[str]] = field(default_factory=list)
    matrix: HeadToHead | None = None
    ratings: list[Rating] = field(default_factory=list)
    workers: int = 1
    #: read from a file (:meth:`from_json`): :func:`rerun` then loads no model file it names
    #: unless told to
    from_file: bool = field(default=False, compare=False, repr=False)

    def __getitem__(self, label: str) -> AgentStats:
        for s in self.stats:
            if s.label == label:
                return s
        raise KeyError(f"no participant {label!r}; participants: "
                       f"{[s.label for s in self.stats]}")

    @property
    def labels(self) -> list[str]:
        return [s.label for s in self.stats]

    @property
    def total_games(self) -> int:
        """Games played in the whole run (``games`` per lineup times the lineups)."""
        return len(self.log)

    def rating(self, label: str) -> Rating:
        for r in self.ratings:
            if r.label == label:
                return r
        raise KeyError(f"no rating for {label!r}")

    @property
    def run_args(self) -> dict[str, Any]:
        """Keyword arguments that make :func:`run_arena` play this run again
        (``run_arena(**result.run_args)``); ``ValueError`` if the pool had agent instances."""
        if any(s is None for s in self.agent_specs) or not self.agent_specs:
            raise ValueError("this run used agent instances, which a result cannot rebuild; "
                             "rerun it with agent specs")
        reserved = {"env_id", "agents", "games", "num_players", "seed", "progress", "workers",
                    "backend", "address", "replays"} & set(self.game_options)
        if reserved:  # from_json refuses these; a result built by hand could hold them
            raise ValueError(f"game_options {sorted(reserved)} are run settings, not game "
                             "options")
        return {**self.game_options, "env_id": self.env_id, "agents": list(self.agent_specs),
                "games": self.games, "num_players": self.num_players, "seed": self.seed}

    def untimed_log(self) -> list[dict[str, Any]]:
        """The per-game log without the wall-clock ``think_ms``: what two runs of the same
        seed, agents and code share exactly."""
        return [{k: v for k, v in g.items() if k != "think_ms"} for g in self.log]

    @property
    def points_order(self) -> str:
        """Which way the game's points go (``"lower is better"`` in Slide), for reading the
        mean points; win rates are always higher-is-better."""
        if not is_registered(self.env_id):
            return "unknown"
        return env_class(self.env_id).game_class.points_order

    def table(self) -> str:
        """A plain-text results table (stats and ratings, then the head-to-head matrix when
        there are more than two participants)."""
        w = max([14, *(len(s.label) + 2 for s in self.stats)])
        head = (f"{'agent':<{w}}{'games':>7}{'wins':>9}{'ties':>6}{'win rate':>10}"
                f"{'95% CI':>18}{'mean pts':>10}{'pts 95% CI':>20}{'mu':>8}{'sigma':>7}"
                f"{'ordinal':>9}{'ms/move':>9}")
        rows = [head, "-" * len(head)]
        ratings = {r.label: r for r in self.ratings}
        for s in self.stats:
            lo, hi = s.ci95
            pci = s.points_ci95
            ptxt = "-" if pci is None else f"[{pci[0]:.2f}, {pci[1]:.2f}]"
            r = ratings.get(s.label)
            rtxt = "" if r is None else f"{r.mu:>8.2f}{r.sigma:>7.2f}{r.ordinal:>9.2f}"
            rows.append(f"{s.label:<{w}}{s.games:>7}{s.wins:>9.1f}{s.ties:>6}"
                        f"{s.win_rate:>10.3f}{f'[{lo:.3f}, {hi:.3f}]':>18}"
                        f"{s.mean_points:>10.2f}{ptxt:>20}{rtxt}{s.ms_per_move:>9.2f}")
        rate = self.total_games / self.elapsed if self.elapsed > 0 else float("inf")
        nl = len(self.lineups) or 1
        count = (f"{self.games} games" if nl == 1 else
                 f"{self.games} games per lineup x {nl} lineups = {self.total_games} games")
        rows.append(f"{count}, {self.num_players} players, {self.env_id}, seed {self.seed}, "
                    f"{self.elapsed:.1f} s ({rate:.0f} games/s)")
        rows.append(f"mean pts: the game's final points, {self.points_order}")
        if self.matrix is not None and len(self.matrix.labels) > 2:
            rows += ["", "head-to-head: share of common games in which the row agent finished "
                     "ahead of the column agent (ties 1/2)", self.matrix_table()]
        return "\n".join(rows)

    def matrix_table(self) -> str:
        """The head-to-head matrix as text."""
        if self.matrix is None:
            return ""
        labs = self.matrix.labels
        w = max([10, *(len(lab) + 2 for lab in labs)])
        rows = [" " * w + "".join(f"{lab:>{w}}" for lab in labs)]
        for lab, row in zip(labs, self.matrix.rates):
            rows.append(f"{lab:<{w}}" + "".join(f"{'-' if v is None else f'{v:.3f}':>{w}}"
                                                 for v in row))
        return "\n".join(rows)

    def to_json(self) -> dict[str, Any]:
        """A JSON-serializable dict (``json.dumps`` works as is; no NaN);
        :meth:`from_json` reads it back."""
        return {"format": JSON_FORMAT, "env_id": self.env_id, "num_players": self.num_players,
                "games": self.games, "total_games": self.total_games, "seed": self.seed,
                "options": _jsonable(self.options),
                "game_options": _jsonable(self.game_options),
                "agent_specs": list(self.agent_specs),
                "lineups": [list(x) for x in self.lineups],
                "agents": [s.to_json() for s in self.stats],
                "matrix": None if self.matrix is None else self.matrix.to_json(),
                "ratings": [r.to_json() for r in self.ratings],
                "deal_seeds": list(self.deal_seeds), "log": _jsonable(self.log),
                "elapsed": self.elapsed, "workers": self.workers,
                "versions": dict(self.versions), "points_order": self.points_order}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> ArenaResult:
        """Rebuild a result from :meth:`to_json` output (e.g. after ``json.load``), checked
        first against the schema (:mod:`card_envs.arena.schema`: keys, types, ranges, the
        game's options, agent specs parsed as on the command line):
        :class:`~card_envs.core.errors.StateDictError` naming the first bad field."""
        check_result(d)
        return cls(
            env_id=d["env_id"], num_players=d["num_players"], games=d["games"], seed=d["seed"],
            options=dict(d["options"]), stats=[AgentStats.from_json(s) for s in d["agents"]],
            deal_seeds=list(d["deal_seeds"]), log=[dict(g) for g in d["log"]],
            elapsed=d["elapsed"], versions=dict(d["versions"]),
            agent_specs=list(d["agent_specs"]), game_options=dict(d["game_options"]),
            lineups=[list(x) for x in d["lineups"]],
            matrix=None if d["matrix"] is None else HeadToHead.from_json(d["matrix"]),
            ratings=[Rating.from_json(r) for r in d["ratings"]], workers=d["workers"],
            from_file=True)

    def save(self, path: str | Path) -> None:
        """Write :meth:`to_json` to ``path`` (whole or not at all: a temporary file renamed)."""
        write_text_atomic(path, json.dumps(self.to_json(), indent=1))

    @classmethod
    def load(cls, path: str | Path) -> ArenaResult:
        """Read a result written by :meth:`save` (or ``card-envs arena --json``):
        :class:`~card_envs.core.errors.StateDictError` if it is not one (not UTF-8 JSON,
        over ``MAX_FILE`` bytes, or off the schema), ``OSError`` if it cannot be read."""
        return cls.from_json(read_json(path, MAX_FILE, "arena result"))

