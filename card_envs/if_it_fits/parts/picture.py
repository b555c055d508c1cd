"""The pieces of If It Fits' picture (``view.draw``), each drawn from a state dict alone: the
title bar (with the controls of the moves that have no place on the table), the table (row
and column numbers, cards, sleeping cats, slots, box values), the seats' panels and the
information panel (pile, waiting toy card, start cards, discards, legend). The places of
cells, slots, hand cards, start cards and controls (``cell_box``, ...) are shared with
``view.clicks``, so that a click lands where the piece is drawn."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from card_envs.draw import Svg
from card_envs.if_it_fits.layout import CATS_EACH, HANDMAX, TOYS
from card_envs.if_it_fits.parts.drawing import (
    box_card,
    cat_head,
    cell_open,
    color,
    deck_cards,
    seat_color,
    toy_icon,
    toy_row,
)

M, TITLE, SIDE, SEAT_H, PAD = 12, 54, 312, 86, 10
LAB = 10  # the band left of and above the grid that holds its column and row numbers
INFO_H = 236
MW, MH = 56, 38  # mini cards (hands, start cards, discards)
PHASE_TEXT = {
    "start_card": "choose a start card", "start_end": "choose an end of the start row",
    "start_rotation": "turn the start card", "turn": "draw, or play a sleeping cat",
    "toy_slot": "lay the drawn toy card on a cat slot",
    "toy_cell": "lay the drawn toy card in a cell", "play": "play a card from the hand",
    "cell": "choose a cell for the card", "rotation": "turn the card (0 / 180°)",
    "cat": "place an awake cat, or skip", "princess": "Princess: choose a cat to replace",
    "sleep_cell": "sleeping cat: choose a cell", "sleep_dir": "sleeping cat: choose its box",
    "discard": "discard a card (nothing fits)", "pass": "pass (empty hand)",
    "end": "game over"}
#: the controls of the moves without a place on the table, per phase (labels = move names)
CONTROLS = {"turn": ("draw", "sleeping cat"), "rotation": ("rotate 0", "rotate 180"),
            "start_rotation": ("rotate 0", "rotate 180"), "cat": ("skip",), "pass": ("pass",)}
CHIP_Y, CHIP_H = 28.0, 18.0  # the controls' row, in the title bar
SLOT_W, SLOT_H = 0.56, 0.46  # a cat slot's piece (toy card, cat), in card widths / heights
Box = tuple[float, float, float, float]


def sizes(view: Mapping[str, Any]) -> dict[str, Any]:
    """Picture geometry from the options alone (so every frame of a game has one size)."""
    R, C = (int(v) for v in view["options"]["table"])
    n = int(view["options"]["num_players"])
    cw = min(96, 704 // C)
    ch = round(cw * 0.68)
    gh = R * ch + 2 * PAD + LAB
    side_h = n * (SEAT_H + 8) + INFO_H
    W = M + LAB + C * cw + 2 * PAD + M + SIDE + M
    H = TITLE + max(gh, side_h) + M
    return {"R": R, "C": C, "n": n, "cw": cw, "ch": ch, "W": W, "H": H,
            "gx": M + PAD + LAB, "gy": TITLE + PAD + LAB, "sx": M + LAB + C * cw + 2 * PAD + M}


def cell_box(z: Mapping[str, Any], r: int, c: int) -> Box:
    """The cell in row ``r``, column ``c`` of the table."""
    return z["gx"] + c * z["cw"], z["gy"] + r * z["ch"], z["cw"], z["ch"]


def slot_box(z: Mapping[str, Any], r: int, c: int) -> Box:
    """The cat slot between the cells (r, c) and (r + 1, c): a cat or toy card lies there."""
    w, h = z["cw"] * SLOT_W, z["ch"] * SLOT_H
    return (z["gx"] + c * z["cw"] + (z["cw"] - w) / 2, z["gy"] + (r + 1) * z["ch"] - h / 2,
            w, h)


def seat_y(s: int) -> float:
    """The top of seat ``s``'s panel."""
    return TITLE + s * (SEAT_H + 8)


