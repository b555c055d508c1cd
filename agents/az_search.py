"""Batched network-guided search: one search over many games at once, for self-play, batched
evaluation and (with one game) the ``az`` agent.

>>> from card_envs.agents.az_search import BatchSearch, NetEvaluator
>>> search = BatchSearch("slide_v0", num_games=512)                       # doctest: +SKIP
>>> res = search.run(states, NetEvaluator(policy), simulations=32, seeds=seeds)  # doctest: +SKIP
>>> res.action, res.pi, res.visits, res.value                             # doctest: +SKIP

``states`` are ``B`` engine states (one row each, the seat to act in each is its searcher).
Per game the search draws ``determinizations`` full states consistent with what the searcher
knows (the game's ``resample``, refined by its search agent where it has a ``determinizer``:
Op Glad IJs also draws the other seats' hidden window choices), then runs ``simulations``
descents in *waves*: in each wave every game makes up to ``leaves`` descents in compiled code
(numba ``prange`` over the games), all the leaves of all the games go through **one** forward
pass of the network, and compiled code expands them and backs their values up (the kernels and
the selection rules: :mod:`card_envs.agents.az_kernels`).

**Root.** ``mode="gumbel"`` (default): Gumbel top-k with sequential halving (Danihelka et al.,
ICLR 2022): with ``noise`` each legal root action gets a Gumbel draw ``g(a)`` (self-play),
without it ``g = 0`` (evaluation, deterministic); ``considered`` (16) actions are tried first,
halved by ``g + logits + sigma(completed Q)`` until the budget is spent; the move is the most
visited of them with the highest such score and the **policy target** is ``softmax(logits +
sigma(completed Q))`` (``res.pi``), an improvement of the network's policy even with a few
simulations. ``mode="puct"``: AlphaZero's PUCT with visit counts.

**Values.** The evaluator gives every seat's expected share of the win at a leaf (a vector:
``n`` outputs for an ``n``-seat network, :class:`NetEvaluator`); a finished game gives its win
shares. Backups are max-n: each seat maximises its own share, for any number of seats.

**Determinism.** Game ``i``'s determinizations, Gumbel draws and chance come from
``seeds[i]`` alone; games never read each other's rows; so the same states, seeds and network
give the same results (thread counts included).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from card_envs.agents.az_kernels import compiled_waves, expand_kernels, output_kernels
from card_envs.agents.az_tree import (
    ACT,
    CHILD,
    NODE_FIELDS,
    PUCT,
    SIB,
    VISITS,
    considered_table,
    copy_state,
)
from card_envs.core import kernels as K
from card_envs.core.engine import Engine
from card_envs.core.errors import OptionError
from card_envs.core.game import Game
from card_envs.core.manifest import load
from card_envs.core.registry import manifest

__all__ = ["BatchSearch", "NetEvaluator", "SearchResult", "game_searcher"]

#: below this many games a wave runs on one thread
SERIAL_BELOW = 32


def game_searcher(env_id: str) -> Any:
    """The game's own search agent class (its rollout policy, ``model_others``,
    ``determinizer``), else :class:`~card_envs.agents.search.SearchAgent`."""
    from card_envs.agents.search import SearchAgent

    path = manifest(env_id).search
    return load(path) if path else SearchAgent


@dataclass
class SearchResult:
    """What :meth:`BatchSearch.run` returns (arrays of the search, overwritten by its next
    run: copy what you keep). Rows of inactive games are not written."""

    action: np.ndarray  #: (B,) int64: the move to play
    pi: np.ndarray  #: (B, A) float64: the improved policy over the legal actions (target)
    visits: np.ndarray  #: (B, A) int32: root visits per action
    q: np.ndarray  #: (B, A) float64: mean value per visited root action (NaN: unvisited)
    value: np.ndarray  #: (B,) float64: the searcher's root value (a share in [0, 1])
    simulations: np.ndarray  #: (B,) int64: simulations run per game
    leaves: int  #: leaves evaluated by the network (all games)
    forwards: int  #: network forward passes


class NetEvaluator:
    """A :class:`~card_envs.agents.net.NetPolicy` as the search's evaluator: ``(obs, masks) ->
    (logits, acts, offsets, shares)``, ``shares[r, j]`` the expected win share of the seat
    ``j`` places after the seat to act at leaf ``r`` (``j = 0``: itself).

    A network with ``value_dim == n`` gives them directly (softmax of its value logits). A
    scalar value head (the PPO baselines: the return of the ``win`` reward mode, +1 win / -1
    loss, trained with potential-based shaping where ``shaping`` > 0, which is added back with
    the game's potential) maps to ``share = clip(0.5 + value_scale * v, 0, 1)`` for the seat
    to act, the rest shared evenly by the others."""

    def __init__(self, policy: Any, value_scale: float = 0.5, shaping: float = 0.0,
                 potential: Callable[..., np.ndarray] | None = None) -> None:
        self.policy = policy
        self.num_players = int(policy.num_players)
        self.value_dim = int(getattr(policy.net, "value_dim", 1))
        if self.value_dim not in (1, self.num_players):
            raise ValueError(f"a value head of {self.value_dim} outputs for "
                             f"{self.num_players} seats")
        self.value_scale = float(value_scale)
        self.shaping = float(shaping) if potential is not None else 0.0
        self.potential = potential

    def __call__(self, obs: np.ndarray, masks: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        import torch

        pol = self.policy
        x, rows, acts, offsets = pol.pinput.compute(obs, masks, threads=1)
        seg = np.repeat(np.arange(obs.shape[0], dtype=np.int64), np.diff(offsets))
        with torch.inference_mode():  # (numpy's repeat: torch.repeat_interleave can take ms)
            logits, values = pol.net(torch.from_numpy(x), torch.from_numpy(rows),
                                     torch.from_numpy(acts), torch.from_numpy(seg))
        n = self.num_players
        if self.value_dim == n:
            v = values.double()
            shares = torch.softmax(v, 1).numpy()
        else:
            v = values.numpy().astype(np.float64)
            if self.shaping:
                v = v + self.shaping * np.asarray(self.potential(obs, n), np.float64)
            own = np.clip(0.5 + self.value_scale * v, 0.0, 1.0)
            shares = np.empty((len(own), n), np.float64)
            shares[:, 0] = own
            shares[:, 1:] = ((1.0 - own) / (n - 1))[:, None]
        return logits.numpy().astype(np.float64), acts, offsets, np.ascontiguousarray(shares)


class _TorchThreads:
    """Run a block on ``n`` torch threads, restoring the count after it."""

    def __init__(self, n: int | None) -> None:
        self.n = n
        self.old: int | None = None

    def __enter__(self) -> None:
        if self.n is None:
            return
        import torch

        self.old = torch.get_num_threads()
        if self.old != self.n:
            torch.set_num_threads(self.n)

    def __exit__(self, *exc: Any) -> None:
        if self.old is not None and self.old != self.n:
            import torch

            torch.set_num_threads(self.old)


class BatchSearch:
    """Search ``num_games`` positions of one game configuration at once (module docstring).

    ``leaves``: descents per game per wave (1 for many games; a few dozen for one game, whose
    descents then spread by their pending visits); ``max_nodes``: tree capacity per game (a
    full tree stops growing, its leaves are valued without expanding); ``model_others``,
    ``policy`` and ``determinizer`` default to the game's search agent (Op Glad IJs models the
    other seats by its heuristic). ``threads``: numba threads for the waves and torch threads
    for the forward passes (default: numba's count; one below ``SERIAL_BELOW`` games)."""

    def __init__(self, env_id: str | Game, num_games: int = 1, leaves: int = 1,
                 max_nodes: int = 4096, determinizations: int = 8, considered: int = 16,
                 model_others: bool | None = None, policy: Any = None,
                 determinizer: Callable[..., np.ndarray] | None = None,
                 threads: int | None = None, **options: Any) -> None:
        self.engine = eng = Engine(env_id, **options) if not isinstance(env_id, Game) \
            else Engine(env_id)
        g = self.game = eng.game
        searcher = game_searcher(g.env_id)
        for name, v, lo, hi in (("num_games", num_games, 1, 1 << 16),
                                ("leaves", leaves, 1, 4096),
                                ("max_nodes", max_nodes, 2, 1 << 24),
                                ("determinizations", determinizations, 1, 4096),
                                ("considered", considered, 1, 4096)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not lo <= v <= hi:
                raise OptionError(f"batched search: {name} must be an integer in "
                                  f"[{lo}, {hi}], got {v!r}")
        B, L, M = int(num_games), int(leaves), int(max_nodes)
        self.num_games, self.leaves, self.max_nodes = B, L, M
        self.considered = int(considered)
        self.determinizations = 1 if g.perfect_information else int(determinizations)
        self.model_others = bool(searcher.model_others if model_others is None else model_others)
        self.policy = policy or searcher.rollout_policy
        self.determinizer = determinizer or getattr(searcher, "determinizer", None)
        import numba

        cap = numba.get_num_threads()
        self.threads = 1 if B < SERIAL_BELOW else max(1, min(cap, threads or cap))
        # the determinization: the search agent's kernel, the game's, a copy (perfect
        # information), or else the Python ``determinizer`` / ``resample`` per game
        det = getattr(searcher, "determinizer_kernel", None) if determinizer is None else None
        if det is None and determinizer is None:
            det = copy_state if g.perfect_information else g.k_determinize
        self._compiled_roots = det is not None
        par, serial, r_par, r_serial = compiled_waves(g, self.policy, det or copy_state)
        self._wave = serial if self.threads == 1 else par
        self._roots = r_serial if self.threads == 1 else r_par
        e_par, e_serial = expand_kernels()
        o_par, o_serial = output_kernels()
        self._expand = e_serial if self.threads == 1 else e_par
        self._outputs = o_serial if self.threads == 1 else o_par
        n, A, S, L_obs = g.num_players, g.num_actions, g.state_size, g.obs_size
        D = self.determinizations
        self.tree = np.zeros((B, M, NODE_FIELDS), np.int32)
        self.w = np.zeros((B, M), np.float64)
        self.logp = np.zeros((B, M), np.float64)
        self.vnet = np.zeros((B, M), np.float64)
        self.gum = np.zeros((B, A), np.float64)
        self.meta = np.zeros(B, np.int64)
        self.sims = np.zeros(B, np.int64)
        self.rng = np.zeros(B, np.uint64)
        self.dets = np.zeros((B, D, S), np.int32)
        self.root_seat = np.zeros(B, np.int64)
        self.rmask = np.zeros((B, A), np.int8)
        self._work = np.zeros((B, S), np.int32)
        self._mask = np.zeros((B, A), np.int8)
        self._tmp = np.zeros((B, A), np.int8)
        self._qs = np.zeros((B, A), np.float64)
        self._val = np.zeros((B, n), np.float64)
        self._pts = np.zeros((B, n), np.float64)
        self._win = np.zeros((B, n), np.int64)
        self._rew = np.zeros((B, n), np.float32)
        self._pobs = np.zeros((B, L_obs), g.obs_dtype)
        self._clash = np.zeros((B, 4 * L + 4), np.int64)
        self.leaf_obs = np.zeros((B * L, L_obs), g.obs_dtype)
        self.leaf_mask = np.zeros((B * L, A), np.int8)
        self.leaf_node = np.zeros(B * L, np.int64)
        self.leaf_seat = np.zeros(B * L, np.int64)
        self.leaf_roll = np.zeros((B * L, n), np.float64)
        self.leaf_count = np.zeros(B, np.int64)
        self._active = np.zeros(B, np.bool_)
        self.result = SearchResult(np.zeros(B, np.int64), np.zeros((B, A)),
                                   np.zeros((B, A), np.int32), np.zeros((B, A)),
                                   np.zeros(B), np.zeros(B, np.int64), 0, 0)
        self._tables: dict[int, np.ndarray] = {}

    # ------------------------------------------------------------------ helpers
    def _table(self, sims: int) -> np.ndarray:
        t = self._tables.get(sims)
        if t is None:
            if len(self._tables) > 8:
                self._tables.clear()
            t = self._tables[sims] = considered_table(self.considered, sims)
        return t

    def _determinize(self, i: int, state: np.ndarray, seat: int,
                     gen: np.random.Generator) -> None:
        D = self.determinizations
        if self.game.perfect_information:
            self.dets[i, 0] = state
            return
        for d in range(D):
            if self.determinizer is not None:
                self.dets[i, d] = self.determinizer(self.engine, state, seat, gen)
            else:
                self.dets[i, d] = self.engine.resample(state, seat, gen)

    def _evaluate(self, evaluator: Callable[..., Any], games: np.ndarray, counts: np.ndarray,
                  prior_temp: float, do_backup: bool, mix: float = 0.0) -> int:
        """One forward pass over the leaves of ``games`` (``counts`` each, rows ``i * L...``),
        then their expansion and backup. Returns the number of leaves."""
        L = self.leaves
        total = int(counts.sum())
        if total == 0:
            return 0
        starts = np.zeros(len(games), np.int64)
        np.cumsum(counts[:-1], out=starts[1:])
        if L == 1:
            idx = games
        else:
            idx = np.repeat(games * L - starts, counts) + np.arange(total)
        logits, acts, offsets, shares = evaluator(self.leaf_obs[idx], self.leaf_mask[idx])
        self._expand(self.threads, games, starts, counts, self.leaf_node[idx],
                     self.leaf_seat[idx], logits, acts, offsets, shares, self.leaf_roll[idx],
                     mix, prior_temp, do_backup, self.tree, self.w, self.logp, self.vnet,
                     self.meta, self._val)
        return total

    # ------------------------------------------------------------------ the search
    def run(self, states: np.ndarray, evaluator: Callable[..., Any], simulations: int,
            seeds: np.ndarray, active: np.ndarray | None = None, mode: str = "gumbel",
            noise: bool = False, c_visit: float = 50.0, c_scale: float = 0.1,
            rescale: bool = True, mix: float = 0.0, horizon: int = -1,
            c_puct: float = 0.5, virtual_loss: float = 0.5, prior_temp: float = 1.0,
            deadline: float | None = None, stop: int = 0) -> SearchResult:
        """Search every active game's position (``states[i]``, a full state: the searcher is
        the seat to act; it is read only through the determinizations) with ``simulations``
        simulations each (module docstring). ``seeds[i]`` (uint64) drives game ``i``'s
        determinizations, Gumbel draws and chance. ``deadline`` (a ``time.perf_counter``
        time) ends the search early after the wave that passes it; the sequential halving
        schedule still follows ``simulations``. ``stop`` > 0: a game with that many
        simulations or more stops at a deadline (unused otherwise)."""
        B, L = self.num_games, self.leaves
        if states.shape != (B, self.game.state_size):
            raise ValueError(f"states of shape {(B, self.game.state_size)} expected, got "
                             f"{states.shape}")
        if mode not in ("gumbel", "puct"):
            raise OptionError(f"mode must be 'gumbel' or 'puct', got {mode!r}")
        act = np.ones(B, np.bool_) if active is None else np.asarray(active, np.bool_)
        act = act & (states[:, K.CUR] >= 0)
        self._active[:] = act
        games = np.flatnonzero(act)
        res = self.result
        res.leaves = res.forwards = 0
        if games.size == 0:
            return res
        sims = int(simulations)
        table = self._table(sims)
        g = self.game
        # roots: fresh trees, the real observation and mask of each searcher, Gumbel draws,
        # the determinizations (compiled, or the Python determinizer per game)
        seeds = np.ascontiguousarray(seeds, np.uint64)
        if seeds.shape != (B,):
            raise ValueError(f"seeds: one uint64 per game ({B}), got shape {seeds.shape}")
        self._roots(self.threads, self._active, states, g.cfg, seeds,
                    noise and mode == "gumbel", self.tree, self.w, self.vnet, self.meta,
                    self.sims, self.rng, self.gum, self.dets, self.root_seat, self.rmask,
                    self.leaf_obs, self.leaf_mask, self.leaf_node, self.leaf_seat, L)
        if not self._compiled_roots:
            for i in games:
                gen = np.random.default_rng(int(seeds[i]))
                self._determinize(i, states[i], int(states[i][K.CUR]), gen)
        ones = np.ones(len(games), np.int64)
        with _TorchThreads(1 if len(games) * L < 128 else self.threads):
            res.leaves += self._evaluate(evaluator, games, ones, prior_temp, False)
            res.forwards += 1
            m = 0 if mode == "gumbel" else PUCT
            model_others = self.model_others
            while True:
                self._wave(self.threads, self._active, self.dets, g.cfg, sims, L,
                           self.root_seat, self.rmask, table, m, c_puct, virtual_loss,
                           c_visit, c_scale, rescale, model_others, mix, horizon, self.tree,
                           self.w, self.logp, self.vnet, self.gum, self.meta, self.sims,
                           self.rng, self._work,
                           self._mask, self._tmp, self._qs, self._val, self._pts, self._win,
                           self._rew, self._pobs, self._clash, self.leaf_obs, self.leaf_mask,
                           self.leaf_node, self.leaf_seat, self.leaf_roll, self.leaf_count)
                busy = np.flatnonzero(self.leaf_count)
                if busy.size:
                    res.leaves += self._evaluate(evaluator, busy, self.leaf_count[busy],
                                                 prior_temp, True, mix)
                    res.forwards += 1
                running = self._active & (self.sims < sims)
                if deadline is not None and time.perf_counter() >= deadline:
                    running &= self.sims < stop
                if not running.any():
                    break
                self._active[:] = running
        self._active[:] = act
        self._outputs(self.threads, self._active, self.rmask, self.gum, m, c_visit, c_scale,
                      rescale, self.tree, self.w, self.logp, self.vnet, self._qs, self._tmp,
                      res.visits, res.q, res.pi, res.action, res.value)
        res.simulations[:] = self.sims
        return res

    def root_children(self, i: int) -> list[tuple[int, int]]:
        """``(action, visits)`` of game ``i``'s root children (for tests and tools)."""
        t = self.tree[i]
        out = []
        ch = int(t[0, CHILD])
        while ch >= 0:
            out.append((int(t[ch, ACT]), int(t[ch, VISITS])))
            ch = int(t[ch, SIB])
        return out
