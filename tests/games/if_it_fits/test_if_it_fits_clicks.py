"""If It Fits on the board (``view.clicks``, ``view.result_text``): every move's box is found
from what the picture prints, not from the view's geometry: a cell sits under its column
number and beside its row number, a cat slot on the line between its two rows, a hand card
above its position number, a start card around its name, a control around its move's name;
and the result names the winners with their points."""

from __future__ import annotations

import random
import xml.etree.ElementTree as ET
from collections import Counter

import card_envs
from card_envs.core import kernels as K
from card_envs.if_it_fits.view import clicks, draw, result_text

SVG_NS = "{http://www.w3.org/2000/svg}"
CONTROLS = {"draw", "sleeping cat", "rotate 0", "rotate 180", "skip", "pass"}
STEP = {"N": (-1, 0), "E": (0, 1), "S": (1, 0), "W": (0, -1)}


def placed_texts(svg: str) -> list[tuple[float, float, str, str]]:
    """Every ``<text>`` of an SVG: its anchor point, text and font size."""
    return [(float(e.get("x")), float(e.get("y")), e.text or "", e.get("font-size"))
            for e in ET.fromstring(svg).iter(f"{SVG_NS}text")]


def inside(x: float, y: float, box) -> bool:
    bx, by, bw, bh = box
    return bx <= x <= bx + bw and by <= y <= by + bh


class Printed:
    """What a picture prints: its column numbers (x per column), row numbers (y per row),
    the hand position numbers and every text with its place."""

    def __init__(self, svg: str) -> None:
        self.texts = placed_texts(svg)
        small = [(x, y, s) for x, y, s, size in self.texts if size == "8.5" and s.isdigit()]
        top = min(y for _, y, _ in small)
        left = min(x for x, _, _ in small)
        self.col = {int(s): x for x, y, s in small if y == top}
        self.row = {int(s): y for x, y, s in small if x == left and y != top}
        self.numbers = [(x, y, s) for x, y, s in small if y != top and x != left]

    def cell_of(self, box) -> tuple[int, int]:
        """The (row, column) whose numbers line up with ``box``; exactly one of each."""
        bx, by, bw, bh = box
        cols = [c for c, x in self.col.items() if bx <= x <= bx + bw]
        rows = [r for r, y in self.row.items() if by <= y <= by + bh]
        assert len(cols) == 1 and len(rows) == 1, (box, cols, rows)
        return rows[0], cols[0]

    def says(self, box, text: str) -> bool:
        return any(s == text and inside(x, y, box) for x, y, s, _ in self.texts)


def check_position(env, seen: Counter) -> None:
    """Every legal move's box, from the seat to act's view, against what the picture prints."""
    view = env.state_dict(observer=int(env.state_array[K.CUR]))
    printed = Printed(draw(view, "light"))
    rows, cols = view["options"]["table"]
    for a, path in clicks(view, env.legal_actions()).items():
        (box,) = path
        name = env.action_to_str(a)
        kind, _, rest = name.partition(" ")
        if name in CONTROLS:
            assert printed.says(box, name), name
            kind = name
        elif kind == "cell":
            r, c = (int(v) for v in rest[1:].split("c"))
            assert printed.cell_of(box) == (r, c), name
        elif kind == "slot":
            r, c = (int(v) for v in rest.split("/")[0][1:].split("c"))
            mid = (printed.row[r] + printed.row[r + 1]) / 2
            assert abs(box[1] + box[3] / 2 - mid) < 1e-6, name
            assert box[0] <= printed.col[c] <= box[0] + box[2], name
        elif kind == "hand":
            x, y, w, h = box
            assert any(s == rest and x <= nx <= x + w and y + h < ny < y + h + 10
                       for nx, ny, s in printed.numbers), name
        elif kind == "start" and rest.startswith("card"):
            assert printed.says(box, rest.removeprefix("card ")), name
            kind = "start card"
        elif kind == "start":
            west, east = view["start_row"]
            assert printed.cell_of(box) == (rows // 2, west - 1 if "west" in rest
                                            else east + 1), name
            kind = "start row"
        else:
            assert kind == "join", name
            r, c = view["selected_cell"]
            dr, dc = STEP[rest]
            assert printed.cell_of(box) == (r + dr, c + dc), name
        seen[kind] += 1


def biased_action(env, rnd: random.Random) -> int:
    """A random legal move, drawing more than sleeping and placing cats when it may (longer
    games with cats on slots)."""
    names = {env.action_to_str(a): a for a in env.legal_actions()}
    slots = [a for n, a in names.items() if n.startswith("slot")]
    if slots and "skip" in names:
        return rnd.choice(slots)
    if "draw" in names and rnd.random() < 0.9:
        return names["draw"]
    return rnd.choice(list(names.values()))


def test_every_move_is_clicked_where_the_picture_prints_it() -> None:
    seen: Counter = Counter()
    for seed, opts in ((1, {}), (2, {"num_players": 3, "table": (5, 7)})):
        env = card_envs.make_raw("if_it_fits_v0", **opts)
        env.reset(seed=seed)
        rnd = random.Random(seed)
        k = 0
        while not env.state_array[K.DONE]:
            if k % 3 == 0 or env.state_dict()["phase"] not in ("cell", "turn"):
                check_position(env, seen)
            env.step(biased_action(env, rnd))
            k += 1
    assert {"cell", "slot", "hand", "start card", "start row", "join", "draw", "sleeping cat",
            "rotate 0", "rotate 180", "skip"} <= set(seen), seen


def test_result_text_gives_the_rule_then_the_points() -> None:
    env = card_envs.make_raw("if_it_fits_v0", num_players=3, table=(5, 7))
    env.reset(seed=4)
    rule = result_text(env.state_dict(observer=0))
    assert "most points" in rule.lower() and "player_" not in rule
    rnd = random.Random(4)
    while not env.state_array[K.DONE]:
        env.step(biased_action(env, rnd))
    points, winners = env.game.outcome(env.state_array)
    text = result_text(env.state_dict(observer=2))
    assert text.startswith(rule)
    for q in range(3):
        assert f"player_{q} {int(points[q])}" in text
    best = [f"player_{q}" for q in range(3) if winners[q]]
    assert (f"{best[0]} wins" if len(best) == 1 else ", ".join(best)) in text
