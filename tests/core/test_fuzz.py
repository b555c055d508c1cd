"""The doors for user data, fuzzed (passes: ``tests/support/fuzz.py``, mutation strategies:
``tests/support/fuzz_mutations.py``).

For every game and variant of the kit: mutated state dicts are rejected with a precise
``StateDictError`` (env unchanged) or accepted and playable to the end; every top-level field
transplanted from another position is too; mutated decks and options are rejected with
``OptionError`` or play whole games with ``check_state`` holding; random agent specs are
refused with ``OptionError`` or build an agent that plays a legal move; mutated results files
are refused with a precise ``StateDictError`` or rerun within the caller's folder. Then one
regression example per bug the fuzzing found. The ``stress`` twins run the fuzz passes at 10x
the example counts.
"""

from __future__ import annotations

import json
import random
from typing import Any

import numpy as np
import pytest

import card_envs
import fuzz
from card_envs import OptionError, StateDictError
from card_envs.core import kernels as K
from card_envs.testing import Case, play_steps, snapshot
from fuzz_inputs import default_deck_data, header_values
from fuzz_mutations import mutate
from if_it_fits_ref import fresh, position
from test_kit import CASES, FIRST, FIRST_IDS, IDS

cases = pytest.mark.parametrize("case", CASES, ids=IDS)
first_cases = pytest.mark.parametrize("case", list(FIRST.values()), ids=FIRST_IDS)

CI_STATE = 60  # mutated state dicts per case
CI_OPTIONS = 30  # mutated option sets (decks included) per case
CI_PAIRS = 2  # transplant pairs per phase and case
CI_SPECS = 30  # agent specs per case (the accepted ones play a move)
CI_RESULTS = 12  # mutated results files per game
STRESS = 10  # the stress twins: 10x


# --- the fuzz passes -----------------------------------------------------------------------
@cases
def test_fuzz_state_dicts(case: Case) -> None:
    fuzz.fuzz_test(case, "state", CI_STATE)()


@cases
def test_fuzz_decks_and_options(case: Case) -> None:
    fuzz.fuzz_test(case, "options", CI_OPTIONS)()


@cases
def test_fields_transplanted_from_other_positions(case: Case) -> None:
    fuzz.transplant_sweep(case, CI_PAIRS, seed=0)


@cases
def test_fuzz_agent_specs(case: Case) -> None:
    fuzz.fuzz_test(case, "spec", CI_SPECS)()


@first_cases
def test_fuzz_results_files(case: Case) -> None:
    fuzz.fuzz_test(case, "results", CI_RESULTS)()


@pytest.mark.stress
@cases
def test_fuzz_agent_specs_stress(case: Case) -> None:
    fuzz.fuzz_test(case, "spec", STRESS * CI_SPECS)()


@pytest.mark.stress
@cases
def test_fuzz_results_files_stress(case: Case) -> None:
    fuzz.fuzz_test(case, "results", STRESS * CI_RESULTS)()


@pytest.mark.stress
@cases
def test_fuzz_state_dicts_stress(case: Case) -> None:
    fuzz.fuzz_test(case, "state", STRESS * CI_STATE)()


@pytest.mark.stress
@cases
def test_fuzz_decks_and_options_stress(case: Case) -> None:
    fuzz.fuzz_test(case, "options", STRESS * CI_OPTIONS)()


@pytest.mark.stress
@cases
def test_fields_transplanted_stress(case: Case) -> None:
    fuzz.transplant_sweep(case, STRESS * CI_PAIRS, seed=1, games=6)


