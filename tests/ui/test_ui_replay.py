"""Replays: recording, reading back (with precise errors), the self-contained HTML page, and
the ``card-envs record | replay | play`` commands."""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import os
import re
import subprocess
import sys
import urllib.request
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

import card_envs
from card_envs.cli import main
from card_envs.core import replay as R
from card_envs.core.errors import IllegalActionError, StateDictError
from card_envs.ui.record import play_back_envs, record_game
from card_envs.ui.replay_html import build_data, write_html
from ui_helpers import GAMES, SHORT

ROOT = Path(card_envs.__file__).resolve().parent.parent
SVG_NS = "http://www.w3.org/2000/svg"


def short_replay(game: str, seed: int = 1, agents: tuple[str, ...] = ("heuristic", "random")
                 ) -> dict[str, Any]:
    return record_game(game, list(agents), seed=seed, **SHORT[game].get("options", {}))


def page_data(html: str) -> dict[str, Any]:
    m = re.search(r'<script type="application/octet-stream" id="data">([^<]*)</script>', html)
    assert m, "no embedded data"
    data = json.loads(gzip.decompress(base64.b64decode(m.group(1))))
    data["svgs"] = ["".join(data["pieces"][i] for i in ids) for ids in data["svg_parts"]]
    return data


def assert_self_contained(text: str) -> None:
    """No URL but the SVG namespace, no external script, stylesheet or ``url()`` (references
    inside the document, ``url(#id)``, are fine)."""
    assert re.findall(r"https?://[^\s\"'<>]*", text.replace(SVG_NS, "")) == []
    assert not re.search(r"<script[^>]*\bsrc\s*=", text, re.I)
    assert not re.search(r"<link\b[^>]*\bhref\s*=", text, re.I)
    assert not re.search(r"@import|url\(\s*['\"]?(?!#)", text, re.I)


@pytest.mark.parametrize("game", GAMES)
def test_replay_page_of_every_game(tmp_path: Path, game: str) -> None:
    rep = short_replay(game)
    assert rep["format"] == "card-envs-replay" and rep["format_version"] == 1
    assert rep["players"] == ["heuristic", "random"] and rep["result"]["winners"]
    assert short_replay(game)["actions"] == rep["actions"]  # deterministic
    path = tmp_path / f"{game}.html"
    info = write_html(rep, path, theme="dark")
    html = path.read_text()
    assert_self_contained(html)
    data = page_data(html)
    assert data["svgs"] == build_data(rep, theme="dark")["svgs"]  # unpacked exactly
    for svg in data["svgs"]:
        assert svg.startswith("<svg") and SVG_NS in svg
        assert_self_contained(svg)
    steps = len(rep["actions"])
    assert info["steps"] == steps and info["bytes"] == len(html.encode())
    assert [v["key"] for v in data["views"]] == ["all", "0", "1"]
    assert all(len(f) == steps + 1 for f in data["frames"].values())
    assert len(data["status"]) == steps + 1 and data["status"][-1].endswith("game over")
    env = card_envs.make_raw(rep["env_id"], **rep["options"])
    assert [m["label"] for m in data["moves"]] == [env.action_to_str(a) for a in rep["actions"]]
    assert data["result"] == rep["result"] and data["names"][0] == "player_0 (heuristic)"
    # a seat's frames are that seat's view, not everyone's
    assert data["frames"]["0"] != data["frames"]["all"]


def test_long_games_embed_only_the_omniscient_view(tmp_path: Path) -> None:
    rep = short_replay("slide")
    data = build_data(rep, seat_views_up_to=10)
    assert [v["key"] for v in data["views"]] == ["all"] and "only the picture" in data["note"]
    assert len(data["frames"]["all"]) == len(rep["actions"]) + 1


