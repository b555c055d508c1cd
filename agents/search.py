"""Search agents: UCT (perfect information) and single-observer IS-MCTS (hidden information),
written once against the engine protocol and compiled per game with numba.

>>> from card_envs.agents import make_agent
>>> a = make_agent("mcts", "isflak_v0", seed=0, iterations=2000)   # doctest: +SKIP
>>> env.step(a.act_env(env))                                         # doctest: +SKIP

**Algorithm.** Every move starts a fresh tree at the searcher's decision. Each iteration takes a
*determinization* of the position, a full state consistent with what the searcher's seat knows,
drawn by the game's ``resample`` (for Isflak, a perfect-information game, the position itself;
either way the RNG of future chance is redrawn every iteration), and descends the tree:

* at a node, the children whose actions are legal in this determinization are *available*; if
  some legal action has no child yet, one is chosen uniformly at random and added (expansion);
  otherwise the child maximizing ``W/N + c * sqrt(ln(avail)/N)`` is followed, where ``avail``
  counts the iterations in which that child was available (SO-ISMCTS, Cowling et al. 2012);
* from the new node the game is played to its end by the rollout policy (uniformly random by
  default) in compiled code;
* the result is backed up **max-n**: a node stores the value of the seat that moved into it, so
  every seat maximizes its own return, for any number of players. The value of a seat is its
  share of the win (1 for a sole winner, 1/k for k tied winners, 0 otherwise), plus
  ``points_weight`` times its relative points margin (bounded in (-1, 1)).

Opponents' moves are tree nodes like the searcher's (their hidden choices are treated as seen:
the usual SO-ISMCTS simplification). A game may instead *model* the other seats with its rollout
policy (``model_others``): then only the searcher's decisions branch, which Op Glad IJs uses for
its simultaneous windows (``card_envs.agents.op_glad_ijs``).

The move played is the most visited root child legal in the real position.

**Budget.** ``iterations`` (default 1000; deterministic: same seed and position, same move) or
``ms`` (milliseconds per move: the search runs in chunks until the time is up; not
reproducible across machines). ``determinizations`` (64) states are drawn per move and cycled
through; ``c`` is the exploration constant (0.7 with values in [0, 1]).

Search reads the true state only through ``resample(state, seat)``: the search never sees what
its seat cannot know (tested: resampling the hidden part leaves its choice unchanged).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np

from card_envs.agents.base import Agent, legal_actions
from card_envs.agents.params import Param, check_params
from card_envs.core import kernels as K
from card_envs.core.engine import Engine
from card_envs.core.jit import load_generated, njit, template_source
from card_envs.core.registry import env_class

# tree node fields (columns of the int32 node table)
ACT, PAR, MOVER, CHILD, SIB, VISITS, AVAIL = range(7)
NODE_FIELDS = 7
MAX_ITERATIONS = 10**7  # per move: a tree of 28 bytes a node, 0.4 GB at most
MAX_NODES = 2**24  # tree capacity with ms (0.7 GB)
MAX_MS = 600_000.0  # ten minutes a move


#: the search RNG: splitmix64 of a one-element uint64 array (``card_envs.core.kernels``)
_next_u64 = K.draw
#: uniform integer in [0, n) from the search RNG (n >= 1)
rand_below = K.draw_below


@njit(cache=True)
def kth_legal(mask: np.ndarray, k: int) -> int:
    """The k-th (0-based) legal action of ``mask``."""
    for a in range(mask.shape[0]):
        if mask[a]:
            if k == 0:
                return a
            k -= 1
    return -1


@njit(cache=True)
def random_policy(state: np.ndarray, cfg: np.ndarray, seat: int, mask: np.ndarray,
                  obs: np.ndarray, rng: np.ndarray) -> int:
    """Rollout policy: a uniformly random legal action (``mask`` is already filled)."""
    n = 0
    for a in range(mask.shape[0]):
        n += mask[a]
    return kth_legal(mask, rand_below(rng, n))


# Placeholders: in the generated per-game modules these names are the game's kernels.
_step = _legal_mask = _outcome = _policy = None


def search_template(dets, cfg, root, it0, iters, c, model_others, points_weight, pw_c,
                    pw_alpha, horizon, tree, w, meta, rng, work, mask, tmp, obs, rew, pts,
                    winners, path, val, rsum):
    """The search loop (module docstring) for one game. ``_step``, ``_legal_mask``,
    ``_outcome`` and ``_policy`` are the game's kernels and rollout policy, bound as globals
    of a generated module (:func:`compiled_search`), so that numba can cache the loop."""
    n = cfg[K.C_PLAYERS]
    A = mask.shape[0]
    M = tree.shape[0]
    D = dets.shape[0]
    for it in range(it0, it0 + iters):
        work[:] = dets[it % D]
        K.rng_seed(work, _next_u64(rng))
        node = 0
        path[0] = 0
        plen = 1
        expanded = False
        rsum[:] = 0.0
        while work[K.DONE] == 0:
            cur = work[K.CUR]
            _legal_mask(work, cfg, mask)
            if model_others and cur != root:
                a = _policy(work, cfg, cur, mask, obs, rng)
                if _step(work, cfg, a, rew) & K.ST_REWARD:
                    rsum[:n] += rew[:n]
                continue
            if expanded:
                break
            nl = 0
            for a in range(A):
                nl += mask[a]
            nch = 0
            ch = tree[node, CHILD]
            while ch >= 0:
                if mask[tree[ch, ACT]]:
                    tmp[tree[ch, ACT]] = 1
                    nch += 1
                ch = tree[ch, SIB]
            room = nch < nl and meta[0] < M
            if room and pw_c > 0.0:  # progressive widening
                room = nch < max(1.0, pw_c * (tree[node, VISITS] + 1.0) ** pw_alpha)
            if room:  # expand an untried legal action: the policy's, else a random one
                act = _policy(work, cfg, cur, mask, obs, rng)
                if tmp[act]:
                    k = rand_below(rng, nl - nch)
                    for a in range(A):
                        if mask[a] and not tmp[a]:
                            if k == 0:
                                act = a
                                break
                            k -= 1
                ch = tree[node, CHILD]
                while ch >= 0:
                    tmp[tree[ch, ACT]] = 0
                    ch = tree[ch, SIB]
                new = meta[0]
                meta[0] += 1
                tree[new, ACT] = act
                tree[new, PAR] = node
                tree[new, MOVER] = cur
                tree[new, CHILD] = -1
                tree[new, SIB] = tree[node, CHILD]
                tree[new, VISITS] = 0
                tree[new, AVAIL] = 0
                w[new] = 0.0
                tree[node, CHILD] = new
                if _step(work, cfg, act, rew) & K.ST_REWARD:
                    rsum[:n] += rew[:n]
                path[plen] = new
                plen += 1
                node = new
                expanded = True
                continue
            if nch == 0:  # tree full and nothing tried here: roll out
                break
            best = -1
            bestv = -1e300
            ch = tree[node, CHILD]
            while ch >= 0:
                a = tree[ch, ACT]
                if tmp[a]:
                    tmp[a] = 0
                    tree[ch, AVAIL] += 1
                    nv = tree[ch, VISITS]
                    v = w[ch] / nv + c * math.sqrt(math.log(tree[ch, AVAIL]) / nv)
                    if v > bestv:
                        bestv = v
                        best = ch
                ch = tree[ch, SIB]
            if best < 0:  # no finite value (cannot happen with checked parameters): roll out
                break
            if _step(work, cfg, tree[best, ACT], rew) & K.ST_REWARD:
                rsum[:n] += rew[:n]
            path[plen] = best
            plen += 1
            node = best
        left = horizon
        while work[K.DONE] == 0 and left != 0:  # rollout
            cur = work[K.CUR]
            _legal_mask(work, cfg, mask)
            a = _policy(work, cfg, cur, mask, obs, rng)
            if _step(work, cfg, a, rew) & K.ST_REWARD:
                rsum[:n] += rew[:n]
            left -= 1
        mean = 0.0
        if work[K.DONE] != 0:  # finished: win share (+ points margin)
            _outcome(work, cfg, pts, winners)
            nw = 0
            for p in range(n):
                nw += winners[p]
            for p in range(n):
                val[p] = winners[p] / nw if nw > 0 else 1.0 / n
                mean += pts[p] / n
        else:  # cut at the horizon: even share (+ margin of the rewards so far)
            for p in range(n):
                val[p] = 1.0 / n
                pts[p] = rsum[p]
                mean += pts[p] / n
        if points_weight != 0.0:
            span = 0.0
            for p in range(n):
                span = max(span, abs(pts[p] - mean))
            for p in range(n):
                val[p] += points_weight * (pts[p] - mean) / (1.0 + span)
        for i in range(plen):
            nd = path[i]
            tree[nd, VISITS] += 1
            if nd > 0:
                w[nd] += val[tree[nd, MOVER]]


_GENERATED = """# Generated by card_envs.agents.search.compiled_search for {game}; do not edit.
import math

