"""Op Glad IJs decks: loading and validating deck data, card codes, the kernels' type tables,
the action table and the action names.

A deck is a list of card *types* ``{"code": str, "count": int, "set": str}``:

* ``"gorilla/ice_floe"``: one animal and one habitat (a *normal* card when they differ, a
  *right-habitat* card when the habitat is the animal's own, e.g. ``"camel/desert"``);
* ``"animals:camel+penguin"``: a 2-animals card (two different animals, no habitat);
* ``"habitats:desert+water_lily"``: a 2-habitats card (two different habitats, no animal).

``set`` is ``"base"`` (always in play), ``"two_animals"`` or ``"two_habitats"`` (in play when
the matching option is on). The default deck is ``data/deck.json`` (in the game folder).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from card_envs.core.checks import short_repr
from card_envs.core.errors import OptionError
from card_envs.op_glad_ijs.layout import (
    KIND_ANIMALS,
    KIND_HABITATS,
    KIND_NAMES,
    KIND_NORMAL,
    KIND_RIGHT,
    MAX_CARDS,
    MAX_TYPES,
    NUM_ANIMALS,
)

ANIMALS = ("camel", "penguin", "toad", "spider", "mountain_goat", "gorilla")
HABITATS = ("desert", "ice_floe", "water_lily", "spider_web", "mountains", "rainforest")
assert len(ANIMALS) == len(HABITATS) == NUM_ANIMALS
SETS = ("base", "two_animals", "two_habitats")
DATA = Path(__file__).parent.parent / "data" / "deck.json"


def parse_code(code: str) -> tuple[int, int, int]:
    """``(kind, animal bitmask, habitat bitmask)`` of a card code; ``ValueError`` if bad."""
    if not isinstance(code, str):
        raise ValueError(f"card code must be a string, got {short_repr(code)}")
    if code.startswith("animals:"):
        parts = code[len("animals:"):].split("+")
        if len(parts) != 2 or parts[0] == parts[1] or not set(parts) <= set(ANIMALS):
            raise ValueError(f"bad 2-animals code {short_repr(code)}")
        return KIND_ANIMALS, sum(1 << ANIMALS.index(p) for p in parts), 0
    if code.startswith("habitats:"):
        parts = code[len("habitats:"):].split("+")
        if len(parts) != 2 or parts[0] == parts[1] or not set(parts) <= set(HABITATS):
            raise ValueError(f"bad 2-habitats code {short_repr(code)}")
        return KIND_HABITATS, 0, sum(1 << HABITATS.index(p) for p in parts)
    parts = code.split("/")
    if len(parts) != 2 or parts[0] not in ANIMALS or parts[1] not in HABITATS:
        raise ValueError(f"bad card code {short_repr(code)}: expected 'animal/habitat', "
                         f"'animals:a+b' or 'habitats:h+k'")
    a, h = ANIMALS.index(parts[0]), HABITATS.index(parts[1])
    return (KIND_RIGHT if a == h else KIND_NORMAL), 1 << a, 1 << h


def validate_deck(cards: Any) -> list[dict[str, Any]]:
    """Check a deck (list of ``{"code", "count", "set"}``) and return it normalized; raises
    ``ValueError`` naming the problem."""
    if not isinstance(cards, (list, tuple)) or not cards:
        raise ValueError("a deck is a non-empty list of {code, count, set} entries")
    out, seen = [], set()
    for e in cards:
        if not isinstance(e, dict) or set(e) != {"code", "count", "set"}:
            raise ValueError(f"deck entry must have exactly code, count, set: {short_repr(e)}")
        code, count, kset = e["code"], e["count"], e["set"]
        kind, _, _ = parse_code(code)
        if code in seen:
            raise ValueError(f"card type {short_repr(code)} listed twice")
        seen.add(code)
        if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= 9:
            raise ValueError(f"{code}: count must be an int 1..9, got {short_repr(count)}")
        if not isinstance(kset, str) or kset not in SETS:
            raise ValueError(f"{code}: set must be one of {SETS}, got {short_repr(kset)}")
        if kind == KIND_ANIMALS and kset != "two_animals" or \
                kind == KIND_HABITATS and kset != "two_habitats" or \
                kind in (KIND_NORMAL, KIND_RIGHT) and kset != "base":
            raise ValueError(f"{code}: a {KIND_NAMES[kind]} card cannot be in set "
                             f"{short_repr(kset)}")
        out.append({"code": code, "count": count, "set": kset})
    if len(out) > MAX_TYPES or sum(e["count"] for e in out) > MAX_CARDS:
        raise ValueError(f"a deck has at most {MAX_TYPES} types and {MAX_CARDS} cards")
    return out


@lru_cache(maxsize=1)
def default_deck() -> tuple[tuple[str, int, str], ...]:
    """The default deck from ``data/deck.json``, validated (30 x 3 normal, 6 right habitat,
    6 + 6 advanced cards: 108)."""
    d = json.loads(DATA.read_text())
    if d.get("game") != "op_glad_ijs" or list(d.get("animals", ())) != list(ANIMALS) or \
            list(d.get("habitats", ())) != list(HABITATS):
        raise ValueError(f"{DATA}: not an Op Glad IJs deck with the six animals/habitats")
    cards = validate_deck(d["cards"])
    kinds = [parse_code(e["code"])[0] for e in cards]
    counts = {k: sum(e["count"] for e, kk in zip(cards, kinds) if kk == k) for k in range(4)}
    if counts != {KIND_NORMAL: 90, KIND_RIGHT: 6, KIND_ANIMALS: 6, KIND_HABITATS: 6}:
        raise ValueError(f"{DATA}: default deck must have 90/6/6/6 cards, got {counts}")
    return tuple((e["code"], e["count"], e["set"]) for e in cards)


def check_deck_option(value: Any, _: Any) -> Any:
    """Option checker for ``deck``: ``None`` (default deck) or a custom deck list."""
    if value is None:
        return None
    try:
        return validate_deck(value)
    except ValueError as e:
        raise OptionError(f"op_glad_ijs_v0: invalid deck: {e}") from e


def configured_types(deck: Any, two_animals: bool, two_habitats: bool) -> list[tuple[str, int]]:
    """The configuration's card types ``(code, count)`` in action/observation order: normal
    cards, right-habitat cards, then 2-animals, then 2-habitats (deck order within a kind)."""
    if deck is None:
        entries = [{"code": c, "count": n, "set": s} for c, n, s in default_deck()]
    else:
        entries = list(deck)
    use = {"base": True, "two_animals": two_animals, "two_habitats": two_habitats}
    chosen = [e for e in entries if use[e["set"]]]
    chosen.sort(key=lambda e: parse_code(e["code"])[0])  # stable: deck order within a kind
    return [(e["code"], e["count"]) for e in chosen]


def option_types(options: Mapping[str, Any]) -> list[tuple[str, int]]:
    """The card types ``(code, count)`` of a game's validated options (``deck``, ``advanced``,
    ``two_animals``, ``two_habitats``): a kind is in play if ``advanced`` or its own flag is
    set."""
    return configured_types(options["deck"], options["advanced"] or options["two_animals"],
                            options["advanced"] or options["two_habitats"])


def action_types(num_types: int) -> list[tuple[int, int]]:
    """Per action, its (first, second) card type, -1 for none: pass, one hand on each type,
    then two hands on each ``t <= u`` (the action order of ``layout``)."""
    T = num_types
    return [(-1, -1)] + [(t, -1) for t in range(T)] + \
        [(t, u) for t in range(T) for u in range(t, T)]


def action_names(codes: list[str]) -> tuple[str, ...]:
    """Per action, its name: ``"pass"``, ``"slap <code>"``, ``"slap <code> + <code>"``."""
    return tuple("pass" if t < 0 else f"slap {codes[t]}" if u < 0 else
                 f"slap {codes[t]} + {codes[u]}" for t, u in action_types(len(codes)))


def type_tables(types: list[tuple[str, int]]) -> np.ndarray:
    """``(4, MAX_TYPES)`` int32: count, kind, animal mask, habitat mask per type."""
    t = np.zeros((4, MAX_TYPES), np.int32)
    for i, (code, count) in enumerate(types):
        kind, am, hm = parse_code(code)
        t[:, i] = (count, kind, am, hm)
    return t
