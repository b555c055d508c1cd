"""The play server through its JSON API (Starlette's TestClient; a real uvicorn for the
concurrency test): whole games of every game, bad requests answered 4xx with the game
unchanged, games independent of each other, nothing hidden reaching the browser, and the
board's click paths, last-move marks and result sentence as the games' view modules give them."""

from __future__ import annotations

import dataclasses
import json
import random
import threading
from typing import Any

import numpy as np
import pytest
from starlette.testclient import TestClient

from card_envs import make_raw
from card_envs.core import kernels as K
from card_envs.ui.board import move_paths
from card_envs.ui.moves import describe_move, view_after
from card_envs.ui.record import play_back_envs
from card_envs.ui.server import create_app
from ui_helpers import GAMES, SHORT, http, running_server


@pytest.fixture(scope="module")
def client() -> TestClient:
    return TestClient(create_app())


def new_game(client: TestClient, settings: dict[str, Any], **kw: Any) -> dict[str, Any]:
    r = client.post("/api/games", json={**settings, **kw})
    assert r.status_code == 201, r.text
    return r.json()


def play_random(client: TestClient, view: dict[str, Any], rng: random.Random,
                on_view: Any = None) -> dict[str, Any]:
    """Random legal moves through the API to the end; ``on_view(view)`` sees every view."""
    while True:
        if on_view:
            on_view(view)
        if view["over"]:
            return view
        assert view["your_turn"] and view["legal"]
        move = rng.choice(view["legal"])
        r = client.post(f"/api/games/{view['id']}/move",
                        json={"action": move["action"], "turn": view["turn"]})
        assert r.status_code == 200, r.text
        view = r.json()


@pytest.mark.parametrize("game", GAMES)
def test_a_whole_game_through_the_api(client: TestClient, game: str) -> None:
    seat = 1
    view = new_game(client, SHORT[game], seed=11, seat=seat)
    assert view["seat"] == seat and view["players"][seat] == "you"
    assert view["svg"].startswith("<svg")
    view = play_random(client, view, random.Random(0))
    assert view["over"] and view["to_act"] is None and view["legal"] == []
    res = view["result"]
    assert len(res["points"]) == 2 and any(res["winners"])
    assert all(f"player_{s}" in view["result_text"] for s, w in enumerate(res["winners"]) if w)
    assert [e["n"] for e in view["log"]] == list(range(1, view["turn"] + 1))
    mine = [e for e in view["log"] if e["seat"] == seat]
    assert mine and all(e["label"] for e in mine)
    # the replay (only now that the game is over) plays back to the same end
    r = client.get(f"/api/games/{view['id']}/replay")
    assert r.status_code == 200 and "attachment" in r.headers["content-disposition"]
    rep = r.json()
    assert rep["seed"] == 11 and len(rep["actions"]) == view["turn"]
    assert rep["players"][seat] == "human" and rep["result"] == res
    session = client.app.state.games.get(view["id"])
    *_, (env, _) = play_back_envs(rep)
    assert env.state_dict() == session.env.state_dict()


def _snapshot(client: TestClient, gid: str) -> tuple[str, str, int]:
    s = client.app.state.games.get(gid)
    return json.dumps(s.env.state_dict()), json.dumps(s.view()), len(s.actions)


