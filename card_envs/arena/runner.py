"""Evaluation arena: play agents against each other over duplicate deals and report win rates,
mean points, head-to-head rates and openskill ratings.

>>> from card_envs.arena import run_arena
>>> res = run_arena("slide_v0", ["random", "heuristic"], games=200, seed=0)  # doctest: +SKIP
>>> print(res.table())                                                     # doctest: +SKIP

User guide: ``docs/arena.md``.

**Pool, lineups and seats.** ``agents`` is the pool: agent specs for :func:`agents.make_agent`
(``"random"``, ``"heuristic"``, ``"mcts:ms=50,c=0.7"``) or :class:`agents.Agent` instances.
With at most as many pool members as seats there is one lineup: the pool repeated to fill the
seats (``random,heuristic`` at 3 players is ``random#0, heuristic, random#1``). With more pool
members ``k`` than seats ``n`` the arena is a round-robin: every combination of ``n`` distinct
members (``itertools.combinations`` order) is a lineup. **``games`` counts games per lineup**;
the run plays ``games * len(lineups)`` games in total.

**Duplicate deals.** In every lineup, game ``g`` deals board ``g // n`` and seats lineup member
``j`` at seat ``(j + g) % n``: each deal is replayed with every rotation, so over a multiple of
``n`` games every member sits in every seat equally often, on the same deals. Every lineup plays
the same deals (deal ``b`` is ``reset(seed=deal_seed(seed, b))``).

**Finishing order.** Winners (``env.infos[agent]["winner"]``) come first, sharing rank 0; the
others follow by their points (``env.infos[agent]["points"]``) in the game's direction, read off
the winners: if the winners hold the highest points higher is better in that game, if they hold
the lowest (Slide, Flipology under the Moon) lower is better. Equal keys share a rank.

**Scoring.** A sole winner gets 1 win, a shared winner among ``k`` winners gets ``1/k`` and is
also counted in ``ties``, so every game hands out exactly one win. Win rates come with a 95%
Wilson score interval, mean points with a 95% normal interval (``1.96 sd / sqrt(games)``).
The head-to-head matrix ``M[a][b]`` is the share of the games with both ``a`` and ``b`` in which
``a`` finished ahead of ``b`` (a tie counts 1/2). Ratings: openskill's Plackett-Luce model, one
match per game (each seat a team of one, ranks = finishing order), games rated in log order.

**Agents.** Agents with ``needs_state`` (search agents) are called as
``act_state(state, observation, action_mask)`` with a copy of the true engine state, the
others as ``act(observation, action_mask)``.

**Reproducibility.** Agents are re-seeded every game from ``(seed, game, participant, lineup)``
and every game's deal is fixed, so the same arguments give the same games whatever ``workers``
is (agents that search on a time budget, ``ms=...``, are not reproducible).
``ArenaResult.to_json()`` records seeds, options, versions and the per-game log (with a digest of
each initial state); :func:`rerun` plays a recorded run again.

**Parallel games.** ``workers > 1`` plays chunks of deals in a ``ProcessPoolExecutor`` (spawn
context; call it under ``if __name__ == "__main__":`` in scripts). Workers rebuild the agents
from their specs, so agent *instances* can only run in-process (``ValueError`` otherwise).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import platform
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from card_envs.arena.plots import plot_ratings, plot_winrate_matrix
from card_envs.core.registry import ENV_IDS, make_raw

if TYPE_CHECKING:
    from agents.base import Agent

__all__ = ["AgentStats", "ArenaResult", "HeadToHead", "Rating", "deal_seed", "finish_ranks",
           "mean_interval", "plot_ratings", "plot_winrate_matrix", "rerun", "resolve_env_id",
           "run_arena", "wilson_interval"]

Z95 = 1.959963984540054  # two-sided 95% normal quantile
JSON_FORMAT = "card-envs-arena/2"


def wilson_interval(successes: float, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion (``successes`` may be fractional,
    e.g. with half wins); ``(0.0, 1.0)`` when ``n == 0``."""
    if n <= 0:
        return 0.0, 1.0
    p = successes / n
    z2 = z * z
    denom = 1.0 + z2 / n
    center = (p + z2 / (2 * n)) / denom
    half = z * math.sqrt(max(p * (1 - p) / n + z2 / (4 * n * n), 0.0)) / denom
    return max(0.0, center - half), min(1.0, center + half)


