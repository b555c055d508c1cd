"""Isflak's game specification: options, sizes, observation bounds, views and action names.

The state-dict codec and the consistency check are in :mod:`card_envs.isflak.statedict`, the
kernels in :mod:`card_envs.isflak.rules`, the layout in :mod:`card_envs.isflak.layout`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from card_envs.core.checks import short_repr
from card_envs.core.errors import OptionError, StateDictError
from card_envs.core.game import Game, Option
from card_envs.isflak import layout as L
from card_envs.isflak import render as _render
from card_envs.isflak import rules as R
from card_envs.isflak import statedict as SD
from card_envs.isflak.deck import (  # noqa: F401  (CARD_CODES, CARD_IDS: re-exported)
    CARD_CODES,
    CARD_IDS,
    DEFAULT_POINTS,
    KIND,
    MAX_CARD_POINTS,
    POINT_KINDS,
    extend_config,
)
from card_envs.isflak.layout import (  # noqa: F401  (RANKS, SUITS: re-exported)
    DIR_NAMES,
    RANKS,
    SUITS,
)

PENGUINS_TABLE = {2: 4, 3: 3, 4: 2, 5: 2, 6: 2}


def _check_penguins(v: Any, opts: Mapping[str, Any]) -> int:
    n = opts["num_players"]
    if v is None:
        return PENGUINS_TABLE[n]
    if not SD.is_int(v) or not 1 <= int(v) <= L.MAX_SLOTS // n:  # int(): no numpy overflow
        raise OptionError(f"isflak_v0: penguins_per_player must be an integer >= 1 with "
                          f"num_players x penguins <= {L.MAX_SLOTS} (here <= "
                          f"{L.MAX_SLOTS // n}), or None for the table default, "
                          f"got {short_repr(v)}")
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
                          f"'number': m}} or a 3-sequence (a, f, m), got {short_repr(v)}")
    for x in vals:
        if not SD.is_int(x) or not 0 <= x <= MAX_CARD_POINTS:
            raise OptionError(f"isflak_v0: card_points values must be integers in "
                              f"0..{MAX_CARD_POINTS}, got {short_repr(x)}")
    return {k: int(x) for k, x in zip(POINT_KINDS, vals)}


class IsflakGame(Game):
    name = "isflak"
    env_id = "isflak_v0"
    version = "0"
    rules = R
    min_players, max_players, default_players = 2, 6, 2
    phases = L.PHASE_NAMES
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
        cfg[L.C_PENG] = P
        cfg[L.C_PTS_ACE] = pts["ace"]
        cfg[L.C_PTS_FACE] = pts["face"]
        cfg[L.C_PTS_NUMBER] = pts["number"]
        self.points_of_kind = {L.K_ACE: pts["ace"], L.K_FACE: pts["face"],
                               L.K_NUMBER: pts["number"]}
        self.num_actions = L.num_actions(P)
        self.obs_size = L.obs_size(self.num_players, P)
        # int8 when every entry fits (always with the default points), else int16
        self.obs_dtype = np.int8 if self.max_score() <= 127 else np.int16
        self.state_size = L.STATE_SIZE
        return extend_config(cfg, pts["ace"], pts["face"], pts["number"])

    def max_score(self) -> int:
        """Upper bound of a pile's points: the best 35 of 4 aces, 12 faces, 36 numbers."""
        pts = self.options["card_points"]
        left, total = L.CELLS, 0
        for p, cnt in sorted([(pts["ace"], 4), (pts["face"], 12), (pts["number"], 36)],
                             reverse=True):
            k = min(cnt, left)
            total += p * k
            left -= k
        return total

    def obs_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        n, P, C = self.num_players, self.peng, L.CELLS
        maxpt = max(self.options["card_points"].values())
        seat_lo = [-1] * P + [0, 0, 0]  # slot cells, then out, points, cards
        seat_hi = [C - 1] * P + [1, self.max_score(), C]
        low = [-1] * C + [0] * C + seat_lo * n + [0, -1, 0]  # tail: phase, to act, placed
        high = [maxpt] * C + [n] * C + seat_hi * n + [2, n - 1, n * P]
        return np.array(low), np.array(high)

    # --- views and helpers ------------------------------------------------------------------
    def slot_cells(self, state: np.ndarray) -> np.ndarray:
        """(n, P) cell of each penguin slot, -1 if not placed / gone."""
        n, P = self.num_players, self.peng
        return state[L.PEN:L.PEN + n * P].reshape(n, P)

    def piles(self, state: np.ndarray) -> list[list[int]]:
        """Card ids of each seat's pile, in the order taken."""
        out: list[list[int]] = [[] for _ in range(self.num_players)]
        for x in state[L.TAKEN:L.TAKEN + state[L.NTAKEN]].tolist():
            q, card = divmod(x, L.SEAT_SHIFT)
            if 0 <= q < self.num_players:
                out[q].append(card)
            else:
                raise StateDictError(f"inconsistent isflak state: taken entry {x} has no seat")
        return out

    def occupant_slots(self, state: np.ndarray) -> dict[int, int]:
        """cell -> penguin slot standing on it."""
        pen = state[L.PEN:L.PEN + L.MAX_SLOTS].tolist()
        return {c: s for s, c in enumerate(pen) if c >= 0}

    def cell_codes(self, grid: list[int], own: list[int]) -> list[int]:
        """The ``CELL`` entries (rules layout) for card ids ``grid`` (-1 gap) and owners ``own``
        (1 + seat, 0 none), plus the 0 sentinel."""
        return [0 if g < 0 else ((o == 0) * L.F_FREE | o << L.OWN_SHIFT |
                                 (self.card_value(g) + 1) << L.PTS_SHIFT)
                for g, o in zip(grid, own)] + [0]

    def card_value(self, card: int) -> int:
        """Points of card id ``card`` under this game's ``card_points``."""
        return self.points_of_kind[int(KIND[card])]

    # --- state dict and checks: card_envs.isflak.statedict ----------------------------------
    def fields_to_dict(self, state: np.ndarray, observer: int | None) -> dict[str, Any]:
        return SD.fields_to_dict(self, state, observer)

    def fields_from_dict(self, state: np.ndarray, d: Mapping[str, Any]) -> None:
        SD.fields_from_dict(self, state, d)

    def check_state(self, state: np.ndarray) -> None:
        SD.check_state(self, state)

    # --- text -------------------------------------------------------------------------------
    def max_length(self) -> int:
        """Each placement and each move uses up one of the grid's cards."""
        return L.CELLS

    def action_to_str(self, action: int) -> str:
        if action < L.MOVE0:
            return f"place r{action // L.COLS}c{action % L.COLS}"
        a = action - L.MOVE0
        k, rest = divmod(a, L.MOVES_PER_PENGUIN)
        d, s = divmod(rest, L.MAX_DIST)
        return f"move penguin {k} {DIR_NAMES[d]} {s + 1}"

    def render(self, state: np.ndarray, observer: int | None = None) -> str:
        return _render.render(self, state)
