"""Isflak's cards: kinds, codes such as ``"10H"`` and the card-points option's keys.

What a card is worth under the ``card_points`` option is the query
:func:`card_envs.isflak.queries.card_points`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from card_envs.core.checks import short_repr
from card_envs.core.errors import StateDictError
from card_envs.isflak.layout import DECK, K_ACE, K_FACE, K_NUMBER, RANKS, SUITS

# kind of each card id: rank 0 ace, ranks 10-12 face, else number
KIND = np.array([K_ACE if i % 13 == 0 else (K_FACE if i % 13 >= 10 else K_NUMBER)
                 for i in range(DECK)], np.int32)
CARD_CODES = tuple(f"{RANKS[i % 13]}{SUITS[i // 13]}" for i in range(DECK))
CARD_IDS = {code: i for i, code in enumerate(CARD_CODES)}
POINT_KINDS = ("ace", "face", "number")
#: the ``card_points`` key of each card kind
KIND_NAMES = {K_ACE: "ace", K_FACE: "face", K_NUMBER: "number"}
DEFAULT_POINTS = {"ace": 3, "face": 2, "number": 1}
MAX_CARD_POINTS = 20


def card_id(code: Any) -> int:
    """The card id of a code such as ``"AS"``; ``StateDictError`` for anything else."""
    if not isinstance(code, str) or code not in CARD_IDS:
        raise StateDictError(f"unknown card code {short_repr(code)} (e.g. 'AS', '10H', 'KD')")
    return CARD_IDS[code]