def test_bad_moves_are_4xx_and_change_nothing(client: TestClient) -> None:
    view = new_game(client, SHORT["slide"], seed=5)
    gid, turn = view["id"], view["turn"]
    legal = {m["action"] for m in view["legal"]}
    illegal = next(a for a in range(56) if a not in legal)
    before = _snapshot(client, gid)
    url = f"/api/games/{gid}/move"
    cases: list[tuple[dict[str, Any], int, str]] = [
        ({"json": {"action": illegal, "turn": turn}}, 400, "illegal move"),
        ({"json": {"action": -1, "turn": turn}}, 400, "out of range"),
        ({"json": {"action": 10**12, "turn": turn}}, 400, "out of range"),
        ({"json": {"action": min(legal), "turn": turn - 1}}, 409, "stale"),
        ({"json": {"action": min(legal), "turn": turn + 1}}, 409, "stale"),
        ({"json": {"action": str(min(legal)), "turn": turn}}, 422, "'action' must be"),
        ({"json": {"action": True, "turn": turn}}, 422, "'action' must be"),
        ({"json": {"action": float(min(legal)), "turn": turn}}, 422, "'action' must be"),
        ({"json": {"action": [min(legal)], "turn": turn}}, 422, "'action' must be"),
        ({"json": {"action": min(legal), "turn": "0"}}, 422, "'turn' must be"),
        ({"json": {"action": min(legal)}}, 422, "a move is"),
        ({"json": [min(legal), turn]}, 400, "JSON object"),
        ({"content": b"{not json", "headers": {"content-type": "application/json"}}, 400,
         "not a JSON request body"),
        ({"content": b"\xff\xfe", "headers": {"content-type": "application/json"}}, 400,
         "not UTF-8"),
        ({"content": json.dumps({"action": min(legal), "turn": turn}).encode(),
          "headers": {"content-type": "text/plain"}}, 415, "application/json"),
        ({"content": b"[" + b"0," * 40000 + b"0]",
          "headers": {"content-type": "application/json"}}, 413, "bytes"),
    ]
    for kw, status, words in cases:
        r = client.post(url, **kw)
        assert r.status_code == status, (kw, r.text)
        assert words in r.json()["error"], (kw, r.text)
        assert _snapshot(client, gid) == before, kw
    r = client.post("/api/games/no-such-game/move", json={"action": 0, "turn": 0})
    assert r.status_code == 404 and "no game" in r.json()["error"]
    assert client.get("/api/games/nope").status_code == 404
    assert client.get(f"/api/games/{gid}/replay").status_code == 409  # would show every card
    # a replayed request: the first one plays, the same one again is stale
    move = {"action": min(legal), "turn": turn}
    assert client.post(url, json=move).status_code == 200
    after = _snapshot(client, gid)
    r = client.post(url, json=move)
    assert r.status_code == 409 and _snapshot(client, gid) == after
    # once over, every move is refused
    end = play_random(client, client.get(f"/api/games/{gid}").json(), random.Random(1))
    done = _snapshot(client, gid)
    r = client.post(url, json={"action": 0, "turn": end["turn"]})
    assert r.status_code == 409 and "over" in r.json()["error"]
    assert _snapshot(client, gid) == done


def test_bad_new_games_are_422(client: TestClient) -> None:
    n = len(client.app.state.games)
    for body, words in (
            ({"game": "chess"}, "unknown game"),
            ({"game": "slide", "players": 9}, "num_players"),
            ({"game": "slide", "players": "3"}, "'players' must be"),
            ({"game": "slide", "vs": "grandmaster"}, "unknown agent"),
            ({"game": "slide", "vs": "mcts:iters=5"}, "unknown parameter"),
            ({"game": "slide", "vs": ""}, "'vs' must be"),
            ({"game": "slide", "vs": "random,random"}, "at most 1 agents"),
            ({"game": "slide", "seat": 2}, "'seat' must be an integer in 0..1"),
            ({"game": "slide", "seed": -1}, "'seed' must be"),
            ({"game": "slide", "options": {"colour": 1}}, "unknown option"),
            ({"game": "slide", "options": {"render_mode": "svg"}}, "not game options"),
            ({"game": "slide", "options": []}, "'options' an object"),
            ({"game": "slide", "theme": "neon"}, "'theme' must be")):
        r = client.post("/api/games", json=body)
        assert r.status_code == 422, (body, r.text)
        assert words in r.json()["error"], (body, r.text)
    assert len(client.app.state.games) == n


def test_page_and_config(client: TestClient) -> None:
    page = client.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    html = page.text
    assert "<script src" not in html and "<link" not in html and "http" not in html
    cfg = client.get("/api/config").json()
    assert cfg["defaults"]["game"] == "slide_v0"
    assert {g["name"] for g in cfg["games"]} >= set(GAMES)


