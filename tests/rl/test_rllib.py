"""RLlib (the ``rllib`` extra): the MultiAgentEnv passes RLlib's checks and plays the AEC
env's games (observations, per-step rewards of every seat, the end); the masking RLModule
gives masked actions probability 0; on a real local Ray cluster (2 CPUs, one remote env
runner) PPO iterations never sample a masked action, the rewards in RLlib's episodes equal
the AEC env's on the same deals, the league copies snapshots, and a checkpoint plays in the
arena as ``rllib:<checkpoint>`` (equal to the batched evaluation). The long learning check
(beats random >= 0.9) is marked ``stress``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

ray = pytest.importorskip("ray", reason="the rllib extra (ray[rllib]) is not installed")
pytest.importorskip("ray.rllib")

import torch  # noqa: E402
from ray.rllib.core.columns import Columns  # noqa: E402
from ray.rllib.models.torch.torch_distributions import TorchCategorical  # noqa: E402
from ray.rllib.utils.pre_checks.env import check_multiagent_environments  # noqa: E402

from card_envs.agents.registry import make_agent  # noqa: E402
from card_envs.agents.rllib_agent import RLlibAgent, load_module, module_path  # noqa: E402
from card_envs.arena import run_arena  # noqa: E402
from card_envs.core import kernels as K  # noqa: E402
from card_envs.core.errors import IllegalActionError, OptionError  # noqa: E402
from card_envs.core.registry import ENV_IDS, make_raw  # noqa: E402
from card_envs.rl.evaluation import evaluate_batched  # noqa: E402
from card_envs.rl.rllib import MAIN, RANDOM, RLlibCardEnv, ppo_config, snapshot_ids  # noqa: E402
from card_envs.rl.rllib.callbacks import episode_masks  # noqa: E402
from card_envs.rl.rllib.module import HUGE_NEG, MaskedActorCriticModule  # noqa: E402
from card_envs.rl.rllib.train import module_policy, train_rllib  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SMALL = {"train_batch_size_per_learner": 256, "minibatch_size": 128, "num_epochs": 1}


@pytest.fixture(scope="module")
def cluster() -> Any:
    """A real local Ray cluster for this module (2 CPUs, loopback only), shut down after."""
    ray.init(num_cpus=2, include_dashboard=False, address="local",
             _node_ip_address="127.0.0.1", log_to_driver=False)
    yield ray
    ray.shutdown()


def _random_game(env: RLlibCardEnv, seed: int, rng: np.random.Generator
                 ) -> list[tuple[str, int, dict, dict, dict, dict, dict]]:
    """One game with random legal actions: per step (agent, action, obs, rew, term, trunc,
    infos)."""
    obs, _ = env.reset(seed=seed)
    out = []
    while True:
        ((agent, o),) = obs.items()
        a = int(rng.choice(np.flatnonzero(o["action_mask"])))
        obs, rew, term, trunc, infos = env.step({agent: a})
        out.append((agent, a, obs, rew, term, trunc, infos))
        if term["__all__"] or trunc["__all__"]:
            return out


# --- the env ---------------------------------------------------------------------------------
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_env_passes_rllib_checks(env_id: str) -> None:
    env = RLlibCardEnv({"env_id": env_id})
    check_multiagent_environments(env)  # resets, then steps a random (likely illegal) action
    obs, infos = env.reset(seed=1)
    ((agent, o),) = obs.items()
    assert env.observation_space.contains(o) and agent in infos
    assert o["action_mask"].dtype == np.int8 and o["action_mask"].any()


@pytest.mark.parametrize("env_id,options", [("slide_v0", {}), ("slide_v0", {"num_players": 3}),
                                            ("isflak_v0", {}), ("op_glad_ijs_v0",
                                                                {"max_turned": 60})])
def test_env_plays_the_aec_game(env_id: str, options: dict[str, Any]) -> None:
    """Same deal, same actions: the seat to act, its observation and mask, every seat's
    reward of every step and the end equal the AEC env's."""
    env = RLlibCardEnv({"env_id": env_id, "options": options})
    rng = np.random.default_rng(5)
    for game in range(2):
        steps = _random_game(env, 100 + game, rng)
        aec = make_raw(env_id, **options)
        aec.reset(seed=env.deal_seed)
        first, _ = env.reset(seed=100 + game)  # the same deal again, to check the first obs
        ((agent, o),) = first.items()
        assert agent == aec.agent_selection
        np.testing.assert_array_equal(o["observation"], aec.observe(agent)["observation"])
        np.testing.assert_array_equal(o["action_mask"], aec.observe(agent)["action_mask"])
        for k, (ag, a, obs, rew, term, trunc, infos) in enumerate(steps):
            assert ag == aec.agent_selection
            aec.step(a)
            assert set(rew) == set(aec.possible_agents)  # every seat, every step
            for x in aec.possible_agents:
                assert rew[x] == pytest.approx(aec.rewards[x], abs=1e-6), (k, x)
            done = all(aec.terminations.values()) or all(aec.truncations.values())
            assert term["__all__"] == all(aec.terminations.values())
            assert trunc["__all__"] == all(aec.truncations.values())
            if not done:
                ((nxt, o),) = obs.items()
                assert nxt == aec.agent_selection
                want = aec.observe(nxt)
                np.testing.assert_array_equal(o["observation"], want["observation"])
                np.testing.assert_array_equal(o["action_mask"], want["action_mask"])
            else:
                assert k == len(steps) - 1 and set(obs) == set(aec.possible_agents)
                for x in aec.possible_agents:
                    assert not obs[x]["action_mask"].any()
                    assert infos[x]["points"] == aec.infos[x]["points"]
                    assert infos[x]["winner"] == aec.infos[x]["winner"]
                    assert infos[x]["replay"] == {"seed": env.deal_seed,
                                                  "actions": [s[1] for s in steps]}


