"""What the games' determinization tests share (``tests/games/<game>/test_<game>_determinize.py``):
each tests its compiled ``statedict.determinize`` kernel (the twin of ``resample``, run with a
given ``rng`` value) against the Python/numpy ``ref_resample`` it replaced.

A test file makes one :class:`DeterminizeKit` (the game, its kernel, its reference, the state
indices an observer cannot see) and keeps its own options, positions, statistics and special
cases. The kit holds the engines, the kernel's call, the check that an output looks the same to
the observer, the checks every game runs the same way (the view kept and hidden information
ignored, ``resample`` is the kernel seeded from the generator, the RNG words come from ``rng``,
a hypothesis position), random games, position samplers (:func:`positions_by_phase` also serves
``tests/core/test_resample.py``) and the z-scores of the distribution tests.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from card_envs import Engine
from card_envs.core import kernels as K

DRAWS = 3000  # draws per sampler in the distribution tests

Rng = np.random.Generator | random.Random


def hyp(max_examples: int) -> settings:
    """Hypothesis settings of the random-position tests: no deadline (first calls compile), no
    example database (nothing written to the tree)."""
    return settings(max_examples=max_examples, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def random_moments(max_players: int, **cases: st.SearchStrategy) -> dict[str, st.SearchStrategy]:
    """``@given`` arguments of a random-position test (see
    :meth:`DeterminizeKit.check_random_moment`): a game seed, where in the game (``frac``: 0 the
    deal, 1 the end), an observer (taken mod the seats), an rng value, and the game's options as
    ``cases`` names them."""
    return {"seed": st.integers(0, 2**31 - 1), "frac": st.floats(0, 1),
            "observer": st.integers(0, max_players - 1), "rng_value": st.integers(0, 2**64 - 1),
            **cases}


# =============================================================================================
# Engines and games
# =============================================================================================
_ENGINES: dict[tuple[str, str], Engine] = {}


def engine(env_id: str, opts: dict[str, Any]) -> Engine:
    """The engine of ``env_id`` with ``opts``, made once per process (keyed by the options'
    repr: a custom deck is a dict, not hashable)."""
    key = (env_id, repr(sorted(opts.items())))
    if key not in _ENGINES:
        _ENGINES[key] = Engine(env_id, **opts)
    return _ENGINES[key]


def random_action(eng: Engine, state: np.ndarray, rnd: Rng) -> int:
    """A uniform legal action (``rnd``: a numpy Generator or a ``random.Random``)."""
    return int(rnd.choice(eng.legal_actions(state)))


def game_states(eng: Engine, seed: int, rnd: Rng | None = None,
                choose: Callable[[Engine, np.ndarray, Any], int] = random_action
                ) -> list[np.ndarray]:
    """Every state of one game dealt from ``seed``, the deal to the end (index = steps played),
    each action ``choose(eng, state, rnd)`` (``rnd``: ``np.random.default_rng(seed)`` unless
    given)."""
    rnd = np.random.default_rng(seed) if rnd is None else rnd
    s = eng.new_state(seed)
    out = [s.copy()]
    while not eng.is_terminal(s):
        eng.step(s, choose(eng, s, rnd))
        out.append(s.copy())
    return out


def game_moments(play: Callable[[Engine, int], list[np.ndarray]], eng: Engine, seed: int,
                 games: int, per_game: int,
                 rare: Callable[[list[np.ndarray], np.random.Generator], list[int]]
                 ) -> list[np.ndarray]:
    """Moments of ``games`` games (``play(eng, seed)``: every state of one): in each, the steps
    ``rare(states, rnd)`` picks (the positions random moments seldom hit), then ``per_game``
    random ones."""
    rnd = np.random.default_rng(seed)
    out: list[np.ndarray] = []
    for _ in range(games):
        traj = play(eng, int(rnd.integers(2**31)))
        out += [traj[i] for i in rare(traj, rnd)]
        out += [traj[i] for i in sorted(rnd.choice(len(traj), per_game, replace=False))]
    return out


def positions_by_phase(eng: Engine, seed: int | str, games: int, per_phase: int,
                       want: set[str] | None = None, max_games: int | None = None
                       ) -> dict[str, list[np.ndarray]]:
    """Up to ``per_phase`` running positions of every phase met in ``games`` uniformly random
    games, taken at random moments (reservoir-sampled per phase), so that short phases a game
    passes through once are checked as often as the long ones. While a phase of ``want`` (every
    phase but the end unless given) is missing, more games are played, up to ``max_games`` (5x
    ``games`` unless given)."""
    rnd = random.Random(seed)
    kept: dict[str, list[np.ndarray]] = defaultdict(list)
    seen: dict[str, int] = defaultdict(int)
    want = set(eng.game.phases) - {"end"} if want is None else want
    for played in range(5 * games if max_games is None else max_games):
        if played >= games and want <= set(kept):
            break
        st = eng.new_state(rnd.randrange(2**31))
        while not eng.is_terminal(st):
            ph = eng.game.phase_name(st)
            seen[ph] += 1
            if len(kept[ph]) < per_phase:
                kept[ph].append(st.copy())
            else:
                j = rnd.randrange(seen[ph])
                if j < per_phase:
                    kept[ph][j] = st.copy()
            eng.step(st, rnd.choice(eng.legal_actions(st)))
    return kept


# =============================================================================================
# The kernel and the checks every game runs alike
# =============================================================================================
def assert_same_view(eng: Engine, state: np.ndarray, out: np.ndarray, observer: int) -> None:
    """``out`` is consistent (``check_state``) and looks like ``state`` to ``observer``:
    observation, legal mask when it acts, ``state_dict(observer=...)``."""
    g = eng.game
    where = f"{g.phase_name(state)!r}, seat {observer}"
    try:
        g.check_state(out)
    except Exception as e:  # pragma: no cover - the failure message is the point
        raise AssertionError(f"{where}: determinize broke check_state: {e}") from e
    assert np.array_equal(eng.observe(out, observer), eng.observe(state, observer)), \
        f"{where}: the observation changed"
    if eng.current_player(state) == observer:
        assert np.array_equal(eng.legal_mask(out), eng.legal_mask(state)), \
            f"{where}: the legal mask changed"
    assert g.state_dict(out, observer=observer) == g.state_dict(state, observer=observer), \
        f"{where}: the state dict seen by the seat changed"


@dataclass(frozen=True)
class DeterminizeKit:
    """One game's determinization under test: ``kernel(state, cfg, observer, out, rng)`` (the
    compiled ``statedict.determinize``), ``reference(game, state, observer, generator)`` (the
    ``ref_resample`` it replaced) and, where the test knows them, ``hidden(eng, state,
    observer)``: the state indices ``observer`` cannot see besides the RNG words, an index array
    or a tuple of them (nothing else may change). A subclass adds a game's own view checks by
    extending :meth:`assert_keeps_view`; the checks below call it."""

    env_id: str
    kernel: Callable[..., None]
    reference: Callable[..., np.ndarray]
    hidden: Callable[[Engine, np.ndarray, int], np.ndarray | tuple[np.ndarray, ...]] | None = None

    def engine(self, opts: dict[str, Any]) -> Engine:
        return engine(self.env_id, opts)

    def det(self, eng: Engine, state: np.ndarray, observer: int, seed: int) -> np.ndarray:
        """The kernel's determinization of ``state`` for ``observer`` with the rng value
        ``seed``."""
        out = np.empty_like(state)
        self.kernel(state, eng.game.cfg, observer, out, np.array([seed], np.uint64))
        return out

    def assert_keeps_view(self, eng: Engine, state: np.ndarray, out: np.ndarray,
                          observer: int) -> None:
        """:func:`assert_same_view`, and only what ``observer`` cannot see differs (with
        ``hidden``)."""
        assert_same_view(eng, state, out, observer)
        if self.hidden is not None:
            hidden = self.hidden(eng, state, observer)
            public = np.ones(state.size, bool)
            public[[K.RNG_LO, K.RNG_HI]] = False
            for idx in hidden if isinstance(hidden, tuple) else (hidden,):
                public[idx] = False
            assert np.array_equal(out[public], state[public]), \
                f"seat {observer}: determinize changed what it can see"

    def check_keeps_view_and_ignores_hidden(self, eng: Engine, states: Iterable[np.ndarray],
                                            gen: np.random.Generator, seeds: int = 2) -> None:
        """For every state and observer, ``seeds`` rng values drawn from ``gen``: the output
        keeps the observer's view, is a function of the rng value, and is the same bytes for
        another arrangement of what the observer cannot see (the reference's, with another
        state RNG); the input state is not written; some of those arrangements differ from the
        state past the header."""
        changed = 0
        for state in states:
            before = state.copy()
            for obs in range(eng.num_players):
                for seed in gen.integers(0, 2**64, size=seeds, dtype=np.uint64):
                    out = self.det(eng, state, obs, int(seed))
                    self.assert_keeps_view(eng, state, out, obs)
                    assert np.array_equal(self.det(eng, state, obs, int(seed)), out), \
                        "a function of rng"
                    # another arrangement of what ``obs`` cannot see, with another state RNG
                    other = self.reference(eng.game, state, obs, gen)
                    K.rng_seed(other, gen.integers(0, 2**64, dtype=np.uint64))
                    changed += not np.array_equal(other[K.HEADER:], state[K.HEADER:])
                    assert np.array_equal(self.det(eng, other, obs, int(seed)), out), \
                        f"seat {obs}'s determinization read hidden information"
            assert np.array_equal(state, before), "the input state is not written"
        assert changed > 0, "the reference never rearranged what a seat cannot see"

    def check_resample_is_the_kernel(self, eng: Engine, resample: Callable[..., np.ndarray],
                                     states: Iterable[np.ndarray]) -> None:
        """The game hands this kernel to the batched search (``game.k_determinize``);
        ``resample(game, state, observer, generator)`` (the game's ``statedict.resample``, also
        ``game.resample``) is the kernel with the rng value the generator draws first; the
        engine's ``resample`` keeps the view."""
        g = eng.game
        assert g.k_determinize is self.kernel, "the batched search's kernel is this one"
        for state in states:
            for obs in range(eng.num_players):
                out = resample(g, state, obs, np.random.default_rng(obs))
                seed = np.random.default_rng(obs).integers(0, 2**64, dtype=np.uint64)
                assert np.array_equal(out, self.det(eng, state, obs, int(seed))), \
                    f"seat {obs}: resample is not the kernel with the generator's first draw"
                assert np.array_equal(out, g.resample(state, obs, np.random.default_rng(obs))), \
                    f"seat {obs}: game.resample is not this resample"
                self.assert_keeps_view(eng, state, eng.resample(state, obs, obs), obs)

    def check_rng_words(self, eng: Engine, state: np.ndarray, observer: int = 1) -> None:
        """The output's RNG words are the first draw of ``rng``; the state's own RNG is
        unread."""
        for seed in (0, 1, 2**63 + 5):
            r = np.array([seed], np.uint64)
            expect = np.zeros(2, np.int32)
            # np.uint64: a Python int past 2**63 can pick an int64 signature already compiled
            # (OverflowError: int too big to convert)
            K.rng_seed(expect, np.uint64(K.draw(r)))
            out = self.det(eng, state, observer, seed)
            assert out[K.RNG_LO:K.RNG_HI + 1].tolist() == expect.tolist(), \
                f"rng {seed}: RNG words {out[K.RNG_LO:K.RNG_HI + 1].tolist()} != {expect.tolist()}"

    def check_random_moment(self, eng: Engine, traj: list[np.ndarray], frac: float,
                            observer: int, rng_value: int, seed: int) -> None:
        """The hypothesis test's body: at the moment ``frac`` of the game ``traj``, the output
        for ``observer`` (mod the seats) keeps its view and is the same bytes for the
        reference's arrangement of what it cannot see (reseeded)."""
        state = traj[int(frac * (len(traj) - 1))]
        observer %= eng.num_players
        out = self.det(eng, state, observer, rng_value)
        self.assert_keeps_view(eng, state, out, observer)
        other = self.reference(eng.game, state, observer, np.random.default_rng(seed))
        K.rng_seed(other, np.uint64(seed))
        assert np.array_equal(self.det(eng, other, observer, rng_value), out), \
            f"seat {observer}'s determinization read hidden information"

    # --- samples for the distribution tests --------------------------------------------------
    def kernel_sample(self, eng: Engine, state: np.ndarray, observer: int, seed: int,
                      draws: int = DRAWS) -> np.ndarray:
        """``draws`` outputs (rows) of the kernel, with the rng values of
        ``np.random.default_rng(seed)``."""
        seeds = np.random.default_rng(seed).integers(0, 2**64, size=draws, dtype=np.uint64)
        return np.stack([self.det(eng, state, observer, int(s)) for s in seeds])

    def reference_sample(self, eng: Engine, state: np.ndarray, observer: int,
                         gen: np.random.Generator, draws: int = DRAWS) -> np.ndarray:
        """``draws`` outputs (rows) of the reference, drawing from ``gen``."""
        return np.stack([self.reference(eng.game, state, observer, gen) for _ in range(draws)])