def mean_interval(mean: float, sd: float, n: int, z: float = Z95) -> tuple[float, float] | None:
    """Normal-approximation interval ``mean -+ z sd / sqrt(n)``; ``None`` when ``n < 2``."""
    if n < 2:
        return None
    half = z * sd / math.sqrt(n)
    return mean - half, mean + half


def resolve_env_id(game: str) -> str:
    """``"slide"``, ``"slide_v0"`` or ``"Slide"`` -> ``"slide_v0"`` (the newest version when
    only the name is given)."""
    key = game.strip().lower()
    if key in ENV_IDS:
        return key
    matches = sorted((e for e in ENV_IDS if e.rsplit("_v", 1)[0] == key),
                     key=lambda e: int(e.rsplit("_v", 1)[1]))
    if not matches:
        names = sorted({e.rsplit("_v", 1)[0] for e in ENV_IDS})
        raise ValueError(f"unknown game {game!r}; games: {names} (env ids {list(ENV_IDS)})")
    return matches[-1]


def deal_seed(seed: int, deal: int) -> int:
    """The ``reset`` seed of deal number ``deal`` in a run seeded ``seed``."""
    return int(np.random.SeedSequence([seed, deal]).generate_state(2, np.uint32)
               .astype(np.uint64) @ np.array([1, 2**32], np.uint64)) & (2**63 - 1)


def _agent_seed(seed: int, game: int, participant: int, lineup: int = 0) -> int:
    """Seed of participant ``participant`` in game ``game`` (index within the lineup) of
    lineup ``lineup``. Lineup 0 keeps the seeds of earlier versions."""
    entropy = [seed, game, participant, 1] + ([lineup] if lineup else [])
    return int(np.random.SeedSequence(entropy).generate_state(1)[0])


def finish_ranks(points: Sequence[float], winners: Sequence[bool]) -> list[int]:
    """Finishing rank per seat (0 = best; equal results share a rank, competition style):
    winners first, then points in the direction the winners show (module docstring). Without
    any winner flag every seat ranks 0."""
    n = len(points)
    if not any(winners):
        return [0] * n
    wpts = [p for p, w in zip(points, winners) if w]
    if all(p == max(points) for p in wpts):
        sign = 1.0
    elif all(p == min(points) for p in wpts):
        sign = -1.0
    else:  # points do not order this game's result: only the winner flags count
        sign = 0.0
    keys = [(1 if w else 0, sign * p) for p, w in zip(points, winners)]
    return [sum(1 for other in keys if other > k) for k in keys]


# --------------------------------------------------------------------------------------------
# result types
# --------------------------------------------------------------------------------------------
@dataclass
class AgentStats:
    """One participant's results over every game it played."""

    label: str
    agent: str
    games: int = 0
    wins: float = 0.0  # sole win 1, a win shared by k seats 1/k
    sole_wins: int = 0
    ties: int = 0  # shared wins
    points_sum: float = 0.0
    seat_games: list[int] = field(default_factory=list)
    points_sd: float = 0.0  # sample standard deviation of the final points
    seat_wins: list[float] = field(default_factory=list)
    moves: int = 0  # decisions taken
    think_ms: float = 0.0  # wall time spent choosing them (ms; machine-dependent)

    @property
    def ms_per_move(self) -> float:
        return self.think_ms / self.moves if self.moves else float("nan")

    @property
    def win_rate(self) -> float:
        return self.wins / self.games if self.games else 0.0

    @property
    def ci95(self) -> tuple[float, float]:
        """95% Wilson interval of the win rate."""
        return wilson_interval(self.wins, self.games)

    @property
    def mean_points(self) -> float:
        return self.points_sum / self.games if self.games else float("nan")

    @property
    def points_ci95(self) -> tuple[float, float] | None:
        """95% normal interval of the mean points (``None`` with fewer than 2 games)."""
        return mean_interval(self.mean_points, self.points_sd, self.games)

    def to_json(self) -> dict[str, Any]:
        lo, hi = self.ci95
        pci = self.points_ci95
        return {"label": self.label, "agent": self.agent, "games": self.games,
                "wins": self.wins, "sole_wins": self.sole_wins, "ties": self.ties,
                "win_rate": self.win_rate, "ci95": [lo, hi],
                "mean_points": self.mean_points if self.games else None,
                "points_sum": self.points_sum, "points_sd": self.points_sd,
                "points_ci95": None if pci is None else list(pci),
                "seat_games": list(self.seat_games), "seat_wins": list(self.seat_wins),
                "moves": self.moves, "think_ms": self.think_ms}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> AgentStats:
        return cls(d["label"], d["agent"], d["games"], d["wins"], d["sole_wins"], d["ties"],
                   d["points_sum"], list(d["seat_games"]), d["points_sd"], list(d["seat_wins"]),
                   d.get("moves", 0), d.get("think_ms", 0.0))


