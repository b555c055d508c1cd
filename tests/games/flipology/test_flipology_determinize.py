"""Flipology's compiled determinization ``statedict.determinize`` (behind ``resample`` and
``game.k_determinize``), over random positions of every seat count and variant, every phase
but the end (the short ones too: a Regrowth, a Hermit crab's up/down choice), every seat as
the observer:

1. its output is a valid position that looks the same to the observer (observation, legal
   mask when it acts, ``state_dict(observer=...)``);
2. it reads only what the observer knows: the same ``rng`` value gives the same bytes for
   every arrangement of what the observer cannot see (drawn by ``ref_resample``, the Python
   determinization it replaced, or by the kernel itself) and whatever the state's own RNG;
3. it draws from the distribution of ``ref_resample``: where each unknown card goes, with
   the attributes that stay with its place (who knows it, draw number, Regrowth returns).
   Flipology keeps no hidden pending choice (setup placements are public steps of a hand its
   owner knows), so the cards are all there is to redraw.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from card_envs import Engine
from card_envs.core import kernels as K
from card_envs.flipology import layout as L
from card_envs.flipology import statedict as SD
from determinize_kit import DRAWS, DeterminizeKit, assert_same_view, hyp, positions_by_phase
from flipology_ref import ENV_ID, ref_resample

CASES = (
    {},
    {"num_players": 3, "moon": True, "series": True, "start_player": "random"},
    {"num_players": 4, "wolves": False},
    {"num_players": 8, "reward_mode": "points", "moon": True},
    {"variant": "great_tree"},
    {"num_players": 3, "variant": "great_tree", "moon": True},
    {"num_players": 4, "variant": "great_tree", "series": True, "max_games": 2},
)
IDS = ["2p", "3p-moon-series", "4p-nowolves", "8p-points", "gt-2p", "gt-3p-moon",
       "gt-4p-series"]
PER_PHASE = 4  # positions kept per phase and case
GAMES = 12  # random games per case (more, up to MAX_GAMES, while a phase is missing)
MAX_GAMES = 800

KIT = DeterminizeKit(ENV_ID, SD.determinize, ref_resample)
engine, det = KIT.engine, KIT.det
_POSITIONS: dict[str, list[np.ndarray]] = {}


def phases_met(eng: Engine) -> set[str]:
    """The phases a game of these options passes through, but the end (the Great Tree has
    no Hermit crabs, Nature no Regrowth)."""
    gt = eng.game.options["variant"] == "great_tree"
    return set(eng.game.phases) - {"end", *(("hermit", "hermit_count") if gt else ("regrow",))}


def positions(case_id: str, opts: dict) -> list[np.ndarray]:
    """Up to ``PER_PHASE`` running positions of every phase, at random moments of random
    games (reservoir-sampled per phase; computed once per process)."""
    if case_id not in _POSITIONS:
        eng = engine(opts)
        kept = positions_by_phase(eng, case_id, GAMES, PER_PHASE, want=phases_met(eng),
                                  max_games=MAX_GAMES)
        _POSITIONS[case_id] = [s for ph in sorted(kept) for s in kept[ph]]
    return _POSITIONS[case_id]


def unknown(g, state: np.ndarray, seat: int) -> list[int]:
    """The cards in play ``seat`` does not know."""
    return [c for c in range(g.ncards)
            if not g.aside[c] and not state[L.KNOW + c] >> seat & 1]


# --- the wiring -------------------------------------------------------------------------------
def test_resample_is_the_kernel() -> None:
    eng = engine(CASES[1])
    KIT.check_resample_is_the_kernel(eng, SD.resample, positions(IDS[1], CASES[1])[-1:])


# --- 1. the observer's view is kept -------------------------------------------------------------
@pytest.mark.parametrize("opts", CASES, ids=IDS)
def test_determinize_keeps_the_view(opts: dict) -> None:
    case = IDS[CASES.index(opts)]
    eng = engine(opts)
    found = positions(case, opts)
    assert {eng.game.phase_name(s) for s in found} == phases_met(eng), "a phase is missing"
    changed = 0
    for i, s in enumerate(found):
        for seat in range(eng.num_players):
            for v in (2 * i, 2 * i + 1):
                out = det(eng, s, seat, v)
                assert_same_view(eng, s, out, seat)
                changed += not np.array_equal(out[K.HEADER:], s[K.HEADER:])
    assert changed > len(found), "determinize should redraw the hidden cards"


# --- 2. only what the observer knows is read ---------------------------------------------------
@pytest.mark.parametrize("opts", CASES, ids=IDS)
def test_determinize_reads_only_what_the_seat_knows(opts: dict) -> None:
    case = IDS[CASES.index(opts)]
    eng = engine(opts)
    g = eng.game
    gen = np.random.default_rng(7)
    differs = 0
    for i, s in enumerate(positions(case, opts)):
        for seat in range(eng.num_players):
            base = det(eng, s, seat, 1000 + i)
            other = ref_resample(g, s, seat, gen)  # another arrangement of the unknown cards
            differs += not np.array_equal(other, s)
            reseeded = s.copy()  # the state's own RNG is chance nobody has seen
            K.rng_seed(reseeded, np.uint64(gen.integers(0, 2**63)))
            drawn = det(eng, s, seat, 99)  # the kernel's own arrangements count too
            for alt in (other, reseeded, drawn):
                assert np.array_equal(det(eng, alt, seat, 1000 + i), base), \
                    f"{g.phase_name(s)!r}, seat {seat}: the output depends on hidden cards"
            if len(unknown(g, s, seat)) > 1:
                assert not np.array_equal(det(eng, s, seat, 2000 + i), base), \
                    "another rng value should give another draw"
    assert differs, "the reference should rearrange some hidden cards"


# --- 3. the distribution is the reference's -----------------------------------------------------
def _key(out: np.ndarray, cards: np.ndarray, bit: int) -> np.ndarray:
    """Per draw (rows) and card (columns): the attributes that stay with a place."""
    know = out[:, L.KNOW + cards].astype(np.int64)
    pick = out[:, L.PICK + cards].astype(np.int64)
    seq = out[:, L.SEQ + cards].astype(np.int64)
    ret = out[:, L.RET + cards].astype(np.int64) & ~bit
    return (seq << 18) | (know << 10) | (ret << 2) | pick


def placements(g, state: np.ndarray, outs: np.ndarray, seat: int) -> dict[int, int]:
    """Counts over the draws ``outs`` of (place, its attributes, unknown card): places are
    state offsets (rows, hands, deck), 0 for the discard pile, where the place's attributes
    tell its places apart."""
    bit = 1 << seat
    cards = np.array(unknown(g, state, seat), np.int64)
    place = np.zeros((outs.shape[0], cards.size), np.int64)
    for lo, size in ((L.POS, L.MAXPOS), (L.HAND, L.MAX_PLAYERS * L.HANDMAX),
                     (L.DECK, int(state[L.DECKN]))):
        for off in range(lo, lo + size):
            hit = outs[:, off:off + 1] == cards[None, :]
            place[hit] = off
    on_discard = outs[:, L.DISC + cards] == 1
    assert ((place > 0) ^ on_discard).all(), "every unknown card in exactly one place"
    code = (place << 47) | (_key(outs, cards, bit) << 8) | cards[None, :]
    vals, counts = np.unique(code, return_counts=True)
    return dict(zip(vals.tolist(), counts.tolist()))


def _returned_position(opts: dict) -> tuple[np.ndarray, int]:
    """A Great Tree position where some seat returned cards by Regrowth that it no longer
    knows and some place it cannot see was drawn before that (so the rule that its returned
    cards go only to the deck or to later draws binds), at least two rows dealt."""
    eng = engine(opts)
    rnd = random.Random(3)
    for _ in range(MAX_GAMES):
        s = eng.new_state(rnd.randrange(2**31))
        while not eng.is_terminal(s):
            if s[L.LEVELS] >= 2 and eng.game.phase_name(s) == "turn":
                for seat in range(eng.num_players):
                    bit = 1 << seat
                    mine = [c for c in unknown(eng.game, s, seat) if s[L.RET + c] & bit]
                    early = [p for p in range(eng.game.npos) if 0 <= s[L.POS + p] < eng.game.ncards
                             and not s[L.KNOW + s[L.POS + p]] & bit and
                             0 < s[L.SEQ + s[L.POS + p]] <= s[L.RETSEQ + seat]]
                    if mine and early:
                        return s, seat
            eng.step(s, rnd.choice(eng.legal_actions(s)))
    raise AssertionError("random play should reach a binding Regrowth")


def _nature_position(opts: dict, phase: str, skip: int) -> np.ndarray:
    eng = engine(opts)
    rnd = random.Random(11)
    s = eng.new_state(5)
    while eng.game.phase_name(s) != phase or skip > 0:
        skip -= eng.game.phase_name(s) == phase
        eng.step(s, rnd.choice(eng.legal_actions(s)))
    return s


@pytest.mark.parametrize("which", ["regrowth", "setup-3p", "turn-8p", "hermit-4p", "regrow-gt"])
def test_determinize_draws_like_the_reference(which: str) -> None:
    if which == "regrowth":
        opts = {"num_players": 3, "variant": "great_tree"}
        s, seat = _returned_position(opts)
    elif which == "setup-3p":  # other seats' hands and setup discards, known to their owners
        opts = {"num_players": 3}
        s, seat = _nature_position(opts, "setup", 11), 1
    elif which == "turn-8p":
        opts = {"num_players": 8}
        s, seat = _nature_position(opts, "turn", 9), 5
    elif which == "hermit-4p":  # Wolves' removals (public) among unknown discards
        opts = {"num_players": 4, "moon": True}
        s = next(x for x in positions("4p-hermit", opts) if engine(opts).game.phase_name(x)
                 in ("hermit", "hermit_count"))
        seat = 2
    else:
        opts = {"variant": "great_tree"}
        s, seat = _nature_position(opts, "regrow", 1), 0
    eng = engine(opts)
    g = eng.game
    assert len(unknown(g, s, seat)) > 10
    rng = np.array([12345], np.uint64)
    drawn = np.empty((DRAWS, s.size), np.int32)
    for i in range(DRAWS):
        SD.determinize(s, g.cfg, seat, drawn[i], rng)
    ref = KIT.reference_sample(eng, s, seat, np.random.default_rng(54321))
    a = placements(g, s, drawn, seat)
    b = placements(g, s, ref, seat)
    cells = sorted(set(a) | set(b))
    x = np.array([a.get(k, 0) for k in cells], float)
    y = np.array([b.get(k, 0) for k in cells], float)
    p = (x + y) / (2 * DRAWS)
    bound = 5.5 * np.sqrt(2 * p * (1 - p) / DRAWS) + 3 / DRAWS
    worst = int(np.argmax(np.abs(x - y) / DRAWS - bound))
    assert (np.abs(x - y) / DRAWS <= bound).all(), \
        f"cell {cells[worst]}: {x[worst]:.0f} vs {y[worst]:.0f} of {DRAWS}"
    # two-sample chi-square over all cells: a card's places are one multinomial per sampler
    cards = np.array([k & 0xFF for k in cells])
    stat = float(((x - y) ** 2 / (x + y)).sum())
    df = len(cells) - len(set(cards.tolist()))
    assert stat < df + 6 * np.sqrt(2 * df), f"chi-square {stat:.0f} with {df} degrees of freedom"


# --- 4. random positions -------------------------------------------------------------------------
@hyp(25)
@given(seed=st.integers(0, 2**31 - 1), k=st.integers(0, 250), value=st.integers(0, 2**64 - 1),
       opts=st.sampled_from(CASES))
def test_determinize_random_positions(seed: int, k: int, value: int, opts: dict) -> None:
    eng = engine(opts)
    s = eng.new_state(seed)
    rnd = random.Random(seed)
    for _ in range(k):
        if eng.is_terminal(s):
            break
        eng.step(s, rnd.choice(eng.legal_actions(s)))
    for seat in range(eng.num_players):
        out = det(eng, s, seat, value)
        assert_same_view(eng, s, out, seat)
        assert np.array_equal(det(eng, out, seat, value), out)
