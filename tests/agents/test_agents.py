"""Baseline agents (random, Slide heuristic) and the agent registry: legal actions only, an
all-zero mask refused, seeding, the Slide heuristic's push and choice, agent specs."""

from __future__ import annotations

import random

import numpy as np
import pytest

import card_envs
from card_envs.agents.base import Agent
from card_envs.agents.random_agent import RandomAgent
from card_envs.agents.registry import agent_class, agent_names, make_agent
from card_envs.agents.slide import SlideHeuristicAgent
from card_envs.slide import layout as L
from card_envs.slide import rules as R
from card_envs.slide.queries import push, side_ok


def _play_checked(n: int, seed: int, agents: list[Agent]) -> list[tuple[int, ...]]:
    """Play one game; at every step every agent proposes an action for the seat to act, each
    proposal must be legal; the seat's own agent's action is played. Returns the trace."""
    env = card_envs.make_raw("slide_v0", num_players=n)
    env.reset(seed=seed)
    trace = []
    pick = random.Random(seed)
    while True:
        obs, _, term, _, _ = env.last()
        if term:
            break
        o, m = obs["observation"], obs["action_mask"]
        proposals = [a.act(o, m) for a in agents]
        for a in proposals:
            assert isinstance(a, int) and m[a] == 1, (a, np.flatnonzero(m))
        trace.append(tuple(proposals))
        env.step(proposals[pick.randrange(len(proposals))])
    return trace


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6])
def test_agents_only_choose_legal_actions(n: int) -> None:
    agents = [RandomAgent("slide_v0", seed=1), SlideHeuristicAgent("slide_v0", seed=2)]
    for seed in range(4):
        _play_checked(n, 100 * n + seed, agents)


def test_agents_refuse_an_all_zero_mask() -> None:
    env = card_envs.make_raw("slide_v0")
    env.reset(seed=0)
    idle = env.observe("player_1")  # not to act: mask all zeros
    for a in (RandomAgent("slide_v0", 0), SlideHeuristicAgent("slide_v0", 0)):
        with pytest.raises(ValueError, match="no legal action"):
            a.act(idle["observation"], idle["action_mask"])


@pytest.mark.parametrize("cls", [RandomAgent, SlideHeuristicAgent])
def test_seeded_agents_are_deterministic(cls: type[Agent]) -> None:
    t1 = _play_checked(3, 7, [cls("slide_v0", seed=5)])
    t2 = _play_checked(3, 7, [cls("slide_v0", seed=5)])
    assert t1 == t2
    a = cls("slide_v0", seed=5)
    t3 = _play_checked(3, 7, [a])
    a.reset(seed=5)
    assert _play_checked(3, 7, [a]) == t3 == t1


def test_random_agent_is_uniform_and_seed_dependent() -> None:
    mask = np.zeros(56, np.int8)
    mask[[3, 17, 40]] = 1
    a = RandomAgent("slide_v0", seed=0)
    counts = np.bincount([a.act(np.zeros(57, np.int8), mask) for _ in range(3000)],
                         minlength=56)
    assert set(np.flatnonzero(counts)) == {3, 17, 40}
    assert counts[[3, 17, 40]].min() > 900
    b = RandomAgent("slide_v0", seed=1)
    assert [a.act(None, mask) for _ in range(30)] != [b.act(None, mask) for _ in range(30)]


def test_heuristic_push_matches_the_engine() -> None:
    rng = np.random.default_rng(0)
    out = np.empty(16, np.int64)
    for _ in range(300):
        grid = rng.integers(1, 12, 16)
        empty, value = int(rng.integers(16)), int(rng.integers(1, 11))
        grid[empty] = 0
        for side in range(4):
            if not side_ok(empty, side):
                continue
            state = np.zeros(L.STATE_SIZE, np.int32)
            state[L.GRID:L.GRID + 16] = grid
            R.push(state, 0, empty, side, value)
            push(grid, empty, side, value, out)
            assert (out == state[L.GRID:L.GRID + 16]).all()