import numpy as np
from card_envs.core.jit import njit

from card_envs.agents.search import (ACT, AVAIL, CHILD, MOVER, PAR, SIB, VISITS, _next_u64,
                                     rand_below)
from card_envs.core import kernels as K
from {rules} import legal_mask as _legal_mask
from {rules} import outcome as _outcome
from {rules} import step as _step
from {policy_module} import {policy_name} as _policy


@njit(cache=True, nogil=True)
{source}"""

_SEARCH: dict[tuple[type, Any], Callable[..., None]] = {}


def compiled_search(game: Any, policy: Callable[..., int]) -> Callable[..., None]:
    """The search loop of ``type(game)`` with ``policy``, compiled once and cached on disk.

    numba caches only functions defined at the top of a real file (a closure over the kernels
    would be recompiled in every process: ~10 s a game). So the
    source of :func:`search_template` is written, with imports of the game's kernels and the
    policy, to a module in card-envs' kernel cache folder (keyed on the sources, see
    :mod:`card_envs.core.jit`), imported, and its ``search`` used."""
    key = (type(game), policy)
    if key in _SEARCH:
        return _SEARCH[key]
    py = getattr(policy, "py_func", policy)
    src = template_source(search_template, "search")
    text = _GENERATED.format(game=game.env_id, rules=game.rules.__name__,
                             policy_module=py.__module__, policy_name=py.__name__, source=src)
    name = f"search_{game.env_id}_{py.__module__.replace('.', '_')}_{py.__name__}"
    module = load_generated(name, text)
    _SEARCH[key] = module.search
    return module.search


def anchored(agent: Any, rollout: Callable[..., int], state: np.ndarray,
             action_mask: np.ndarray, best: int, visits: np.ndarray, q: np.ndarray) -> int:
    """The move of a search ``agent`` with an ``anchor`` (``agent.anchor``, ``.rng``,
    ``.engine`` and its ``_mask``/``_obs`` buffers): the ``rollout`` policy's move (a game's
    heuristic) unless the search's ``best`` has a mean value ``q`` ahead of it by more than
    ``anchor / sqrt(min visits)``, or the policy's move was never tried."""
    r = np.array([agent.rng.getrandbits(64)], np.uint64)
    agent._mask[:] = action_mask
    ref = int(rollout(state, agent.engine.game.cfg, int(state[K.CUR]), agent._mask, agent._obs,
                      r))
    if ref == best or not action_mask[ref]:
        return best
    if visits[ref] == 0:
        return ref
    margin = agent.anchor / math.sqrt(min(visits[ref], visits[best]))
    return best if q[best] - q[ref] > margin else ref


