"""If It Fits' compiled determinization (``card_envs.if_it_fits.statedict.determinize``, the
kernel behind ``resample``) against the numpy reference it replaced (``ref_resample`` in
``if_it_fits_ref.py``).

For every seat count, the variants (advanced game, small tables, custom decks: a small one, one
with ten special toy cards) and positions of every phase (the rare ones, toy placements,
discards and passes, included, found by phase in random games), and every seat as the observer:
the output is a consistent state that looks the same to the observer (observation, mask, state
dict); it changes nothing but the pile and the other hands' box cards (Princesses in hands and
the card being placed stay); it depends only on what the observer knows and on the ``rng``
value (two states that differ in the hidden box cards, the order in the pile segments or the
state's own RNG give the same bytes); and over thousands of draws it has the reference's
distribution (each hidden place's card against the reference and the exact law, and the count of
each card over all hidden places, which a draw with replacement would change).
"""

from __future__ import annotations

import functools
import json
import math
import random

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from card_envs import Engine
from card_envs.core import kernels as K
from card_envs.if_it_fits import layout as L
from card_envs.if_it_fits.statedict import determinize, resample
from determinize_kit import (
    DRAWS,
    DeterminizeKit,
    assert_same_law,
    hyp,
    positions_by_phase,
    random_moments,
    two_sample_z,
)
from determinize_kit import game_states as play
from if_it_fits_ref import DECK, ENV, ref_resample


def _deck(box: int, toys: int) -> dict:
    """The default deck's first ``box`` box cards and ``toys`` special toy cards (more than the
    three default ones are made up)."""
    d = json.loads(json.dumps(DECK))
    d["box_cards"] = d["box_cards"][:box]
    d["special_toy_cards"] = [{"name": f"toy{k}", "toys": {L.TOYS[k % 3]: 1 + k % 2}}
                              for k in range(toys)]
    return d


#: every seat count, both rule sets, small tables and custom decks (the manifest's test cases
#: among them)
OPTIONS = (
    {"num_players": 2},
    {"num_players": 3, "start_player": "random", "advanced": True},
    {"num_players": 5, "reward_mode": "points", "table": (7, 9)},
    {"num_players": 4, "table": (5, 7)},
    {"num_players": 2, "advanced": True, "table": (5, 7)},
    {"num_players": 3, "deck": _deck(20, 1)},
    {"num_players": 5, "advanced": True, "deck": _deck(30, 10)},
    {"num_players": 4, "start_player": "random", "deck": _deck(40, 0)},
)
OPT_IDS = ["2p", "3p-adv", "5p-7x9", "4p-5x7", "2p-adv-5x7", "3p-deck20", "5p-adv-toys10",
           "4p-deck40-notoys"]


def keep_place(state: np.ndarray) -> int:
    """The state index of the card being placed (phases cell / rotation), else -1."""
    if state[K.PHASE] in (L.P_CELL, L.P_ROT):
        return L.S_HAND + int(state[K.CUR]) * L.HANDMAX + int(state[L.S_SEL])
    return -1


def engine(i: int) -> Engine:
    """The engine of ``OPTIONS[i]``."""
    return KIT.engine(OPTIONS[i])


def game_states(eng: Engine, seed: int) -> list[np.ndarray]:
    """Every state of one random game, the deal to the end (index = steps played)."""
    return play(eng, seed, random.Random(seed))


def positions(eng: Engine, seed: int, games: int = 12, per_phase: int = 3) -> list[np.ndarray]:
    """Up to ``per_phase`` running positions of every phase met in ``games`` random games (more
    while a phase is missing; the rare phases as often as the long ones), the deal of a random
    game and the ends of ``per_phase`` games."""
    trajs = [game_states(eng, seed + k) for k in range(per_phase)]
    by_phase = positions_by_phase(eng, seed, games, per_phase)
    return [trajs[0][0], *(t[-1] for t in trajs), *(s for v in by_phase.values() for s in v)]


def hidden_places(eng: Engine, state: np.ndarray, observer: int) -> np.ndarray:
    """State indices whose cards ``observer`` cannot see: the pile (bottom first), then the
    other hands' places but the card being placed."""
    po = eng.game.lay["pile"]
    keep = keep_place(state)
    hands = [L.S_HAND + q * L.HANDMAX + k for q in range(eng.num_players) if q != observer
             for k in range(int(state[L.S_HANDN + q]))]
    return np.array([*range(po, po + int(state[L.S_PN])), *(x for x in hands if x != keep)],
                    int)


