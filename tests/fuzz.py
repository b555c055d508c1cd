"""Fuzzing the door for user data: state dicts, decks and options of every game and variant.

Mutation strategies (hypothesis, driven through ``draw``) start from valid data -- state dicts
of random positions (random play from random seeds, finished games included, sometimes an
observer's view) and each game's full default options with its deck spelled out as data -- and
damage them: wrong types, missing and extra keys, out-of-range and huge integers, floats,
NaN, inf, bools for ints, negative counts, duplicated, moved or missing cards, wrong lengths,
other phases and seats, all of it also deep inside nested lists.

The pass functions state the contract:

* a state dict is either rejected with a *precise* :class:`StateDictError` (not one of the
  loader's safety-net wrappers around a stray ``TypeError``/``KeyError``...) and the env
  keeps its old state (``kit.snapshot``), or accepted, and then ``check_state`` holds, the
  dict round-trips, and random play to the end runs (masks non-empty while running,
  observations inside the observation space for every seat, bounded step count);
* a deck / option set is either rejected with :class:`OptionError` at env creation, or
  accepted, and then whole random games run with ``check_state`` holding along the way.

``transplant_sweep`` is the systematic complement of the random mutations: each top-level
field of a position replaced by the same field of another position (of the same phase or
not), one at a time -- every value valid, the whole inconsistent in exactly one place.

``python tests/fuzz.py --examples N`` prints the accepted / rejected counts per game and
variant; ``--boundscheck`` (run under ``NUMBA_BOUNDSCHECK=1`` with a fresh ``NUMBA_CACHE_DIR``,
see ``tests/test_boundscheck.py``) first proves that out-of-bounds indexing raises in this very
process, then runs random play, the batched engine and the fuzz passes.
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import os
import random
import sys
import time
import traceback
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from hypothesis import HealthCheck, Phase, given, note, settings
from hypothesis import strategies as st

import card_envs
from card_envs import OptionError, StateDictError
from card_envs.core import kernels as K
from card_envs.testing import Case, play_steps, snapshot
from test_kit import CASES

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


LAST_LOG = ""  # what the last example did (for collected failures)


def _log(text: str) -> None:
    global LAST_LOG
    LAST_LOG = text
    note(text)


# --- the contract ----------------------------------------------------------------------------
def check_precise(e: StateDictError) -> None:
    """A rejection must name the problem: not a safety-net wrapper around a stray
    TypeError / KeyError / IndexError / OverflowError... (an OptionError of the dict's
    options is precise)."""
    cause = e.__cause__
    if cause is not None and not isinstance(cause, OptionError):
        raise AssertionError(f"imprecise StateDictError (the loader's safety net caught a "
                             f"{type(cause).__name__}): {e}") from e


def play_checked(env: Any, rnd: random.Random, max_steps: int, require_end: bool = True,
                 stride: int = 25, dense: int = 30) -> int:
    """Random play from ``env``'s position with the invariants checked: ``check_state``
    (every step for the first ``dense`` steps, then every ``stride``-th, and at the end),
    every seat's observation inside its space, a non-empty mask for the seat to act (equal to
    ``legal_actions``), zero masks for the others. Returns the steps played."""
    game = env.game
    space = env.observation_space(env.possible_agents[0])
    steps = 0
    while True:
        state = env.state_array
        if steps < dense or steps % stride == 0 or state[K.DONE]:
            game.check_state(state)
        for agent in env.possible_agents:
            obs = env.observe(agent)
            assert space.contains(obs), f"{agent}'s observation outside its space " \
                f"after {steps} steps: {_outside(space, obs['observation'])}"
            if agent != env.agent_selection or state[K.DONE]:
                assert not obs["action_mask"].any(), f"{agent} has legal actions off turn"
        if state[K.DONE]:
            break
        if steps >= max_steps:
            assert not require_end, f"game not over after {max_steps} steps"
            return steps
        mask = env.observe(env.agent_selection)["action_mask"]
        legal = np.flatnonzero(mask).tolist()
        assert legal, f"empty action mask while the game runs (after {steps} steps, phase " \
            f"{game.phase_name(state)!r})"
        assert legal == game.legal_actions(state)
        env.step(rnd.choice(legal))
        steps += 1
    game.outcome(env.state_array)
    assert all(env.terminations.values()) or all(env.truncations.values())
    return steps


def _outside(space: Any, obs: np.ndarray) -> str:
    box = space["observation"]
    bad = np.flatnonzero((obs < box.low) | (obs > box.high))[:5].tolist()
    return f"entries {bad}: {obs[bad].tolist()} not in {box.low[bad].tolist()}.." \
           f"{box.high[bad].tolist()}"


def round_trip(env: Any) -> None:
    """The env's state dict survives JSON and loading into a clone, unchanged."""
    d = env.state_dict()
    twin = env.clone()
    twin.load_state_dict(json.loads(json.dumps(d)))
    assert twin.state_dict() == d, "state dict changed by a JSON round trip"


