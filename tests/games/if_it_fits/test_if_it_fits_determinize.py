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
from collections import defaultdict

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from card_envs import Engine
from card_envs.core import kernels as K
from card_envs.if_it_fits import layout as L
from card_envs.if_it_fits.statedict import determinize, resample
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


@functools.cache
def engine(i: int) -> Engine:
    """The engine of ``OPTIONS[i]`` (an index: a deck is not hashable)."""
    return Engine(ENV, **OPTIONS[i])


def det(eng: Engine, state: np.ndarray, observer: int, seed: int) -> np.ndarray:
    """The kernel's determinization of ``state`` for ``observer`` with the rng value ``seed``."""
    out = np.empty_like(state)
    determinize(state, eng.game.cfg, observer, out, np.array([seed], np.uint64))
    return out


def game_states(eng: Engine, seed: int) -> list[np.ndarray]:
    """Every state of one random game, the deal to the end (index = steps played)."""
    rnd = random.Random(seed)
    s = eng.new_state(seed)
    out = [s.copy()]
    while not eng.is_terminal(s):
        eng.step(s, rnd.choice(eng.legal_actions(s)))
        out.append(s.copy())
    return out


def positions(eng: Engine, seed: int, games: int = 12, per_phase: int = 3) -> list[np.ndarray]:
    """Up to ``per_phase`` positions of every phase met in ``games`` random games (the rare
    phases as often as the long ones), the deal and the end of the first game."""
    rnd = random.Random(seed)
    by_phase: dict[str, list[np.ndarray]] = defaultdict(list)
    first: list[np.ndarray] = []
    for _ in range(games):
        traj = game_states(eng, rnd.randrange(2**31))
        first = first or [traj[0], traj[-1]]
        rnd.shuffle(traj)
        for s in traj:
            ph = eng.game.phase_name(s)
            if len(by_phase[ph]) < per_phase:
                by_phase[ph].append(s)
    return first + [s for v in by_phase.values() for s in v]


def keep_place(state: np.ndarray) -> int:
    """The state index of the card being placed (phases cell / rotation), else -1."""
    if state[K.PHASE] in (L.P_CELL, L.P_ROT):
        return L.S_HAND + int(state[K.CUR]) * L.HANDMAX + int(state[L.S_SEL])
    return -1


def hidden_places(eng: Engine, state: np.ndarray, observer: int) -> np.ndarray:
    """State indices whose cards ``observer`` cannot see: the pile (bottom first), then the
    other hands' places but the card being placed."""
    po = eng.game.lay["pile"]
    keep = keep_place(state)
    hands = [L.S_HAND + q * L.HANDMAX + k for q in range(eng.num_players) if q != observer
             for k in range(int(state[L.S_HANDN + q]))]
    return np.array([*range(po, po + int(state[L.S_PN])), *(x for x in hands if x != keep)],
                    int)


def assert_keeps_view(eng: Engine, state: np.ndarray, out: np.ndarray, observer: int) -> None:
    """``out`` is consistent and ``observer`` sees it exactly as ``state``; only the hidden
    places and the RNG words differ, the Princesses in other hands stay where they are."""
    g = eng.game
    g.check_state(out)
    assert np.array_equal(eng.observe(out, observer), eng.observe(state, observer))
    if eng.current_player(state) == observer:
        assert np.array_equal(eng.legal_mask(out), eng.legal_mask(state))
    assert g.state_dict(out, observer=observer) == g.state_dict(state, observer=observer)
    places = hidden_places(eng, state, observer)
    public = np.ones(state.size, bool)
    public[[K.RNG_LO, K.RNG_HI, *places]] = False
    assert np.array_equal(out[public], state[public])
    hand = places[places < L.S_HAND + L.MAX_PLAYERS * L.HANDMAX]
    assert np.array_equal(out[hand] == g.nc, state[hand] == g.nc), "Princesses in hands stay"


# =============================================================================================
# 1-2. Consistency, the observer's view, independence from hidden information
# =============================================================================================
@pytest.mark.parametrize("i", range(len(OPTIONS)), ids=OPT_IDS)
def test_determinize_keeps_view_and_ignores_hidden(i: int) -> None:
    eng = engine(i)
    n = eng.num_players
    gen = np.random.default_rng(i)
    changed = 0
    for state in positions(eng, seed=100 + i):
        before = state.copy()
        for obs in range(n):
            seed = int(gen.integers(0, 2**64, dtype=np.uint64))
            out = det(eng, state, obs, seed)
            assert_keeps_view(eng, state, out, obs)
            assert np.array_equal(det(eng, state, obs, seed), out), "a function of rng"
            # another arrangement of what ``obs`` cannot see, with another state RNG
            other = ref_resample(eng.game, state, obs, gen)
            K.rng_seed(other, gen.integers(0, 2**64, dtype=np.uint64))
            changed += not np.array_equal(other[L.S_FIRST:], state[L.S_FIRST:])
            assert np.array_equal(det(eng, other, obs, seed), out), \
                f"seat {obs}'s determinization read hidden information"
        assert np.array_equal(state, before), "the input state is not written"
    assert changed > 0