@dataclass
class HeadToHead:
    """Pairwise results: ``score[a][b]`` = games in which ``a`` finished ahead of ``b`` (ties
    1/2), ``games[a][b]`` = games with both; indices follow ``labels``."""

    labels: list[str]
    score: list[list[float]]
    games: list[list[int]]

    def rate(self, a: str, b: str) -> float | None:
        """Share of their common games in which ``a`` finished ahead of ``b`` (``None`` if
        they never met)."""
        i, j = self.labels.index(a), self.labels.index(b)
        return self.score[i][j] / self.games[i][j] if self.games[i][j] else None

    @property
    def rates(self) -> list[list[float | None]]:
        """The win-rate matrix (``None`` on the diagonal and for pairs that never met)."""
        return [[s / g if g else None for s, g in zip(srow, grow)]
                for srow, grow in zip(self.score, self.games)]

    def to_json(self) -> dict[str, Any]:
        return {"labels": list(self.labels), "rate": self.rates,
                "score": [list(r) for r in self.score], "games": [list(r) for r in self.games]}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> HeadToHead:
        return cls(list(d["labels"]), [list(r) for r in d["score"]],
                   [list(r) for r in d["games"]])


@dataclass
class Rating:
    """An openskill Plackett-Luce rating."""

    label: str
    mu: float
    sigma: float

    @property
    def ordinal(self) -> float:
        """Conservative skill ``mu - 3 sigma`` (openskill's ``ordinal()``)."""
        return self.mu - 3.0 * self.sigma

    def to_json(self) -> dict[str, Any]:
        return {"label": self.label, "mu": self.mu, "sigma": self.sigma,
                "ordinal": self.ordinal}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Rating:
        return cls(d["label"], d["mu"], d["sigma"])


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
        return {"env_id": self.env_id, "agents": list(self.agent_specs), "games": self.games,
                "num_players": self.num_players, "seed": self.seed, **self.game_options}

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
                "versions": dict(self.versions)}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> ArenaResult:
        """Rebuild a result from :meth:`to_json` output (e.g. after ``json.load``)."""
        if d.get("format") != JSON_FORMAT:
            raise ValueError(f"not an arena result of format {JSON_FORMAT!r} "
                             f"(format {d.get('format')!r})")
        return cls(
            env_id=d["env_id"], num_players=d["num_players"], games=d["games"], seed=d["seed"],
            options=dict(d["options"]), stats=[AgentStats.from_json(s) for s in d["agents"]],
            deal_seeds=list(d["deal_seeds"]), log=[dict(g) for g in d["log"]],
            elapsed=d["elapsed"], versions=dict(d["versions"]),
            agent_specs=list(d["agent_specs"]), game_options=dict(d["game_options"]),
            lineups=[list(x) for x in d["lineups"]],
            matrix=None if d["matrix"] is None else HeadToHead.from_json(d["matrix"]),
            ratings=[Rating.from_json(r) for r in d["ratings"]], workers=d["workers"])

    def save(self, path: str) -> None:
        """Write :meth:`to_json` to ``path``."""
        with open(path, "w") as f:
            json.dump(self.to_json(), f, indent=1)

    @classmethod
    def load(cls, path: str) -> ArenaResult:
        """Read a result written by :meth:`save` (or ``card-envs arena --json``)."""
        with open(path) as f:
            return cls.from_json(json.load(f))


