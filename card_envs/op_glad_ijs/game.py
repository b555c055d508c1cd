"""Op Glad IJs's game specification: options, sizes, kernel config, action names, wiring.

The kernels live in ``rules`` and ``observe``, the state-dict codec, ``check_state`` and
``resample`` in ``statedict``, the text and picture in ``view`` (the base class
``card_envs.core.game.Game`` dispatches to them), the layouts in ``layout``, the deck in
``parts.deck``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from card_envs.core.checks import short_repr
from card_envs.core.errors import OptionError
from card_envs.core.game import Game, Option, bool_option
from card_envs.op_glad_ijs import layout as L
from card_envs.op_glad_ijs import observe as OBS
from card_envs.op_glad_ijs import rules as R
from card_envs.op_glad_ijs import statedict as SD
from card_envs.op_glad_ijs import view as V
from card_envs.op_glad_ijs.parts import deck as D


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
    observe = OBS
    statedict = SD
    view = V
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
        types = D.option_types(o)
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
        self.act_types = D.action_types(T)
        self.action_names = D.action_names(self.codes)
        for a, (t, u) in enumerate(self.act_types):
            full[L.CA + a] = t
            full[L.CB + a] = u
        return full

    def action_types(self, action: int) -> tuple[int, int]:
        """The (first, second) card type of an action, -1 for none."""
        return self.act_types[action]

    def max_length(self) -> int:
        """Turned cards x reaction windows per card x one choice per seat."""
        return int(self.options["max_turned"]) * L.MAX_WINDOWS * self.num_players

    def action_to_str(self, action: int) -> str:
        return self.action_names[action]
