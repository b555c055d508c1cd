"""In a real browser: headless Chromium (Debian's package, driven by playwright's Python API;
never ``playwright install``) plays a whole game of every game through the play page by
clicking legal-move buttons, and steps through a replay page opened from a file.

Without ``/usr/bin/chromium`` (or playwright) the tests fail when ``CI=true`` (``.ci/run``
installs Chromium) and skip elsewhere."""

from __future__ import annotations

import os
import random
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from card_envs.ui.record import record_game
from card_envs.ui.replay_html import write_html
from ui_helpers import GAMES, SHORT, http, running_server

pytestmark = pytest.mark.browser

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
WAIT_MS = 60_000


def _missing(why: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"{why}: the browser tests need it in CI (.ci/run installs chromium)")
    pytest.skip(why)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """A persistent headless Chromium context with a fresh user-data dir."""
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


def _csp_watch(page: Any) -> list[str]:
    """Collect the console's Content-Security-Policy violations of ``page``."""
    seen: list[str] = []
    page.on("console", lambda m: seen.append(m.text) if "Content Security Policy" in m.text
            else None)
    return seen


INJECT = """() => { const s = document.createElement("script");
  s.textContent = "window.__injected = 1"; document.body.appendChild(s);
  return window.__injected === undefined; }"""


def _injected_script_is_blocked(page: Any, violations: list[str]) -> None:
    """The page's own script ran (the test drove it) without a CSP violation; a script
    injected into the page does not run, and the browser reports why."""
    assert violations == [], violations
    assert page.evaluate(INJECT) is True
    page.wait_for_timeout(200)
    assert any("script-src" in v for v in violations), violations


def _wait_settled(page: Any) -> str:
    page.wait_for_selector("body[data-state=your-turn], body[data-state=over]")
    return page.get_attribute("body", "data-state")


@pytest.mark.parametrize("game", GAMES)
def test_play_a_whole_game_by_clicking(browser: Any, game: str) -> None:
    rng = random.Random(3)
    errors: list[str] = []
    with running_server(defaults={**SHORT[game], "seed": 21}) as (base, _):
        page = browser.new_page()
        page.on("pageerror", lambda e: errors.append(str(e)))
        violations = _csp_watch(page)
        page.goto(base + "/")
        clicks = 0
        while _wait_settled(page) == "your-turn":
            gid, turn, shown = page.evaluate(
                "[S.view.id, Number(document.body.dataset.turn), [...document.querySelectorAll("
                "'#moves button.move')].map((b) => Number(b.dataset.action))]")
            _, view = http("GET", f"{base}/api/games/{gid}")
            assert shown == [m["action"] for m in view["legal"]]  # only legal moves
            page.locator("#moves button.move").nth(rng.randrange(len(shown))).click()
            page.wait_for_function(f"() => Number(document.body.dataset.turn) > {turn}")
            clicks += 1
        assert clicks > 0 and errors == []
        assert page.text_content("#status") == "Game over"
        assert page.is_visible("#result-box") and page.locator("#result tr.winner").count()
        turn = int(page.get_attribute("body", "data-turn"))
        assert page.locator("#log li").count() == turn
        assert page.locator("#picture svg").count() == 1
        replay = page.get_attribute("#replay-link", "href")
        status, rep = http("GET", base + replay)
        assert status == 200 and len(rep["actions"]) == turn
        old = page.evaluate("S.view.id")
        page.click("#new-game")  # a new game of the same settings
        page.wait_for_function(f"() => S.view && S.view.id !== {old!r} && "
                               "document.body.dataset.state !== 'busy'")
        assert int(page.get_attribute("body", "data-turn")) < turn
        _injected_script_is_blocked(page, violations)
        page.close()


def test_step_through_a_replay_file(browser: Any, tmp_path: Path) -> None:
    rep = record_game("slide", ["heuristic", "random"], seed=5)
    path = tmp_path / "slide.html"
    write_html(rep, path)
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    violations = _csp_watch(page)
    page.goto(path.as_uri())
    page.wait_for_selector("body[data-state=ready]")
    last = len(rep["actions"])

    def step() -> int:
        return int(page.get_attribute("body", "data-step"))

    def picture() -> str:
        return page.inner_html("#picture")

    start = picture()
    assert step() == 0 and page.locator("#moves li.current").count() == 0
    assert page.locator("#moves li").count() == last
    page.keyboard.press("ArrowRight")
    assert step() == 1 and page.get_attribute("#moves li.current", "id") == "move-1"
    page.click("#next")
    assert step() == 2 and page.get_attribute("#moves li.current", "id") == "move-2"
    page.click("#moves li:nth-child(10)")  # jump to a move in the list
    assert step() == 10 and page.get_attribute("#moves li.current", "id") == "move-10"
    page.click("#prev")
    assert step() == 9
    page.keyboard.press("End")
    assert step() == last and picture() != start
    assert page.is_visible("#result-box") and page.locator("#result tr.winner").count()
    page.keyboard.press("ArrowLeft")
    assert step() == last - 1 and not page.is_visible("#result-box")
    page.fill("#slider", "20")
    assert step() == 20
    everything = picture()
    page.select_option("#view", "0")  # seat 0's view hides face-down cards
    assert picture() != everything
    page.click("#first")
    assert step() == 0 and page.locator("#moves li.current").count() == 0
    assert errors == []
    _injected_script_is_blocked(page, violations)
    page.close()
