"""Shared by the ui tests: short game settings per game, a uvicorn server on 127.0.0.1 (a
random port, started and stopped by the test), small HTTP helpers (stdlib only) and the steps
of the browser tests (playing a move by clicking its boxes on the picture)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from card_envs.ui.server import create_app, serving

#: settings that keep every game short (Op Glad IJs: few turned cards); "toy" is the
#: test-only game (registered by tests/conftest.py)
SHORT: dict[str, dict[str, Any]] = {
    "slide": {"game": "slide", "players": 2, "vs": "random"},
    "isflak": {"game": "isflak", "players": 2, "vs": "random"},
    "op_glad_ijs": {"game": "op_glad_ijs", "players": 2, "vs": "random",
                    "options": {"max_turned": 4}},
    "flipology": {"game": "flipology", "players": 2, "vs": "random"},
    "if_it_fits": {"game": "if_it_fits", "players": 2, "vs": "random",
                   "options": {"table": [7, 7]}},
    "toy": {"game": "toy", "players": 2, "vs": "random"},
}
GAMES = ("slide", "isflak", "op_glad_ijs", "flipology", "if_it_fits")
BOARD_GAMES = (*GAMES, "toy")
PHONE, DESKTOP = (400, 800), (1280, 800)

#: what the page shows, measured in the browser: the picture's width, the page's scroll width,
#: the hit boxes (step, actions) and the marks of the others' last moves
MEASURE = """() => {
  const svg = document.querySelector("#picture svg");
  return {
    width: innerWidth, scroll: document.documentElement.scrollWidth,
    picture: svg ? svg.getBoundingClientRect().width : 0,
    hits: [...document.querySelectorAll("#picture rect.hit")].map(
      (r) => [Number(r.dataset.step), r.dataset.actions.split(" ").map(Number)]),
    marks: document.querySelectorAll("#picture rect.last").length,
    selected: document.body.dataset.selected || null,
  };
}"""


@contextmanager
def running_server(**app_kw: Any) -> Iterator[tuple[str, Any]]:
    """A uvicorn server of ``create_app(**app_kw)`` on 127.0.0.1 (a free port) in a thread:
    yields ``(base_url, app)``; stopped (and its thread joined) on exit."""
    app = create_app(**app_kw)
    with serving(app) as base:
        yield base, app


def http(method: str, url: str, body: Any = None, raw: bytes | None = None,
         ctype: str = "application/json", timeout: float = 120) -> tuple[int, Any]:
    """``(status, decoded JSON)`` of one request (errors too)."""
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    req = urllib.request.Request(url, data=data, method=method)
    if data is not None:
        req.add_header("Content-Type", ctype)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


def wait_settled(page: Any) -> str:
    """Wait until the page is the human's turn or the game is over; returns which."""
    page.wait_for_selector("body[data-state=your-turn], body[data-state=over]")
    return page.get_attribute("body", "data-state")


def hit(page: Any, step: int, action: int) -> Any:
    """The hit box of the picture that ``action``'s path goes through at ``step``."""
    return page.locator(f'#picture rect.hit[data-step="{step}"][data-actions~="{action}"]')


def click_move(page: Any, move: dict[str, Any], timeout: float = 10_000) -> None:
    """Play ``move`` (``{action, label, path}`` of the view) by clicking its boxes on the
    picture, in order, with the mouse (a box hidden under another one fails the click); waits
    for the move counter to pass."""
    turn = int(page.get_attribute("body", "data-turn"))
    for step in range(len(move["path"])):
        box = hit(page, step, move["action"])
        assert box.count() == 1, (move, step)
        box.click(timeout=timeout)
    page.wait_for_function(f"() => Number(document.body.dataset.turn) > {turn}")


def csp_watch(page: Any) -> list[str]:
    """Collect the console's Content-Security-Policy violations of ``page``."""
    seen: list[str] = []
    page.on("console", lambda m: seen.append(m.text) if "Content Security Policy" in m.text
            else None)
    return seen


INJECT = """() => { const s = document.createElement("script");
  s.textContent = "window.__injected = 1"; document.body.appendChild(s);
  return window.__injected === undefined; }"""


def injected_script_is_blocked(page: Any, violations: list[str]) -> None:
    """The page's own script ran (the test drove it) without a CSP violation; a script
    injected into the page does not run, and the browser reports why."""
    assert violations == [], violations
    assert page.evaluate(INJECT) is True
    page.wait_for_timeout(200)
    assert any("script-src" in v for v in violations), violations
