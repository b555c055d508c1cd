"""Evaluation arena: play agents against each other with seat rotation and report win rates.

>>> from card_envs.arena import run_arena
>>> res = run_arena("slide_v0", ["random", "heuristic"], games=200, seed=0)  # doctest: +SKIP
>>> print(res.table())                                                     # doctest: +SKIP

**Lineups and seats.** ``agents`` lists the participants (agent names for
:func:`agents.make_agent` or :class:`agents.Agent` instances). With fewer participants than
seats the list is repeated to fill the seats (``random,heuristic`` at 3 players is
``random#0, heuristic, random#1``); more participants than seats is an error. Game ``g`` deals
board ``g // n`` and seats participant ``j`` at seat ``(j + g) % n``: each deal is replayed with
every rotation, so over a multiple of ``n`` games every participant sits in every seat equally
often, on the same deals (duplicate format).

**Scoring.** A sole winner gets 1 win, a shared winner (any tie for the best result, including
a complete tie) among ``k`` winners gets ``1/k`` and is also counted in ``ties``, so every game
hands out exactly one win. Win rates come with a 95% Wilson score
interval; points are ``env.infos[agent]["points"]`` at the end (lower is better in Slide).

**Reproducibility.** Deal ``b`` uses ``reset(seed=deal_seed(seed, b))`` and every agent is
re-seeded per game from ``(seed, game, participant)``, so the same arguments give the same games.
"""

from __future__ import annotations

import math
import platform
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from card_envs.registry import ENV_IDS, make_raw

if TYPE_CHECKING:
    from agents.base import Agent

Z95 = 1.959963984540054  # two-sided 95% normal quantile


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


def _agent_seed(seed: int, game: int, participant: int) -> int:
    return int(np.random.SeedSequence([seed, game, participant, 1]).generate_state(1)[0])


@dataclass
class AgentStats:
    """One participant's results."""

    label: str
    agent: str
    games: int = 0
    wins: float = 0.0  # sole win 1, a win shared by k seats 1/k
    sole_wins: int = 0
    ties: int = 0  # shared wins
    points_sum: float = 0.0
    seat_games: list[int] = field(default_factory=list)

    @property
    def win_rate(self) -> float:
        return self.wins / self.games if self.games else 0.0

    @property
    def ci95(self) -> tuple[float, float]:
        return wilson_interval(self.wins, self.games)

    @property
    def mean_points(self) -> float:
        return self.points_sum / self.games if self.games else float("nan")

    def to_json(self) -> dict[str, Any]:
        lo, hi = self.ci95
        return {"label": self.label, "agent": self.agent, "games": self.games,
                "wins": self.wins, "sole_wins": self.sole_wins, "ties": self.ties,
                "win_rate": self.win_rate, "ci95": [lo, hi], "mean_points": self.mean_points,
                "seat_games": list(self.seat_games)}


@dataclass
class ArenaResult:
    """What :func:`run_arena` returns: per-participant stats, settings and per-game log."""

    env_id: str
    num_players: int
    games: int
    seed: int
    options: dict[str, Any]
    stats: list[AgentStats]
    deal_seeds: list[int]
    log: list[dict[str, Any]]  # per game: deal, rotation, seat labels, points, winners
    elapsed: float
    versions: dict[str, str]

    def __getitem__(self, label: str) -> AgentStats:
        for s in self.stats:
            if s.label == label:
                return s
        raise KeyError(f"no participant {label!r}; participants: "
                       f"{[s.label for s in self.stats]}")

    @property
    def labels(self) -> list[str]:
        return [s.label for s in self.stats]

    def table(self) -> str:
        """A plain-text results table."""
        head = f"{'agent':<14}{'games':>7}{'wins':>9}{'ties':>6}{'win rate':>10}" \
               f"{'95% CI':>18}{'mean pts':>10}"
        rows = [head, "-" * len(head)]
        for s in self.stats:
            lo, hi = s.ci95
            rows.append(f"{s.label:<14}{s.games:>7}{s.wins:>9.1f}{s.ties:>6}"
                        f"{s.win_rate:>10.3f}{f'[{lo:.3f}, {hi:.3f}]':>18}"
                        f"{s.mean_points:>10.2f}")
        rate = self.games / self.elapsed if self.elapsed > 0 else float("inf")
        rows.append(f"{self.games} games, {self.num_players} players, {self.env_id}, seed "
                    f"{self.seed}, {self.elapsed:.1f} s ({rate:.0f} games/s)")
        return "\n".join(rows)

    def to_json(self) -> dict[str, Any]:
        """A JSON-serializable dict (``json.dumps`` works as is)."""
        return {"env_id": self.env_id, "num_players": self.num_players, "games": self.games,
                "seed": self.seed, "options": dict(self.options),
                "agents": [s.to_json() for s in self.stats],
                "deal_seeds": list(self.deal_seeds), "log": list(self.log),
                "elapsed": self.elapsed, "versions": dict(self.versions)}


