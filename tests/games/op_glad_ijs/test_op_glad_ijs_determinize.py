"""Op Glad IJs' compiled determinization (``card_envs.op_glad_ijs.statedict.determinize``, the
kernel behind ``resample``) against the Python reference it replaced (``ref_resample`` in
``op_glad_ijs_ref.py``).

Positions come from games of a slapper that misses, faults and slaps at random (the manifest's
playthroughs' ``heuristic:miss_rate=0.3`` with noise, so that won piles fill and faults put
public cards under draw piles), cut short with ``max_turned``: windows with every number of
pending choices, public bottom cards, the truncated end with cards out of the game. For every
seat count, the variants and every seat as the observer: the output is a consistent state that
looks the same to the observer (observation, mask, state dict); it changes nothing the observer
knows; it depends only on what the observer knows and on the ``rng`` value (states that differ
in the unknown draw cards, other seats' pending choices or the state's own RNG give the same
bytes); and over thousands of draws it has the reference's distribution, and the exact one
(each unknown slot's card, each pending choice, how many cards of each type each pile's unknown
part holds, and every draw deals out exactly the unseen cards).
"""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from card_envs import Engine
from card_envs.core import kernels as K
from card_envs.op_glad_ijs import layout as L
from card_envs.op_glad_ijs.parts.linked import draw_slots
from card_envs.op_glad_ijs.queries import best_slaps, pending_hidden
from card_envs.op_glad_ijs.statedict import determinize, resample
from determinize_kit import (
    DRAWS,
    DeterminizeKit,
    assert_same_law,
    exact_z,
    game_moments,
    hyp,
    random_moments,
    two_sample_z,
)
from determinize_kit import game_states as play
from op_glad_ijs_ref import ENV_ID, ref_resample

#: every seat count and the variants, cut short (random-ish play runs long)
OPTIONS = (
    {"num_players": 2, "max_turned": 30},
    {"num_players": 3, "two_animals": True, "start_player": "random", "max_turned": 30},
    {"num_players": 4, "two_habitats": True, "reward_mode": "cards", "max_turned": 25},
    {"num_players": 5, "advanced": True, "max_turned": 20},
    {"num_players": 6, "advanced": True, "reward_mode": "points", "max_turned": 20},
    {"num_players": 6, "two_animals": True, "two_habitats": True, "max_turned": 15},
)
OPT_IDS = ["2p", "3p-two_animals", "4p-two_habitats", "5p-advanced", "6p-advanced",
           "6p-two_both"]


def slapper(eng: Engine, state: np.ndarray, rnd: np.random.Generator, noise: float) -> int:
    """A slap of the heuristic that misses 30% of its chances, replaced by a uniform legal
    action (mostly a fault) with probability ``noise``."""
    if rnd.random() < noise:
        return int(rnd.choice(eng.legal_actions(state)))
    good = best_slaps(state, eng.game.cfg)[0]
    if good.size == 0 or rnd.random() < 0.3:
        return L.A_PASS
    return int(rnd.choice(good))


def game_states(eng: Engine, seed: int) -> list[np.ndarray]:
    """Every state of one game of :func:`slapper` (noise 0.1-0.4), the deal to the end."""
    rnd = np.random.default_rng(seed)
    noise = 0.1 + 0.3 * rnd.random()
    return play(eng, seed, rnd, lambda eng, s, rnd: slapper(eng, s, rnd, noise))


def positions(eng: Engine, seed: int, games: int = 2, per_game: int = 8) -> list[np.ndarray]:
    """Random moments of ``games`` games, plus in each: the deal, a window's last choice (every
    other seat's pending), the most public bottom cards, the last running state and the end."""
    n = eng.num_players

    def rare(traj: list[np.ndarray], rnd: np.random.Generator) -> list[int]:
        last_choice = [i for i, s in enumerate(traj) if s[K.CUR] == n - 1]
        known = max(range(len(traj) - 1), key=lambda i: traj[i][L.KNOWN:L.KNOWN + n].sum())
        return [0, int(rnd.choice(last_choice)), known, len(traj) - 2, len(traj) - 1]

    return game_moments(game_states, eng, seed, games, per_game, rare)


def unknown_slots(eng: Engine, state: np.ndarray) -> list[list[int]]:
    """Per seat, the slots of its draw pile's unknown part (above the public bottom cards)."""
    return [draw_slots(state, q)[int(state[L.KNOWN + q]):] for q in range(eng.num_players)]


def hidden_split(eng: Engine, state: np.ndarray, observer: int
                 ) -> tuple[np.ndarray, np.ndarray]:
    """State indices of the unknown draw cards' types and of the other seats' pending
    choices."""
    cards = [L.CARDS + 2 * s for pile in unknown_slots(eng, state) for s in pile]
    pend = [L.CHOICE + q for q in pending_hidden(state, observer)]
    return np.array(cards, int), np.array(pend, int)


