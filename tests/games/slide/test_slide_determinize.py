"""Slide's compiled determinization (``card_envs.slide.statedict.determinize``, the kernel behind
``resample``) against the numpy reference it replaced (``ref_resample`` in ``slide_ref.py``).

For every seat count, the game's options and positions of every kind (a fresh deal, reveal
phases with every number of pending choices, the last rounds, the end), and every seat as the
observer: the output is a consistent state that looks the same to the observer (observation,
mask, state dict); it changes nothing the observer knows; it depends only on what the observer
knows and on the ``rng`` value (two states that differ in hidden values, other seats' pending
choices or the state's own RNG give the same bytes); and over thousands of draws it has the
reference's distribution (each hidden place's value, each pending choice, and the joint count of
each value over all hidden places).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from card_envs import Engine
from card_envs.core import kernels as K
from card_envs.slide import layout as L
from card_envs.slide.statedict import determinize, resample
from determinize_kit import (
    DRAWS,
    DeterminizeKit,
    assert_same_law,
    game_moments,
    game_states,
    hyp,
    random_moments,
    two_sample_z,
)
from slide_ref import ENV_ID, ref_resample

#: options covering every seat count, both start rules and both reward modes (the manifest's
#: test cases among them)
OPTIONS = (
    {"num_players": 2},
    {"num_players": 3, "start_player": "random"},
    {"num_players": 4, "start_player": 2, "reward_mode": "points"},
    {"num_players": 5, "start_player": "random"},
    {"num_players": 6, "reward_mode": "points"},
    {"num_players": 6, "start_player": "random"},
)
OPT_IDS = [f"{o['num_players']}p-{o.get('start_player', 0)}-{o.get('reward_mode', 'win')}"
           for o in OPTIONS]


def positions(eng: Engine, seed: int, games: int = 2, per_game: int = 10) -> list[np.ndarray]:
    """Random moments of ``games`` random games, plus in each: the deal, the last reveal of
    rounds 0, 14 and 15 (every other seat's choice pending), the first pick of the last round,
    the last pick and the end."""
    n = eng.num_players

    def rare(traj: list[np.ndarray], rnd: np.random.Generator) -> list[int]:
        return [0, n - 1, 14 * 2 * n + n - 1, 15 * 2 * n + n - 1, 15 * 2 * n + n,
                len(traj) - 2, len(traj) - 1]

    return game_moments(game_states, eng, seed, games, per_game, rare)


def hidden_split(eng: Engine, state: np.ndarray, observer: int
                 ) -> tuple[np.ndarray, np.ndarray]:
    """State indices of the face-down values and of the other seats' pending reveals."""
    n = eng.num_players
    i = np.arange(L.SLOTS * n)
    down = L.GRID + i[(state[L.GRID + i] > 0) & (state[L.FACE + i] == 0)]
    pend = np.array([L.REVEAL + q for q in range(n) if state[K.PHASE] == L.P_REVEAL
                     and q != observer and state[L.REVEAL + q] >= 0], int)
    return down, pend


KIT = DeterminizeKit(ENV_ID, determinize, ref_resample, hidden_split)
engine = KIT.engine


# =============================================================================================
# 1-2. Consistency, the observer's view, independence from hidden information
# =============================================================================================
@pytest.mark.parametrize("opts", OPTIONS, ids=OPT_IDS)
def test_determinize_keeps_view_and_ignores_hidden(opts: dict) -> None:
    eng = engine(opts)
    KIT.check_keeps_view_and_ignores_hidden(
        eng, positions(eng, seed=11 * eng.num_players + len(opts)),
        np.random.default_rng(eng.num_players))


@pytest.mark.parametrize("opts", OPTIONS[:3], ids=OPT_IDS[:3])
def test_resample_is_the_kernel_seeded_from_the_generator(opts: dict) -> None:
    eng = engine(opts)
    KIT.check_resample_is_the_kernel(eng, resample, positions(eng, seed=3, games=1, per_game=4))


def test_rng_words_come_from_rng() -> None:
    eng = engine({"num_players": 3})
    KIT.check_rng_words(eng, eng.new_state(4))


# =============================================================================================
# 3. Distribution against the reference
# =============================================================================================
Z = 5.0  # bound on a cell's z-score: false failures ~1e-6 per cell, and the seeds are fixed


def _pos(opts: dict, seed: int, step: int) -> np.ndarray:
    return game_states(engine(opts), seed)[step]


#: (options, game seed, steps played, observer): reveal phases with pending choices (round 0
#: with nothing seen, a middle round, round 14 with two face-down cards a seat) and pick phases
DIST_CASES = (
    ({"num_players": 2}, 1, 1, 1),
    ({"num_players": 3, "start_player": "random"}, 2, 2 * 3 * 7 + 4, 0),
    ({"num_players": 4, "start_player": 2, "reward_mode": "points"}, 3, 2 * 4 * 8 + 3, 1),
    ({"num_players": 6}, 4, 2 * 6 * 14 + 5, 5),
    ({"num_players": 5}, 5, 2 * 5 * 3 + 2, 2),
)


def _stats(eng: Engine, state: np.ndarray, outs: np.ndarray, observer: int
           ) -> dict[str, np.ndarray]:
    """Per draw (rows of ``outs``) one-hot codes of: the value at each hidden place, each
    pending seat's chosen slot, and how many hidden places hold each value."""
    down, pend = hidden_split(eng, state, observer)
    vals = outs[:, down]  # (draws, places), values 1-10
    per_value = np.stack([(vals == v).sum(1) for v in range(1, L.NUM_VALUES + 1)], 1)
    return {
        "place": np.eye(L.NUM_VALUES + 1)[vals].mean(0),  # (places, 11)
        "pending": np.eye(L.SLOTS)[outs[:, pend]].mean(0),  # (seats, 16)
        "count": np.eye(L.MAX_PLAYERS * L.SLOTS + 1)[per_value].mean(0),  # (values, 97)
    }


def _value_law(eng: Engine, state: np.ndarray, observer: int) -> np.ndarray:
    """The law of one hidden value (1-10): the unseen copies of each, from the observation."""
    t = L.obs_tail(eng.num_players)
    unseen = eng.observe(state, observer)[t + L.OBS_UNSEEN:t + L.OBS_UNSEEN + L.NUM_VALUES]
    return unseen / unseen.sum()


def _exact(eng: Engine, state: np.ndarray, observer: int) -> dict[str, np.ndarray]:
    """The exact marginals: a hidden place holds ``v`` with probability unseen(v) / unseen;
    a pending choice is uniform over its seat's face-down slots."""
    down, reveals = hidden_split(eng, state, observer)
    place = np.zeros((down.size, L.NUM_VALUES + 1))
    place[:, 1:] = _value_law(eng, state, observer)
    pend = []
    for r in reveals:
        q = r - L.REVEAL
        face = state[L.FACE + q * L.SLOTS:L.FACE + (q + 1) * L.SLOTS]
        pend.append((face == 0) / (face == 0).sum())
    return {"place": place, "pending": np.array(pend).reshape(-1, L.SLOTS)}


@pytest.mark.parametrize("case", DIST_CASES, ids=[f"{c[0]['num_players']}p" for c in DIST_CASES])
def test_distribution_matches_reference(case: tuple) -> None:
    opts, seed, step, observer = case
    eng = engine(opts)
    state = _pos(opts, seed, step)
    mine = KIT.kernel_sample(eng, state, observer, seed)
    ref = KIT.reference_sample(eng, state, observer, np.random.default_rng(seed + 100))
    a, b = _stats(eng, state, mine, observer), _stats(eng, state, ref, observer)
    assert a["place"].shape[0] > 0
    if state[K.PHASE] == L.P_REVEAL:
        assert a["pending"].shape[0] > 0, "the reveal cases have pending choices"
    # kernel against reference, each sample against the exact marginals
    assert_same_law(a, b, _exact(eng, state, observer), lambda cells: Z)


def test_distribution_test_detects_drawing_with_replacement() -> None:
    """The joint statistic tells a draw with replacement from the reference (the marginals
    alone could not): guards the test above against being too weak."""
    opts, seed, step, observer = DIST_CASES[3]
    eng = engine(opts)
    state = _pos(opts, seed, step)
    gen = np.random.default_rng(0)
    down, _ = hidden_split(eng, state, observer)
    wrong = np.repeat(state[None], DRAWS, 0)
    wrong[:, down] = gen.choice(np.arange(1, L.NUM_VALUES + 1), size=(DRAWS, down.size),
                                p=_value_law(eng, state, observer))
    ref = KIT.reference_sample(eng, state, observer, gen)
    a, b = _stats(eng, state, wrong, observer), _stats(eng, state, ref, observer)
    assert two_sample_z(a["place"], b["place"]) < Z, "same marginals"
    assert two_sample_z(a["count"], b["count"]) > Z


# =============================================================================================
# 4. Random positions (hypothesis)
# =============================================================================================
@hyp(40)
@given(**random_moments(L.MAX_PLAYERS, opts=st.sampled_from(OPTIONS)))
def test_determinize_random_positions(seed, opts, frac, observer, rng_value):
    eng = engine(opts)
    KIT.check_random_moment(eng, game_states(eng, seed), frac, observer, rng_value, seed)
