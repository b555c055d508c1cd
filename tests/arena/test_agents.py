"""Baseline agents (random, Slide heuristic) and the evaluation arena."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import card_envs
from agents.base import Agent
from agents.random_agent import RandomAgent
from agents.registry import agent_class, agent_names, make_agent
from agents.slide import SlideHeuristicAgent, _push
from card_envs.arena import resolve_env_id, run_arena, wilson_interval
from card_envs.slide import rules as R

ROOT = Path(__file__).resolve().parents[2]


def _play_checked(n: int, seed: int, agents: list[Agent]) -> list[tuple[int, ...]]:
    """Play one game; at every step every agent proposes an action for the seat to act, each
    proposal must be legal; the seat's own agent's action is played. Returns the trace."""
    env = card_envs.make_raw("slide_v0", num_players=n)
    env.reset(seed=seed)
    trace = []
    pick = random.Random(seed)
    while True:
        obs, _, term, _, _ = env.last()
        if term:
            break
        o, m = obs["observation"], obs["action_mask"]
        proposals = [a.act(o, m) for a in agents]
        for a in proposals:
            assert isinstance(a, int) and m[a] == 1, (a, np.flatnonzero(m))
        trace.append(tuple(proposals))
        env.step(proposals[pick.randrange(len(proposals))])
    return trace


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6])
def test_agents_only_choose_legal_actions(n: int) -> None:
    agents = [RandomAgent("slide_v0", seed=1), SlideHeuristicAgent("slide_v0", seed=2)]
    for seed in range(4):
        _play_checked(n, 100 * n + seed, agents)


def test_agents_refuse_an_all_zero_mask() -> None:
    env = card_envs.make_raw("slide_v0")
    env.reset(seed=0)
    idle = env.observe("player_1")  # not to act: mask all zeros
    for a in (RandomAgent("slide_v0", 0), SlideHeuristicAgent("slide_v0", 0)):
        with pytest.raises(ValueError, match="no legal action"):
            a.act(idle["observation"], idle["action_mask"])


@pytest.mark.parametrize("cls", [RandomAgent, SlideHeuristicAgent])
def test_seeded_agents_are_deterministic(cls: type[Agent]) -> None:
    t1 = _play_checked(3, 7, [cls("slide_v0", seed=5)])
    t2 = _play_checked(3, 7, [cls("slide_v0", seed=5)])
    assert t1 == t2
    a = cls("slide_v0", seed=5)
    t3 = _play_checked(3, 7, [a])
    a.reset(seed=5)
    assert _play_checked(3, 7, [a]) == t3 == t1


def test_random_agent_is_uniform_and_seed_dependent() -> None:
    mask = np.zeros(56, np.int8)
    mask[[3, 17, 40]] = 1
    a = RandomAgent("slide_v0", seed=0)
    counts = np.bincount([a.act(np.zeros(57, np.int8), mask) for _ in range(3000)],
                         minlength=56)
    assert set(np.flatnonzero(counts)) == {3, 17, 40}
    assert counts[[3, 17, 40]].min() > 900
    b = RandomAgent("slide_v0", seed=1)
    assert [a.act(None, mask) for _ in range(30)] != [b.act(None, mask) for _ in range(30)]


def test_heuristic_push_matches_the_engine() -> None:
    rng = np.random.default_rng(0)
    out = np.empty(16, np.int64)
    for _ in range(300):
        grid = rng.integers(1, 12, 16)
        empty, value = int(rng.integers(16)), int(rng.integers(1, 11))
        grid[empty] = 0
        for side in range(4):
            if not R.side_ok(empty, side):
                continue
            state = np.zeros(R.STATE_SIZE, np.int32)
            state[R.GRID:R.GRID + 16] = grid
            R.push(state, 0, empty, side, value)
            _push(grid, empty, side, value, out)
            assert (out == state[R.GRID:R.GRID + 16]).all()


def test_heuristic_takes_the_obvious_pair() -> None:
    """Pushing a 10 next to a face-up 10 (both removed) beats taking a 1."""
    n = 2
    o = np.zeros(16 * n + 25, np.int8)
    o[:32] = 11
    o[0], o[1] = 10, 0  # own grid: a 10 in the corner, the gap right of it
    mid, uns = 16 * n, 16 * n + 10
    o[mid + 0] = o[mid + 9] = 1  # middle: a 1 and a 10
    o[uns:uns + 10] = 8
    o[mid + 20], o[mid + 21], o[mid + 22], o[mid + 23], o[mid + 24] = 1, 3, 0, 0, -1
    mask = np.zeros(56, np.int8)
    for v in (1, 10):
        for side in (0, 1, 3):  # gap at (0, 1): left, right, bottom
            mask[16 + (v - 1) * 4 + side] = 1
    for seed in range(5):
        assert SlideHeuristicAgent("slide_v0", seed=seed).act(o, mask) == 16 + 9 * 4 + 0


def test_make_agent_registry() -> None:
    assert type(make_agent("random", "slide_v0", seed=1, num_players=3)) is RandomAgent
    assert type(make_agent("Heuristic", "slide_v0")) is SlideHeuristicAgent
    assert agent_names("slide_v0")[:2] == ["random", "heuristic"]  # then the search names
    assert card_envs.manifest("slide_v0").heuristic
    with pytest.raises(ValueError, match="unknown agent 'bogus'.*random"):
        make_agent("bogus", "slide_v0")
    with pytest.raises(ValueError, match="no heuristic agent for 'other_v0'.*slide_v0"):
        agent_class("heuristic", "other_v0")
    assert agent_class("random", "other_v0") is RandomAgent
    with pytest.raises(ValueError, match="unknown env id"):
        make_agent("random", "nope_v0")


def test_wilson_interval_known_values() -> None:
    lo, hi = wilson_interval(50, 100)
    assert lo == pytest.approx(0.40383, abs=1e-4) and hi == pytest.approx(0.59617, abs=1e-4)
    lo, hi = wilson_interval(0, 10)
    assert lo == 0.0 and hi == pytest.approx(0.27753, abs=1e-4)
    lo, hi = wilson_interval(81, 263)  # Wikipedia / Newcombe (1998) style example
    assert lo == pytest.approx(0.2553, abs=1e-3) and hi == pytest.approx(0.3662, abs=1e-3)
    assert wilson_interval(0, 0) == (0.0, 1.0)


def test_resolve_env_id() -> None:
    assert resolve_env_id("slide") == resolve_env_id("slide_v0") == "slide_v0"
    assert resolve_env_id(" Slide ") == "slide_v0"
    with pytest.raises(ValueError, match="unknown game"):
        resolve_env_id("chess")


def _strip(d: dict) -> dict:
    """A result's JSON without wall-clock times (elapsed, thinking time per move)."""
    out = {k: v for k, v in d.items() if k != "elapsed"}
    out["log"] = [{k: v for k, v in g.items() if k != "think_ms"} for g in d["log"]]
    out["agents"] = [{k: v for k, v in a.items() if k != "think_ms"} for a in d["agents"]]
    return out


