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

import functools
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
from op_glad_ijs_ref import ENV_ID, hyp, ref_resample

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


@functools.cache
def _engine(key: tuple) -> Engine:
    return Engine(ENV_ID, **dict(key))


def engine(opts: dict) -> Engine:
    return _engine(tuple(sorted(opts.items())))


def det(eng: Engine, state: np.ndarray, observer: int, seed: int) -> np.ndarray:
    """The kernel's determinization of ``state`` for ``observer`` with the rng value ``seed``."""
    out = np.empty_like(state)
    determinize(state, eng.game.cfg, observer, out, np.array([seed], np.uint64))
    return out


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
    s = eng.new_state(seed)
    out = [s.copy()]
    while not eng.is_terminal(s):
        eng.step(s, slapper(eng, s, rnd, noise))
        out.append(s.copy())
    return out


def positions(eng: Engine, seed: int, games: int = 2, per_game: int = 8) -> list[np.ndarray]:
    """Random moments of ``games`` games, plus in each: the deal, a window's last choice (every
    other seat's pending), the most public bottom cards, the last running state and the end."""
    n = eng.num_players
    rnd = np.random.default_rng(seed)
    out: list[np.ndarray] = []
    for _ in range(games):
        traj = game_states(eng, int(rnd.integers(2**31)))
        last_choice = [i for i, s in enumerate(traj) if s[K.CUR] == n - 1]
        known = max(range(len(traj) - 1), key=lambda i: traj[i][L.KNOWN:L.KNOWN + n].sum())
        rare = [0, int(rnd.choice(last_choice)), known, len(traj) - 2, len(traj) - 1]
        out += [traj[i] for i in rare]
        out += [traj[i] for i in sorted(rnd.choice(len(traj), per_game, replace=False))]
    return out


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


def hidden_places(eng: Engine, state: np.ndarray, observer: int) -> np.ndarray:
    """State indices ``observer`` cannot see: unknown draw cards, other seats' pending
    choices and the RNG words."""
    return np.concatenate([[K.RNG_LO, K.RNG_HI], *hidden_split(eng, state, observer)])


def assert_keeps_view(eng: Engine, state: np.ndarray, out: np.ndarray, observer: int) -> None:
    """``out`` is consistent and ``observer`` sees it exactly as ``state``; only what it cannot
    see differs."""
    g = eng.game
    g.check_state(out)
    assert np.array_equal(eng.observe(out, observer), eng.observe(state, observer))
    if eng.current_player(state) == observer:
        assert np.array_equal(eng.legal_mask(out), eng.legal_mask(state))
    assert g.state_dict(out, observer=observer) == g.state_dict(state, observer=observer)
    public = np.ones(state.size, bool)
    public[hidden_places(eng, state, observer)] = False
    assert np.array_equal(out[public], state[public])


# =============================================================================================
# 1-2. Consistency, the observer's view, independence from hidden information
# =============================================================================================
@pytest.mark.parametrize("opts", OPTIONS, ids=OPT_IDS)
def test_determinize_keeps_view_and_ignores_hidden(opts: dict) -> None:
    eng = engine(opts)
    n = eng.num_players
    gen = np.random.default_rng(n)
    changed = pending = 0
    for state in positions(eng, seed=11 * n + len(opts)):
        before = state.copy()
        for obs in range(n):
            pending += len(pending_hidden(state, obs))
            for seed in gen.integers(0, 2**64, size=2, dtype=np.uint64):
                out = det(eng, state, obs, int(seed))
                assert_keeps_view(eng, state, out, obs)
                assert np.array_equal(det(eng, state, obs, int(seed)), out), "a function of rng"
                # another arrangement of what ``obs`` cannot see, with another state RNG
                other = ref_resample(eng.game, state, obs, gen)
                K.rng_seed(other, gen.integers(0, 2**64, dtype=np.uint64))
                changed += not np.array_equal(other, state)
                assert np.array_equal(det(eng, other, obs, int(seed)), out), \
                    f"seat {obs}'s determinization read hidden information"
        assert np.array_equal(state, before), "the input state is not written"
    assert changed > 0 and pending > 0


