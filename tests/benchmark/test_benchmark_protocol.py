"""The benchmark protocol (``card_envs.benchmark``): its tables, the candidate forms, forfeits
of a candidate that fails, reports that reproduce byte for byte, ``check`` naming the row a
tampered report changed, resuming, the rating fit and reports read as untrusted files."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from card_envs import benchmark
from card_envs.benchmark import protocol, rating
from card_envs.benchmark.report import check_report, differences, read_report
from card_envs.core.errors import OptionError, StateDictError
from card_envs.core.registry import ENV_IDS

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import bench_agents  # noqa: E402

ROOT = HERE.parents[1]
ONE = {"games": ["isflak"], "seats": [2]}  # the smallest partial run: 4 tables, 36 games


def _run(agent, tmp_path: Path, **kw):
    kw = {**ONE, **kw}
    return benchmark.run(agent, mode="quick", progress=False, cache_dir=tmp_path / "cache", **kw)


def test_tables_cover_every_game_and_seat_count_with_shared_deals() -> None:
    full = protocol.tables("full")
    assert {(t.env_id, t.players) for t in full} == {(e, n) for e in ENV_IDS for n in (2, 3, 4)}
    assert len(full) == len(ENV_IDS) * 3 * len(protocol.LADDER)
    quick = protocol.tables("quick")
    for f, q in zip(full, quick):
        assert (f.env_id, f.players, f.opponent, f.seed) == (q.env_id, q.players, q.opponent,
                                                             q.seed)
        assert 1 <= q.deals < f.deals and f.games == f.deals * f.players
    # every opponent of one game and seat count plays the same deals; other tables others
    seeds = {(t.env_id, t.players): set() for t in full}
    for t in full:
        seeds[(t.env_id, t.players)].add(t.seed)
    assert all(len(s) == 1 for s in seeds.values())
    assert len({next(iter(s)) for s in seeds.values()}) == len(seeds)
    for bad in ({"mode": "medium"}, {"games": ["chess"]}, {"seats": [5]}):
        with pytest.raises(OptionError):
            protocol.tables(**bad)


def test_a_run_reports_every_table_with_intervals_and_is_deterministic(tmp_path: Path) -> None:
    res = _run("heuristic", tmp_path, json_path=tmp_path / "a.json")
    rows = res.rows
    assert [r["opponent"] for r in rows] == list(protocol.LADDER)
    for r in rows:
        assert r["games"] == r["deals"] * 2 and r["forfeits"] == 0
        lo, hi = r["ci95"]
        assert 0 <= lo <= r["win_share"] <= hi <= 1
        assert r["pairs"] == r["games"] and 0 <= r["pair_score"] <= r["pairs"]
        assert len(r["seat_win_share"]) == 2
    # heuristic against copies of itself on duplicate deals: each seat rotation is played
    assert res.row("isflak_v0", 2, "random")["win_share"] > 0.8
    again = _run("heuristic", tmp_path, json_path=tmp_path / "b.json", resume=False)
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    assert again.report == read_report(tmp_path / "a.json")
    assert "isflak | 2 |" in res.table()


def _two_processes(tmp_path: Path, *extra: str) -> list[bytes]:
    """The report of ``card-envs benchmark --agent heuristic --quick EXTRA`` from two processes,
    one with 1 worker, one with 2 (separate caches, so both play every table)."""
    outs = []
    for workers in (1, 2):
        out = tmp_path / f"w{workers}.json"
        env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / f"cache{workers}"))
        proc = subprocess.run(
            [sys.executable, "-m", "card_envs.cli", "benchmark", "--agent", "heuristic",
             "--quick", *extra, "--workers", str(workers), "--json", str(out),
             "--no-progress"], capture_output=True, text=True, env=env, timeout=3600)
        assert proc.returncode == 0, proc.stderr[-2000:]
        outs.append(out.read_bytes())
    return outs


def test_report_bytes_equal_across_processes_and_worker_counts(tmp_path: Path) -> None:
    """``card-envs benchmark --agent heuristic --quick`` in two processes, one with 1 worker
    and one with 2, on one game at every seat count (the whole quick protocol: the stress
    test below)."""
    outs = _two_processes(tmp_path, "--games", "isflak")
    assert outs[0] == outs[1]
    rep = json.loads(outs[0])
    assert {(r["env_id"], r["players"]) for r in rep["rows"]} == {
        ("isflak_v0", n) for n in (2, 3, 4)}
    assert rep["complete"] is False and rep["mode"] == "quick"


@pytest.mark.stress
def test_the_whole_quick_protocol_is_byte_identical(tmp_path: Path) -> None:
    outs = _two_processes(tmp_path)
    assert outs[0] == outs[1]


def test_candidate_forms(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", str(HERE) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    by_class = _run(bench_agents.FirstLegal, tmp_path)
    by_spec = _run("bench_agents:FirstLegal", tmp_path, workers=2)
    by_factory = _run("bench_agents:make_first_legal", tmp_path)
    by_file = _run(f"{HERE / 'bench_agents.py'}:FirstLegal", tmp_path)
    assert by_class.rows == by_spec.rows == by_factory.rows == by_file.rows
    assert by_spec.report["candidate"]["spec"] == "bench_agents:FirstLegal"
    assert "bench_agents.py" in by_spec.report["candidate"]["files"]
    local = type("Local", (bench_agents.FirstLegal,), {"__module__": "__main__"})
    with pytest.raises(OptionError, match="worker process"):
        _run(local, tmp_path, workers=2)
    for bad, msg in [("nope", "unknown agent"), ("mcts:iteration=5", "iteration"),
                     ("bench_agents:Missing", "has no"), ("no_such_module:X", "cannot import"),
                     ("ppo:path=/nonexistent.safetensors", "no file"), (42, "candidate")]:
        with pytest.raises(OptionError, match=msg):
            _run(bad, tmp_path)


def test_a_network_for_another_seat_count_is_refused_before_playing(tmp_path: Path) -> None:
    two = ROOT / "agents" / "data" / "ppo" / "isflak_v0.safetensors"
    with pytest.raises(OptionError, match="cannot play isflak_v0 with 3 seats"):
        _run(f"ppo:path={two}", tmp_path, seats=[2, 3])
    assert not list((tmp_path / "cache").glob("*/*.json"))  # nothing was played


def test_a_failing_candidate_forfeits_those_games_and_the_run_goes_on(tmp_path: Path) -> None:
    res = _run(bench_agents.Faulty, tmp_path, move_limit=0.1)
    rows = res.rows
    reasons = {t for r in rows for t in r["forfeit_reasons"]}
    assert any(t.startswith("raised RuntimeError: boom") for t in reasons)
    assert any("an illegal action" in t for t in reasons)
    assert any("not an integer action" in t for t in reasons)
    assert any(t.startswith("took 0.3 s") for t in reasons)
    assert any(t.startswith("took more than 0.1 s") for t in reasons)
    total = sum(r["games"] for r in rows)
    forfeits = sum(r["forfeits"] for r in rows)
    assert 0 < forfeits < total and all(r["games"] == r["deals"] * 2 for r in rows)
    # a forfeit is a loss: against random the faulty agent wins only games it finished
    r = res.row("isflak_v0", 2, "random")
    assert r["win_share"] <= 1 - r["forfeits"] / r["games"] + 1e-9
    assert "forfeits:" in res.table()


def test_resume_reuses_saved_tables(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = _run("random", tmp_path, json_path=tmp_path / "a.json")
    from card_envs.benchmark import play

    def refuse(*a, **k):
        raise AssertionError("a saved table was played again")

    monkeypatch.setattr(play, "play_chunk", refuse)
    again = _run("random", tmp_path, json_path=tmp_path / "b.json")
    assert again.report == first.report
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    # a damaged saved table is played again, not trusted
    saved = sorted((tmp_path / "cache").glob("*/*.json"))
    saved[0].write_text("{}")
    with pytest.raises(AssertionError, match="played again"):
        _run("random", tmp_path)


def test_check_replays_a_report_and_names_the_tampered_row(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    _run("heuristic", tmp_path, json_path=path)
    assert benchmark.check(path, progress=False) == []
    rep = json.loads(path.read_text())
    rep["rows"][1]["win_share"] = 0.999
    path.write_text(json.dumps(rep))
    diffs = benchmark.check(path, progress=False)
    assert len(diffs) == 1
    assert diffs[0].startswith("row isflak_v0 2 seats vs heuristic: win_share is 0.999")
    from card_envs.cli import main

    assert main(["benchmark", "--check", str(path), "--no-progress"]) == 1


def _report(tmp_path: Path) -> dict:
    path = tmp_path / "r.json"
    if not path.exists():
        _run("random", tmp_path, json_path=path)
    return json.loads(path.read_text())


@pytest.mark.parametrize("edit, where", [
    (lambda d: d.update(format="card-envs-arena/2"), "format"),
    (lambda d: d.pop("rows"), "top level"),
    (lambda d: d["rows"][0].update(win_share=1.5), "rows[0].win_share"),
    (lambda d: d["rows"][0].update(win_share=math.nan), "rows[0].win_share"),
    (lambda d: d["rows"][0].update(opponent="mcts:ms=1"), "rows[0].opponent"),
    (lambda d: d["rows"][0].update(env_id="../../etc"), "rows[0].env_id"),
    (lambda d: d["rows"][0].update(players=True), "rows[0].players"),
    (lambda d: d["rows"][0].update(forfeit_reasons=["x" * 5000]), "rows[0].forfeit_reasons"),
    (lambda d: d["candidate"].update(spec=["heuristic"]), "candidate.spec"),
    (lambda d: d.update(mode="fast"), "mode"),
])
def test_reports_are_read_as_untrusted(tmp_path: Path, edit, where: str) -> None:
    d = _report(tmp_path)
    check_report(d)
    edit(d)
    pattern = "benchmark report: " + where.replace("[", r"\[").replace("]", r"\]")
    with pytest.raises(StateDictError, match=pattern):
        check_report(d)


def test_bad_report_files_are_one_line_errors(tmp_path: Path,
                                              capsys: pytest.CaptureFixture) -> None:
    from card_envs.cli import main

    bad = tmp_path / "bad.json"
    for text in ("not json", '{"format": "card-envs-benchmark"}', "[" * 100000):
        bad.write_text(text)
        assert main(["benchmark", "--check", str(bad), "--no-progress"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("card-envs: error:"), err
    for argv in (["--agent", "heuristic", "--games", "chess"],
                 ["--agent", "heuristic", "--players", "9"],
                 ["--agent", "heuristic", "--players", "x"],
                 ["--agent", "heuristic", "--workers", "0"],
                 ["--agent", "heuristic", "--move-limit", "nan"],
                 ["--agent", "warlock"], [],
                 ["--check", str(tmp_path / "missing.json")]):
        assert main(["benchmark", *argv, "--no-progress"]) == 2, argv
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("card-envs: error:"), (argv, err)


def test_differences_name_rows_only_in_one_report(tmp_path: Path) -> None:
    d = _report(tmp_path)
    e = json.loads(json.dumps(d))
    e["rows"].pop()
    lines = differences(d, e)
    assert lines == ["row isflak_v0 2 ppo: only in the report"]


def test_bradley_terry_recovers_known_strengths() -> None:
    rng = np.random.default_rng(0)
    true = {"random": 0.0, "a": 150.0, "b": 400.0, "c": -100.0}
    results = []
    names = list(true)
    for i, x in enumerate(names):
        for y in names[i + 1:]:
            p = 1 / (1 + 10 ** ((true[y] - true[x]) / 400))
            m = 20000
            results.append((x, y, float(rng.binomial(m, p)), float(m)))
    fitted = rating.fit(results)
    assert fitted["random"] == 0.0
    for k, v in true.items():
        assert abs(fitted[k] - v) < 15, (k, fitted[k], v)
    # the candidate's fit against a fixed ladder agrees with the joint fit
    ladder = {k: fitted[k] for k in ("random", "a", "c")}
    scores = {y: (m - s, m) for x, y, s, m in results if x != "b" and y == "b"}
    scores.update({y: (s, m) for x, y, s, m in results if x == "b"})
    one = rating.fit_one(scores, ladder)
    assert one is not None and abs(one[0] - fitted["b"]) < 5 and one[1] < one[0] < one[2]
    assert rating.fit_one({}, ladder) is None
    # an agent that never loses still gets a finite rating
    assert math.isfinite(rating.fit([("x", "random", 50.0, 50.0)])["x"])


def test_leaderboard_markdown_and_plot(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    rep = _report(tmp_path)
    rep["rating"] = {"elo": 10.0, "ci95": [0.0, 20.0], "pairs": 36, "ladder": {}}
    md = benchmark.markdown([rep])
    assert "| `random` |" in md and "### isflak_v0" in md
    assert "card-envs benchmark --agent random" in md
    fig = benchmark.plot(rep, tmp_path / "r.png", reports=[])
    assert (tmp_path / "r.png").stat().st_size > 1000 and fig is not None
    assert benchmark.markdown([]).startswith("No benchmark report")
