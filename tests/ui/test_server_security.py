"""The play server against a hostile client, over HTTP on 127.0.0.1 (a real uvicorn started
and stopped by the tests): agent specs checked and capped before anything runs, no file named
by the browser, bodies bounded before they are read, 4xx (never 500) for malformed input,
unguessable deals, security headers."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

import card_envs.agents.ppo
from card_envs.agents import make_agent
from card_envs.agents.ppo import baseline_path
from card_envs.ui.page import PAGE_SCRIPT
from card_envs.ui.server import MAX_BODY, create_app
from card_envs.ui.sessions import AGENT_LIMITS
from ui_helpers import SHORT, http, running_server

SLIDE = SHORT["slide"]


class Answer:
    """One HTTP answer: ``status_code``, ``headers`` (lower-case names), ``text``, ``json()``."""

    def __init__(self, status: int, headers: Any, body: bytes) -> None:
        self.status_code = status
        self.headers = {k.lower(): v for k, v in headers.items()}
        self.text = body.decode("utf-8", "replace")

    def json(self) -> Any:
        return json.loads(self.text)


class Client:
    """A stdlib HTTP client of one server on 127.0.0.1 (``app``: its Starlette app)."""

    def __init__(self, base: str, app: Any) -> None:
        self.base, self.app = base, app

    def request(self, method: str, path: str, body: Any = None, content: bytes | None = None,
                ctype: str = "application/json") -> Answer:
        data = content if content is not None else \
            (None if body is None else json.dumps(body).encode())
        req = urllib.request.Request(self.base + path, data=data, method=method)
        if data is not None:
            req.add_header("Content-Type", ctype)
        try:
            with urllib.request.urlopen(req, timeout=120) as r:
                return Answer(r.status, r.headers, r.read())
        except urllib.error.HTTPError as e:
            return Answer(e.code, e.headers, e.read())

    def get(self, path: str) -> Answer:
        return self.request("GET", path)

    def post(self, path: str, json: Any = None, content: bytes | None = None) -> Answer:
        return self.request("POST", path, json, content)


@pytest.fixture(scope="module")
def client() -> Iterator[Client]:
    with running_server() as (base, app):
        yield Client(base, app)


@contextmanager
def serve(**app_kw: Any) -> Iterator[Client]:
    """A :class:`Client` of a server of ``create_app(**app_kw)``, stopped on exit."""
    with running_server(**app_kw) as (base, app):
        yield Client(base, app)


def create(client: Client, **body: Any) -> Answer:
    return client.post("/api/games", json={**SLIDE, **body})


# --- 1. agent parameters are checked before they reach compiled code -----------------------
BAD_VALUES = ("nan", "inf", "-inf", "1e999", "10**12", "123456789012345678901234567890",
              "True", "'text'", "-1")


@pytest.mark.parametrize("param", ["c", "points_weight", "widening", "anchor", "ms",
                                   "iterations", "max_nodes", "determinizations", "horizon"])
def test_bad_search_parameters_are_422_naming_the_range(client: Client, param: str) -> None:
    n = len(client.app.state.games)
    for value in BAD_VALUES:
        if param == "horizon" and value == "-1":
            continue  # -1: roll out to the end, a valid horizon
        r = create(client, vs=f"mcts:{param}={value}")
        assert r.status_code == 422, (param, value, r.text)
        err = r.json()["error"]
        assert f"{param} must be" in err and re.search(r"\[[-\d.e]+, [\d.e]+\]", err), err
    assert len(client.app.state.games) == n


def test_the_crash_from_the_issue_is_refused_everywhere(client: Client) -> None:
    """``mcts:c=nan`` used to kill the process (an out-of-bounds write in the tree descent)."""
    for spec in ("mcts:c=nan", "mcts:c=inf", "mcts:points_weight=nan", "ismcts:c=nan"):
        for game in ("slide", "op_glad_ijs"):
            r = create(client, game=game, vs=spec)
            assert r.status_code == 422 and "must be a finite number" in r.json()["error"]


# --- 2. a browser never names a file ---------------------------------------------------------
def test_no_file_named_by_the_browser_is_looked_at(client: Client, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[Any] = []
    real = card_envs.agents.ppo.PPOAgent.__init__

    def spy(self: Any, *a: Any, **kw: Any) -> None:
        built.append(kw.get("path"))
        real(self, *a, **kw)

    monkeypatch.setattr(card_envs.agents.ppo.PPOAgent, "__init__", spy)
    there = tmp_path / "model.zip"
    there.write_bytes(b"PK\x05\x06" + bytes(18))  # an (empty) zip
    answers = {}
    for path in (str(there), str(tmp_path / "nothing.zip"), "/etc/passwd", "../../x"):
        for spec in (f"ppo:{path}", f"ppo:path={path!r}", f"rllib:{path}",
                     f"ppo:path={path!r},deterministic=False"):
            r = create(client, vs=spec)
            assert r.status_code == 422, (spec, r.text)
            answers[spec] = r.json()["error"].replace(path, "PATH").replace(repr(path), "PATH")
            assert "not allowed here" in answers[spec]
    assert built == []  # refused before any agent was built
    # the answer is the same whether the file exists or not
    assert answers[f"ppo:{there}"] == answers[f"ppo:{tmp_path / 'nothing.zip'}"]
    # a game option that could read a file is refused as well, existing file or not
    for deck in (str(there), "/etc/passwd", str(tmp_path / "none.json")):
        r = create(client, game="if_it_fits", options={"deck": deck})
        assert r.status_code == 422 and "as data" in r.json()["error"]
        assert deck not in r.json()["error"]


def test_models_listed_by_the_server_are_chosen_by_name() -> None:
    path = baseline_path("slide_v0")
    with serve(models={"baseline": f"ppo:{path}"}) as c:
        _models_by_name(c, path)
    with pytest.raises(ValueError, match="no file"):
        create_app(models={"ghost": "ppo:/no/such/model.zip"})
    with pytest.raises(ValueError, match="agent name"):
        create_app(models={"mcts": f"ppo:{path}"})


def _models_by_name(c: Client, path: Path) -> None:
    app = c.app
    assert c.get("/api/config").json()["models"] == ["baseline"]
    r = c.post("/api/games", json={**SLIDE, "vs": "baseline", "seed": 1})
    assert r.status_code == 201, r.text
    view = r.json()
    assert view["players"] == ["you", "baseline"] and str(path) not in json.dumps(view)
    session = app.state.games.get(view["id"])
    assert type(session.agents[1]).__name__ == "PPOAgent"
    # the model's path, typed by the browser, is still refused
    r = c.post("/api/games", json={**SLIDE, "vs": f"ppo:{path}"})
    assert r.status_code == 422


# --- 4. budgets are capped; the command line's own specs are not -----------------------------
def test_budgets_are_capped_and_the_server_specs_trusted() -> None:
    big = "mcts:iterations=30000"
    with serve(defaults={**SLIDE, "vs": big}) as c:
        _capped(c, big)


def _capped(c: Client, big: str) -> None:
    for spec, key in ((f"mcts:ms={AGENT_LIMITS['ms'] + 1}", "ms"),
                      ("mcts:iterations=20001", "iterations"),
                      ("mcts:ms=100,max_nodes=1000000", "max_nodes"),
                      ("mcts:determinizations=257", "determinizations"),
                      ("mcts:iterations=30001", "iterations")):
        r = c.post("/api/games", json={**SLIDE, "vs": spec})
        assert r.status_code == 422 and f"{key} is capped at" in r.json()["error"], r.text
    assert c.post("/api/games", json={**SLIDE, "vs": "mcts:iterations=20000"}).status_code == 201
    r = c.post("/api/games", json={**SLIDE, "vs": big, "seat": 1})  # the server's own spec
    assert r.status_code == 201 and r.json()["players"] == [big, "you"]
    assert c.get("/api/config").json()["limits"] == AGENT_LIMITS


def _raw_request(port: int, head: bytes, body_parts: list[bytes], pause: float = 0.0
                 ) -> tuple[bytes, int]:
    """Send ``head`` then ``body_parts`` over one socket; ``(response, bytes of body sent)``.
    Stops sending as soon as a response arrives."""
    sent = 0
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(head)
        s.setblocking(False)
        out = b""
        for part in body_parts:
            try:
                out += s.recv(65536)
            except BlockingIOError:
                pass
            if out:
                break
            try:
                s.sendall(part)
                sent += len(part)
            except (BlockingIOError, BrokenPipeError, ConnectionResetError):
                break
            time.sleep(pause)
        s.setblocking(True)
        s.settimeout(30)
        try:
            while b"\r\n\r\n" not in out:
                more = s.recv(65536)
                if not more:
                    break
                out += more
        except (TimeoutError, ConnectionResetError):
            pass
    return out, sent


def test_a_large_body_is_refused_before_it_is_read() -> None:
    with running_server() as (base, _):
        port = int(base.rsplit(":", 1)[1])
        # a declared length over the limit: 413 at once, nothing of the body needed
        head = (b"POST /api/games HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json"
                b"\r\nContent-Length: 1000000000\r\n\r\n")
        t = time.perf_counter()
        out, _ = _raw_request(port, head, [b""])
        assert out.startswith(b"HTTP/1.1 413"), out[:200]
        assert time.perf_counter() - t < 10
        # no length (chunked): refused once the stream passes the limit, long before its end
        head = (b"POST /api/games HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json"
                b"\r\nTransfer-Encoding: chunked\r\n\r\n")
        chunk = b"4000\r\n" + b" " * 0x4000 + b"\r\n"  # 16 KiB of JSON whitespace
        out, sent = _raw_request(port, head, [chunk] * 4000, pause=0.002)  # 64 MiB offered
        assert out.startswith(b"HTTP/1.1 413"), out[:200]
        assert sent < 40 * MAX_BODY, sent


# --- 4. other games are served while an agent thinks -------------------------------------------
def test_a_second_client_is_served_while_a_search_runs() -> None:
    """One game's agent searches for seconds (one compiled call); another client's requests
    are answered meanwhile (the search releases the GIL, requests run in worker threads)."""
    spec = "mcts:iterations=120000"
    make_agent(spec, "if_it_fits_v0", seed=0)  # compiled before the clock starts
    with running_server(limits={"iterations": 120000}) as (base, _):
        done: dict[str, float] = {}

        def slow() -> None:
            status, v = http("POST", f"{base}/api/games",
                             {"game": "if_it_fits", "vs": spec, "seat": 1, "seed": 3})
            assert status == 201, v
            done["slow"] = time.perf_counter()

        t0 = time.perf_counter()
        th = threading.Thread(target=slow)
        th.start()
        time.sleep(0.3)  # the search is running
        served = []
        for _ in range(3):
            status, _ = http("GET", f"{base}/api/config")
            assert status == 200
            status, v = http("POST", f"{base}/api/games", {**SLIDE, "seed": 1})
            assert status == 201
            served.append(time.perf_counter())
        th.join(timeout=120)
        assert "slow" in done
        assert done["slow"] - t0 > 1.0, "the search was too short to show anything"
        assert served[-1] < done["slow"], (served[-1] - t0, done["slow"] - t0)


def test_busy_server_answers_503_and_the_table_keeps_its_byte_budget() -> None:
    with serve(max_bytes=3 * 2**20) as c:
        _byte_budget(c)
    spec = "mcts:iterations=120000"
    with running_server(limits={"iterations": 120000}, max_busy=1, busy_wait=0.2) as (base, _):
        th = threading.Thread(target=http, args=("POST", f"{base}/api/games",
                                                 {"game": "if_it_fits", "vs": spec,
                                                  "seat": 1}))
        th.start()
        time.sleep(0.4)
        status, v = http("POST", f"{base}/api/games", {**SLIDE})
        th.join(timeout=120)
        assert status == 503 and "busy" in v["error"]


def _byte_budget(c: Client) -> None:
    ids = []
    for seed in range(4):  # each: one mcts tree of ~1.6 MB (ms: max_nodes 2**15)
        r = c.post("/api/games", json={**SLIDE, "vs": "mcts:ms=5,max_nodes=32768",
                                       "seed": seed})
        assert r.status_code == 201
        ids.append(r.json()["id"])
    games = c.app.state.games
    assert games.nbytes <= 3 * 2**20 and len(games) < 4
    assert c.get(f"/api/games/{ids[-1]}").status_code == 200  # the newest is kept
    assert c.get(f"/api/games/{ids[0]}").status_code == 404  # the oldest was dropped


# --- 5. malformed input is 4xx with a JSON error, never 500 ------------------------------------
def test_malformed_bodies_are_400_not_500(client: Client) -> None:
    deep = "[" * 5000 + "]" * 5000
    cases = [
        ('{"game": "slide", "seed": ' + "9" * 4301 + "}", 400, "4301 digits"),
        ('{"game": "slide", "seed": ' + "9" * 5000 + "}", 400, "5000 digits"),
        ('{"game": "slide", "seed": NaN}', 400, "NaN"),
        ('{"game": "slide", "game": "isflak"}', 400, "twice"),
        ('{"game": "slide", "options": ' + deep + "}", 400, None),
        (deep, 400, None),
        ('{"a":' * 30 + "1" + "}" * 30, 400, "nested deeper"),
        ('{"game": "slide", "theme": []}', 422, "'theme' must be"),
        ('{"game": "slide", "theme": {}}', 422, "'theme' must be"),
        ('{"game": ["slide"]}', 422, "'game' must be"),
        ('{"game": "slide", "seed": 18446744073709551616}', 422, "'seed' must be"),
        ('{"game": "slide", "players": 99999999999999999999999}', 422, "players"),
        ('{"game": "slide", "vs": "mcts:c=' + "[" * 400 + '"}', 422, None),
        ('{"game": "slide", "vs": "' + "x" * 5000 + '"}', 422, "at most 1000 characters"),
        ('{"game": "slide", "vs": "mcts:\\u0000=1"}', 422, None),
        ('{"game": "slide", "vs": "mcts:c=(1,2)"}', 422, None),
        ('{"game": "sl\\u00efde"}', 422, "unknown game"),
        ('{"game": "slide", "options": {"\\ud800": 1}}', 422, None),
        ('{"game": "if_it_fits", "options": {"deck": {"box_cards": ' + "[" * 7 + "]" * 7
         + "}}}", 422, None),
    ]
    for text, status, words in cases:
        r = client.post("/api/games", content=text.encode())
        assert r.status_code == status, (text[:80], r.status_code, r.text[:300])
        err = r.json()["error"]
        assert words is None or words in err, (text[:80], err)
        assert len(err) < 3000


# --- 6. deals that cannot be guessed --------------------------------------------------------------
def test_server_deals_come_from_64_bit_secrets(client: Client) -> None:
    seeds = []
    for _ in range(16):
        r = create(client, seed=None)
        seeds.append(client.app.state.games.get(r.json()["id"]).seed)
    assert len(set(seeds)) == 16 and max(seeds) >= 2**40 and max(seeds) < 2**64
    r = create(client, seed=12345)  # a chosen seed is kept (the page's seed field)
    assert client.app.state.games.get(r.json()["id"]).seed == 12345
    with serve(defaults={**SLIDE, "seed": 77}) as fixed:
        assert fixed.get("/api/config").json()["defaults"]["seed"] == 77


# --- 7. headers ----------------------------------------------------------------------------------
def test_security_headers_on_every_response(client: Client) -> None:
    page = client.get("/")
    csp = page.headers["content-security-policy"]
    inline = re.findall(r"<script>(.*?)</script>", page.text, re.S)
    assert inline == [PAGE_SCRIPT]
    digest = base64.b64encode(hashlib.sha256(PAGE_SCRIPT.encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in csp
    for part in ("default-src 'none'", "frame-ancestors 'none'", "connect-src 'self'",
                 "base-uri 'none'", "object-src 'none'"):
        assert part in csp
    assert "unsafe-inline" not in csp.split("script-src")[1].split(";")[0]
    responses = [page, client.get("/api/config"), client.get("/api/games/nope"),
                 client.post("/api/games", content=b"x" * (MAX_BODY + 1)),
                 create(client, vs="mcts:c=nan"), create(client, seed=3)]
    assert [r.status_code for r in responses] == [200, 200, 404, 413, 422, 201]
    for r in responses:
        h = r.headers
        assert h["x-frame-options"] == "DENY" and h["x-content-type-options"] == "nosniff"
        assert h["referrer-policy"] == "no-referrer" and h["cache-control"] == "no-store"
        assert h["content-security-policy"] == csp
