"""Helpers of ``tests/core/test_stress.py``: long random runs of the batched engine, AEC games with
random, heuristic and search agents mixed in, and the arena's consistency checks. Each helper
asserts the invariants as it goes and returns what it counted, so a test can also check that
the run really did what it claims (games finished, states checked)."""

from __future__ import annotations

import hashlib
import itertools
import math
import random
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numba
import numpy as np

import card_envs
from card_envs.agents.registry import make_agent
from card_envs.arena import ArenaResult, deal_seed, finish_ranks
from card_envs.core import kernels as K
from card_envs.core.game import Game

# the agent mix of the AEC runs: cheap search (few iterations and determinizations)
AGENT_POOL: dict[str, str] = {
    "random": "random",
    "heuristic": "heuristic",
    "mcts": "mcts:iterations=8,determinizations=2",
}


def agent_pool(env_id: str) -> dict[str, str]:
    """:data:`AGENT_POOL` without the heuristic for a game whose manifest names none."""
    from card_envs.core.registry import manifest

    has = manifest(env_id).heuristic is not None
    return {k: v for k, v in AGENT_POOL.items() if has or k != "heuristic"}


def length_cap(game: Game) -> int:
    """An upper bound on the number of actions of one game (a whole series for a Flipology
    series): the game's own ``max_length()``, derived from its rules."""
    cap = game.max_length()
    assert cap is not None and cap > 0, f"{game.env_id}: Game.max_length() gives no bound"
    return cap


def check_outcome(game: Game, points: np.ndarray, winners: np.ndarray,
                  final_rewards: np.ndarray, returns: np.ndarray) -> None:
    """The end of a game: ``points, winners`` from ``game.outcome``, the rewards of its last
    step and the sum of every reward of the game (per seat), as the reward mode says."""
    n = game.num_players
    assert points.shape == (n,) and winners.shape == (n,)
    assert set(np.unique(winners).tolist()) <= {0, 1} and winners.sum() >= 1, \
        f"winners {winners.tolist()}: at least one seat wins"
    wp = points[winners == 1]
    dirs = [d for d in game.winner_points
            if np.all(wp == (points.max() if d > 0 else points.min()))]
    assert dirs, f"winners {winners.tolist()} do not hold the extreme points {points.tolist()}"
    mode = game.options["reward_mode"]
    if mode == "cards":  # Op Glad IJs: each window pays the change of every won pile
        assert game.env_id == "op_glad_ijs_v0"
        assert np.array_equal(returns, points), \
            f"card rewards summed to {returns.tolist()}, won piles are {points.tolist()}"
        return
    assert np.array_equal(returns, final_rewards), "rewards before the last step"
    if mode == "win":
        expect = np.zeros(n) if winners.all() else np.where(winners == 1, 1.0, -1.0)
        assert np.array_equal(final_rewards, expect), \
            f"win rewards {final_rewards.tolist()} for winners {winners.tolist()}"
    elif mode == "points":
        assert any(np.allclose(final_rewards, d * points) for d in dirs), \
            f"points rewards {final_rewards.tolist()} for points {points.tolist()}"
        assert np.all(final_rewards[winners == 1] == final_rewards.max())
    else:
        raise AssertionError(f"unknown reward mode {mode!r}")


# --- the batched engine -------------------------------------------------------------------
@contextmanager
def one_numba_thread() -> Iterator[None]:
    """Run numba's parallel code on the calling thread only, as a serial batch should.

    Needed because numba's disk cache does not tell ``parallel=True`` from ``parallel=False``:
    ``vector._sample_serial`` and ``vector._sample_parallel`` (one Python function) share one
    cache entry, so a serial batch may sample with the cached parallel build and wake the
    OpenMP workers on every call (stalls of ~8 ms per call on a busy machine)."""
    before = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        yield
    finally:
        numba.set_num_threads(before)


@dataclass
class BatchedStats:
    """What :func:`run_batched` did."""

    steps: int = 0  # game steps (vector steps x batch size)
    finished: int = 0  # games that ended (terminated or truncated)
    truncated: int = 0
    min_len: int = 2**62
    max_len: int = 0
    state_checks: int = 0  # check_state calls on running states
    final_checks: int = 0  # check_state calls on final states
    rewarded: int = 0  # steps with a non-zero reward
    cap: int = 0