def test_positions_cover_every_phase() -> None:
    """Over the options, the positions above include every phase."""
    found = {engine(i).game.phase_name(s) for i in range(len(OPTIONS))
             for s in positions(engine(i), seed=100 + i)}
    assert found == set(L.PHASES)


@pytest.mark.parametrize("i", range(3), ids=OPT_IDS[:3])
def test_resample_is_the_kernel_seeded_from_the_generator(i: int) -> None:
    eng = engine(i)
    assert eng.game.k_determinize is determinize
    for state in positions(eng, seed=3, games=2, per_phase=1):
        for obs in range(eng.num_players):
            out = resample(eng.game, state, obs, np.random.default_rng(obs))
            seed = np.random.default_rng(obs).integers(0, 2**64, size=1, dtype=np.uint64)[0]
            assert np.array_equal(out, det(eng, state, obs, int(seed)))
            assert_keeps_view(eng, state, eng.resample(state, obs, obs), obs)


def test_rng_words_come_from_rng() -> None:
    """The output's RNG words are the first draw of ``rng``; the state's own RNG is unread."""
    eng = engine(0)
    state = game_states(eng, 4)[10]
    for seed in (0, 1, 2**63 + 5):
        r = np.array([seed], np.uint64)
        expect = np.zeros(2, np.int32)
        K.rng_seed(expect, np.uint64(K.draw(r)))  # (np.uint64: a Python int past 2**63
        # can pick an int64 signature already compiled)
        assert det(eng, state, 1, seed)[K.RNG_LO:K.RNG_HI + 1].tolist() == expect.tolist()


# =============================================================================================
# 3. Distribution against the reference
# =============================================================================================
DRAWS = 3000


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


def _max_z(p: np.ndarray, q: np.ndarray, var: np.ndarray) -> float:
    """Largest |p - q| in units of its standard deviation (floored at one draw's worth)."""
    sd = np.sqrt(np.maximum(var, 0.25 / DRAWS**2))
    return float((np.abs(p - q) / sd).max()) if p.size else 0.0


def _two_sample_z(a: np.ndarray, b: np.ndarray) -> float:
    """:func:`_max_z` of two samples' frequencies (``DRAWS`` each), pooled variance."""
    p = (a + b) / 2
    return _max_z(a, b, 2 * p * (1 - p) / DRAWS)


@functools.cache
def _case(k: int) -> tuple[Engine, np.ndarray, int, np.ndarray]:
    """Engine, state, observer and the reference's ``DRAWS`` outputs of ``DIST_CASES[k]``."""
    i, seed, want = DIST_CASES[k]
    eng = engine(i)
    state, observer = find(i, seed, want)
    gen = np.random.default_rng(seed + 100)
    ref = np.stack([ref_resample(eng.game, state, observer, gen) for _ in range(DRAWS)])
    return eng, state, observer, ref


@pytest.mark.parametrize("k", range(len(DIST_CASES)),
                         ids=[OPT_IDS[c[0]] for c in DIST_CASES])
def test_distribution_matches_reference(k: int) -> None:
    eng, state, observer, ref = _case(k)
    seeds = np.random.default_rng(k).integers(0, 2**64, size=DRAWS, dtype=np.uint64)
    mine = np.stack([det(eng, state, observer, int(s)) for s in seeds])
    a, b = _stats(eng, state, mine, observer), _stats(eng, state, ref, observer)
    assert a["place"].shape[0] > 10
    for key in a:
        z = _two_sample_z(a[key], b[key])
        assert z < z_bound(a[key].size), f"{key}: kernel and reference differ by {z:.1f} sd"
    e = _exact(eng, state, observer)  # each sample against the exact law
    for name, s in (("kernel", a), ("reference", b)):
        z = _max_z(s["place"], e, e * (1 - e) / DRAWS)
        assert z < z_bound(e.size), f"{name} off the exact law by {z:.1f} sd"


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
    assert _two_sample_z(a["place"], b["place"]) < z_bound(a["place"].size), "same marginals"
    assert _two_sample_z(a["count"], b["count"]) > 4 * z_bound(a["count"].size)


# =============================================================================================
# 4. Random positions (hypothesis)
# =============================================================================================
@settings(max_examples=40, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(seed=st.integers(0, 2**31 - 1), i=st.integers(0, len(OPTIONS) - 1), frac=st.floats(0, 1),
       observer=st.integers(0, L.MAX_PLAYERS - 1), rng_value=st.integers(0, 2**64 - 1))
def test_determinize_random_positions(seed, i, frac, observer, rng_value):
    eng = engine(i)
    traj = game_states(eng, seed)
    state = traj[int(frac * (len(traj) - 1))]
    observer %= eng.num_players
    out = det(eng, state, observer, rng_value)
    assert_keeps_view(eng, state, out, observer)
    other = ref_resample(eng.game, state, observer, np.random.default_rng(seed))
    K.rng_seed(other, np.uint64(seed))
    assert np.array_equal(det(eng, other, observer, rng_value), out)
