"""Search agents (``card_envs.agents.search``,
``card_envs.agents.op_glad_ijs.OpGladIJsSearchAgent``): legal moves from random states for every
agent of every game, determinism, no peeking at hidden information, max-n for many players,
and a tiny budget that significantly beats random."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import card_envs
from card_envs.agents.registry import agent_names, make_agent, parse_spec
from card_envs.agents.search import SearchAgent
from card_envs.arena import run_arena
from card_envs.core import kernels as K

# small options where a game allows them keep random play short
GAMES: dict[str, dict] = {
    "slide_v0": {},
    "isflak_v0": {},
    "op_glad_ijs_v0": {"max_turned": 40},
    "flipology_v0": {},
    "if_it_fits_v0": {},
}
HIDDEN = [g for g in GAMES if g != "isflak_v0"]


def _random_state(env_id: str, n: int, seed: int, steps: int) -> card_envs.core.env.CardEnv:
    """An env after up to ``steps`` random moves from deal ``seed`` (not finished)."""
    env = card_envs.make_raw(env_id, num_players=n, **GAMES[env_id])
    env.reset(seed=seed)
    rnd = random.Random(seed)
    for _ in range(steps):
        obs = env.observe(env.agent_selection)
        legal = np.flatnonzero(obs["action_mask"])
        env.step(int(legal[rnd.randrange(legal.size)]))
        if env.terminations[env.agent_selection] or env.truncations[env.agent_selection]:
            env.reset(seed=seed + 1)
            break
    return env


_AGENTS: dict[tuple[str, int, str], object] = {}


def _agent(spec: str, env_id: str, n: int):
    key = (spec, env_id, n)
    if key not in _AGENTS:
        _AGENTS[key] = make_agent(spec, env_id, seed=0, num_players=n, **GAMES[env_id])
    return _AGENTS[key]


@pytest.mark.parametrize("env_id", list(GAMES))
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), steps=st.integers(0, 60), n=st.sampled_from([2, 3]))
def test_agents_never_choose_a_masked_action(env_id: str, seed: int, steps: int,
                                             n: int) -> None:
    env = _random_state(env_id, n, seed, steps)
    obs = env.observe(env.agent_selection)
    mask = obs["action_mask"].copy()
    before = env.state_array.copy()
    for spec in ("random", "heuristic", "mcts:iterations=24"):
        a = _agent(spec, env_id, n).act_env(env)
        assert isinstance(a, int) and mask[a] == 1, (spec, a, np.flatnonzero(mask))
    assert np.array_equal(env.state_array, before), "an agent changed the game state"


def test_search_names_and_specs() -> None:
    assert {"mcts", "ismcts", "search"} <= set(agent_names("isflak_v0"))
    assert parse_spec("mcts:iterations=50,c=0.5") == ("mcts", {"iterations": 50, "c": 0.5})
    a = make_agent("mcts:iterations=50,c=0.5", "isflak_v0", seed=1)
    assert isinstance(a, SearchAgent) and a.iterations == 50 and a.c == 0.5
    assert a.determinizations == 1  # perfect information: the position itself
    assert make_agent("ismcts", "slide_v0").determinizations == 64
    with pytest.raises(ValueError, match="iterations"):
        make_agent("mcts:iterations=0", "slide_v0")
    with pytest.raises(ValueError, match="key=value"):
        parse_spec("mcts:iterations=5,c")
    with pytest.raises(TypeError, match="act_state"):
        a.act(np.zeros(1), np.ones(3, np.int8))


@pytest.mark.parametrize("env_id", list(GAMES))
def test_search_is_deterministic_for_a_seed_and_iteration_budget(env_id: str) -> None:
    env = _random_state(env_id, 2, 5, 7)
    runs = []
    for _ in range(2):
        a = make_agent("mcts:iterations=200", env_id, seed=42, **GAMES[env_id])
        runs.append((a.search(env.state_array), a.act_env(env)))
    assert np.array_equal(runs[0][0], runs[1][0]) and runs[0][1] == runs[1][1]
    assert runs[0][0].sum() == 200  # every iteration passes through one root child


@pytest.mark.parametrize("env_id", ["slide_v0", "op_glad_ijs_v0", "if_it_fits_v0"])
def test_search_cannot_see_hidden_information(env_id: str) -> None:
    """Two positions the searching seat cannot tell apart (the second is a resample of the
    first: hidden cards redrawn) give identical determinizations and the identical search."""
    for seed in range(3):
        env = _random_state(env_id, 2, seed, 9 + 4 * seed)
        seat = int(env.state_array[K.CUR])
        other = env.resample(seat, rng=1000 + seed)
        assert not np.array_equal(other.state_array, env.state_array)
        eng = card_envs.Engine(env_id, **GAMES[env_id])
        for r in range(3):
            d1 = eng.resample(env.state_array, seat, np.random.default_rng(r))
            d2 = eng.resample(other.state_array, seat, np.random.default_rng(r))
            assert np.array_equal(d1, d2)
        v1 = make_agent("mcts:iterations=150", env_id, seed=3, **GAMES[env_id]).search(
            env.state_array)
        v2 = make_agent("mcts:iterations=150", env_id, seed=3, **GAMES[env_id]).search(
            other.state_array)
        assert np.array_equal(v1, v2)


def test_time_budget_and_tree_capacity() -> None:
    env = _random_state("isflak_v0", 2, 1, 10)
    a = make_agent("mcts:ms=100,max_nodes=300", "isflak_v0", seed=0)
    visits = a.search(env.state_array)
    assert a.last_iterations > 300  # the tree filled up and the search went on
    assert visits.sum() == a.last_iterations
    assert a._meta[0] <= 300


def test_max_n_backup_per_seat_for_many_players() -> None:
    """At 4 players the root's value is the searcher's own win share: it must see its own
    good moves (values in [0, 1], and its chosen move is among the best-valued)."""
    env = _random_state("isflak_v0", 4, 3, 12)
    a = make_agent("mcts:iterations=3000", "isflak_v0", seed=0, num_players=4)
    visits = a.search(env.state_array)
    q = a.last_values
    tried = visits > 0
    assert np.all((q[tried] >= 0.0) & (q[tried] <= 1.0))
    best = int(np.argmax(visits))
    assert q[best] >= np.nanmax(q) - 0.1


def test_tiny_budget_search_beats_random_on_isflak() -> None:
    """40 games (20 duplicate deals), 30 iterations per move, fixed seed: the search must win
    significantly more than half (lower end of the 95% Wilson interval above 0.5)."""
    res = run_arena("isflak", ["mcts:iterations=30", "random"], 40, seed=7, progress=False)
    s = res["mcts:iterations=30"]
    assert s.games == 40
    assert s.ci95[0] > 0.5, s.to_json()
    assert s.win_rate >= 0.8


def test_op_glad_search_models_others_with_the_heuristic() -> None:
    """In Op Glad IJs the search plays the heuristic's slap unless the search is clearly
    better: with an obvious target it slaps a correct target, never faults."""
    from card_envs.agents.op_glad_ijs import OpGladIJsHeuristicAgent, OpGladIJsSearchAgent

    a = make_agent("mcts:iterations=200", "op_glad_ijs_v0", seed=0)
    assert isinstance(a, OpGladIJsSearchAgent) and a.model_others
    h = OpGladIJsHeuristicAgent(seed=0)
    env = card_envs.make_raw("op_glad_ijs_v0")
    env.reset(seed=3)
    checked = 0
    while checked < 5:
        obs = env.observe(env.agent_selection)
        good = h.targets(np.asarray(obs["observation"][:h.T]))
        if good:
            assert a.act_env(env) in good
            checked += 1
        env.step(h.act(obs["observation"], obs["action_mask"]))
