"""Every registered game folder keeps the one contract (:mod:`card_envs.core.contract`), and no
module of the package is a detour: no function that only hands its call to another module."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path
from types import ModuleType

import pytest

from card_envs.core.contract import contract_problems, package_of
from card_envs.core.registry import manifests
from source_tree import ROOT, import_base, modules

MAX_LINES = 500


@pytest.mark.parametrize("m", manifests(), ids=lambda m: m.env_id)
def test_game_folder_keeps_the_contract(m) -> None:
    problems = contract_problems(package_of(m.env))
    assert not problems, f"{m.env_id}:\n" + "\n".join(problems)


def _module_names(tree: ast.Module, module: str, is_package: bool) -> set[str]:
    """Names bound to modules by the file's imports (``from pkg import rules as R``)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = import_base(node, module, is_package)
            for a in node.names:
                try:
                    obj = getattr(importlib.import_module(base), a.name, None)
                except ImportError:
                    continue
                if isinstance(obj, ModuleType):
                    names.add(a.asname or a.name)
    return names


def _forwarders(path: Path, module: str) -> list[str]:
    tree = ast.parse(path.read_text())
    mods = _module_names(tree, module, path.name == "__init__.py")
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        body = node.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body = body[1:]  # the docstring
        if len(body) != 1 or not isinstance(body[0], (ast.Return, ast.Expr)):
            continue
        call = body[0].value
        if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Attribute):
            continue
        target = call.func.value
        if isinstance(target, ast.Name) and target.id in mods:
            a = node.args
            params = {p.arg for p in a.posonlyargs + a.args + a.kwonlyargs}
            params |= {p.arg for p in (a.vararg, a.kwarg) if p is not None}
            values = [x.value if isinstance(x, ast.Starred) else x for x in call.args]
            values += [k.value for k in call.keywords]
            if all(isinstance(v, ast.Name) and v.id in params for v in values):
                # hands its own arguments on unchanged, adds nothing
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}() only calls "
                             f"{ast.unparse(call.func)}")
    return found


def test_no_forwarder_functions() -> None:
    found = []
    for module, path in modules().items():
        found.extend(_forwarders(path, module))
    assert not found, "functions that only call another module:\n" + "\n".join(found)


def test_no_module_over_500_lines() -> None:
    long = [f"{p.relative_to(ROOT)}: {n} lines" for p in modules().values()
            if (n := len(p.read_text().splitlines())) > MAX_LINES]
    assert not long, "modules over 500 lines:\n" + "\n".join(long)
