"""Three Cards state dicts: the codec, ``check_state`` and ``resample``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from card_envs.core.checks import int_in, requirer, seq
from card_envs.core.game import Game
from card_envs.core.kernels import CUR, DONE, PHASE
from toy_cards.layout import CARDS, HAND, LEAD, OWNER, P_END, PLAYED, TRICK, TRICKS

_require = requirer("toy")
HIDDEN = "hidden"


def fields_to_dict(game: Game, state: np.ndarray, observer: int | None) -> dict[str, Any]:
    """``owners`` (seat dealt each card, null undealt; ``"hidden"`` where ``observer`` cannot
    know), ``played`` (trick of each card or null), ``tricks``, ``trick``, ``lead``."""
    n = game.num_players
    owners: list[Any] = []
    for v in range(CARDS):
        o, p = int(state[OWNER + v]), int(state[PLAYED + v])
        known = observer is None or p >= 0 or o == observer
        owners.append((None if o < 0 else o) if known else HIDDEN)
    played = [None if state[PLAYED + v] < 0 else int(state[PLAYED + v]) for v in range(CARDS)]
    return {"owners": owners, "played": played,
            "tricks": [int(x) for x in state[TRICKS:TRICKS + n]],
            "trick": int(state[TRICK]), "lead": int(state[LEAD])}


def fields_from_dict(game: Game, state: np.ndarray, d: Mapping[str, Any]) -> None:
    """Write a checked dict's fields into ``state``."""
    n = game.num_players
    owners = seq(d["owners"], "owners", CARDS)
    played = seq(d["played"], "played", CARDS)
    for v in range(CARDS):
        state[OWNER + v] = -1 if owners[v] is None else int_in(owners[v], 0, n - 1, "owner")
        state[PLAYED + v] = -1 if played[v] is None else int_in(played[v], 0, HAND - 1,
                                                                 "played trick")
    tricks = seq(d["tricks"], "tricks", n)
    for q in range(n):
        state[TRICKS + q] = int_in(tricks[q], 0, HAND, "tricks entry")
    state[TRICK] = int_in(d["trick"], 0, HAND, "trick")
    state[LEAD] = int_in(d["lead"], 0, n - 1, "lead")


def check_state(game: Game, state: np.ndarray) -> None:
    """``StateDictError`` unless the cards, tricks and turn are consistent."""
    n = game.num_players
    owner = state[OWNER:OWNER + CARDS]
    played = state[PLAYED:PLAYED + CARDS]
    tricks = state[TRICKS:TRICKS + n]
    t, lead, cur = int(state[TRICK]), int(state[LEAD]), int(state[CUR])
    for q in range(n):
        _require(int((owner == q).sum()) == HAND, f"seat {q} was dealt {HAND} cards")
    _require(bool(((owner >= -1) & (owner < n)).all()), "owners are seats or -1")
    _require(bool((played[owner < 0] == -1).all()), "an undealt card was played")
    _require(bool((played <= t).all()), "a card played in a trick to come")
    _require(bool((state[TRICKS + n:TRICK] == 0).all()), "unused seats have no tricks")
    _require(int(tricks.sum()) == t, "one trick won per completed trick")
    for k in range(t):
        cards = np.flatnonzero(played == k)
        _require(sorted(owner[cards].tolist()) == list(range(n)),
                 f"trick {k}: one card from every seat")
    on_table = np.flatnonzero(played == t)
    _require((t == HAND) == (state[PHASE] == P_END) == bool(state[DONE]),
             "the game ends after the last trick")
    if t == HAND:
        _require(cur == -1 and on_table.size == 0, "nobody acts after the last trick")
        return
    _require(on_table.size < n, "a full trick is resolved")
    seats = sorted(owner[on_table].tolist())
    expect = sorted((lead + i) % n for i in range(on_table.size))
    _require(seats == expect, "the current trick is played from the lead, clockwise")
    _require(cur == (lead + on_table.size) % n, "the seat after the last play acts")
    if t > 0:  # the winner of the last trick leads
        last = np.flatnonzero(played == t - 1)
        _require(int(owner[last.max()]) == lead, "the winner of a trick leads the next")


def resample(game: Game, state: np.ndarray, observer: int,
             rng: np.random.Generator) -> np.ndarray:
    """Deal the cards ``observer`` has not seen (other hands and the undealt ones) anew,
    keeping every seat's number of cards."""
    out = state.copy()
    owner = out[OWNER:OWNER + CARDS]
    unknown = np.flatnonzero((out[PLAYED:PLAYED + CARDS] < 0) & (owner != observer))
    owner[unknown] = rng.permutation(owner[unknown])
    return out