def test_replay_files_round_trip_and_start_states(tmp_path: Path) -> None:
    rep = short_replay("isflak", seed=4)
    R.save(rep, tmp_path / "g.json")
    assert R.load(tmp_path / "g.json") == rep
    # a replay from a start state (no seed) plays back to the same end
    env = card_envs.make_raw("isflak_v0")
    env.reset(seed=4)
    start = env.state_dict()
    from_start = {**rep, "seed": None, "start": start}
    *_, (a, _) = play_back_envs(rep)
    *_, (b, _) = play_back_envs(from_start)
    assert a.state_dict() == b.state_dict()
    seats = [seat for _, seat in play_back_envs(rep)]
    assert seats[0] is None and set(seats[1:]) == {0, 1}


def test_bad_replays_raise_precise_errors(tmp_path: Path) -> None:
    rep = short_replay("slide")
    bad: list[tuple[Any, type, str]] = [
        ([], StateDictError, "JSON object"),
        ({**rep, "format": "chess-pgn"}, StateDictError, "not a card-envs replay"),
        ({**rep, "format_version": 2}, StateDictError, "format_version"),
        ({**rep, "env_id": "chess_v0"}, StateDictError, "unknown env id 'chess_v0'"),
        ({**rep, "game_version": "9"}, StateDictError, "game version '9'"),
        ({**rep, "options": {"colour": 1}}, StateDictError, "unknown option(s) ['colour']"),
        ({**rep, "options": {"num_players": 9}}, StateDictError, "num_players"),
        ({**rep, "seed": -3}, StateDictError, "seed"),
        ({**rep, "seed": None, "start": None}, StateDictError, "seed"),
        ({**rep, "actions": [1, "2"]}, StateDictError, "replay action 1 must be an int"),
        ({**rep, "players": "me"}, StateDictError, "players"),
        ({**rep, "actions": rep["actions"][:3] + [55] + rep["actions"][4:]},
         IllegalActionError, "replay action 3"),
        ({**rep, "actions": rep["actions"] + [0]}, IllegalActionError,
         f"replay action {len(rep['actions'])}"),
    ]
    for d, err, words in bad:
        with pytest.raises(err, match=re.escape(words)):
            for _ in play_back_envs(d):
                pass
    out = tmp_path / "x.html"
    with pytest.raises(IllegalActionError):
        write_html(bad[-1][0], out)
    assert not out.exists()  # nothing written
    (tmp_path / "x.json").write_text("{oops")
    with pytest.raises(StateDictError, match="not a JSON replay"):
        R.load(tmp_path / "x.json")


