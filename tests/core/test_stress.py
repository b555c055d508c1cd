"""Stress tests (``make stress``, marker ``stress``): 10^6 random steps of the batched engine
and 10^5 AEC steps with heuristic and search agents per game variant (every ``CASES`` line of
``tests/testing/test_kit.py``), the parallel batched driver against the serial one, and a two-worker
arena per game. Each has a CI-sized twin without the marker, so the code paths run in
``make test`` too. The checks themselves live in ``tests/support/stress_lib.py``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import card_envs
from card_envs.arena import run_arena
from card_envs.core import kernels as K
from card_envs.testing import Case
from stress_lib import (
    agent_pool,
    arena_signature,
    check_arena,
    length_cap,
    one_numba_thread,
    run_aec,
    run_batched,
)
from test_kit import CASES, IDS

cases = pytest.mark.parametrize("case", CASES, ids=IDS)
stress = pytest.mark.stress

BATCH = 64  # serial driver (< vector.SERIAL_BELOW): no thread oversubscription under xdist
CI_BATCH = 8


def _report(case: Case, what: str, **figures: Any) -> None:
    """One line of figures per run (shown with ``pytest -s`` / in the captured output)."""
    print(f"{what} {case.id}: " + ", ".join(f"{k}={v}" for k, v in figures.items()))


def _batched(case: Case, steps: int, num_envs: int, sample_every: int) -> None:
    with one_numba_thread():
        st = run_batched(case.env_id, case.options, steps, num_envs, seed=1000 + steps,
                         sample_every=sample_every)
    _report(case, "batched", steps=st.steps, finished=st.finished, truncated=st.truncated,
            length=f"{st.min_len}..{st.max_len}/{st.cap}", state_checks=st.state_checks,
            final_checks=st.final_checks, rewarded=st.rewarded)
    assert st.steps >= steps and st.finished >= num_envs
    assert st.state_checks >= st.steps // (num_envs * sample_every)
    assert st.final_checks == st.finished
    if case.env_id == "slide_v0":  # Slide's length is fixed by its rules
        assert st.min_len == st.max_len == st.cap
    if case.env_id == "op_glad_ijs_v0" and "max_turned" not in case.options:
        assert st.truncated > 0, "random play reaches the 1,000-card cut-off"


def _aec(case: Case, steps: int, check_every: int) -> None:
    st = run_aec(case.env_id, case.options, steps, seed=steps, check_every=check_every)
    _report(case, "aec", steps=st.steps, games=st.games, truncated=st.truncated,
            max_len=st.max_len, state_checks=st.state_checks, moves=dict(st.moves))
    assert st.steps >= steps and st.games >= 1
    assert st.state_checks >= st.steps // check_every
    assert set(st.moves) == set(agent_pool(case.env_id)), "every agent kind played"


# --- 1. the batched engine -------------------------------------------------------------------
@stress
@cases
def test_batched_random_play_stress(case: Case) -> None:
    """10^6 steps (64 games, each until at least one of its games ended), ~3,900 sampled
    check_state calls plus one per finished game."""
    _batched(case, 10**6, BATCH, sample_every=4)


@cases
def test_batched_random_play(case: Case) -> None:
    _batched(case, 10**4, CI_BATCH, sample_every=4)


def _parallel_matches_serial(env_id: str, options: dict[str, Any], steps: int,
                             monkeypatch: pytest.MonkeyPatch) -> int:
    """The parallel build (numba ``prange``, ``num_envs >= SERIAL_BELOW``) and the serial
    build give the same games, step for step; returns the games finished."""
    B = 2 * card_envs.vector.SERIAL_BELOW
    par = card_envs.vector.make(env_id, num_envs=B, seed=5, **options)
    monkeypatch.setattr(card_envs.vector, "SERIAL_BELOW", B + 1)
    ser = card_envs.vector.make(env_id, num_envs=B, seed=5, **options)
    assert par._step_k is not ser._step_k, "one of the two must be the parallel build"
    par.fix_threads(2)  # really run on two threads (at most numba's count for this thread)
    assert np.array_equal(par.states, ser.states)
    finished = 0
    for _ in range(-(-steps // B)):
        a = par.sample_actions().copy()
        b = ser.sample_actions().copy()
        assert np.array_equal(a, b), "the parallel sampler drew other actions"
        out_p = par.step(a)
        out_s = ser.step(b)
        for x, y in zip(out_p, out_s):
            assert np.array_equal(x, y)
        finished += int(out_p[4].sum() + out_p[5].sum())
    assert np.array_equal(par.states, ser.states)
    assert np.all(par.states[:, K.STEPS] < length_cap(par.game))
    return finished


@stress
@pytest.mark.parametrize("env_id", card_envs.ENV_IDS)
def test_parallel_driver_matches_serial_stress(env_id: str,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """2 x 10^5 steps of 256 games on two threads, compared output by output with the serial
    build (the game's last kit configuration)."""
    case = next(c for c in reversed(CASES) if c.env_id == env_id)
    assert _parallel_matches_serial(env_id, case.options, 2 * 10**5, monkeypatch) > 0


def test_parallel_driver_matches_serial(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _parallel_matches_serial("slide_v0", {"num_players": 3}, 5 * 10**4, monkeypatch) > 0


# --- 2. the AEC env with agents --------------------------------------------------------------
@stress
@cases
def test_aec_agents_stress(case: Case) -> None:
    """10^5 actions of random, heuristic and (cheap) search agents, ~2,000 check_state calls
    plus one per game."""
    _aec(case, 10**5, check_every=50)


@cases
def test_aec_agents(case: Case) -> None:
    _aec(case, 10**3, check_every=10)


# --- 3. the arena ----------------------------------------------------------------------------
# one configuration per game: 2 seats for a round-robin of the 3-agent pool (3 lineups),
# more seats for a table filled by the repeated pool; random start players where possible
ARENA_CASES = [
    ("slide_v0", 2, {}),
    ("isflak_v0", 4, {"start_player": "random"}),
    ("op_glad_ijs_v0", 3, {"start_player": "random", "two_animals": True, "max_turned": 80}),
    ("flipology_v0", 2, {"start_player": "random", "moon": True, "series": True}),
    ("if_it_fits_v0", 3, {"start_player": "random", "advanced": True}),
]
ARENA_POOL = ["random", "heuristic", "mcts:iterations=16,determinizations=4"]


def _arena(env_id: str, n: int, options: dict[str, Any], games: int, pool: list[str]) -> None:
    """A two-worker run is complete and consistent and equals the one-worker run (docs/arena.md:
    results do not depend on the number of workers for agents with ``iterations``)."""
    seed = 3
    two = run_arena(env_id, pool, games, num_players=n, seed=seed, progress=False, workers=2,
                    **options)
    assert two.workers == 2
    check_arena(two, env_id, options, pool, games, n, seed)
    one = run_arena(env_id, pool, games, num_players=n, seed=seed, progress=False, workers=1,
                    **options)
    assert one.workers == 1
    assert arena_signature(two) == arena_signature(one)
    print(f"arena {env_id}: {two.total_games} games, {two.elapsed:.1f} s with 2 workers, "
          f"{one.elapsed:.1f} s with 1")


@stress
@pytest.mark.parametrize("env_id,n,options", ARENA_CASES, ids=[c[0] for c in ARENA_CASES])
def test_arena_two_workers_stress(env_id: str, n: int, options: dict[str, Any]) -> None:
    _arena(env_id, n, options, games=50 * n, pool=ARENA_POOL)


def test_arena_two_workers() -> None:
    _arena("slide_v0", 2, {}, games=4, pool=["random", "heuristic",
                                            "mcts:iterations=4,determinizations=2"])
