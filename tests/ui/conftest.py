"""tests/ui: the ``browser`` marker (tests that drive headless Chromium)."""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "browser: drives Debian's headless Chromium "
                                       "(fails without it when CI=true, skips otherwise)")
