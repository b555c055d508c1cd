"""Deprecated: the agents are ``card_envs.agents``. This package is installed under the old
top-level name ``agents`` for one version: importing it warns (``DeprecationWarning``) and gives
the modules of ``card_envs.agents`` themselves (``agents.registry is
card_envs.agents.registry``), never a second copy. See ``card_envs.agents._legacy``."""

from card_envs.agents._legacy import alias

alias()
