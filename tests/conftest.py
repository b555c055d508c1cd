"""Test-suite set-up. The tests mirror the source: ``core/``, ``games/<game>/``, ``agents/``,
``arena/``, ``rl/``, ``ui/``, ``testing/`` (the kit), ``cli/``, ``benchmarks/`` and
``package/`` (layers, packaging, the notebook); the helpers they share live in ``support/``
(fuzzing, golden playthroughs, stress runs, the test-only toy game ``toy_cards``).

Every test folder and ``support/`` is importable (``from slide_ref import ...`` from any test),
so per-game folders need no table of their own; packages (``toy_cards``) are imported as
packages."""

from __future__ import annotations

import sys
from pathlib import Path

_HERE = Path(__file__).resolve().parent
_SKIP = {"playthroughs", "__pycache__"}


def _folders(root: Path) -> list[Path]:
    out = [root]
    for p in sorted(root.iterdir()):
        if p.is_dir() and p.name not in _SKIP and not p.name.startswith((".", "_")) \
                and not (p / "__init__.py").exists():
            out.extend(_folders(p))
    return out


for _d in _folders(_HERE):
    if str(_d) not in sys.path:
        sys.path.insert(0, str(_d))

# The test-only toy game joins every layer through its folder alone.
import card_envs  # noqa: E402

card_envs.register("toy_cards")
