"""The distribution's layout: the folder ``agents/`` installs as ``card_envs.agents`` (with its
pretrained baselines), and the deprecated top-level name ``agents`` gives the very same modules
with a ``DeprecationWarning``.

The import checks run in fresh interpreters (an import is done once per process); the wheel is
built by pip from a copy of the sources, as a user's ``pip install`` builds it."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

import card_envs
import card_envs.agents
from card_envs.agents.ppo import BASELINES
from card_envs.core import jit

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
MESSAGE = "agents is deprecated, import card_envs.agents"


def _run(code: str, cwd: Path) -> dict:
    """Run ``code`` in a fresh interpreter in ``cwd``; it prints one JSON object last."""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300, cwd=cwd)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def _source_packages() -> dict[str, Path]:
    """Every package of the tree -> its folder, by the name it installs as."""
    found = {}
    for folder, name in (("card_envs", "card_envs"), ("agents", "card_envs.agents")):
        for init in sorted((ROOT / folder).rglob("__init__.py")):
            rel = init.parent.relative_to(ROOT / folder).parts
            found[".".join([name, *rel])] = init.parent
    return found


def test_the_package_list_matches_the_tree() -> None:
    """``pyproject.toml`` lists the packages (discovery does not follow ``package-dir``): a
    new game folder must be added there, or its wheel would miss it."""
    listed = set(PYPROJECT["packages"])
    assert listed - {"agents"} == set(_source_packages()), (
        "pyproject.toml's [tool.setuptools] packages differ from the folders with __init__.py")
    assert PYPROJECT["package-dir"] == {"card_envs.agents": "agents", "agents": "compat/agents"}


def test_the_installed_agents_are_this_folder() -> None:
    assert Path(card_envs.agents.__file__).resolve() == ROOT / "agents" / "__init__.py"
    assert card_envs.agents.__name__ == "card_envs.agents"
    assert BASELINES.is_dir() and sorted(BASELINES.glob("*.safetensors"))


def test_the_kernel_cache_hashes_the_agents() -> None:
    """The numba cache key covers the agents' sources wherever the install put them."""
    here = Path(card_envs.agents.__file__).resolve().parent
    assert any(here == r or here.is_relative_to(r) for r in jit._roots())


_NEW = """
import json, sys, warnings

def aliased():
    return "agents" in sys.modules or any(type(f).__name__ == "_AliasFinder"
                                          for f in sys.meta_path)

with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    import card_envs
    clean = not aliased()
    import card_envs.agents.registry
    from card_envs.agents.registry import make_agent
    agent = make_agent("heuristic", "slide_v0", seed=0)
print(json.dumps({
    "clean": clean,
    "alias": aliased(),
    "warned": [str(x.message) for x in w if "card_envs.agents" in str(x.message)],
    "class": type(agent).__module__,
}))
"""


@pytest.mark.parametrize("where", ["elsewhere", "checkout"])
def test_the_new_name_imports_without_the_old_one(tmp_path: Path, where: str) -> None:
    """``import card_envs`` and ``card_envs.agents`` touch neither ``sys.modules["agents"]``
    nor ``sys.meta_path``, and warn nothing."""
    got = _run(_NEW, tmp_path if where == "elsewhere" else ROOT)
    assert got == {"clean": True, "alias": False, "warned": [],
                   "class": "card_envs.agents.slide"}


