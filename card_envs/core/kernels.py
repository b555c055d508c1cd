"""numba kernels shared by every game: the state header, the in-state RNG, shuffles and the
terminal reward rule.

Every game state is one 1-D ``int32`` array. Its first ``HEADER`` entries are common to all
games (see the constants below); the game's own fields follow. Keeping the RNG inside the state
makes a copy of the array a complete, independent copy of the game, chance included.
"""

from __future__ import annotations

import numpy as np

from card_envs.core.jit import njit

# --- state header (offsets into the int32 state array) -----------------------------------
RNG_LO = 0  # low 32 bits of the splitmix64 state
RNG_HI = 1  # high 32 bits
CUR = 2  # seat to act, -1 once the game is over
PHASE = 3  # game-specific phase code
DONE = 4  # 0 running, DONE_TERMINATED or DONE_TRUNCATED once the game is over
STEPS = 5  # actions applied since the deal
HEADER = 8  # first free slot for the game's own fields

DONE_TERMINATED = 1  # ended by the rules
DONE_TRUNCATED = 2  # cut off by a limit (PettingZoo truncation); scored as usual

# --- config header (offsets into the int32 config array) ---------------------------------
C_PLAYERS = 0
C_REWARD = 1  # reward mode code: REWARD_WIN, REWARD_POINTS, or game-specific codes >= 2
C_START = 2  # start seat, or -1 for a seeded random start
C_HEADER = 4  # first free slot for game-specific config

REWARD_WIN = 0
REWARD_POINTS = 1

# step status bits returned by a game's ``step`` kernel
ST_DONE = 1  # the game ended with this action
ST_REWARD = 2  # some reward of this step is non-zero
ST_TRUNC = 4  # with ST_DONE: the game was cut off (truncation), not ended by the rules

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_MASK32 = np.uint64(0xFFFFFFFF)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_S32 = np.uint64(32)
_S11 = np.uint64(11)


@njit(cache=True, inline="always")
def rng_seed(state: np.ndarray, seed: np.uint64) -> None:
    """Store a 64-bit seed as the state's RNG."""
    state[RNG_LO] = np.int32(np.uint32(seed & _MASK32))
    state[RNG_HI] = np.int32(np.uint32(seed >> _S32))


@njit(cache=True, inline="always")
def clear_keep_rng(state: np.ndarray) -> None:
    """Zero ``state`` except its RNG words: the start of dealing the next game from the RNG
    the last one left (the batched engine's auto-reset)."""
    lo = state[RNG_LO]
    hi = state[RNG_HI]
    state[:] = 0
    state[RNG_LO] = lo
    state[RNG_HI] = hi


@njit(cache=True)
def rng_next(state: np.ndarray) -> np.uint64:
    """splitmix64: advance the RNG held in the state header, return 64 random bits."""
    s = np.uint64(np.uint32(state[RNG_LO])) | (np.uint64(np.uint32(state[RNG_HI])) << _S32)
    s = s + _GOLDEN
    state[RNG_LO] = np.int32(np.uint32(s & _MASK32))
    state[RNG_HI] = np.int32(np.uint32(s >> _S32))
    z = s
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@njit(cache=True)
def rng_int(state: np.ndarray, n: int) -> int:
    """Uniform integer in ``[0, n)`` from the state's RNG (n >= 1; bias < 2**-40)."""
    return np.int64((rng_next(state) >> _S11) % np.uint64(n))


@njit(cache=True)
def shuffle_prefix(state: np.ndarray, a: np.ndarray, k: int) -> None:
    """Fisher-Yates: make ``a[:k]`` a uniform random draw (in random order) from all of ``a``."""
    n = a.shape[0]
    for i in range(min(k, n - 1)):
        j = i + rng_int(state, n - i)
        t = a[i]
        a[i] = a[j]
        a[j] = t


# --- a stand-alone RNG: a one-element uint64 array (determinizations, search) -------------
@njit(cache=True, inline="always")
def draw(rng: np.ndarray) -> np.uint64:
    """splitmix64 step of a one-element uint64 array: 64 random bits. Code that must not read
    a state's own RNG (a determinization drawing what a seat cannot see) draws from one of
    these."""
    z = rng[0] + _GOLDEN
    rng[0] = z
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@njit(cache=True)
def draw_below(rng: np.ndarray, n: int) -> int:
    """Uniform integer in ``[0, n)`` from :func:`draw` (n >= 1; bias < 2**-40)."""
    return np.int64((draw(rng) >> _S11) % np.uint64(n))


@njit(cache=True)
def draw_shuffle(rng: np.ndarray, a: np.ndarray, k: int) -> None:
    """Fisher-Yates with :func:`draw_below`: make ``a[:k]`` a uniform random draw (in random
    order) from all of ``a``."""
    n = a.shape[0]
    for i in range(min(k, n - 1)):
        j = i + draw_below(rng, n - i)
        t = a[i]
        a[i] = a[j]
        a[j] = t


@njit(cache=True, inline="always")
def rel_seat(q: int, seat: int, n: int) -> int:
    """Seat ``q`` as seen from ``seat`` (0 = itself, 1 = its left neighbour...); -1 stays -1."""
    if q < 0:
        return -1
    d = q - seat
    return d + n if d < 0 else d


@njit(cache=True)
def winners_by_keys(key1: np.ndarray, key2: np.ndarray, n: int, out: np.ndarray) -> None:
    """Mark the winners among seats ``0..n-1``: highest ``key1``, ties broken by highest
    ``key2``; seats still tied share the win. ``out`` gets 1 for a winner, 0 otherwise."""
    best1 = key1[0]
    for p in range(1, n):
        if key1[p] > best1:
            best1 = key1[p]
    best2 = -1e300
    for p in range(n):
        if key1[p] == best1 and key2[p] > best2:
            best2 = key2[p]
    for p in range(n):
        out[p] = 1 if (key1[p] == best1 and key2[p] == best2) else 0


@njit(cache=True)
def terminal_rewards(mode: int, score: np.ndarray, winners: np.ndarray, n: int,
                     out: np.ndarray) -> None:
    """Write the end-of-game rewards of the shared reward modes into ``out[:n]``.

    ``REWARD_WIN``: +1 per winner, -1 for everyone else, all 0 if every seat won.
    ``REWARD_POINTS``: ``score`` (game points signed so that higher is better)."""
    if mode == REWARD_POINTS:
        for p in range(n):
            out[p] = score[p]
        return
    nw = 0
    for p in range(n):
        nw += winners[p]
    for p in range(n):
        if nw == n:
            out[p] = 0.0
        elif winners[p]:
            out[p] = 1.0
        else:
            out[p] = -1.0
