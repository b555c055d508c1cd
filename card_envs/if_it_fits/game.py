"""If It Fits' game specification: options, sizes, observation bounds, views, action names and
the wiring of the kernels; the state-dict codec, checks and determinization are in
:mod:`card_envs.if_it_fits.statedict`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from card_envs.core.checks import short_repr
from card_envs.core.errors import OptionError, StateDictError
from card_envs.core.game import Game, Option, bool_option
from card_envs.if_it_fits import deck as D
from card_envs.if_it_fits import layout as L
from card_envs.if_it_fits import render as _render
from card_envs.if_it_fits import rules as R
from card_envs.if_it_fits import statedict as SD
from card_envs.if_it_fits.layout import PHASES, SIDES
from card_envs.if_it_fits.scoring import boxes

__all__ = ["PHASES", "IfItFitsGame", "boxes", "default_deck"]

_DEFAULT_DECK: dict[str, Any] | None = None


def default_deck() -> dict[str, Any]:
    """The default deck (``data/deck.json``), loaded once."""
    global _DEFAULT_DECK
    if _DEFAULT_DECK is None:
        _DEFAULT_DECK = D.load_default()
    return _DEFAULT_DECK


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
    rules = R
    min_players, max_players, default_players = 2, L.MAX_PLAYERS, 2
    phases = PHASES
    obs_dtype = np.int8
    extra_options = {
        "table": Option((11, 11), "(rows, cols) of the table grid, rows 3-21, cols 5-21",
                        _table),
        "advanced": Option(False, "advanced rules", bool_option("if_it_fits_v0", "advanced")),
        "deck": Option(None, "None (default deck) or a deck dict / JSON path "
                             "(schema: card_envs/if_it_fits/deck.py)", _deck, reads_files=True),
    }

    def configure(self, cfg: np.ndarray) -> np.ndarray:
        """The config array: the shared header, then the table, the offsets and the cards."""
        self.rows, self.cols = self.options["table"]
        self.deck = self.options["deck"] or default_deck()
        self.card_names = D.card_names(self.deck)
        table = D.card_table(self.deck)
        nb, nt = len(self.deck["box_cards"]), len(self.deck["special_toy_cards"])
        lay = L.offsets(self.rows, self.cols, nb, nt)
        self.nb, self.nt, self.nc = nb, nt, lay["nc"]
        self.T, self.S = self.rows * self.cols, (self.rows - 1) * self.cols
        self.lay = lay
        ext = np.zeros(L.CF_TABLE + table.size, np.int32)
        ext[:cfg.size] = cfg
        ext[L.CF_ROWS], ext[L.CF_COLS] = self.rows, self.cols
        ext[L.CF_ADV] = int(self.options["advanced"])
        ext[L.CF_NB], ext[L.CF_NT] = nb, nt
        self.npr = L.NUM_PRINCESS if self.options["advanced"] else self.num_players
        ext[L.CF_NPR], ext[L.CF_NC], ext[L.CF_PILEMAX] = self.npr, lay["nc"], lay["pilemax"]
        for k, name in ((L.CF_O_PILE, "pile"), (L.CF_O_CELL, "cell"),
                        (L.CF_O_SJOIN, "sjoin"), (L.CF_O_PARENT, "parent"),
                        (L.CF_O_FRONT, "front"), (L.CF_O_CATS, "cats"),
                        (L.CF_O_COPEN, "copen"), (L.CF_O_NBC, "nbc"),
                        (L.CF_O_WALLNB, "wallnb"), (L.CF_O_OPENNB, "opennb"),
                        (L.CF_O_SLOT, "slot"), (L.CF_O_SLOTOK, "slotok"),
                        (L.CF_O_OBSC, "obsc"), (L.CF_O_DISC, "disc"), (L.CF_SIZE, "size"),
                        (L.CF_O_FLIST, "flist"), (L.CF_O_FPOS, "fpos")):
            ext[k] = lay[name]
        ext[L.CF_TABLE:] = table
        self.num_actions = L.num_actions(self.rows, self.cols)
        self.obs_size = L.obs_size(self.rows, self.cols, self.num_players, nt)
        ext[L.CF_OBS] = self.obs_size
        self.state_size = lay["size"]
        self.B = self.T + self.S
        return ext

    def obs_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Per-entry bounds of the observation, in the order of the table in ``env.py``."""
        n, T, S = self.num_players, self.T, self.S
        lo, hi = [], []

        def add(low: int, high: int, k: int = 1) -> None:
            lo.extend([low] * k)
            hi.extend([high] * k)

        def card_row(kind_max: int) -> None:
            add(0, kind_max)
            add(0, 1, 4)
            add(0, L.MAX_ICONS, 4)

        add(0, L.CK_SLEEPER, T)
        add(0, L.ALL_OPEN, T)
        add(0, L.MAX_ICONS, 4 * T)
        add(0, L.SLOT_PRINCESS, T)
        add(0, 4, T)
        add(0, L.SLOT_TOY, S)
        for _ in range(self.nt):
            add(0, 1)
            add(0, self.rows - 2)
            add(0, self.cols - 1)
            add(0, L.MAX_ICONS, 3)
        for _ in range(L.HANDMAX):
            card_row(L.HK_PRINCESS)
        for _ in range(L.NUM_START):
            card_row(1)
        add(0, L.MAX_ICONS, 3)
        add(0, L.CATS_EACH, n)
        add(0, L.HANDMAX, n)
        add(0, self.lay["pilemax"])
        add(0, len(PHASES) - 1)
        add(-1, n - 1)
        add(0, 1)
        add(-1, L.HANDMAX - 1)
        add(-1, L.NUM_START - 1)
        add(-1, self.rows - 1)
        add(-1, self.cols - 1)
        add(-1, self.rows - 1)
        add(-1, self.cols - 1)
        add(0, 1)
        add(0, n - 1)
        return np.asarray(lo), np.asarray(hi)

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

    # --- state dict, checks, determinization: statedict.py ----------------------------------
    def fields_to_dict(self, state: np.ndarray, observer: int | None) -> dict[str, Any]:
        return SD.fields_to_dict(self, state, observer)

    def fields_from_dict(self, state: np.ndarray, d: Mapping[str, Any]) -> None:
        SD.fields_from_dict(self, state, d)

    def check_state(self, state: np.ndarray) -> None:
        SD.check_state(self, state)

    def resample(self, state: np.ndarray, observer: int,
                 rng: np.random.Generator) -> np.ndarray:
        """Redraw what ``observer`` cannot see (see :func:`statedict.resample`)."""
        return SD.resample(self, state, observer, rng)

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

    def render(self, state: np.ndarray, observer: int | None = None) -> str:
        return _render.render(self, state)
