"""Op Glad IJs' native PettingZoo ``ParallelEnv`` (one ``step`` is one reaction window): the
API and seed tests, agreement with the AEC env, bad input."""

from __future__ import annotations

import random

import numpy as np
import pytest

from card_envs import IllegalActionError
from op_glad_ijs_ref import raw


# --- the parallel env --------------------------------------------------------------------------
def test_parallel_api_and_seed() -> None:
    from pettingzoo.test import parallel_api_test, parallel_seed_test

    from card_envs import op_glad_ijs_v0

    parallel_api_test(op_glad_ijs_v0.parallel_env(max_turned=150), num_cycles=400)
    parallel_api_test(op_glad_ijs_v0.parallel_env(num_players=5, advanced=True,
                                                   reward_mode="cards"), num_cycles=100)
    parallel_seed_test(lambda: op_glad_ijs_v0.parallel_env(num_players=3), num_cycles=100)


@pytest.mark.parametrize("opts", [{"num_players": 3, "reward_mode": "cards"},
                                  {"num_players": 2, "max_turned": 60}])
def test_parallel_matches_aec(opts: dict) -> None:
    from card_envs import op_glad_ijs_v0

    par = op_glad_ijs_v0.parallel_env(illegal_action="raise", **opts)
    aec = raw(**opts)
    obs, _ = par.reset(seed=5)
    aec.reset(seed=5)
    rnd = random.Random(2)
    while par.agents:
        for a in par.agents:
            assert np.array_equal(obs[a]["observation"], aec.observe(a)["observation"])
        acts = {a: rnd.choice(np.flatnonzero(obs[a]["action_mask"]).tolist())
                for a in par.agents}
        cum = {a: 0.0 for a in aec.possible_agents}
        for a in par.agents:
            assert aec.agent_selection == a
            aec.step(acts[a])
            for b in aec.possible_agents:
                cum[b] += aec.rewards[b]
        obs, rew, term, trunc, info = par.step(acts)
        assert par.state_dict() == aec.state_dict()
        assert rew == pytest.approx(cum)
        if not par.agents:
            assert term == aec.terminations and trunc == aec.truncations
            assert info == aec.infos


def test_parallel_bad_input_changes_nothing() -> None:
    from card_envs import op_glad_ijs_v0

    par = op_glad_ijs_v0.raw_parallel_env()
    obs, _ = par.reset(seed=1)
    before = par.state_dict()
    masked = int(np.flatnonzero(obs["player_0"]["action_mask"] == 0)[0])
    for bad in ({"player_0": 0}, {"player_0": 0, "player_1": 0, "player_9": 0},
                {"player_0": 0, "player_1": -1}, {"player_0": 1.0, "player_1": 0},
                {"player_0": 0, "player_1": masked}, [0, 0], None):
        with pytest.raises(IllegalActionError):
            par.step(bad)
        assert par.state_dict() == before
    lose = op_glad_ijs_v0.parallel_env()
    lose.reset(seed=1)
    with pytest.warns(UserWarning):
        _, rew, term, _, info = lose.step({"player_0": 0, "player_1": masked})
    assert rew == {"player_0": 0.0, "player_1": -1.0} and all(term.values())
    assert lose.agents == [] and info["player_0"]["illegal_action"] == ["player_1"]
    with pytest.raises(IllegalActionError, match="over"):
        lose.step({"player_0": 0, "player_1": 0})
