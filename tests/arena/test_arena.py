"""The evaluation arena: duplicate deals and seat rotation, round-robin lineups, win
accounting and intervals, stats, head-to-head matrix, ratings, parallel workers, JSON round
trip and rerun, plots, CLI."""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import card_envs
from card_envs.agents.base import Agent, legal_actions
from card_envs.agents.random_agent import RandomAgent
from card_envs.agents.slide import SlideHeuristicAgent
from card_envs.arena import (
    ArenaResult,
    deal_seed,
    finish_ranks,
    mean_interval,
    plot_ratings,
    plot_winrate_matrix,
    rerun,
    resolve_env_id,
    run_arena,
    wilson_interval,
)
from card_envs.arena.runner import _chunks
from card_envs.cli import split_agents
from card_envs.core import registry

ROOT = Path(__file__).resolve().parents[2]
PNG = b"\x89PNG\r\n\x1a\n"


def _untimed(log: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A game log without the wall-clock thinking times."""
    return [{k: v for k, v in g.items() if k != "think_ms"} for g in log]


def _strip(d: dict[str, Any]) -> dict[str, Any]:
    """A result's JSON without what may differ between equal runs (wall-clock times)."""
    out = {k: v for k, v in d.items() if k not in ("elapsed", "workers")}
    out["log"] = _untimed(d["log"])
    out["agents"] = [{k: v for k, v in a.items() if k != "think_ms"} for a in d["agents"]]
    return out


@pytest.fixture(scope="module")
def rr() -> ArenaResult:
    """A small round-robin: a pool of 4 at 3 seats (4 lineups), 7 games per lineup."""
    return run_arena("slide", ["heuristic", "random", "random", "heuristic"], 7, num_players=3,
                     seed=11, progress=False)


# --- duplicate deals and seats ----------------------------------------------------------------
def test_arena_is_reproducible_and_json_round_trips() -> None:
    a = run_arena("slide", ["random", "heuristic"], 12, num_players=3, seed=4, progress=False)
    b = run_arena("slide_v0", ["random", "heuristic"], 12, num_players=3, seed=4,
                  progress=False)
    assert _strip(a.to_json()) == _strip(b.to_json()) and a.workers == b.workers
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



def test_duplicate_deals_replay_identical_initial_states(rr: ArenaResult) -> None:
    n = 3
    env = card_envs.make_raw("slide_v0", num_players=n)
    by_deal: dict[int, list[dict[str, Any]]] = {}
    for g in rr.log:
        by_deal.setdefault(g["deal"], []).append(g)
    assert sorted(by_deal) == [0, 1, 2] and len(rr.deal_seeds) == 3
    digests = {}
    for deal, games in by_deal.items():
        # every lineup, every rotation: the same initial state (the digest of the real reset)
        env.reset(seed=deal_seed(11, deal))
        want = hashlib.sha1(env.state_array.tobytes()).hexdigest()
        assert {g["digest"] for g in games} == {want}
        digests[deal] = want
        for lu in range(len(rr.lineups)):
            seatings = [tuple(g["seats"]) for g in games if g["lineup"] == lu]
            assert len(set(seatings)) == len(seatings)  # the seats differ
            assert all(set(s) == set(rr.lineups[lu]) for s in seatings)
    assert len(set(digests.values())) == 3  # different deals differ
    assert rr.deal_seeds == [deal_seed(11, b) for b in range(3)]


def test_start_player_random_is_part_of_the_deal() -> None:
    res = run_arena("slide", ["heuristic", "random"], 6, seed=3, progress=False,
                    start_player="random")
    for deal in range(3):
        assert len({g["digest"] for g in res.log if g["deal"] == deal}) == 1
    assert res.options["start_player"] == "random"


# --- intervals, names -------------------------------------------------------------------------
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
    assert resolve_env_id is registry.resolve_env_id  # the registry's, re-exported



# --- lineups, stats, wins ---------------------------------------------------------------------
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



def test_round_robin_lineups_and_seat_balance(rr: ArenaResult) -> None:
    assert rr.labels == ["heuristic#0", "random#0", "random#1", "heuristic#1"]
    assert rr.lineups == [[rr.labels[i] for i in c] for c in itertools.combinations(range(4), 3)]
    assert rr.games == 7 and rr.total_games == 7 * 4 == len(rr.log)
    assert [g["game"] for g in rr.log] == list(range(28))
    for s in rr.stats:
        assert s.games == 7 * 3  # in 3 of the 4 lineups
        assert sum(s.seat_games) == s.games and min(s.seat_games) >= 6
    assert sum(s.wins for s in rr.stats) == pytest.approx(rr.total_games)
    assert "7 games per lineup x 4 lineups = 28 games" in rr.table()


def test_small_pool_fills_the_table() -> None:
    res = run_arena("slide", ["heuristic", "random"], 5, num_players=3, seed=0, progress=False)
    assert res.labels == ["heuristic#0", "random", "heuristic#1"] and len(res.lineups) == 1
    assert res.total_games == res.games == 5  # the last deal is played in 2 rotations only
    assert [g["deal"] for g in res.log] == [0, 0, 0, 1, 1]


def test_per_agent_stats_match_the_log(rr: ArenaResult) -> None:
    for s in rr.stats:
        mine = [(g, g["seats"].index(s.label)) for g in rr.log if s.label in g["seats"]]
        pts = np.array([g["points"][i] for g, i in mine])
        assert s.games == len(mine)
        assert s.mean_points == pytest.approx(pts.mean())
        lo, hi = s.points_ci95
        half = 1.959963984540054 * pts.std(ddof=1) / math.sqrt(len(pts))
        assert lo == pytest.approx(pts.mean() - half) and hi == pytest.approx(pts.mean() + half)
        wins = [1.0 / sum(g["winners"]) for g, i in mine if g["winners"][i]]
        assert s.wins == pytest.approx(sum(wins))
        seat_wins = [0.0] * 3
        for g, i in mine:
            if g["winners"][i]:
                seat_wins[i] += 1.0 / sum(g["winners"])
        assert s.seat_wins == pytest.approx(seat_wins)
        assert s.ci95[0] <= s.win_rate <= s.ci95[1]
    assert mean_interval(1.0, 2.0, 1) is None


def test_finish_ranks() -> None:
    # Slide: the winner holds the lowest points, so lower is better
    assert finish_ranks([30.0, 10.0, 50.0], [False, True, False]) == [1, 0, 2]
    # higher is better, a tie among the losers
    assert finish_ranks([3.0, 9.0, 3.0, 1.0], [False, True, False, False]) == [1, 0, 1, 3]
    # a tie broken by a second key (winner flags decide), then by points
    assert finish_ranks([10.0, 10.0, 20.0], [True, False, False]) == [0, 1, 2]
    assert finish_ranks([10.0, 10.0, 5.0], [True, False, False]) == [0, 1, 2]
    # a shared win and a complete tie
    assert finish_ranks([7.0, 7.0, 2.0], [True, True, False]) == [0, 0, 2]
    assert finish_ranks([4.0, 4.0], [True, True]) == [0, 0]
    assert finish_ranks([1.0, 2.0], [False, False]) == [0, 0]


def test_ranks_follow_winners_and_points_direction(rr: ArenaResult) -> None:
    for g in rr.log:
        r, p, w = g["ranks"], g["points"], g["winners"]
        assert all(r[s] == 0 for s in range(3) if w[s])
        losers = [s for s in range(3) if not w[s]]
        for a, b in itertools.permutations(losers, 2):
            if p[a] < p[b]:  # Slide: fewer points finish ahead
                assert r[a] < r[b]


def test_head_to_head_matrix(rr: ArenaResult) -> None:
    m = rr.matrix
    assert m is not None and m.labels == rr.labels
    k = len(m.labels)
    for a, b in itertools.product(range(k), repeat=2):
        if a == b:
            assert m.games[a][a] == 0 and m.rates[a][a] is None
            continue
        both = [g for g in rr.log if m.labels[a] in g["seats"] and m.labels[b] in g["seats"]]
        assert m.games[a][b] == len(both) == 14  # 2 lineups hold both, 7 games each
        ahead = 0.0
        for g in both:
            ra, rb = (g["ranks"][g["seats"].index(m.labels[x])] for x in (a, b))
            ahead += 1.0 if ra < rb else 0.5 if ra == rb else 0.0
        assert m.score[a][b] == pytest.approx(ahead)
        assert m.score[a][b] + m.score[b][a] == pytest.approx(m.games[a][b])
    assert m.rate("heuristic#0", "random#0") > 0.8
    assert "head-to-head" in rr.table()


def test_ratings_are_plackett_luce_over_the_log(rr: ArenaResult) -> None:
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    skill = {lab: model.rating() for lab in rr.labels}
    for g in rr.log:
        new = model.rate([[skill[lab]] for lab in g["seats"]], ranks=g["ranks"])
        for lab, team in zip(g["seats"], new):
            skill[lab] = team[0]
    for r in rr.ratings:
        assert r.mu == pytest.approx(skill[r.label].mu)
        assert r.sigma == pytest.approx(skill[r.label].sigma)
        assert r.ordinal == pytest.approx(skill[r.label].ordinal())
    assert min(rr.rating(h).mu for h in ("heuristic#0", "heuristic#1")) > \
        max(rr.rating(x).mu for x in ("random#0", "random#1"))


# --- agents: instances, strength, the true state for search agents ----------------------------
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



class StateProbe(Agent):
    """A ``needs_state`` agent that checks the state against its observation and mask."""

    name = "probe"
    needs_state = True

    def __init__(self, env_id: str, seed: int | None = None, **options: Any) -> None:
        super().__init__(env_id, seed, **options)
        self.engine = card_envs.Engine(env_id, **options)
        self.calls = 0

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        raise AssertionError("the arena must call act_state for needs_state agents")

    def act_state(self, state: np.ndarray, observation: np.ndarray,
                  action_mask: np.ndarray) -> int:
        assert state.dtype == np.int32
        seat = self.engine.current_player(state)
        assert (self.engine.legal_mask(state) == action_mask).all()
        assert (self.engine.observe(state, seat) == observation).all()
        self.calls += 1
        legal = legal_actions(action_mask)
        return int(legal[self.rng.randrange(legal.size)])


def test_needs_state_agents_get_the_true_state() -> None:
    probe = StateProbe("isflak_v0", num_players=3)
    res = run_arena("isflak", [probe, RandomAgent("isflak_v0"), "heuristic"], 3, num_players=3,
                    seed=2, progress=False)
    assert probe.calls > 0 and res.labels == ["probe", "random", "heuristic"]
    with pytest.raises(ValueError, match="instances"):  # instances cannot go to workers
        run_arena("isflak", [probe, "random"], 4, seed=2, progress=False, workers=2)
    with pytest.raises(ValueError, match="several seats"):
        run_arena("isflak", [probe], 2, progress=False)


# --- reproducibility: workers, JSON, rerun ----------------------------------------------------
def test_chunks_cover_every_game_once() -> None:
    for nl, games, n, w in [(1, 7, 3, 2), (4, 7, 3, 2), (3, 40, 2, 2), (2, 1, 4, 8)]:
        chunks = _chunks(nl, games, n, w)
        for lu in range(nl):
            cover = [g for c in chunks if c[0] == lu for g in range(c[1], c[2])]
            assert cover == list(range(games))
        assert all(c[1] % n == 0 for c in chunks)  # whole deals


def test_workers_give_identical_results() -> None:
    args = ("slide", ["heuristic", "random", "mcts:iterations=9"], 6)
    one = run_arena(*args, seed=9, progress=False, workers=1)
    two = run_arena(*args, seed=9, progress=False, workers=2)
    assert two.workers == 2 and one.workers == 1
    assert one.labels == ["heuristic", "random", "mcts:iterations=9"]
    assert _strip(one.to_json()) == _strip(two.to_json())


def test_json_round_trips(rr: ArenaResult, tmp_path: Path) -> None:
    d = rr.to_json()
    text = json.dumps(d, allow_nan=False)  # strict JSON: no NaN anywhere
    back = ArenaResult.from_json(json.loads(text))
    assert back.to_json() == d
    assert back.table() == rr.table()
    for key in ("seed", "agent_specs", "options", "game_options", "num_players", "games",
                "deal_seeds", "versions", "log", "agents", "matrix", "ratings"):
        assert key in d
    assert {"seats", "points", "winners", "ranks", "digest"} <= set(d["log"][0])
    assert d["versions"]["card_envs"] == card_envs.__version__ and "openskill" in d["versions"]
    path = tmp_path / "r.json"
    rr.save(str(path))
    assert ArenaResult.load(str(path)).to_json() == d
    with pytest.raises(ValueError, match="format"):
        ArenaResult.from_json({"env_id": "slide_v0"})


def test_rerun_repeats_the_log(tmp_path: Path) -> None:
    res = run_arena("isflak", ["heuristic", "random"], 4, num_players=2, seed=6, progress=False,
                    penguins_per_player=2)
    back = ArenaResult.from_json(json.loads(json.dumps(res.to_json())))
    assert back.run_args == {"env_id": "isflak_v0", "agents": ["heuristic", "random"],
                             "games": 4, "num_players": 2, "seed": 6, "penguins_per_player": 2}
    again = rerun(back)
    assert _untimed(again.log) == _untimed(res.log)
    assert again.untimed_log() == res.untimed_log() == _untimed(res.log)
    assert _strip(run_arena(**back.run_args, progress=False).to_json()) == _strip(res.to_json())
    inst = run_arena("slide", [RandomAgent("slide_v0"), "random"], 2, progress=False)
    assert inst.agent_specs == [None, "random"]
    with pytest.raises(ValueError, match="instances"):
        rerun(inst)


# --- plots ------------------------------------------------------------------------------------
def test_plots_write_pngs(rr: ArenaResult, tmp_path: Path) -> None:
    for fn, name in ((plot_winrate_matrix, "m.png"), (plot_ratings, "sub/r.png")):
        path = fn(rr, tmp_path / name)
        data = Path(path).read_bytes()
        assert len(data) > 1000 and data[:8] == PNG


def test_plots_name_the_extra_without_matplotlib(rr: ArenaResult, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    for mod in ("matplotlib", "matplotlib.figure", "matplotlib.backends.backend_agg"):
        monkeypatch.setitem(sys.modules, mod, None)
    with pytest.raises(ImportError, match=r"pip install card-envs\[plot\]"):
        plot_ratings(rr, tmp_path / "x.png")


# --- CLI --------------------------------------------------------------------------------------
def test_cli_agent_specs() -> None:
    assert split_agents("random,heuristic") == ["random", "heuristic"]
    assert split_agents("random, heuristic,mcts:ms=50+c=0.7") == \
        ["random", "heuristic", "mcts:ms=50,c=0.7"]
    assert split_agents("mcts:ms=50;c=0.7,random") == ["mcts:ms=50,c=0.7", "random"]
    assert split_agents("mcts:ms=50,c=0.7,random") == ["mcts:ms=50,c=0.7", "random"]
    assert split_agents("mcts:c=1e+3") == ["mcts:c=1e+3"]  # '+' in a value stays
    assert split_agents("random+x=1,heuristic") == ["random+x=1", "heuristic"]


def test_cli_round_robin_with_plots_and_json(tmp_path: Path) -> None:
    out, plots = tmp_path / "out.json", tmp_path / "plots"
    p = subprocess.run([sys.executable, str(ROOT / "examples" / "arena.py"), "--game", "slide",
                        "--agents", "heuristic,random,mcts:iterations=9", "--games", "4",
                        "--seed", "3",
                        "--workers", "1", "--no-progress", "--json", str(out),
                        "--plot", str(plots)],
                       capture_output=True, text=True, timeout=120, cwd=ROOT, check=False)
    assert p.returncode == 0, p.stderr
    for word in ("4 games per lineup", "pts 95% CI", "mu", "ordinal", "head-to-head",
                 "mcts:iterations=9", "3 lineups = 12 games"):
        assert word in p.stdout, word
    res = ArenaResult.from_json(json.loads(out.read_text()))
    assert res.total_games == 12
    assert res.agent_specs == ["heuristic", "random", "mcts:iterations=9"]
    for name in ("slide_v0_winrate.png", "slide_v0_ratings.png"):
        assert (plots / name).read_bytes()[:8] == PNG


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


def test_cli_mistakes_are_one_error_line(tmp_path: Path) -> None:
    """A missing model file and a typo in an agent parameter end in ``card-envs: error: ...``
    and exit code 2, not a traceback (and never a run with the default parameters)."""
    for agents, words in (("ppo:nonexistent.zip,random", ("no model file", "nonexistent.zip")),
                          ("mcts:iters=5,random", ("unknown parameter", "iterations"))):
        p = subprocess.run([sys.executable, "-m", "card_envs.cli", "arena", "--agents", agents,
                            "--games", "2", "--no-progress", "--workers", "1"],
                           capture_output=True, text=True, timeout=120, cwd=ROOT, check=False)
        assert p.returncode == 2, p.stderr
        last = p.stderr.strip().splitlines()[-1]
        assert last.startswith("card-envs: error: ") and all(w in last for w in words), p.stderr
        assert "Traceback" not in p.stderr and ".zip.zip" not in p.stderr


def test_cli_help_lists_every_arena_option() -> None:
    top = subprocess.run([sys.executable, "-m", "card_envs.cli", "--help"], capture_output=True,
                         text=True, timeout=60, cwd=ROOT, check=True).stdout
    assert "arena" in top
    arena = subprocess.run([sys.executable, "-m", "card_envs.cli", "arena", "--help"],
                           capture_output=True, text=True, timeout=60, cwd=ROOT,
                           check=True).stdout
    for flag in ("--game", "--agents", "--games", "--players", "--seed", "--workers",
                 "--option", "-o", "--json", "--plot", "--no-progress"):
        assert flag in arena, flag


def test_unbalanced_game_count_warns_and_points_direction_is_stated() -> None:
    with pytest.warns(UserWarning, match="not balanced.*multiple of 2"):
        res = run_arena("slide_v0", ["random", "heuristic"], 3, seed=0, progress=False)
    assert "lower is better" in res.table() and res.to_json()["points_order"].startswith("lower")
    isf = run_arena("isflak_v0", ["random", "random"], 2, seed=0, progress=False)
    assert "higher is better" in isf.table()
