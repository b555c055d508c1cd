"""The package's source files as modules, for the tests that read the code itself (layers,
import cycles, the game contract, forwarders, module sizes)."""

from __future__ import annotations

import ast
from pathlib import Path

import card_envs

ROOT = Path(card_envs.__file__).resolve().parent.parent
# source folder -> the package it installs as (pyproject.toml's package-dir)
SOURCES = {"card_envs": "card_envs", "agents": "card_envs.agents"}


def modules() -> dict[str, Path]:
    """Every module of the package (``card_envs.agents`` from the ``agents/`` folder) -> its
    file."""
    out = {}
    for folder, package in SOURCES.items():
        for p in sorted((ROOT / folder).rglob("*.py")):
            parts = list(p.relative_to(ROOT / folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join([package, *parts])] = p
    return out


def import_base(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    """The absolute module a ``from ... import`` statement of ``module`` imports from."""
    base = node.module or ""
    if node.level:
        pkg = module.split(".") if is_package else module.split(".")[:-1]
        pkg = pkg[:len(pkg) - node.level + 1]
        base = ".".join([*pkg, base] if base else pkg)
    return base
