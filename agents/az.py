"""``az``: AlphaZero-style search guided by a policy network, for any game with one
(determinized PUCT over the engine's rules; hidden cards drawn from the searcher's
information set).

>>> from card_envs.agents import make_agent
>>> a = make_agent("az:iterations=800", "slide_v0", seed=0)       # doctest: +SKIP
>>> env.step(a.act_env(env))                                        # doctest: +SKIP
>>> visits, value = a.search(env.state_array)   # policy target and root value  # doctest: +SKIP

**Network.** ``path`` names a policy saved by card-envs' trainer (a ``.safetensors``
:class:`~card_envs.agents.net.NetPolicy`); the default is the shipped PPO baseline of the game
(:func:`~card_envs.agents.ppo.baseline_path`, 2 players). Its action scorer gives the priors
(softmax of the logits over the legal actions), its value head the value of a leaf for the seat
that observes it there.

**Search** (compiled: :mod:`card_envs.agents.az_kernels`). Like ``mcts``, one information-set
tree shared by ``determinizations`` states drawn per move by the game's ``resample`` from what
the searcher's seat knows (the determinization of the game's own search agent where it refines
it: Op Glad IJs draws the other seats' hidden choices of the window with its heuristic), cycled
through, with the RNG of future chance redrawn at every descent. One shared tree rather than
one per determinization: the searcher's own nodes have the same observation in every
determinization, so each network evaluation serves all of them, and the budget (a few thousand
evaluations a move) is not split into many shallow trees; the price is the usual
SO-ISMCTS strategy fusion. Descents follow PUCT, ``Q + c_puct P sqrt(1 + sum N) / (1 + N)``;
an unvisited child's ``Q`` is the network's value of its parent for the seat to act there.
``batch`` descents run with virtual loss (a visit whose value is pending counts as
``virtual_loss`` of a loss, so the batch's descents spread out), their leaves' observations
(for the seat to act at each leaf, by the game's observe kernel) go through the network in
**one** forward pass, then the leaves are expanded and the values backed up. A finished game is
valued by its outcome: a seat's share of the win (1 for a sole winner, 1/k for k tied winners,
0 otherwise), as in ``mcts``. The forward passes run on one torch thread (restored after each
move): batches of a few dozen rows gain nothing from more, and on a busy machine threads
waiting for each other made a move 30 times slower.

**Values.** Backup is max-n: a node holds the value of the seat that moved into it, so every
seat maximizes its own share, for any number of players. The baselines' value head predicts a
seat's return in the ``win`` reward mode (+1 win, -1 loss; for Slide, Isflak and If It Fits
trained with potential-based shaping, so the head predicts the return minus ``shaping *
phi(obs)``, added back here from the training record beside the weights). The expected return
``2 p - 1`` of a win probability ``p`` gives ``share = 0.5 + value_scale * v`` clipped to
[0, 1], with ``value_scale`` 0.5. Measured on 40-60 finished games per game (the baseline
against itself and the heuristic), a least-squares fit of the final win share on ``v`` gives
slopes 0.40 (Slide), 0.57 (Isflak), 0.50 (If It Fits), 0.67 (Flipology), 0.57 (Op Glad IJs)
and intercepts 0.40-0.50: the plain mapping is about as calibrated as a fit per game. The
other seats share the rest: ``(1 - share) / (n - 1)`` each.

**Budget.** ``iterations`` (simulations: leaves evaluated plus finished games reached; default
800 unless ``ms`` is given; deterministic for a seed) or ``ms`` per move, validated as for
``mcts``. ``temperature`` 0 plays the most visited legal root action, else samples visits
``** (1 / temperature)``. The agent reads the true state only through the determinizations.

**Priors** are ``softmax(logits / prior_temp)``. The PPO baselines' policies are sharp (their
cross-entropy against the search's own visit counts is about 5 nats in Isflak), so with
``prior_temp`` 1 the search mostly follows the network's first choice and inherits its
mistakes. Softened (``prior_temp`` 3), the search lost less to ``mcts:ms=200`` in 20-game
matches at ``ms=200``: Slide 0.40 -> 0.73, Isflak 0.35 -> 0.63, Flipology 0.65 -> 0.80, while
If It Fits (hundreds of legal moves) fell from 0.70 to 0.43. Each game's default is in its
manifest (``az={"prior_temp": ...}``: 3, and 1 for If It Fits). Over 100 games with these
defaults (the learned-search guide's table) Slide scores 0.585, Flipology 0.68, If It Fits
0.675 and Isflak 0.37: the 20-game Isflak gain was noise.

**Rollouts** (``mix``, default 0): a leaf's value can be mixed with the result of one rollout
from it by the game's ``mcts`` rollout policy (``horizon`` moves at most: the game's ``mcts``
default), ``(1 - mix) value + mix rollout``, computed inside the compiled descent. In Slide
(20 games against ``mcts:ms=200``) ``mix`` 0.5 and 1 did not beat the network's value alone.

**Defaults** of the other parameters, chosen on 100-game matches (duplicate deals) at 800
simulations against the network alone (``ppo``): ``c_puct`` 0.5 (0.2-0.75 alike; 1.5 lost
5-10 points of win rate in Slide, Isflak and If It Fits); ``batch`` 32 with ``virtual_loss``
0.5 (Isflak: 0.83, as batch 8-16 at 0.84-0.85, while batch 32 with a whole loss fell to 0.78
and batch 64 to 0.59; batch 32 evaluates about 30% more leaves per second than 16, 64 another
25%); ``value_scale`` 0.35-0.8 and ``determinizations`` 8-128 made no difference beyond the
noise (about +-0.09).
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from card_envs.agents.az_kernels import (
    ACT,
    CHILD,
    NODE_FIELDS,
    SIB,
    VISITS,
    compiled_descend,
    expand_backup,
)
from card_envs.agents.base import Agent, legal_actions
from card_envs.agents.params import Param, check_params
from card_envs.agents.ppo import baseline_path
from card_envs.agents.search import MAX_ITERATIONS, MAX_MS, MAX_NODES, SearchAgent
from card_envs.agents.weights import WeightsError
from card_envs.core import kernels as K
from card_envs.core.engine import Engine
from card_envs.core.manifest import load
from card_envs.core.registry import env_class, manifest, resolve_env_id

__all__ = ["AZAgent"]

DEFAULT_ITERATIONS = 800
DEFAULT_MIX = 0.0


def _game_search(env_id: str) -> type[SearchAgent]:
    """The game's own search agent class (its rollout policy and horizon), else
    :class:`SearchAgent`."""
    path = manifest(env_id).search
    return load(path) if path else SearchAgent


def _game_determinize(env_id: str) -> Any:
    """The determinization of the game's own search agent when it refines ``resample`` (a
    function of ``(agent, state, seat, rng)`` reading the agent's ``engine`` and ``_obs``),
    else None."""
    path = manifest(env_id).search
    if not path:
        return None
    fn = load(path).determinize
    return None if fn is SearchAgent.determinize else fn


def _training_shaping(policy: Any, path: str | None) -> float:
    """The reward-shaping scale the policy was trained with: from its training record (the
    ``.json`` beside the weights, or the record a live policy carries), 0 if none says."""
    record = dict(getattr(policy, "info", None) or {})
    if "info" not in record and path:
        side = Path(path).with_suffix(".json")
        try:
            record = json.loads(side.read_text())
        except (OSError, ValueError):
            record = {}
    settings = (record.get("info") or {}).get("settings") or {}
    try:
        return max(0.0, float(settings.get("shaping", 0.0) or 0.0))
    except (TypeError, ValueError):
        return 0.0


class AZAgent(Agent):
    """Network-guided determinized PUCT (module docstring). Parameters (``OptionError`` outside
    these ranges, NaN and infinities included):

    ===================  ===================  ============================================
    ``iterations``       int, 1..10**7        simulations per move (800 unless ``ms``)
    ``ms``               number, 1..600000    milliseconds per move
    ``c_puct``           number, 0..100       exploration constant (0.5)
    ``determinizations`` int, 1..4096         states drawn per move (32)
    ``batch``            int, 1..1024         leaves per network forward (32)
    ``temperature``      number, 0..100       0: most visited move; else sampled
    ``path``             text                 a policy ``.safetensors`` (default: baseline)
    ``value_scale``      number, 0..10        share = 0.5 + value_scale * value (0.5)
    ``virtual_loss``     number, 0..1         a pending visit's share of a loss (0.5)
    ``mix``              number, 0..1         share of a rollout in a leaf's value (MIX)
    ``prior_temp``       number, 0.01..100    priors = softmax(logits / prior_temp) (1)
    ``horizon``          int, -1..10**6       rollout moves (-1: to the end; game default)
    ``max_nodes``        int, 2..2**24        tree capacity (2**18)
    ``model``            NetPolicy            a loaded policy (Python only, not in a spec)
    ===================  ===================  ============================================
    """

    name = "az"
    needs_state = True
    params: ClassVar[dict[str, Param]] = {
        "iterations": Param("int", 1, MAX_ITERATIONS, "simulations per move (default "
                            f"{DEFAULT_ITERATIONS} unless ms is given)", budget=True),
        "ms": Param("float", 1, MAX_MS, "milliseconds per move", budget=True),
        "c_puct": Param("float", 0, 100, "PUCT exploration constant (default 0.5)",
                        optional=False),
        "determinizations": Param("int", 1, 4096, "states drawn per move (default 32)",
                                  optional=False, budget=True),
        "batch": Param("int", 1, 1024, "leaves per network forward (default 32)",
                       optional=False),
        "temperature": Param("float", 0, 100, "0: the most visited move; else sample visits "
                             "** (1 / temperature)", optional=False),
        "path": Param("str", doc="a policy .safetensors saved by train_ppo (default: the "
                      "pretrained baseline)", file=True),
        "value_scale": Param("float", 0, 10, "leaf share = 0.5 + value_scale * value "
                             "(default 0.5)", optional=False),
        "virtual_loss": Param("float", 0, 1, "share of a loss a pending visit counts for "
                              "(default 0.5)", optional=False),
        "mix": Param("float", 0, 1, "share of a rollout in a leaf's value (default "
                     f"{DEFAULT_MIX})", optional=False),
        "prior_temp": Param("float", 0.01, 100, "priors are softmax(logits / prior_temp) "
                            "(default 1)", optional=False),
        "horizon": Param("int", -1, 10**6, "rollout moves (-1: to the end; default: the "
                         "game's mcts)"),
        "max_nodes": Param("int", 2, MAX_NODES, "tree capacity (default 2**18)",
                           optional=False, budget=True),
        "model": Param("object", doc="a loaded NetPolicy", spec=False),
    }

    def __init__(self, env_id: str, seed: int | None = None, iterations: int | None = None,
                 ms: float | None = None, c_puct: float = 0.5, determinizations: int = 32,
                 batch: int = 32, temperature: float = 0.0, path: str | None = None,
                 value_scale: float = 0.5, virtual_loss: float = 0.5,
                 mix: float = DEFAULT_MIX, prior_temp: float | None = None,
                 horizon: int | None = None,
                 max_nodes: int = 2**18, model: Any = None, **options: Any) -> None:
        tuned = manifest(env_id).az  # this game's measured defaults
        if prior_temp is None:
            prior_temp = float(tuned.get("prior_temp", 1.0))
        p = check_params(type(self), {
            "iterations": iterations, "ms": ms, "c_puct": c_puct,
            "determinizations": determinizations, "batch": batch, "temperature": temperature,
            "path": path, "value_scale": value_scale, "virtual_loss": virtual_loss,
            "mix": mix, "prior_temp": prior_temp, "horizon": horizon, "max_nodes": max_nodes})
        super().__init__(env_id, seed, **options)
        iterations, ms = p["iterations"], p["ms"]
        if iterations is None and ms is None:
            iterations = DEFAULT_ITERATIONS
        self.iterations, self.ms = iterations, ms
        self.c_puct, self.batch = p["c_puct"], p["batch"]
        self.temperature, self.value_scale = p["temperature"], p["value_scale"]
        self.virtual_loss, self.mix = p["virtual_loss"], p["mix"]
        self.prior_temp = p["prior_temp"]
        searcher = _game_search(env_id)
        self.horizon = searcher.default_horizon if p["horizon"] is None else p["horizon"]
        known = env_class(env_id).game_class.option_specs()
        game_opts = {k: v for k, v in options.items() if k in known}
        self.engine = eng = Engine(env_id, **game_opts)
        g = eng.game
        n = g.num_players
        self.policy, self.path = self._policy(env_id, p["path"], model, g, game_opts)
        self.shaping = _training_shaping(self.policy, self.path)
        pot = manifest(env_id).train.potential if self.shaping else None
        self.potential = load(pot) if pot else None
        if self.potential is None:
            self.shaping = 0.0
        self.determinizations = 1 if g.perfect_information else p["determinizations"]
        self._refine = _game_determinize(env_id)
        cap = p["max_nodes"]
        self._tree = np.empty((cap, NODE_FIELDS), np.int32)
        self._w = np.zeros(cap, np.float64)
        self._prior = np.zeros(cap, np.float64)
        self._vnet = np.zeros(cap, np.float64)
        self._meta = np.zeros(1, np.int64)
        self._rng = np.zeros(1, np.uint64)
        self._work = np.empty(g.state_size, np.int32)
        self._mask = np.zeros(g.num_actions, np.int8)
        self._tmp = np.zeros(g.num_actions, np.int8)
        self._obs = np.zeros(g.obs_size, g.obs_dtype)
        self._val = np.zeros(n, np.float64)
        self._pts = np.zeros(n, np.float64)
        self._win = np.zeros(n, np.int64)
        self._rew = np.zeros(n, np.float32)
        B = self.batch
        self._leaf_obs = np.zeros((B, g.obs_size), g.obs_dtype)
        self._leaf_mask = np.zeros((B, g.num_actions), np.int8)
        self._leaf_node = np.zeros(B, np.int64)
        self._leaf_seat = np.zeros(B, np.int64)
        self._clash = np.zeros(4 * B + 4, np.int64)
        self._out = np.zeros(4, np.int64)
        self._pobs = np.zeros(g.obs_size, g.obs_dtype)
        self._leaf_roll = np.zeros(B, np.float64)
        self._descend = compiled_descend(g, searcher.rollout_policy)
        #: network forward passes (all moves), and per the last search: forwards,
        #: simulations, leaves evaluated by the network, collisions (descents taken back),
        #: mean value of each root action
        self.forwards = 0
        self.last_forwards = self.last_iterations = self.last_leaves = 0
        self.last_collisions = 0
        self.last_values = np.full(g.num_actions, np.nan)
        self._warm_up()

    @staticmethod
    def _policy(env_id: str, path: str | None, model: Any, g: Any,
                game_opts: dict[str, Any]) -> tuple[Any, str | None]:
        """The NetPolicy to search with (``model``, the file ``path`` or the baseline)."""
        if model is None:
            if path is None:
                path = str(baseline_path(resolve_env_id(env_id), g.num_players))
            if not str(path).endswith(".safetensors"):
                raise WeightsError(f"az agent: {path!r} is not a policy .safetensors saved by "
                                   "train_ppo (az needs card-envs' own network)")
            if not Path(path).is_file():
                raise FileNotFoundError(f"az agent: no policy file {path!r}")
            from card_envs.agents.net import load_policy

            model = load_policy(path, env_id, g.num_players, game_opts)
        if not hasattr(model, "pinput") or not hasattr(model, "net"):
            raise TypeError(f"az agent: model must be a NetPolicy, got {type(model).__name__}")
        want = (g.obs_size, g.num_actions, g.num_players)
        have = (model.game.obs_size, model.game.num_actions, model.num_players)
        if model.env_id != resolve_env_id(env_id) or have != want:
            raise WeightsError(f"az agent: the policy plays {model.env_id} with (observation, "
                               f"actions, players) {have}; this game is "
                               f"{resolve_env_id(env_id)} with {want}")
        return model, path

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        raise TypeError(f"{type(self).__name__} searches the game: call act_state(state, obs, "
                        "mask) or act_env(env) (the arena does)")

    def determinize(self, state: np.ndarray, seat: int, rng: np.random.Generator
                    ) -> np.ndarray:
        """One state consistent with what ``seat`` knows."""
        if self._refine is not None:
            return self._refine(self, state, seat, rng)
        return self.engine.resample(state, seat, rng)

    def _warm_up(self) -> None:
        """Compile now (two simulations on a fresh deal), so that no move pays for it."""
        state = self.engine.new_state(0)
        forwards = self.forwards
        self._run(state, int(state[K.CUR]), 0, 2, None)
        self.forwards = forwards

    def _evaluate(self, count: int) -> None:
        """One network forward for the first ``count`` leaves of the batch, then expansion and
        backup (:func:`~card_envs.agents.az_kernels.expand_backup`)."""
        import torch

        pol = self.policy
        obs = self._leaf_obs[:count]
        x, rows, acts, offsets = pol.pinput.compute(obs, self._leaf_mask[:count], threads=1)
        seg = np.repeat(np.arange(count, dtype=np.int64), np.diff(offsets))
        with torch.inference_mode():  # (numpy's repeat: torch.repeat_interleave can take ms)
            logits, values = pol.net(torch.from_numpy(x), torch.from_numpy(rows),
                                     torch.from_numpy(acts), torch.from_numpy(seg))
        v = values.numpy().astype(np.float64)
        if self.shaping:
            v += self.shaping * np.asarray(self.potential(obs, self.engine.num_players),
                                           np.float64)
        v = np.clip(0.5 + self.value_scale * v, 0.0, 1.0)
        if self.mix > 0:
            roll = self._leaf_roll[:count]
            v = np.where(roll >= 0, (1.0 - self.mix) * v + self.mix * roll, v)
        expand_backup(count, self._leaf_node, self._leaf_seat,
                      logits.numpy().astype(np.float64) / self.prior_temp, acts, offsets, v,
                      self.engine.num_players, self._tree, self._w, self._prior, self._vnet,
                      self._meta, self._val)
        self.forwards += 1

    def _run(self, state: np.ndarray, seat: int, seed: int, iterations: int | None,
             ms: float | None) -> None:
        """The search from ``state`` for ``seat`` (module docstring); the tree is left in the
        buffers."""
        import torch

        threads = torch.get_num_threads()
        torch.set_num_threads(1)  # small forwards: more threads only wait for each other
        try:
            self._search_loop(state, seat, seed, iterations, ms)
        finally:
            torch.set_num_threads(threads)

    def _search_loop(self, state: np.ndarray, seat: int, seed: int, iterations: int | None,
                     ms: float | None) -> None:
        nprng = np.random.default_rng(seed)
        dets = np.stack([self.determinize(state, seat, nprng)
                         for _ in range(self.determinizations)])
        self._rng[0] = np.uint64(seed)
        self._tree[0, :] = (0, -1, -1, -1, -1, 0, 0, 0)
        self._w[0] = self._vnet[0] = 0.0
        self._meta[0] = 1
        args = (self._tree, self._w, self._prior, self._vnet, self._meta, self._rng,
                self._work, self._mask, self._tmp, self._val, self._pts, self._win, self._rew,
                self._leaf_obs, self._leaf_mask, self._leaf_node, self._leaf_seat, self._clash,
                self._out, self._pobs, self._leaf_roll)
        cfg, out = self.engine.cfg, self._out
        deadline = None if ms is None else time.perf_counter() + ms / 1000.0
        done = it = clashes = leaves = 0
        forwards = self.forwards
        while True:
            want = self.batch if iterations is None else min(self.batch, iterations - done)
            if want <= 0:
                break
            self._descend(dets, cfg, it, 4 * want + 4, want, self.c_puct, self.virtual_loss,
                          self.mix, self.horizon,
                          *args)
            it += int(out[3])
            clashes += int(out[2])
            if out[0]:
                self._evaluate(int(out[0]))
                leaves += int(out[0])
            if out[0] + out[1] == 0:  # cannot happen: a batch's first descent never collides
                break
            done += int(out[0] + out[1])
            if deadline is not None and time.perf_counter() >= deadline:
                break
        self.last_iterations, self.last_collisions, self.last_leaves = done, clashes, leaves
        self.last_forwards = self.forwards - forwards

    def search(self, state: np.ndarray) -> tuple[np.ndarray, float]:
        """Search from ``state`` (the seat to act is the searcher): ``(visits per action at
        the root, root value)``, the value being the searcher's mean backed-up share in
        [0, 1]. The visit distribution is an expert-iteration policy target."""
        seat = int(state[K.CUR])
        if seat < 0:
            raise ValueError("the game is over: no move to search")
        self._run(state, seat, self.rng.getrandbits(64), self.iterations, self.ms)
        tree, w = self._tree, self._w
        visits = np.zeros(self.engine.num_actions, np.int64)
        q = np.full(self.engine.num_actions, np.nan)
        ch = int(tree[0, CHILD])
        while ch >= 0:
            a, nv = int(tree[ch, ACT]), int(tree[ch, VISITS])
            visits[a] = nv
            if nv:
                q[a] = w[ch] / nv
            ch = int(tree[ch, SIB])
        self.last_values = q
        total = int(visits.sum())
        value = float(np.nansum(q * visits) / total) if total else math.nan
        return visits, value

    def act_state(self, state: np.ndarray, observation: np.ndarray,
                  action_mask: np.ndarray) -> int:
        legal = legal_actions(action_mask)
        if legal.size == 1:
            return int(legal[0])
        visits, _ = self.search(state)
        v = visits[legal].astype(np.float64)
        if v.max() <= 0:
            return int(legal[self.rng.randrange(legal.size)])
        if self.temperature > 0:
            p = (v / v.max()) ** (1.0 / self.temperature)
            return int(self.rng.choices(legal.tolist(), weights=(p / p.sum()).tolist())[0])
        q = np.nan_to_num(self.last_values[legal], nan=-1.0)
        return int(legal[np.lexsort((q, v))[-1]])  # most visits, then best mean value
