"""The batched search (``card_envs.agents.az_search``): many games searched at once give each
game what it gets alone (whatever the batch and the thread count), sequential halving follows
``mctx``'s schedule, the improved policy is a distribution over the legal actions, finished
games and max-n backups keep every value a share, and hidden information stays hidden."""

from __future__ import annotations

import numpy as np
import pytest

import card_envs
from card_envs.agents.az_search import BatchSearch, NetEvaluator
from card_envs.agents.az_tree import CHILD, EXP, MOVER, PEND, SIB, VISITS, considered_visits
from card_envs.agents.net import load_policy
from card_envs.agents.ppo import baseline_path
from card_envs.core import kernels as K
from card_envs.core.errors import OptionError
from test_search import GAMES, _random_state


class HashEvaluator:
    """A network stand-in whose every output is a function of its own row alone (so a leaf's
    evaluation cannot depend on the batch it came in): logits and shares from a hash of the
    observation."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __call__(self, obs, masks):
        rows = obs.shape[0]
        h = (np.abs(obs.astype(np.int64)) * (np.arange(obs.shape[1]) + 7)).sum(1) % 1009
        acts = np.concatenate([np.flatnonzero(m) for m in masks]).astype(np.int64)
        offsets = np.concatenate([[0], np.cumsum(masks.sum(1))]).astype(np.int64)
        seg = np.repeat(np.arange(rows), np.diff(offsets))
        logits = ((h[seg] * 31 + acts * 17) % 23) / 7.0
        raw = (h[:, None] * (np.arange(self.n) + 3)) % 11 + 1.0
        return logits.astype(np.float64), acts, offsets, raw / raw.sum(1, keepdims=True)


def _positions(env_id: str, n: int, count: int) -> np.ndarray:
    return np.stack([_random_state(env_id, n, s, 3 + 5 * s).state_array for s in range(count)])


def test_sequential_halving_schedule_is_mctx_s() -> None:
    assert considered_visits(1, 5) == [0, 1, 2, 3, 4]
    assert considered_visits(2, 6) == [0, 0, 1, 1, 2, 2]
    assert considered_visits(4, 16) == [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5]


@pytest.mark.parametrize("env_id", list(GAMES))
def test_a_batch_gives_each_game_what_it_gets_alone(env_id: str) -> None:
    """Four positions searched together equal each searched alone; in two games (one of
    perfect information, one hidden) also as 40 games on 2 threads, the parallel build (its
    code is the serial one's template: compiling it for every game would only add minutes)."""
    n = 3 if env_id in ("slide_v0", "isflak_v0") else 2
    states = _positions(env_id, n, 4)
    seeds = np.array([11, 12, 13, 14], np.uint64)
    ev = HashEvaluator(n)
    opts = {**GAMES[env_id], "num_players": n}
    outs = []
    builds = ((1, 4), (2, 40)) if env_id in ("isflak_v0", "flipology_v0") else ((1, 4),)
    for threads, games in builds:
        bs = BatchSearch(env_id, num_games=games, leaves=2, threads=threads, **opts)
        big = np.concatenate([states] + [states[:1]] * (games - 4))
        s = np.concatenate([seeds, np.full(games - 4, 99, np.uint64)])
        r = bs.run(big, ev, 24, s)
        outs.append((r.action[:4].copy(), r.visits[:4].copy(), r.pi[:4].copy()))
    alone = BatchSearch(env_id, num_games=1, leaves=2, **opts)
    for i in range(4):
        r = alone.run(states[i:i + 1], ev, 24, seeds[i:i + 1])
        for act, vis, pi in outs:
            assert act[i] == r.action[0] and np.array_equal(vis[i], r.visits[0])
            assert np.allclose(pi[i], r.pi[0])


@pytest.mark.parametrize("env_id", list(GAMES))
@pytest.mark.parametrize("mode", ["gumbel", "puct"])
def test_outputs_are_legal_distributions_and_shares(env_id: str, mode: str) -> None:
    n = 2
    states = _positions(env_id, n, 3)
    bs = BatchSearch(env_id, num_games=3, leaves=4, **GAMES[env_id])
    r = bs.run(states, HashEvaluator(n), 40, np.arange(3, dtype=np.uint64), mode=mode,
               noise=True)
    g = bs.game
    for i in range(3):
        mask = np.zeros(g.num_actions, np.int8)
        g.k_legal_mask(states[i], g.cfg, mask)
        assert mask[r.action[i]] == 1
        assert set(np.flatnonzero(r.pi[i])) <= set(np.flatnonzero(mask))
        assert np.isclose(r.pi[i].sum(), 1.0) and r.visits[i].sum() == 40
        seen = r.visits[i] > 0
        assert ((r.q[i][seen] >= 0) & (r.q[i][seen] <= 1)).all() and 0 <= r.value[i] <= 1
        used = bs.tree[i, :bs.meta[i]]
        assert not used[:, PEND].any() and used[0, VISITS] == 40
        assert ((bs.w[i, 1:bs.meta[i]] >= 0) & (bs.w[i, 1:bs.meta[i]]
                                                 <= used[1:, VISITS] + 1e-9)).all()


def test_gumbel_root_considers_the_top_actions_and_halves() -> None:
    """Without noise the root first tries ``considered`` actions (those with the highest
    prior), and the sequential halving leaves the most visits with one of them."""
    env_id = "isflak_v0"
    states = _positions(env_id, 2, 6)
    pol = load_policy(baseline_path(env_id), env_id, 2)
    bs = BatchSearch(env_id, num_games=6, considered=4)
    r = bs.run(states, NetEvaluator(pol), 32, np.arange(6, dtype=np.uint64))
    for i in range(6):
        kids = bs.root_children(i)
        visited = [a for a, v in kids if v > 0]
        assert len(visited) == min(4, len(kids))
        assert r.visits[i][r.action[i]] == r.visits[i].max()


def test_finished_games_are_valued_by_their_result() -> None:
    """A position one move from the end: every simulation reaches the finished game, no leaf
    goes to the network, and the values are the win shares."""
    env = card_envs.make_raw("isflak_v0")
    env.reset(seed=3)
    rng = np.random.default_rng(0)
    last = None
    while True:
        obs = env.observe(env.agent_selection)
        legal = np.flatnonzero(obs["action_mask"])
        before = env.state_array.copy()
        env.step(int(rng.choice(legal)))
        if env.terminations[env.agent_selection]:
            last = before
            break
    bs = BatchSearch("isflak_v0", num_games=1, leaves=4)
    r = bs.run(last[None], HashEvaluator(2), 16, np.array([5], np.uint64))
    assert r.leaves == 1  # the root only: the rest were finished games
    q = r.q[0][r.visits[0] > 0]
    assert set(np.round(q, 6)) <= {0.0, 0.5, 1.0}


def test_hidden_information_stays_hidden() -> None:
    """A position and a resample of it (what the searcher cannot see redrawn) give the same
    search, batched: every game with hidden information."""
    for env_id in ("slide_v0", "op_glad_ijs_v0", "flipology_v0", "if_it_fits_v0"):
        env = _random_state(env_id, 2, 4, 13)
        seat = int(env.state_array[K.CUR])
        other = env.resample(seat, rng=7)
        assert not np.array_equal(other.state_array, env.state_array)
        pol = load_policy(baseline_path(env_id), env_id, 2, GAMES[env_id])
        bs = BatchSearch(env_id, num_games=2, leaves=4, **GAMES[env_id])
        states = np.stack([env.state_array, other.state_array])
        r = bs.run(states, NetEvaluator(pol), 48, np.array([9, 9], np.uint64))
        assert r.action[0] == r.action[1] and np.array_equal(r.visits[0], r.visits[1])


def test_model_others_keeps_only_the_searchers_nodes() -> None:
    states = _positions("op_glad_ijs_v0", 3, 2)
    bs = BatchSearch("op_glad_ijs_v0", num_games=2, leaves=4, num_players=3, max_turned=40)
    assert bs.model_others
    bs.run(states, HashEvaluator(3), 32, np.array([1, 2], np.uint64))
    for i in range(2):
        seat = int(states[i][K.CUR])
        assert (bs.tree[i, 1:bs.meta[i], MOVER] == seat).all()


def test_settings_and_inputs_are_checked() -> None:
    for kw, name in (({"num_games": 0}, "num_games"), ({"leaves": 0}, "leaves"),
                     ({"max_nodes": 1}, "max_nodes"), ({"determinizations": True},
                                                       "determinizations"),
                     ({"considered": 1.5}, "considered")):
        with pytest.raises(OptionError, match=name):
            BatchSearch("slide_v0", **kw)
    bs = BatchSearch("slide_v0", num_games=2)
    with pytest.raises(ValueError, match="states of shape"):
        bs.run(np.zeros((3, bs.game.state_size), np.int32), HashEvaluator(2), 4,
               np.zeros(3, np.uint64))
    with pytest.raises(OptionError, match="mode"):
        bs.run(_positions("slide_v0", 2, 2), HashEvaluator(2), 4, np.zeros(2, np.uint64),
               mode="uct")


def test_a_full_tree_stops_growing_and_the_search_goes_on() -> None:
    states = _positions("slide_v0", 2, 1)
    bs = BatchSearch("slide_v0", num_games=1, leaves=4, max_nodes=40)
    r = bs.run(states, HashEvaluator(2), 200, np.array([3], np.uint64))
    assert bs.meta[0] <= 40 and r.visits[0].sum() == 200
    t = bs.tree[0]
    ch = int(t[0, CHILD])
    while ch >= 0:
        assert t[ch, EXP] in (0, 1)
        ch = int(t[ch, SIB])


@pytest.mark.parametrize("env_id", ["isflak_v0", "op_glad_ijs_v0"])
def test_rollouts_mixed_into_leaf_values(env_id: str) -> None:
    """With ``mix`` every leaf is also played on by the game's rollout policy (to the end, or
    ``horizon`` moves): its shares are win shares summing to 1, the search is still
    deterministic, and the rollouts change the values."""
    states = _positions(env_id, 2, 2)
    opts = GAMES[env_id]
    runs = []
    for mix in (0.5, 0.5, 0.0):
        bs = BatchSearch(env_id, num_games=2, leaves=4, **opts)
        r = bs.run(states, HashEvaluator(2), 40, np.array([4, 5], np.uint64), mix=mix,
                   horizon=24 if env_id == "op_glad_ijs_v0" else -1)
        runs.append((r.visits.copy(), r.value.copy()))
        if mix:
            roll = bs.leaf_roll[:8]
            assert np.allclose(roll.sum(1), 1.0) and ((roll >= 0) & (roll <= 1)).all()
    assert np.array_equal(runs[0][0], runs[1][0]) and np.array_equal(runs[0][1], runs[1][1])
    assert not np.allclose(runs[0][1], runs[2][1])