def test_heuristic_takes_the_obvious_pair() -> None:
    """Pushing a 10 next to a face-up 10 (both removed) beats taking a 1."""
    n = 2
    o = np.zeros(16 * n + 25, np.int8)
    o[:32] = 11
    o[0], o[1] = 10, 0  # own grid: a 10 in the corner, the gap right of it
    mid, uns = 16 * n, 16 * n + 10
    o[mid + 0] = o[mid + 9] = 1  # middle: a 1 and a 10
    o[uns:uns + 10] = 8
    o[mid + 20], o[mid + 21], o[mid + 22], o[mid + 23], o[mid + 24] = 1, 3, 0, 0, -1
    mask = np.zeros(56, np.int8)
    for v in (1, 10):
        for side in (0, 1, 3):  # gap at (0, 1): left, right, bottom
            mask[16 + (v - 1) * 4 + side] = 1
    for seed in range(5):
        assert SlideHeuristicAgent("slide_v0", seed=seed).act(o, mask) == 16 + 9 * 4 + 0


def test_make_agent_registry() -> None:
    assert type(make_agent("random", "slide_v0", seed=1, num_players=3)) is RandomAgent
    assert type(make_agent("Heuristic", "slide_v0")) is SlideHeuristicAgent
    assert agent_names("slide_v0")[:2] == ["random", "heuristic"]  # then the search names
    assert card_envs.manifest("slide_v0").heuristic
    with pytest.raises(ValueError, match="unknown agent 'bogus'.*random"):
        make_agent("bogus", "slide_v0")
    with pytest.raises(ValueError, match="no heuristic agent for 'other_v0'.*slide_v0"):
        agent_class("heuristic", "other_v0")
    assert agent_class("random", "other_v0") is RandomAgent
    with pytest.raises(ValueError, match="unknown env id"):
        make_agent("random", "nope_v0")


def test_agent_spec_typos_raise_naming_the_parameters() -> None:
    """``mcts:iteration=5`` used to run MCTS at its default 1000 iterations."""
    with pytest.raises(ValueError, match=r"unknown parameter.*'iteration'.*'iterations'"):
        make_agent("mcts:iteration=5", "slide_v0")
    with pytest.raises(ValueError, match=r"unknown parameter.*'foo'"):
        make_agent("random:foo=1", "slide_v0")
    with pytest.raises(ValueError, match="miss_rate"):  # a valid one elsewhere is no help
        make_agent("heuristic:miss_rate=0.2", "slide_v0")
    assert make_agent("mcts:iterations=5", "slide_v0").iterations == 5
    assert make_agent("heuristic:miss_rate=0.2", "op_glad_ijs_v0").miss_rate == 0.2
    from card_envs.agents.search import SearchAgent
    with pytest.raises(ValueError, match="iteration"):  # direct construction, too
        SearchAgent("slide_v0", iteration=5)


@pytest.mark.parametrize("env_id", card_envs.ENV_IDS)
def test_act_takes_what_the_env_gives(env_id: str) -> None:
    """``act`` takes the arrays, the observation dict (``env.observe``, ``env.last()[0]``) or
    the whole ``env.last()``; other inputs get a TypeError / ValueError saying what it wants."""
    env = card_envs.make(env_id)
    env.reset(seed=3)
    last = env.last()
    obs = last[0]
    for spec in ("random", "heuristic"):
        agent = make_agent(spec, env_id, seed=5)
        forms = [(obs["observation"], obs["action_mask"]), (obs,), (last,),
                 (obs["observation"].tolist(), obs["action_mask"].tolist())]
        actions = set()
        for args in forms:
            agent.reset(seed=5)
            actions.add(agent.act(*args))
        assert len(actions) == 1 and obs["action_mask"][actions.pop()] == 1
        with pytest.raises(TypeError, match="observation dict"):
            agent.act(obs["observation"])  # the bare array, no mask
        with pytest.raises(TypeError, match="observation dict"):
            agent.act({"obs": obs["observation"]})
        with pytest.raises(ValueError, match="1-D"):
            agent.act(obs["observation"][None], obs["action_mask"].tolist())
        with pytest.raises(ValueError, match="no legal action"):
            agent.act(obs["observation"].tolist(), [0] * len(obs["action_mask"]))