def hand_box(z: Mapping[str, Any], s: int, j: int) -> Box:
    """Position ``j`` of seat ``s``'s hand."""
    return z["sx"] + PAD + 6 + j * (MW + 6), seat_y(s) + 36, MW, MH


def info_y(z: Mapping[str, Any]) -> float:
    """The top of the information panel (below the seats' panels)."""
    return seat_y(z["n"])


def start_card_box(z: Mapping[str, Any], k: int) -> Box:
    """Start card ``k`` in the information panel (shown while the start cards are laid)."""
    return z["sx"] + PAD + k * (MW + 4), info_y(z) + 42, MW, MH


def controls(view: Mapping[str, Any], z: Mapping[str, Any]) -> list[tuple[str, Box]]:
    """The controls of the view's phase, ``(label, box)``, right-aligned in the title bar."""
    out: list[tuple[str, Box]] = []
    x = z["W"] - M
    for label in reversed(CONTROLS.get(view["phase"], ())):
        w = 16 + 6.8 * len(label)
        x -= w
        out.insert(0, (label, (x, CHIP_Y, w, CHIP_H)))
        x -= 8
    return out


def draw_controls(svg: Svg, view: Mapping[str, Any], z: Mapping[str, Any]) -> None:
    """The chips of :func:`controls`, each labelled with its move's name."""
    t = svg.theme
    for label, (x, y, w, h) in controls(view, z):
        svg.rect(x, y, w, h, fill=t.card_face, stroke=t.highlight, stroke_width=1.5, rx=h / 2)
        svg.text(x + w / 2, y + h / 2, label, size=11, weight="bold")


def title(svg: Svg, view: Mapping[str, Any], z: Mapping[str, Any],
          res: tuple[list[int], list[bool]] | None) -> None:
    """The game, the options, the phase, the view and who is to act (the result at the end)."""
    t = svg.theme
    o = view["options"]
    W = z["W"]
    svg.rect(0, 0, W, TITLE - 6, fill=t.panel)
    svg.text(M, 17, "If It Fits", size=18, anchor="start", weight="bold")
    svg.text(M + 96, 17, f"{'advanced' if o.get('advanced') else 'basic'} · table "
             f"{z['R']}×{z['C']}", size=13, anchor="start", fill=t.muted)
    bits = [PHASE_TEXT.get(view["phase"], view["phase"])]
    if view["end_triggered"] and view["phase"] != "end":
        bits.append("END TRIGGERED: hands are played out")
    obs = view.get("observer")
    bits.append(f"view: player_{obs}" if obs is not None else "view: omniscient")
    svg.text(M, 37, "  ·  ".join(bits), size=11.5, anchor="start", fill=t.muted)
    cur = view["current_player"]
    if res is not None:
        pts, win = res
        who = [f"player_{s}" for s in range(z["n"]) if win[s]]
        head = f"{who[0]} wins" if len(who) == 1 else "shared win: " + ", ".join(who)
        svg.text(W - M, 17, head, size=15, anchor="end", weight="bold", fill=t.highlight)
        svg.text(W - M, 37, "points " + " : ".join(str(p) for p in pts), size=11.5,
                 anchor="end")
    elif cur is not None:
        svg.circle(W - M - 8, 17, 7, fill=seat_color(cur, t))
        svg.text(W - M - 22, 17, f"▶ player_{cur} to act", size=15, anchor="end",
                 weight="bold")
        draw_controls(svg, view, z)


