"""Determinization keeps what a seat knows: resampling for a seat in many random positions of
every game and variant (rare phases included) gives a consistent state (``check_state``) that
looks the same to that seat: observation, mask and ``state_dict(observer=seat)``.

Positions are stratified by phase, so that short phases a random game passes through once (a
Hermit crab's up/down choice in Flipology, an If It Fits toy placement) are checked as often as
the long ones. The Flipology Hermit-crab test pins the bug where a picked Sloth/Koala was public
in ``hermit_card`` but missing from the other seats' ``known`` lists, so resampling could move it
from the discard pile into the deck."""

from __future__ import annotations

import random
import zlib
from typing import Any

import numpy as np
import pytest

from card_envs import Engine
from card_envs.flipology import layout as FL
from card_envs.testing import Case
from determinize_kit import positions_by_phase
from test_kit import CASES, IDS

PER_PHASE = 6  # positions kept per phase and case
GAMES = 40  # random games played per case to find them
DRAWS = 2  # resamples per position and seat


def assert_resample_keeps_view(eng: Engine, st: np.ndarray, rng: np.random.Generator,
                               draws: int = DRAWS) -> bool:
    """Resample for every seat; assert consistency and an unchanged view. Returns whether any
    resample changed the full state."""
    g = eng.game
    cur = eng.current_player(st)
    changed = False
    for seat in range(eng.num_players):
        obs = eng.observe(st, seat)
        view = g.state_dict(st, observer=seat)
        mask = eng.legal_mask(st) if seat == cur else None
        for _ in range(draws):
            alt = eng.resample(st, seat, rng)
            try:
                g.check_state(alt)
            except Exception as e:  # pragma: no cover - the failure message is the point
                raise AssertionError(f"{g.env_id} phase {g.phase_name(st)!r}: resample for "
                                     f"seat {seat} broke check_state: {e}") from e
            assert np.array_equal(eng.observe(alt, seat), obs), \
                f"{g.env_id}: seat {seat}'s observation changed by its own resample"
            if mask is not None:
                assert np.array_equal(eng.legal_mask(alt), mask), \
                    f"{g.env_id}: seat {seat}'s legal actions changed by its own resample"
            assert g.state_dict(alt, observer=seat) == view, \
                f"{g.env_id}: seat {seat}'s state_dict view changed by its own resample"
            changed |= not np.array_equal(alt[8:], st[8:])
    return changed


_POSITIONS: dict[str, tuple[Engine, dict[str, list[np.ndarray]]]] = {}


def _positions(case: Case) -> tuple[Engine, dict[str, list[np.ndarray]]]:
    """The case's engine and its positions by phase (computed once per process)."""
    if case.id not in _POSITIONS:
        eng = Engine(case.env_id, **case.options)
        seed = zlib.crc32(case.id.encode())  # not hash(): salted per process
        _POSITIONS[case.id] = eng, positions_by_phase(eng, seed, GAMES, PER_PHASE)
    return _POSITIONS[case.id]


@pytest.mark.parametrize("env_id", sorted({c.env_id for c in CASES}))
def test_positions_cover_every_phase(env_id: str) -> None:
    """Over a game's variants, the positions checked below include every phase but the end."""
    found: set[str] = set()
    phases: tuple[str, ...] = ()
    for case in CASES:
        if case.env_id == env_id:
            eng, by_phase = _positions(case)
            found |= set(by_phase)
            phases = eng.game.phases
    assert found == set(phases) - {"end"}


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_resample_every_seat_every_phase(case: Case) -> None:
    eng, found = _positions(case)
    assert found, "no running position found"
    rng = np.random.default_rng(1)
    changed = False
    for states in found.values():
        for st in states:
            changed |= assert_resample_keeps_view(eng, st, rng)
    if not eng.game.perfect_information:
        assert changed, "resample never changed the hidden state"


def _hermit_count_positions(options: dict[str, Any], count: int,
                            seed: int) -> tuple[Engine, list[np.ndarray]]:
    """Flipology positions where a Hermit crab's owner chooses up/down for a picked
    Sloth/Koala (phase ``hermit_count``)."""
    eng = Engine("flipology_v0", **options)
    rnd = random.Random(seed)
    out: list[np.ndarray] = []
    for _ in range(4000):
        st = eng.new_state(rnd.randrange(2**31))
        while not eng.is_terminal(st) and len(out) < count:
            if eng.game.phase_name(st) == "hermit_count":
                out.append(st.copy())
            eng.step(st, rnd.choice(eng.legal_actions(st)))
        if len(out) >= count:
            break
    return eng, out


@pytest.mark.parametrize("options", [{"num_players": 2}, {"num_players": 4, "moon": True}],
                         ids=["2p", "4p-moon"])
def test_flipology_hermit_pick_is_known_to_all(options: dict[str, Any]) -> None:
    eng, states = _hermit_count_positions(options, count=12, seed=5)
    assert len(states) == 12, "random play should reach a Hermit crab's Sloth/Koala pick"
    rng = np.random.default_rng(0)
    for st in states:
        c = int(st[FL.HCARD])
        assert c >= 0 and st[FL.DISC + c] == 1
        for seat in range(eng.num_players):
            view = eng.game.state_dict(st, observer=seat)
            assert c in view["known"][seat], "the pick is public: every seat knows it"
            assert c in view["discard"]
            for _ in range(4):
                alt = eng.resample(st, seat, rng)
                eng.game.check_state(alt)
                assert alt[FL.DISC + c] == 1, "the picked card stays in the discard pile"
                assert int(alt[FL.HCARD]) == c
        assert_resample_keeps_view(eng, st, rng)
