"""Test-suite set-up: every folder of ``tests/`` is importable (``from slide_ref import ...``
from any test), so per-game test folders need no table of their own; packages in ``tests/``
(the toy game ``toy_cards``) are imported as packages."""

from __future__ import annotations

import sys
from pathlib import Path

_HERE = Path(__file__).resolve().parent
for _d in sorted([_HERE, *(p for p in _HERE.iterdir() if p.is_dir() and
                           not p.name.startswith((".", "_")) and p.name != "playthroughs"
                           and not (p / "__init__.py").exists())]):
    if str(_d) not in sys.path:
        sys.path.insert(0, str(_d))

# The test-only toy game joins every layer through its manifest alone.
import card_envs  # noqa: E402
from toy_cards.manifest import MANIFEST as _TOY  # noqa: E402

card_envs.register(_TOY)
