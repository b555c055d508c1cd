"""The PPO configuration that trains any game on RLlib's new API stack by self-play, with the
masking RLModules of :mod:`card_envs.rl.rllib.module` and the callback of
:mod:`card_envs.rl.rllib.callbacks` (both imported, with ray, only by :func:`ppo_config`).

**Self-play** (:func:`ppo_config`): ``selfplay="shared"`` maps every seat to one module
``"main"`` (every move trains it); ``"league"`` trains ``"main"`` in one seat per game (drawn
from the episode id) against ``"random"`` (masked uniform, share ``random_weight``) or one of
``snapshots`` frozen copies of ``"main"`` (refreshed in turn every ``snapshot_every`` training
iterations by :class:`~card_envs.rl.rllib.callbacks.SelfPlayCallback`).
"""

from __future__ import annotations

import functools
import zlib
from collections.abc import Sequence
from typing import Any

from card_envs.core.engine import Engine
from card_envs.core.errors import OptionError
from card_envs.core.features import has_features
from card_envs.core.registry import manifest, resolve_env_id
from card_envs.rl.rllib.env import RLlibCardEnv, require_ray

__all__ = ["MAIN", "PPO_DEFAULTS", "RANDOM", "league_mapping", "module_config", "ppo_config",
           "snapshot_ids"]

MAIN = "main"      # the module that learns
RANDOM = "random"  # masked uniform play (module.MaskedRandomModule)


def snapshot_ids(k: int) -> list[str]:
    """Module ids of the ``k`` frozen snapshots of the league."""
    return [f"snapshot_{i}" for i in range(k)]


def league_mapping(num_players: int, snapshots: int, random_weight: float) -> Any:
    """The league's agent -> module mapping: per episode, ``"main"`` in one seat (drawn from
    the episode id), and one opponent module for the other seats: ``"random"`` with
    probability ``random_weight``, else one of the snapshots."""
    opponents = snapshot_ids(snapshots)

    def mapping(agent_id: str, episode: Any, **kwargs: Any) -> str:
        h = zlib.crc32(str(episode.id_).encode())
        seat = int(str(agent_id).rpartition("_")[2])
        if seat == h % num_players:
            return MAIN
        u = ((h >> 8) % 10_000) / 10_000
        if not opponents or u < random_weight:
            return RANDOM
        return opponents[(h >> 24) % len(opponents)]

    return mapping


def module_config(env_id: str, hiddens: Sequence[int] = (128, 128), one_hot_max: int = 40,
                  game_features: bool = True, scorer_arch: Sequence[int] = (64,),
                  context_dim: int = 8, **options: Any) -> dict[str, Any]:
    """The model config of :class:`~card_envs.rl.rllib.module.MaskedActorCriticModule` for
    ``env_id`` (with the game's action-aligned features, ``card_envs/<game>/features.py``,
    when it has some)."""
    env_id = resolve_env_id(env_id)
    eng = Engine(env_id, **options)
    feats = None
    if game_features and has_features(eng.game):
        feats = {"env_id": env_id, "options": {**options, "num_players": eng.num_players}}
    return {"hiddens": [int(h) for h in hiddens], "one_hot_max": int(one_hot_max),
            "game_features": feats, "num_players": eng.num_players,
            "scorer_arch": [int(h) for h in scorer_arch], "context_dim": int(context_dim)}


#: PPO settings of :func:`ppo_config` (any can be overridden through ``ppo={...}``)
PPO_DEFAULTS: dict[str, Any] = {
    "lr": 3e-4, "gamma": 0.995, "lambda_": 0.95, "clip_param": 0.2, "entropy_coeff": 0.01,
    "vf_loss_coeff": 0.5, "grad_clip": 0.5, "num_epochs": 4, "minibatch_size": 1024,
    "train_batch_size_per_learner": 4096, "vf_clip_param": 1000.0,
}


