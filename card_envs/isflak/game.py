"""Isflak's game specification: options, sizes, the config table and action names.

It names the folder's modules: the kernels in :mod:`card_envs.isflak.rules`, the observation in
:mod:`card_envs.isflak.observe`, the state-dict codec and the consistency check in
:mod:`card_envs.isflak.statedict`, the text and the picture in :mod:`card_envs.isflak.view`; the
layout is in :mod:`card_envs.isflak.layout`, the rule queries in :mod:`card_envs.isflak.queries`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from card_envs.core.checks import is_int, short_repr
from card_envs.core.errors import OptionError
from card_envs.core.game import Game, Option
from card_envs.isflak import layout as L
from card_envs.isflak import observe as O
from card_envs.isflak import rules as R
from card_envs.isflak import statedict as SD
from card_envs.isflak import view as V
from card_envs.isflak.layout import DIR_NAMES
from card_envs.isflak.parts.deck import DEFAULT_POINTS, MAX_CARD_POINTS, POINT_KINDS
from card_envs.isflak.queries import card_points, max_pile_points

PENGUINS_TABLE = {2: 4, 3: 3, 4: 2, 5: 2, 6: 2}


def _check_penguins(v: Any, opts: Mapping[str, Any]) -> int:
    n = opts["num_players"]
    if v is None:
        return PENGUINS_TABLE[n]
    if not is_int(v) or not 1 <= int(v) <= L.MAX_SLOTS // n:  # int(): no numpy overflow
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
        if not is_int(x) or not 0 <= x <= MAX_CARD_POINTS:
            raise OptionError(f"isflak_v0: card_points values must be integers in "
                              f"0..{MAX_CARD_POINTS}, got {short_repr(x)}")
    return {k: int(x) for k, x in zip(POINT_KINDS, vals)}


class IsflakGame(Game):
    name = "isflak"
    env_id = "isflak_v0"
    version = "0"
    rules = R
    observe = O
    statedict = SD
    view = V
    min_players, max_players, default_players = 2, 6, 2
    phases = L.PHASES
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
        """Sizes and config entries; the config is extended with ``CFG_PTS[card + 1]``, the
        points of each card (index 0, a gap: -1; :mod:`card_envs.isflak.layout`)."""
        self.peng = P = int(self.options["penguins_per_player"])
        pts = self.options["card_points"]
        cfg[L.C_PENG] = P
        cfg[L.C_PTS_ACE] = pts["ace"]
        cfg[L.C_PTS_FACE] = pts["face"]
        cfg[L.C_PTS_NUMBER] = pts["number"]
        self.num_actions = L.num_actions(P)
        self.obs_size = L.obs_size(self.num_players, P)
        # int8 when every entry fits (always with the default points), else int16
        self.obs_dtype = np.int8 if max_pile_points(pts) <= 127 else np.int16
        self.state_size = L.STATE_SIZE
        out = np.zeros(L.CFG_SIZE, np.int32)
        out[:cfg.shape[0]] = cfg
        out[L.CFG_PTS] = -1
        for card in range(L.DECK):
            out[L.CFG_PTS + card + 1] = card_points(card, pts)
        return out

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