def table(svg: Svg, view: Mapping[str, Any], z: Mapping[str, Any],
          bxs: list[dict[str, Any]]) -> None:
    """The grid with its row and column numbers, the cards, sleeping cats, slots, box values
    and the selected cells."""
    t = svg.theme
    cards = deck_cards(view)
    R, C, cw, ch, gx, gy = z["R"], z["C"], z["cw"], z["ch"], z["gx"], z["gy"]
    svg.rect(gx - PAD - LAB, gy - PAD - LAB, C * cw + 2 * PAD + LAB, R * ch + 2 * PAD + LAB,
             fill=t.panel, rx=10)
    mid = (PAD + LAB) / 2
    for c in range(C):
        svg.text(gx + c * cw + cw / 2, gy - mid, str(c), size=8.5, fill=t.muted)
    for r in range(R):
        svg.text(gx - mid, gy + r * ch + ch / 2, str(r), size=8.5, fill=t.muted)
    table = view["table"]
    dots = " ".join(f"M{gx + c * cw + cw / 2:g},{gy + r * ch + ch / 2:g}h0.01"
                    for r in range(R) for c in range(C) if not table[r][c])
    if dots:
        svg.add(f'<path d="{dots}" stroke="{t.muted}" stroke-width="3" '
                'stroke-linecap="round" opacity="0.5"/>')
    for r in range(R):
        for c in range(C):
            x = table[r][c]
            if not x:
                continue
            px, py, _, _ = cell_box(z, r, c)
            if "card" in x:
                box_card(svg, px, py, cw, ch, cards[x["card"]], cell_open(view, cards, r, c))
                svg.rect(px, py, cw, ch, stroke=t.card_edge, stroke_width=0.6, opacity=0.35)
            else:
                _sleeper(svg, x, px, py, r, c, cw, ch)
    for r, row in enumerate(view["slots"]):
        for c, x in enumerate(row):
            if not x:
                continue
            sx, sy, w, h = slot_box(z, r, c)
            cx, cy = sx + w / 2, sy + h / 2
            if "toy" in x:
                svg.rect(sx, sy, w, h, fill=color("toycard", t), stroke=t.card_edge, rx=3)
                toy_row(svg, cards[x["toy"]]["toys"], 0, cx, cy, w * 0.9, h * 0.55)
            elif x["cat"] == "princess":
                cat_head(svg, cx, cy, ch * 0.24, color("princess", t), "♛")
            else:
                cat_head(svg, cx, cy, ch * 0.24, seat_color(int(x["cat"]), t), str(x["cat"]))
    for b in bxs:
        if len(b["cells"]) > 1 or any(b["awake"]) or b["princesses"]:
            _box_pill(svg, b, table, gx, gy, cw, ch)
    for key, dash in (("played_cell", None), ("selected_cell", "5 3")):
        p = view[key]
        if p is not None:
            svg.rect(gx + p[1] * cw - 2, gy + p[0] * ch - 2, cw + 4, ch + 4,
                     stroke=t.highlight, stroke_width=2.5, rx=3, stroke_dasharray=dash)


def _sleeper(svg: Svg, x: Mapping[str, Any], px: float, py: float, r: int, c: int,
             cw: float, ch: float) -> None:
    """A sleeping cat in its cell (walls all round), a notch towards the card it joined."""
    t = svg.theme
    who = x["sleeping_cat"]
    col = color("princess", t) if who == "princess" else seat_color(int(who), t)
    svg.rect(px + 1, py + 1, cw - 2, ch - 2, fill=col, opacity=0.3, rx=4)
    svg.rect(px + 1.5, py + 1.5, cw - 3, ch - 3, stroke=col, stroke_width=2.5, rx=4)
    jr, jc = x["joined"]
    dr, dc = jr - r, jc - c
    mx, my = px + cw / 2 + dc * (cw / 2 - 4), py + ch / 2 + dr * (ch / 2 - 4)
    a = min(cw, ch) * 0.16
    svg.polygon([(mx + dc * a, my + dr * a), (mx - dr * a - dc * 0.2 * a, my + dc * a),
                 (mx + dr * a - dc * 0.2 * a, my - dc * a)] if dc else
                [(mx, my + dr * a), (mx - a, my - dr * 0.2 * a), (mx + a, my - dr * 0.2 * a)],
                fill=col)
    cat_head(svg, px + cw / 2, py + ch / 2 + ch * 0.08, ch * 0.22, col,
             "♛" if who == "princess" else str(who), asleep=True)


def _box_pill(svg: Svg, b: Mapping[str, Any], table: list[list[Any]], gx: float, gy: float,
              cw: float, ch: float) -> None:
    """The box's value on its first card (gold when closed: the value doubled)."""
    t = svg.theme
    r, c = next(p for p in b["cells"] if "card" in table[p[0]][p[1]])
    text = str(b["value"])
    w = 6 + 5.6 * len(text)
    x, y = gx + c * cw + 3, gy + r * ch + 3
    svg.rect(x, y, w, 12, fill=t.highlight if b["closed"] else t.card_face,
             stroke=t.card_edge, stroke_width=0.6, rx=6, opacity=0.95)
    svg.text(x + w / 2, y + 6.5, text, size=8.5, fill="#1d1d1f" if b["closed"] else t.text,
             weight="bold")


