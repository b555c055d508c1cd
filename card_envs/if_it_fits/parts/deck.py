"""If It Fits decks: the default deck (``data/deck.json``) and validation of user decks.

A deck is a JSON object with three lists (schema below); cards are identified by their list
position, the kernels get them as a flat int32 table (``card_table``).

``box_cards`` (1-110 cards) and ``start_cards`` (exactly 5): ``{"name": str, "open": str
(subset of "NESW", each letter once), "toys": {"ball"|"mouse"|"yarn": int 0-9}, "sprayer": int
0-9}``; ``special_toy_cards`` (0-10): ``{"name": str, "toys": {...}}``. Names are unique.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from card_envs.core.checks import short_repr
from card_envs.core.errors import OptionError
from card_envs.if_it_fits.layout import (
    ALL_OPEN,
    KIND_BOX,
    KIND_START,
    KIND_TOY,
    MAX_ICONS,
    NUM_START,
    SIDES,
    TOYS,
)

MAX_BOX, MAX_TOY = 110, 10
DATA = Path(__file__).parent.parent / "data" / "deck.json"

SHAPES = (("X", "NESW"), ("T1", "ESW"), ("T2", "NSW"), ("I1", "NS"), ("I2", "EW"),
          ("L1", "NE"), ("L2", "NW"), ("U1", "N"), ("U2", "E"))


def generate_default() -> dict[str, Any]:
    """The spec's default deck (used to write ``data/deck.json``)."""
    box = []
    loads = [{"ball": 1}, {"mouse": 1}, {"yarn": 1}, {"ball": 1, "mouse": 1},
             {"mouse": 1, "yarn": 1}, {"yarn": 1, "ball": 1}, {}]
    for k, (shape, open_) in enumerate(SHAPES):
        for j, toys in enumerate(loads):
            box.append({"name": f"{shape}-{j + 1}", "open": open_, "toys": dict(toys),
                        "sprayer": 0})
        box.append({"name": f"{shape}-8", "open": open_, "toys": {TOYS[k % 3]: 1},
                    "sprayer": 1})
    start = [{"name": "S1", "open": "NESW", "toys": {"ball": 1}, "sprayer": 0},
             {"name": "S2", "open": "NS", "toys": {"mouse": 1}, "sprayer": 0},
             {"name": "S3", "open": "EW", "toys": {"yarn": 1}, "sprayer": 0},
             {"name": "S4", "open": "NE", "toys": {"ball": 1, "mouse": 1}, "sprayer": 0},
             {"name": "S5", "open": "N", "toys": {"mouse": 1, "yarn": 1}, "sprayer": 0}]
    toys = [{"name": "balls", "toys": {"ball": 2}}, {"name": "mice", "toys": {"mouse": 2}},
            {"name": "yarns", "toys": {"yarn": 2}}]
    return {"box_cards": box, "start_cards": start, "special_toy_cards": toys}


def _int(x: Any, lo: int, hi: int, what: str) -> int:
    """``x`` as an int in ``lo..hi``, or OptionError."""
    if not isinstance(x, (int, np.integer)) or isinstance(x, bool) or not lo <= x <= hi:
        raise OptionError(f"if_it_fits deck: {what} must be an int in {lo}..{hi}, "
                          f"got {short_repr(x)}")
    return int(x)