def _versions(env: Any) -> dict[str, str]:
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
    name, colon, rest = spec.strip().partition(":")
    return name.strip().lower() + (f":{rest.strip()}" if colon and rest.strip() else "")


def _participants(env_id: str, agents: Sequence[str | Agent], n: int,
                  options: dict[str, Any]) -> tuple[list[Agent], list[str], list[str]]:
    """(agent objects, names, labels) of the participants: the pool, repeated to fill the
    seats when it is not larger than the table."""
    from agents.base import Agent
    from agents.registry import make_agent

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
          deal_seeds: Sequence[int], on_game: Callable[[], None] | None = None
          ) -> list[dict[str, Any]]:
    """Play games ``start..stop-1`` of lineup ``lineup``; return their log entries."""
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
            objs[j].reset(seed=_agent_seed(seed, g, j, lineup))
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
        out.append({"game": lineup * games + g, "lineup": lineup, "deal": deal,
                    "rotation": rot, "seats": [labels[j] for j in by_seat], "points": points,
                    "winners": winners, "ranks": finish_ranks(points, winners),
                    "digest": digest, "moves": moves,
                    "think_ms": [round(1000.0 * t, 3) for t in think]})
        if on_game is not None:
            on_game()
    return out


_WORKER_CACHE: dict[str, tuple[Any, list[Any], list[str]]] = {}


def _play_chunk(task: dict[str, Any]) -> list[dict[str, Any]]:
    """Worker entry point: rebuild env and agents from specs (cached per process) and play
    one chunk."""
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
                 task["start"], task["stop"], task["games"], task["deal_seeds"])


def _aggregate(labels: list[str], names: list[str], n: int, log: list[dict[str, Any]]
               ) -> tuple[list[AgentStats], HeadToHead, list[Rating]]:
    """Stats, head-to-head matrix and ratings from the log (in log order: deterministic)."""
    from openskill.models import PlackettLuce

    k = len(labels)
    pos = {lab: i for i, lab in enumerate(labels)}
    stats = [AgentStats(lab, nm, seat_games=[0] * n, seat_wins=[0.0] * n)
             for lab, nm in zip(labels, names)]
    pts: list[list[float]] = [[] for _ in range(k)]
    score = [[0.0] * k for _ in range(k)]
    met = [[0] * k for _ in range(k)]
    model = PlackettLuce()
    skill = [model.rating(name=lab) for lab in labels]
    for g in log:
        who = [pos[lab] for lab in g["seats"]]
        winners, ranks = g["winners"], g["ranks"]
        nwin = sum(winners)
        for s, i in enumerate(who):
            st = stats[i]
            st.games += 1
            st.seat_games[s] += 1
            st.points_sum += g["points"][s]
            st.moves += g.get("moves", [0] * n)[s]
            st.think_ms += g.get("think_ms", [0.0] * n)[s]
            pts[i].append(g["points"][s])
            if winners[s]:
                share = 1.0 if nwin == 1 else 1.0 / nwin
                st.wins += share
                st.seat_wins[s] += share
                if nwin == 1:
                    st.sole_wins += 1
                else:
                    st.ties += 1
        for s, t in itertools.combinations(range(n), 2):
            a, b = who[s], who[t]
            if a == b:
                continue
            met[a][b] += 1
            met[b][a] += 1
            if ranks[s] < ranks[t]:
                score[a][b] += 1.0
            elif ranks[s] > ranks[t]:
                score[b][a] += 1.0
            else:
                score[a][b] += 0.5
                score[b][a] += 0.5
        new = model.rate([[skill[i]] for i in who], ranks=list(ranks))
        for i, team in zip(who, new):
            skill[i] = team[0]
    for st, p in zip(stats, pts):
        st.points_sd = float(np.std(p, ddof=1)) if len(p) > 1 else 0.0
    ratings = [Rating(lab, float(r.mu), float(r.sigma)) for lab, r in zip(labels, skill)]
    return stats, HeadToHead(list(labels), score, met), ratings