def _mini(svg: Svg, view: Mapping[str, Any], name: Any, x: float, y: float,
          hl: bool = False, dim: bool = False) -> None:
    """A card off the table: a box / start / toy card, the Princess, or a back."""
    t = svg.theme
    if name is None:
        svg.card(x, y, MW, MH, None, highlight=hl)
        return
    if name == "princess":
        svg.rect(x, y, MW, MH, fill=color("princess", t), stroke=t.card_edge, rx=4)
        cat_head(svg, x + MW / 2, y + MH * 0.45, MH * 0.22, color("princess", t), "♛")
        svg.text(x + MW / 2, y + MH - 6, "Princess", size=7.5, fill="#ffffff")
    else:
        cd = deck_cards(view)[name]
        box_card(svg, x, y, MW, MH, cd, cd["open"], name)
        svg.rect(x, y, MW, MH, stroke=t.card_edge, stroke_width=0.8)
    if dim:
        svg.rect(x, y, MW, MH, fill=t.panel, opacity=0.65)
    if hl:
        svg.rect(x - 2, y - 2, MW + 4, MH + 4, stroke=t.highlight, stroke_width=2.5, rx=4)


def _badge(svg: Svg, x: float, y: float, text: str, fill: str, col: str) -> float:
    w = 7 + 6.4 * len(text)
    svg.rect(x, y - 8, w, 16, fill=fill, rx=8)
    svg.text(x + w / 2, y + 0.5, text, size=10, fill=col, weight="bold")
    return w