def test_mutations_change_the_dict_and_keep_the_base() -> None:
    """The mutation engine itself: the base is never touched, the result differs."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    env = CASES[0].raw()
    env.reset(seed=1)
    base = json.loads(json.dumps(env.state_dict()))
    frozen = json.dumps(base)

    @settings(max_examples=60, deadline=None, database=None)
    @given(data=st.data())
    def run(data: st.DataObject) -> None:
        bad, log = mutate(data.draw, base, header_values(env.game))
        assert json.dumps(base) == frozen and len(log) >= 1

    run()


# --- regressions: the shared header ----------------------------------------------------------
def _at(env_id: str, seed: int = 3, k: int = 4, **options: Any) -> Any:
    env = card_envs.make_raw(env_id, **options)
    env.reset(seed=seed)
    play_steps(env, random.Random(seed), k)
    return env


def _rejected(env: Any, d: Any, match: str | None) -> StateDictError:
    """``d`` is refused with a precise error matching ``match``; ``env`` is unchanged."""
    before = snapshot(env)
    with pytest.raises(StateDictError, match=match) as e:
        env.load_state_dict(d)
    assert snapshot(env) == before
    fuzz.check_precise(e.value)
    return e.value


@first_cases
@pytest.mark.parametrize("key,value", [
    ("rng", [2**31, 0]), ("rng", [0, 2**63]), ("rng", [-2**63, 0]), ("rng", [-2**31 - 1, 0]),
    ("steps", 2**31), ("steps", 2**63), ("steps", -2**63)])
def test_huge_header_ints_rejected_not_overflow(case: Case, key: str, value: Any) -> None:
    """Was: OverflowError from assigning into the int32 state (rng, steps)."""
    env = _at(case.env_id, **case.options)
    _rejected(env, {**env.state_dict(), key: value}, f"{key}.*must be an int")


@first_cases
@pytest.mark.parametrize("key,value", [
    ("steps", "5"), ("steps", 5.7), ("steps", True), ("rng", ["1", 2]), ("rng", [1.0, 2]),
    ("rng", [True, 2]), ("rng", 7), ("current_player", "0"), ("current_player", 0.0),
    ("current_player", False), ("current_player", 99), ("current_player", -1),
    ("phase", ["x"]), ("phase", np.array(["x", "y"])), ("version", 0), ("game", None)])
def test_header_types_are_strict(case: Case, key: str, value: Any) -> None:
    """Was: int() accepted "5", 5.7 and True for steps / rng / current_player; a numpy array
    phase raised an imprecise 'truth value' error."""
    env = _at(case.env_id, **case.options)
    _rejected(env, {**env.state_dict(), key: value}, None)


@first_cases
def test_unknown_and_missing_keys_are_named(case: Case) -> None:
    env = _at(case.env_id, **case.options)
    d = env.state_dict()
    e = _rejected(env, {**d, "current_playr": 0}, "unknown key")
    assert "current_playr" in str(e)
    field = next(k for k in d if k not in header_values(env.game) and
                 k not in ("game", "version", "options"))
    e = _rejected(env, {k: v for k, v in d.items() if k != field}, "missing key")
    assert repr(field) in str(e)
    env.load_state_dict({k: v for k, v in d.items() if k != "truncated"})  # optional


@first_cases
@pytest.mark.parametrize("options", [["num_players"], "num_players", None, 3])
def test_options_must_be_a_mapping(case: Case, options: Any) -> None:
    """Was: AttributeError ('list' object has no attribute 'get') leaking out."""
    env = _at(case.env_id, **case.options)
    _rejected(env, {**env.state_dict(), "options": options}, "options")


def test_steps_wrap_like_the_int32_counter() -> None:
    """A dict at the counter's limit loads, plays, and its dumps load again."""
    env = _at("slide_v0")
    env.load_state_dict({**env.state_dict(), "steps": 2**31 - 1})
    play_steps(env, random.Random(0), 2)
    d = env.state_dict()
    assert d["steps"] == -2**31 + 1
    env.load_state_dict(d)


# --- regressions: options ---------------------------------------------------------------------
@first_cases
@pytest.mark.parametrize("name", ["start_player", "reward_mode", "num_players"])
def test_numpy_array_options_rejected(case: Case, name: str) -> None:
    """Was: ValueError ('truth value of an array is ambiguous') instead of OptionError."""
    with pytest.raises(OptionError, match=name):
        card_envs.make_raw(case.env_id, **{**case.options, name: np.zeros(2, np.int32)})


@pytest.mark.parametrize("n", [2, 4])
def test_isflak_penguins_numpy_overflow(n: int) -> None:
    """Was: num_players * np.int64(2**62) wrapped around, passed the check, and the env then
    tried to build tables for 2**62 penguins (OverflowError / out of memory)."""
    for v in (np.int64(2**62), np.int64(2**63 - 1), np.uint64(2**64 - 1)):
        with pytest.raises(OptionError, match="penguins_per_player"):
            card_envs.make_raw("isflak_v0", num_players=n, penguins_per_player=v)
    assert card_envs.make_raw("isflak_v0", num_players=n,
                              penguins_per_player=np.int64(2)).game.peng == 2