def test_illegal_actions_raise_or_lose() -> None:
    env = RLlibCardEnv({"env_id": "slide_v0", "illegal_action": "raise"})
    obs, _ = env.reset(seed=3)
    ((agent, o),) = obs.items()
    bad = int(np.flatnonzero(o["action_mask"] == 0)[0])
    before = env.state.copy()
    with pytest.raises(IllegalActionError, match="illegal action"):
        env.step({agent: bad})
    with pytest.raises(IllegalActionError, match="out of range"):
        env.step({agent: env.num_actions})
    with pytest.raises(IllegalActionError, match="is to act"):
        env.step({"player_1": 0})
    np.testing.assert_array_equal(env.state, before)  # nothing changed
    assert env.actions == []
    lose = RLlibCardEnv({"env_id": "slide_v0"})
    lose.reset(seed=3)
    obs, rew, term, trunc, infos = lose.step({agent: bad})
    assert term["__all__"] and rew == {agent: -1.0, "player_1": 0.0}
    assert infos["player_1"]["illegal_action"] == agent
    with pytest.raises(IllegalActionError, match="over"):
        lose.step({agent: 0})
    with pytest.raises(OptionError, match="unknown"):
        RLlibCardEnv({"env_id": "slide_v0", "shapping": 1.0})
    with pytest.raises(OptionError, match="env_id"):
        RLlibCardEnv({})


def test_shaping_telescopes_to_the_true_return() -> None:
    """With gamma = 1 a seat's shaped rewards over a game add up to its true return (the
    potential is 0 at the deal), and shaping changes single steps."""
    plain = RLlibCardEnv({"env_id": "slide_v0"})
    shaped = RLlibCardEnv({"env_id": "slide_v0", "shaping": 2.0, "gamma": 1.0})
    for seed in range(3):
        a = _random_game(plain, seed, np.random.default_rng(seed))
        b = _random_game(shaped, seed, np.random.default_rng(seed))
        assert [s[1] for s in a] == [s[1] for s in b]
        for x in plain.possible_agents:
            assert sum(s[3][x] for s in b) == pytest.approx(sum(s[3][x] for s in a), abs=1e-9)
        assert any(s[3] != t[3] for s, t in zip(a, b))


