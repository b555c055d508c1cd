"""The ``az`` agent (``card_envs.agents.az``): the batched network-guided search with one game.
Deterministic for a seed, legal moves over whole games of every game, any seat count, blind to
what its seat cannot see, parameters checked before anything is built, and leaves evaluated in
batches."""

from __future__ import annotations

import math

import numpy as np
import pytest

import card_envs
from card_envs import OptionError
from card_envs.agents.az import AZAgent
from card_envs.agents.az_search import NetEvaluator
from card_envs.agents.az_tree import EXP, PEND, VISITS
from card_envs.agents.net import NetPolicy
from card_envs.agents.ppo import baseline_path
from card_envs.agents.registry import agent_names, check_spec, make_agent
from card_envs.agents.weights import WeightsError
from card_envs.arena import run_arena
from card_envs.core import kernels as K
from card_envs.ui.sessions import ApiError, ServerPolicy
from test_search import GAMES, _random_state  # the mcts tests' positions

_AGENTS: dict[tuple[str, str, int], AZAgent] = {}


def _agent(spec: str, env_id: str, seed: int = 0) -> AZAgent:
    """A cached agent, reset to ``seed`` (building one loads the network and warms up)."""
    key = (spec, env_id, seed)
    if key not in _AGENTS:
        _AGENTS[key] = make_agent(spec, env_id, seed=seed, **GAMES[env_id])
    a = _AGENTS[key]
    a.reset(seed=seed)
    return a


@pytest.mark.parametrize("env_id", ["slide_v0", "if_it_fits_v0"])
@pytest.mark.parametrize("mode", ["gumbel", "puct"])
def test_deterministic_for_a_seed_and_iteration_budget(env_id: str, mode: str) -> None:
    env = _random_state(env_id, 2, 5, 7)
    runs = []
    for _ in range(2):
        a = make_agent(f"az:iterations=120,batch=8,mode={mode}", env_id, seed=42,
                       **GAMES[env_id])
        visits, value = a.search(env.state_array)
        runs.append((visits, value, a.act_env(env), a.last_policy.copy()))
    assert np.array_equal(runs[0][0], runs[1][0]) and runs[0][1:3] == runs[1][1:3]
    assert np.array_equal(runs[0][3], runs[1][3])
    assert runs[0][0].sum() == 120  # every simulation goes through a root child
    assert 0.0 <= runs[0][1] <= 1.0
    legal = np.flatnonzero(env.observe(env.agent_selection)["action_mask"])
    assert set(np.flatnonzero(runs[0][0])) <= set(legal.tolist())
    pi = runs[0][3]
    assert set(np.flatnonzero(pi)) <= set(legal.tolist()) and math.isclose(pi.sum(), 1.0)


@pytest.mark.parametrize("env_id", list(GAMES))
def test_whole_games_only_legal_moves(env_id: str) -> None:
    """az against the heuristic for a whole game (the raw env raises on an illegal move)."""
    a = _agent("az:iterations=24,batch=8", env_id)
    h = make_agent("heuristic", env_id, seed=1, **GAMES[env_id])
    env = card_envs.make_raw(env_id, **GAMES[env_id])
    env.reset(seed=3)
    moves = 0
    while True:
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            break
        mask = obs["action_mask"]
        if env.agent_selection == "player_0":
            act = a.act_env(env)
            moves += 1
        else:
            act = h.act(obs["observation"], mask)
        assert mask[act] == 1
        env.step(act)
    assert moves > 0


@pytest.mark.parametrize("env_id", ["slide_v0", "isflak_v0"])
@pytest.mark.parametrize("n", [3, 4])
def test_any_seat_count_max_n_with_an_untrained_network(env_id: str, n: int) -> None:
    """Any seat count with a network of that count (fresh ones: a value head of one output
    per seat, and a scalar one): legal moves, every value a share in [0, 1]."""
    for value_dim in (n, 1):
        a = AZAgent(env_id, seed=0, iterations=200, batch=8,
                    model=NetPolicy(env_id, num_players=n, value_dim=value_dim),
                    num_players=n)
        env = _random_state(env_id, n, 2, 6)
        visits, value = a.search(env.state_array)
        tried = visits > 0
        assert 0.0 <= value <= 1.0 and tried.any() and visits.sum() == 200
        assert np.all((a.last_values[tried] >= 0.0) & (a.last_values[tried] <= 1.0))
        assert env.observe(env.agent_selection)["action_mask"][a.act_env(env)] == 1


def test_value_heads_give_every_seat_a_share() -> None:
    """The evaluator's shares sum to 1 per leaf, for both kinds of value head."""
    env = _random_state("slide_v0", 3, 1, 5)
    obs = env.observe(env.agent_selection)
    for value_dim in (3, 1):
        ev = NetEvaluator(NetPolicy("slide_v0", num_players=3, value_dim=value_dim))
        _, _, _, shares = ev(obs["observation"][None], obs["action_mask"][None])
        assert shares.shape == (1, 3) and np.allclose(shares.sum(1), 1.0)
        assert (shares >= 0).all()
    with pytest.raises(WeightsError, match="value head"):
        AZAgent("slide_v0", model=NetPolicy("slide_v0", num_players=3, value_dim=2),
                num_players=3)