def seat(svg: Svg, view: Mapping[str, Any], s: int, z: Mapping[str, Any],
         pts: list[int], res: tuple[list[int], list[bool]] | None) -> None:
    """Seat ``s``'s panel: its cats in supply, its hand (positions numbered), its points now
    (final at the end)."""
    t = svg.theme
    x, y = z["sx"], seat_y(s)
    cur, obs = view["current_player"], view.get("observer")
    col = seat_color(s, t)
    svg.rect(x, y, SIDE, SEAT_H, fill=t.panel, rx=10,
             stroke=t.highlight if cur == s else None, stroke_width=2.5)
    svg.rect(x, y + 8, 5, SEAT_H - 16, fill=col, rx=2.5)
    svg.circle(x + PAD + 9, y + 15, 8, fill=col)
    svg.text(x + PAD + 9, y + 15.5, str(s), size=10, fill="#ffffff", weight="bold")
    svg.text(x + PAD + 23, y + 15, f"player_{s}", size=13.5, anchor="start", weight="bold")
    bx = x + PAD + 100
    if obs == s:
        bx += _badge(svg, bx, y + 15, "YOU", col, "#ffffff") + 4
    if cur == s:
        bx += _badge(svg, bx, y + 15, "▶ to act", t.highlight, t.panel) + 4
    if int(view["first_player"]) == s:
        _badge(svg, bx, y + 15, "start", t.muted, t.panel)
    if res is not None:
        svg.text(x + SIDE - PAD, y + 15, f"{res[0][s]} pts" + (" ★" if res[1][s] else ""),
                 size=13, anchor="end", weight="bold", fill=t.highlight if res[1][s] else t.text)
    else:
        svg.text(x + SIDE - PAD, y + 15, f"now {pts[s]}", size=12, anchor="end")
    hand = view["hands"][s]
    sel = view["selected_hand"] if cur == s and view["phase"] in (
        "cell", "rotation", "princess") else None
    for j in range(HANDMAX):
        hx, hy, _, _ = hand_box(z, s, j)
        if j < len(hand):
            _mini(svg, view, hand[j], hx, hy, hl=sel == j)
            svg.text(hx + MW / 2, hy + MH + 6, str(j), size=8.5, fill=t.muted)
        else:
            svg.rect(hx, hy, MW, MH, stroke=t.muted, rx=4, stroke_dasharray="4 3",
                     opacity=0.5)
    sup = int(view["supplies"][s])
    svg.text(x + SIDE - PAD - 44, y + 33, f"cats {sup}/{CATS_EACH}", size=9.5, fill=t.muted)
    for k in range(CATS_EACH):
        cx = x + SIDE - PAD - 82 + (k % 3) * 19 + (k // 3) * 9.5 + 11
        cy = y + 52 + (k // 3) * 20
        if k < sup:
            cat_head(svg, cx, cy, 6.5, col, None)
        else:
            svg.circle(cx, cy, 6.5, stroke=t.muted, stroke_width=1, stroke_dasharray="2 2")


def info(svg: Svg, view: Mapping[str, Any], z: Mapping[str, Any]) -> None:
    """Draw pile, waiting toy card, start cards (setup), discards, legend."""
    t = svg.theme
    x, y = z["sx"], info_y(z)
    h = INFO_H
    svg.rect(x, y, SIDE, h, fill=t.panel, rx=10)
    pile = len(view["draw_pile"])
    adv = view["options"].get("advanced")
    svg.text(x + PAD, y + 15, f"Draw pile {pile}", size=12.5, anchor="start", weight="bold")
    svg.text(x + PAD + 96, y + 15, "Princesses shuffled through" if adv else
             f"{len(view['pile_segments']) - 1} piles, a Princess in each", size=10,
             anchor="start", fill=t.muted)
    yy = y + 30
    if view["phase"].startswith("start"):
        used = set(view["start_cards_used"])
        names = [c["name"] for c in (view["options"].get("deck") or {}).get(
            "start_cards", [])] or [f"S{k}" for k in range(1, 6)]
        svg.text(x + PAD, yy + 4, "Start cards", size=10.5, anchor="start", fill=t.muted)
        for k, name in enumerate(names):
            _mini(svg, view, name, *start_card_box(z, k)[:2],
                  hl=name == view["selected_start"], dim=name in used)
        yy += MH + 24
    if view["drawn_toy"] is not None:
        svg.text(x + PAD, yy + 4, "Toy card to lay:", size=10.5, anchor="start",
                 fill=t.highlight)
        _mini(svg, view, view["drawn_toy"], x + PAD + 100, yy - 6)
        yy += MH + 4
    disc = view["discarded"]
    svg.text(x + PAD, yy + 4, f"Discarded {len(disc)}" + ("" if disc else ": none"),
             size=10.5, anchor="start", fill=t.muted)
    per = int((SIDE - 2 * PAD) // (MW + 4))
    for j, name in enumerate(disc[:per - 1] if len(disc) > per else disc):
        _mini(svg, view, name, x + PAD + j * (MW + 4), yy + 12)
    if len(disc) > per:
        svg.text(x + SIDE - PAD - MW / 2, yy + 12 + MH / 2, f"+{len(disc) - per + 1}",
                 size=12, fill=t.muted)
    # legend, at the bottom
    ly = y + h - 58
    svg.line(x + PAD, ly - 10, x + SIDE - PAD, ly - 10, stroke=t.muted, stroke_width=0.6)
    lx = x + PAD + 6
    for toy in (*TOYS, "spray"):
        toy_icon(svg, toy, lx, ly, 10)
        label = "sprayer −1" if toy == "spray" else toy
        svg.text(lx + 9, ly, label, size=10, anchor="start")
        lx += 22 + 6.2 * len(label)
    ly += 24
    cat_head(svg, x + PAD + 8, ly + 1, 7, seat_color(0, t), "0")
    svg.text(x + PAD + 20, ly, "awake cat", size=10, anchor="start")
    cat_head(svg, x + PAD + 96, ly + 1, 7, seat_color(1, t), "1", asleep=True)
    svg.text(x + PAD + 114, ly, "asleep", size=10, anchor="start")
    svg.rect(x + PAD + 160, ly - 6, 14, 12, fill=t.card_face, stroke=t.card_edge,
             stroke_width=0.6, rx=6)
    svg.rect(x + PAD + 178, ly - 6, 14, 12, fill=t.highlight, rx=6)
    svg.text(x + PAD + 197, ly, "value, closed ×2", size=10, anchor="start")
