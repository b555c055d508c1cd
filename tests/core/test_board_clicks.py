"""Every legal move of every game has a place on its picture (``view.clicks``): the play page
turns clicks on the board into moves with it. And ``view.result_text`` says how a game is won."""

from __future__ import annotations

import pytest

from card_envs.core.registry import ENV_IDS
from card_envs.testing.kit import Case, cases
from card_envs.testing.views import check_clicks, check_result_text, clicks_problems

GAMES = [*ENV_IDS, "toy_v0"]  # the built-in games and the test suite's toy game


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("env_id", GAMES)
def test_every_legal_move_has_a_click_path(env_id: str, seed: int) -> None:
    check_clicks(Case(env_id), seed)


@pytest.mark.parametrize("case", cases(ENV_IDS), ids=lambda c: c.id)
def test_every_configuration_has_click_paths(case: Case) -> None:
    check_clicks(case, 7)


@pytest.mark.parametrize("env_id", GAMES)
def test_result_text_names_the_winners(env_id: str) -> None:
    for seed in range(3):
        check_result_text(Case(env_id), seed)


def test_clicks_problems_finds_each_fault() -> None:
    size = (100.0, 50.0)
    assert clicks_problems({1: [(0, 0, 10, 10)], 2: [(20, 0, 10, 10)]}, [1, 2], size) == []
    assert any("leaves" in p for p in clicks_problems({1: [(95, 0, 10, 10)]}, [1], size))
    assert any("same click path" in p
               for p in clicks_problems({1: [(0, 0, 5, 5)], 2: [(0, 0, 5, 5)]}, [1, 2], size))
    assert any("start of" in p for p in clicks_problems(
        {1: [(0, 0, 5, 5)], 2: [(0, 0, 5, 5), (9, 9, 5, 5)]}, [1, 2], size))
    assert any("asked for" in p for p in clicks_problems({1: [(0, 0, 5, 5)]}, [1, 2], size))
    assert any("no area" in p for p in clicks_problems({1: [(0, 0, 0, 5)]}, [1], size))
