"""Evaluation arena (the rules and the public API are in :mod:`card_envs.arena.runner`)."""

from __future__ import annotations

from card_envs.arena.runner import *  # noqa: F403
from card_envs.arena.runner import __all__, __doc__, _chunks  # noqa: F401
