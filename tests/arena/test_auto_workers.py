"""``workers="auto"`` (the default of ``run_arena`` and ``card-envs arena``): the first deal of
every lineup in this process, the rest in worker processes only when it would take longer
than ``AUTO_SECONDS`` here; the games are the same whatever it picks."""

from __future__ import annotations

import pytest

from card_envs.arena import AUTO_SECONDS, auto_workers, run_arena
from card_envs.arena import runner as R
from card_envs.arena.runner import _chunks


def test_auto_workers_pays_for_the_start_up_only_when_it_is_worth_it() -> None:
    assert auto_workers(0.0, cpus=2) == 1
    assert auto_workers(AUTO_SECONDS * 0.9, cpus=8) == 1  # cheap runs stay in one process
    assert auto_workers(AUTO_SECONDS * 1.5, cpus=2) == 2
    assert auto_workers(AUTO_SECONDS * 5, cpus=8) == 5
    assert auto_workers(AUTO_SECONDS * 100, cpus=8) == 8
    assert auto_workers(AUTO_SECONDS * 100, cpus=1) == 1


def test_chunks_from_a_later_deal() -> None:
    chunks = _chunks(2, 10, 2, 2, first_deal=1)
    for lu in range(2):
        assert [g for c in chunks if c[0] == lu for g in range(c[1], c[2])] == list(range(2, 10))
    assert _chunks(1, 2, 2, 2, first_deal=1) == []


def test_cheap_runs_stay_in_process_and_auto_equals_one_worker() -> None:
    args = ("slide", ["random", "heuristic"], 8)
    auto = run_arena(*args, seed=3, progress=False)  # the default: auto
    one = run_arena(*args, seed=3, progress=False, workers=1)
    assert auto.workers == 1 and auto.untimed_log() == one.untimed_log()


def test_auto_hands_the_rest_to_workers_with_the_same_games(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(R, "AUTO_SECONDS", 1e-9)  # any run is worth workers now
    monkeypatch.setattr(R.os, "cpu_count", lambda: 2)
    args = ("isflak", ["heuristic", "random", "mcts:iterations=9"], 6)
    auto = run_arena(*args, seed=5, progress=False)
    one = run_arena(*args, seed=5, progress=False, workers=1)
    assert auto.workers == 2 and one.workers == 1
    assert auto.untimed_log() == one.untimed_log()
    assert [g["game"] for g in auto.log] == list(range(18))


def test_workers_must_be_a_number_or_auto() -> None:
    for bad in ("two", 1.5, True):
        with pytest.raises(ValueError, match="auto"):
            run_arena("slide", ["random"], 2, progress=False, workers=bad)