def test_only_the_allowed_hosts_are_served() -> None:
    c = TestClient(create_app(allowed_hosts=["127.0.0.1", "localhost"]),
                   base_url="http://127.0.0.1")
    assert c.get("/").status_code == 200
    assert c.get("/", headers={"host": "attacker.example"}).status_code == 400


def test_the_agents_move_before_the_human(client: TestClient) -> None:
    view = new_game(client, SHORT["isflak"], seed=2, seat=1)  # seat 0 starts
    assert view["turn"] == 1 and view["your_turn"] and view["log"][0]["seat"] == 0
    assert view["log"][0]["label"].startswith("place")  # a public move is named


def _equal_views(session: Any, rng: np.random.Generator, draws: int = 3) -> None:
    """Every payload is byte-identical when what the human cannot know is redrawn. Once the
    game is over the result is published (the end of a game reveals what decides it, e.g.
    Flipology's face-down Sloths and Koalas), so there it is the rest that must not change."""
    def shown(s: Any) -> str:
        v = s.view()
        return json.dumps({k: x for k, x in v.items() if k != "result" or not v["over"]})

    before = shown(session)
    for _ in range(draws):
        other = dataclasses.replace(session, env=session.env.resample(session.human, rng))
        assert shown(other) == before


def _check_log(env_id: str, options: dict, seed: int, human: int, actions: list[int],
               log: list[dict], marks: list, salt: int, rng: np.random.Generator) -> int:
    """Each logged move of another seat is what ``describe_move`` makes of it, marked on the
    board (``marks``) where the human's view before it places it (public moves only), and both
    stay the same for every position and move the human cannot tell from the true ones (same
    view before and after). Returns how many moves were checked."""
    env = make_raw(env_id, **options)
    env.reset(seed=seed)
    checked = 0
    for k, a in enumerate(actions):
        seat = int(env.state_array[K.CUR])
        entry = describe_move(env, a, human, seed=salt + k)
        assert {"n": k + 1, **entry} == log[k]
        if seat != human:
            before = env.state_dict(observer=human)
            assert marks[k] == (None if entry["label"] is None else
                                move_paths(env, before, [a])[a]), k
            rew = np.zeros(env.game.num_players, np.float32)
            seen = view_after(env.game, env.state_array, a, human, rew)
            for _ in range(2):
                alt = env.resample(human, rng)
                assert alt.state_dict(observer=human) == before
                for b in alt.legal_actions():
                    if view_after(env.game, alt.state_array, b, human, rew) == seen:
                        assert describe_move(alt, b, human, seed=salt + k) == entry, (k, b)
                        if entry["label"] is not None:
                            assert move_paths(alt, before, [b])[b] == marks[k], (k, b)
                        checked += 1
        env.step(a)
    return checked


@pytest.mark.parametrize("game", GAMES)
def test_hidden_information_stays_on_the_server(client: TestClient, game: str) -> None:
    """The human seat's view, legal moves and log are unchanged by resampling what it cannot
    know, at every position the browser is shown; the log names another seat's move only
    when the human's view tells it."""
    rng = np.random.default_rng(7)
    view = new_game(client, {**SHORT[game], "players": 3, "vs": "random,heuristic"}, seed=3,
                    seat=1)
    session = client.app.state.games.get(view["id"])
    view = play_random(client, view, random.Random(2),
                       on_view=lambda v: _equal_views(session, rng))
    opts = {**SHORT[game].get("options", {}), "num_players": 3}
    checked = _check_log(session.env.game.env_id, opts, 3, 1, session.actions, session.log,
                         session.marks, session.salt, rng)
    assert checked > 0
    if game == "slide":  # reveal choices of the seats before the last are hidden
        assert any(e["label"] is None for e in view["log"])