_OLD = """
import json, sys, warnings
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    import agents.registry
    from agents.registry import make_agent
    from agents import Agent
    from agents.search import SearchAgent
    import agents.slide
    agent = make_agent("heuristic", "slide_v0", seed=0)
ours = [x for x in w if x.category is DeprecationWarning and "card_envs.agents" in str(x.message)]
import card_envs.agents
import card_envs.agents.registry
import card_envs.agents.search
import card_envs.agents.slide
old = sorted(m for m in sys.modules if m == "agents" or m.startswith("agents."))
print(json.dumps({
    "warnings": [str(x.message) for x in ours],
    "where": [x.filename for x in ours],
    "package": agents is card_envs.agents,
    "registry": agents.registry is card_envs.agents.registry,
    "same": all(sys.modules[m] is sys.modules["card_envs." + m] for m in old),
    "old": old,
    "classes": (make_agent is card_envs.agents.registry.make_agent
                and Agent is card_envs.agents.base.Agent
                and SearchAgent is card_envs.agents.search.SearchAgent
                and type(agent) is card_envs.agents.slide.SlideHeuristicAgent),
    "registries": agents.registry.GENERIC is card_envs.agents.registry.GENERIC,
    "spec": card_envs.agents.registry.__spec__.name,
    "files": len({m.__file__ for m in sys.modules.values()
                  if getattr(m, "__file__", None) and "agents" in m.__name__.split(".")}),
    "modules": len({id(m) for m in sys.modules.values()
                    if getattr(m, "__file__", None) and "agents" in m.__name__.split(".")}),
}))
"""


@pytest.mark.parametrize("where", ["elsewhere", "checkout"])
def test_the_old_name_warns_and_gives_the_same_modules(tmp_path: Path, where: str) -> None:
    """``import agents`` (the installed compatibility package; from a checkout's root, the
    folder itself by its old name) warns once, pointing at the importing line, and gives the
    modules of ``card_envs.agents`` themselves: no second copy of any module."""
    got = _run(_OLD, tmp_path if where == "elsewhere" else ROOT)
    assert got["warnings"] == [MESSAGE]
    assert got["where"] == ["<string>"]  # the importing code, not the shim or importlib
    assert got["package"] and got["registry"] and got["same"] and got["classes"]
    assert got["registries"]
    assert got["old"] == ["agents", "agents.registry", "agents.search", "agents.slide"]
    assert got["spec"] == "card_envs.agents.registry"
    assert got["files"] == got["modules"]  # one module object per source file


def test_an_unknown_old_submodule_is_not_found(tmp_path: Path) -> None:
    code = ("import json, warnings\nwarnings.simplefilter('ignore')\n"
            "try:\n    import agents.nothing_here\nexcept ModuleNotFoundError as e:\n"
            "    print(json.dumps({'name': e.name}))\n")
    assert _run(code, tmp_path) == {"name": "agents.nothing_here"}


def _wheel(tmp_path: Path) -> zipfile.ZipFile:
    """``pip wheel`` of a copy of the sources (the build leaves nothing in the work tree)."""
    src = tmp_path / "src"
    skip = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "build")
    for name in ("card_envs", "agents", "compat"):
        shutil.copytree(ROOT / name, src / name, ignore=skip)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    out = subprocess.run([sys.executable, "-m", "pip", "wheel", str(src), "--no-deps",
                          "-w", str(tmp_path / "dist"), "-q"],
                         capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-3000:]
    (wheel,) = (tmp_path / "dist").glob("card_envs-*.whl")
    return zipfile.ZipFile(wheel)


def test_the_wheel_holds_card_envs_agents_and_its_baselines(tmp_path: Path) -> None:
    names = set(_wheel(tmp_path).namelist())
    expected = {f"card_envs/agents/data/ppo/{p.name}" for p in BASELINES.iterdir()
                if p.suffix in (".safetensors", ".json")}
    assert any(n.endswith(".safetensors") for n in expected)
    for package, folder in _source_packages().items():
        base = package.replace(".", "/")
        expected |= {f"{base}/{p.name}" for p in folder.glob("*.py")}
    expected |= {f"card_envs/{p.relative_to(ROOT / 'card_envs').as_posix()}"
                 for p in (ROOT / "card_envs").glob("*/data/*.json")}
    assert expected <= names, sorted(expected - names)
    # the top-level name holds the compatibility package alone, not a copy of the agents
    assert sorted(n for n in names if n.startswith("agents/")) == ["agents/__init__.py"]
    assert not [n for n in names if n.endswith((".pyc", ".egg-info"))]