def test_record_and_replay_commands(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "game.json"
    assert main(["record", "--game", "op_glad_ijs", "--agents", "heuristic,random",
                 "--seed", "2", "--option", "max_turned=3", "-o", str(out)]) == 0
    rep = R.load(out)
    assert rep["options"]["max_turned"] == 3 and rep["players"] == ["heuristic", "random"]
    assert main(["replay", str(out), "-o", str(tmp_path / "g.html"), "--theme", "dark"]) == 0
    assert (tmp_path / "g.html").stat().st_size > 1000
    printed = capsys.readouterr().out
    assert "wrote" in printed and "KiB" in printed
    assert main(["record", "--game", "slide", "--agents", "random", "--players", "3",
                 "-o", str(tmp_path / "s.json")]) == 0
    assert R.load(tmp_path / "s.json")["players"] == ["random"] * 3
    (tmp_path / "bad.json").write_text(json.dumps({**rep, "game_version": "7"}))
    assert main(["replay", str(tmp_path / "bad.json")]) == 2
    assert main(["record", "--agents", "nobody", "-o", str(tmp_path / "n.json")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[0].startswith("card-envs: error: ") and "game version" in err[0]
    assert err[1].startswith("card-envs: error: ") and "unknown agent" in err[1]


def test_play_command_serves_the_page_on_localhost() -> None:
    """``card-envs play --no-browser --port 0`` prints its URL (127.0.0.1) and serves."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    p = subprocess.Popen([sys.executable, "-m", "card_envs.cli", "play", "--game", "isflak",
                          "--vs", "random", "--no-browser", "--port", "0"], cwd=ROOT, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = p.stdout.readline()
        m = re.search(r"(http://127\.0\.0\.1:\d+/)", line)
        assert m, (line, p.stderr.read() if p.poll() is not None else "")
        with urllib.request.urlopen(m.group(1), timeout=60) as r:
            assert r.status == 200 and b"card-envs" in r.read()
    finally:
        p.terminate()
        p.wait(timeout=30)
    bad = subprocess.run([sys.executable, "-m", "card_envs.cli", "play", "--game", "chess",
                          "--no-browser"], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=120)
    assert bad.returncode == 2 and bad.stderr.strip().startswith("card-envs: error: unknown game")


class _Page(HTMLParser):
    """The ``<head>``'s CSP meta tag and the text of every ``<script>`` with its type."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.csp: list[str] = []
        self.scripts: list[tuple[str | None, str]] = []
        self.in_head = False
        self._script: str | None = None
        self._type: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "head":
            self.in_head = True
        elif tag == "meta" and (a.get("http-equiv") or "").lower() == \
                "content-security-policy":
            assert self.in_head, "the CSP meta tag must be in the <head>"
            self.csp.append(a["content"] or "")
        elif tag == "script":
            self._script, self._type = "", a.get("type")

    def handle_endtag(self, tag: str) -> None:
        if tag == "head":
            self.in_head = False
        elif tag == "script" and self._script is not None:
            self.scripts.append((self._type, self._script))
            self._script = None

    def handle_data(self, data: str) -> None:
        if self._script is not None:
            self._script += data


def test_replay_page_content_security_policy(tmp_path: Path) -> None:
    """The page's one executable script is allowed by its SHA-256 in the CSP meta tag, and the
    policy allows nothing else: no other source, no network."""
    path = tmp_path / "p.html"
    write_html(short_replay("isflak"), path)
    page = _Page()
    page.feed(path.read_text())
    assert len(page.csp) == 1
    directives = {d.split()[0]: d.split()[1:] for d in page.csp[0].split(";") if d.strip()}
    assert directives["default-src"] == ["'none'"] and directives["connect-src"] == ["'none'"]
    assert directives["base-uri"] == ["'none'"] and directives["form-action"] == ["'none'"]
    runs = [text for kind, text in page.scripts if kind in (None, "", "text/javascript",
                                                            "module")]
    assert len(runs) == 1 and "DecompressionStream" in runs[0]
    digest = base64.b64encode(hashlib.sha256(runs[0].encode("utf-8")).digest()).decode()
    assert directives["script-src"] == [f"'sha256-{digest}'"]
    assert [kind for kind, _ in page.scripts] == ["application/octet-stream", None]


def test_write_html_never_leaves_half_a_page(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """The page is written to a temporary file that replaces the target once complete: a
    failure while writing keeps the old file (or none) and leaves no temporary file."""
    rep = short_replay("slide")
    path = tmp_path / "game.html"
    info = write_html(rep, path)
    good = path.read_bytes()
    assert len(good) == info["bytes"] and sorted(tmp_path.iterdir()) == [path]
    import card_envs.ui.replay_html as page_module

    real = page_module.render_html
    # half-way through the text, writing fails (a lone surrogate cannot be encoded)
    monkeypatch.setattr(page_module, "render_html", lambda data: real(data) + "\ud800")
    for target in (path, tmp_path / "new.html"):
        with pytest.raises(UnicodeEncodeError):
            write_html(rep, target)
    assert path.read_bytes() == good and sorted(tmp_path.iterdir()) == [path]
    monkeypatch.setattr(page_module, "render_html", real)
    monkeypatch.setattr(os, "replace", lambda *a: (_ for _ in ()).throw(OSError("disk full")))
    with pytest.raises(OSError, match="disk full"):
        write_html(rep, tmp_path / "other.html")
    assert sorted(tmp_path.iterdir()) == [path]
