"""Op Glad IJs's game specification: options, sizes, pile views, action names, wiring.

The state-dict codec, ``check_state`` and ``resample`` live in ``statedict`` (delegated to),
the layouts in ``layout``, the kernels in ``rules``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from card_envs.core.checks import short_repr
from card_envs.core.errors import OptionError
from card_envs.core.game import Game, Option, bool_option
from card_envs.core.kernels import CUR, DONE
from card_envs.op_glad_ijs import deck as D
from card_envs.op_glad_ijs import layout as L
from card_envs.op_glad_ijs import render as _render
from card_envs.op_glad_ijs import rules as R
from card_envs.op_glad_ijs import statedict as SD


def _max_turned(v: Any, _: Mapping[str, Any]) -> int:
    if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or not 1 <= v <= 10**6:
        raise OptionError("op_glad_ijs_v0: max_turned must be an int in 1..1000000, "
                          f"got {short_repr(v)}")
    return int(v)


class OpGladIJsGame(Game):
    """One Op Glad IJs configuration: the deck's card types, sizes and kernel config."""

    name = "op_glad_ijs"
    env_id = "op_glad_ijs_v0"
    version = "0"
    rules = R
    min_players, max_players, default_players = 2, L.MAX_PLAYERS, 2
    phases = L.PHASES
    reward_modes = L.REWARD_MODES
    obs_dtype = np.int8
    extra_options = {
        "advanced": Option(False, "all 108 cards: adds the 2-animals and 2-habitats cards",
                           bool_option("op_glad_ijs_v0", "advanced")),
        "two_animals": Option(False, "add the six 2-animals cards",
                              bool_option("op_glad_ijs_v0", "two_animals")),
        "two_habitats": Option(False, "add the six 2-habitats cards",
                               bool_option("op_glad_ijs_v0", "two_habitats")),
        "max_turned": Option(L.MAX_TURNED, "cut-off: the game is truncated after the reaction "
                             "phase of this many turned cards (1..1000000)", _max_turned),
        "deck": Option(None, "None (data/deck.json) or a list of {code, count, set} entries",
                       D.check_deck_option),
    }

    def configure(self, cfg: np.ndarray) -> np.ndarray:
        o = self.options
        self.with_animals = o["advanced"] or o["two_animals"]
        self.with_habitats = o["advanced"] or o["two_habitats"]
        types = D.configured_types(o["deck"], self.with_animals, self.with_habitats)
        self.codes = [c for c, _ in types]
        self.code_index = {c: i for i, c in enumerate(self.codes)}
        self.T = T = len(types)
        tables = D.type_tables(types)
        self.counts = tables[0, :T].copy()
        self.kinds = tables[1, :T].copy()
        self.N = int(self.counts.sum())
        if self.N < self.num_players:
            raise OptionError(f"op_glad_ijs_v0: the deck has only {self.N} cards")
        self.num_actions = L.num_actions(T)
        self.obs_size = L.obs_size(self.num_players, T)
        self.state_size = L.STATE_SIZE
        full = np.zeros(L.CFG_SIZE, np.int32)
        full[:cfg.shape[0]] = cfg
        full[L.G_T] = T
        full[L.G_N] = self.N
        full[L.G_MAXT] = self.max_turned = o["max_turned"]
        full[L.CT_COUNT:L.CT_COUNT + L.MAX_TYPES] = tables[0]
        full[L.CT_KIND:L.CT_KIND + L.MAX_TYPES] = tables[1]
        full[L.CT_AM:L.CT_AM + L.MAX_TYPES] = tables[2]
        full[L.CT_HM:L.CT_HM + L.MAX_TYPES] = tables[3]
        self.act_types = [(-1, -1)] + [(t, -1) for t in range(T)] + \
            [(t, u) for t in range(T) for u in range(t, T)]
        for a, (t, u) in enumerate(self.act_types):
            full[L.CA + a] = t
            full[L.CB + a] = u
        return full

    def obs_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        n, T, N = self.num_players, self.T, self.N
        lo = np.zeros(self.obs_size, np.int64)
        hi = np.zeros(self.obs_size, np.int64)
        hi[L.OBS_MIDDLE:L.OBS_MIDDLE + T] = self.counts
        card = ((L.O_LAST_TURNED, -1, T - 1), (L.O_WINDOW, 0, L.MAX_WINDOWS - 1),
                (L.O_TURNED_BY, 0, n - 1), (L.O_TURNER, 0, n - 1), (L.O_CHOSEN, 0, 1),
                (L.O_OWN, -1, T - 1), (L.O_OWN + 1, -1, T - 1))
        seat = ((L.S_DRAW, 0, N), (L.S_WON, 0, N), (L.S_WON_TOP, -1, T - 1), (L.S_KNOWN, 0, N),
                (L.S_LAST, -1, T - 1), (L.S_LAST + 1, -1, T - 1))
        for off, low, high in card:
            lo[T + off], hi[T + off] = low, high
        for r in range(n):
            for off, low, high in seat:
                k = T + L.O_SEATS + L.SEAT_FIELDS * r + off
                lo[k], hi[k] = low, high
        kb = L.obs_known(n, T)
        hi[kb:kb + T] = self.counts
        return lo, hi

    # --- views -----------------------------------------------------------------------------
    def middle(self, state: np.ndarray) -> list[int]:
        """The middle's card types, in turned order."""
        return SD.types(state, SD.slots(state, L.MHEAD, L.MLEN))

    def draw_slots(self, state: np.ndarray, seat: int) -> list[int]:
        """Slots of seat's draw pile, bottom first."""
        return SD.slots(state, L.DTOP + seat, L.DLEN + seat)[::-1]

    def draw_pile(self, state: np.ndarray, seat: int) -> list[int]:
        """Seat's draw pile, bottom first."""
        return SD.types(state, self.draw_slots(state, seat))

    def won_pile(self, state: np.ndarray, seat: int) -> list[int]:
        """Seat's won pile, bottom first (top last)."""
        return SD.types(state, SD.slots(state, L.WTOP + seat, L.WLEN + seat)[::-1])

    def out_cards(self, state: np.ndarray) -> list[int]:
        """The cards out of the game, in the order they went out."""
        return SD.types(state, SD.slots(state, L.OHEAD, L.OLEN))

    def pending_hidden(self, state: np.ndarray, observer: int) -> list[int]:
        """Seats whose choice in the current window ``observer`` cannot see."""
        if state[DONE]:
            return []
        return [q for q in range(int(state[CUR])) if q != observer]

    def action_types(self, action: int) -> tuple[int, int]:
        """The (first, second) card type of an action, -1 for none."""
        return self.act_types[action]

    # --- state dict / checks / resample: card_envs.op_glad_ijs.statedict -------------------
    def fields_to_dict(self, state: np.ndarray, observer: int | None) -> dict[str, Any]:
        return SD.fields_to_dict(self, state, observer)

    def fields_from_dict(self, state: np.ndarray, d: Mapping[str, Any]) -> None:
        SD.fields_from_dict(self, state, d)

    def check_state(self, state: np.ndarray) -> None:
        SD.check_state(self, state)

    def resample(self, state: np.ndarray, observer: int,
                 rng: np.random.Generator) -> np.ndarray:
        return SD.resample(self, state, observer, rng)

    # --- text ------------------------------------------------------------------------------
    def max_length(self) -> int:
        """Turned cards x reaction windows per card x one choice per seat."""
        return int(self.options["max_turned"]) * L.MAX_WINDOWS * self.num_players

    def action_to_str(self, action: int) -> str:
        t, u = self.act_types[action]
        if t < 0:
            return "pass"
        if u < 0:
            return f"slap {self.codes[t]}"
        return f"slap {self.codes[t]} + {self.codes[u]}"

    def render(self, state: np.ndarray, observer: int | None = None) -> str:
        return _render.render(self, state)
