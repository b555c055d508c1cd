"""The mutation strategies of the fuzzing (``tests/support/fuzz.py``), over any nested data: state
dicts, option sets, decks.

Driven through hypothesis' ``draw``, they start from valid data and damage it: wrong types,
missing and extra keys, out-of-range and huge integers, floats, NaN, inf, bools for ints,
negative counts, duplicated, moved or missing cards, wrong lengths, other phases and seats
(``values``: plausible values per top-level key, see ``fuzz_inputs``), keys transplanted from
another valid dict, all of it also deep inside nested lists. :func:`mutate` applies a few.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from hypothesis import strategies as st

Draw = Callable[..., Any]
PathT = tuple[Any, ...]

# --- values ----------------------------------------------------------------------------------
NASTY: tuple[Any, ...] = (
    None, True, False, 0, 1, -1, 2, 3, 7, 99, 2**31 - 1, 2**31, -2**31, -2**31 - 1, 2**32,
    2**63 - 1, 2**63, -2**63, -2**63 - 1, 2**64, 10**30, 0.0, 1.0, 2.5, -1.0, math.nan,
    math.inf, -math.inf, "", "x", "0", "null", "empty", [], [None], [0, 0], [[]], {}, {"x": 1},
    (0, 1), np.int64(-1), np.int64(2**62), np.int32(2**31 - 1), np.uint64(2**64 - 1),
    np.float64("nan"), np.bool_(True), np.int8(3), np.zeros(2, np.int32), np.array(1),
)
INT_DELTAS = (-2, -1, 1, 2, 2**31, -2**31, 2**32)
TYPO_KEYS = ("extra", "Game", "phases", "currentplayer", "seed", "observer ", "rngs")


def _kind(x: Any) -> str:
    """A coarse type class (so that values are copied / swapped between like places)."""
    if isinstance(x, bool):
        return "bool"
    if isinstance(x, (int, np.integer)):
        return "int"
    if isinstance(x, str):
        return "str"
    if isinstance(x, list):
        return "list"
    if isinstance(x, dict):
        return "dict"
    return "other"


# --- paths into nested data ------------------------------------------------------------------
def locations(obj: Any, prefix: PathT = ()) -> list[PathT]:
    """Every location (path of keys / indices) inside ``obj``'s dicts and lists."""
    if isinstance(obj, dict):
        items: Any = obj.items()
    elif isinstance(obj, list):
        items = enumerate(obj)
    else:
        return []
    out: list[PathT] = []
    for k, v in items:
        out.append((*prefix, k))
        out.extend(locations(v, (*prefix, k)))
    return out


def get_at(obj: Any, path: PathT) -> Any:
    for k in path:
        obj = obj[k]
    return obj


def set_at(obj: Any, path: PathT, value: Any) -> None:
    get_at(obj, path[:-1])[path[-1]] = value


def del_at(obj: Any, path: PathT) -> None:
    del get_at(obj, path[:-1])[path[-1]]


def _draw_path(draw: Draw, d: Any, pred: Callable[[PathT, Any], bool] | None = None
               ) -> PathT | None:
    """A location of ``d`` (a top-level key one time in three: the header matters)."""
    paths = [p for p in locations(d) if pred is None or pred(p, get_at(d, p))]
    if not paths:
        return None
    top = [p for p in paths if len(p) == 1]
    if top and draw(st.integers(0, 2)) == 0:
        return draw(st.sampled_from(top))
    return draw(st.sampled_from(paths))


# --- mutations -------------------------------------------------------------------------------
def _nasty(draw: Draw, d: Any, _: Mapping[str, list]) -> str:
    p = _draw_path(draw, d)
    if p is None:
        return "nasty: nothing to change"
    v = copy.deepcopy(draw(st.sampled_from(NASTY)))
    set_at(d, p, v)
    return f"{p} = {v!r}"