def try_load(env: Any, d: Any, rnd: random.Random, max_steps: int) -> str:
    """Load ``d`` into ``env``; ``"rejected"`` (precise StateDictError, env unchanged) or
    ``"accepted"`` (consistent, round-trips, plays to the end)."""
    before, given_dict = snapshot(env), repr(d)
    try:
        env.load_state_dict(d)
    except StateDictError as e:
        assert snapshot(env) == before, "a rejected state dict changed the env"
        check_precise(e)
        return "rejected"
    finally:
        assert repr(d) == given_dict, "load_state_dict changed the dict it was given"
    env.game.check_state(env.state_array)
    round_trip(env)
    play_checked(env, rnd, max_steps)
    round_trip(env)
    return "accepted"


# --- state dicts ------------------------------------------------------------------------------
_ENVS: dict[tuple[str, str], Any] = {}


def _env(case: Case, role: str) -> Any:
    """One cached raw env per case and role (built once: configuring a game costs)."""
    key = (case.id, role)
    if key not in _ENVS:
        _ENVS[key] = case.raw()
    return _ENVS[key]


def header_values(game: Any) -> dict[str, list]:
    """Plausible (right type, maybe wrong) values of the shared header keys."""
    n = game.num_players
    return {
        "phase": list(game.phases),
        "current_player": [None, *range(-1, n + 1)],
        "truncated": [True, False],
        "steps": [0, 1, 2**30, 2**31 - 1, 2**31, -1],
        "rng": [[0, 0], [-1, -1], [2**31 - 1, -2**31], [2**31, 0], [0, 2**32], [1],
                [1, 2, 3], [0.0, 0], [True, 0]],
    }


STEPS_BEFORE = st.one_of(st.integers(0, 12), st.integers(0, 300), st.integers(0, 3000),
                         st.just(10**7))
MAX_STEPS = 60_000  # a game from any accepted position ends within this many random steps


def state_dict_example(case: Case, draw: Draw) -> str:
    """One fuzz example: a random position's state dict, mutated, loaded into another env."""
    src, dst = _env(case, "src"), _env(case, "dst")
    seed = draw(st.integers(0, 2**20))
    src.reset(seed=seed)
    before = play_steps(src, random.Random(seed), draw(STEPS_BEFORE))
    observer = None
    if draw(st.integers(0, 9)) == 0:
        observer = draw(st.integers(0, src.game.num_players - 1))
    base = json.loads(json.dumps(src.state_dict(observer)))
    same_phase = draw(st.booleans())  # a donor in the same phase: deeper inconsistencies
    for _ in range(12 if same_phase else 1):
        seed2 = draw(st.integers(0, 2**20))
        src.reset(seed=seed2)
        before2 = play_steps(src, random.Random(seed2), draw(STEPS_BEFORE))
        if src.state_dict()["phase"] == base["phase"]:
            break
    values = {**header_values(src.game), "__donor__": [src.state_dict()]}
    bad, log = mutate(draw, base, values)
    _log(f"seed {seed}, {before} steps, observer {observer}, donor seed {seed2} after "
         f"{before2} steps, mutations: {log}")
    dst.reset(seed=seed + 1)
    play_steps(dst, random.Random(seed + 1), draw(st.integers(0, 10)))
    return try_load(dst, bad, random.Random(seed), MAX_STEPS)