class SearchAgent(Agent):
    """MCTS / IS-MCTS for any registered game (module docstring). Parameters (``OptionError``
    outside these ranges, NaN and infinities included):

    ==================  ===================  =============================================
    ``iterations``      int, 1..10**7        per move (default 1000 unless ``ms`` is given)
    ``ms``              number, 1..600000    milliseconds per move
    ``c``               number, 0..100       exploration constant (0.7)
    ``determinizations`` int, 1..4096        states drawn per move (64)
    ``points_weight``   number, 0..100       weight of the points margin (game default)
    ``widening``        number, 0..1000      progressive widening (game default; 0: none)
    ``horizon``         int, -1..10**6       rollout steps (game default; -1: to the end)
    ``anchor``          number, 0..1000      anchor on the rollout policy (game default)
    ``max_nodes``       int, 2..2**24        tree capacity with ``ms`` (2**17)
    ==================  ===================  =============================================

    The compiled search releases the GIL, so other Python threads (a server's other games)
    run while it thinks."""

    name = "mcts"
    needs_state = True
    #: numba rollout policy ``(state, cfg, seat, mask, obs, rng) -> action``
    rollout_policy: ClassVar[Callable[..., int]] = random_policy
    #: play the other seats with the rollout policy instead of branching on their moves
    model_others: ClassVar[bool] = False
    default_points_weight: ClassVar[float] = 0.0
    #: progressive widening: a node of N visits has at most ``max(1, widening * N**alpha)``
    #: children (``widening`` 0: no limit)
    default_widening: ClassVar[float] = 0.0
    widening_alpha: ClassVar[float] = 0.5
    #: rollout steps after leaving the tree (-1: to the end of the game); a cut rollout is
    #: valued by the rewards collected so far (see ``search_reward_mode``)
    default_horizon: ClassVar[int] = -1
    #: reward mode code the search's copy of the config uses (None: the env's)
    search_reward_mode: ClassVar[int | None] = None
    #: ``(engine, state, seat, rng) -> state``: a determinization refining ``resample`` (None:
    #: the game's ``resample``); the batched ``az`` search uses it too
    determinizer: ClassVar[Callable[..., np.ndarray] | None] = None
    #: its compiled twin, ``(state, cfg, observer, out, rng)`` like the games'
    #: ``statedict.determinize`` (None: the game's kernel)
    determinizer_kernel: ClassVar[Callable[..., None] | None] = None
    #: anchor on the rollout policy: play its move unless another root move's mean value
    #: beats it by more than ``anchor / sqrt(min visits)`` (0: plain most-visited move)
    default_anchor: ClassVar[float] = 0.0

    #: the parameters (checked before anything is built; ranges in the class docstring)
    params: ClassVar[dict[str, Param]] = {
        "iterations": Param("int", 1, MAX_ITERATIONS, "iterations per move (default 1000 "
                            "unless ms is given)", budget=True),
        "ms": Param("float", 1, MAX_MS, "milliseconds per move", budget=True),
        "c": Param("float", 0, 100, "exploration constant (default 0.7)", optional=False),
        "determinizations": Param("int", 1, 4096, "states drawn per move (default 64)",
                                  optional=False, budget=True),
        "points_weight": Param("float", 0, 100, "weight of the points margin in a value"),
        "widening": Param("float", 0, 1000, "progressive widening (0: none)"),
        "horizon": Param("int", -1, 10**6, "rollout steps (-1: to the end)"),
        "anchor": Param("float", 0, 1000, "anchor on the rollout policy's move (0: none)"),
        "max_nodes": Param("int", 2, MAX_NODES, "tree capacity with ms (default 2**17)",
                           optional=False, budget=True),
    }

    def __init__(self, env_id: str, seed: int | None = None, iterations: int | None = None,
                 ms: float | None = None, c: float = 0.7, determinizations: int = 64,
                 points_weight: float | None = None, widening: float | None = None,
                 horizon: int | None = None, anchor: float | None = None,
                 max_nodes: int = 2**17, **options: Any) -> None:
        p = check_params(type(self), {
            "iterations": iterations, "ms": ms, "c": c, "determinizations": determinizations,
            "points_weight": points_weight, "widening": widening, "horizon": horizon,
            "anchor": anchor, "max_nodes": max_nodes})
        super().__init__(env_id, seed, **options)
        iterations, ms = p["iterations"], p["ms"]
        if iterations is None and ms is None:
            iterations = 1000
        self.iterations, self.ms, self.c = iterations, ms, p["c"]
        self.points_weight = float(self.default_points_weight if p["points_weight"] is None
                                   else p["points_weight"])
        self.widening = float(self.default_widening if p["widening"] is None else p["widening"])
        self.horizon = int(self.default_horizon if p["horizon"] is None else p["horizon"])
        self.anchor = float(self.default_anchor if p["anchor"] is None else p["anchor"])
        max_nodes, determinizations = p["max_nodes"], p["determinizations"]
        self.engine = eng = Engine(env_id, **self._game_options(env_id, options))
        g = eng.game
        self.determinizations = 1 if g.perfect_information else int(determinizations)
        cap = iterations + 2 if ms is None else max(int(max_nodes), 2)
        self._tree = np.empty((cap, NODE_FIELDS), np.int32)
        self._w = np.empty(cap, np.float64)
        self._path = np.empty(cap + 1, np.int64)
        self._meta = np.zeros(1, np.int64)
        self._rng = np.zeros(1, np.uint64)
        self._work = np.empty(g.state_size, np.int32)
        self._mask = np.zeros(g.num_actions, np.int8)
        self._tmp = np.zeros(g.num_actions, np.int8)
        self._obs = np.zeros(g.obs_size, g.obs_dtype)
        n = g.num_players
        self._rew = np.zeros(n, np.float32)
        self._pts = np.zeros(n, np.float64)
        self._win = np.zeros(n, np.int64)
        self._val = np.zeros(n, np.float64)
        self._rsum = np.zeros(n, np.float64)
        self._cfg = g.cfg.copy()
        if self.search_reward_mode is not None:
            self._cfg[K.C_REWARD] = self.search_reward_mode
        self._search = compiled_search(g, type(self).rollout_policy)
        self.last_iterations = 0  # iterations of the last move (useful with ``ms``)
        self.last_values = np.full(g.num_actions, np.nan)
        self._warm_up()

    def _warm_up(self) -> None:
        """Compile now (one iteration on a fresh deal), so that no move pays for it."""
        state = self.engine.new_state(0)
        run = self._search
        self._tree[0, :] = (-1, -1, -1, -1, -1, 0, 0)
        self._meta[0] = 1
        run(state[None, :], self._cfg, int(state[K.CUR]), 0, 1, self.c, self.model_others,
            self.points_weight, self.widening, self.widening_alpha, self.horizon, *self._bufs())

    def _bufs(self) -> tuple[np.ndarray, ...]:
        return (self._tree, self._w, self._meta, self._rng, self._work, self._mask, self._tmp,
                self._obs, self._rew, self._pts, self._win, self._path, self._val, self._rsum)

    @staticmethod
    def _game_options(env_id: str, options: dict[str, Any]) -> dict[str, Any]:
        known = env_class(env_id).game_class.option_specs()
        return {k: v for k, v in options.items() if k in known}

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        raise TypeError(f"{type(self).__name__} searches the game: call act_state(state, obs, "
                        "mask) or act_env(env) (the arena does)")

    def determinize(self, state: np.ndarray, seat: int, rng: np.random.Generator
                    ) -> np.ndarray:
        """One state consistent with what ``seat`` knows (games may refine the draw: their
        ``determinizer``)."""
        if self.determinizer is not None:
            return type(self).determinizer(self.engine, state, seat, rng)
        return self.engine.resample(state, seat, rng)

    def search(self, state: np.ndarray) -> np.ndarray:
        """Run the search from ``state`` (seat to act = searcher); returns visit counts per
        action at the root."""
        g = self.engine.game
        seat = int(state[K.CUR])
        if seat < 0:
            raise ValueError("the game is over: no move to search")
        seed = self.rng.getrandbits(64)
        nprng = np.random.default_rng(seed)
        dets = np.stack([self.determinize(state, seat, nprng)
                         for _ in range(self.determinizations)])
        self._rng[0] = np.uint64(seed)
        tree, meta = self._tree, self._meta
        tree[0, :] = (-1, -1, -1, -1, -1, 0, 0)
        self._w[0] = 0.0
        meta[0] = 1
        args = self._bufs()
        run = self._search
        opts = (self.c, self.model_others, self.points_weight, self.widening,
                self.widening_alpha, self.horizon)
        if self.ms is None:
            run(dets, self._cfg, seat, 0, self.iterations, *opts, *args)
            done = self.iterations
        else:
            deadline = time.perf_counter() + self.ms / 1000.0
            done, chunk = 0, 16
            while True:
                run(dets, self._cfg, seat, done, chunk, *opts, *args)
                done += chunk
                left = deadline - time.perf_counter()
                if left <= 0:
                    break
                chunk = min(max(chunk * 2, 16), 4096)
                # shrink the last chunk to what the remaining time allows
                per = (self.ms / 1000.0 - left) / done
                chunk = max(1, min(chunk, int(left / per) if per > 0 else chunk))
        self.last_iterations = done
        visits = np.zeros(g.num_actions, np.int64)
        q = np.full(g.num_actions, np.nan)
        ch = tree[0, CHILD]
        while ch >= 0:
            visits[tree[ch, ACT]] = tree[ch, VISITS]
            if tree[ch, VISITS]:
                q[tree[ch, ACT]] = self._w[ch] / tree[ch, VISITS]
            ch = tree[ch, SIB]
        self.last_values = q  # mean value of each root action for the searcher (nan: untried)
        return visits

    def act_state(self, state: np.ndarray, observation: np.ndarray,
                  action_mask: np.ndarray) -> int:
        legal = legal_actions(action_mask)
        if legal.size == 1:
            return int(legal[0])
        visits = self.search(state)
        v = visits[legal]
        if v.max() <= 0:
            return int(legal[self.rng.randrange(legal.size)])
        best = int(legal[int(np.argmax(v))])
        if self.anchor > 0.0:
            return anchored(self, type(self).rollout_policy, state, action_mask, best, visits,
                            self.last_values)
        return best
