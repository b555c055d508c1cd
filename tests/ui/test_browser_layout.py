"""The play page's layout in headless Chromium at a phone's size (400x800) and a desktop's
(1280x800): on the phone the picture takes the full width above the controls, on the desktop
it sits beside the sidebar; nothing is wider than the window, for every game. Each size also
saves a screenshot of an Isflak game with a penguin selected (its targets showing).

The screenshots go to a temporary folder; to refresh the docs' copies
(``docs/images/play-phone.png``, ``play-desktop.png``)::

    CARD_ENVS_SCREENSHOTS=docs/images .venv/bin/python -m pytest -q tests/ui/test_browser_layout.py
"""

from __future__ import annotations

import io
import os
import random
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from ui_helpers import (
    DESKTOP,
    GAMES,
    MEASURE,
    PHONE,
    SHORT,
    click_move,
    hit,
    http,
    running_server,
    wait_settled,
)

pytestmark = pytest.mark.browser

SIZES = {"phone": PHONE, "desktop": DESKTOP}
#: the least share of the window's width the picture takes
MIN_SHARE = {"phone": 0.9, "desktop": 0.6}
MAX_PNG = 300 * 1024  # bytes of a screenshot in the docs

BOXES = """() => Object.fromEntries(["board", "moves"].map((id) => {
  const r = document.getElementById(id).getBoundingClientRect();
  return [id, [r.left, r.top, r.right, r.bottom]];
}))"""


def save_png(data: bytes, path: Path) -> int:
    """Write a screenshot, with a 128-colour palette if it is over ``MAX_PNG`` bytes; returns
    its size."""
    if len(data) > MAX_PNG:
        buf = io.BytesIO()
        Image.open(io.BytesIO(data)).convert("RGB").quantize(colors=128).save(
            buf, "PNG", optimize=True)
        data = buf.getvalue()
    path.write_bytes(data)
    return len(data)


def _select_a_penguin(page: Any, base: str) -> None:
    """Play (by the board) until Isflak's penguins move, then click one: its targets show."""
    rng = random.Random(0)
    while wait_settled(page) == "your-turn":
        _, view = http("GET", f"{base}/api/games/{page.evaluate('S.view.id')}")
        two = [m for m in view["legal"] if len(m["path"]) == 2]
        if two:
            hit(page, 0, two[0]["action"]).click()
            m = page.evaluate(MEASURE)
            assert m["selected"] and {s for s, _ in m["hits"]} == {1}
            return
        click_move(page, rng.choice(view["legal"]))
    raise AssertionError("the game ended before a penguin moved")


@pytest.mark.parametrize("size", SIZES)
def test_the_page_fits_phones_and_desktops(browser: Any, size: str, tmp_path: Path) -> None:
    width, height = SIZES[size]
    out = Path(os.environ.get("CARD_ENVS_SCREENSHOTS") or tmp_path)
    with running_server() as (base, _):
        page = browser.new_page()
        page.set_viewport_size({"width": width, "height": height})
        for game in GAMES:
            status, view = http("POST", f"{base}/api/games", {**SHORT[game], "seed": 5})
            assert status == 201, view
            page.goto(f"{base}/?{game}#g={view['id']}")
            page.wait_for_function(f"() => S.view && S.view.id === {view['id']!r}")
            m = page.evaluate(MEASURE)
            assert m["scroll"] <= m["width"] == width, (game, m)
            assert m["picture"] >= MIN_SHARE[size] * width, (game, m)
            box = page.evaluate(BOXES)
            if size == "phone":  # the board above the controls
                assert box["board"][3] <= box["moves"][1], (game, box)
            else:  # the board beside the sidebar
                assert box["board"][2] <= box["moves"][0], (game, box)
        status, view = http("POST", f"{base}/api/games", {"game": "isflak", "vs": "heuristic",
                                                          "seed": 7})
        page.goto(f"{base}/?shot#g={view['id']}")
        _select_a_penguin(page, base)
        m = page.evaluate(MEASURE)
        assert m["scroll"] <= m["width"], m
        path = out / f"play-{size}.png"
        assert save_png(page.screenshot(), path) <= MAX_PNG
        page.close()
