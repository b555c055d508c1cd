"""The play server: a person plays a game against agents in the browser.

``card-envs play --game slide --players 3 --vs mcts,heuristic`` serves :func:`create_app` with
uvicorn on ``127.0.0.1`` (Starlette and uvicorn: the ``ui`` extra). The state lives on the
server, in a table of games keyed by random ids (``secrets.token_urlsafe``); the browser only
ever receives the human seat's view: its picture (drawn from ``state_dict(observer=seat)``),
its legal moves when it is to act, and the move log as that seat may read it
(:func:`card_envs.ui.moves.describe_move`). The agents move on the server until the human is to
act again or the game ends.

JSON API (every error is ``{"error": message}`` and leaves the game as it was):

==============================  ===========================================================
``GET  /``                      the page (HTML, inline CSS and JS, no external resources)
``GET  /api/config``            the defaults of a new game and the games on offer
``POST /api/games``             new game ``{game, players, vs, seat, seed, options, theme}``
                                -> 201 and the human's view (422 for a bad field)
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

import json
import secrets
import socket
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from agents import make_agent
from card_envs.core import kernels as K
from card_envs.core.draw import THEMES
from card_envs.core.registry import env_ids, make_raw, manifest, resolve_env_id
from card_envs.ui.moves import describe_move
from card_envs.ui.page import play_page
from card_envs.ui.pictures import picture_svg
from card_envs.ui.record import json_safe, make_replay, result_of
from card_envs.ui.specs import split_agents

__all__ = ["ApiError", "GameSession", "Games", "create_app", "new_session", "serving"]

MAX_BODY = 64 * 1024  # bytes of a request body
SWITCHES = ("render_mode", "illegal_action", "render_observer", "render_theme")


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

    def replay(self) -> dict[str, Any]:
        if not self.over:
            raise ApiError(409, "the replay is available when the game is over (it shows "
                                "every hidden card)")
        return make_replay(self.env, players=self.specs)


def _int(body: dict, key: str, default: Any, lo: int | None = None) -> Any:
    v = body.get(key, default)
    if v is None and default is None:
        return None
    if type(v) is not int or (lo is not None and v < lo):
        raise ApiError(422, f"{key!r} must be an integer" + (f" >= {lo}" if lo is not None
                                                               else "") + f", got {v!r}")
    return v


def _specs(vs: Any) -> list[str]:
    if isinstance(vs, str) and split_agents(vs):
        return split_agents(vs)
    if isinstance(vs, list) and vs and all(isinstance(s, str) and s.strip() for s in vs):
        return [s.strip() for s in vs]
    raise ApiError(422, f"'vs' must be agent specs (a list or comma-separated), got {vs!r}")


def new_session(body: dict[str, Any]) -> GameSession:
    """A new game from a create request (``ApiError`` 422 for any bad field); the agents
    make their moves up to the human's first turn."""
    game = body.get("game", "slide")
    options = body.get("options", {})
    options = {} if options is None else options
    if not isinstance(game, str) or not isinstance(options, dict):
        raise ApiError(422, "'game' must be a string and 'options' an object")
    bad = [k for k in options if k in SWITCHES or k == "num_players"]
    if bad:
        raise ApiError(422, f"options {bad} are not game options here (use 'players')")
    theme_name = body.get("theme", "light")
    if theme_name not in THEMES:
        raise ApiError(422, f"'theme' must be one of {sorted(THEMES)}, got {theme_name!r}")
    try:
        env_id = resolve_env_id(game)
        players = _int(body, "players", manifest(env_id).env_class().game_class.default_players)
        env = make_raw(env_id, num_players=players, **options)
        n = env.game.num_players
        seat = _int(body, "seat", 0, lo=0)
        if seat >= n:
            raise ApiError(422, f"'seat' must be a seat 0..{n - 1}, got {seat}")
        seed = _int(body, "seed", None, lo=0)
        seed = secrets.randbelow(2**31) if seed is None else seed
        vs = _specs(body.get("vs", "heuristic"))
        if len(vs) > n - 1:
            raise ApiError(422, f"{n} players: at most {n - 1} agents, got {len(vs)} ({vs})")
        opts = dict(env.game.options)
        specs, agents = [], {}
        others = [s for s in range(n) if s != seat]
        for k, s in enumerate(others):
            spec = vs[k % len(vs)]
            agents[s] = make_agent(spec, env_id, seed=seed * 1009 + s + 1, **opts)
            specs.append(spec)
        specs.insert(seat, "human")
    except ApiError:
        raise
    except (ValueError, TypeError, ImportError, OSError) as e:  # OptionError, agent specs
        raise ApiError(422, str(e)) from None
    env.reset(seed=seed)
    session = GameSession(secrets.token_urlsafe(16), env, seed, seat, specs, agents,
                          theme=theme_name)
    session.advance()
    return session


class Games:
    """The games being played (``max_games`` at most: the least recently used is dropped)."""

    def __init__(self, max_games: int = 200) -> None:
        self.max_games = max_games
        self._games: OrderedDict[str, GameSession] = OrderedDict()
        self._lock = threading.Lock()

    def add(self, s: GameSession) -> None:
        with self._lock:
            self._games[s.id] = s
            while len(self._games) > self.max_games:
                self._games.popitem(last=False)

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
    ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if ctype != "application/json":
        raise ApiError(415, "send JSON (Content-Type: application/json)")
    raw = await request.body()
    if len(raw) > MAX_BODY:
        raise ApiError(413, f"request body over {MAX_BODY} bytes")
    try:
        body = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ApiError(400, f"the body is not JSON: {e}") from None
    if not isinstance(body, dict):
        raise ApiError(400, f"the body must be a JSON object, got {type(body).__name__}")
    return body


def create_app(defaults: dict[str, Any] | None = None, allowed_hosts: Sequence[str] | None = None,
               max_games: int = 200) -> Starlette:
    """The Starlette app. ``defaults``: the new-game settings the page starts with (``game,
    players, vs, seat, seed, options, theme``); ``allowed_hosts``: accepted ``Host`` headers
    (None: any), which keeps other sites' pages from reaching a local server by DNS
    rebinding. ``app.state.games`` is the :class:`Games` table."""
    cfg = {"game": "slide", "players": 2, "vs": "heuristic", "seat": 0, "seed": None,
           "options": {}, "theme": "light", **(defaults or {})}
    cfg["game"] = resolve_env_id(cfg["game"])
    games = Games(max_games)

    async def page(request: Request) -> Response:
        return HTMLResponse(play_page(cfg["theme"]))

    async def config(request: Request) -> Response:
        offer = []
        for eid in env_ids():
            gc = manifest(eid).env_class().game_class
            offer.append({"env_id": eid, "name": gc.name, "min_players": gc.min_players,
                          "max_players": gc.max_players})
        return JSONResponse({"defaults": json_safe(cfg), "games": offer})

    async def create(request: Request) -> Response:
        try:
            s = await run_in_threadpool(new_session, await _body(request))
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
            return JSONResponse(await run_in_threadpool(_locked, s, run))
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

    middleware = [] if allowed_hosts is None else \
        [Middleware(TrustedHostMiddleware, allowed_hosts=list(allowed_hosts))]
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
    return app


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