def run_batched(env_id: str, options: dict[str, Any], steps: int, num_envs: int, seed: int,
                sample_every: int = 4, final_every: int = 1) -> BatchedStats:
    """Random play on ``card_envs.vector`` (``vec.step(vec.sample_actions())``) for at least
    ``steps`` steps and until every game of the batch has ended once. Checked after every step
    on every game: running states (``DONE`` clear, ``CUR`` = ``current_player``, ``STEPS`` =
    actions since the deal, below the length cap), non-empty 0/1 masks, observations within
    ``obs_low``/``obs_high``, rewards only where the reward mode pays. Every game that ends is
    replayed from a copy of its state before the last step through ``Engine``: same rewards,
    a finished state (``check_state`` every ``final_every``-th), no legal action, every seat's
    final observation in bounds, outcome and rewards consistent (:func:`check_outcome`),
    and the next game dealt from the RNG the finished one carried. Every ``sample_every``-th
    step one game's state goes through ``check_state`` and its observation and mask are
    recomputed by ``Engine``."""
    vec = card_envs.vector.make(env_id, num_envs=num_envs, seed=seed, **options)
    game, eng = vec.game, card_envs.Engine(vec.game)
    n, B = game.num_players, num_envs
    cap = length_cap(game)
    low, high = game.obs_low, game.obs_high
    assert np.all(low <= high), "declared observation bounds are empty somewhere"
    dense = game.options["reward_mode"] not in ("win", "points")
    stats = BatchedStats(cap=cap)
    rows = np.arange(B)
    pre = np.empty_like(vec.states)
    since = np.zeros(B, np.int64)  # actions since the deal, per game
    returns = np.zeros((B, n), np.float64)  # rewards of the running game, summed
    ended = np.zeros(B, np.bool_)
    fresh = np.zeros(game.state_size, np.int32)
    ceiling = steps + B * (cap + 1)
    k = 0
    while stats.steps < steps or not ended.all():
        assert stats.steps < ceiling, f"games {np.flatnonzero(~ended).tolist()} never ended"
        states, cur, obs, masks = vec.states, vec.current_player, vec.observations, \
            vec.action_masks
        # --- every running game, before its step
        assert np.all(states[:, K.DONE] == 0) and np.array_equal(states[:, K.CUR], cur)
        assert np.all((cur >= 0) & (cur < n))
        assert np.array_equal(states[:, K.STEPS], since), "STEPS != actions since the deal"
        assert np.all(since < cap), f"a game runs longer than the cap {cap}"
        assert np.all(masks.view(np.uint8) <= 1) and np.all(masks.any(axis=1)), \
            "masks are 0/1 with a legal action in every running game"
        assert np.all(obs >= low) and np.all(obs <= high), \
            f"observation out of bounds in games {np.flatnonzero(((obs < low) | (obs > high)).any(axis=1)).tolist()}"  # noqa: E501
        if k % sample_every == 0:
            i = (k // sample_every * 7919) % B
            s = states[i].copy()
            game.check_state(s)
            assert np.array_equal(eng.observe(s, int(cur[i])), obs[i])
            assert np.array_equal(eng.legal_mask(s), masks[i])
            stats.state_checks += 1
        # --- the step
        np.copyto(pre, states)
        before = cur.copy()
        actions = vec.sample_actions().copy()
        assert np.all(masks[rows, actions] == 1), "sample_actions drew a masked-out action"
        _, obs, masks, rewards, term, trunc = vec.step(actions)
        stats.steps += B
        k += 1
        since += 1
        done = term | trunc
        assert not np.any(term & trunc)
        paid = (rewards != 0).any(axis=1)
        stats.rewarded += int(paid.sum())
        if dense:  # a window resolves (and pays) when its last seat has chosen
            assert not np.any(paid & (before != n - 1)), "card reward outside a resolution"
        else:
            assert not np.any(paid & ~done), "reward before the end of a game"
        returns += rewards
        for i in np.flatnonzero(done):
            s = pre[i].copy()
            r = eng.step(s, int(actions[i]))
            assert np.array_equal(r, rewards[i]), "batched rewards != Engine rewards"
            want = K.DONE_TRUNCATED if trunc[i] else K.DONE_TERMINATED
            assert s[K.DONE] == want and s[K.CUR] == -1
            length = int(since[i])
            assert s[K.STEPS] == length <= cap
            stats.min_len, stats.max_len = min(stats.min_len, length), max(stats.max_len, length)
            if stats.finished % final_every == 0:
                game.check_state(s)
                stats.final_checks += 1
            assert not eng.legal_mask(s).any(), "legal actions after the end"
            for seat in range(n):
                o = eng.observe(s, seat)
                assert np.all(o >= low) and np.all(o <= high), "final observation out of bounds"
            points, winners = game.outcome(s)
            check_outcome(game, points, winners, rewards[i].astype(np.float64), returns[i])
            fresh[:] = 0  # auto-reset: the next game is dealt from the finished one's RNG
            fresh[K.RNG_LO], fresh[K.RNG_HI] = s[K.RNG_LO], s[K.RNG_HI]
            game.k_init(fresh, game.cfg)
            assert np.array_equal(fresh, vec.states[i]), "auto-reset deal != RNG's next deal"
            stats.finished += 1
            stats.truncated += int(trunc[i])
        since[done] = 0
        returns[done] = 0.0
        ended |= done
    return stats


# --- the AEC env with agents ----------------------------------------------------------------
@dataclass
class AecStats:
    """What :func:`run_aec` did."""

    steps: int = 0  # actions (dead steps not counted)
    games: int = 0
    truncated: int = 0
    max_len: int = 0
    state_checks: int = 0
    moves: Counter = field(default_factory=Counter)  # actions per agent kind


def run_aec(env_id: str, options: dict[str, Any], steps: int, seed: int,
            pool: dict[str, str] | None = None, check_every: int = 50) -> AecStats:
    """Whole AEC games (raw env: an illegal action raises) until ``steps`` actions, each seat
    of each game played by an agent kind drawn from ``pool``; search agents get a copy of the
    state, which they must leave unchanged. Checked at every step: :func:`check_aec_step`;
    every ``check_every``-th step and at every end ``check_state``; at the end
    :func:`check_aec_end`."""
    pool = agent_pool(env_id) if pool is None else pool
    env = card_envs.make_raw(env_id, **options)
    game, n = env.game, env.game.num_players
    cap = length_cap(game)
    rnd = random.Random(seed)
    agents = {kind: [make_agent(spec, env_id, seed=seat, **options) for seat in range(n)]
              for kind, spec in pool.items()}
    stats = AecStats()
    env.reset(seed=seed)
    while stats.steps < steps:
        if stats.games:  # alternate continuing the RNG with fresh seeds
            env.reset(seed=rnd.randrange(2**31) if stats.games % 2 else None)
        kinds = [rnd.choice(list(pool)) for _ in range(n)]
        players = [agents[kind][seat] for seat, kind in enumerate(kinds)]
        for p in players:
            p.reset(seed=rnd.getrandbits(32))
        length = _play_aec(env, game, players, kinds, cap, check_every, stats)
        stats.games += 1
        stats.steps += length
        stats.max_len = max(stats.max_len, length)
    return stats


def _play_aec(env: Any, game: Game, players: list[Any], kinds: list[str], cap: int,
              check_every: int, stats: AecStats) -> int:
    """One game through ``env.agent_iter()``; returns its number of actions."""
    possible = list(env.possible_agents)
    n = len(possible)
    space = env.observation_space(possible[0])
    dense = game.options["reward_mode"] not in ("win", "points")
    returns = dict.fromkeys(possible, 0.0)
    length = dead = 0
    final: np.ndarray | None = None  # the rewards of the last action
    for agent in env.agent_iter():
        assert agent == env.agent_selection
        obs, rew, term, trunc, info = env.last()
        assert isinstance(rew, float)
        returns[agent] += rew
        assert space.contains(obs), f"observation of {agent} outside its space"
        state = env.state_array
        if term or trunc:
            if final is None:
                final = check_aec_end(env, game)
            assert not obs["action_mask"].any() and dead < n
            env.step(None)
            dead += 1
            assert agent not in env.agents
            continue
        assert final is None and env.agents == possible and state[K.STEPS] == length
        assert not any(env.terminations.values()) and not any(env.truncations.values())
        assert all(v == {} for v in env.infos.values())
        assert dense or rew == 0.0, "reward before the end of the game"
        mask = obs["action_mask"]
        legal = np.flatnonzero(mask).tolist()
        assert legal and legal == game.legal_actions(state)
        for other in possible:
            if other != agent:
                assert not env.observe(other)["action_mask"].any(), "a waiting seat may act"
        if length % check_every == 0:
            game.check_state(state.copy())
            stats.state_checks += 1
        seat = possible.index(agent)
        player = players[seat]
        if player.needs_state:
            copy = state.copy()
            action = player.act_state(copy, obs["observation"], mask)
            assert np.array_equal(copy, state), f"{kinds[seat]} changed the state it was given"
        else:
            action = player.act(obs["observation"], mask)
        assert mask[action] == 1, f"{kinds[seat]} chose masked-out action {action}"
        env.step(action)
        stats.moves[kinds[seat]] += 1
        length += 1
        assert length <= cap, f"game longer than the cap {cap}"
    assert final is not None and dead == n and env.agents == []
    state = env.state_array
    stats.truncated += int(state[K.DONE] == K.DONE_TRUNCATED)
    points, winners = game.outcome(state)
    check_outcome(game, points, winners, final, np.array([returns[a] for a in possible]))
    return length


def check_aec_end(env: Any, game: Game) -> np.ndarray:
    """The moment a game is over: every seat terminated (or every seat truncated, as the
    state says), the final infos are the outcome, ``check_state`` passes, no legal action.
    Returns the rewards of the last action, per seat."""
    state = env.state_array
    assert state[K.DONE] in (K.DONE_TERMINATED, K.DONE_TRUNCATED) and state[K.CUR] == -1
    trunc = state[K.DONE] == K.DONE_TRUNCATED
    game.check_state(state.copy())
    assert game.legal_actions(state) == []
    points, winners = game.outcome(state)
    for i, a in enumerate(env.possible_agents):
        assert env.terminations[a] == (not trunc) and env.truncations[a] == trunc
        assert env.infos[a] == {"points": float(points[i]), "winner": bool(winners[i])}
    return np.array([env.rewards[a] for a in env.possible_agents])


# --- the arena ------------------------------------------------------------------------------
def arena_signature(res: ArenaResult) -> dict[str, Any]:
    """A result's JSON without what may differ between equal runs (wall-clock times and the
    number of workers)."""
    d = res.to_json()
    out = {k: v for k, v in d.items() if k not in ("elapsed", "workers")}
    out["log"] = [{k: v for k, v in g.items() if k != "think_ms"} for g in d["log"]]
    out["agents"] = [{k: v for k, v in a.items() if k != "think_ms"} for a in d["agents"]]
    return out


def check_arena(res: ArenaResult, env_id: str, options: dict[str, Any], pool: list[str],
                games: int, n: int, seed: int) -> None:
    """A run is complete and consistent: every game of every lineup played once, in order,
    over the duplicate deals (seat rotation, digests recomputed from the deal seeds), ranks
    from points and winners, and every statistic recomputed from the log."""
    k = len(pool)
    lineups = [list(range(n))] if k <= n else [list(c) for c in
                                                itertools.combinations(range(k), n)]
    assert res.total_games == len(res.log) == games * len(lineups)
    assert res.games == games and res.num_players == n and res.seed == seed
    labels = res.labels
    assert len(labels) == (k if k > n else n) == len(set(labels))
    assert [[labels[j] for j in m] for m in lineups] == res.lineups
    deals = -(-games // n)
    assert res.deal_seeds == [deal_seed(seed, b) for b in range(deals)]
    env = card_envs.make_raw(env_id, num_players=n, **options)
    digests = []
    for s in res.deal_seeds:
        env.reset(seed=s)
        digests.append(hashlib.sha1(env.state_array.tobytes()).hexdigest())
    assert len(set(digests)) == deals, "two deals dealt the same cards"
    for i, g in enumerate(res.log):
        lu, gi = divmod(i, games)
        deal, rot = divmod(gi, n)
        assert (g["game"], g["lineup"], g["deal"], g["rotation"]) == (i, lu, deal, rot)
        assert g["seats"] == [labels[lineups[lu][(s - rot) % n]] for s in range(n)]
        assert g["digest"] == digests[deal]
        assert len(g["points"]) == len(g["winners"]) == len(g["moves"]) == n
        assert any(g["winners"]) and g["ranks"] == finish_ranks(g["points"], g["winners"])
        assert all(m >= 1 for m in g["moves"]), "every seat acts in every game"
    # statistics, recomputed
    for st in res.stats:
        mine = [(g, g["seats"].index(st.label)) for g in res.log if st.label in g["seats"]]
        assert st.games == len(mine) == sum(st.seat_games)
        if games % n == 0:
            assert len(set(st.seat_games)) == 1, f"{st.label} not seated evenly"
        wins = [1.0 / sum(g["winners"]) for g, s in mine if g["winners"][s]]
        assert math.isclose(st.wins, sum(wins), abs_tol=1e-9)
        assert st.sole_wins == wins.count(1.0) and st.ties == len(wins) - wins.count(1.0)
        assert math.isclose(st.points_sum, sum(g["points"][s] for g, s in mine), abs_tol=1e-6)
        assert st.moves == sum(g["moves"][s] for g, s in mine)
    assert math.isclose(sum(st.wins for st in res.stats), res.total_games), \
        "every game hands out exactly one win"
    m = res.matrix
    assert m is not None and m.labels == labels
    for a, b in itertools.permutations(range(len(labels)), 2):
        both = sum(1 for g in res.log if labels[a] in g["seats"] and labels[b] in g["seats"])
        assert m.games[a][b] == m.games[b][a] == both
        assert math.isclose(m.score[a][b] + m.score[b][a], both)
    assert [r.label for r in res.ratings] == labels
    assert all(math.isfinite(r.mu) and r.sigma > 0 for r in res.ratings)
    back = ArenaResult.from_json(res.to_json())
    assert back.to_json() == res.to_json()
