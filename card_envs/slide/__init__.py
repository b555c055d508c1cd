"""Slide: push cards into a 4x4 grid, pairs vanish, lowest total wins."""

from card_envs.core.manifest import lazy_submodules

__getattr__ = lazy_submodules(__name__)  # card_envs.slide.env without an import first