# --- the masking module ----------------------------------------------------------------------
def test_masked_module_gives_masked_actions_zero_probability() -> None:
    env = RLlibCardEnv({"env_id": "slide_v0"})
    from card_envs.rl.rllib import module_config

    mod = MaskedActorCriticModule(observation_space=env.observation_space,
                                  action_space=env.action_space,
                                  model_config=module_config("slide_v0"))
    rng = np.random.default_rng(0)
    obs, masks = [], []
    for seed in range(40):  # real observations, reveal and push phases
        o, _ = env.reset(seed=seed)
        for _ in range(int(rng.integers(0, 30))):
            ((ag, x),) = o.items()
            o, *_ = env.step({ag: int(rng.choice(np.flatnonzero(x["action_mask"])))})
        ((ag, x),) = o.items()
        obs.append(x["observation"])
        masks.append(x["action_mask"])
    batch = {Columns.OBS: {"observation": torch.as_tensor(np.stack(obs)),
                           "action_mask": torch.as_tensor(np.stack(masks))}}
    m = torch.as_tensor(np.stack(masks)) > 0
    for fwd in (mod.forward_exploration, mod.forward_inference, mod.forward_train):
        logits = fwd(batch)[Columns.ACTION_DIST_INPUTS]
        assert (logits[~m] == HUGE_NEG).all() and (logits[m] > HUGE_NEG / 2).all()
        dist = TorchCategorical.from_logits(logits.detach())
        greedy = dist.to_deterministic().sample()
        assert m[torch.arange(len(obs)), greedy].all()
        probs = torch.softmax(logits.detach(), -1)
        assert (probs[~m] == 0).all()
        draws = torch.stack([dist.sample() for _ in range(500)], 1)  # RLlib's sampling path
        assert m.gather(1, draws).all()
    values = mod.compute_values(batch)
    assert values.shape == (len(obs),) and torch.isfinite(values).all()