@pytest.mark.parametrize("env_id", ["slide_v0", "op_glad_ijs_v0", "flipology_v0",
                                    "if_it_fits_v0"])
def test_search_cannot_see_hidden_information(env_id: str) -> None:
    """A position and a resample of it (hidden cards redrawn) are the same to the searching
    seat: the same visits, hence the same distribution of the chosen move (also sampled).
    Every game's determinization reads only what the seat knows, so both positions give the
    same determinizations."""
    spec = "az:iterations=80,batch=8,temperature=1"
    for seed in range(2):
        env = _random_state(env_id, 2, seed, 9 + 4 * seed)
        seat = int(env.state_array[K.CUR])
        other = env.resample(seat, rng=1000 + seed)
        assert not np.array_equal(other.state_array, env.state_array)
        a = _agent(spec, env_id, seed=3)
        v1, q1 = a.search(env.state_array)
        m1 = [a.act_env(env) for _ in range(3)]
        a = _agent(spec, env_id, seed=3)
        v2, q2 = a.search(other.state_array)
        m2 = [a.act_env(other) for _ in range(3)]
        assert np.array_equal(v1, v2) and q1 == q2 and m1 == m2


def test_parameters_are_checked_before_anything_is_built() -> None:
    for spec, name in (("az:iterations=0", "iterations"), ("az:iterations=10000001", "iterations"),
                       ("az:ms=0", "ms"), ("az:ms=600001", "ms"), ("az:c_puct=-1", "c_puct"),
                       ("az:batch=0", "batch"), ("az:batch=1025", "batch"),
                       ("az:determinizations=0", "determinizations"),
                       ("az:temperature=101", "temperature"), ("az:value_scale=11", "value_scale"),
                       ("az:max_nodes=1", "max_nodes"), ("az:iterations=1.5", "iterations"),
                       ("az:virtual_loss=1.01", "virtual_loss"), ("az:considered=0", "considered"),
                       ("az:prior_temp=0", "prior_temp"), ("az:c_visit=-1", "c_visit"),
                       ("az:c_scale=1e7", "c_scale"), ("az:anchor=-1", "anchor"),
                       ("az:mode=alphago", "mode"), ("az:mix=1.5", "mix"),
                       ("az:horizon=-2", "horizon")):
        with pytest.raises(OptionError, match=name):
            make_agent(spec, "slide_v0")
    for kw in ({"c_puct": math.nan}, {"ms": math.inf}, {"temperature": -math.inf},
               {"value_scale": math.nan}, {"iterations": 10**12}, {"batch": True},
               {"c_scale": math.nan}, {"prior_temp": math.inf}, {"considered": 1.5}):
        with pytest.raises(OptionError, match=next(iter(kw))):
            AZAgent("slide_v0", **kw)
    with pytest.raises(OptionError, match="c_puct"):
        check_spec("az:c_puct=nan", "slide_v0")
    with pytest.raises(OptionError, match="model"):  # a Python object, never from a spec
        check_spec("az:model=1", "slide_v0")


def test_bad_paths_and_policies_are_refused(tmp_path) -> None:
    with pytest.raises(FileNotFoundError, match="no policy file"):
        make_agent(f"az:path={tmp_path / 'none.safetensors'}", "slide_v0")
    with pytest.raises(WeightsError, match="not a policy .safetensors"):
        make_agent("az:runs/model.zip", "slide_v0")
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(b"not a weights file")
    with pytest.raises(WeightsError):
        make_agent(f"az:path={bad}", "slide_v0")

    with pytest.raises(WeightsError, match="isflak_v0"):  # another game's network
        make_agent(f"az:path={baseline_path('isflak_v0')}", "slide_v0")
    with pytest.raises(ValueError, match="no network for slide_v0 with 5 players"):
        make_agent("az", "slide_v0", num_players=5)
    with pytest.raises(OptionError, match="not allowed here"):  # the play server's rule
        check_spec("az:path=/etc/passwd", "slide_v0", allow_files=False)


def test_the_shipped_self_play_network_is_the_default_for_its_seat_count() -> None:
    """Flipology at 3 seats searches with its self-play network (a value per seat); the same
    file plays alone as ``ppo:path=...`` at 3 seats and is refused at 2."""
    from card_envs.agents.az import default_network

    path = default_network("flipology_v0", 3)
    assert path.name == "flipology_v0_3p.safetensors" and path.stat().st_size < 2 * 2**20
    a = make_agent("az:iterations=16", "flipology_v0", seed=0, num_players=3)
    assert a.path == str(path) and a.policy.net.value_dim == 3
    env = card_envs.make_raw("flipology_v0", num_players=3)
    env.reset(seed=2)
    assert env.observe(env.agent_selection)["action_mask"][a.act_env(env)] == 1
    alone = make_agent(f"ppo:path={path}", "flipology_v0", seed=0, num_players=3)
    obs = env.observe(env.agent_selection)
    assert obs["action_mask"][alone.act(obs["observation"], obs["action_mask"])] == 1
    with pytest.raises(WeightsError, match="players"):
        make_agent(f"ppo:path={path}", "flipology_v0", seed=0)