def ppo_config(env_id: str, num_env_runners: int = 0, envs_per_runner: int | None = None,
               selfplay: str = "shared", snapshots: int = 2, snapshot_every: int = 5,
               random_weight: float = 0.5, shaping: float | None = None, seed: int = 0,
               model: dict[str, Any] | None = None, ppo: dict[str, Any] | None = None,
               illegal_action: str = "raise", runner: str = "batched", **options: Any) -> Any:
    """An RLlib ``PPOConfig`` (new API stack) that trains ``env_id`` by self-play with the
    masking module (module docstring for ``selfplay``). ``num_env_runners=0`` samples in the
    driver; ``envs_per_runner`` games per runner share each forward pass (default 256 batched,
    32 multi-agent). ``runner="batched"`` (default): each env runner steps its games as one
    batch (:class:`~card_envs.rl.rllib.batched.BatchedEnvRunner`, one single-agent module
    ``default_policy`` that learns; the runner plays the opponents); ``"multi_agent"``:
    RLlib's own runner over :class:`RLlibCardEnv` games (modules ``main``, ``random`` and the
    snapshots). ``shaping`` defaults to the game's manifest setting
    (``train.settings["shaping"]``, else 0); ``model`` overrides :func:`module_config`,
    ``ppo`` the :data:`PPO_DEFAULTS`."""
    require_ray()
    if runner not in ("batched", "multi_agent"):
        raise OptionError(f"runner must be 'batched' or 'multi_agent', got {runner!r}")
    if runner == "batched":
        return _batched_config(env_id, num_env_runners,
                               256 if envs_per_runner is None else envs_per_runner, selfplay,
                               snapshots, snapshot_every, random_weight, shaping, seed, model,
                               ppo, **options)
    envs_per_runner = 32 if envs_per_runner is None else envs_per_runner
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from card_envs.rl.rllib.callbacks import SelfPlayCallback
    from card_envs.rl.rllib.module import MaskedActorCriticModule, MaskedRandomModule

    env_id = resolve_env_id(env_id)
    if selfplay not in ("shared", "league"):
        raise OptionError(f"selfplay must be 'shared' or 'league', got {selfplay!r}")
    if shaping is None:
        shaping = float(manifest(env_id).train.settings.get("shaping", 0.0))
    settings = {**PPO_DEFAULTS, **(ppo or {})}
    eng = Engine(env_id, **options)
    n = eng.num_players
    env_config = {"env_id": env_id, "options": dict(options), "shaping": shaping,
                  "gamma": settings["gamma"], "illegal_action": illegal_action}
    mcfg = {**module_config(env_id, **options), **(model or {})}
    main = RLModuleSpec(module_class=MaskedActorCriticModule, model_config=mcfg)
    if selfplay == "shared":
        specs = {MAIN: main}
        mapping: Any = _shared_mapping
    else:
        specs = {MAIN: main, RANDOM: RLModuleSpec(module_class=MaskedRandomModule)}
        specs.update({sid: RLModuleSpec(module_class=MaskedActorCriticModule,
                                        model_config=mcfg) for sid in snapshot_ids(snapshots)})
        mapping = league_mapping(n, snapshots, random_weight)
    callback = functools.partial(
        SelfPlayCallback, main=MAIN, snapshot_every=snapshot_every,
        snapshots=snapshot_ids(snapshots) if selfplay == "league" else [])
    cfg = (PPOConfig()
           .environment(env=RLlibCardEnv, env_config=env_config,
                        disable_env_checking=illegal_action == "raise")
           .framework("torch")
           .env_runners(num_env_runners=num_env_runners, num_envs_per_env_runner=envs_per_runner,
                        num_cpus_per_env_runner=1, rollout_fragment_length="auto")
           .learners(num_learners=0)
           .multi_agent(policies=set(specs), policy_mapping_fn=mapping,
                        policies_to_train=[MAIN])
           .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs=specs))
           .training(**settings)
           .callbacks(callback)
           .debugging(seed=seed, log_level="WARN")
           .reporting(metrics_num_episodes_for_smoothing=100))
    return cfg


def _batched_config(env_id: str, num_env_runners: int, envs_per_runner: int, selfplay: str,
                    snapshots: int, snapshot_every: int, random_weight: float,
                    shaping: float | None, seed: int, model: dict[str, Any] | None,
                    ppo: dict[str, Any] | None, **options: Any) -> Any:
    """The ``runner="batched"`` configuration of :func:`ppo_config`."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from card_envs.rl.rllib.batched import BatchedEnvRunner, BatchedGames, batched_spaces
    from card_envs.rl.rllib.module import MaskedActorCriticModule

    env_id = resolve_env_id(env_id)
    if selfplay not in ("shared", "league"):
        raise OptionError(f"selfplay must be 'shared' or 'league', got {selfplay!r}")
    if not isinstance(envs_per_runner, int) or not 1 <= envs_per_runner <= 1 << 16:
        raise OptionError(f"envs_per_runner must be an integer in 1..65536, got "
                          f"{envs_per_runner!r}")
    if shaping is None:
        shaping = float(manifest(env_id).train.settings.get("shaping", 0.0))
    settings = {**PPO_DEFAULTS, **(ppo or {})}
    env_config = {"env_id": env_id, "options": dict(options), "shaping": float(shaping),
                  "gamma": float(settings["gamma"]), "selfplay": selfplay,
                  "snapshots": int(snapshots), "snapshot_every": int(snapshot_every),
                  "random_weight": float(random_weight)}
    BatchedEnvRunner._settings(env_config)  # bad settings fail here, not in a remote runner
    obs_space, act_space = batched_spaces(Engine(env_id, **options).game)
    mcfg = {**module_config(env_id, **options), **(model or {})}
    return (PPOConfig()
            .environment(env=BatchedGames, env_config=env_config,
                         observation_space=obs_space, action_space=act_space,
                         disable_env_checking=True)
            .framework("torch")
            .env_runners(env_runner_cls=BatchedEnvRunner, num_env_runners=num_env_runners,
                         num_envs_per_env_runner=envs_per_runner, num_cpus_per_env_runner=1,
                         rollout_fragment_length="auto")
            .learners(num_learners=0)
            .rl_module(rl_module_spec=RLModuleSpec(module_class=MaskedActorCriticModule,
                                                   model_config=mcfg))
            .training(**settings)
            .debugging(seed=seed, log_level="WARN")
            .reporting(metrics_num_episodes_for_smoothing=100))


def _shared_mapping(agent_id: str, episode: Any, **kwargs: Any) -> str:
    """Every seat plays the one shared module."""
    return MAIN
