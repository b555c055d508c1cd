"""``az``: AlphaZero-style search guided by a policy-value network, for any game and any number
of seats: the batched search of :mod:`card_envs.agents.az_search` with a batch of one game.

>>> from card_envs.agents import make_agent
>>> a = make_agent("az:ms=200", "slide_v0", seed=0)                 # doctest: +SKIP
>>> env.step(a.act_env(env))                                        # doctest: +SKIP
>>> visits, value = a.search(env.state_array)                       # doctest: +SKIP
>>> a.last_policy      # the improved policy over the actions (a policy target)  # doctest: +SKIP

**Network.** ``path`` names a policy ``.safetensors`` saved by card-envs' trainers (a
:class:`~card_envs.agents.net.NetPolicy`). The default is the game's shipped self-play network
(``card_envs/agents/data/az/<env_id>.safetensors``, ``<env_id>_<n>p.safetensors`` for ``n``
seats, trained by :func:`card_envs.rl.az.train_az`; shipped: Flipology at 3 seats), else its PPO
baseline for that seat count (2, 3 and 4 seats; at 2 seats the PPO networks measure stronger
than the self-play runs so far). A self-play network's value head gives every seat's expected
share of the win; a PPO network's scalar value ``v`` (the return of the ``win`` reward mode, its
reward shaping added back from the training record beside the weights) reads as ``share = 0.5 +
value_scale * v`` for the seat to act, the rest shared by the others.

**Search.** Each move draws ``determinizations`` states consistent with what the searcher's
seat knows (the game's ``resample``; Op Glad IJs also draws the other seats' hidden window
choices with its heuristic), cycled through one per simulation in one information-set tree,
with the chance of every simulation drawn afresh. ``batch`` descents run per wave (they spread
out by their pending visits), and their leaves go through the network in one forward pass.
``mode="gumbel"`` (default): Gumbel root with sequential halving over ``considered`` actions
and the deterministic ``argmax pi' - N / (1 + sum N)`` below it (``c_visit``, ``c_scale``:
the scale of ``sigma(completed Q)``); no Gumbel noise, so the move is deterministic for a seed
and budget. ``mode="puct"``: AlphaZero's PUCT (``c_puct``, ``virtual_loss``), the most visited
move. Finished games are valued by their result; backups are max-n, so every seat maximises
its own share of the win, for any number of seats. Op Glad IJs' simultaneous windows: the other
seats are modelled by the heuristic (as its ``mcts`` does), and ``anchor`` keeps the
heuristic's slap unless the search finds a move clearly better (mean value ahead by more than
``anchor / sqrt(visits)``).

**Budget.** ``iterations`` (simulations a move, default 800 unless ``ms``; deterministic for a
seed) or ``ms`` per move: then the simulation count the sequential halving plans for comes from
the rate the agent measured on its previous moves, and the search stops at the deadline.
``temperature`` 0 plays the search's move, else samples the improved policy ``** (1 /
temperature)``. The agent reads the true state only through its determinizations.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from card_envs.agents.az_search import BatchSearch, NetEvaluator, game_searcher
from card_envs.agents.base import Agent, legal_actions
from card_envs.agents.params import Param, check_params
from card_envs.agents.ppo import baseline_path
from card_envs.agents.search import MAX_ITERATIONS, MAX_MS, MAX_NODES, anchored
from card_envs.agents.weights import WeightsError
from card_envs.core import kernels as K
from card_envs.core.manifest import load
from card_envs.core.registry import env_class, manifest, resolve_env_id

__all__ = ["AZAgent", "default_network"]

DEFAULT_ITERATIONS = 800
AZ_NETWORKS = Path(__file__).resolve().parent / "data" / "az"


def default_network(env_id: str, num_players: int = 2) -> Path:
    """The network ``az`` searches with by default: the shipped self-play network of the game
    and seat count, else the PPO baseline of that seat count; ``ValueError`` if there is
    neither."""
    env_id = resolve_env_id(env_id)
    name = env_id if num_players == 2 else f"{env_id}_{num_players}p"
    path = AZ_NETWORKS / f"{name}.safetensors"
    if path.is_file():
        return path
    try:
        return baseline_path(env_id, num_players)
    except ValueError:
        have = sorted(p.stem for p in AZ_NETWORKS.glob("*.safetensors"))
        raise ValueError(f"no network for {env_id} with {num_players} players (shipped az "
                         f"networks: {', '.join(have) or 'none'}; PPO baselines: 2-4 players); "
                         "give one: 'az:path=path/to/final.safetensors'") from None


def _training_shaping(policy: Any, path: str | None) -> float:
    """The reward-shaping scale the policy was trained with: from its training record (the
    ``.json`` beside the weights, or the record a live policy carries), 0 if none says."""
    import json

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


def _coarse(n: int) -> int:
    """``n`` rounded down to a grid of 4 steps an octave (8, 10, 12, 14, 16, 20, 24, ...)."""
    if n < 8:
        return n
    step = (1 << (n.bit_length() - 1)) // 4
    return n - n % step


class AZAgent(Agent):
    """Network-guided search (module docstring). Parameters (``OptionError`` outside these
    ranges, NaN and infinities included):

    ===================  ===================  ============================================
    ``iterations``       int, 1..10**7        simulations per move (800 unless ``ms``)
    ``ms``               number, 1..600000    milliseconds per move
    ``mode``             ``gumbel``/``puct``  root and selection rule (gumbel)
    ``considered``       int, 1..4096         Gumbel: actions considered at the root (16)
    ``c_visit``          number, 0..10**6     Gumbel: sigma's visit offset (50)
    ``c_scale``          number, 0..10**6     Gumbel: sigma's scale (0.1)
    ``rescale``          bool                 Gumbel: Q rescaled over siblings (True)
    ``c_puct``           number, 0..100       PUCT: exploration constant (0.5)
    ``virtual_loss``     number, 0..1         PUCT: a pending visit's share of a loss (0.5)
    ``determinizations`` int, 1..4096         states drawn per move (32)
    ``batch``            int, 1..1024         descents per network forward (32)
    ``temperature``      number, 0..100       0: the search's move; else sampled
    ``path``             text                 a policy ``.safetensors`` (default network)
    ``value_scale``      number, 0..10        scalar value heads: share = 0.5 + scale v
    ``prior_temp``       number, 0.01..100    priors = softmax(logits / prior_temp)
    ``anchor``           number, 0..1000      keep the rollout policy's move (game default)
    ``mix``              number, 0..1         share of a rollout in a leaf's value
    ``horizon``          int, -1..10**6       rollout moves (-1: to the end; game default)
    ``max_nodes``        int, 2..2**24        tree capacity (2**18)
    ``model``            NetPolicy            a loaded policy (Python only, not in a spec)
    ===================  ===================  ============================================

    ``prior_temp`` defaults to 1 for a self-play network and to the game's manifest value
    (``az={"prior_temp": ...}``) for a PPO network, whose sharp policies the search otherwise
    follows too closely."""

    name = "az"
    needs_state = True
    params: ClassVar[dict[str, Param]] = {
        "iterations": Param("int", 1, MAX_ITERATIONS, "simulations per move (default "
                            f"{DEFAULT_ITERATIONS} unless ms is given)", budget=True),
        "ms": Param("float", 1, MAX_MS, "milliseconds per move", budget=True),
        "mode": Param("str", doc="'gumbel' (default) or 'puct'", optional=False),
        "considered": Param("int", 1, 4096, "Gumbel: actions considered at the root (16)",
                            optional=False),
        "c_visit": Param("float", 0, 1e6, "Gumbel: sigma's visit offset (50)",
                         optional=False),
        "c_scale": Param("float", 0, 1e6, "Gumbel: sigma's scale (0.1)", optional=False),
        "rescale": Param("bool", doc="Gumbel: rescale Q over the children (mctx; True)",
                         optional=False),
        "c_puct": Param("float", 0, 100, "PUCT exploration constant (default 0.5)",
                        optional=False),
        "virtual_loss": Param("float", 0, 1, "PUCT: share of a loss a pending visit counts "
                              "for (default 0.5)", optional=False),
        "determinizations": Param("int", 1, 4096, "states drawn per move (default 32)",
                                  optional=False, budget=True),
        "batch": Param("int", 1, 1024, "descents per network forward (default 32)",
                       optional=False),
        "temperature": Param("float", 0, 100, "0: the search's move; else sample the "
                             "improved policy ** (1 / temperature)", optional=False),
        "path": Param("str", doc="a policy .safetensors (default: the game's self-play "
                      "network, else its PPO baseline)", file=True),
        "value_scale": Param("float", 0, 10, "scalar value heads: share = 0.5 + value_scale "
                             "* value (default 0.5)", optional=False),
        "prior_temp": Param("float", 0.01, 100, "priors are softmax(logits / prior_temp)"),
        "anchor": Param("float", 0, 1000, "keep the rollout policy's move unless clearly "
                        "beaten (game default; 0: none)"),
        "mix": Param("float", 0, 1, "share of a rollout in a leaf's value (game default)"),
        "horizon": Param("int", -1, 10**6, "rollout moves (-1: to the end; default: the "
                         "game's mcts)"),
        "max_nodes": Param("int", 2, MAX_NODES, "tree capacity (default 2**18)",
                           optional=False, budget=True),
        "model": Param("object", doc="a loaded NetPolicy", spec=False),
    }

    def __init__(self, env_id: str, seed: int | None = None, iterations: int | None = None,
                 ms: float | None = None, mode: str = "gumbel", considered: int = 16,
                 c_visit: float = 50.0, c_scale: float = 0.1, rescale: bool = True,
                 c_puct: float = 0.5,
                 virtual_loss: float = 0.5, determinizations: int = 32, batch: int = 32,
                 temperature: float = 0.0, path: str | None = None, value_scale: float = 0.5,
                 prior_temp: float | None = None, anchor: float | None = None,
                 mix: float | None = None, horizon: int | None = None,
                 max_nodes: int = 2**18, model: Any = None, **options: Any) -> None:
        p = check_params(type(self), {
            "iterations": iterations, "ms": ms, "mode": mode, "considered": considered,
            "c_visit": c_visit, "c_scale": c_scale, "rescale": rescale, "c_puct": c_puct,
            "virtual_loss": virtual_loss, "determinizations": determinizations,
            "batch": batch, "temperature": temperature, "path": path,
            "value_scale": value_scale, "prior_temp": prior_temp, "anchor": anchor,
            "mix": mix, "horizon": horizon, "max_nodes": max_nodes})
        from card_envs.core.errors import OptionError

        if p["mode"] not in ("gumbel", "puct"):
            raise OptionError(f"az: mode must be 'gumbel' or 'puct', got {p['mode']!r}")
        super().__init__(env_id, seed, **options)
        iterations, ms = p["iterations"], p["ms"]
        if iterations is None and ms is None:
            iterations = DEFAULT_ITERATIONS
        self.iterations, self.ms = iterations, ms
        self.mode, self.considered = p["mode"], p["considered"]
        self.c_visit, self.c_scale, self.rescale = p["c_visit"], p["c_scale"], p["rescale"]
        self.c_puct, self.virtual_loss = p["c_puct"], p["virtual_loss"]
        self.batch, self.temperature = p["batch"], p["temperature"]
        self.value_scale = p["value_scale"]
        searcher = game_searcher(env_id)
        self._searcher = searcher
        self.anchor = float(searcher.default_anchor if p["anchor"] is None else p["anchor"])
        tuned = manifest(env_id).az  # this game's measured defaults
        self.mix = float(tuned.get("mix", 0.0) if p["mix"] is None else p["mix"])
        self.horizon = int(searcher.default_horizon if p["horizon"] is None else p["horizon"])
        known = env_class(env_id).game_class.option_specs()
        game_opts = {k: v for k, v in options.items() if k in known}
        self.search_engine = BatchSearch(env_id, num_games=1, leaves=self.batch,
                                         max_nodes=p["max_nodes"],
                                         determinizations=p["determinizations"],
                                         considered=self.considered, **game_opts)
        self.engine = self.search_engine.engine
        g = self.engine.game
        self.determinizations = self.search_engine.determinizations
        self.policy, self.path = self._policy(env_id, p["path"], model, g, game_opts)
        n = g.num_players
        own_values = getattr(self.policy.net, "value_dim", 1) == n
        if p["prior_temp"] is None:
            tuned = manifest(env_id).az  # this game's measured default for PPO networks
            p["prior_temp"] = 1.0 if own_values else float(tuned.get("prior_temp", 1.0))
        self.prior_temp = p["prior_temp"]
        self.shaping = 0.0 if own_values else _training_shaping(self.policy, self.path)
        pot = manifest(env_id).train.potential if self.shaping else None
        self.potential = load(pot) if pot else None
        if self.potential is None:
            self.shaping = 0.0
        self.evaluator = NetEvaluator(self.policy, value_scale=self.value_scale,
                                      shaping=self.shaping, potential=self.potential)
        self._seeds = np.zeros(1, np.uint64)
        self._mask = np.zeros(g.num_actions, np.int8)
        self._obs = np.zeros(g.obs_size, g.obs_dtype)
        #: network forward passes (all moves), and per the last search: simulations, leaves
        #: evaluated by the network, forwards; mean value and improved policy per action
        self.forwards = 0
        self.last_forwards = self.last_iterations = self.last_leaves = 0
        self.last_values = np.full(g.num_actions, np.nan)
        self.last_policy = np.zeros(g.num_actions)
        self._rate = 0.0  # simulations per second measured on the last moves (ms budgets)
        self._warm_up()

    @staticmethod
    def _policy(env_id: str, path: str | None, model: Any, g: Any,
                game_opts: dict[str, Any]) -> tuple[Any, str | None]:
        """The NetPolicy to search with (``model``, the file ``path`` or the default)."""
        if model is None:
            if path is None:
                path = str(default_network(resolve_env_id(env_id), g.num_players))
            if not str(path).endswith(".safetensors"):
                raise WeightsError(f"az agent: {path!r} is not a policy .safetensors saved by "
                                   "card-envs' trainers (az needs card-envs' own network)")
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
        if getattr(model.net, "value_dim", 1) not in (1, g.num_players):
            raise WeightsError(f"az agent: the network's value head has "
                               f"{model.net.value_dim} outputs; this game has "
                               f"{g.num_players} seats")
        return model, path

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        raise TypeError(f"{type(self).__name__} searches the game: call act_state(state, obs, "
                        "mask) or act_env(env) (the arena does)")

    def _warm_up(self) -> None:
        """Compile now and measure the simulation rate (a short search of a fresh deal), so
        that no move pays for compiling."""
        state = self.engine.new_state(0)
        forwards = self.forwards
        self._run(state, 0, 2, None)
        t0 = time.perf_counter()
        self._run(state, 1, max(2, 2 * self.batch), None)
        dt = time.perf_counter() - t0
        self._rate = self.last_iterations / dt if dt > 0 else 0.0
        self.forwards = forwards

    def _run(self, state: np.ndarray, seed: int, iterations: int | None,
             ms: float | None) -> Any:
        """The search from ``state``; the result of the batched search."""
        bs = self.search_engine
        self._seeds[0] = np.uint64(seed)
        deadline, stop = None, 0
        if iterations is None:
            assert ms is not None
            rate = self._rate if self._rate > 0 else 1000.0
            # the plan the sequential halving follows: a little more than the last moves'
            # rate allows (the deadline cuts it), so that a move uses its whole budget; on a
            # coarse grid (4 steps an octave), so that its schedule is computed once and reused
            iterations = _coarse(int(min(MAX_ITERATIONS,
                                         max(2 * self.considered, 1.2 * rate * ms / 1000.0))))
            deadline = time.perf_counter() + ms / 1000.0
            stop = 1
        t0 = time.perf_counter()
        res = bs.run(state[None, :], self.evaluator, iterations, self._seeds,
                     mode=self.mode, noise=False, c_visit=self.c_visit, c_scale=self.c_scale,
                     rescale=self.rescale, mix=self.mix, horizon=self.horizon,
                     c_puct=self.c_puct, virtual_loss=self.virtual_loss,
                     prior_temp=self.prior_temp, deadline=deadline, stop=stop)
        dt = time.perf_counter() - t0
        self.last_iterations = int(res.simulations[0])
        self.last_leaves, self.last_forwards = res.leaves, res.forwards
        self.forwards += res.forwards
        if ms is not None and dt > 0:
            rate = self.last_iterations / dt
            self._rate = rate if self._rate <= 0 else 0.5 * (self._rate + rate)
        self.last_values = res.q[0].copy()
        self.last_policy = res.pi[0].copy()
        return res

    def search(self, state: np.ndarray) -> tuple[np.ndarray, float]:
        """Search from ``state`` (the seat to act is the searcher): ``(visits per action at
        the root, root value)``, the value being the searcher's expected share of the win in
        [0, 1]. ``last_policy`` holds the improved policy (the self-play policy target),
        ``last_values`` the mean value of each visited root action."""
        seat = int(state[K.CUR])
        if seat < 0:
            raise ValueError("the game is over: no move to search")
        res = self._run(state, self.rng.getrandbits(64), self.iterations, self.ms)
        self._last_action = int(res.action[0])
        return res.visits[0].astype(np.int64), float(res.value[0])

    def act_state(self, state: np.ndarray, observation: np.ndarray,
                  action_mask: np.ndarray) -> int:
        legal = legal_actions(action_mask)
        if legal.size == 1:
            return int(legal[0])
        visits, _ = self.search(state)
        if self.temperature > 0:
            p = self.last_policy[legal] ** (1.0 / self.temperature)
            if not np.isfinite(p).all() or p.sum() <= 0:
                p = np.ones(legal.size)
            return int(self.rng.choices(legal.tolist(), weights=(p / p.sum()).tolist())[0])
        best = self._last_action
        if self.anchor > 0.0:
            return anchored(self, self._searcher.rollout_policy, state, action_mask, best,
                            visits, self.last_values)
        return best
