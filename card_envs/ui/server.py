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
capped (:data:`AGENT_LIMITS`) and no file named (models only by the names the command line
gave, :class:`ServerPolicy`), deals come from 64-bit secrets, and every response carries the
security headers of :mod:`card_envs.ui.csp`.

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
[{action, label}], log: [{n, seat, label}], over, result, theme}``.
"""

from __future__ import annotations

import secrets
import socket
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import MutableHeaders
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from card_envs.agents import make_agent
from card_envs.agents.registry import agent_names, check_spec, parse_spec
from card_envs.core import kernels as K
from card_envs.core.checks import check_nesting, short_repr
from card_envs.core.errors import StateDictError
from card_envs.core.files import parse_json
from card_envs.core.game import check_untrusted_options
from card_envs.core.registry import env_ids, make_raw, manifest, resolve_env_id
from card_envs.draw import THEMES
from card_envs.ui.csp import SECURITY_HEADERS, policy
from card_envs.ui.moves import describe_move
from card_envs.ui.page import PAGE_SCRIPT, play_page
from card_envs.ui.pictures import picture_svg
from card_envs.ui.record import json_safe, make_replay, result_of
from card_envs.ui.specs import split_agents

__all__ = ["AGENT_LIMITS", "ApiError", "GameSession", "Games", "ServerPolicy", "create_app",
           "new_session", "serving"]

MAX_BODY = 64 * 1024  # bytes of a request body (read no further)
MAX_DEPTH = 12  # nesting of a request's JSON (a deck in the options needs 4)
MAX_ITEMS = 20_000  # values in a request's JSON
MAX_SEED = 2**64 - 1
SWITCHES = ("render_mode", "illegal_action", "render_observer", "render_theme")
#: what a browser may ask of an agent, per move (the command line's own specs are exempt)
AGENT_LIMITS: dict[str, float] = {"ms": 2000, "iterations": 20_000, "max_nodes": 2**17,
                                  "determinizations": 256}
MAX_BUSY = 8  # requests computing at once (agents thinking); more wait their turn
BUSY_WAIT = 30.0  # seconds a request waits for its turn before a 503
MAX_BYTES = 2**30  # agents' buffers (search trees) kept by the games table


@dataclass(frozen=True)
class ServerPolicy:
    """What a browser may choose. ``limits``: caps on agent budgets per move; ``trusted``:
    agent specs the person who started the server gave (exempt from the caps); ``models``:
    trained models by name (``{"strong": "ppo:runs/x.safetensors"}``), the only files an
    opponent may load. A browser never names a file: a spec with a path is refused, whatever
    the path."""

    limits: dict[str, float] = field(default_factory=lambda: dict(AGENT_LIMITS))
    trusted: frozenset[str] = frozenset()
    models: dict[str, str] = field(default_factory=dict)

    def opponent(self, text: str, env_id: str) -> tuple[str, str]:
        """``(label, spec)`` of one opponent the browser asked for (``ApiError`` 422)."""
        text = text.strip()
        if text in self.models:
            return text, self.models[text]
        if text in self.trusted:
            return text, text
        try:
            check_spec(text, env_id, limits=self.limits, allow_files=False)
        except ValueError as e:
            names = ", ".join(n for n in agent_names(env_id) if n != "rllib")
            models = f"; models of this server: {', '.join(self.models)}" if self.models else ""
            raise ApiError(422, f"{e}. Opponents here: {names} (per move: "
                                f"{_caps(self.limits)}){models}") from None
        return text, text


def _clip(text: str, limit: int = 2000) -> str:
    """An error message cut to ``limit`` characters (it may quote the request)."""
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _caps(limits: dict[str, float]) -> str:
    return ", ".join(f"{k} <= {v:g}" for k, v in limits.items())


class ApiError(Exception):
    """An HTTP error answer: ``status`` and a message for the player."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass
