"""Shared by the ui tests: short game settings per game, a uvicorn server on 127.0.0.1 (a
random port, started and stopped by the test) and small HTTP helpers (stdlib only)."""

from __future__ import annotations

import json
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn

from card_envs.ui.server import create_app

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
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}", app
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()


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
