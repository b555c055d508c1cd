"""If It Fits' game specification: options, sizes, the card tables and state offsets, action
names and the folder's contract modules (``rules``, ``observe``, ``statedict``, ``view``) that
:class:`~card_envs.core.game.Game` dispatches to."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from card_envs.core.checks import short_repr
from card_envs.core.errors import OptionError, StateDictError
from card_envs.core.game import Game, Option, bool_option
from card_envs.if_it_fits import layout as L
from card_envs.if_it_fits import observe as O
from card_envs.if_it_fits import rules as R
from card_envs.if_it_fits import statedict as SD
from card_envs.if_it_fits import view as V
from card_envs.if_it_fits.layout import PHASES, SIDES
from card_envs.if_it_fits.parts import deck as D
from card_envs.if_it_fits.parts.arrays import config

__all__ = ["IfItFitsGame"]


def _table(v: Any, _: Mapping[str, Any]) -> tuple[int, int]:
    """The ``table`` option: (rows, cols), rows 3-21, cols 5-21."""
    ok = isinstance(v, (tuple, list)) and len(v) == 2 and all(
        isinstance(x, (int, np.integer)) and not isinstance(x, bool) for x in v)
    if not ok or not (3 <= v[0] <= 21 and 5 <= v[1] <= 21):
        raise OptionError(f"if_it_fits_v0: table must be (rows, cols) with rows in 3..21 and "
                          f"cols in 5..21, got {short_repr(v)}")
    return int(v[0]), int(v[1])


def _deck(v: Any, opts: Mapping[str, Any]) -> dict[str, Any] | None:
    """The ``deck`` option: None (the default deck) or a validated deck."""
    if v is None:
        return None
    d = D.validate(v)
    if len(d["box_cards"]) < L.DEAL * L.MAX_PLAYERS:
        raise OptionError(f"if_it_fits deck: at least {L.DEAL * L.MAX_PLAYERS} box cards are "
                          f"needed (hands of {L.DEAL})")
    return d


class IfItFitsGame(Game):
    """If It Fits: options, sizes (``T`` cells, ``S`` slots, ``B = T + S``), the card tables and
    the state offsets (``lay``) of one configuration."""

    name = "if_it_fits"
    env_id = "if_it_fits_v0"
    version = "0"
    rules, observe, statedict, view = R, O, SD, V
    min_players, max_players, default_players = 2, L.MAX_PLAYERS, 2
    phases = PHASES
    obs_dtype = np.int8
    extra_options = {
        "table": Option((11, 11), "(rows, cols) of the table grid, rows 3-21, cols 5-21",
                        _table),
        "advanced": Option(False, "advanced rules", bool_option("if_it_fits_v0", "advanced")),
        "deck": Option(None, "None (default deck) or a deck dict / JSON path (schema: "
                             "card_envs/if_it_fits/parts/deck.py)", _deck, reads_files=True),
    }

    def configure(self, cfg: np.ndarray) -> np.ndarray:
        """The config array: the shared header, then the table, the offsets and the cards."""
        self.rows, self.cols = self.options["table"]
        self.deck = self.options["deck"] or D.default_deck()
        self.card_names = D.card_names(self.deck)
        ext, lay = config(cfg, self.rows, self.cols, self.options["advanced"], self.deck)
        self.nb, self.nt = len(self.deck["box_cards"]), len(self.deck["special_toy_cards"])
        self.nc, self.npr = lay["nc"], int(ext[L.CF_NPR])
        self.T, self.S = self.rows * self.cols, (self.rows - 1) * self.cols
        self.B = self.T + self.S
        self.lay = lay
        self.num_actions = L.num_actions(self.rows, self.cols)
        self.obs_size = int(ext[L.CF_OBS])
        self.state_size = lay["size"]
        return ext

    # --- views -----------------------------------------------------------------------------
    def arr(self, state: np.ndarray, name: str, size: int) -> np.ndarray:
        """The first ``size`` entries of the state array ``name`` (a view)."""
        o = self.lay[name]
        return state[o:o + size]

    def cell_name(self, i: int) -> str:
        """``r<row>c<col>`` of cell ``i``."""
        return f"r{i // self.cols}c{i % self.cols}"

    def card_name(self, cid: int) -> str:
        """The deck name of card ``cid`` (``"princess"`` for the Princess)."""
        return "princess" if cid == self.nc else self.card_names[cid]

    def card_id(self, name: Any) -> int:
        """The card id of a deck name, or StateDictError."""
        if not isinstance(name, str):
            raise StateDictError(f"a card is named by a string, got {short_repr(name)}")
        if name == "princess":
            return self.nc
        if name not in self.card_names:
            raise StateDictError(f"unknown card {short_repr(name)}")
        return self.card_names.index(name)

    def hand(self, state: np.ndarray, q: int) -> list[int]:
        """Seat ``q``'s hand (card ids)."""
        m = int(state[L.S_HANDN + q])
        return [int(x) for x in state[L.S_HAND + q * L.HANDMAX:][:m]]

    def pile(self, state: np.ndarray) -> list[int]:
        """The draw pile, bottom first (card ids)."""
        return [int(x) for x in self.arr(state, "pile", int(state[L.S_PN]))]

    # --- text ------------------------------------------------------------------------------
    def max_length(self) -> int:
        """Every draw takes a pile card, cats leave the supply once (again after a Princess),
        <= 6 steps per turn, start cards, and the end phase's passes."""
        n = self.num_players
        pile = self.nb + self.nt + self.npr
        sleeps = 5 * n + self.npr
        turns = pile + sleeps + 2 * n
        return 3 * n + 6 * turns + n * turns

    def action_to_str(self, action: int) -> str:
        """A readable name of ``action``."""
        T, B = self.T, self.B
        if action < T:
            return f"cell {self.cell_name(action)}"
        if action < B:
            s = action - T
            return f"slot {self.cell_name(s)}/{self.cell_name(s + self.cols)}"
        a = action - B
        if a < L.A_ROT:
            return f"hand {a}"
        if a < L.A_DIR:
            return f"rotate {180 * (a - L.A_ROT)}"
        if a < L.A_START:
            return f"join {SIDES[a - L.A_DIR]}"
        if a < L.A_END:
            return f"start card {self.card_names[self.nb + a - L.A_START]}"
        if a < L.A_DRAW:
            return f"start row {('west', 'east')[a - L.A_END]}"
        return ("draw", "sleeping cat", "skip", "pass")[a - L.A_DRAW]
