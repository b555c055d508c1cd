"""The RLlib callback of :func:`card_envs.rl.rllib.config.ppo_config`: every sampled action checked
against its observation's mask, the learner's win rate, and the league's snapshots.
Imports ray (the ``rllib`` extra)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from ray.rllib.callbacks.callbacks import RLlibCallback

__all__ = ["SelfPlayCallback", "copy_module", "episode_masks"]


def episode_masks(agent_episode: Any) -> tuple[np.ndarray, np.ndarray]:
    """(actions, masks of the observations they were chosen at) of one agent's episode
    (a ``SingleAgentEpisode``, list or numpy form)."""
    acts = np.asarray(agent_episode.get_actions(), np.int64).reshape(-1)
    obs = agent_episode.get_observations()
    if isinstance(obs, dict):  # numpy form: a dict of stacked arrays
        masks = np.asarray(obs["action_mask"])[:acts.size]
    else:
        masks = np.asarray([o["action_mask"] for o in list(obs)[:acts.size]])
    return acts, masks.reshape(acts.size, -1)


class SelfPlayCallback(RLlibCallback):
    """Checks every sampled action against the mask it was chosen at (summed metrics
    ``masked_actions_checked`` and ``masked_action_violations`` in the env runners' results),
    logs ``main_win_rate`` (the wins of module ``main``, last 200 games) and, in a league
    (``snapshots``: the snapshot module ids), copies ``main`` into the next snapshot every
    ``snapshot_every`` training iterations."""

    def __init__(self, main: str = "main", snapshots: Sequence[str] = (),
                 snapshot_every: int = 0) -> None:
        super().__init__()
        self.main, self.snapshots = main, list(snapshots)
        self.snapshot_every = int(snapshot_every)
        self._next_slot = 0

    def on_episode_end(self, *, episode: Any, metrics_logger: Any = None,
                       **kwargs: Any) -> None:
        checked = bad = 0
        for aid, sa in episode.agent_episodes.items():
            acts, masks = episode_masks(sa)
            if acts.size:
                checked += acts.size
                bad += int((masks[np.arange(acts.size), acts] == 0).sum())
            if episode.module_for(aid) == self.main:
                info = sa.get_infos(-1)
                if "winner" in info:
                    metrics_logger.log_value("main_win_rate", float(info["winner"]),
                                             reduce="mean", window=200)
        metrics_logger.log_value("masked_actions_checked", checked, reduce="sum")
        metrics_logger.log_value("masked_action_violations", bad, reduce="sum")

    def on_train_result(self, *, algorithm: Any, result: dict, **kwargs: Any) -> None:
        every = self.snapshot_every
        if not self.snapshots or not every or algorithm.iteration % every:
            return
        slot = self.snapshots[self._next_slot % len(self.snapshots)]
        self._next_slot += 1
        copy_module(algorithm, self.main, slot)
        result["snapshot_refreshed"] = slot


def copy_module(algorithm: Any, source: str, target: str) -> None:
    """Copy module ``source``'s weights into ``target`` on the learner and on every env
    runner (training syncs only the trained modules)."""
    state = algorithm.learner_group.get_state(
        components=f"learner/rl_module/{source}")["learner"]["rl_module"][source]
    algorithm.learner_group.set_state({"learner": {"rl_module": {target: state}}})
    # set directly: EnvRunnerGroup.sync_weights skips runners already at the learner's
    # weights_seq_no (they are, right after a training step)
    algorithm.env_runner_group.foreach_env_runner(
        lambda runner: runner.module[target].set_state(state), local_env_runner=True)
