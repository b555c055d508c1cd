"""The games of the play server (:mod:`card_envs.ui.server`) and what a browser may ask of
them, apart from HTTP: every field of a request is checked here before anything is built.

* :class:`ServerPolicy`: the opponents a browser may choose (agent specs parsed by the CLI's
  validator with budgets capped, :data:`AGENT_LIMITS`; no file named: trained models only by
  the names the command line gave);
* :func:`new_session`: a new game from a create request (game, players, seat, seed: 64-bit
  secrets unless given, options, theme, opponents);
* :class:`GameSession`: one game, the human's moves checked (types, turn, legality) and the
  agents' replies, and the human seat's view, the only thing the browser ever receives (with
  the click paths of its legal moves and the places of the other seats' public last moves,
  :mod:`card_envs.ui.board`);
* :class:`Games`: the table of games by random id, bounded in games and agents' bytes
  (least recently used dropped);
* :class:`ApiError`: the HTTP status and message of a refused request (the game unchanged).

Needs neither Starlette nor uvicorn.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from card_envs.agents import make_agent
from card_envs.agents.registry import agent_names, check_spec
from card_envs.core import kernels as K
from card_envs.core.checks import short_repr
from card_envs.core.game import check_untrusted_options
from card_envs.core.registry import make_raw, manifest, resolve_env_id
from card_envs.draw import THEMES
from card_envs.ui.board import Box, last_moves, move_paths, result_sentence
from card_envs.ui.moves import describe_move
from card_envs.ui.pictures import picture_svg
from card_envs.ui.record import make_replay, result_of
from card_envs.ui.specs import split_agents

__all__ = ["AGENT_LIMITS", "MAX_BYTES", "ApiError", "GameSession", "Games", "ServerPolicy",
           "clip", "new_session"]

MAX_SEED = 2**64 - 1
SWITCHES = ("render_mode", "illegal_action", "render_observer", "render_theme")
#: what a browser may ask of an agent, per move (the command line's own specs are exempt)
AGENT_LIMITS: dict[str, float] = {"ms": 2000, "iterations": 20_000, "max_nodes": 2**17,
                                  "determinizations": 256}
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


def clip(text: str, limit: int = 2000) -> str:
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
    marks: list[list[Box] | None] = field(default_factory=list)
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
        """Play ``action`` (legal) for the seat to act and log it as the human sees it; another
        seat's public move is marked where it was played on the human's picture before it."""
        entry = describe_move(self.env, action, self.human, seed=self.salt + len(self.actions))
        boxes = None
        if entry["seat"] != self.human and entry["label"] is not None:
            seen = self.env.state_dict(observer=self.human)
            boxes = move_paths(self.env, seen, [action]).get(int(action), [])
        self.env.step(action)
        self.actions.append(int(action))
        self.log.append({"n": len(self.actions), **entry})
        self.marks.append(boxes)

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
        actions = [int(a) for a in env.legal_actions()] if yours else []
        paths = move_paths(env, sd, actions)
        legal = [{"action": a, "label": env.action_to_str(a), "path": paths.get(a, [])}
                 for a in actions]
        return {
            "id": self.id, "env_id": env.game.env_id, "game": env.game.name, "seat": h,
            "players": ["you" if s == h else self.specs[s] for s in range(len(self.specs))],
            "turn": len(self.actions), "to_act": self.to_act, "your_turn": yours,
            "phase": sd["phase"], "svg": picture_svg(env, h, self.theme), "legal": legal,
            "log": list(self.log), "last": last_moves(self.log, self.marks, h),
            "over": self.over, "result": result_of(env),
            "result_text": result_sentence(env, sd), "theme": self.theme,
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
        raise ApiError(422, clip(str(e))) from None
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