def positions_by_phase(case: Case, games: int, seed: int, per_game: int = 200
                       ) -> dict[str, list[dict[str, Any]]]:
    """State dicts of the positions of ``games`` random games (at most ``per_game`` of each,
    evenly spread), grouped by phase."""
    env = _env(case, "src")
    out: dict[str, list[dict[str, Any]]] = {}
    for g in range(games):
        env.reset(seed=seed + g)
        rnd = random.Random(seed + g)
        game = [json.loads(json.dumps(env.state_dict()))]
        while not env.state_array[K.DONE]:
            play_steps(env, rnd, 1)
            game.append(json.loads(json.dumps(env.state_dict())))
        for d in game[::max(1, len(game) // per_game)]:
            out.setdefault(d["phase"], []).append(d)
    return out


def transplant_sweep(case: Case, pairs: int, seed: int = 0, games: int = 3,
                     counts: Counter | None = None, failures: list[str] | None = None) -> None:
    """Every top-level key, one at a time, taken from another position of the same phase
    (``pairs`` pairs per phase) or of any phase (as many again): each value valid, the whole
    inconsistent in one field. Each dict must be rejected or accepted as ``try_load`` says."""
    by_phase = positions_by_phase(case, games, seed)
    every = [d for ds in by_phase.values() for d in ds]
    rnd = random.Random(seed)
    dst = _env(case, "dst")
    for phase in sorted(by_phase):
        for i in range(2 * pairs):
            a = rnd.choice(by_phase[phase])
            b = rnd.choice(by_phase[phase] if i < pairs else every)
            for k in sorted(a):
                if k in ("game", "version", "options") or a[k] == b[k]:
                    continue
                bad = {**a, k: copy.deepcopy(b[k])}
                s = rnd.randrange(2**20)
                dst.reset(seed=s)
                try:
                    outcome = try_load(dst, bad, random.Random(s), MAX_STEPS)
                except Exception as e:
                    if failures is None:
                        raise AssertionError(f"{case.id}: phase {phase!r} dict with {k!r} of "
                                             f"another position: {type(e).__name__}: {e}") from e
                    outcome = "failed"
                    failures.append(f"{case.id} transplant: {type(e).__name__}: {e}\n    "
                                    f"{phase} <- {k}: {json.dumps(bad)[:3000]}")
                if counts is not None:
                    counts[outcome] += 1


# --- decks and options -------------------------------------------------------------------------
def default_deck_data(env_id: str) -> Any:
    """The game's default deck as plain data (what a user would pass as ``deck``)."""
    if env_id == "op_glad_ijs_v0":
        from card_envs.op_glad_ijs.deck import default_deck

        return [{"code": c, "count": n, "set": s} for c, n, s in default_deck()]
    if env_id == "flipology_v0":
        from card_envs.flipology.deck import default_deck as flip_deck

        return copy.deepcopy(flip_deck())
    if env_id == "if_it_fits_v0":
        from card_envs.if_it_fits.deck import load_default

        return copy.deepcopy(load_default())
    return None


def random_deck(draw: Draw, env_id: str) -> Any:
    """A deck built from scratch (not a mutation of the default): few or many types, extreme
    counts, points, toys and shapes -- valid as a rule, sometimes just past a limit."""
    ints = st.integers
    if env_id == "op_glad_ijs_v0":
        from card_envs.op_glad_ijs.deck import ANIMALS, HABITATS

        codes = [(f"{a}/{h}", "base") for a in ANIMALS for h in HABITATS] + \
            [(f"animals:{a}+{b}", "two_animals") for i, a in enumerate(ANIMALS)
             for b in ANIMALS[i + 1:]] + \
            [(f"habitats:{a}+{b}", "two_habitats") for i, a in enumerate(HABITATS)
             for b in HABITATS[i + 1:]]
        chosen = draw(st.lists(st.sampled_from(codes), min_size=1, max_size=50, unique=True))
        return [{"code": c, "count": draw(ints(1, 9)), "set": kset} for c, kset in chosen]
    if env_id == "flipology_v0":
        from card_envs.flipology.layout import KIND_NAMES

        groups = draw(st.lists(st.sampled_from(KIND_NAMES), min_size=1, max_size=30))
        return {"cards": [{"kind": k, "points": [0 if k == "null" else draw(ints(0, 31))
                                                 for _ in range(draw(ints(1, 12)))]}
                          for k in groups]}
    if env_id == "if_it_fits_v0":
        sides = st.sampled_from(["", "N", "E", "NS", "EW", "NE", "ESW", "NESW", "SW", "W"])
        toys = st.dictionaries(st.sampled_from(["ball", "mouse", "yarn"]), ints(0, 9))

        def card(name: str) -> dict[str, Any]:
            return {"name": name, "open": draw(sides), "toys": draw(toys),
                    "sprayer": draw(st.sampled_from([0, 0, 1, 9]))}

        return {"box_cards": [card(f"b{i}") for i in range(draw(ints(8, 112)))],
                "start_cards": [card(f"s{i}") for i in range(5)],
                "special_toy_cards": [{"name": f"t{i}", "toys": draw(toys)}
                                      for i in range(draw(ints(0, 11)))]}
    return None


def full_options(case: Case) -> dict[str, Any]:
    """The case's options with every default spelled out and the deck as data."""
    game_class = card_envs.env_class(case.env_id).game_class
    opts = {**{k: copy.deepcopy(s.default) for k, s in game_class.option_specs().items()},
            **copy.deepcopy(case.options)}
    if "deck" in opts and opts["deck"] is None:
        opts["deck"] = default_deck_data(case.env_id)
    if isinstance(opts.get("table"), tuple):
        opts["table"] = list(opts["table"])
    if case.env_id == "isflak_v0" and opts["penguins_per_player"] is None:
        from card_envs.isflak.game import PENGUINS_TABLE

        opts["penguins_per_player"] = PENGUINS_TABLE[opts["num_players"]]
    return opts


def option_values(case: Case) -> dict[str, list]:
    """Plausible values per option (right type, maybe out of range)."""
    g = card_envs.env_class(case.env_id).game_class
    bools = [True, False, 0, 1, None]
    out: dict[str, list] = {
        "num_players": list(range(g.min_players - 1, g.max_players + 2)),
        "start_player": ["random", -1, 0, 1, g.max_players, "first"],
        "reward_mode": [*g.reward_modes, "score"],
    }
    extra = {
        "isflak_v0": {"penguins_per_player": [None, 0, 1, 2, 3, 4, 5, 8, 9, 16, 17],
                      "card_points": [[0, 0, 0], [20, 20, 20], [21, 0, 0], [-1, 1, 1],
                                      {"ace": 1, "face": 1}, [1, 2]]},
        "op_glad_ijs_v0": {"max_turned": [0, 1, 2, 5, 10**6, 10**6 + 1, 2**31],
                           "advanced": bools, "two_animals": bools, "two_habitats": bools,
                           "deck": [None, [], "deck.json"]},
        "flipology_v0": {"variant": ["nature", "great_tree", "tree"], "moon": bools,
                         "wolves": bools, "series": bools, "max_games": [0, 1, 2, 100, 101],
                         "deck": [None, {"cards": []}]},
        "if_it_fits_v0": {"table": [[3, 5], [21, 21], [2, 5], [3, 4], [22, 5], (4, 6),
                                    [3, 5, 1]], "advanced": bools,
                          "deck": [None, "no/such/deck.json", {}]},
    }
    out.update(extra.get(case.env_id, {}))
    return out


OPTION_GAMES = 2  # whole random games played with an accepted deck / option set
OPTION_MAX_STEPS = 4000  # per game (a max_turned of 10**6 would run for millions of steps)


def options_example(case: Case, draw: Draw, games: int = OPTION_GAMES) -> str:
    """One fuzz example: the case's full options (deck as data), mutated; the env is either
    refused with OptionError or plays ``games`` whole random games with the checks on."""
    base = full_options(case)
    if "deck" in base and draw(st.booleans()):
        base["deck"] = random_deck(draw, case.env_id)
        if draw(st.booleans()):  # the generated deck as it is
            base = {k: v for k, v in base.items() if k != "deck"} | {"deck": base["deck"]}
            bad, log = base, ["random deck"]
        else:
            bad, log = mutate(draw, base, option_values(case))
    else:
        bad, log = mutate(draw, base, option_values(case))
    bad = {k: v for k, v in bad.items() if isinstance(k, str)}  # **kwargs need str keys
    _log(f"option mutations: {log}")
    try:
        env = card_envs.make_raw(case.env_id, **bad)
    except OptionError:
        return "rejected"
    seed = draw(st.integers(0, 2**20))
    for g in range(games):
        env.reset(seed=seed + g)
        play_checked(env, random.Random(seed + g), OPTION_MAX_STEPS, require_end=False)
    round_trip(env)
    return "accepted"


# --- hypothesis drivers --------------------------------------------------------------------------
KINDS: dict[str, Callable[[Case, Draw], str]] = {"state": state_dict_example,
                                                  "options": options_example}


def fuzz_test(case: Case, kind: str, examples: int, counts: Counter | None = None,
              cli: bool = False, failures: list[str] | None = None) -> Callable[[], None]:
    """A hypothesis test running ``examples`` examples of ``kind`` ("state" / "options") on
    ``case``; outcomes are tallied in ``counts``. ``cli``: no example database, derandomized
    (reproducible counts). ``failures``: collect failing examples there (and count them as
    "failed") instead of stopping at the first."""
    example = KINDS[kind]
    # no "explain" phase: its tracer makes these examples (whole games) crawl; the CLI reports
    # a failure as found, without shrinking it
    phases = [Phase.explicit, Phase.reuse, Phase.generate] + ([] if cli else [Phase.shrink])
    extra: dict[str, Any] = {"database": None, "derandomize": True} if cli else {}

    @settings(max_examples=examples, deadline=None, suppress_health_check=list(HealthCheck),
              phases=phases, **extra)
    @given(data=st.data())
    def run(data: st.DataObject) -> None:
        if failures is None:
            outcome = example(case, data.draw)
        else:
            try:
                outcome = example(case, data.draw)
            except Exception as e:
                outcome = "failed"
                failures.append(f"{case.id} {kind}: {type(e).__name__}: {e}\n    {LAST_LOG}")
        if counts is not None:
            counts[outcome] += 1

    return run


def random_play_pass(case: Case, games: int, seed: int = 0) -> None:
    """Whole random games from fresh deals with every check of ``play_checked`` dense."""
    env = case.raw()
    for g in range(games):
        env.reset(seed=seed + g)
        play_checked(env, random.Random(seed + g), MAX_STEPS, stride=1)


def vector_pass(case: Case, num_envs: int, steps: int) -> None:
    """The batched engine: ``steps`` steps of random legal actions (auto-resets included).
    Fewer than ``vector.SERIAL_BELOW`` games run the serial driver: the one numba can bounds
    check (it neither checks nor raises inside ``prange`` loops)."""
    vec = card_envs.vector.make(case.env_id, num_envs=num_envs, seed=3, **case.options)
    for _ in range(steps):
        vec.step(vec.sample_actions())
        assert (vec.action_masks.sum(axis=1) >= 1).all()


# --- bounds checking ------------------------------------------------------------------------------
def prove_boundscheck() -> list[str]:
    """Show that this process runs numba with bounds checks: a kernel defined here and a
    card_envs kernel from the on-disk cache must both raise IndexError out of bounds."""
    import numba
    from numba import njit

    lines = [f"NUMBA_BOUNDSCHECK={numba.config.BOUNDSCHECK} "
             f"NUMBA_CACHE_DIR={numba.config.CACHE_DIR}"]
    if not numba.config.BOUNDSCHECK:
        raise SystemExit("numba runs without bounds checks (set NUMBA_BOUNDSCHECK=1)")
    if numba.config.CACHE_DIR != os.environ.get("NUMBA_CACHE_DIR"):
        raise SystemExit("the numba cache is not the NUMBA_CACHE_DIR given")

    @njit
    def out_of_bounds(a: np.ndarray, i: int) -> int:
        return a[i]

    for name, call in (("local kernel", lambda: out_of_bounds(np.zeros(3, np.int32), 3)),
                       ("card_envs kernel", lambda: K.rng_next(np.zeros(1, np.int32)))):
        try:
            call()
        except IndexError as e:
            lines.append(f"{name}: IndexError ({e}): bounds checks are on")
        else:
            raise SystemExit(f"{name} read out of bounds without IndexError: unchecked code")
    return lines


# --- command line ---------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--examples", type=int, default=100, help="state-dict examples per case")
    ap.add_argument("--option-examples", type=int, default=None,
                    help="deck/option examples per case (default: --examples)")
    ap.add_argument("--pairs", type=int, default=0,
                    help="transplant sweep: position pairs per phase and case (0: skip)")
    ap.add_argument("--cases", default="", help="only cases whose id contains this")
    ap.add_argument("--boundscheck", action="store_true",
                    help="prove bounds checks are on, then also random play and the batched "
                         "engine")
    ap.add_argument("--games", type=int, default=2, help="random-play games per case")
    ap.add_argument("--vector-envs", type=int, default=4)
    ap.add_argument("--vector-steps", type=int, default=300)
    args = ap.parse_args(argv)
    n_opt = args.examples if args.option_examples is None else args.option_examples
    cases = [c for c in CASES if args.cases in c.id]
    failures = 0
    if args.boundscheck:
        for line in prove_boundscheck():
            print(line, flush=True)
    width = max(len(c.id) for c in cases)
    kinds = ("state", "options", "transplant")
    print(f"{'case':{width}}  " + "  ".join(f"{k + ' acc':>14} {'rej':>5}" for k in kinds) +
          "   time")
    totals: dict[str, Counter] = {k: Counter() for k in kinds}
    for case in cases:
        t0 = time.time()
        counts: dict[str, Counter] = {k: Counter() for k in kinds}
        try:
            if args.boundscheck:
                random_play_pass(case, args.games)
                vector_pass(case, args.vector_envs, args.vector_steps)
            for kind, n in (("state", args.examples), ("options", n_opt)):
                if n:
                    fuzz_test(case, kind, n, counts[kind], cli=True)()
            if args.pairs:
                transplant_sweep(case, args.pairs, seed=0, counts=counts["transplant"])
        except Exception:  # report every case, then fail
            failures += 1
            print(f"FAILED {case.id}:\n{traceback.format_exc()}", flush=True)
        for k in kinds:
            totals[k].update(counts[k])
        print(f"{case.id:{width}}  " + "  ".join(
            f"{counts[k]['accepted']:14} {counts[k]['rejected']:5}" for k in kinds) +
            f"  {time.time() - t0:5.1f}s", flush=True)
    print(f"{'total':{width}}  " + "  ".join(
        f"{totals[k]['accepted']:14} {totals[k]['rejected']:5}" for k in kinds))
    if failures:
        print(f"{failures} case(s) FAILED")
        return 1
    print("all passes OK" + (" (bounds-checked)" if args.boundscheck else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