def test_deck_and_variant_values_of_the_wrong_type() -> None:
    """Was: ValueError ('truth value of an array is ambiguous') leaking out of the Flipology
    deck kind and variant checks; Op Glad's deck set check reported numpy's message."""
    arr = np.zeros(2, np.int32)
    flip = default_deck_data("flipology_v0")
    flip["cards"][0]["kind"] = arr
    with pytest.raises(OptionError, match="card kind"):
        card_envs.make_raw("flipology_v0", deck=flip)
    with pytest.raises(OptionError, match="variant"):
        card_envs.make_raw("flipology_v0", variant=arr)
    glad = default_deck_data("op_glad_ijs_v0")
    glad[0]["set"] = arr
    with pytest.raises(OptionError, match="set must be one of"):
        card_envs.make_raw("op_glad_ijs_v0", deck=glad)


# --- regressions: game fields -------------------------------------------------------------------
def test_slide_fields_are_type_checked() -> None:
    """Was: True accepted as the middle value 1; ragged grids hit numpy's ValueError."""
    env = _at("slide_v0", k=0)
    d = env.state_dict()
    _rejected(env, {**d, "middle": [True]}, "middle value")
    grids = json.loads(json.dumps(d["grids"]))
    grids[0][1] = [1, 2]
    _rejected(env, {**d, "grids": grids}, r"grids\[0\]\[1\]")
    _rejected(env, {**d, "reveals": 3}, "reveals")


def _phase_position(env: Any, phase: str, seed: int = 0) -> dict[str, Any]:
    """The state dict of the first position in ``phase`` of a seeded random game."""
    for s in range(seed, seed + 200):
        env.reset(seed=s)
        rnd = random.Random(s)
        while not env.state_array[K.DONE]:
            if env.game.phase_name(env.state_array) == phase:
                return json.loads(json.dumps(env.state_dict()))
            play_steps(env, rnd, 1)
    raise AssertionError(f"no {phase!r} position found")


def test_flipology_regrow_only_in_the_great_tree() -> None:
    """Was: a Nature setup loaded as phase 'regrow' was accepted and its Regrowth drew from an
    empty deck (card id out of range in the next position)."""
    env = card_envs.make_raw("flipology_v0")
    d = _phase_position(env, "setup")
    _rejected(env, {**d, "phase": "regrow"}, "regrow only in the Great Tree")
    tree = card_envs.make_raw("flipology_v0", variant="great_tree", num_players=3)
    d = _phase_position(tree, "regrow")
    short = {**d, "deck": d["deck"][:3], "discard": sorted(d["discard"] + d["deck"][3:])}
    _rejected(tree, short, "a hand left in the deck")
    d = _phase_position(tree, "turn")
    short = {**d, "deck": d["deck"][:20], "discard": sorted(d["discard"] + d["deck"][20:])}
    _rejected(tree, short, "cards left in the deck for the deals")


def test_flipology_round_turn_and_return_time_checked() -> None:
    """Was: a round of 3 in a setup position, and a Regrowth return time after the draws so
    far, were accepted; play then broke check_state ('round', 'returned cards')."""
    env = card_envs.make_raw("flipology_v0", series=True, moon=True)
    d = _phase_position(env, "setup")
    _rejected(env, {**d, "round": 3}, "round")
    d = _phase_position(env, "turn")
    _rejected(env, {**d, "turn": d["turn"] + 2}, "turn within the round")  # same seat
    tree = card_envs.make_raw("flipology_v0", variant="great_tree", num_players=3)
    d = _phase_position(tree, "turn")
    assert d["regrow_used"] != [False] * 3 or d["return_time"] == [0] * 3
    _rejected(tree, {**d, "return_time": [d["draws"] + 1] * 3}, "return_time")


def test_flipology_effect_frame_checked() -> None:
    """Was: an effect whose source card is face down (or of another kind, or a Monkey at a
    step without its choices) was accepted; a Mole then moved a hidden card face up."""
    env = card_envs.make_raw("flipology_v0")
    d = _phase_position(env, "effect")
    frame = d["effect_stack"][0]
    s, lv, c = frame["source"]
    faces = json.loads(json.dumps(d["face_up"]))
    faces[s][lv][c] = False
    if frame["kind"] != "rain":
        _rejected(env, {**d, "face_up": faces}, "source card is face up")
    for bad in ({**frame, "kind": "hermit_crab"}, {**frame, "step": 5},
                {**frame, "a": [0, 0, 0], "b": [0, 0, 1]}, {**frame, "copy": True},
                {k: v for k, v in frame.items() if k != "copy"}):
        _rejected(env, {**d, "effect_stack": [bad]}, "effect|Monkey|Parrot|positions")