def _near(draw: Draw, d: Any, _: Mapping[str, list]) -> str:
    """An int moved a little (or by 2**31), a string replaced by another string of the dict,
    a bool flipped, None replaced by a small int."""
    p = _draw_path(draw, d, lambda p, v: _kind(v) in ("int", "str", "bool") or v is None)
    if p is None:
        return "near: nothing to change"
    v = get_at(d, p)
    k = _kind(v)
    if k == "int":
        new: Any = int(v) + draw(st.sampled_from(INT_DELTAS))
    elif k == "bool":
        new = not v
    elif k == "str":
        strings = sorted({x for q in locations(d) if isinstance(x := get_at(d, q), str)} -
                         {v}) or ["?"]
        new = draw(st.sampled_from(strings))
    else:
        new = draw(st.sampled_from([0, 1, -1]))
    set_at(d, p, new)
    return f"{p}: {v!r} -> {new!r}"


def _alike(p: PathT, q: PathT) -> bool:
    """Locations of the same shape: same depth, same dict keys, indices where ``p`` has them
    (e.g. two cards of two piles)."""
    return len(p) == len(q) and all(
        isinstance(a, int) and isinstance(b, int) or a == b for a, b in zip(p, q))


def _partner(draw: Draw, d: Any, p: PathT) -> PathT | None:
    """Another location holding a different value of the same type class, not inside or
    around ``p``; one of the same shape two times in three."""
    v = get_at(d, p)
    k = _kind(v)
    cands = [q for q in locations(d) if q[:len(p)] != p and p[:len(q)] != q
             and _kind(w := get_at(d, q)) == k and not _same(w, v)]
    alike = [q for q in cands if _alike(p, q)]
    if alike and draw(st.integers(0, 2)):
        return draw(st.sampled_from(alike))
    return draw(st.sampled_from(cands)) if cands else None


def _same(a: Any, b: Any) -> bool:
    try:
        return type(a) is type(b) and bool(a == b)
    except ValueError:  # numpy arrays
        return False


def _copy(draw: Draw, d: Any, _: Mapping[str, list]) -> str:
    """Another location's value (of the same type class) copied here: duplicated cards."""
    p = _draw_path(draw, d)
    if p is None:
        return "copy: nothing"
    q = _partner(draw, d, p)
    if q is None:
        return "copy: no source"
    set_at(d, p, copy.deepcopy(get_at(d, q)))
    return f"{p} = copy of {q}"


def _delete(draw: Draw, d: Any, _: Mapping[str, list]) -> str:
    p = _draw_path(draw, d)
    if p is None:
        return "delete: nothing"
    del_at(d, p)
    return f"del {p}"


def _duplicate(draw: Draw, d: Any, _: Mapping[str, list]) -> str:
    """A list element inserted a second time, somewhere in its list."""
    p = _draw_path(draw, d, lambda p, v: isinstance(get_at(d, p[:-1]), list))
    if p is None:
        return "duplicate: no list"
    lst = get_at(d, p[:-1])
    i = draw(st.integers(0, len(lst)))
    lst.insert(i, copy.deepcopy(get_at(d, p)))
    return f"duplicate {p} at {i}"


def _swap(draw: Draw, d: Any, _: Mapping[str, list]) -> str:
    """Two values of the same type class exchanged (cards trade places: totals conserved)."""
    p = _draw_path(draw, d)
    if p is None:
        return "swap: nothing"
    q = _partner(draw, d, p)
    if q is None:
        return "swap: no partner"
    a, b = get_at(d, p), get_at(d, q)
    set_at(d, p, b)
    set_at(d, q, a)
    return f"swap {p} <-> {q}"


def _move(draw: Draw, d: Any, _: Mapping[str, list]) -> str:
    """A list element moved into another (or the same) list: a card changes pile."""
    p = _draw_path(draw, d, lambda p, v: isinstance(get_at(d, p[:-1]), list))
    if p is None:
        return "move: no list"
    v = get_at(d, p)
    del_at(d, p)
    lists = [q for q in locations(d) if isinstance(get_at(d, q), list)]
    if not lists:
        return f"move: dropped {p}"
    q = draw(st.sampled_from(lists))
    lst = get_at(d, q)
    i = draw(st.integers(0, len(lst)))
    lst.insert(i, v)
    return f"move {p} -> {q}[{i}]"