class GameSession:
    """One game on the server: the env, the human's seat, the agents of the other seats and
    what the human's log shows. Every change happens under ``lock``."""

    id: str
    env: Any
    seed: int
    human: int
    specs: list[str]
    agents: dict[int, Any]
    theme: str = "light"
    actions: list[int] = field(default_factory=list)
    log: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    salt: int = field(default_factory=lambda: secrets.randbits(31))
    last_used: float = field(default_factory=time.monotonic)

    @property
    def over(self) -> bool:
        return bool(self.env.state_array[K.DONE])

    @property
    def to_act(self) -> int | None:
        cur = int(self.env.state_array[K.CUR])
        return None if cur < 0 else cur

    def _apply(self, action: int) -> None:
        """Play ``action`` (legal) for the seat to act and log it as the human sees it."""
        entry = describe_move(self.env, action, self.human, seed=self.salt + len(self.actions))
        self.env.step(action)
        self.actions.append(int(action))
        self.log.append({"n": len(self.actions), **entry})

    def advance(self) -> None:
        """The agents move until the human is to act or the game is over."""
        while not self.over and self.to_act != self.human:
            self._apply(int(self.agents[self.to_act].act_env(self.env)))

    def play(self, action: Any, turn: Any) -> None:
        """The human's move: checked (types, turn, legality), applied, then the agents'."""
        if type(turn) is not int:
            raise ApiError(422, f"'turn' must be an integer (the move counter of your view), "
                                f"got {turn!r}")
        if type(action) is not int:
            raise ApiError(422, f"'action' must be an integer, got {action!r}")
        if self.over:
            raise ApiError(409, "the game is over; start a new game")
        if turn != len(self.actions):
            raise ApiError(409, f"stale move: it was chosen at turn {turn}, the game is at turn "
                                f"{len(self.actions)}; reload the view")
        if self.to_act != self.human:  # cannot happen between requests; kept as a guard
            raise ApiError(409, f"it is player_{self.to_act}'s turn, not yours")
        legal = self.env.legal_actions()
        if action not in legal:
            n = self.env.game.num_actions
            what = self.env.action_to_str(action) if 0 <= action < n else \
                f"out of range 0..{n - 1}"
            raise ApiError(400, f"illegal move {action} ({what}) in phase "
                                f"{self.env.game.phase_name(self.env.state_array)!r}; your legal "
                                f"moves are {legal}")
        self._apply(action)
        self.advance()

    def view(self) -> dict[str, Any]:
        """What the browser gets: the human seat's view only."""
        env, h = self.env, self.human
        sd = env.state_dict(observer=h)
        yours = not self.over and self.to_act == h
        legal = [{"action": a, "label": env.action_to_str(a)} for a in env.legal_actions()] \
            if yours else []
        return {
            "id": self.id, "env_id": env.game.env_id, "game": env.game.name, "seat": h,
            "players": ["you" if s == h else self.specs[s] for s in range(len(self.specs))],
            "turn": len(self.actions), "to_act": self.to_act, "your_turn": yours,
            "phase": sd["phase"], "svg": picture_svg(env, h, self.theme), "legal": legal,
            "log": list(self.log), "over": self.over, "result": result_of(env),
            "theme": self.theme,
        }

    @cached_property
    def nbytes(self) -> int:
        """Bytes of the agents' arrays (search trees, buffers): what this game holds (fixed
        once the agents are built)."""
        return sum(v.nbytes for a in self.agents.values() for v in vars(a).values()
                   if isinstance(v, np.ndarray))

    def replay(self) -> dict[str, Any]:
        if not self.over:
            raise ApiError(409, "the replay is available when the game is over (it shows "
                                "every hidden card)")
        return make_replay(self.env, players=self.specs)


def _int(body: dict, key: str, default: Any, lo: int | None = None,
         hi: int | None = None) -> Any:
    v = body.get(key, default)
    if v is None and default is None:
        return None
    if type(v) is not int or (lo is not None and v < lo) or (hi is not None and v > hi):
        rng = f" in {lo}..{hi}" if hi is not None else f" >= {lo}" if lo is not None else ""
        raise ApiError(422, f"{key!r} must be an integer{rng}, got {short_repr(v)}")
    return v


def _specs(vs: Any) -> list[str]:
    if isinstance(vs, str) and split_agents(vs):
        return split_agents(vs)
    if isinstance(vs, list) and vs and all(isinstance(s, str) and s.strip() for s in vs):
        return [s.strip() for s in vs]
    raise ApiError(422, f"'vs' must be agent specs (a list or comma-separated), got "
                        f"{short_repr(vs)}")


