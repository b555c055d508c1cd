"""Gumbel AlphaZero self-play for any number of seats: :func:`train_az` (the loop,
:mod:`card_envs.rl.az.train`), its settings (:class:`AZSettings`, ``AZ_DEFAULTS``), batched
self-play (:mod:`card_envs.rl.az.selfplay`, :mod:`card_envs.rl.az.workers`) and batched
evaluation (:mod:`card_envs.rl.az.evaluate`). Needs torch (the ``train`` extra)."""

from card_envs.rl.az.settings import AZ_DEFAULTS, AZSettings
from card_envs.rl.az.train import AZResult, az_policy, train_az

__all__ = ["AZ_DEFAULTS", "AZResult", "AZSettings", "az_policy", "train_az"]