class _Kit(DeterminizeKit):
    def assert_keeps_view(self, eng: Engine, state: np.ndarray, out: np.ndarray,
                          observer: int) -> None:
        """Only the hidden places and the RNG words differ, and the Princesses in other hands
        stay where they are."""
        super().assert_keeps_view(eng, state, out, observer)
        places = hidden_places(eng, state, observer)
        hand = places[places < L.S_HAND + L.MAX_PLAYERS * L.HANDMAX]
        assert np.array_equal(out[hand] == eng.game.nc, state[hand] == eng.game.nc), \
            "Princesses in hands stay"


KIT = _Kit(ENV, determinize, ref_resample, hidden_places)


# =============================================================================================
# 1-2. Consistency, the observer's view, independence from hidden information
# =============================================================================================
@pytest.mark.parametrize("i", range(len(OPTIONS)), ids=OPT_IDS)
def test_determinize_keeps_view_and_ignores_hidden(i: int) -> None:
    eng = engine(i)
    KIT.check_keeps_view_and_ignores_hidden(eng, positions(eng, seed=100 + i),
                                            np.random.default_rng(i), seeds=1)


def test_positions_cover_every_phase() -> None:
    """Over the options, the positions above include every phase."""
    found = {engine(i).game.phase_name(s) for i in range(len(OPTIONS))
             for s in positions(engine(i), seed=100 + i)}
    assert found == set(L.PHASES)


@pytest.mark.parametrize("i", range(3), ids=OPT_IDS[:3])
def test_resample_is_the_kernel_seeded_from_the_generator(i: int) -> None:
    eng = engine(i)
    KIT.check_resample_is_the_kernel(eng, resample, positions(eng, seed=3, games=2, per_phase=1))


def test_rng_words_come_from_rng() -> None:
    eng = engine(0)
    KIT.check_rng_words(eng, game_states(eng, 4)[10])


# =============================================================================================
# 3. Distribution against the reference
# =============================================================================================
def z_bound(cells: int) -> float:
    """The bound on the largest |z| of ``cells`` frequencies: with the Gaussian tail
    2 exp(-z**2 / 2) of each, the chance that a right sample exceeds it is below 2e-4 (the seeds
    are fixed in any case); a wrong law is tens of sd off."""
    return math.sqrt(2 * math.log(1e4 * max(cells, 1)))


def find(i: int, seed: int, want) -> tuple[np.ndarray, int]:
    """The first (state, observer) of random games of ``OPTIONS[i]`` (from ``seed`` on) that
    ``want(state, observer)`` accepts."""
    eng = engine(i)
    for s in range(seed, seed + 200):
        for state in game_states(eng, s):
            for obs in range(eng.num_players):
                if want(eng, state, obs):
                    return state, obs
    raise AssertionError("no such position")


def _others_hold_princess(eng: Engine, state: np.ndarray, obs: int) -> bool:
    return any(state[L.S_HAND + q * L.HANDMAX + k] == eng.game.nc
               for q in range(eng.num_players) if q != obs
               for k in range(int(state[L.S_HANDN + q])))


def _placing(eng: Engine, state: np.ndarray, obs: int) -> bool:
    """Another seat places a card while a seat other than the observer holds a Princess."""
    return (keep_place(state) >= 0 and eng.current_player(state) != obs
            and _others_hold_princess(eng, state, obs))


def _segments(k: int):
    """Positions with a pile of at least ``k`` segments holding cards and a toy card."""
    def want(eng: Engine, state: np.ndarray, obs: int) -> bool:
        pn = int(state[L.S_PN])
        segb = state[L.S_SEGB:L.S_SEGB + int(state[L.S_NSEG]) + 1]
        pile = state[eng.game.lay["pile"]:][:pn]
        return (int((np.minimum(segb[1:], pn) > segb[:-1]).sum()) >= k
                and bool((pile >= eng.game.nb + L.NUM_START).any()) and pn < segb[-1])
    return want


#: (option index, game seed, a position filter): several pile segments, some drawn from, with
#: toy cards; a seat placing a card while another holds a Princess; the advanced game's single
#: segment of Princesses; a small table; a deck with ten special toy cards
DIST_CASES = (
    (0, 1, _segments(2)),
    (3, 2, _placing),
    (1, 3, lambda eng, s, o: s[L.S_PN] > 30 and s[K.PHASE] == L.P_TURN),
    (2, 4, lambda eng, s, o: _segments(3)(eng, s, o) and _others_hold_princess(eng, s, o)),
    (6, 5, lambda eng, s, o: 20 < s[L.S_PN] < 30 and s[K.CUR] != o),
)


