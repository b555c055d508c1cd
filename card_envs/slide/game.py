"""Slide's game specification: options, sizes, state-dict codec, determinization."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from card_envs.core.checks import as_bool as _as_bool
from card_envs.core.checks import int_in as _int_in
from card_envs.core.checks import requirer
from card_envs.core.checks import seq as _seq
from card_envs.core.game import Game
from card_envs.core.kernels import CUR, DONE, PHASE
from card_envs.slide import render as _render
from card_envs.slide import rules as R

_require = requirer("slide")


SIDES = ("left", "right", "top", "bottom")


class SlideGame(Game):
    name = "slide"
    env_id = "slide_v0"
    version = "0"
    rules = R
    min_players, max_players, default_players = 2, 6, 2
    phases = ("reveal", "pick", "end")

    def configure(self, cfg: np.ndarray) -> None:
        self.num_actions = R.NUM_ACTIONS
        self.obs_size = R.obs_size(self.num_players)
        self.state_size = R.STATE_SIZE

    def obs_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        n = self.num_players
        low = np.concatenate([np.zeros(R.SLOTS * n + 2 * R.NUM_VALUES), [0, 0, 0, -1, -1]])
        high = np.concatenate([np.full(R.SLOTS * n, R.FACE_DOWN_CODE),
                               np.full(2 * R.NUM_VALUES, R.COPIES),
                               [2, R.ROUNDS - 1, n - 1, n - 1, R.SLOTS - 1]])
        return low, high

    # --- views of the state ----------------------------------------------------------------
    def grids(self, state: np.ndarray) -> np.ndarray:
        n = self.num_players
        return state[R.GRID:R.GRID + R.SLOTS * n].reshape(n, 4, 4)

    def faces(self, state: np.ndarray) -> np.ndarray:
        n = self.num_players
        return state[R.FACE:R.FACE + R.SLOTS * n].reshape(n, 4, 4)

    def pending_hidden(self, state: np.ndarray, observer: int) -> list[int]:
        """Seats whose reveal choice ``observer`` cannot see yet (chosen, not resolved)."""
        if state[PHASE] != R.P_REVEAL:
            return []
        n = self.num_players
        return [q for q in range(n) if q != observer and state[R.REVEAL + q] >= 0]

    def fields_to_dict(self, state: np.ndarray, observer: int | None) -> dict[str, Any]:
        n = self.num_players
        grids = self.grids(state).tolist()
        faces = self.faces(state).astype(bool).tolist()
        if observer is not None:  # face-down values are unknown to everyone
            grids = [[[v if (f or v == 0) else None for v, f in zip(gr, fr)]
                      for gr, fr in zip(g, fa)] for g, fa in zip(grids, faces)]
        reveals = [None if state[R.REVEAL + q] < 0 else int(state[R.REVEAL + q])
                   for q in range(n)]
        if observer is not None:
            for q in self.pending_hidden(state, observer):
                reveals[q] = None
        middle = [v + 1 for v in range(R.NUM_VALUES) for _ in range(state[R.MID + v])]
        return {"grids": grids, "face_up": faces, "middle": middle,
                "round": int(state[R.ROUND]), "first_player": int(state[R.FIRST]),
                "reveals": reveals}

    def fields_from_dict(self, state: np.ndarray, d: Mapping[str, Any]) -> None:
        n = self.num_players
        grids = _seq(d["grids"], "grids", n)
        faces = _seq(d["face_up"], "face_up", n)
        for q in range(n):
            g = _seq(grids[q], f"grids[{q}]", 4)
            f = _seq(faces[q], f"face_up[{q}]", 4)
            for r in range(4):
                gr = _seq(g[r], f"grids[{q}][{r}]", 4)
                fr = _seq(f[r], f"face_up[{q}][{r}]", 4)
                for c in range(4):
                    k = q * R.SLOTS + r * 4 + c
                    state[R.GRID + k] = _int_in(gr[c], 0, R.NUM_VALUES, "grid entry")
                    state[R.FACE + k] = _as_bool(fr[c], "face_up entry")
        for v in _seq(d["middle"], "middle", max_len=n):
            state[R.MID + _int_in(v, 1, R.NUM_VALUES, "middle value") - 1] += 1
        state[R.ROUND] = _int_in(d["round"], 0, R.ROUNDS - 1, "round")
        state[R.FIRST] = _int_in(d["first_player"], 0, n - 1, "first_player")
        reveals = _seq(d["reveals"], "reveals", n)
        state[R.REVEAL:R.REVEAL + R.MAX_PLAYERS] = -1
        for q, s in enumerate(reveals):
            if s is not None:
                state[R.REVEAL + q] = _int_in(s, 0, R.SLOTS - 1, "reveals entry")

    def check_state(self, state: np.ndarray) -> None:
        n = self.num_players
        g = self.grids(state)
        f = self.faces(state)
        mid = state[R.MID:R.MID + R.NUM_VALUES]
        phase, cur, first, rnd = int(state[PHASE]), int(state[CUR]), int(state[R.FIRST]), \
            int(state[R.ROUND])
        counts = np.bincount(g.ravel(), minlength=R.NUM_VALUES + 1)[1:] + mid
        _require(bool((counts <= R.COPIES).all()), "more than 10 cards of a value")
        _require(bool(((g == 0) <= (f == 0)).all()), "an empty slot is marked face up")
        _require(int(state[DONE]) == (phase == R.P_END), "phase 'end' iff the game is over")
        _require(bool((state[R.GRID + R.SLOTS * n:R.FACE] == 0).all()), "unused seats not empty")
        order = [(first + i) % n for i in range(n)]
        if phase == R.P_END:
            _require(cur == -1 and rnd == R.ROUNDS - 1, "a finished game is after round 15")
            _require(bool((g > 0).all() and (f == 1).all()), "all cards face up at the end")
            _require(int(mid.sum()) == 0, "middle empty at the end")
            return
        _require(0 <= cur < n, "current_player must be a seat while the game runs")
        done = order[:order.index(cur)]  # seats that already acted this phase
        for q in range(n):
            down = int(((g[q] > 0) & (f[q] == 0)).sum())
            empty = int((g[q] == 0).sum())
            r = int(state[R.REVEAL + q])
            if phase == R.P_REVEAL:
                _require(empty == 0 and down == R.SLOTS - rnd,
                         f"seat {q}: {R.SLOTS - rnd} face-down cards and no gap in reveal")
                _require((r >= 0) == (q in done), f"seat {q}: reveal set iff it has chosen")
                if r >= 0:
                    _require(f[q].ravel()[r] == 0,
                             f"seat {q}: revealed slot must be face down")
            else:
                _require(r >= 0, f"seat {q}: reveal slot known in the pick phase")
                if q in done:
                    _require(empty == 0 and down == R.SLOTS - rnd - 1, f"seat {q}: grid full")
                else:
                    _require(empty == 1 and g[q].ravel()[r] == 0 and
                             down == R.SLOTS - rnd - 1, f"seat {q}: one gap at its reveal")
        if phase == R.P_REVEAL:
            _require(int(mid.sum()) == 0, "middle empty in the reveal phase")
        else:
            _require(int(mid.sum()) == n - len(done), "one middle card per seat still to pick")

    # --- text ------------------------------------------------------------------------------
    def action_to_str(self, action: int) -> str:
        if action < R.PICK0:
            return f"reveal r{action // 4}c{action % 4}"
        a = action - R.PICK0
        return f"pick {a // 4 + 1} from {SIDES[a % 4]}"

    def render(self, state: np.ndarray, observer: int | None = None) -> str:
        return _render.render(self, state)

    # --- determinization -------------------------------------------------------------------
    def resample(self, state: np.ndarray, observer: int,
                 rng: np.random.Generator) -> np.ndarray:
        """Redraw every face-down value from the cards nobody has seen, and other seats'
        unresolved reveal choices among their face-down slots."""
        out = state.copy()
        n = self.num_players
        g = out[R.GRID:R.GRID + R.SLOTS * n]
        f = out[R.FACE:R.FACE + R.SLOTS * n]
        down = np.flatnonzero((g > 0) & (f == 0))
        seen = np.bincount(g[f == 1], minlength=R.NUM_VALUES + 1)[1:] + \
            out[R.MID:R.MID + R.NUM_VALUES]
        pool = np.repeat(np.arange(1, R.NUM_VALUES + 1), R.COPIES - seen)
        g[down] = rng.choice(pool, size=down.size, replace=False)
        for q in self.pending_hidden(out, observer):
            slots = np.flatnonzero(f[q * R.SLOTS:(q + 1) * R.SLOTS] == 0)
            out[R.REVEAL + q] = int(rng.choice(slots))
        return out
