"""Flipology (``flipology_v0``)."""

from card_envs.core.manifest import lazy_submodules

__getattr__ = lazy_submodules(__name__)  # card_envs.flipology.env without an import first
