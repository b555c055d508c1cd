"""Isflak: penguins slide over a 5x7 grid of cards and take the floes they leave."""

from card_envs.core.manifest import lazy_submodules

__getattr__ = lazy_submodules(__name__)  # card_envs.isflak.env without an import first
