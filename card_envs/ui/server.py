"""The play server: a person plays a game against agents in the browser.

``card-envs play --game slide --players 3 --vs mcts,heuristic`` serves :func:`create_app` with
uvicorn on ``127.0.0.1`` (Starlette and uvicorn: the ``ui`` extra). The state lives on the
server, in a table of games keyed by random ids (``secrets.token_urlsafe``); the browser only
ever receives the human seat's view: its picture (drawn from ``state_dict(observer=seat)``),
its legal moves when it is to act, and the move log as that seat may read it
(:func:`card_envs.ui.moves.describe_move`). The agents move on the server until the human is to
act again or the game ends.

Everything a browser sends is hostile until checked (``docs/ui.md``, "Security"): bodies are
bounded before they are read, agent specs are parsed by the CLI's validator with budgets
capped (:data:`~card_envs.ui.sessions.AGENT_LIMITS`) and no file named (models only by the
names the command line gave, :class:`~card_envs.ui.sessions.ServerPolicy`), deals come from
64-bit secrets, and every response carries the security headers of :mod:`card_envs.ui.csp`.
The games themselves and the checks of a request's fields are in :mod:`card_envs.ui.sessions`;
this module is HTTP: bodies, routes, headers, the worker threads.

JSON API (every error is ``{"error": message}`` and leaves the game as it was):

==============================  ===========================================================
``GET  /``                      the page (HTML, inline CSS and JS, no external resources)
``GET  /api/config``            the defaults of a new game and the games on offer
``POST /api/games``             new game ``{game, players, vs, seat, seed, options, theme}``
                                -> 201 and the human's view (422 for a bad field, 400 not
                                JSON, 413 too large, 503 busy)
``GET  /api/games/{id}``        the human's view (404 unknown game)
``POST /api/games/{id}/move``   ``{action, turn}``: ``turn`` is the move counter of the view
                                the move was chosen on. 409 stale/replayed turn or game over,
                                400 illegal action, 422 bad field types, 400 not JSON
``GET  /api/games/{id}/replay`` the replay JSON (409 until the game is over: it reveals
                                every card)
==============================  ===========================================================

The view: ``{id, env_id, game, seat, players, turn, to_act, your_turn, phase, svg, legal:
[{action, label, path}], log: [{n, seat, label}], last: [{n, seat, label, boxes}], over,
result, result_text, theme}``. ``path``: the boxes ``[x, y, w, h]`` on ``svg`` a person clicks
in order to play the move; ``last``: the other seats' latest moves since the human's, with the
boxes where each was played when the human may know it (:mod:`card_envs.ui.board`);
``result_text``: how the game is won, for the human's view.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import MutableHeaders
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from card_envs.agents.registry import parse_spec
from card_envs.core.checks import check_nesting
from card_envs.core.errors import StateDictError
from card_envs.core.files import parse_json
from card_envs.core.registry import env_ids, manifest, resolve_env_id
from card_envs.ui.csp import SECURITY_HEADERS, policy
from card_envs.ui.page import PAGE_SCRIPT, play_page
from card_envs.ui.record import json_safe
from card_envs.ui.sessions import (
    AGENT_LIMITS,
    MAX_BYTES,
    ApiError,
    Games,
    GameSession,
    ServerPolicy,
    clip,
    new_session,
)
from card_envs.ui.specs import split_agents

__all__ = ["MAX_BODY", "SecurityHeaders", "check_model", "create_app", "serving"]

MAX_BODY = 64 * 1024  # bytes of a request body (read no further)
MAX_DEPTH = 12  # nesting of a request's JSON (a deck in the options needs 4)
MAX_ITEMS = 20_000  # values in a request's JSON
MAX_BUSY = 8  # requests computing at once (agents thinking); more wait their turn
BUSY_WAIT = 30.0  # seconds a request waits for its turn before a 503


def _error(e: ApiError) -> JSONResponse:
    return JSONResponse({"error": e.message}, status_code=e.status)


async def _body(request: Request) -> dict[str, Any]:
    """The request's JSON object: 415 not JSON by type, 413 over ``MAX_BODY`` bytes (by its
    Content-Length, else as soon as the stream passes it: never read further), 400 not
    JSON, nested deeper than ``MAX_DEPTH`` or not an object."""
    ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if ctype != "application/json":
        raise ApiError(415, "send JSON (Content-Type: application/json)")
    length = request.headers.get("content-length")
    if length is not None:
        if not (length.isascii() and length.isdigit()) or len(length) > 18:
            raise ApiError(400, "bad Content-Length")
        if int(length) > MAX_BODY:
            raise ApiError(413, f"request body over {MAX_BODY} bytes")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY:
            raise ApiError(413, f"request body over {MAX_BODY} bytes")
        chunks.append(chunk)
    try:  # bad UTF-8 or JSON, long integers, NaN, repeated keys, deep nesting: 400
        body = parse_json(b"".join(chunks), "request body")
        check_nesting(body, MAX_DEPTH, MAX_ITEMS, "the request body")
    except StateDictError as e:
        raise ApiError(400, clip(str(e), 300)) from None
    if not isinstance(body, dict):
        raise ApiError(400, f"the body must be a JSON object, got {type(body).__name__}")
    return body


class SecurityHeaders:
    """ASGI middleware: every response carries :data:`card_envs.ui.csp.SECURITY_HEADERS`,
    the page's Content-Security-Policy (its one inline script, by hash; no frames) and
    ``Cache-Control: no-store`` (a view is one seat's secret)."""

    def __init__(self, app: ASGIApp, csp: str) -> None:
        self.app = app
        self.headers = {**SECURITY_HEADERS, "Content-Security-Policy": csp,
                        "Cache-Control": "no-store"}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for k, v in self.headers.items():
                    headers[k] = v
            await send(message)

        await self.app(scope, receive, send_with_headers)


def create_app(defaults: dict[str, Any] | None = None, allowed_hosts: Sequence[str] | None = None,
               max_games: int = 200, models: dict[str, str] | None = None,
               limits: dict[str, float] | None = None, max_bytes: int = MAX_BYTES,
               max_busy: int = MAX_BUSY, busy_wait: float = BUSY_WAIT) -> Starlette:
    """The Starlette app. ``defaults``: the new-game settings the page starts with (``game,
    players, vs, seat, seed, options, theme``; its agent specs are trusted: exempt from the
    caps); ``allowed_hosts``: accepted ``Host`` headers (None: any), which keeps other sites'
    pages from reaching a local server by DNS rebinding; ``models``: trained models the
    browser may choose by name (``{"strong": "ppo:runs/x.safetensors"}``); ``limits``: caps on agent
    budgets per move (default :data:`AGENT_LIMITS`); ``max_games`` / ``max_bytes``: the games
    table's size; ``max_busy``: requests computing at once (more wait up to ``busy_wait``
    seconds, then 503).
    ``app.state.games`` is the :class:`Games` table."""
    cfg = {"game": "slide", "players": 2, "vs": "heuristic", "seat": 0, "seed": None,
           "options": {}, "theme": "light", **(defaults or {})}
    cfg["game"] = resolve_env_id(cfg["game"])
    models = dict(models or {})
    for name, spec in models.items():
        check_model(name, spec)
    vs = cfg["vs"]
    trusted = frozenset(split_agents(vs) if isinstance(vs, str) else
                        [v.strip() for v in vs if isinstance(v, str)])
    rules = ServerPolicy(dict(AGENT_LIMITS if limits is None else limits),
                         trusted - set(models), models)
    games = Games(max_games, max_bytes)
    busy = threading.BoundedSemaphore(max_busy)

    def guarded(fn: Any, *args: Any) -> Any:
        if not busy.acquire(timeout=busy_wait):
            raise ApiError(503, "the server is busy with other games; try again in a moment")
        try:
            return fn(*args)
        finally:
            busy.release()

    async def computing(fn: Any, *args: Any) -> Any:
        """Run ``fn`` in a worker thread, at most ``max_busy`` at once (others wait)."""
        return await run_in_threadpool(guarded, fn, *args)

    async def page(request: Request) -> Response:
        return HTMLResponse(play_page(cfg["theme"]))

    async def config(request: Request) -> Response:
        offer = []
        for eid in env_ids():
            gc = manifest(eid).env_class().game_class
            offer.append({"env_id": eid, "name": gc.name, "min_players": gc.min_players,
                          "max_players": gc.max_players})
        return JSONResponse({"defaults": json_safe(cfg), "games": offer,
                             "models": sorted(models), "limits": rules.limits})

    async def create(request: Request) -> Response:
        try:
            s = await computing(new_session, await _body(request), rules)
            games.add(s)
            return JSONResponse(await run_in_threadpool(_locked, s, s.view), status_code=201)
        except ApiError as e:
            return _error(e)

    async def get_view(request: Request) -> Response:
        try:
            s = games.get(request.path_params["gid"])
            return JSONResponse(await run_in_threadpool(_locked, s, s.view))
        except ApiError as e:
            return _error(e)

    async def move(request: Request) -> Response:
        try:
            s = games.get(request.path_params["gid"])
            body = await _body(request)
            if "action" not in body or "turn" not in body:
                raise ApiError(422, "a move is {\"action\": int, \"turn\": int}")

            def run() -> dict[str, Any]:
                s.play(body["action"], body["turn"])
                return s.view()
            return JSONResponse(await computing(_locked, s, run))
        except ApiError as e:
            return _error(e)

    async def replay(request: Request) -> Response:
        try:
            s = games.get(request.path_params["gid"])
            d = await run_in_threadpool(_locked, s, s.replay)
            return JSONResponse(d, headers={
                "Content-Disposition": f'attachment; filename="{d["env_id"]}-{s.seed}.json"'})
        except ApiError as e:
            return _error(e)

    middleware = [Middleware(SecurityHeaders, csp=policy(PAGE_SCRIPT))]
    if allowed_hosts is not None:
        middleware.append(Middleware(TrustedHostMiddleware, allowed_hosts=list(allowed_hosts)))
    app = Starlette(routes=[
        Route("/", page), Route("/favicon.ico", lambda request: Response(status_code=204)),
        Route("/api/config", config),
        Route("/api/games", create, methods=["POST"]),
        Route("/api/games/{gid}", get_view),
        Route("/api/games/{gid}/move", move, methods=["POST"]),
        Route("/api/games/{gid}/replay", replay),
    ], middleware=middleware)
    app.state.games = games
    app.state.config = cfg
    app.state.policy = rules
    return app


def check_model(name: str, spec: str) -> None:
    """A model the server's command line offers by name: ``name`` a short word that is not
    an agent name, ``spec`` a trained agent's spec (``ppo:PATH``, ``rllib:PATH``) of an
    existing file (``ValueError`` otherwise)."""
    if not isinstance(name, str) or not name.isidentifier() or len(name) > 40 or \
            name.lower() in {"human", "random", "heuristic", "mcts", "ismcts", "search", "az",
                             "ppo", "rllib"}:
        raise ValueError(f"model name {name!r}: a word (letters, digits, _) that is not an "
                         "agent name, at most 40 characters")
    kind, params = parse_spec(spec)
    path = params.get("path")
    if kind not in ("ppo", "rllib") or not isinstance(path, str):
        raise ValueError(f"model {name}: {spec!r} is not a trained model (ppo:PATH or "
                         "rllib:PATH)")
    if not Path(path).exists() and not Path(f"{path}.zip").exists():
        raise ValueError(f"model {name}: no file {path!r}")


def _locked(s: GameSession, fn: Any) -> Any:
    with s.lock:
        return fn()


@contextmanager
def serving(app: Starlette, host: str = "127.0.0.1", port: int = 0) -> Iterator[str]:
    """Serve ``app`` with uvicorn in a background thread (``port`` 0: a free one); yields
    the base URL and stops the server (joining its thread) on exit. For tests and scripts;
    ``card-envs play`` serves in the foreground."""
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind((host, port))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            sock.close()
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.02)
    try:
        yield f"http://{host}:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()
