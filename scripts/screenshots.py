"""Pictures of every game for the docs, and the ui's timings.

    python scripts/screenshots.py                 # docs/images/*.png
    python scripts/screenshots.py --measure       # also: view latency and replay pages

Writes ``docs/images/<game>-light.png`` and ``<game>-dark.png`` (a mid-game position, all
cards, rasterised by ``card_envs.draw``), ``play-<game>.png`` (the play page in headless
Chromium, a few moves in) and ``replay.png`` (a replay page). Chromium is Debian's
(``apt-get install chromium``), driven by playwright's Python API (never ``playwright
install``). ``--measure`` prints, per game, the median latency of 50 view requests on a local
server (the time per frame the page waits for) and a full game's replay page: size and time.
"""

from __future__ import annotations

import argparse
import io
import json
import random
import statistics
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from PIL import Image

from card_envs import make_raw
from card_envs.draw import to_png
from card_envs.ui.pictures import picture_svg
from card_envs.ui.record import record_game
from card_envs.ui.replay_html import write_html
from card_envs.ui.server import create_app, serving

ROOT = Path(__file__).resolve().parents[1]
GAMES = ("slide", "isflak", "op_glad_ijs", "flipology", "if_it_fits")
#: game options that keep the recorded games (and the play page's games) short
SHORT: dict[str, dict[str, Any]] = {"op_glad_ijs": {"max_turned": 12}}
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
MAX_PNG = 300 * 1024


def save_png(data: bytes, path: Path) -> None:
    """Write a PNG, re-encoded with a palette if it is over ``MAX_PNG`` bytes."""
    if len(data) > MAX_PNG:
        img = Image.open(io.BytesIO(data)).convert("RGB")
        buf = io.BytesIO()
        img.quantize(colors=128).save(buf, "PNG", optimize=True)
        data = buf.getvalue()
    path.write_bytes(data)
    shown = path.resolve()
    shown = shown.relative_to(ROOT) if shown.is_relative_to(ROOT) else shown
    print(f"wrote {shown} ({len(data) / 1024:.0f} KiB)", flush=True)


def mid_game(game: str, seed: int = 3) -> Any:
    """The env half way through a heuristic-vs-heuristic game."""
    rep = record_game(game, ["heuristic", "heuristic"], seed=seed, **SHORT.get(game, {}))
    env = make_raw(rep["env_id"], **rep["options"])
    env.reset(seed=seed)
    for a in rep["actions"][:len(rep["actions"]) // 2]:
        env.step(a)
    return env


def pictures(out: Path) -> None:
    for game in GAMES:
        env = mid_game(game)
        for theme in ("light", "dark"):
            save_png(to_png(picture_svg(env, None, theme), scale=1.5), out / f"{game}-{theme}.png")


def browser_shots(out: Path) -> None:
    from playwright.sync_api import sync_playwright

    rng = random.Random(0)
    with tempfile.TemporaryDirectory() as profile, sync_playwright() as p:
        ctx = p.chromium.launch_persistent_context(
            profile, executable_path=CHROMIUM, headless=True, args=ARGS,
            viewport={"width": 1280, "height": 820})
        ctx.set_default_timeout(120_000)
        for game in GAMES:
            theme = "dark" if game in ("isflak", "flipology") else "light"
            app = create_app({"game": game, "vs": "heuristic", "seed": 7, "theme": theme,
                              "options": SHORT.get(game, {})})
            with serving(app) as base:
                page = ctx.new_page()
                page.goto(base + "/")
                for _ in range(6):
                    page.wait_for_selector("body[data-state=your-turn], body[data-state=over]")
                    buttons = page.locator("#moves button.move")
                    if not buttons.count():
                        break
                    turn = page.get_attribute("body", "data-turn")
                    buttons.nth(rng.randrange(buttons.count())).click()
                    page.wait_for_function(f"() => document.body.dataset.turn !== '{turn}'")
                page.wait_for_selector("body[data-state=your-turn], body[data-state=over]")
                save_png(page.screenshot(), out / f"play-{game}.png")
                page.close()
        with tempfile.TemporaryDirectory() as tmp:
            rep = record_game("slide", ["heuristic", "random"], seed=2)
            html = Path(tmp) / "replay.html"
            write_html(rep, html)
            page = ctx.new_page()
            page.goto(html.as_uri())
            page.wait_for_selector("body[data-state=ready]")
            page.click("#moves li:nth-child(40)")
            page.select_option("#view", "0")
            save_png(page.screenshot(), out / "replay.png")
        ctx.close()


def measure() -> None:
    """Median view latency (50 requests) and a full game's replay page, per game."""
    print("| game | view latency, median of 50 (ms) | picture (KiB) | full game: steps | "
          "replay page (KiB) | seconds | views |")
    print("|---|---|---|---|---|---|---|")
    for game in GAMES:
        app = create_app({"game": game, "vs": "heuristic"})
        with serving(app) as base:
            req = urllib.request.Request(f"{base}/api/games", method="POST",
                                         data=b'{"seed": 1, "game": "%s"}' % game.encode(),
                                         headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(req) as r:
                gid = json.loads(r.read())["id"]
            times, size = [], 0
            for _ in range(50):
                t = time.perf_counter()
                with urllib.request.urlopen(f"{base}/api/games/{gid}") as r:
                    size = len(r.read())
                times.append(time.perf_counter() - t)
        rep = record_game(game, ["heuristic", "heuristic"], seed=1)
        with tempfile.TemporaryDirectory() as tmp:
            info = write_html(rep, Path(tmp) / "g.html")
        print(f"| {game} | {1000 * statistics.median(times):.1f} | {size / 1024:.1f} | "
              f"{info['steps']} | {info['bytes'] / 1024:.0f} | {info['seconds']:.1f} | "
              f"{len(info['views'])} |", flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=str(ROOT / "docs" / "images"), help="output folder")
    ap.add_argument("--measure", action="store_true", help="also print the ui's timings")
    ap.add_argument("--no-browser", action="store_true", help="only the game pictures")
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    pictures(out)
    if not args.no_browser:
        browser_shots(out)
    if args.measure:
        measure()
    return 0


if __name__ == "__main__":
    sys.exit(main())