def _versions(env: Any) -> dict[str, str]:
    import card_envs

    out = {"card_envs": card_envs.__version__, "game": f"{env.game.name} v{env.game.version}",
           "python": platform.python_version(), "numpy": np.__version__}
    for mod in ("numba", "pettingzoo"):
        m = sys.modules.get(mod)
        if m is not None:
            out[mod] = getattr(m, "__version__", "?")
    return out


def _participants(env_id: str, agents: Sequence[str | Agent], n: int,
                  options: dict[str, Any]) -> tuple[list[Agent], list[str], list[str]]:
    from agents.base import Agent
    from agents.registry import make_agent

    if not agents:
        raise ValueError("give at least one agent")
    if len(agents) > n:
        raise ValueError(f"{len(agents)} agents for {n} seats; give at most num_players agents")
    entries = [agents[j % len(agents)] for j in range(n)]
    objs: list[Agent] = []
    for e in entries:
        if isinstance(e, str):
            objs.append(make_agent(e, env_id, num_players=n, **options))
        elif isinstance(e, Agent):
            if entries.count(e) > 1:  # the same instance in two seats would share its state
                raise ValueError(f"agent instance {e!r} fills several seats; pass distinct "
                                 "instances or names")
            objs.append(e)
        else:
            raise TypeError(f"agents are names or Agent instances, got {e!r}")
    names = [getattr(o, "name", type(o).__name__) if not isinstance(e, str) else
             e.strip().lower() for e, o in zip(entries, objs)]
    labels = []
    for j, nm in enumerate(names):
        same = [k for k, other in enumerate(names) if other == nm]
        labels.append(nm if len(same) == 1 else f"{nm}#{same.index(j)}")
    return objs, names, labels


def run_arena(env_id: str, agents: Sequence[str | Agent], games: int, num_players: int = 2,
              seed: int = 0, progress: bool = True, **game_options: Any) -> ArenaResult:
    """Play ``games`` games of ``env_id`` between ``agents`` with seat rotation (module
    docstring) and return per-participant results. ``game_options`` go to the env and to the
    agents (e.g. ``start_player``, ``reward_mode``)."""
    from tqdm.auto import tqdm

    env_id = resolve_env_id(env_id)
    if games < 1:
        raise ValueError(f"games must be >= 1, got {games}")
    n = num_players
    env = make_raw(env_id, num_players=n, **game_options)
    options = dict(env.game.options)
    objs, names, labels = _participants(env_id, agents, n, game_options)
    stats = [AgentStats(lab, nm, seat_games=[0] * n) for lab, nm in zip(labels, names)]
    possible = env.possible_agents
    deal_seeds: list[int] = []
    log: list[dict[str, Any]] = []
    t0 = time.perf_counter()
    bar = tqdm(total=games, disable=not progress, unit="game", desc=env_id, leave=False,
               file=sys.stderr)
    for g in range(games):
        deal, rot = divmod(g, n)
        if rot == 0:
            deal_seeds.append(deal_seed(seed, deal))
        env.reset(seed=deal_seeds[deal])
        # participant j sits at seat (j + rot) % n, so seat s holds participant (s - rot) % n
        by_seat = [(s - rot) % n for s in range(n)]
        seat_agents = [objs[j] for j in by_seat]
        for j, a in enumerate(objs):
            a.reset(seed=_agent_seed(seed, g, j))
        index = {ag: s for s, ag in enumerate(possible)}
        last, step = env.last, env.step
        while True:
            obs, _, term, trunc, _ = last()
            if term or trunc:
                break
            step(seat_agents[index[env.agent_selection]].act(obs["observation"],
                                                            obs["action_mask"]))
        points = [float(env.infos[ag]["points"]) for ag in possible]
        winners = [bool(env.infos[ag]["winner"]) for ag in possible]
        nwin = sum(winners)
        for s in range(n):
            st = stats[by_seat[s]]
            st.games += 1
            st.seat_games[s] += 1
            st.points_sum += points[s]
            if winners[s]:
                if nwin == 1:
                    st.wins += 1.0
                    st.sole_wins += 1
                else:
                    st.wins += 1.0 / nwin
                    st.ties += 1
        log.append({"game": g, "deal": deal, "seats": [labels[j] for j in by_seat],
                    "points": points, "winners": winners})
        bar.update(1)
    bar.close()
    elapsed = time.perf_counter() - t0
    return ArenaResult(env_id, n, games, seed, options, stats, deal_seeds, log, elapsed,
                       _versions(env))
