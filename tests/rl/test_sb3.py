"""Training views: the Gymnasium single-agent env and the SB3 VecEnv on the batched engine.

Both are replayed against the AEC env with the same deals and the same (deterministic)
policies: observations, masks and the learner's rewards must agree step for step, including
the final reward of games that an opponent's move ends."""

from __future__ import annotations

import numpy as np
import pytest

import card_envs
from card_envs.core.env import ResetNeededError
from card_envs.core.errors import IllegalActionError, OptionError
from card_envs.rl.single_agent import OpponentPool, SingleAgentEnv

sb3 = pytest.importorskip("stable_baselines3", reason="train extra")
from card_envs.rl.sb3 import BatchedVecEnv  # noqa: E402

GAMES = {"slide_v0": {}, "isflak_v0": {}, "op_glad_ijs_v0": {"max_turned": 30},
         "flipology_v0": {}, "if_it_fits_v0": {}}


def first_legal(obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """A deterministic batched policy: the highest legal action of every row."""
    m = masks.astype(bool)
    return (m.shape[1] - 1 - np.argmax(m[:, ::-1], axis=1)).astype(np.int64)


def aec_replay(env_id: str, seed: int, seat: int, options: dict):
    """The learner's (observation, mask) at each of its turns and its total reward, when every
    seat plays ``first_legal``; and who made the last move."""
    env = card_envs.make_raw(env_id, **options)
    env.reset(seed=seed)
    me = env.possible_agents[seat]
    turns, total, last = [], 0.0, None
    while True:
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            break
        ag = env.agent_selection
        if ag == me:
            turns.append((obs["observation"].copy(), obs["action_mask"].copy()))
        last = ag
        env.step(int(first_legal(obs["observation"][None], obs["action_mask"][None])[0]))
        total += env.rewards[me]
    return turns, total, last == me


@pytest.mark.parametrize("env_id", list(GAMES))
def test_vecenv_replays_the_aec_env(env_id: str) -> None:
    opts = GAMES[env_id]
    B, seed = 6, 100
    venv = BatchedVecEnv(env_id, B, opponents=first_legal, seed=seed, **opts)
    n = venv.game.num_players
    expected = [aec_replay(env_id, seed + i, i % n, opts) for i in range(B)]
    obs = venv.reset()
    t = [0] * B
    finished = [False] * B
    ended_by_opponent = 0
    for _ in range(max(len(e[0]) for e in expected) + 1):
        masks = venv.action_masks()
        for i in range(B):
            if not finished[i]:
                eo, em = expected[i][0][t[i]]
                assert np.array_equal(obs[i], eo), (i, t[i])
                assert np.array_equal(masks[i], em.astype(bool)), (i, t[i])
                assert np.array_equal(venv.env_method("action_masks", indices=[i])[0], masks[i])
        obs, rewards, dones, infos = venv.step(first_legal(obs, masks))
        for i in range(B):
            if finished[i]:
                continue
            t[i] += 1
            if dones[i]:
                finished[i] = True
                turns, total, learner_last = expected[i]
                assert t[i] == len(turns)
                assert infos[i]["episode"]["r"] == pytest.approx(total)
                assert rewards[i] == pytest.approx(total)  # win mode: all in the last step
                ended_by_opponent += not learner_last
        if all(finished):
            break
    assert all(finished)
    assert ended_by_opponent > 0, "no game ended on an opponent's move: the test is too weak"


@pytest.mark.parametrize("env_id", list(GAMES))
def test_single_agent_returns_sum_to_the_outcome(env_id: str) -> None:
    """From every seat, the learner's rewards over an episode add up to its win-mode result,
    whichever seat made the last move."""
    opts = GAMES[env_id]
    n = len(card_envs.make_raw(env_id, **opts).possible_agents)
    for seat in range(n):
        env = SingleAgentEnv(env_id, opponents=lambda o, m: int(first_legal(o[None],
                                                                            m[None])[0]),
                             seat=seat, **opts)
        env.reset(seed=3)
        total = 0.0
        while True:
            a = int(first_legal(np.zeros((1, 1)), env.action_masks()[None])[0])
            obs, r, term, trunc, info = env.step(a)
            total += r
            if term or trunc:
                break
        winners = np.array(info["winner"])
        nw = winners.sum()
        assert total == (0.0 if nw == n else (1.0 if winners[seat] else -1.0))
        assert info["seat"] == seat and not env.action_masks().any()
        with pytest.raises(ResetNeededError):
            env.step(0)


def test_single_agent_env_rewards_the_learner_when_the_opponent_ends_the_game() -> None:
    """Slide, 2 players, learner at seat 1: the last move of the game is seat 0's (the
    first-player token passes left every round, round 16 starts with seat 1). A game the
    learner loses on that move must pay it -1 in its last step."""
    env = SingleAgentEnv("slide_v0", opponents="heuristic", seat=1)
    for seed in range(20):
        env.reset(seed=seed)
        rewards = []
        while True:
            obs, r, term, trunc, info = env.step(int(np.flatnonzero(env.action_masks())[0]))
            rewards.append(r)
            if term:
                break
        # the opponent made the last move: the learner made 32 of the game's 64 actions
        assert len(rewards) == 32 and int(env.state[card_envs.core.kernels.STEPS]) == 64
        assert all(r == 0.0 for r in rewards[:-1])
        winners = info["winner"]
        assert rewards[-1] == (0.0 if all(winners) else (1.0 if winners[1] else -1.0))
        if rewards[-1] == -1.0:
            return  # a lost game's reward reached the learner
    pytest.fail("the learner never lost in 20 games: the test proves nothing")


def test_single_agent_illegal_action_loses_by_default() -> None:
    """PettingZoo classic semantics: a masked-out action ends the episode with -1; malformed
    actions still raise; a bad ``illegal_action`` value is an OptionError."""
    env = SingleAgentEnv("slide_v0", opponents="heuristic")
    env.reset(seed=3)
    illegal = int(np.flatnonzero(~env.action_masks())[0])
    obs, reward, term, trunc, info = env.step(illegal)
    assert (reward, term, trunc) == (-1.0, True, False) and info["illegal_action"] is True
    assert not env.action_masks().any() and obs in env.observation_space
    with pytest.raises(ResetNeededError):
        env.step(0)
    env.reset(seed=3)
    for bad in (-1, 10_000, 1.5, "3"):
        with pytest.raises(IllegalActionError):
            env.step(bad)
    with pytest.raises(OptionError, match="illegal_action"):
        SingleAgentEnv("slide_v0", illegal_action="ignore")


@pytest.mark.parametrize("env_id", card_envs.ENV_IDS)
def test_single_agent_env_passes_gymnasium_and_sb3_checkers(env_id: str) -> None:
    """Both checkers step random actions of the space, masked ones included."""
    import warnings

    from gymnasium.utils.env_checker import check_env as gymnasium_check
    from stable_baselines3.common.env_checker import check_env as sb3_check

    opts = card_envs.manifest(env_id).train.options  # Op Glad IJs: shorter games
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "no alternative render modes to test"
        gymnasium_check(SingleAgentEnv(env_id, **opts))
        sb3_check(SingleAgentEnv(env_id, **opts))


def test_single_agent_env_errors_and_seeds() -> None:
    with pytest.raises(OptionError, match="seat"):
        SingleAgentEnv("slide_v0", seat=2)
    with pytest.raises(OptionError, match="one opponent per other seat"):
        SingleAgentEnv("slide_v0", opponents=["random", "random"])
    env = SingleAgentEnv("slide_v0", opponents=OpponentPool(["random", "heuristic"]),
                         seat="random", illegal_action="raise")
    with pytest.raises(ResetNeededError):
        env.action_masks()
    obs, info = env.reset(seed=5)
    before = env.state.copy()
    illegal = int(np.flatnonzero(~env.action_masks())[0])
    for bad in (illegal, -1, 10_000, 1.5, "3", True):
        with pytest.raises(IllegalActionError):
            env.step(bad)
        assert np.array_equal(env.state, before)
    assert obs in env.observation_space
    # same seed, same actions -> same episode
    traces = []
    for _ in range(2):
        obs, _ = env.reset(seed=9)
        trace = [obs.tobytes()]
        while True:
            obs, r, term, trunc, info = env.step(int(np.flatnonzero(env.action_masks())[-1]))
            trace.append((obs.tobytes(), r))
            if term or trunc:
                break
        traces.append(trace)
    assert traces[0] == traces[1]


def test_maskable_ppo_runs_on_both_vecenvs() -> None:
    sb3c = pytest.importorskip("sb3_contrib")
    from stable_baselines3.common.vec_env import DummyVecEnv

    venv = BatchedVecEnv("isflak_v0", 8, seed=0)
    model = sb3c.MaskablePPO("MlpPolicy", venv, n_steps=16, batch_size=64, n_epochs=1,
                             seed=0, device="cpu")
    model.learn(256)
    dummy = DummyVecEnv([lambda: SingleAgentEnv("isflak_v0") for _ in range(4)])
    model2 = sb3c.MaskablePPO("MlpPolicy", dummy, n_steps=16, batch_size=32, n_epochs=1,
                              seed=0, device="cpu")
    model2.learn(128)
    from sb3_contrib.common.maskable.utils import get_action_masks

    assert get_action_masks(venv).shape == (8, venv.game.num_actions)


def test_batched_vec_env_takes_agent_specs_like_single_agent_env() -> None:
    """``opponents="heuristic"`` used to be refused by the VecEnv (accepted by SingleAgentEnv)."""
    venv = BatchedVecEnv("slide_v0", num_envs=8, opponents="heuristic", seed=0)
    venv.reset()
    for _ in range(40):
        masks = venv.action_masks()
        venv.step(np.array([int(np.flatnonzero(m)[0]) for m in masks]))
    assert venv.opponent_steps > 0
    mixed = BatchedVecEnv("slide_v0", num_envs=4, seed=0,
                          opponents=OpponentPool(["random", "heuristic"], [0.5, 0.5]))
    with pytest.raises(OptionError, match="reads the game state"):
        mixed.add_opponent("mcts:iterations=5")
    with pytest.raises(OptionError, match="unknown agent"):
        BatchedVecEnv("slide_v0", num_envs=4, opponents="heuristc")