def _card(c: Any, where: str, toy_card: bool) -> dict[str, Any]:
    """The canonical form of one card of a user deck, or OptionError."""
    if not isinstance(c, Mapping):
        raise OptionError(f"if_it_fits deck: {where} must be an object, got {short_repr(c)}")
    allowed = {"name", "toys"} if toy_card else {"name", "open", "toys", "sprayer"}
    extra = set(c) - allowed
    if extra:
        raise OptionError(f"if_it_fits deck: {where} has unknown keys {sorted(extra)}")
    name = c.get("name")
    if not isinstance(name, str) or not name:
        raise OptionError(f"if_it_fits deck: {where} needs a non-empty string name")
    toys = c.get("toys", {})
    if not isinstance(toys, Mapping) or set(toys) - set(TOYS):
        raise OptionError(f"if_it_fits deck: {where} toys must map {list(TOYS)} to counts")
    out: dict[str, Any] = {"name": name, "toys": {t: _int(toys[t], 0, MAX_ICONS, f"{where} {t}")
                                                  for t in TOYS if t in toys}}
    if not toy_card:
        open_ = c.get("open")
        if not isinstance(open_, str) or set(open_) - set(SIDES) or \
                len(set(open_)) != len(open_):
            raise OptionError(f"if_it_fits deck: {where} open must be a subset of 'NESW', "
                              f"got {short_repr(open_)}")
        out["open"] = "".join(s for s in SIDES if s in open_)
        out["sprayer"] = _int(c.get("sprayer", 0), 0, MAX_ICONS, f"{where} sprayer")
    return out


def validate(deck: Any) -> dict[str, Any]:
    """The canonical form of ``deck`` (dict, or path of a JSON file), or OptionError."""
    if isinstance(deck, (str, Path)):
        try:
            deck = json.loads(Path(deck).read_text())
        except (OSError, ValueError) as e:
            why = e.strerror if isinstance(e, OSError) and e.strerror else short_repr(str(e))
            raise OptionError(f"if_it_fits deck: cannot read {short_repr(deck)}: {why}") from e
    if not isinstance(deck, Mapping):
        raise OptionError("if_it_fits deck must be a dict or a JSON file path, "
                          f"got {short_repr(deck)}")
    keys = {"box_cards", "start_cards", "special_toy_cards"}
    if set(deck) != keys:
        raise OptionError(f"if_it_fits deck needs exactly the keys {sorted(keys)}")
    out: dict[str, Any] = {}
    for key, lo, hi in (("box_cards", 1, MAX_BOX), ("start_cards", NUM_START, NUM_START),
                        ("special_toy_cards", 0, MAX_TOY)):
        cards = deck[key]
        if not isinstance(cards, (list, tuple)) or not lo <= len(cards) <= hi:
            raise OptionError(f"if_it_fits deck: {key} must be a list of {lo}..{hi} cards")
        out[key] = [_card(c, f"{key}[{i}]", key == "special_toy_cards")
                    for i, c in enumerate(cards)]
    names = [c["name"] for k in ("box_cards", "start_cards", "special_toy_cards")
             for c in out[k]]
    if len(set(names)) != len(names):
        raise OptionError("if_it_fits deck: card names must be unique")
    return out


def load_default() -> dict[str, Any]:
    """The default deck (``data/deck.json``), validated."""
    return validate(json.loads(DATA.read_text()))


_DEFAULT: dict[str, Any] | None = None


def default_deck() -> dict[str, Any]:
    """The default deck, loaded once (shared: do not change it)."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = load_default()
    return _DEFAULT


def card_table(deck: Mapping[str, Any]) -> np.ndarray:
    """Flat int32 table, ``FIELDS`` entries per card id (box cards, then start, then toy
    cards): kind, open bits, ball, mouse, yarn, sprayers."""
    rows = []
    for key, kind in (("box_cards", KIND_BOX), ("start_cards", KIND_START),
                      ("special_toy_cards", KIND_TOY)):
        for c in deck[key]:
            bits = ALL_OPEN if kind == KIND_TOY else sum(1 << SIDES.index(s) for s in c["open"])
            rows.append([kind, bits, *(c["toys"].get(t, 0) for t in TOYS),
                         c.get("sprayer", 0)])
    return np.asarray(rows, np.int32).ravel()


def card_names(deck: Mapping[str, Any]) -> list[str]:
    """Card names by card id (box cards, then start, then toy cards)."""
    return [c["name"] for k in ("box_cards", "start_cards", "special_toy_cards")
            for c in deck[k]]
