"""``njit`` for card-envs kernels: numba's ``njit`` with a cache that follows the whole tree.

numba invalidates a cached kernel only when the kernel's *own* file changes, not when a kernel
it calls (in another module) does, so an edit to a shared helper would silently keep running
stale machine code. Our kernels are therefore cached in a directory keyed on a hash of every
source file of the core, the game folders and the agents: any kernel or constant edit
recompiles, edits to the layers above (arena, rl, CLI) keep the cache.

This is per function, not per process: ``njit(cache=True)`` from this module gives the
dispatcher its own cache object; numba's configuration (``numba.config.CACHE_DIR``), other
libraries' kernels and the user's own ``@numba.njit(cache=True)`` functions are untouched.
``NUMBA_CACHE_DIR`` (numba's own setting) still wins when set; ``CARD_ENVS_CACHE_DIR`` moves
the parent folder (default ``$XDG_CACHE_HOME/card_envs`` or ``~/.cache/card_envs``).
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib.util
import os
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import numba
from numba.core import caching

_PACKAGE = Path(__file__).resolve().parents[1]


def _roots() -> list[Path]:
    """The folders hashed: the package, and the agents' folder when it lies outside it (an
    editable install maps ``card_envs.agents`` to ``agents/`` at the top of the repository; a
    wheel has it inside the package). Found without importing the agents."""
    roots = [_PACKAGE]
    try:
        spec = importlib.util.find_spec("card_envs.agents")
    except (ImportError, ValueError):
        spec = None
    for loc in (spec.submodule_search_locations or []) if spec else []:
        path = Path(loc).resolve()
        if not path.is_relative_to(_PACKAGE):
            roots.append(path)
    return roots


_UNCACHED = ("arena", "rl", "ui", "testing", "cli.py")  # layers above the kernels: never compiled
#: files no compiled code depends on even where a kernel module imports them (the thread
#: policy, the contract checks): editing them keeps the compiled kernels
_UNCACHED_FILES = ("view.py", "draw.py", "pictures.py", "replay.py", "threads.py",
                   "contract.py")


def _module_name(root: Path, path: Path) -> str:
    """``card_envs.slide.rules`` for ``<root>/slide/rules.py`` (the agents' folder is
    ``card_envs.agents``, wherever it lies)."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    prefix = "card_envs" if root == _PACKAGE else "card_envs.agents"
    return ".".join([prefix, *parts])


def _imports(path: Path, module: str) -> tuple[set[str], bool]:
    """The modules ``path`` imports (``from a import b`` counts ``a`` and ``a.b``, relative
    imports resolved) and whether it compiles code (imports numba or ``njit``)."""
    tree = ast.parse(path.read_bytes())
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")
                up = up[:len(up) - node.level + 1]
                base = ".".join(up + ([base] if base else []))
            out.add(base)
            out.update(f"{base}.{a.name}" for a in node.names)
    compiles = any(m == "numba" or m.startswith("numba.") or m.endswith(".njit")
                   for m in out)
    return out, compiles


def kernel_sources() -> list[Path]:
    """The source files compiled code may depend on: every module that compiles (imports numba
    or ``njit``) and, transitively, every module of the core, the game folders and the agents
    that one of them imports (constants in a layout module are compiled into the kernels
    too), except the layers above (arena, rl, ui, testing, CLI) and ``_UNCACHED_FILES``. So
    the drawing modules of a game (``view.py``, ``parts/picture.py``...) are not among them:
    editing a picture keeps the compiled kernels."""
    files: dict[str, Path] = {}
    for root in _roots():
        for p in sorted(root.rglob("*.py")) if root.is_dir() else ():
            rel = p.relative_to(root)
            if root == _PACKAGE and rel.parts[0] in _UNCACHED or p.name in _UNCACHED_FILES:
                continue
            files[_module_name(root, p)] = p
    graph = {m: _imports(p, m) for m, p in files.items()}
    todo = [m for m, (_, compiles) in graph.items() if compiles]
    seen = set(todo)
    while todo:
        for dep in graph[todo.pop()][0]:
            if dep in files and dep not in seen:
                seen.add(dep)
                todo.append(dep)
    return sorted(files[m] for m in seen)


