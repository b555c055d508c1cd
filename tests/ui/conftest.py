"""tests/ui: the ``browser`` marker and the headless Chromium the browser tests share (Debian's
``/usr/bin/chromium`` driven by playwright's Python API; never ``playwright install``).

Without Chromium (or playwright) the browser tests fail when ``CI=true`` (``.ci/run`` installs
Chromium) and skip elsewhere."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from typing import Any

import pytest

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
WAIT_MS = 60_000


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "browser: drives Debian's headless Chromium "
                                       "(fails without it when CI=true, skips otherwise)")


def _missing(why: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"{why}: the browser tests need it in CI (.ci/run installs chromium)")
    pytest.skip(why)


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """A persistent headless Chromium context with a fresh user-data dir (1280x900 pages
    unless a test sets another size)."""
    if not (os.path.exists(CHROMIUM) or shutil.which("chromium")):
        _missing("Debian's chromium is not installed (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("the playwright package is not installed (the dev extra has it)")
    exe = CHROMIUM if os.path.exists(CHROMIUM) else shutil.which("chromium")
    with tempfile.TemporaryDirectory(prefix="card-envs-chromium-") as profile, \
            sync_playwright() as p:
        ctx = p.chromium.launch_persistent_context(
            profile, executable_path=exe, headless=True, args=ARGS,
            viewport={"width": 1280, "height": 900})
        ctx.set_default_timeout(WAIT_MS)
        try:
            yield ctx
        finally:
            ctx.close()