def _chunks(nlineups: int, games: int, n: int, workers: int) -> list[tuple[int, int, int]]:
    """(lineup, start, stop) pieces of whole deals, about four per worker."""
    deals = -(-games // n)
    per = max(1, -(-(deals * nlineups) // (4 * workers)))
    out = []
    for lu in range(nlineups):
        for d0 in range(0, deals, per):
            out.append((lu, d0 * n, min(games, (d0 + per) * n)))
    return out


def run_arena(env_id: str, agents: Sequence[str | Agent], games: int, num_players: int = 2,
              seed: int = 0, progress: bool = True, workers: int = 1,
              **game_options: Any) -> ArenaResult:
    """Play ``games`` games *per lineup* of ``env_id`` between the pool ``agents`` (specs or
    instances) over duplicate deals with seat rotation (module docstring) and return the
    results. ``game_options`` go to the env and to the agents (e.g. ``start_player``,
    ``reward_mode``). ``workers > 1`` plays in that many spawned processes (specs only;
    ``workers <= 0``: one per CPU core); results do not depend on ``workers``."""
    import os

    from card_envs.core.progress import tqdm_class

    tqdm = tqdm_class()
    env_id = resolve_env_id(env_id)
    if games < 1:
        raise ValueError(f"games must be >= 1, got {games}")
    n = num_players
    env = make_raw(env_id, num_players=n, **game_options)
    options = dict(env.game.options)
    objs, names, labels = _participants(env_id, agents, n, game_options)
    lineups = _lineups(len(objs), n)
    specs: list[str | None] = [a if isinstance(a, str) else None for a in agents]
    if workers <= 0:
        workers = os.cpu_count() or 1
    if workers > 1 and any(s is None for s in specs):
        raise ValueError("agent instances cannot be sent to worker processes; pass agent specs "
                         "(strings such as 'heuristic' or 'mcts:ms=50') or use workers=1")
    chunks = _chunks(len(lineups), games, n, workers)
    workers = min(workers, len(chunks))
    deal_seeds = [deal_seed(seed, b) for b in range(-(-games // n))]
    total = games * len(lineups)
    t0 = time.perf_counter()
    bar = tqdm(total=total, disable=not progress, unit="game", desc=env_id, leave=False,
               file=sys.stderr)
    try:
        if workers <= 1:
            log = []
            for lu, members in enumerate(lineups):
                log += _play(env, objs, labels, n, seed, lu, members, 0, games, games,
                             deal_seeds, on_game=lambda: bar.update(1))
        else:
            log = _run_parallel(env_id, specs, n, game_options, seed, lineups, games,
                                deal_seeds, chunks, workers, bar)
    finally:
        bar.close()
    stats, matrix, ratings = _aggregate(labels, names, n, log)
    elapsed = time.perf_counter() - t0
    return ArenaResult(env_id, n, games, seed, options, stats, deal_seeds, log, elapsed,
                       _versions(env), agent_specs=specs, game_options=dict(game_options),
                       lineups=[[labels[j] for j in m] for m in lineups], matrix=matrix,
                       ratings=ratings, workers=workers)


def _run_parallel(env_id: str, specs: list[str | None], n: int, game_options: dict[str, Any],
                  seed: int, lineups: list[tuple[int, ...]], games: int, deal_seeds: list[int],
                  chunks: list[tuple[int, int, int]], workers: int, bar: Any
                  ) -> list[dict[str, Any]]:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    parts: dict[int, list[dict[str, Any]]] = {}
    ctx = multiprocessing.get_context("spawn")  # numba and fork do not mix
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
        futures = {}
        for c, (lu, start, stop) in enumerate(chunks):
            task = {"env_id": env_id, "specs": list(specs), "n": n,
                    "game_options": game_options, "seed": seed, "lineup": lu,
                    "members": list(lineups[lu]), "start": start, "stop": stop,
                    "games": games, "deal_seeds": deal_seeds}
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


def rerun(result: ArenaResult, workers: int = 1, progress: bool = False) -> ArenaResult:
    """Play the run recorded in ``result`` (or in its JSON, via
    :meth:`ArenaResult.from_json`) again; same log unless the code, the versions or a
    time-budgeted agent changed."""
    return run_arena(**result.run_args, workers=workers, progress=progress)
