"""The command line against bad input: agent specs that used to crash the process, output
paths checked before a run, replay files that are not what they claim. Each ends in one
``card-envs: error: ...`` line and exit code 2, with nothing written."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from card_envs.cli import main
from card_envs.core import replay as R
from card_envs.ui.record import record_game

ROOT = Path(__file__).resolve().parents[2]


def one_error(capsys: pytest.CaptureFixture, *words: str) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith("card-envs: error: ") and all(w in err[0] for w in words), err
    return err[0]


def test_a_crashing_spec_is_exit_2_in_a_real_process() -> None:
    """``mcts:c=nan`` used to end the process with a segmentation fault (exit 139)."""
    p = subprocess.run([sys.executable, "-m", "card_envs.cli", "arena", "--agents",
                        "mcts:c=nan,random", "--games", "2", "--workers", "1", "--no-progress"],
                       capture_output=True, text=True, timeout=300, cwd=ROOT, check=False)
    assert p.returncode == 2, (p.returncode, p.stderr[-2000:])
    assert p.stderr.strip().splitlines() == \
        ["card-envs: error: agent 'mcts': c must be a finite number in [0, 100], got 'nan'"]


@pytest.mark.parametrize("spec", ["mcts:c=inf", "mcts:points_weight=nan", "mcts:ms=1e999",
                                  "mcts:iterations=99999999999", "mcts:max_nodes=2**40",
                                  "heuristic:miss_rate=nan", "mcts:c=" + "9" * 5000])
def test_bad_specs_in_arena_and_record(spec: str, capsys: pytest.CaptureFixture,
                                       tmp_path: Path) -> None:
    game = "op_glad_ijs" if "miss_rate" in spec else "slide"
    assert main(["arena", "--game", game, "--agents", f"{spec},random", "--games", "2",
                 "--no-progress", "--workers", "1"]) == 2
    one_error(capsys)
    out = tmp_path / "g.json"
    assert main(["record", "--game", game, "--agents", f"{spec},random", "-o", str(out)]) == 2
    one_error(capsys)
    assert not out.exists()


def test_output_paths_are_checked_before_the_run(capsys: pytest.CaptureFixture,
                                                 tmp_path: Path) -> None:
    a_file = tmp_path / "file.txt"
    a_file.write_text("x")
    base = ["arena", "--agents", "random,heuristic", "--games", "2", "--no-progress",
            "--workers", "1"]
    for extra, words in ((["--json", str(tmp_path / "missing" / "out.json")], "does not exist"),
                         (["--json", str(tmp_path)], "is a folder"),
                         (["--plot", str(a_file)], "is a file"),
                         (["--plot", str(a_file / "sub")], "cannot write"),
                         (["--replays", str(a_file)], "is a file")):
        assert main(base + extra) == 2
        one_error(capsys, words)
        assert capsys.readouterr().out == ""  # refused before the run started
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file.txt"]


def test_hostile_option_values(capsys: pytest.CaptureFixture) -> None:
    for value in ("[" * 5000 + "]" * 5000, "9" * 5000, '{"a":' * 20 + "1" + "}" * 20):
        assert main(["arena", "-o", f"max_turned={value}", "--no-progress"]) == 2
        err = capsys.readouterr().err
        assert "Traceback" not in err and "max_turned" in err


@pytest.fixture(scope="module")
def replay() -> dict:
    return record_game("slide", ["random", "random"], seed=1)


def test_bad_replay_files_are_one_error_line(replay: dict, tmp_path: Path,
                                             capsys: pytest.CaptureFixture) -> None:
    good = tmp_path / "good.json"
    R.save(replay, good)
    text = good.read_text()
    deep = "[" * 100_000 + "]" * 100_000
    files = {
        "latin1.json": text.encode("utf-8") + "é".encode("latin-1"),
        "binary.json": b"\x80\x81\xfe\xff" * 10,
        "hugeint.json": text.replace('"seed": 1', '"seed": ' + "9" * 5000).encode(),
        "deep.json": deep.encode(),
        "deepopts.json": text.replace('"options": {', '"options": {"x": ' + "[" * 3000 +
                                      "]" * 3000 + ", ").encode(),
        "switch.json": text.replace('"options": {', '"options": {"illegal_action": "lose", ')
        .encode(),
        "render.json": text.replace('"options": {', '"options": {"render_mode": "svg", ')
        .encode(),
        "action.json": json.dumps({**replay, "actions": [10**30] + replay["actions"]}).encode(),
    }
    for name, raw in files.items():
        path = tmp_path / name
        path.write_bytes(raw)
        out = tmp_path / (name + ".html")
        assert main(["replay", str(path), "-o", str(out)]) == 2, name
        line = one_error(capsys)
        assert len(line) < 600, (name, line)
        assert not out.exists(), name
    assert main(["replay", str(good), "-o", str(tmp_path / "missing" / "x.html")]) == 2
    one_error(capsys, "does not exist")


def test_play_refuses_bad_models(capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    for model, words in (("x", "NAME=SPEC"), ("mine=ppo:" + str(tmp_path / "no.zip"), "no file"),
                         ("mcts=ppo:x.zip", "agent name"), ("mine=mcts:c=1", "trained model")):
        assert main(["play", "--no-browser", "--model", model]) == 2
        err = capsys.readouterr().err
        assert words in err and "Traceback" not in err, err