KIT = DeterminizeKit(ENV_ID, determinize, ref_resample, hidden_split)
engine = KIT.engine


# =============================================================================================
# 1-2. Consistency, the observer's view, independence from hidden information
# =============================================================================================
@pytest.mark.parametrize("opts", OPTIONS, ids=OPT_IDS)
def test_determinize_keeps_view_and_ignores_hidden(opts: dict) -> None:
    eng = engine(opts)
    n = eng.num_players
    states = positions(eng, seed=11 * n + len(opts))
    KIT.check_keeps_view_and_ignores_hidden(eng, states, np.random.default_rng(n))
    assert sum(len(pending_hidden(s, obs)) for s in states for obs in range(n)) > 0, \
        "some positions have other seats' choices pending"


@pytest.mark.parametrize("opts", OPTIONS[:3], ids=OPT_IDS[:3])
def test_resample_is_the_kernel_seeded_from_the_generator(opts: dict) -> None:
    eng = engine(opts)
    KIT.check_resample_is_the_kernel(eng, resample, positions(eng, seed=3, games=1, per_game=4))


def test_rng_words_come_from_rng() -> None:
    eng = engine(OPTIONS[1])
    KIT.check_rng_words(eng, eng.new_state(4))


# =============================================================================================
# 3. Distribution against the reference and the exact law
# =============================================================================================
ALPHA = 1e-4  # chance that a correct sampler fails one statistic of one case (the seeds are fixed)


def z_bound(cells: int) -> float:
    """Bound on the largest |z| of ``cells`` frequencies: Bonferroni at ``ALPHA``."""
    return NormalDist().inv_cdf(1 - ALPHA / (2 * max(cells, 1)))


def find(opts: dict, seed: int, ok) -> np.ndarray:
    """The first state of the games from ``seed`` on where ``ok(state)``."""
    eng = engine(opts)
    for g in range(seed, seed + 50):
        for s in game_states(eng, g):
            if ok(s):
                return s
    raise AssertionError("no such position")


def _known(s: np.ndarray) -> int:
    return int(s[L.KNOWN:L.KNOWN + L.MAX_PLAYERS].sum())


#: (options, seed, observer, what the position must have): windows with pending choices and
#: public bottom cards for every seat count (the observer to act, or having chosen with later
#: seats pending), and a truncated end (cards out of the game, nothing pending)
DIST_CASES = (
    (OPTIONS[0], 1, 1, lambda s: s[K.CUR] == 1 and s[L.TURNED] > 3),
    (OPTIONS[1], 2, 2, lambda s: s[K.CUR] == 2 and _known(s) >= 1),
    (OPTIONS[2], 3, 0, lambda s: s[K.CUR] == 3 and _known(s) >= 2 and s[L.MLEN] >= 3),
    (OPTIONS[4], 4, 5, lambda s: s[K.CUR] == 5 and _known(s) >= 2 and s[L.TURNED] > 8),
    (OPTIONS[3], 5, 2, lambda s: s[K.DONE] and s[L.OLEN] > 0 and _known(s) >= 1),
)
DIST_IDS = ["2p", "3p", "4p", "6p", "5p-end"]


def _pool(eng: Engine, state: np.ndarray) -> np.ndarray:
    """How many unknown cards of each type (read from the state: the test may look)."""
    cards, _ = hidden_split(eng, state, 0)
    return np.bincount(state[cards], minlength=eng.game.T)


def _freq(idx: np.ndarray, rows: int, cols: int) -> np.ndarray:
    """``(rows, cols)`` frequencies of the values ``idx`` (draws x rows, in 0..cols-1)."""
    flat = (np.arange(rows) * cols + idx).ravel()
    return np.bincount(flat, minlength=rows * cols).reshape(rows, cols) / idx.shape[0]


def _stats(eng: Engine, state: np.ndarray, outs: np.ndarray, observer: int
           ) -> dict[str, np.ndarray]:
    """Frequencies over the draws (rows of ``outs``) of: the type at each unknown slot, each
    pending seat's choice, and how many cards of each type each seat's unknown part holds
    (0..the most copies of a type, and more in the last column)."""
    T, n, c = eng.game.T, eng.num_players, int(eng.game.counts.max())
    cards, pend = hidden_split(eng, state, observer)
    per_seat = []
    for pile in unknown_slots(eng, state):
        vals = outs[:, [L.CARDS + 2 * s for s in pile]]
        per_seat.append(np.stack([(vals == t).sum(1) for t in range(T)], 1))
    counts = np.minimum(np.concatenate(per_seat, 1), c + 1)  # (draws, seats * types)
    return {
        "place": _freq(outs[:, cards], cards.size, T),
        "pending": _freq(outs[:, pend], pend.size, eng.num_actions),
        "count": _freq(counts, n * T, c + 2),
    }


