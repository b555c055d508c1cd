"""Isflak's game specification: options, sizes, state-dict codec, checks, action names."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from card_envs.core.checks import requirer
from card_envs.core.errors import OptionError, StateDictError
from card_envs.core.game import Game, Option
from card_envs.core.kernels import CUR, DONE, PHASE
from card_envs.isflak import render as _render
from card_envs.isflak import rules as R

_require = requirer("isflak")


DIR_NAMES = ("N", "NE", "E", "SE", "S", "SW", "W", "NW")
RANKS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
SUITS = ("S", "H", "D", "C")
CARD_CODES = tuple(f"{RANKS[i % 13]}{SUITS[i // 13]}" for i in range(R.DECK))
CARD_IDS = {code: i for i, code in enumerate(CARD_CODES)}
PENGUINS_TABLE = {2: 4, 3: 3, 4: 2, 5: 2, 6: 2}
POINT_KINDS = ("ace", "face", "number")
DEFAULT_POINTS = {"ace": 3, "face": 2, "number": 1}
MAX_CARD_POINTS = 20


def _is_int(x: Any) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _check_penguins(v: Any, opts: Mapping[str, Any]) -> int:
    n = opts["num_players"]
    if v is None:
        return PENGUINS_TABLE[n]
    if not _is_int(v) or not 1 <= int(v) <= R.MAX_SLOTS // n:  # int(): no numpy overflow
        raise OptionError(f"isflak_v0: penguins_per_player must be an integer >= 1 with "
                          f"num_players x penguins <= {R.MAX_SLOTS} (here <= "
                          f"{R.MAX_SLOTS // n}), or None for the table default, got {v!r}")
    return int(v)


def _check_points(v: Any, _: Mapping[str, Any]) -> dict[str, int]:
    if isinstance(v, Mapping):
        if set(v) != set(POINT_KINDS):
            raise OptionError(f"isflak_v0: card_points dict needs exactly the keys "
                              f"{list(POINT_KINDS)}, got {sorted(map(str, v))}")
        vals = [v[k] for k in POINT_KINDS]
    elif isinstance(v, (list, tuple)) and len(v) == 3:
        vals = list(v)
    else:
        raise OptionError(f"isflak_v0: card_points must be a dict {{'ace': a, 'face': f, "
                          f"'number': m}} or a 3-sequence (a, f, m), got {v!r}")
    for x in vals:
        if not _is_int(x) or not 0 <= x <= MAX_CARD_POINTS:
            raise OptionError(f"isflak_v0: card_points values must be integers in "
                              f"0..{MAX_CARD_POINTS}, got {x!r}")
    return {k: int(x) for k, x in zip(POINT_KINDS, vals)}


class IsflakGame(Game):
    name = "isflak"
    env_id = "isflak_v0"
    version = "0"
    rules = R
    min_players, max_players, default_players = 2, 6, 2
    phases = ("placement", "movement", "end")
    obs_dtype = np.int16  # per configuration: int8 if the highest score fits (see configure)
    perfect_information = True
    extra_options = {
        "penguins_per_player": Option(
            None, "penguins each; None = table (2: 4, 3: 3, 4-6: 2); players x penguins <= 16",
            _check_penguins),
        "card_points": Option(
            dict(DEFAULT_POINTS), "points per card kind: {'ace': 3, 'face': 2, 'number': 1} "
            "or a 3-sequence (ace, face, number); integers 0..20", _check_points),
    }

    def configure(self, cfg: np.ndarray) -> np.ndarray:
        self.peng = P = int(self.options["penguins_per_player"])
        pts = self.options["card_points"]
        cfg[R.C_PENG] = P
        cfg[R.C_PTS_ACE] = pts["ace"]
        cfg[R.C_PTS_FACE] = pts["face"]
        cfg[R.C_PTS_NUMBER] = pts["number"]
        self.points_of_kind = {R.K_ACE: pts["ace"], R.K_FACE: pts["face"],
                               R.K_NUMBER: pts["number"]}
        self.num_actions = R.num_actions(P)
        self.obs_size = R.obs_size(self.num_players, P)
        # int8 when every entry fits (always with the default points), else int16
        self.obs_dtype = np.int8 if self.max_score() <= 127 else np.int16
        self.state_size = R.STATE_SIZE
        return R.extend_config(cfg, pts["ace"], pts["face"], pts["number"])

    def max_score(self) -> int:
        """Upper bound of a pile's points: the best 35 of 4 aces, 12 faces, 36 numbers."""
        pts = self.options["card_points"]
        left, total = R.CELLS, 0
        for p, cnt in sorted([(pts["ace"], 4), (pts["face"], 12), (pts["number"], 36)],
                             reverse=True):
            k = min(cnt, left)
            total += p * k
            left -= k
        return total

    def obs_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        n, P, C = self.num_players, self.peng, R.CELLS
        maxpt = max(self.options["card_points"].values())
        seat_lo = [-1] * P + [0, 0, 0]
        seat_hi = [C - 1] * P + [1, self.max_score(), C]
        low = [-1] * C + [0] * C + seat_lo * n + [0, -1, 0]
        high = [maxpt] * C + [n] * C + seat_hi * n + [2, n - 1, n * P]
        return np.array(low), np.array(high)

    # --- views and helpers ------------------------------------------------------------------
    def slot_cells(self, state: np.ndarray) -> np.ndarray:
        """(n, P) cell of each penguin slot, -1 if not placed / gone."""
        n, P = self.num_players, self.peng
        return state[R.PEN:R.PEN + n * P].reshape(n, P)

    def piles(self, state: np.ndarray) -> list[list[int]]:
        """Card ids of each seat's pile, in the order taken."""
        out: list[list[int]] = [[] for _ in range(self.num_players)]
        for x in state[R.TAKEN:R.TAKEN + state[R.NTAKEN]].tolist():
            q, card = divmod(x, R.SEAT_SHIFT)
            if 0 <= q < self.num_players:
                out[q].append(card)
            else:
                raise StateDictError(f"inconsistent isflak state: taken entry {x} has no seat")
        return out

    def occupant_slots(self, state: np.ndarray) -> dict[int, int]:
        """cell -> penguin slot standing on it."""
        pen = state[R.PEN:R.PEN + R.MAX_SLOTS].tolist()
        return {c: s for s, c in enumerate(pen) if c >= 0}

    def cell_codes(self, grid: list[int], own: list[int]) -> list[int]:
        """The ``CELL`` entries (rules layout) for card ids ``grid`` (-1 gap) and owners ``own``
        (1 + seat, 0 none), plus the 0 sentinel."""
        return [0 if g < 0 else ((o == 0) * R.F_FREE | o << R.OWN_SHIFT |
                                 (self.card_value(g) + 1) << R.PTS_SHIFT)
                for g, o in zip(grid, own)] + [0]

    def card_value(self, card: int) -> int:
        return self.points_of_kind[int(R.KIND[card])]

    # --- state dict -------------------------------------------------------------------------
    def fields_to_dict(self, state: np.ndarray, observer: int | None) -> dict[str, Any]:
        grid = [[None if state[R.GRID + r * R.COLS + c] < 0
                 else CARD_CODES[state[R.GRID + r * R.COLS + c]] for c in range(R.COLS)]
                for r in range(R.ROWS)]
        penguins = [[None if x < 0 else [int(x) // R.COLS, int(x) % R.COLS] for x in row]
                    for row in self.slot_cells(state).tolist()]
        piles = [[CARD_CODES[x] for x in pile] for pile in self.piles(state)]
        out = [bool(state[R.OUT + q]) for q in range(self.num_players)]
        return {"grid": grid, "penguins": penguins, "piles": piles, "out": out}

    def fields_from_dict(self, state: np.ndarray, d: Mapping[str, Any]) -> None:
        n, P, C = self.num_players, self.peng, R.CELLS
        grid, penguins, piles, out = d["grid"], d["penguins"], d["piles"], d["out"]
        if not isinstance(grid, list) or len(grid) != R.ROWS or \
                any(not isinstance(row, list) or len(row) != R.COLS for row in grid):
            raise StateDictError(f"grid must be {R.ROWS} lists of {R.COLS} card codes / null")
        for r, row in enumerate(grid):
            for c, code in enumerate(row):
                state[R.GRID + r * R.COLS + c] = -1 if code is None else _card(code)
        own = [0] * C
        state[R.PEN:R.PEN + R.MAX_SLOTS] = -1
        if not isinstance(penguins, list) or len(penguins) != n or \
                any(not isinstance(row, list) or len(row) != P for row in penguins):
            raise StateDictError(f"penguins must be {n} lists of {P} [row, col] / null")
        for q, row in enumerate(penguins):
            for k, pos in enumerate(row):
                if pos is None:
                    continue
                if not isinstance(pos, list) or len(pos) != 2 or \
                        not all(_is_int(x) for x in pos) or \
                        not (0 <= pos[0] < R.ROWS and 0 <= pos[1] < R.COLS):
                    raise StateDictError(f"penguin position must be [row, col], got {pos!r}")
                cell = pos[0] * R.COLS + pos[1]
                if own[cell]:
                    raise StateDictError(f"two penguins on {pos}")
                state[R.PEN + q * P + k] = cell
                own[cell] = q + 1
        if not isinstance(piles, list) or len(piles) != n or \
                any(not isinstance(p, list) for p in piles) or sum(map(len, piles)) > C:
            raise StateDictError(f"piles must be {n} lists of card codes, at most {C} in all")
        taken = []
        for q, pile in enumerate(piles):
            ids = [_card(code) for code in pile]
            taken += [q * R.SEAT_SHIFT + i for i in ids]
            state[R.PCOUNT + q] = len(ids)
            state[R.SCORE + q] = sum(self.card_value(i) for i in ids)
        state[R.NTAKEN] = len(taken)
        state[R.TAKEN:R.TAKEN + len(taken)] = taken
        if not isinstance(out, list) or len(out) != n or \
                any(not isinstance(x, bool) for x in out):
            raise StateDictError(f"out must be {n} bools")
        state[R.OUT:R.OUT + n] = out
        state[R.CELL:R.CELL + C + 1] = self.cell_codes(state[R.GRID:R.GRID + C].tolist(), own)
        placed = int((state[R.PEN:R.PEN + n * P] >= 0).sum())
        state[R.PLACED] = placed if state[PHASE] == R.P_PLACE else n * P

    # --- consistency ------------------------------------------------------------------------
    def check_state(self, state: np.ndarray) -> None:
        n, P, C = self.num_players, self.peng, R.CELLS
        grid = state[R.GRID:R.GRID + C]
        pen = state[R.PEN:R.PEN + R.MAX_SLOTS]
        phase, cur = int(state[PHASE]), int(state[CUR])
        _require(0 <= int(state[R.NTAKEN]) <= C, "taken count in 0..35")
        piles = self.piles(state)
        _require(bool(((grid >= -1) & (grid < R.DECK)).all()), "grid card ids in range")
        on_grid = grid[grid >= 0].tolist()
        cards = on_grid + [x for p in piles for x in p]
        _require(len(cards) == C and len(set(cards)) == C and
                 all(0 <= x < R.DECK for x in cards),
                 "the 35 cards are each exactly once on the grid or in a pile")
        _require(bool((state[R.PCOUNT + n:R.PCOUNT + R.MAX_PLAYERS] == 0).all()) and
                 bool((state[R.OUT + n:R.OUT + R.MAX_PLAYERS] == 0).all()) and
                 bool((state[R.SCORE + n:R.SCORE + R.MAX_PLAYERS] == 0).all()) and
                 bool((pen[n * P:] == -1).all()), "unused seats / slots empty")
        _require(int(state[R.NTAKEN]) == sum(map(len, piles)) and
                 bool((state[R.TAKEN + int(state[R.NTAKEN]):R.TAKEN + C] == 0).all()),
                 "taken cards counted")
        for q in range(n):
            _require(int(state[R.SCORE + q]) == sum(self.card_value(x) for x in piles[q]) and
                     int(state[R.PCOUNT + q]) == len(piles[q]),
                     f"seat {q}: score and pile size equal its pile")
            _require(int(state[R.OUT + q]) in (0, 1), "out flags are 0/1")
        own = [0] * C
        for s in range(R.MAX_SLOTS):
            cell = int(pen[s])
            if cell >= 0:
                _require(cell < C and grid[cell] >= 0 and own[cell] == 0,
                         f"penguin slot {s} stands alone on a card")
                own[cell] = s // P + 1
        _require(state[R.CELL:R.CELL + C + 1].tolist() == self.cell_codes(grid.tolist(), own),
                 "CELL = free bit, penguin owner and card points of each cell; sentinel 0")
        placed = int((pen >= 0).sum())
        _require(int(state[DONE]) == (phase == R.P_END), "phase 'end' iff the game is over")
        if phase == R.P_PLACE:
            _require(len(on_grid) == C and not any(piles), "no card taken while placing")
            _require(int(state[R.PLACED]) == placed < n * P, "placement count")
            _require(not state[R.OUT:R.OUT + n].any(), "nobody out while placing")
            _require(0 <= cur < n, "a seat to act")
            start = (cur - placed) % n
            for i in range(placed):  # the i-th placement: seat start+i, slot i // n
                _require(int(pen[((start + i) % n) * P + i // n]) >= 0,
                         "penguins placed in turn order, slots in order")
            for s in range(R.MAX_SLOTS):
                if pen[s] >= 0:
                    _require(bool(R.BORDER[pen[s]]) and R.KIND[grid[pen[s]]] != R.K_ACE,
                             "penguins placed on border non-ace cards")
            return
        _require(int(state[R.PLACED]) == n * P, "every penguin placed")
        for q in range(n):
            on_board = int((pen[q * P:(q + 1) * P] >= 0).sum())
            if state[R.OUT + q]:
                _require(on_board == 0, f"seat {q} is out: no penguin on the board")
            else:
                _require(on_board == P, f"seat {q} is in: all its penguins on the board")
        if phase == R.P_END:
            _require(cur == -1 and bool(state[R.OUT:R.OUT + n].all()),
                     "everyone is out at the end")
            return
        _require(phase == R.P_MOVE and 0 <= cur < n and not state[R.OUT + cur],
                 "the seat to act is in the game")
        _require(bool(R.can_move(state, self.cfg, cur)), "the seat to act can move")

    # --- text -------------------------------------------------------------------------------
    def action_to_str(self, action: int) -> str:
        if action < R.MOVE0:
            return f"place r{action // R.COLS}c{action % R.COLS}"
        a = action - R.MOVE0
        k, rest = divmod(a, R.NDIR * R.MAX_DIST)
        d, s = divmod(rest, R.MAX_DIST)
        return f"move penguin {k} {DIR_NAMES[d]} {s + 1}"

    def render(self, state: np.ndarray, observer: int | None = None) -> str:
        return _render.render(self, state)


def _card(code: Any) -> int:
    if not isinstance(code, str) or code not in CARD_IDS:
        raise StateDictError(f"unknown card code {code!r} (e.g. 'AS', '10H', 'KD')")
    return CARD_IDS[code]
