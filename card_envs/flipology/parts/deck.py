"""Flipology decks: loading and validating the deck data (default: ``data/deck.json``), the
per-card tables of the config array.

Schema: ``{"cards": [{"kind": <kind name>, "points": [<int>, ...]}, ...], ...}``; one card per
entry of ``points``; card ids are assigned in file order. Kinds: ``layout.KIND_NAMES``. Points
are integers 0-31; at most 120 cards.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from functools import lru_cache
from importlib import resources
from typing import Any

import numpy as np

from card_envs.core.checks import short_repr
from card_envs.core.errors import OptionError
from card_envs.flipology.layout import KIND_NAMES, MAXC, NULL, T_KIND, T_PTS

MAX_POINTS = 31


def default_deck() -> dict[str, Any]:
    """The validated default deck (``data/deck.json``)."""
    text = resources.files("card_envs.flipology").joinpath("data/deck.json").read_text()
    return validate_deck(json.loads(text))


def validate_deck(deck: Any) -> dict[str, Any]:
    """The deck in canonical form (``{"cards": [...]}``) or :class:`OptionError`."""
    if not isinstance(deck, Mapping) or not isinstance(deck.get("cards"), list):
        raise OptionError("flipology_v0: deck must be a mapping with a 'cards' list of "
                          "{'kind': name, 'points': [ints]} entries")
    out = []
    total = 0
    for g in deck["cards"]:
        if not isinstance(g, Mapping) or set(g) != {"kind", "points"}:
            raise OptionError(f"flipology_v0: deck entry must have exactly 'kind' and "
                              f"'points', got {short_repr(g)}")
        kind, pts = g["kind"], g["points"]
        if not isinstance(kind, str) or kind not in KIND_NAMES:
            raise OptionError(f"flipology_v0: unknown card kind {short_repr(kind)}; kinds: "
                              f"{list(KIND_NAMES)}")
        if not isinstance(pts, list) or not pts:
            raise OptionError(f"flipology_v0: points of {short_repr(kind)} must be a non-empty "
                              "list")
        for v in pts:
            if not isinstance(v, int) or isinstance(v, bool) or not 0 <= v <= MAX_POINTS:
                raise OptionError(f"flipology_v0: points must be ints 0-{MAX_POINTS}, "
                                  f"got {short_repr(v)} for {short_repr(kind)}")
        if kind == "null" and any(pts):
            raise OptionError("flipology_v0: null cards score 0")
        total += len(pts)
        out.append({"kind": str(kind), "points": [int(v) for v in pts]})
    if total > MAXC:
        raise OptionError(f"flipology_v0: a deck has at most {MAXC} cards, got {total}")
    return {"cards": out}


def expand(deck: Mapping[str, Any]) -> tuple[list[int], list[int]]:
    """(kind index, points) per card id."""
    kinds: list[int] = []
    pts: list[int] = []
    for g in deck["cards"]:
        for v in g["points"]:
            kinds.append(KIND_NAMES.index(g["kind"]))
            pts.append(v)
    return kinds, pts


def write_card_tables(cfg: np.ndarray, kinds: Sequence[int], points: Sequence[int]) -> None:
    """Write the kind and points of every card id into the config array (``T_KIND``,
    ``T_PTS``); the id after the last card is the null the Wolves leave (0 points)."""
    nc = len(kinds)
    cfg[T_KIND:T_KIND + nc] = kinds
    cfg[T_KIND + nc] = NULL
    cfg[T_PTS:T_PTS + nc] = points


@lru_cache(maxsize=1)
def _default_cards() -> tuple[tuple[int, ...], tuple[int, ...]]:
    kinds, pts = expand(default_deck())
    return tuple(kinds), tuple(pts)


def card_table(view: Mapping[str, Any]) -> tuple[Sequence[int], Sequence[int]]:
    """(kind index, points) per card id of a state dict's deck (the ``deck`` option or the
    default deck)."""
    deck = view["options"].get("deck")
    if deck is None:
        return _default_cards()
    kinds, pts = expand(deck)
    return kinds, pts