def _stats(eng: Engine, state: np.ndarray, outs: np.ndarray, observer: int
           ) -> dict[str, np.ndarray]:
    """Frequencies over the draws (rows of ``outs``) of: the card at each hidden place, and how
    many hidden places hold each card (0-4)."""
    nc = eng.game.nc
    cards = outs[:, hidden_places(eng, state, observer)]  # (draws, places), ids 0..nc
    per_card = np.stack([(cards == c).sum(1) for c in range(nc + 1)], 1)
    return {
        "place": np.eye(nc + 1)[cards].mean(0),  # (places, nc + 1)
        "count": np.eye(5)[np.minimum(per_card, 4)].mean(0),  # (cards, 5)
    }


def _exact(eng: Engine, state: np.ndarray, observer: int) -> np.ndarray:
    """The exact law of the card at each hidden place: in a pile segment holding ``b`` box
    cards, Princesses and toy cards over ``len`` places, a Princess or toy card (kept in the
    segment) is at a place with probability (its copies) / len and each unseen box card with
    b / len / (unseen box cards); a box card place of another hand holds each unseen box card
    alike; a Princess in a hand stays."""
    g = eng.game
    places = hidden_places(eng, state, observer)
    unseen = np.unique(state[places][state[places] < g.nb])
    law = np.zeros((places.size, g.nc + 1))
    po, pn = g.lay["pile"], int(state[L.S_PN])
    for j in range(int(state[L.S_NSEG])):
        a, b = int(state[L.S_SEGB + j]), min(int(state[L.S_SEGB + j + 1]), pn)
        if b > a:
            seg = state[po + a:po + b]
            row = np.bincount(seg[seg >= g.nb], minlength=g.nc + 1) / (b - a)
            row[unseen] = (seg < g.nb).sum() / (b - a) / unseen.size
            law[a:b] = row
    for k, x in enumerate(places[pn:], pn):
        if state[x] == g.nc:
            law[k, g.nc] = 1
        else:
            law[k, unseen] = 1 / unseen.size
    return law


@functools.cache
def _case(k: int) -> tuple[Engine, np.ndarray, int, np.ndarray]:
    """Engine, state, observer and the reference's ``DRAWS`` outputs of ``DIST_CASES[k]``."""
    i, seed, want = DIST_CASES[k]
    eng = engine(i)
    state, observer = find(i, seed, want)
    ref = KIT.reference_sample(eng, state, observer, np.random.default_rng(seed + 100))
    return eng, state, observer, ref


@pytest.mark.parametrize("k", range(len(DIST_CASES)),
                         ids=[OPT_IDS[c[0]] for c in DIST_CASES])
def test_distribution_matches_reference(k: int) -> None:
    eng, state, observer, ref = _case(k)
    mine = KIT.kernel_sample(eng, state, observer, k)
    a, b = _stats(eng, state, mine, observer), _stats(eng, state, ref, observer)
    assert a["place"].shape[0] > 10
    # kernel against reference, each sample against the exact law
    assert_same_law(a, b, {"place": _exact(eng, state, observer)}, z_bound)


def test_distribution_test_detects_drawing_with_replacement() -> None:
    """The joint statistic tells a draw with replacement from the reference (the marginals
    alone could not): guards the test above against being too weak."""
    eng, state, observer, ref = _case(0)
    e = _exact(eng, state, observer)
    gen = np.random.default_rng(0)
    wrong = np.repeat(state[None], DRAWS, 0)
    places = hidden_places(eng, state, observer)
    for k, x in enumerate(places):  # each place on its own, from its exact law
        wrong[:, x] = gen.choice(e.shape[1], size=DRAWS, p=e[k])
    a, b = _stats(eng, state, wrong, observer), _stats(eng, state, ref, observer)
    assert two_sample_z(a["place"], b["place"]) < z_bound(a["place"].size), "same marginals"
    assert two_sample_z(a["count"], b["count"]) > 4 * z_bound(a["count"].size)


# =============================================================================================
# 4. Random positions (hypothesis)
# =============================================================================================
@hyp(40)
@given(**random_moments(L.MAX_PLAYERS, i=st.integers(0, len(OPTIONS) - 1)))
def test_determinize_random_positions(seed, i, frac, observer, rng_value):
    eng = engine(i)
    KIT.check_random_moment(eng, game_states(eng, seed), frac, observer, rng_value, seed)