def new_session(body: dict[str, Any], rules: ServerPolicy | None = None) -> GameSession:
    """A new game from a create request (``ApiError`` 422 for any bad field, checked before
    anything is built); the agents make their moves up to the human's first turn. ``rules``:
    what the browser may choose (default: built-in agents with :data:`AGENT_LIMITS`)."""
    rules = rules or ServerPolicy()
    game = body.get("game", "slide")
    options = body.get("options", {})
    options = {} if options is None else options
    if not isinstance(game, str) or not isinstance(options, dict):
        raise ApiError(422, "'game' must be a string and 'options' an object")
    bad = [short_repr(k) for k in options if k in SWITCHES or k == "num_players"]
    if bad:
        raise ApiError(422, f"options {bad} are not game options here (use 'players')")
    theme_name = body.get("theme", "light")
    if not isinstance(theme_name, str) or theme_name not in THEMES:
        raise ApiError(422, f"'theme' must be one of {sorted(THEMES)}, got "
                            f"{short_repr(theme_name)}")
    try:
        env_id = resolve_env_id(game)
        check_untrusted_options(env_id, options)  # game options only; never a file path
        players = _int(body, "players", manifest(env_id).env_class().game_class.default_players)
        env = make_raw(env_id, num_players=players, **options)
        n = env.game.num_players
        seat = _int(body, "seat", 0, lo=0, hi=n - 1)
        seed = _int(body, "seed", None, lo=0, hi=MAX_SEED)
        seed = secrets.randbits(64) if seed is None else seed  # unguessable deals
        vs = [rules.opponent(v, env_id) for v in _specs(body.get("vs", "heuristic"))]
        if len(vs) > n - 1:
            raise ApiError(422, f"{n} players: at most {n - 1} agents, got {len(vs)} "
                                f"({', '.join(label for label, _ in vs)})")
        opts = dict(env.game.options)
        labels, agents = [], {}
        others = [s for s in range(n) if s != seat]
        for k, s in enumerate(others):
            label, spec = vs[k % len(vs)]
            agents[s] = make_agent(spec, env_id, seed=seed * 1009 + s + 1, **opts)
            labels.append(label)
        labels.insert(seat, "human")
    except ApiError:
        raise
    except (ValueError, TypeError, ImportError, OSError) as e:  # OptionError, agent specs
        raise ApiError(422, _clip(str(e))) from None
    env.reset(seed=seed)
    session = GameSession(secrets.token_urlsafe(16), env, seed, seat, labels, agents,
                          theme=theme_name)
    session.advance()
    return session


class Games:
    """The games being played: ``max_games`` at most, holding ``max_bytes`` of agent buffers
    at most (search trees); past either, the least recently used games are dropped."""

    def __init__(self, max_games: int = 200, max_bytes: int = MAX_BYTES) -> None:
        self.max_games = max_games
        self.max_bytes = max_bytes
        self._games: OrderedDict[str, GameSession] = OrderedDict()
        self._lock = threading.Lock()

    def add(self, s: GameSession) -> None:
        with self._lock:
            self._games[s.id] = s
            while len(self._games) > 1 and (len(self._games) > self.max_games or
                                            self.nbytes > self.max_bytes):
                self._games.popitem(last=False)

    @property
    def nbytes(self) -> int:
        """Bytes of agent buffers the table holds."""
        return sum(s.nbytes for s in self._games.values())

    def get(self, gid: str) -> GameSession:
        with self._lock:
            s = self._games.get(gid)
            if s is None:
                raise ApiError(404, f"no game {gid!r} on this server (finished long ago, or "
                                    "the server restarted); start a new game")
            self._games.move_to_end(gid)
            s.last_used = time.monotonic()
            return s

    def __len__(self) -> int:
        return len(self._games)


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
        raise ApiError(400, _clip(str(e), 300)) from None
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
            name.lower() in {"human", "random", "heuristic", "mcts", "ismcts", "search", "ppo",
                             "rllib"}:
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