@pytest.mark.parametrize("opts", OPTIONS[:3], ids=OPT_IDS[:3])
def test_resample_is_the_kernel_seeded_from_the_generator(opts: dict) -> None:
    eng = engine(opts)
    assert eng.game.k_determinize is determinize, "the batched search's kernel is this one"
    for state in positions(eng, seed=3, games=1, per_game=4):
        for obs in range(eng.num_players):
            out = resample(eng.game, state, obs, np.random.default_rng(obs))
            seed = np.random.default_rng(obs).integers(0, 2**64, size=1, dtype=np.uint64)[0]
            assert np.array_equal(out, det(eng, state, obs, int(seed)))
            assert_keeps_view(eng, state, eng.resample(state, obs, obs), obs)


def test_rng_words_come_from_rng() -> None:
    """The output's RNG words are the first draw of ``rng``; the state's own RNG is unread."""
    eng = engine(OPTIONS[1])
    state = eng.new_state(4)
    for seed in (0, 1, 2**63 + 5):
        r = np.array([seed], np.uint64)
        expect = np.zeros(2, np.int32)
        K.rng_seed(expect, K.draw(r))
        assert det(eng, state, 1, seed)[K.RNG_LO:K.RNG_HI + 1].tolist() == expect.tolist()


# =============================================================================================
# 3. Distribution against the reference and the exact law
# =============================================================================================
DRAWS = 3000
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


def _max_z(p: np.ndarray, q: np.ndarray, var: np.ndarray) -> float:
    """Largest |p - q| in units of its standard deviation (floored at one draw's worth)."""
    sd = np.sqrt(np.maximum(var, 0.25 / DRAWS**2))
    return float((np.abs(p - q) / sd).max()) if p.size else 0.0


def _two_sample_z(a: np.ndarray, b: np.ndarray) -> float:
    """:func:`_max_z` of two samples' frequencies (``DRAWS`` each), pooled variance."""
    p = (a + b) / 2
    return _max_z(a, b, 2 * p * (1 - p) / DRAWS)


def _exact_z(s: np.ndarray, e: np.ndarray) -> float:
    return _max_z(s, e, e * (1 - e) / DRAWS)


def _samples(case: tuple) -> tuple[Engine, np.ndarray, int, np.ndarray, np.ndarray]:
    """The case's engine, position, observer, and ``DRAWS`` draws of the kernel and of the
    reference."""
    opts, seed, observer, ok = case
    eng = engine(opts)
    state = find(opts, seed, ok)
    seeds = np.random.default_rng(seed).integers(0, 2**64, size=DRAWS, dtype=np.uint64)
    mine = np.stack([det(eng, state, observer, int(s)) for s in seeds])
    gen = np.random.default_rng(seed + 100)
    ref = np.stack([ref_resample(eng.game, state, observer, gen) for _ in range(DRAWS)])
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
    for key, e in _exact(eng, state, observer).items():
        bound = z_bound(e.size)
        z = _two_sample_z(a[key], b[key])
        assert z < bound, f"{key}: kernel and reference differ by {z:.1f} sd (bound {bound:.1f})"
        for name, s in (("kernel", a), ("reference", b)):
            z = _exact_z(s[key], e)
            assert z < bound, f"{key}: {name} off the exact law by {z:.1f} sd (bound {bound:.1f})"


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
    assert _two_sample_z(w["place"], r["place"]) < z_bound(w["place"].size), "same marginals"
    assert _exact_z(w["count"], exact["count"]) > 3 * z_bound(w["count"].size)
    assert _exact_z(o["place"], exact["place"]) > 3 * z_bound(o["place"].size)


# =============================================================================================
# 4. Random positions (hypothesis)
# =============================================================================================
@hyp(40)
@given(seed=st.integers(0, 2**31 - 1), opts=st.sampled_from(OPTIONS), frac=st.floats(0, 1),
       observer=st.integers(0, 5), rng_value=st.integers(0, 2**64 - 1))
def test_determinize_random_positions(seed, opts, frac, observer, rng_value):
    eng = engine(opts)
    traj = game_states(eng, seed)
    state = traj[int(frac * (len(traj) - 1))]
    observer %= eng.num_players
    out = det(eng, state, observer, rng_value)
    assert_keeps_view(eng, state, out, observer)
    other = ref_resample(eng.game, state, observer, np.random.default_rng(seed))
    K.rng_seed(other, np.uint64(seed))
    assert np.array_equal(det(eng, other, observer, rng_value), out)