@functools.lru_cache(maxsize=1)
def source_hash() -> str:
    """16 hex digits over :func:`kernel_sources` (their paths and contents)."""
    h = hashlib.sha1()
    for p in kernel_sources():
        root = next(r for r in _roots() if p.is_relative_to(r))
        h.update(p.relative_to(root.parent).as_posix().encode())
        h.update(p.read_bytes())
    return h.hexdigest()[:16]


def cache_dir() -> Path:
    """Where card-envs kernels (and generated search modules) are cached."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return Path(os.environ["NUMBA_CACHE_DIR"])
    base = os.environ.get("CARD_ENVS_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "card_envs")
    return Path(base) / f"numba-{source_hash()}"


# numba < 0.61 spells it with an underscore
_UserDirLocator = (getattr(caching, "UserProvidedCacheLocator", None)
                   or caching._UserProvidedCacheLocator)


class _TreeLocator(_UserDirLocator):
    """numba's user-directory locator, pointed at :func:`cache_dir`."""

    def __init__(self, py_func: Any, py_file: str) -> None:
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno
        self._cache_path = os.path.join(cache_dir(), self.get_suitable_cache_subpath(py_file))

    @classmethod
    def from_function(cls, py_func: Any, py_file: str) -> Any:
        if os.environ.get("NUMBA_CACHE_DIR"):
            return None  # numba's own locator honours it
        return super(_UserDirLocator, cls).from_function(py_func, py_file)


class _TreeCacheImpl(caching.CompileResultCacheImpl):
    _locator_classes = [_TreeLocator, *caching.CompileResultCacheImpl._locator_classes]


class _TreeCache(caching.FunctionCache):
    _impl_class = _TreeCacheImpl


def njit(*args: Any, cache: bool = False, **kwargs: Any) -> Any:
    """``numba.njit`` with ``cache=True`` meaning the tree-keyed cache above, and ``nogil=True``
    by default: a compiled call releases the GIL, so the native PPO's sampler thread (engine,
    features, sampling) runs beside the learner's thread (``nogil=False`` keeps it)."""
    kwargs.setdefault("nogil", True)

    def wrap(fn: Callable) -> Any:
        disp = numba.njit(**kwargs)(fn)
        if cache and hasattr(disp, "py_func"):  # NUMBA_DISABLE_JIT=1 returns fn itself
            disp._cache = _TreeCache(disp.py_func)
        return disp

    if args and callable(args[0]) and len(args) == 1:
        return wrap(args[0])
    if args:
        raise TypeError("njit takes the function or keyword options only")
    return wrap


def load_generated(name: str, text: str) -> ModuleType:
    """Write ``text`` (generated Python source) to ``<cache_dir>/generated/<name>.py`` and
    import it. numba caches only functions of a real file, so code generated per game (a
    template bound to a game's kernels) goes through a module written here; the file is
    replaced atomically, since worker processes may write it at the same time."""
    folder = cache_dir() / "generated"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.py"
    if not path.exists() or path.read_text() != text:
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(text)
        os.replace(tmp, path)
    modname = f"_card_envs_{name}"  # registered so numba's cache can find it again
    spec = importlib.util.spec_from_file_location(modname, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[modname] = module
    spec.loader.exec_module(module)
    return module


def kernel_imports(**kernels: Callable[..., Any]) -> tuple[dict[str, str], str]:
    """For a generated module importing compiled functions: per ``role=kernel``, the format
    fields ``{role}_module`` and ``{role}_name``, and 8 hex digits naming that set of kernels
    (for the module's file name)."""
    names = [(f.__module__, f.__name__) for f in
             (getattr(k, "py_func", k) for k in kernels.values())]
    fields = {f"{role}_{part}": value for role, name in zip(kernels, names)
              for part, value in zip(("module", "name"), name)}
    return fields, hashlib.sha1(repr(names).encode()).hexdigest()[:8]


def template_source(template: Callable[..., Any], name: str) -> str:
    """The source of ``template`` (a function written to be pasted into a generated module),
    renamed ``name``."""
    import inspect

    src = inspect.getsource(template)
    return src.replace(f"def {template.__name__}(", f"def {name}(", 1)