def test_arena_is_reproducible_and_json_round_trips() -> None:
    a = run_arena("slide", ["random", "heuristic"], 12, num_players=3, seed=4, progress=False)
    b = run_arena("slide_v0", ["random", "heuristic"], 12, num_players=3, seed=4,
                  progress=False)
    assert _strip(a.to_json()) == _strip(b.to_json())
    c = run_arena("slide", ["random", "heuristic"], 12, num_players=3, seed=5, progress=False)
    assert c.deal_seeds != a.deal_seeds
    d = a.to_json()
    assert json.loads(json.dumps(d)) == d
    assert d["versions"]["card_envs"] == card_envs.__version__
    assert d["options"]["num_players"] == 3 and len(d["deal_seeds"]) == 4


def test_arena_seat_rotation_is_balanced() -> None:
    n = 4
    res = run_arena("slide", ["heuristic", "random"], 3 * n, num_players=n, seed=1,
                    progress=False)
    assert res.labels == ["heuristic#0", "random#0", "heuristic#1", "random#1"]
    for s in res.stats:
        assert s.games == 3 * n and s.seat_games == [3] * n
    for deal in range(3):  # each deal is replayed with every rotation
        seatings = [tuple(g["seats"]) for g in res.log if g["deal"] == deal]
        assert len(set(seatings)) == n
        for seat in range(n):
            assert {s[seat] for s in seatings} == set(res.labels)


def test_arena_win_accounting() -> None:
    res = run_arena("slide", ["random", "random"], 40, seed=2, progress=False)
    assert res.labels == ["random#0", "random#1"]
    expected = float(len(res.log))  # every game hands out exactly one win
    assert sum(s.wins for s in res.stats) == pytest.approx(expected)
    assert sum(s.ties for s in res.stats) == sum(sum(g["winners"]) for g in res.log
                                                 if sum(g["winners"]) > 1)
    for s in res.stats:
        pts = [g["points"][g["seats"].index(s.label)] for g in res.log]
        assert s.mean_points == pytest.approx(np.mean(pts))
        shares = [1.0 / sum(g["winners"]) for g in res.log
                  if g["winners"][g["seats"].index(s.label)]]
        assert s.wins == pytest.approx(sum(shares))
        assert s.sole_wins == shares.count(1.0)
    # a pool larger than the table is a round-robin (it used to be an error)
    rr = run_arena("slide", ["random"] * 3, 2, progress=False)
    assert rr.labels == ["random#0", "random#1", "random#2"] and rr.total_games == 6


def test_arena_accepts_agent_instances() -> None:
    res = run_arena("slide", [SlideHeuristicAgent("slide_v0"), RandomAgent("slide_v0")], 4,
                    seed=0, progress=False)
    assert res.labels == ["heuristic", "random"]


def test_heuristic_beats_random_significantly() -> None:
    res = run_arena("slide", ["heuristic", "random"], 120, seed=0, progress=False)
    h = res["heuristic"]
    assert h.ci95[0] > 0.5
    assert h.win_rate >= 0.9
    assert h.mean_points < res["random"].mean_points


def test_cli_prints_a_table_and_writes_json(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    p = subprocess.run([sys.executable, str(ROOT / "examples" / "arena.py"), "--game", "slide",
                        "--agents", "random,heuristic", "--games", "4", "--seed", "3",
                        "--json", str(out)], capture_output=True, text=True, timeout=120,
                       cwd=ROOT, check=False)
    assert p.returncode == 0, p.stderr
    assert "win rate" in p.stdout and "95% CI" in p.stdout and "heuristic" in p.stdout
    d = json.loads(out.read_text())
    assert d["games"] == 4 and d["env_id"] == "slide_v0" and len(d["agents"]) == 2
    bad = subprocess.run([sys.executable, str(ROOT / "examples" / "arena.py"), "--game", "chess",
                          "--games", "1"], capture_output=True, text=True, timeout=120,
                         check=False)
    assert bad.returncode == 2 and "unknown game" in bad.stderr


def test_cli_option_values_parse_json_and_python_words() -> None:
    from card_envs.cli import _option

    assert _option("moon=True") == ("moon", True)
    assert _option("moon=false") == ("moon", False)
    assert _option("table=[7, 9]") == ("table", [7, 9])
    assert _option("start_player=random") == ("start_player", "random")
    assert _option("x=None") == ("x", None)
