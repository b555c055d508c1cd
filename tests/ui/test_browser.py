"""In a real browser: headless Chromium (Debian's package, driven by playwright's Python API;
never ``playwright install``) plays a whole game of every game through the play page by
clicking the picture only (the hit boxes of the moves' click paths, two clicks for a two-step
move; one two-step move by the keyboard), uses the move list as the keyboard fallback, and
steps through a replay page opened from a file. Layout and screenshots:
``test_browser_layout.py``."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from card_envs.ui.record import record_game
from card_envs.ui.replay_html import write_html
from ui_helpers import (
    BOARD_GAMES,
    DESKTOP,
    MEASURE,
    PHONE,
    SHORT,
    click_move,
    csp_watch,
    hit,
    http,
    injected_script_is_blocked,
    running_server,
    wait_settled,
)

pytestmark = pytest.mark.browser

#: the games played on a phone-sized page (long move lists), the others on a desktop-sized one
ON_PHONE = ("isflak", "op_glad_ijs", "if_it_fits")


def _check_page(page: Any, view: dict[str, Any]) -> None:
    """The page shows ``view`` (the server's): one hit box per distinct first box of the legal
    moves (each move through the box it starts with), the marks of the others' last public
    moves, and nothing wider than the window."""
    m = page.evaluate(MEASURE)
    assert m["scroll"] <= m["width"], m
    firsts = {tuple(mv["path"][0]) for mv in view["legal"]}
    assert [s for s, _ in m["hits"]] == [0] * len(firsts)
    on_board = {a for _, acts in m["hits"] for a in acts}
    assert on_board == {mv["action"] for mv in view["legal"]}
    assert m["marks"] == sum(len(e["boxes"] or []) for e in view["last"])
    for e in view["last"]:
        assert (e["boxes"] is None) == (e["label"] is None), e  # hidden: never marked


def _cancel_then_select(page: Any, move: dict[str, Any]) -> None:
    """A two-step move's first click selects it (its second boxes show); Escape and a click
    elsewhere cancel the selection."""
    for how in ("Escape", "elsewhere"):
        hit(page, 0, move["action"]).click(timeout=10_000)
        m = page.evaluate(MEASURE)
        assert m["selected"] and {s for s, _ in m["hits"]} == {1}
        assert any(move["action"] in acts for _, acts in m["hits"])
        if how == "Escape":
            page.keyboard.press("Escape")
        else:
            page.click("header h1")
        m = page.evaluate(MEASURE)
        assert m["selected"] is None and {s for s, _ in m["hits"]} == {0}


def _play_by_keys(page: Any, move: dict[str, Any]) -> None:
    """A two-step move from the keyboard: Enter on its first box selects it and moves the focus
    to a target; Enter on its second box plays it."""
    turn = int(page.get_attribute("body", "data-turn"))
    hit(page, 0, move["action"]).focus()
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.dataset.step") == "1"
    hit(page, 1, move["action"]).focus()
    page.keyboard.press("Enter")
    page.wait_for_function(f"() => Number(document.body.dataset.turn) > {turn}")


@pytest.mark.parametrize("game", BOARD_GAMES)
def test_play_a_whole_game_by_clicking_the_board(browser: Any, game: str) -> None:
    rng = random.Random(3)
    errors: list[str] = []
    with running_server(defaults={**SHORT[game], "seed": 21}) as (base, _):
        page = browser.new_page()
        w, h = PHONE if game in ON_PHONE else DESKTOP
        page.set_viewport_size({"width": w, "height": h})
        page.on("pageerror", lambda e: errors.append(str(e)))
        violations = csp_watch(page)
        page.goto(base + "/")
        moves = two_step = marked = 0
        while wait_settled(page) == "your-turn":
            gid = page.evaluate("S.view.id")
            _, view = http("GET", f"{base}/api/games/{gid}")
            _check_page(page, view)
            marked += sum(1 for e in view["last"] if e["boxes"])
            move = rng.choice(view["legal"])
            if len(move["path"]) == 2 and not two_step:
                _cancel_then_select(page, move)
            if len(move["path"]) == 2 and two_step == 1:
                _play_by_keys(page, move)
            else:
                click_move(page, move)
            two_step += len(move["path"]) == 2
            moves += 1
        assert moves > 0 and errors == []
        if game in ("isflak", "op_glad_ijs"):
            assert two_step > 1  # a piece, then where it goes (once by the keyboard)
        assert marked > 0 or game == "op_glad_ijs"
        assert page.text_content("#status") == "Game over"
        assert page.is_visible("#result-box") and page.locator("#result tr.winner").count()
        _, view = http("GET", f"{base}/api/games/{gid}")
        said = page.text_content("#result-text")
        winners = [f"player_{s}" for s, won in enumerate(view["result"]["winners"]) if won]
        assert said and all(name in said for name in winners), said
        turn = int(page.get_attribute("body", "data-turn"))
        assert page.locator("#log li").count() == turn
        assert page.locator("#picture svg").count() == 1
        assert page.locator("#picture rect.hit").count() == 0
        m = page.evaluate(MEASURE)
        assert m["scroll"] <= m["width"], m
        replay = page.get_attribute("#replay-link", "href")
        status, rep = http("GET", base + replay)
        assert status == 200 and len(rep["actions"]) == turn
        old = page.evaluate("S.view.id")
        page.click("#new-game")  # a new game of the same settings
        page.wait_for_function(f"() => S.view && S.view.id !== {old!r} && "
                               "document.body.dataset.state !== 'busy'")
        assert int(page.get_attribute("body", "data-turn")) < turn
        injected_script_is_blocked(page, violations)
        page.close()


def test_the_move_list_and_the_keyboard(browser: Any) -> None:
    """The move list is the fallback: a button per legal move with its label (hovering one
    marks its boxes on the picture); a hit box is focusable, named by its move, and Enter
    plays it; the opponent's last move is said in the status line and marked."""
    with running_server(defaults={**SHORT["toy"], "seed": 4, "seat": 1}) as (base, _):
        page = browser.new_page()
        page.goto(base + "/")
        wait_settled(page)
        _, view = http("GET", f"{base}/api/games/{page.evaluate('S.view.id')}")
        buttons = page.locator("#moves button.move")
        assert [buttons.nth(i).get_attribute("title") for i in range(buttons.count())] == \
            [m["label"] for m in view["legal"]]
        move = view["legal"][-1]
        button = page.locator(f'#moves button.move[data-action="{move["action"]}"]')
        button.hover()
        marked = page.evaluate("[...document.querySelectorAll('#picture rect.hint')].map("
                               "(r) => ['x', 'y', 'width', 'height'].map("
                               "(k) => Number(r.getAttribute(k))))")
        assert marked == move["path"]
        page.mouse.move(1, 1)
        assert page.locator("#picture rect.hint").count() == 0
        (first,) = view["last"]  # seat 0 moved first
        assert page.text_content("#last-move") == \
            f"player_0 (random) played: {first['label']}"
        assert page.locator('#picture rect.last[data-seat="0"]').count() == len(first["boxes"])
        target = hit(page, 0, move["action"])
        assert target.get_attribute("aria-label") == move["label"]
        target.focus()
        page.keyboard.press("Enter")
        page.wait_for_function(f"() => Number(document.body.dataset.turn) > {view['turn']}")
        wait_settled(page)
        assert page.locator("#log li.mine").first.text_content() == f"you: {move['label']}"
        turn = int(page.get_attribute("body", "data-turn"))
        page.locator("#moves button.move").first.focus()
        page.keyboard.press("Enter")
        page.wait_for_function(f"() => Number(document.body.dataset.turn) > {turn}")
        page.close()


def test_step_through_a_replay_file(browser: Any, tmp_path: Path) -> None:
    rep = record_game("slide", ["heuristic", "random"], seed=5)
    path = tmp_path / "slide.html"
    write_html(rep, path)
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    violations = csp_watch(page)
    page.goto(path.as_uri())
    page.wait_for_selector("body[data-state=ready]")
    last = len(rep["actions"])

    def step() -> int:
        return int(page.get_attribute("body", "data-step"))

    def picture() -> str:
        return page.inner_html("#picture")

    start = picture()
    assert step() == 0 and page.locator("#moves li.current").count() == 0
    assert page.locator("#moves li").count() == last
    page.keyboard.press("ArrowRight")
    assert step() == 1 and page.get_attribute("#moves li.current", "id") == "move-1"
    page.click("#next")
    assert step() == 2 and page.get_attribute("#moves li.current", "id") == "move-2"
    page.click("#moves li:nth-child(10)")  # jump to a move in the list
    assert step() == 10 and page.get_attribute("#moves li.current", "id") == "move-10"
    page.click("#prev")
    assert step() == 9
    page.keyboard.press("End")
    assert step() == last and picture() != start
    assert page.is_visible("#result-box") and page.locator("#result tr.winner").count()
    assert "player_" in page.text_content("#result-text")
    page.keyboard.press("ArrowLeft")
    assert step() == last - 1 and not page.is_visible("#result-box")
    page.fill("#slider", "20")
    assert step() == 20
    everything = picture()
    page.select_option("#view", "0")  # seat 0's view hides face-down cards
    assert picture() != everything
    page.click("#first")
    assert step() == 0 and page.locator("#moves li.current").count() == 0
    assert errors == []
    injected_script_is_blocked(page, violations)
    page.close()


def test_replay_page_on_a_phone_with_long_agent_names(browser: Any, tmp_path: Path) -> None:
    """400 px wide, a 60-character agent name: the result table and the move list wrap, the
    picture takes the width, nothing scrolls sideways; the result says how the game was won."""
    rep = record_game("slide", ["heuristic", "random"], seed=6)
    long_name = ("a-very-long-agent-name-" * 3)[:60]
    rep["players"] = [long_name, "random"]
    path = tmp_path / "slide.html"
    write_html(rep, path)
    page = browser.new_page()
    page.set_viewport_size({"width": PHONE[0], "height": PHONE[1]})
    page.goto(path.as_uri())
    page.wait_for_selector("body[data-state=ready]")
    page.keyboard.press("End")
    assert page.is_visible("#result-box")
    assert long_name in page.text_content("#result")
    winners = [f"player_{s}" for s, won in enumerate(rep["result"]["winners"]) if won]
    said = page.text_content("#result-text")
    assert all(w in said for w in winners), said
    m = page.evaluate(MEASURE)
    assert m["scroll"] <= m["width"] and m["picture"] >= 0.9 * m["width"], m
    page.close()