# --- on a real Ray cluster -------------------------------------------------------------------
@pytest.fixture(scope="module")
def trained(cluster: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """PPO on Slide with one remote env runner (no shaping, so rewards are the game's):
    two training iterations, then episodes sampled by the remote runner and a checkpoint."""
    cfg = ppo_config("slide_v0", num_env_runners=1, envs_per_runner=4, shaping=0.0, seed=7,
                     ppo=SMALL, runner="multi_agent")
    algo = cfg.build_algo()
    results = [algo.train() for _ in range(2)]
    episodes = algo.env_runner_group.foreach_env_runner(
        lambda r: r.sample(num_episodes=6, explore=True), local_env_runner=False)[0]
    path = Path(algo.save(str(tmp_path_factory.mktemp("ckpt"))).checkpoint.path)
    algo.stop()
    return {"results": results, "episodes": episodes, "path": path}


def test_training_never_samples_a_masked_action(trained: dict[str, Any]) -> None:
    for r in trained["results"]:  # the callback's check of every sampled action, remote
        er = r["env_runners"]
        assert er["masked_actions_checked"] >= SMALL["train_batch_size_per_learner"]
        assert er["masked_action_violations"] == 0
        assert np.isfinite(r["learners"][MAIN]["total_loss"])
    checked = 0
    for ep in trained["episodes"]:  # and here, action by action
        for sa in ep.agent_episodes.values():
            acts, masks = episode_masks(sa)
            for a, m in zip(acts, masks):
                assert m[a] == 1
                checked += 1
    assert checked >= 6 * 64


def _aec_step_rewards(env_id: str, seed: int, actions: list[int]
                      ) -> tuple[dict[str, list[float]], str]:
    """Per seat, the rewards of each of its moves as an RLlib episode holds them: everything
    paid from its move until it is to act again (or the game ends); and the last mover."""
    aec = make_raw(env_id)
    aec.reset(seed=seed)
    pending = {a: 0.0 for a in aec.possible_agents}
    acted = {a: False for a in aec.possible_agents}
    out: dict[str, list[float]] = {a: [] for a in aec.possible_agents}
    for a in actions:
        last = aec.agent_selection
        acted[last] = True
        aec.step(a)
        done = all(aec.terminations.values())
        for x in aec.possible_agents:
            pending[x] += aec.rewards[x]
            if acted[x] and (done or x == aec.agent_selection):
                out[x].append(pending[x])
                pending[x] = 0.0
    assert done
    return out, last


def test_learner_rewards_equal_the_aec_env(trained: dict[str, Any]) -> None:
    episodes = trained["episodes"]
    assert len(episodes) >= 6
    paid_by_other = 0
    for ep in episodes:
        assert ep.is_done
        infos = {aid: sa.get_infos(-1) for aid, sa in ep.agent_episodes.items()}
        replay = next(iter(infos.values()))["replay"]
        want, last = _aec_step_rewards("slide_v0", replay["seed"], replay["actions"])
        aec = make_raw("slide_v0")
        aec.reset(seed=replay["seed"])
        for a in replay["actions"]:
            aec.step(a)
        for aid, sa in ep.agent_episodes.items():
            got = np.asarray(sa.get_rewards(), float)
            np.testing.assert_allclose(got, want[aid], atol=1e-6)
            assert sa.get_return() == pytest.approx(sum(want[aid]), abs=1e-6)
            assert infos[aid]["points"] == aec.infos[aid]["points"]
            assert infos[aid]["winner"] == aec.infos[aid]["winner"]
        # the reward of the move that ended the game reaches the seat that did not make it
        paid_by_other += any(sa.get_rewards()[-1] != 0 for aid, sa in
                             ep.agent_episodes.items() if aid != last)
    assert paid_by_other >= 1


def test_league_trains_main_against_random_and_snapshots(cluster: Any) -> None:
    cfg = ppo_config("slide_v0", num_env_runners=1, envs_per_runner=4, selfplay="league",
                     snapshots=2, snapshot_every=1, random_weight=0.5, shaping=0.0, ppo=SMALL,
                     runner="multi_agent")
    algo = cfg.build_algo()
    try:
        before = algo.learner_group.get_state(components="learner/rl_module")
        before = before["learner"]["rl_module"]
        r = algo.train()
        assert r["snapshot_refreshed"] == "snapshot_0"
        assert r["env_runners"]["masked_action_violations"] == 0
        state = algo.learner_group.get_state(components="learner/rl_module")
        mods = state["learner"]["rl_module"]
        assert any((mods[MAIN][k] != before[MAIN][k]).any() for k in mods[MAIN])  # learned
        for k, v in before["snapshot_1"].items():  # a frozen snapshot does not learn
            np.testing.assert_array_equal(mods["snapshot_1"][k], v)
        for k, v in mods[MAIN].items():
            np.testing.assert_array_equal(mods["snapshot_0"][k], v)
        remote = algo.env_runner_group.foreach_env_runner(
            lambda er: er.module["snapshot_0"].get_state(), local_env_runner=False)[0]
        for k, v in remote.items():
            np.testing.assert_array_equal(v, mods[MAIN][k])
        eps = algo.env_runner_group.foreach_env_runner(
            lambda er: er.sample(num_episodes=8), local_env_runner=False)[0]
        seen = set()
        for ep in eps:
            mods_of = [ep.module_for(aid) for aid in ep.agent_episodes]
            assert mods_of.count(MAIN) == 1
            seen.update(mods_of)
        assert seen <= {MAIN, RANDOM, *snapshot_ids(2)} and len(seen) >= 2
    finally:
        algo.stop()


def test_checkpoint_plays_in_the_arena(trained: dict[str, Any]) -> None:
    path = trained["path"]
    assert module_path(path) == path / "learner_group" / "learner" / "rl_module" / MAIN
    agent = make_agent(f"rllib:{path}", "slide_v0", seed=0)
    assert isinstance(agent, RLlibAgent)
    games = 8
    res = run_arena("slide_v0", [f"rllib:{path}", "random"], games, seed=4, progress=False)
    assert res.total_games == games
    assert all(sum(m) == 64 for m in (g["moves"] for g in res.log))
    # the batched evaluation plays the same games with the same (greedy) policy
    ev = evaluate_batched(module_policy(load_module(path)), "slide_v0", "random", games,
                          seed=4)
    assert ev["win_rate"] == pytest.approx(res[f"rllib:{path}"].win_rate)
    # the arena on Ray plays the same games
    on_ray = run_arena("slide_v0", [f"rllib:{path}", "random"], games, seed=4,
                       progress=False, backend="ray")
    assert on_ray.untimed_log() == res.untimed_log()


def test_rllib_agent_errors(trained: dict[str, Any], tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no RLModule"):
        make_agent(f"rllib:{tmp_path}", "slide_v0")
    with pytest.raises(ValueError, match="needs a checkpoint"):
        make_agent("rllib", "slide_v0")
    with pytest.raises(ValueError, match="do not match"):
        make_agent(f"rllib:{trained['path']}", "isflak_v0")
    with pytest.raises(ValueError, match="do not match"):
        make_agent(f"rllib:{trained['path']}", "slide_v0", num_players=3)


def test_train_rllib_example_starts_ray_and_writes_a_run(tmp_path: Path) -> None:
    """``examples/train_rllib.py`` end to end in a fresh process: it starts (and stops) a
    local Ray, trains, evaluates, and its final checkpoint is an arena agent."""
    out = tmp_path / "run"
    cmd = [sys.executable, str(ROOT / "examples" / "train_rllib.py"), "--game", "slide",
           "--minutes", "0.05", "--num-env-runners", "1", "--envs-per-runner", "4",
           "--evals", "1", "--eval-games", "4", "--final-games", "4", "--out", str(out),
           "--no-progress", *[f"-p{k}={v}" for k, v in SMALL.items()]]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)}
    run = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tmp_path,
                         timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    assert f"--agents rllib:{out.resolve() / 'final'},random" in run.stdout
    for f in ("history.csv", "history.json", "iterations.json", "config.json",
              "learning_curve.png"):
        assert (out / f).is_file(), f
    history = json.loads((out / "history.json").read_text())
    assert [h["iteration"] for h in history][0] == 0 and history[-1]["games"] == 4
    last = history[-1]
    assert last["env_steps"] > 0 and last["wall_seconds"] > 0 and last["env_steps_per_s"] > 0
    assert last["rollout_seconds"] + last["update_seconds"] <= last["wall_seconds"] + 1.0
    assert last["eval_seconds"] > 0
    its = json.loads((out / "iterations.json").read_text())
    assert its and its[0]["env_steps"] >= SMALL["train_batch_size_per_learner"]
    assert all(it["masked_action_violations"] == 0 for it in its)
    assert json.loads((out / "config.json").read_text())["env_id"] == "slide_v0"
    assert isinstance(make_agent(f"rllib:{out / 'final'}", "slide_v0"), RLlibAgent)
    with pytest.raises(FileExistsError):  # a second run into the same folder is refused
        train_rllib("slide", minutes=0.05, out_dir=out)


def test_observation_hides_what_the_seat_cannot_know() -> None:
    """A redraw of what the seat to act cannot know leaves its observation unchanged."""
    env = RLlibCardEnv({"env_id": "slide_v0"})
    obs, _ = env.reset(seed=9)
    ((agent, o),) = obs.items()
    seat = int(env.state[K.CUR])
    from card_envs.core.engine import Engine

    eng = Engine("slide_v0")
    other = eng.resample(env.state, seat, 1)
    np.testing.assert_array_equal(eng.observe(other, seat), o["observation"])


@pytest.mark.stress
def test_rllib_ppo_beats_random_on_slide(cluster: Any, tmp_path: Path) -> None:
    """The learning check: RLlib PPO on Slide, 2 env runners, 10 minutes on 2 cores, beats
    random in >= 90% of 400 duplicate games (greedy)."""
    res = train_rllib("slide", minutes=10, num_env_runners=2, out_dir=tmp_path / "run",
                      progress=False, final_games=400)
    final = res.history[-1]
    assert final["games"] == 400
    assert final["random_win_rate"] >= 0.9, res.table()