def _resize(draw: Draw, d: Any, _: Mapping[str, list]) -> str:
    """A list shortened by its last element or extended by a copy of it / a nasty value."""
    p = _draw_path(draw, d, lambda p, v: isinstance(v, list))
    if p is None:
        return "resize: no list"
    lst = get_at(d, p)
    if lst and draw(st.booleans()):
        lst.pop()
        return f"pop {p}"
    v = copy.deepcopy(lst[-1] if lst and draw(st.booleans()) else draw(st.sampled_from(NASTY)))
    lst.append(v)
    return f"append {v!r} to {p}"


def _add_key(draw: Draw, d: Any, _: Mapping[str, list]) -> str:
    """An unknown key in the top-level dict or in a nested one (typos)."""
    dicts = [()] + [q for q in locations(d) if isinstance(get_at(d, q), dict)]
    q = draw(st.sampled_from(dicts))
    target = get_at(d, q)
    key = draw(st.sampled_from(TYPO_KEYS + tuple(f"{k}_" for k in target if isinstance(k, str))))
    target[key] = copy.deepcopy(draw(st.sampled_from(NASTY[:12])))
    return f"add key {key!r} in {q}"


def _wrap(draw: Draw, d: Any, _: Mapping[str, list]) -> str:
    """A value wrapped in a list / dict, or a list turned into a tuple."""
    p = _draw_path(draw, d)
    if p is None:
        return "wrap: nothing"
    v = get_at(d, p)
    how = draw(st.sampled_from(["list", "dict", "tuple"]))
    new = [v] if how == "list" else {"value": v} if how == "dict" else \
        tuple(v) if isinstance(v, list) else (v,)
    set_at(d, p, new)
    return f"wrap {p} as {how}"


def _shuffle(draw: Draw, d: Any, _: Mapping[str, list]) -> str:
    """A list's elements in another order (a pile reshuffled, rows exchanged)."""
    p = _draw_path(draw, d, lambda p, v: isinstance(v, list) and len(v) > 1)
    if p is None:
        return "shuffle: no list"
    lst = get_at(d, p)
    order = draw(st.permutations(range(len(lst))))
    set_at(d, p, [lst[i] for i in order])
    return f"shuffle {p} as {order}"


def _plausible(draw: Draw, d: Any, values: Mapping[str, list]) -> str:
    """A top-level key set to a plausible value of that key (another phase, seat, size...)."""
    keys = sorted(k for k in values if values[k] and not k.startswith("__"))
    if not keys or not isinstance(d, dict):
        return "plausible: nothing"
    k = draw(st.sampled_from(keys))
    v = copy.deepcopy(draw(st.sampled_from(values[k])))
    d[k] = v
    return f"{k} = {v!r}"


def _transplant(draw: Draw, d: Any, values: Mapping[str, list]) -> str:
    """Top-level keys taken from another valid dict of the same game (``values["__donor__"]``,
    another random position): each value plausible, together inconsistent."""
    donor = (values.get("__donor__") or [None])[0]
    if not isinstance(donor, dict) or not isinstance(d, dict):
        return "transplant: no donor"
    keys = sorted(k for k in donor if k not in ("game", "version", "options"))
    taken = draw(st.lists(st.sampled_from(keys), min_size=1, max_size=3, unique=True))
    for k in taken:
        d[k] = copy.deepcopy(donor[k])
    return f"from the donor: {taken}"


MUTATIONS: dict[str, Callable[[Draw, Any, Mapping[str, list]], str]] = {
    "nasty": _nasty, "near": _near, "copy": _copy, "delete": _delete,
    "duplicate": _duplicate, "swap": _swap, "move": _move, "resize": _resize,
    "add_key": _add_key, "wrap": _wrap, "shuffle": _shuffle, "plausible": _plausible,
    "transplant": _transplant,
}
# some twice: they make the dicts that get past the shallow checks
MUTATION_NAMES = (*MUTATIONS, "plausible", "near", "swap", "transplant", "transplant")


def mutate(draw: Draw, base: Any, values: Mapping[str, list] | None = None,
           max_mutations: int = 3) -> tuple[Any, list[str]]:
    """A deep copy of ``base`` with 1..``max_mutations`` random mutations, and their log."""
    d = copy.deepcopy(base)
    log = []
    for _ in range(draw(st.integers(1, max_mutations))):
        name = draw(st.sampled_from(MUTATION_NAMES))
        log.append(f"{name}: {MUTATIONS[name](draw, d, values or {})}")
    return d, log