def _exact(eng: Engine, state: np.ndarray, observer: int) -> dict[str, np.ndarray]:
    """The exact laws: an unknown slot holds type ``t`` with probability pool(t) / pool; a
    pending choice is uniform over the legal actions; a seat's unknown part of ``u`` cards
    holds ``x`` of the pool's ``c`` cards of type ``t`` with the hypergeometric probability."""
    T, copies = eng.game.T, int(eng.game.counts.max())
    cards, pend = hidden_split(eng, state, observer)
    pool = _pool(eng, state)
    m = int(pool.sum())
    mask = eng.legal_mask(state)
    count = np.zeros((eng.num_players, T, copies + 2))
    for q, pile in enumerate(unknown_slots(eng, state)):
        u = len(pile)
        for t in range(T):
            c = int(pool[t])
            for x in range(min(c, u) + 1):
                count[q, t, x] = math.comb(c, x) * math.comb(m - c, u - x) / math.comb(m, u)
    return {
        "place": np.repeat((pool / max(m, 1))[None], cards.size, 0),
        "pending": np.repeat((mask / max(mask.sum(), 1))[None], pend.size, 0),
        "count": count.reshape(eng.num_players * T, copies + 2),
    }


def _samples(case: tuple) -> tuple[Engine, np.ndarray, int, np.ndarray, np.ndarray]:
    """The case's engine, position, observer, and ``DRAWS`` draws of the kernel and of the
    reference."""
    opts, seed, observer, ok = case
    eng = engine(opts)
    state = find(opts, seed, ok)
    mine = KIT.kernel_sample(eng, state, observer, seed)
    ref = KIT.reference_sample(eng, state, observer, np.random.default_rng(seed + 100))
    return eng, state, observer, mine, ref


@pytest.mark.parametrize("case", DIST_CASES, ids=DIST_IDS)
def test_distribution_matches_reference(case: tuple) -> None:
    eng, state, observer, mine, ref = _samples(case)
    a, b = _stats(eng, state, mine, observer), _stats(eng, state, ref, observer)
    assert a["place"].shape[0] > 0
    if not state[K.DONE]:
        assert a["pending"].shape[0] > 0, "the running cases have pending choices"
    # every draw deals out exactly the unseen cards (a joint statistic: no card twice)
    cards, _ = hidden_split(eng, state, observer)
    pool = _pool(eng, state)
    for name, outs in (("kernel", mine), ("reference", ref)):
        dealt = np.stack([np.bincount(o[cards], minlength=eng.game.T) for o in outs])
        assert (dealt == pool).all(), f"{name}: a draw did not deal the unseen cards"
    assert_same_law(a, b, _exact(eng, state, observer), z_bound)


def test_distribution_test_detects_wrong_samplers() -> None:
    """The statistics above tell wrong samplers from the right law: drawing with replacement
    (right per-slot marginals; the joint counts catch it) and shuffling each pile's own unknown
    cards (what a determinization reading the hidden cards would do; the per-slot law catches
    it). Guards the test above against being too weak."""
    eng, state, observer, _, ref = _samples(DIST_CASES[3])
    gen = np.random.default_rng(0)
    exact = _exact(eng, state, observer)
    cards, _ = hidden_split(eng, state, observer)
    pool = _pool(eng, state)
    with_repl = ref.copy()
    with_repl[:, cards] = gen.choice(eng.game.T, size=(DRAWS, cards.size), p=pool / pool.sum())
    own = np.repeat(state[None], DRAWS, 0)
    for pile in unknown_slots(eng, state):
        idx = np.array([L.CARDS + 2 * s for s in pile], int)
        for row in own:
            row[idx] = gen.permutation(state[idx])
    r = _stats(eng, state, ref, observer)
    w = _stats(eng, state, with_repl, observer)
    o = _stats(eng, state, own, observer)
    assert two_sample_z(w["place"], r["place"]) < z_bound(w["place"].size), "same marginals"
    assert exact_z(w["count"], exact["count"]) > 3 * z_bound(w["count"].size)
    assert exact_z(o["place"], exact["place"]) > 3 * z_bound(o["place"].size)


# =============================================================================================
# 4. Random positions (hypothesis)
# =============================================================================================
@hyp(40)
@given(**random_moments(L.MAX_PLAYERS, opts=st.sampled_from(OPTIONS)))
def test_determinize_random_positions(seed, opts, frac, observer, rng_value):
    eng = engine(opts)
    KIT.check_random_moment(eng, game_states(eng, seed), frac, observer, rng_value, seed)
