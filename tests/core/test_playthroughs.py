"""Golden playthroughs: every listed variant's file replays identically with the current code
(tests/support/playthrough.py; regenerate with ``make playthroughs``), and the checker itself
reports tampered files, version changes, missing and unlisted files as it should."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

import card_envs
import playthrough as P

MAX_FILE = 300 * 1024
MAX_TOTAL = 3 * 1024 * 1024


@pytest.mark.parametrize("name", list(P.VARIANTS))
def test_playthrough_replays(name: str) -> None:
    variant = P.VARIANTS[name]
    msg = P.check_file(variant.path, variant)
    if msg is not None:
        pytest.fail(msg, pytrace=False)


def test_every_file_is_listed() -> None:
    stray = P.stray_files()
    assert not stray, "files in tests/playthroughs/ that no variant in " \
                      f"tests/support/playthrough.py " \
                      f"lists (remove them, or run `make playthroughs`): {stray}"


def test_every_game_has_playthroughs() -> None:
    assert {v.env_id for v in P.VARIANTS.values()} == set(card_envs.env_ids())


def test_files_stay_reviewable() -> None:
    sizes = {v.name: v.path.stat().st_size for v in P.VARIANTS.values() if v.path.exists()}
    big = {n: s for n, s in sizes.items() if s > MAX_FILE}
    assert not big, f"playthroughs over {MAX_FILE // 1024} KiB: {big}"
    assert sum(sizes.values()) <= MAX_TOTAL


# --- the checker reports what it should (on copies in tmp_path) ---------------------------
NAME = "slide_v0-2p"


def _copy(tmp_path: Path, name: str = NAME) -> tuple[Path, P.Variant, list[str]]:
    v = P.VARIANTS[name]
    path = tmp_path / v.path.name
    shutil.copy(v.path, path)
    return path, v, path.read_text().split("\n")


def _step_line(lines: list[str], step: int) -> int:
    return lines.index(f"== step {step}")


def test_tampered_render_line_shows_the_first_differing_step(tmp_path: Path) -> None:
    path, v, lines = _copy(tmp_path)
    steps = sum(line.startswith("== step ") for line in lines)
    mid = steps // 2
    i = _step_line(lines, mid) + 2  # the first render line after the action line
    original = lines[i]
    assert original.startswith("  "), original
    # change this step and a later one: only the first must be reported
    lines[i] = original.replace("round", "ROUND")
    j = _step_line(lines, mid + 3) + 2
    lines[j] = lines[j] + " later"
    path.write_text("\n".join(lines))
    msg = P.check_file(path, v)
    assert msg is not None
    assert msg.startswith(str(path))
    assert f"first difference at 'step {mid}'" in msg
    assert "behaviour changed without a version bump" in msg
    assert "make playthroughs" in msg
    assert f"\n-{lines[i]}\n" in msg and f"\n+{original}\n" in msg
    assert "later" not in msg
    assert not re.search(rf"== step (?!{mid}\b)\d+", msg), msg  # no other step block


def test_header_version_differs(tmp_path: Path) -> None:
    path, v, lines = _copy(tmp_path)
    version = card_envs.env_class(v.env_id).game_class.version
    i = lines.index(f"version: {version}")
    lines[i] = "version: x-not-this-one"
    path.write_text("\n".join(lines))
    msg = P.check_file(path, v)
    assert msg is not None and msg.startswith(str(path))
    assert "version must change with its behaviour" in msg
    assert "regenerated with `make playthroughs`" in msg
    assert "replay identically" in msg


def test_code_version_newer_than_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path, v, lines = _copy(tmp_path)
    game = card_envs.env_class(v.env_id).game_class
    monkeypatch.setattr(game, "version", str(int(game.version) + 1))
    i = _step_line(lines, 5) + 2
    lines[i] += " changed"
    path.write_text("\n".join(lines))
    msg = P.check_file(path, v)
    assert msg is not None
    assert "the code's version is newer: this file is stale and must be regenerated" in msg
    assert "first difference at 'step 5'" in msg and "changed" in msg


def test_illegal_recorded_action(tmp_path: Path) -> None:
    path, v, lines = _copy(tmp_path)
    i = _step_line(lines, 10) + 1
    agent = lines[i].split()[1]
    lines[i] = f"action: {agent} 55  pick 14 from bottom  (of 1 legal)"  # never legal here
    path.write_text("\n".join(lines))
    msg = P.check_file(path, v)
    assert msg is not None and "first difference at 'step 10'" in msg
    assert "+ILLEGAL: slide_v0: illegal action 55" in msg


def test_file_cut_short(tmp_path: Path) -> None:
    path, v, lines = _copy(tmp_path)
    path.write_text("\n".join(lines[:_step_line(lines, 21)]))
    msg = P.check_file(path, v)
    assert msg is not None and "first difference at 'end: the game is not over after " \
                               "20 steps'" in msg


def test_parallel_action_changed(tmp_path: Path) -> None:
    path, v, lines = _copy(tmp_path, "op_glad_ijs_v0-parallel")
    i = _step_line(lines, 7) + 1
    assert lines[i].startswith("action: player_0 ")
    lines[i] = "action: player_0 1  whatever  (of 2 legal)"
    path.write_text("\n".join(lines))
    msg = P.check_file(path, v)
    assert msg is not None and "first difference at 'step 7'" in msg


def test_header_differs_from_the_variant(tmp_path: Path) -> None:
    path, v, lines = _copy(tmp_path)
    i = lines.index(f"seed: {v.seed}  (env.reset(seed={v.seed}))")
    lines[i] = "seed: 999  (env.reset(seed=999))"
    path.write_text("\n".join(lines))
    msg = P.check_file(path, v)
    assert msg is not None and "does not match the variant" in msg and "+seed: " in msg


def test_missing_and_stray_files(tmp_path: Path) -> None:
    v = P.VARIANTS[NAME]
    msg = P.check_file(tmp_path / v.path.name, v)
    assert msg is not None and "missing" in msg and "make playthroughs" in msg
    (tmp_path / v.path.name).write_text("")
    (tmp_path / "slide_v0-9p.txt").write_text("")
    assert P.stray_files(tmp_path) == [tmp_path / "slide_v0-9p.txt"]


def test_cli_write_and_check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                             capsys: pytest.CaptureFixture[str]) -> None:
    committed = P.VARIANTS[NAME].path.read_text()
    monkeypatch.setattr(P, "DIR", tmp_path)
    assert P.main(["--write", "--only", NAME]) == 0
    assert (tmp_path / f"{NAME}.txt").read_text() == committed
    assert P.main(["--check", "--only", NAME]) == 0
    assert f"{NAME}.txt: ok" in capsys.readouterr().out
    (tmp_path / "stray.txt").write_text("")
    assert P.check([P.VARIANTS[NAME]], strays=True) == 1
