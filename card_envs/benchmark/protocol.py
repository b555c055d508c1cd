"""The benchmark protocol, written down: games, seat counts, the ladder of opponents, deals per
table, seeds and the reference shares that normalise a score. A change to anything here that
changes a result bumps :data:`PROTOCOL_VERSION`."""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np

from card_envs.core.errors import OptionError
from card_envs.core.registry import ENV_IDS, env_class, resolve_env_id

#: bumped whenever a table of the protocol would give another result for the same candidate
PROTOCOL_VERSION = 1
#: the protocol's seed: every table's deals and agent seeds derive from it
SEED = 43
#: seat counts of the protocol (each game at every count it allows among these)
SEATS = (2, 3, 4)
#: the ladder: the candidate sits at a table with ``n - 1`` copies of one of these; the search
#: budget is in iterations (not milliseconds), so results do not depend on the machine
LADDER = ("random", "heuristic", "mcts:iterations=200", "ppo")
#: deals per table (each deal played in all ``n`` seat rotations: ``deals * n`` games)
DEALS = {
    "full": {"random": 50, "heuristic": 100, "mcts:iterations=200": 20, "ppo": 50},
    "quick": {"random": 4, "heuristic": 8, "mcts:iterations=200": 2, "ppo": 4},
}
MODES = tuple(DEALS)
#: wall-clock seconds a candidate may take for one move before it forfeits the game
MOVE_LIMIT_S = 10.0

#: Normalised score: ``(share - random) / (heuristic - random)`` of the candidate's win share
#: against ``n - 1`` heuristics, with the shares random and the heuristic themselves take at that
#: table in the full protocol (``card-envs benchmark --agent random`` / ``--agent heuristic``,
#: the shipped reports). ``0`` plays like random, ``1`` like the heuristic.
REFERENCE: dict[str, dict[int, tuple[float, float]]] = {
    "slide_v0": {2: (0.005, 0.4875), 3: (0.0, 0.375), 4: (0.0, 0.26875)},
    "isflak_v0": {2: (0.005, 0.535), 3: (0.006667, 0.320556), 4: (0.00625, 0.27875)},
    "op_glad_ijs_v0": {2: (0.0, 0.535), 3: (0.0, 0.306667), 4: (0.0, 0.23375)},
    "flipology_v0": {2: (0.07, 0.475), 3: (0.04, 0.338333), 4: (0.015, 0.2375)},
    "if_it_fits_v0": {2: (0.0125, 0.5), 3: (0.004444, 0.282778), 4: (0.00125, 0.246667)},
}


@dataclass(frozen=True)
class Table:
    """One table of the protocol: the candidate and ``players - 1`` copies of ``opponent``
    over ``deals`` deals of ``env_id`` (seeded ``seed``), every seat rotation of each."""

    env_id: str
    players: int
    opponent: str
    deals: int
    seed: int

    @property
    def games(self) -> int:
        return self.deals * self.players

    @property
    def key(self) -> str:
        """File-name-safe name: ``slide_v0-3p-mcts_iterations_200``."""
        opp = "".join(c if c.isalnum() else "_" for c in self.opponent)
        return f"{self.env_id}-{self.players}p-{opp}"


def table_seed(env_id: str, players: int) -> int:
    """The seed of every table of ``env_id`` at ``players`` seats: all ladder opponents play
    the same deals (their first ones: quick's deals are full's first)."""
    return int(np.random.SeedSequence([SEED, zlib.crc32(env_id.encode()), players])
               .generate_state(1)[0])


def seat_counts(env_id: str) -> list[int]:
    """The protocol's seat counts that ``env_id`` allows."""
    cls = env_class(env_id).game_class
    return [n for n in SEATS if cls.min_players <= n <= cls.max_players]


def tables(mode: str = "full", games: list[str] | None = None,
           seats: list[int] | None = None) -> list[Table]:
    """The protocol's tables in order (game, seats, ladder), optionally only some games or
    seat counts (a partial run: its report says so). :class:`OptionError` for an unknown mode,
    game or a seat count outside the protocol."""
    if mode not in DEALS:
        raise OptionError(f"mode is one of {list(MODES)}, got {mode!r}")
    env_ids = list(ENV_IDS)
    if games is not None:
        try:
            chosen = {resolve_env_id(g) for g in games}
        except ValueError as e:
            raise OptionError(str(e)) from None
        env_ids = [e for e in env_ids if e in chosen]
        if not env_ids:
            raise OptionError(f"no game of the protocol among {games}")
    if seats is not None:
        bad = [n for n in seats if n not in SEATS]
        if bad:
            raise OptionError(f"the protocol seats {list(SEATS)} players, got {bad}")
    out = []
    for env_id in env_ids:
        for n in seat_counts(env_id):
            if seats is not None and n not in seats:
                continue
            for opp in LADDER:
                out.append(Table(env_id, n, opp, DEALS[mode][opp], table_seed(env_id, n)))
    if not out:
        raise OptionError(f"no table of the protocol has {seats} seats in {env_ids}")
    return out
