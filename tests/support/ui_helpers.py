"""Shared by the ui tests: short game settings per game, a uvicorn server on 127.0.0.1 (a
random port, started and stopped by the test) and small HTTP helpers (stdlib only)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from card_envs.ui.server import create_app, serving

#: settings that keep every game short (Op Glad IJs: few turned cards)
SHORT: dict[str, dict[str, Any]] = {
    "slide": {"game": "slide", "players": 2, "vs": "random"},
    "isflak": {"game": "isflak", "players": 2, "vs": "random"},
    "op_glad_ijs": {"game": "op_glad_ijs", "players": 2, "vs": "random",
                    "options": {"max_turned": 4}},
    "flipology": {"game": "flipology", "players": 2, "vs": "random"},
    "if_it_fits": {"game": "if_it_fits", "players": 2, "vs": "random",
                   "options": {"table": [7, 7]}},
}
GAMES = tuple(SHORT)


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
