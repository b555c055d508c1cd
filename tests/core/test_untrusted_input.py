"""Untrusted data at the doors: state dicts nested without end or of any size are refused
before anything reads them, error messages stay short whatever the input, and options from
an untrusted source name no file to read (``check_untrusted_options``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import card_envs
from card_envs import OptionError, StateDictError
from card_envs.core.checks import check_nesting, short_repr
from card_envs.core.game import STATE_MAX_DEPTH, STATE_MAX_ITEMS, check_untrusted_options
from card_envs.core.registry import ENV_IDS, env_class
from card_envs.if_it_fits.parts import deck as IIF_DECK
from card_envs.testing import snapshot


def nested(depth: int, leaf: Any = 0) -> Any:
    for _ in range(depth):
        leaf = [leaf]
    return leaf


def depth_and_items(value: Any) -> tuple[int, int]:
    """What :func:`check_nesting` bounds: the nesting depth and the number of values."""
    if not isinstance(value, (dict, list)):
        return 0, 1
    kids = [*value.keys(), *value.values()] if isinstance(value, dict) else value
    sub = [depth_and_items(k) for k in kids]
    return 1 + max((d for d, _ in sub), default=0), 1 + sum(n for _, n in sub)


# --- check_nesting and short_repr --------------------------------------------------------------
def test_check_nesting_bounds_depth_and_size_at_any_depth() -> None:
    check_nesting(nested(5), 5, 10, "x")
    with pytest.raises(StateDictError, match=r"^x nested deeper than 4 levels$"):
        check_nesting(nested(5), 4, 10, "x")
    with pytest.raises(OptionError, match="deeper than 50 levels"):  # far past the C stack
        check_nesting(nested(200_000), 50, 10**9, "options", OptionError)
    with pytest.raises(StateDictError, match=r"^d too large: more than 99 values$"):
        check_nesting({"a": list(range(97))}, 10, 99, "d")
    check_nesting({"a": list(range(96))}, 10, 99, "d")  # the dict, its key, the list, 96 ints
    with pytest.raises(StateDictError, match="deeper"):  # keys are walked too
        key: tuple = ()
        for _ in range(40):
            key = (key,)
        check_nesting({key: 1}, 10, 10**6, "d")
    loop: list = []
    loop.append(loop)
    with pytest.raises(StateDictError, match="deeper"):
        check_nesting(loop, 10, 10**6, "d")
    check_nesting("s" * 10**6, 1, 1, "a scalar")  # not a container: nothing to walk


def test_short_repr_is_short_and_safe() -> None:
    for small in (None, 3, -2.5, "a'b", [1, [2, "x"]], {"k": (1, 2)}, True):
        assert short_repr(small) == repr(small)
    deep = nested(100_000)
    for x in (deep, "y" * 10**6, list(range(10**6)), 10**5000, {i: i for i in range(1000)}):
        text = short_repr(x)
        assert len(text) <= 80
    assert short_repr(10**5000).startswith("<int of ")

    class Broken:
        def __repr__(self) -> str:
            raise RuntimeError("no")

    assert short_repr(Broken()).startswith("<Broken ")
    cut = short_repr("z" * 100, 20)
    assert len(cut) <= 20 and cut.startswith("'zz") and "..." in cut


# --- load_state_dict ------------------------------------------------------------------------
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_nested_or_huge_state_dicts_are_refused_first(env_id: str) -> None:
    env = card_envs.make_raw(env_id)
    env.reset(seed=3)
    d = env.state_dict()
    before = snapshot(env)
    field = next(k for k in d if k not in ("game", "version"))
    bad_dicts = [({**d, field: nested(3000)}, f"nested deeper than {STATE_MAX_DEPTH} levels"),
                 ({**d, "options": nested(3000)}, "nested deeper"),
                 ({**d, "rng": nested(3000)}, "nested deeper"),
                 ({**d, field: [0] * STATE_MAX_ITEMS}, f"more than {STATE_MAX_ITEMS} values"),
                 ({**d, "game": nested(3000)}, "nested deeper")]
    for bad, words in bad_dicts:
        with pytest.raises(StateDictError, match=words) as e:
            env.load_state_dict(bad)
        assert e.value.__cause__ is None and len(str(e.value)) < 200
        assert snapshot(env) == before
    # huge values in the fields read first give short messages
    for key, value in (("game", "g" * 10**6), ("version", 10**5000), ("phase", "p" * 10**6),
                       ("steps", 10**5000), ("rng", [0] * 90_000)):
        with pytest.raises(StateDictError) as e:
            env.load_state_dict({**d, key: value})
        assert len(str(e.value)) < 300, str(e.value)[:300]
    env.load_state_dict(d)  # the real one still loads


def test_real_state_dicts_are_far_inside_the_bounds() -> None:
    """The caps hold a wide margin over the largest real state dicts: random play of every
    game at the most players (and If It Fits with the largest table and a full custom deck
    in its options)."""
    box = [{"name": f"box-{i}", "open": "NESW", "toys": {"ball": 9, "mouse": 9, "yarn": 9},
            "sprayer": 9} for i in range(IIF_DECK.MAX_BOX)]
    toys = [{"name": f"toy-{i}", "toys": {"ball": 9, "mouse": 9, "yarn": 9}}
            for i in range(IIF_DECK.MAX_TOY)]
    deck = {**IIF_DECK.load_default(), "box_cards": box, "special_toy_cards": toys}
    configs: list[tuple[str, dict[str, Any]]] = [
        (e, {"num_players": env_class(e).game_class.max_players}) for e in ENV_IDS]
    configs.append(("if_it_fits_v0", {"num_players": 5, "table": (21, 21), "advanced": True,
                                      "deck": deck}))
    deepest = largest = 0
    for env_id, options in configs:
        env = card_envs.make_raw(env_id, **options)
        env.reset(seed=0)
        rng = np.random.default_rng(0)
        k = 0
        while True:
            if k % 10 == 0 or env._over:
                depth, items = depth_and_items(env.state_dict())
                deepest, largest = max(deepest, depth), max(largest, items)
            if env._over:
                break
            env.step(int(rng.choice(env.legal_actions())))
            k += 1
    assert 4 <= deepest and 4 * deepest <= STATE_MAX_DEPTH
    assert 1000 <= largest and 20 * largest <= STATE_MAX_ITEMS


# --- options from an untrusted source ---------------------------------------------------------
def test_check_untrusted_options(tmp_path: Path) -> None:
    deck_file = tmp_path / "deck.json"
    deck_file.write_text(json.dumps(IIF_DECK.load_default()))
    game_class = env_class("if_it_fits_v0").game_class
    assert game_class.option_specs()["deck"].reads_files
    assert not any(o.reads_files for e in ENV_IDS if e != "if_it_fits_v0"
                   for o in env_class(e).game_class.option_specs().values())
    for game in ("if_it_fits_v0", "if_it_fits", game_class):
        check_untrusted_options(game, {})
        check_untrusted_options(game, {"num_players": 3, "deck": IIF_DECK.load_default()})
        check_untrusted_options(game, {"deck": None, "num_players": "not checked here"})
        # a path is refused alike whether the file exists or not: nothing is read
        for path in (str(deck_file), deck_file, str(tmp_path / "missing.json"), b"/etc/passwd"):
            with pytest.raises(OptionError, match=r"^if_it_fits_v0: the deck option must be "
                                                  r"given as data here, not as a file path$"):
                check_untrusted_options(game, {"deck": path})
    bad: list[tuple[Any, str]] = [
        ([("num_players", 2)], "options must be a mapping of option names to values, got list"),
        ({1: 2}, "option names are strings, got 1"),
        ({"illegal_action": "lose"}, r"unknown option\(s\) \['illegal_action'\]; valid options"),
        ({f"o{i}": 0 for i in range(50)}, r"and 40 more"),
    ]
    for options, words in bad:
        with pytest.raises(OptionError, match=words):
            check_untrusted_options("slide_v0", options)
    with pytest.raises(OptionError, match="unknown game"):
        check_untrusted_options("chess", {})


def test_a_state_dict_cannot_make_the_loader_read_a_file(tmp_path: Path) -> None:
    env = card_envs.make_raw("if_it_fits_v0")
    env.reset(seed=1)
    d = env.state_dict()
    before = snapshot(env)
    deck_file = tmp_path / "deck.json"
    deck_file.write_text(json.dumps(IIF_DECK.load_default()))
    for path in (str(deck_file), str(tmp_path / "missing.json")):
        with pytest.raises(StateDictError, match="deck option must be given as data") as e:
            env.load_state_dict({**d, "options": {**d["options"], "deck": path}})
        assert isinstance(e.value.__cause__, OptionError)
        assert snapshot(env) == before


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_huge_option_values_give_short_messages(env_id: str) -> None:
    """Every option of every game refuses a huge value with a short message (the values may
    come from a state dict or a replay file)."""
    for name in env_class(env_id).game_class.option_specs():
        for value in ("x" * 10**6, 10**5000, [[0] * 10**5]):
            with pytest.raises(OptionError) as e:
                card_envs.make_raw(env_id, **{name: value})
            assert name in str(e.value) or "deck" in str(e.value)
            assert len(str(e.value)) < 400, (name, str(e.value)[:400])