# =============================================================================================
# z-scores of frequencies
# =============================================================================================
def max_z(p: np.ndarray, q: np.ndarray, var: np.ndarray, draws: int = DRAWS) -> float:
    """Largest |p - q| in units of its standard deviation (floored at one draw's worth)."""
    sd = np.sqrt(np.maximum(var, 0.25 / draws**2))
    return float((np.abs(p - q) / sd).max()) if p.size else 0.0


def two_sample_z(a: np.ndarray, b: np.ndarray, draws: int = DRAWS) -> float:
    """:func:`max_z` of two samples' frequencies (``draws`` each), pooled variance."""
    p = (a + b) / 2
    return max_z(a, b, 2 * p * (1 - p) / draws, draws)


def exact_z(s: np.ndarray, e: np.ndarray, draws: int = DRAWS) -> float:
    """:func:`max_z` of a sample's frequencies (``draws``) against the exact law ``e``."""
    return max_z(s, e, e * (1 - e) / draws, draws)


def assert_same_law(kernel: dict[str, np.ndarray], ref: dict[str, np.ndarray],
                    exact: dict[str, np.ndarray], bound: Callable[[int], float]) -> None:
    """Each statistic (frequencies, by name) of the kernel's sample is within ``bound(cells)``
    sd of the reference's, and each of both samples within it of the exact law where known."""
    for key in kernel:
        b = bound(kernel[key].size)
        z = two_sample_z(kernel[key], ref[key])
        assert z < b, f"{key}: kernel and reference differ by {z:.1f} sd (bound {b:.1f})"
    for key, e in exact.items():
        b = bound(e.size)
        for name, s in (("kernel", kernel), ("reference", ref)):
            z = exact_z(s[key], e)
            assert z < b, f"{key}: {name} off the exact law by {z:.1f} sd (bound {b:.1f})"