def test_names_specs_and_the_play_server() -> None:
    assert "az" in agent_names("flipology_v0")
    a = make_agent("az:iterations=50,c_puct=2,batch=4,determinizations=8", "slide_v0", seed=1)
    assert isinstance(a, AZAgent) and (a.iterations, a.c_puct, a.batch) == (50, 2.0, 4)
    assert a.determinizations == 8 and make_agent("az", "isflak_v0").determinizations == 1
    assert a.path.endswith("slide_v0.safetensors")
    assert a.shaping == (1.0 if "/ppo/" in a.path else 0.0)  # PPO: trained with shaping
    with pytest.raises(TypeError, match="act_state"):
        a.act(np.zeros(1), np.ones(3, np.int8))
    server = ServerPolicy()
    assert server.opponent("az:ms=500", "slide_v0") == ("az:ms=500", "az:ms=500")
    with pytest.raises(ApiError, match="capped"):
        server.opponent("az:iterations=50000", "slide_v0")


def test_leaves_are_evaluated_in_batches() -> None:
    """One network forward per wave of leaves: forwards <= iterations / batch + a few (the
    root alone, and the waves cut short by collisions)."""
    a = _agent("az:iterations=400,batch=16", "slide_v0")
    rows: list[int] = []
    hook = a.policy.net.register_forward_hook(lambda m, inp, out: rows.append(len(inp[0])))
    try:
        env = _random_state("slide_v0", 2, 4, 10)
        a.search(env.state_array)
    finally:
        hook.remove()
    assert len(rows) == a.last_forwards
    assert len(rows) <= 400 / 16 + 4, rows
    assert max(rows) == 16 and sum(rows) == a.last_leaves <= 401  # the root + the leaves
    assert a.last_iterations == 400
    bs = a.search_engine
    used = bs.tree[0, :bs.meta[0]]
    assert not used[:, PEND].any() and used[0, VISITS] == 400  # every pending visit resolved


def test_time_budget_and_tree_capacity() -> None:
    env = _random_state("isflak_v0", 2, 1, 10)
    a = make_agent("az:ms=100,max_nodes=500", "isflak_v0", seed=0)
    visits, _ = a.search(env.state_array)
    bs = a.search_engine
    assert visits.sum() == a.last_iterations and bs.meta[0] <= 500
    expanded = int((bs.tree[0, :bs.meta[0], EXP] == 1).sum())
    assert a.last_iterations > 2 * expanded  # the tree filled up and the search went on


def test_plays_in_the_arena() -> None:
    res = run_arena("isflak", ["az:iterations=40", "random"], 4, seed=3, progress=False,
                    workers=1)
    s = res["az:iterations=40"]
    assert s.games == 4 and s.win_rate >= 0.75


def test_prior_temperature_defaults() -> None:
    """PPO networks: the game's manifest value; self-play networks (a value head per seat):
    1."""
    from card_envs.core.registry import manifest

    for env_id in ("slide_v0", "if_it_fits_v0"):
        want = float(manifest(env_id).az.get("prior_temp", 1.0))
        ppo = make_agent(f"az:iterations=8,path={baseline_path(env_id)}", env_id)
        assert ppo.prior_temp == want
    own = AZAgent("slide_v0", iterations=8, model=NetPolicy("slide_v0", value_dim=2))
    assert own.prior_temp == 1.0
    assert make_agent("az:iterations=8,prior_temp=2", "slide_v0").prior_temp == 2.0


def test_op_glad_ijs_models_the_other_seats() -> None:
    """In Op Glad IJs the tree holds the searcher's decisions only (the other seats move by
    the heuristic inside the descents), and ``anchor`` keeps the heuristic's slap unless the
    search beats it clearly."""
    env = _random_state("op_glad_ijs_v0", 3, 2, 12)
    net = NetPolicy("op_glad_ijs_v0", 3, {"max_turned": 40}, value_dim=3)  # no 3-seat default
    a = AZAgent("op_glad_ijs_v0", iterations=64, batch=8, model=net, seed=1, num_players=3,
                max_turned=40)
    assert a.anchor > 0 and a.search_engine.model_others
    a.search(env.state_array)
    bs = a.search_engine
    seat = int(env.state_array[K.CUR])
    movers = bs.tree[0, 1:bs.meta[0], 2]  # MOVER
    assert movers.size and (movers == seat).all()
