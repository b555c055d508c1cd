"""The shared checks of :mod:`card_envs.testing`, run for every registered game configuration
(the ``test_cases`` of every manifest, the test-only toy game included: ``conftest.py``
registers it)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import card_envs
from card_envs import OptionError
from card_envs import testing as T
from card_envs.testing import Case, cases, digest

CASES = cases()
FIRST = {c.env_id: c for c in reversed(CASES)}  # one case per game for the costlier checks
IDS = [c.id for c in CASES]
FIRST_IDS = list(FIRST)

each_case = pytest.mark.parametrize("case", CASES, ids=IDS)
first_cases = pytest.mark.parametrize("case", list(FIRST.values()), ids=FIRST_IDS)
FUZZ = settings(max_examples=15, deadline=None,
                suppress_health_check=[HealthCheck.too_slow])


def test_registry_lists_every_game_once() -> None:
    ids = card_envs.env_ids()
    assert len(set(ids)) == len(ids) and set(card_envs.ENV_IDS) <= set(ids)
    assert set(FIRST) == set(ids), "every registered game needs a test case"
    for m in card_envs.core.registry.manifests():
        assert card_envs.manifest(m.name) is m and card_envs.resolve_env_id(m.name) == m.env_id
    with pytest.raises(OptionError, match="unknown game"):
        card_envs.make("nope_v0")


def test_module_style_import() -> None:
    from card_envs import slide_v0

    env = slide_v0.env()
    env.reset(seed=0)
    assert env.agents == ["player_0", "player_1"]


@each_case
@pytest.mark.parametrize("check", T.PER_CASE, ids=lambda c: c.__name__)
def test_per_case(case: Case, check) -> None:
    check(case)


@each_case
def test_bad_actions_wrapped(case: Case) -> None:
    T.check_bad_actions(case, wrapped=True)


@first_cases
@pytest.mark.parametrize("check", T.PER_GAME, ids=lambda c: c.__name__)
def test_per_game(case: Case, check) -> None:
    check(case)


@each_case
@FUZZ
@given(seed=st.integers(0, 2**31 - 1))
def test_random_play(case: Case, seed: int) -> None:
    T.check_random_play(case, seed)


@each_case
@FUZZ
@given(seed=st.integers(0, 2**31 - 1), k=st.integers(0, 200))
def test_state_dict_round_trip_mid_game(case: Case, seed: int, k: int) -> None:
    T.check_state_dict_round_trip(case, seed, k)


@each_case
@FUZZ
@given(seed=st.integers(0, 2**31 - 1), k=st.integers(0, 150))
def test_hidden_information_invariance(case: Case, seed: int, k: int) -> None:
    T.check_hidden_information(case, seed, k)


def test_check_game_runs_everything() -> None:
    """The one-call entry point a user runs on a variant."""
    T.check_game("slide_v0", {"num_players": 3}, seeds=1, processes=False)


def test_checks_fail_on_a_broken_game(monkeypatch: pytest.MonkeyPatch) -> None:
    """The kit is not a tautology: a resample that leaks the observer's own hand fails it."""
    from toy_cards.game import ToyGame

    def leaky(self, state, observer, rng):  # shuffles every unplayed card, own hand included
        out = state.copy()
        import toy_cards.layout as L
        idx = [v for v in range(L.CARDS) if out[L.PLAYED + v] < 0 and out[L.OWNER + v] >= 0]
        out[[L.OWNER + v for v in idx]] = rng.permutation(out[[L.OWNER + v for v in idx]])
        return out

    monkeypatch.setattr(ToyGame, "resample", leaky)
    with pytest.raises(AssertionError):
        for seed in range(20):
            T.check_hidden_information(Case("toy_v0"), seed, 1)


def test_runs_without_jit() -> None:
    """NUMBA_DISABLE_JIT=1 (debugging, coverage) runs the same engine as plain Python."""
    code = ("from card_envs.testing import digest; "
            "print(digest('slide_v0', {}, seed=5, games=1))")
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1"}
    out = subprocess.run([sys.executable, "-W", "ignore", "-c", code],
                         capture_output=True, text=True, env=env, check=True, timeout=300)
    assert out.stdout.strip() == digest("slide_v0", {}, seed=5, games=1)