def test_if_it_fits_records_are_checked() -> None:
    """Was: a table cell 7 / a card without 'rot' / a 3-entry join raised TypeError, KeyError
    and ValueError caught by the loader's safety net (imprecise messages)."""
    env = _at("if_it_fits_v0", k=30)
    d = env.state_dict()
    cell = next((r, c) for r, row in enumerate(d["table"]) for c, x in enumerate(row) if x)
    for x in (7, "card", {"card": d["table"][cell[0]][cell[1]].get("card", "X-1")},
              {"sleeping_cat": 0, "joined": [1, 2, 3]}, {"cat": 0}):
        table = json.loads(json.dumps(d["table"]))
        table[cell[0]][cell[1]] = x
        _rejected(env, {**d, "table": table}, "table cell|joined")
    _rejected(env, {**d, "start_row": [1, 2, 3]}, "start_row")
    _rejected(env, {**d, "selected_cell": 4}, "cell")
    _rejected(env, {**d, "hands": [[np.array(["X-1"])], []]}, "named by a string")


def test_finished_games_that_never_truncate_refuse_truncated() -> None:
    """Was: a finished If It Fits game loaded with truncated=true was accepted (the env then
    reported a truncation the rules never make)."""
    for env_id in ("slide_v0", "isflak_v0", "flipology_v0", "if_it_fits_v0"):
        env = _at(env_id, k=10**6)
        d = env.state_dict()
        assert d["current_player"] is None and not d["truncated"]
        _rejected(env, {**d, "truncated": True}, None)


def test_if_it_fits_selected_start_is_a_start_card() -> None:
    """Was: any card name (a box card, the Princess) was accepted as the selected start card;
    the start card then laid was that card (a box card twice, the Princess as a card)."""
    env = _at("if_it_fits_v0", seed=0, k=1)
    d = env.state_dict()
    assert d["phase"] == "start_rotation"
    for name in (d["draw_pile"][0], "princess", "balls"):
        _rejected(env, {**d, "selected_start": name}, "selected_start")


def test_if_it_fits_turn_fields_checked() -> None:
    """Was accepted, then broke in play: a cat on a slot that is no cat slot (box counters
    diverged), a 'pass' with cards in hand, a waiting hand of three (its next draw wrote into
    the next seat's hand), 'rotation' with no cell chosen, 'cat' with no card played, 'play'
    with nothing playable (an empty action mask)."""
    env = fresh()
    position(env, {(4, 5): ("I1-1", 0), (5, 5): ("I1-2", 0)}, slots={(4, 5): 0})
    with pytest.raises(StateDictError, match="cat slots"):
        position(env, {(4, 5): ("I1-1", 0), (5, 5): ("I1-2", 0)}, slots={(0, 0): 0})
    with pytest.raises(StateDictError, match="open side of the card it joins"):
        position(env, {(5, 5): ("U1-1", 0), (5, 6): ("cat", 0, (5, 5))})  # U1 opens north
    position(env, {(5, 5): ("U1-1", 0), (4, 5): ("cat", 0, (5, 5))})
    for kw, match in (({"phase": "pass", "hands": [["X-1"], []]}, "pass: an empty hand"),
                      ({"hands": [["X-1"], ["X-3", "X-4", "X-5"]]}, "waiting hand"),
                      ({"phase": "rotation", "hands": [["X-1"], []], "selected_hand": 0},
                       "cell is chosen"),
                      ({"phase": "cat"}, "a card was played")):
        with pytest.raises(StateDictError, match=match):
            position(env, {(4, 5): ("X-2", 0)}, **kw)
    full = {(r, c): (f"X-{1 + r * 5 + c}" if r * 5 + c < 8 else f"T1-{r * 5 + c - 7}", 0)
            for r in range(3) for c in range(5)}
    small = fresh(table=(3, 5))
    with pytest.raises(StateDictError, match="no legal action"):
        position(small, full, hands=[["princess", "U1-1"], ["U1-2"]], phase="play")
    position(small, full, hands=[["princess", "U1-1"], ["U1-2"]], phase="discard")
