"""One error style on the command line: every mistake, whether argparse finds it (a bad value,
a missing or unknown argument) or the command does (an unknown game, agent or file), is one
line ``<prog>: error: <message>`` on stderr and exit code 2, for every ``card-envs``
subcommand and for the example scripts (their own program name)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from card_envs.cli import main

ROOT = Path(__file__).resolve().parents[2]

#: (argv, words the line must contain): argparse's mistakes, then the commands' own checks
CASES = [
    ([], ["required", "COMMAND", "(card-envs --help)"]),
    (["chess"], ["invalid choice", "'chess'", "(card-envs --help)"]),
    (["arena", "--games", "x"], ["--games", "invalid int", "(card-envs arena --help)"]),
    (["arena", "--bogus"], ["unrecognized arguments: --bogus", "(card-envs arena --help)"]),
    (["arena", "-o", "novalue"], ["key=value", "(card-envs arena --help)"]),
    (["arena", "--game", "chess", "--no-progress"], ["unknown game 'chess'"]),
    (["arena", "--agents", "nobody", "--no-progress"], ["unknown agent 'nobody'"]),
    (["arena", "-o", "num_players=3", "--no-progress"], ["--players"]),
    (["record"], ["required", "-o/--out", "(card-envs record --help)"]),
    (["record", "--players", "two", "-o", "g.json"], ["--players", "(card-envs record --help)"]),
    (["record", "--game", "chess", "-o", "{tmp}/g.json"], ["unknown game 'chess'"]),
    (["record", "--agents", ",", "-o", "{tmp}/g.json"], ["--agents is empty"]),
    (["replay"], ["required", "replay", "(card-envs replay --help)"]),
    (["replay", "x.json", "--theme", "pink"], ["--theme", "(card-envs replay --help)"]),
    (["replay", "{tmp}/missing.json", "-o", "{tmp}/g.html"], ["missing.json"]),
    (["play", "--port", "x"], ["--port", "invalid int", "(card-envs play --help)"]),
    (["play", "--model", "nospec"], ["NAME=SPEC", "(card-envs play --help)"]),
    (["play", "--game", "chess", "--no-browser"], ["unknown game 'chess'"]),
]


@pytest.mark.parametrize(("argv", "words"), CASES, ids=[" ".join(c[0]) or "-" for c in CASES])
def test_every_mistake_is_one_error_line(argv: list[str], words: list[str], tmp_path: Path,
                                         capsys: pytest.CaptureFixture) -> None:
    assert main([a.replace("{tmp}", str(tmp_path)) for a in argv]) == 2
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("card-envs: error: "), lines[0]
    assert all(w in lines[0] for w in words), (lines[0], words)
    assert "usage:" not in err and "Traceback" not in err
    assert not list(tmp_path.iterdir())  # nothing written


def test_help_still_prints_usage_and_exits_0(capsys: pytest.CaptureFixture) -> None:
    assert main(["arena", "--help"]) == 0
    assert capsys.readouterr().out.startswith("usage: card-envs arena")


@pytest.mark.parametrize(("script", "args", "words"), [
    ("arena.py", ["--games", "x"], ["invalid int", "(arena.py --help)"]),
    ("arena.py", ["--game", "chess", "--no-progress"], ["unknown game 'chess'"]),
    ("train_ppo.py", ["--game", "chess"], ["unknown game 'chess'"]),
    ("train_ppo.py", ["--game", "slide", "--minutes", "0"], ["give --minutes or --steps"]),
    ("train_ppo.py", ["--game", "slide", "--trainer", "sb3", "--ray", "auto"],
     ["--ray and --samplers are options of the native trainer"]),
    ("train_ppo.py", ["--game", "slide", "--ray", " "], ["--ray needs an address"]),
    ("train_ppo.py", ["--game", "slide", "--samplers", "0", "--out", "/nonexistent/x"],
     ["samplers must be an integer in 1..num_envs"]),
    ("train_rllib.py", ["--game", "slide", "--runner", "bogus"], ["invalid choice"]),
    ("train_rllib.py", [], ["required", "--game", "(train_rllib.py --help)"]),
    ("train_rllib.py", ["--game", "slide", "-o", "num_players=3"], ["--players"]),
    ("train_az.py", [], ["required", "--game", "(train_az.py --help)"]),
    ("train_az.py", ["--game", "chess"], ["unknown game 'chess'"]),
    ("train_az.py", ["--game", "isflak"], ["give --minutes or --rounds"]),
    ("train_az.py", ["--game", "isflak", "--minutes", "1", "-s", "sims=nan", "--out",
                     "/nonexistent/x"], ["sims must be an integer"]),
    ("train_az.py", ["--game", "isflak", "--rounds", "1", "-s", "bogus=1", "--out",
                     "/nonexistent/x"], ["unknown az setting(s) ['bogus']"]),
    ("train_az.py", ["--game", "isflak", "--rounds", "1", "--init", "/nonexistent.safetensors"],
     ["--init"]),
    ("train_az.py", ["--game", "isflak", "--rounds", "1", "--resume", "--out",
                     "/nonexistent/x"], ["nothing to resume"]),
    ("train_az.py", ["--game", "slide", "--players", "9", "--rounds", "1"], ["num_players"]),
    ("train_az.py", ["--game", "slide", "--minutes", "inf"], ["minutes"]),
])
def test_example_scripts_use_the_same_style(script: str, args: list[str],
                                            words: list[str]) -> None:
    p = subprocess.run([sys.executable, str(ROOT / "examples" / script), *args],
                       capture_output=True, text=True, timeout=300, cwd=ROOT, check=False)
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 2 and len(lines) == 1, (p.returncode, p.stderr[-2000:])
    assert lines[0].startswith(f"{script}: error: ") and all(w in lines[0] for w in words), \
        lines[0]
