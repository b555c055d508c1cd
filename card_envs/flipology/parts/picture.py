"""Pieces of the Flipology picture (``view.draw``), each drawn from a state dict alone: the
title bar (with the controls of the moves that have no place on the table), one seat's panel
(its positions and hand slots numbered as the move names number them), the info strip (deck,
discard pile, the pending effect in words) and the marks on positions. Where each piece lies:
``parts.places``."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from typing import Any

from card_envs.draw import Svg
from card_envs.flipology.layout import KIND_NAMES, ROUNDS, SINGLES, SUN_PEEKS
from card_envs.flipology.parts.cards import KIND_TEXT, card, empty_slot, kind_of, seat_color
from card_envs.flipology.parts.deck import card_table
from card_envs.flipology.parts.places import (
    CH,
    CW,
    DH,
    DW,
    END,
    GAP,
    HH,
    HW,
    INFO_TEXT,
    PAD,
    TITLE,
    M,
    cell_box,
    control_boxes,
    controls_shown,
    discard_layout,
    hand_box,
    panel_xy,
)
from card_envs.flipology.parts.scores import game_points, moon_up, public_score, result

__all__ = ["info_panel", "marks", "seat_panel", "title_bar"]

PHASE_TEXT = {"regrow": "Regrowth choice", "setup": "laying out rows", "turn": "turn flip",
              "effect": "resolving an effect", "hermit": "Hermit crab picks",
              "hermit_count": "Hermit crab: count up or down", "end": "game over"}


def _variant_text(o: Mapping[str, Any]) -> str:
    parts = ["Great Tree" if o["variant"] == "great_tree" else "Nature"]
    if o.get("moon"):
        parts.append("Moon")
    if not o.get("wolves", True):
        parts.append("no Wolves")
    if o.get("series"):
        parts.append("series")
    return " · ".join(parts)


def title_bar(svg: Svg, view: Mapping[str, Any], z: Mapping[str, Any]) -> None:
    """Name, variant, phase, round and turn, the view's seat; the result at the end, else the
    seat to act; a note when the Moon is face up."""
    t = svg.theme
    o = view["options"]
    W = z["W"]
    svg.rect(0, 0, W, TITLE - 6, fill=t.panel)
    svg.text(M, 17, "Flipology", size=18, anchor="start", weight="bold")
    svg.text(M + 102, 17, _variant_text(o), size=13, anchor="start", fill=t.muted)
    phase = view["phase"]
    bits = [PHASE_TEXT.get(phase, phase)]
    if phase != "end":
        rnd = min(int(view["round"]), ROUNDS - 1) + 1
        per = (2 if o["variant"] == "great_tree" else 1) * z["n"]
        bits.append(f"round {rnd}/{ROUNDS}")
        if phase in ("turn", "effect"):
            bits.append(f"turn {int(view['turn']) + 1}/{per}")
    if o.get("series"):
        bits.append(f"game {int(view['game_number']) + 1} (to 100, at most {o['max_games']})")
    obs = view.get("observer")
    bits.append(f"view: player_{obs}" if obs is not None else "view: omniscient")
    svg.text(M, 37, "  ·  ".join(bits), size=11.5, anchor="start", fill=t.muted)
    cur = view["current_player"]
    res = result(view)
    if res is not None:
        pts, win = res
        who = [f"player_{s}" for s in range(z["n"]) if win[s]]
        head = (f"{who[0]} wins" if len(who) == 1 else "shared win: " + ", ".join(who))
        svg.text(W - M, 17, head, size=15, anchor="end", weight="bold", fill=t.highlight)
        what = "totals " if o.get("series") else "points "
        svg.text(W - M, 37, what + " : ".join(str(p) for p in pts), size=11.5, anchor="end",
                 fill=t.text)
    elif cur is not None:
        svg.circle(W - M - 8, 17, 7, fill=seat_color(cur, t))
        svg.text(W - M - 22, 17, f"▶ player_{cur} to act", size=15, anchor="end",
                 weight="bold")
        shown = controls_shown(view)
        for i, (x, y, w, h) in (control_boxes(shown[0], z)[1] if shown else ()):
            svg.rect(x, y, w, h, fill=t.background, stroke=t.highlight, rx=h / 2,
                     stroke_width=1.5)
            svg.text(x + w / 2, y + h / 2 + 0.5, SINGLES[i], size=10.5, weight="bold")
    if moon_up(view):
        svg.text(W - M, TITLE - 1, "☾ Moon face up: the lowest score wins", size=10.5,
                 anchor="end", fill=t.highlight)


def marks(view: Mapping[str, Any], z: Mapping[str, Any]) -> dict[tuple[int, int, int], str]:
    """Positions to mark: the pending effect's source (and a Monkey's picks, a Sun's peeks),
    the Hermit crab being resolved."""
    out: dict[tuple[int, int, int], str] = {}
    for ef in view["effect_stack"]:
        for p in ef["peeks"]:
            if p is not None:
                out[tuple(p)] = "peek"
        for k in ("a", "b"):
            if ef[k] is not None:
                out[tuple(ef[k])] = "sel"
        if ef["source"] is not None:
            out[tuple(ef["source"])] = "hl"
    if view["phase"] in ("hermit", "hermit_count"):
        n, sp = z["n"], z["rl"] * z["nl"]
        k = int(view["hermit_scan"])
        seat = (int(view["start_player"]) + k // sp) % n
        lv, c = divmod(k % sp, z["rl"])
        out[(seat, lv, c)] = "hl"
    return out


def _badge(svg: Svg, x: float, y: float, text: str, fill: str, color: str) -> float:
    """A small rounded label; returns its width."""
    w = 7 + 6.4 * len(text)
    svg.rect(x, y - 8, w, 16, fill=fill, rx=8)
    svg.text(x + w / 2, y + 0.5, text, size=10, fill=color, weight="bold")
    return w


def _coordinates(svg: Svg, view: Mapping[str, Any], s: int, z: Mapping[str, Any]) -> None:
    """The names the position and hand moves use, small and muted: above the top row the
    row's number seen from the seat to act (``r1``: the next seat's row) and the column
    numbers, beside each row its level (Great Tree), under the hand its slot numbers."""
    t = svg.theme
    cur = view["current_player"]
    x0, y0, _, _ = cell_box(s, z["nl"] - 1, 0, z)
    if cur is not None:
        svg.text(x0 - END / 2, y0 - 7, f"r{(s - int(cur)) % z['n']}", size=10, fill=t.muted,
                 weight="bold")
    for c in range(z["rl"]):
        svg.text(x0 + c * (CW + GAP) + CW / 2, y0 - 7, f"c{c}", size=9, fill=t.muted)
    if z["nl"] > 1:
        for lv in range(z["nl"]):
            _, ry, _, _ = cell_box(s, lv, 0, z)
            svg.text(x0 - END / 2, ry + 9, f"l{lv}", size=9, fill=t.muted)
    if any(h != "empty" for h in view["hands"][s]):
        for j in range(z["hn"]):
            hx, hy, _, _ = hand_box(s, j, z)
            svg.text(hx + HW / 2, hy + HH + 7, str(j), size=8.5, fill=t.muted)


def seat_panel(svg: Svg, view: Mapping[str, Any], s: int, z: Mapping[str, Any],
               marked: Mapping[tuple[int, int, int], str],
               res: tuple[list[int], list[bool]] | None) -> None:
    """Seat ``s``'s panel: badges, its score (``res``: the final result), its rows with the
    ``marked`` positions, the neighbours its row ends touch, its hand in its slots, the
    numbers the moves name them by."""
    t = svg.theme
    o = view["options"]
    kinds, pts = card_table(view)
    n, rl, nl = z["n"], z["rl"], z["nl"]
    x, y = panel_xy(s, z)
    cur, obs = view["current_player"], view.get("observer")
    col = seat_color(s, t)
    svg.rect(x, y, z["pw"], z["ph"], fill=t.panel, rx=10,
             stroke=t.highlight if cur == s else None, stroke_width=2.5)
    svg.rect(x, y + 10, 5, z["ph"] - 20, fill=col, rx=2.5)
    svg.circle(x + PAD + 9, y + 16, 8, fill=col)
    svg.text(x + PAD + 9, y + 16.5, str(s), size=10, fill=t.panel, weight="bold")
    svg.text(x + PAD + 23, y + 16, f"player_{s}", size=13.5, anchor="start", weight="bold")
    bx = x + PAD + 100
    if obs == s:
        bx += _badge(svg, bx, y + 16, "YOU", col, t.panel) + 5
    if cur == s:
        bx += _badge(svg, bx, y + 16, "▶ to act", t.highlight, t.panel) + 5
    if int(view["start_player"]) == s:
        bx += _badge(svg, bx, y + 16, "start", t.muted, t.panel) + 5
    right = x + z["pw"] - PAD
    if res is not None:
        p, w = res[0][s], res[1][s]
        label = (f"total {p}" if o.get("series") else f"{p} points") + (" ★" if w else "")
        svg.text(right, y + 16, label, size=13, anchor="end", weight="bold",
                 fill=t.highlight if w else t.text)
    else:
        svg.text(right, y + 16, f"visible {public_score(view, s):+d}", size=12, anchor="end")
    _coordinates(svg, view, s, z)
    # rows, the top level first; the row ends name the seats they touch
    left_nb, right_nb = (s + 1) % n, (s - 1) % n
    for lv in range(nl):
        ry = cell_box(s, lv, 0, z)[1]
        if lv < int(view["levels"]):
            for side, nb, ex in (("◂", left_nb, x + PAD + END / 2),
                                 ("▸", right_nb, x + z["pw"] - PAD - END / 2)):
                svg.text(ex, ry + CH / 2 - 7, side, size=12, fill=seat_color(nb, t))
                svg.text(ex, ry + CH / 2 + 8, f"p{nb}", size=10, fill=seat_color(nb, t),
                         weight="bold")
        for c in range(rl):
            cx, _, _, _ = cell_box(s, lv, c, z)
            cid = view["rows"][s][lv][c]
            if cid == "empty":
                empty_slot(svg, cx, ry, CW, CH)
                continue
            kind = kind_of(cid, kinds)
            p = 0 if kind in (None, "null") else pts[cid]
            card(svg, cx, ry, CW, CH, kind, p, bool(view["face_up"][s][lv][c]),
                 marked.get((s, lv, c)))
    # hand (the setup; others' cards as backs), each card in its slot
    hy = hand_box(s, 0, z)[1]
    hand = view["hands"][s]
    svg.text(x + PAD + END / 2, hy + HH / 2, "hand", size=10, fill=t.muted)
    if all(h == "empty" for h in hand):
        svg.text(x + PAD + END + 2, hy + HH / 2, "empty", size=10.5, anchor="start",
                 fill=t.muted)
    for j, cid in enumerate(hand):
        if cid == "empty":
            continue
        hx, _, _, _ = hand_box(s, j, z)
        kind = kind_of(cid, kinds)
        card(svg, hx, hy, HW, HH, kind, 0 if kind is None else pts[cid], True)
    notes = []
    if o.get("series"):
        notes.append(f"series total {int(view['totals'][s])}" if res is None else
                     f"last game {game_points(view)[0][s]} points")
    if o["variant"] == "great_tree":
        notes.append("Regrowth used" if view["regrow_used"][s] else "Regrowth left")
    if notes:
        svg.text(right, hy + HH - 4, "  ·  ".join(notes), size=10.5, anchor="end",
                 fill=t.muted)


def _effect_text(view: Mapping[str, Any]) -> list[str]:
    """The pending effect (or the setup / Hermit crab choice) in words, a line or two."""
    ph = view["phase"]
    if view["effect_stack"]:
        ef = view["effect_stack"][0]
        name = KIND_TEXT.get(ef["kind"], (ef["kind"], ""))[0]
        s, lv, c = ef["source"]
        where = f"player_{s} col {c + 1}"
        if view["options"]["variant"] == "great_tree":
            where += f" row {lv + 1}"
        first = f"Pending: {name}" + (" (Parrot's copy)" if ef["copy"] else "") + f", {where}"
        step = int(ef["step"])
        if ef["kind"] == "sun":
            k = sum(p is not None for p in ef["peeks"])
            how = f"looked at {k}/{SUN_PEEKS}" + (": flip one or none" if step >= SUN_PEEKS
                                                    else "")
        elif ef["kind"] == "rain":
            row = (int(view["current_player"]) + step) % len(view["rows"])
            how = f"flip a card in the row of player_{row}"
        elif ef["kind"] == "monkey":
            how = ("choose a neighbour", "choose the second neighbour",
                   "choose the effect to apply")[min(step, 2)]
        else:
            how = "choose the target"
        return [first, f"{how}  ·  effects this turn: {int(view['chain'])}"]
    if ph == "hermit":
        return ["A Hermit crab picks an animal from the discard pile (or skips)"]
    if ph == "hermit_count":
        kinds, pts = card_table(view)
        c = view["hermit_card"]
        return [f"Hermit crab picked {KIND_TEXT[KIND_NAMES[kinds[c]]][0]} {pts[c]}: count it "
                "face up (−) or face down (+)"]
    if ph == "regrow":
        return ["Regrowth: swap the hand of 5 for 5 new cards, or keep it"]
    if ph == "setup":
        return [f"Laying out the row: {int(view['placed'])} placed"]
    return []


def info_panel(svg: Svg, view: Mapping[str, Any], z: Mapping[str, Any]) -> None:
    """Deck and discard pile sizes, the pending effect, the discard pile's cards."""
    t = svg.theme
    kinds, pts = card_table(view)
    x, y, w, h = z["info"]
    svg.rect(x, y, w, h, fill=t.panel, rx=10)
    disc = view["discard"]
    unknown = sum(c is None for c in disc)
    head = f"Deck {len(view['deck'])}  ·  Discard pile {len(disc)}"
    if unknown:
        head += f" ({unknown} unknown)"
    svg.text(x + PAD, y + 15, head, size=12.5, anchor="start", weight="bold")
    lines = textwrap.wrap(" · ".join(_effect_text(view)), int((w - 2 * PAD) / 6.4))
    for i, line in enumerate(lines[:2]):
        svg.text(x + PAD, y + 33 + 15 * i, line, size=11.5, anchor="start", fill=t.highlight)
    picked = {c: how for c, how in view["picked"]}
    top = y + INFO_TEXT
    for c, (dx, dy, _, _) in discard_layout(view, z):
        if c is None:  # the cards this seat has not seen: one back, with their number
            card(svg, dx, dy, DW, DH, None, 0, False)
            svg.text(dx + DW + 3, dy + DH / 2, f"×{unknown}", size=12, anchor="start",
                     fill=t.text, weight="bold")
            continue
        mark = "hl" if c in picked else None
        card(svg, dx, dy, DW, DH, kind_of(c, kinds), pts[c], True, mark)
        if mark:
            svg.text(dx + DW / 2, dy + DH + 6, picked[c], size=7.5, fill=t.highlight)
    if not disc:
        svg.text(x + PAD, top + DH / 2, "(discard pile empty)", size=11, anchor="start",
                 fill=t.muted)