@pytest.mark.parametrize("game", ["slide", "op_glad_ijs"])
def test_last_moves_are_marked_only_when_public(client: TestClient, game: str) -> None:
    """Every view's ``last`` is the latest move of each other seat since the human's, marked
    where the human's view before it places it; a hidden choice (Slide's reveals before the
    last chooser's, Op Glad IJs' slaps) is neither named nor marked. The legal moves carry
    their click paths on the human's picture."""
    view = new_game(client, {**SHORT[game], "players": 3, "vs": "random"}, seed=8, seat=1)
    session = client.app.state.games.get(view["id"])
    views: list[dict[str, Any]] = []

    def seen(v: dict[str, Any]) -> None:
        views.append(v)
        env = session.env
        legal = [m["action"] for m in v["legal"]]
        paths = move_paths(env, env.state_dict(observer=1), legal)
        assert [m["path"] for m in v["legal"]] == [paths[a] for a in legal]
        assert all(m["path"] for m in v["legal"])

    play_random(client, view, random.Random(5), on_view=seen)
    env = make_raw(session.env.game.env_id, **{**SHORT[game].get("options", {}),
                                                "num_players": 3})
    env.reset(seed=8)
    expected = []
    for a in session.actions:  # where each move was played, on the human's picture before it
        expected.append(move_paths(env, env.state_dict(observer=1), [a])[a])
        env.step(a)
    hidden = marked = 0
    for v in views:
        mine = [e["n"] for e in v["log"] if e["seat"] == 1]
        since = [e for e in v["log"] if e["n"] > max(mine, default=0)]
        latest = {e["seat"]: e for e in since}
        assert [e["n"] for e in v["last"]] == sorted(e["n"] for e in latest.values())
        for e in v["last"]:
            assert e["seat"] != 1 and {k: e[k] for k in ("n", "seat", "label")} == \
                v["log"][e["n"] - 1]
            if e["label"] is None:
                assert e["boxes"] is None
                hidden += 1
            else:
                assert e["boxes"] == expected[e["n"] - 1]
                marked += 1
    assert hidden > 0 and marked > 0


def test_concurrent_games_are_independent() -> None:
    """Games played at once, from threads, on a real server, end exactly as when each is
    played alone; two requests for the same move at once play it once."""
    def play(base: str, game: str, seed: int, out: dict) -> None:
        rng = random.Random(seed)
        status, v = http("POST", f"{base}/api/games", {**SHORT[game], "seed": seed})
        assert status == 201, v
        views = [v]
        while not v["over"]:
            m = rng.choice(v["legal"])
            status, v = http("POST", f"{base}/api/games/{v['id']}/move",
                             {"action": m["action"], "turn": v["turn"]})
            assert status == 200, v
            views.append(v)
        out[(game, seed)] = [{k: x[k] for k in x if k != "id"} for x in views]

    with running_server() as (base, app):
        alone: dict = {}
        for game in GAMES:
            play(base, game, 1, alone)
        together: dict = {}
        threads = [threading.Thread(target=play, args=(base, g, s, together))
                   for g in GAMES for s in (1, 2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=300)
        assert len(together) == 2 * len(GAMES)
        for game in GAMES:
            assert together[(game, 1)] == alone[(game, 1)]
        assert together[("slide", 1)] != together[("slide", 2)]
        # the same move sent twice at once: one 200, one 409, played once
        status, v = http("POST", f"{base}/api/games", {**SHORT["slide"], "seed": 4})
        move = {"action": v["legal"][0]["action"], "turn": v["turn"]}
        answers: list[int] = []
        both = [threading.Thread(target=lambda: answers.append(
            http("POST", f"{base}/api/games/{v['id']}/move", move)[0])) for _ in range(2)]
        for t in both:
            t.start()
        for t in both:
            t.join(timeout=120)
        assert sorted(answers) == [200, 409]
        _, once = http("POST", f"{base}/api/games", {**SHORT["slide"], "seed": 4})
        _, once = http("POST", f"{base}/api/games/{once['id']}/move", move)
        _, now = http("GET", f"{base}/api/games/{v['id']}")
        assert {**now, "id": None} == {**once, "id": None}
        assert len(app.state.games.get(v["id"]).actions) == now["turn"]
