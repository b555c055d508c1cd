"""A fixed benchmark protocol for one candidate agent over every game and seat count.

>>> from card_envs import benchmark
>>> res = benchmark.run("heuristic", mode="quick", workers=2)   # doctest: +SKIP
>>> print(res.table())                                          # doctest: +SKIP

or ``card-envs benchmark --agent SPEC [--quick] [--workers K] [--json PATH]``, and
``card-envs benchmark --check report.json`` to replay a report.

**Tables.** For every game and every seat count ``n`` in 2-4 it allows, the candidate sits at
a table with ``n - 1`` copies of each ladder opponent in turn (:data:`~.protocol.LADDER`:
``random``, the game's ``heuristic``, ``mcts:iterations=200`` (a budget in iterations, so the
result does not depend on the machine) and ``ppo``, the shipped baseline for that seat count).
Each table plays a fixed number of deals (:data:`~.protocol.DEALS`; ``quick`` plays the first
few of the ``full`` protocol's) in every seat rotation: ``deals * n`` games, the candidate in
every seat equally often, every opponent on the same deals. Deals and agent seeds derive from
the protocol's seed exactly as in the arena (:func:`card_envs.arena.deal_seed`,
:func:`~card_envs.arena.agent_seed`).

**Numbers.** Per table: the candidate's win share (a win shared by ``k`` seats counts ``1/k``)
with its 95% Wilson interval, the share per seat (with its interval), mean points with a 95%
normal interval, and the pairwise score (per game and opponent: 1 if the candidate finished
ahead, 1/2 level, 0 behind). Per game: a **normalised score** ``(share - random) / (heuristic -
random)`` of the share against ``n - 1`` heuristics, with the shares random and the heuristic
themselves take at that table written down in :data:`~.protocol.REFERENCE` (0 plays like random,
1 like the heuristic). One **rating** over every game and seat count: a Bradley-Terry model of
the pairwise results on the Elo scale, random at 0 (:mod:`~.rating`); the ladder's ratings are
the joint fit of the reports shipped with the package (:mod:`~.leaderboard`), held fixed while
the candidate's rating and its 95% interval are fitted.

**Candidates.** A built-in spec (``"mcts:iterations=800"``, ``"ppo:path=run/final.safetensors"``),
``"module:Name"`` / ``"file.py:Name"`` naming an :class:`~card_envs.agents.Agent` subclass or a
factory ``f(env_id, seed=..., num_players=...)``, or from Python such a class or factory itself
(worker processes need something importable; one defined in a notebook runs with
``workers=1``). A candidate that raises, returns a non-integer or illegal action, or takes more
than ``move_limit`` seconds (10) for one move **forfeits that game** (it ranks last, the reason
is in the report) and the protocol goes on.

**Reports.** JSON with the protocol version, mode, the candidate's spec and the sha256 of its
files (module source, network weights per table), the versions of card-envs and every game, each
table's seed, deals and numbers and a digest of every game's result. It holds no timings, so the
same candidate gives the same bytes in any process and with any number of workers.
``check(path)`` replays a report (read as untrusted: every field checked) and names each row
that differs. Finished tables are saved as they complete, so an interrupted run resumes.
"""

from __future__ import annotations

from card_envs.benchmark.leaderboard import ladder_ratings, markdown, plot, ratings, shipped
from card_envs.benchmark.protocol import DEALS, LADDER, PROTOCOL_VERSION, SEATS, Table, tables
from card_envs.benchmark.report import read_report
from card_envs.benchmark.run import BenchmarkResult, check, run

__all__ = ["DEALS", "LADDER", "PROTOCOL_VERSION", "SEATS", "BenchmarkResult", "Table", "check",
           "ladder_ratings", "markdown", "plot", "ratings", "read_report", "run", "shipped",
           "tables"]
