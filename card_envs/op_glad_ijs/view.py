"""Op Glad IJs seen: the ANSI text of a state (:func:`render`, what a spectator sees: draw piles
face down), the picture of a state dict (:func:`draw`, ``render_mode="svg"/"rgb_array"``:
the middle in turned order, the last turned card outlined, a "pass" control while seats
choose, and per player the draw pile (face down, its size), the won pile's top card and size,
the window's choice and the last resolved slap; the pieces are in ``parts.picture``), where
each slap is clicked on that picture (:func:`clicks`) and how the game is won
(:func:`result_text`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from card_envs.core.game import Game
from card_envs.core.kernels import CUR, DONE
from card_envs.draw import Svg, Theme, seat_title, view_note
from card_envs.draw import theme as as_theme
from card_envs.op_glad_ijs import layout as L
from card_envs.op_glad_ijs.parts.deck import parse_code
from card_envs.op_glad_ijs.parts.linked import middle, won_pile
from card_envs.op_glad_ijs.parts.picture import (
    CH,
    CW,
    MARGIN,
    MID_H,
    MID_Y,
    PANEL_H,
    PASS_BOX,
    TITLE_H,
    animal_card,
    columns,
    middle_places,
    pass_control,
    player_panel,
    size,
    slap_names,
    slap_types,
    type_codes,
)
from card_envs.op_glad_ijs.queries import scores

Box = tuple[float, float, float, float]


def render(game: Game, state: np.ndarray, observer: int | None = None) -> str:
    """ANSI text of ``state`` (the same for every ``observer``: nothing hidden is shown)."""
    n, c = game.num_players, game.codes
    cur = int(state[CUR])
    head = (f"Op Glad IJs  card {int(state[L.TURNED])} turned by player_"
            f"{int(state[L.TURNED_BY])}  window {int(state[L.WINDOW])}")
    if cur >= 0:
        head += f"  to choose: player_{cur}"
    lines = [head]
    mid = [c[t] for t in middle(state)]
    lines.append("middle: " + (", ".join(mid) if mid else "-"))
    if state[DONE]:
        points, winners = game.outcome(state)
        if state[L.OLEN]:
            lines.append(f"out of the game: {int(state[L.OLEN])} cards")
    for q in range(n):
        won = won_pile(state, q)
        top = c[won[-1]] if won else "-"
        label = (f"player_{q}: draw {int(state[L.DLEN + q])} "
                 f"(known bottom {int(state[L.KNOWN + q])})  won {len(won)} (top {top})")
        if cur >= 0 and q < cur:
            label += "  [chosen]"
        if state[DONE]:
            label += f"  points {int(points[q])}" + ("  WINNER" if winners[q] else "")
        lines.append(label)
    return "\n".join(lines)


def _winners(view: dict) -> set[int]:
    """The winners of a finished game's state dict (``queries.scores`` of the won piles)."""
    won = np.asarray([len(p) for p in view["won_piles"]], np.int32)
    points = np.zeros(len(won), np.float64)
    winners = np.zeros(len(won), np.int64)
    scores(won, points, winners)
    return {q for q in range(len(won)) if winners[q]}


def draw(view: dict, theme: Theme | str) -> str:
    """An SVG of an Op Glad IJs state dict (``env.state_dict(observer)``) in ``theme`` (a
    Theme or its name)."""
    theme = as_theme(theme)
    names = slap_names(view["options"])
    n = len(view["draw_piles"])
    cur = view["current_player"]
    over = cur is None
    w, h = size(n)
    svg = Svg(w, h, theme, title="Op Glad IJs")
    t = svg.theme
    won = [len(p) for p in view["won_piles"]]
    win = _winners(view) if over else set()
    items: list[Any] = [f"card {view['turned_count']} by player_{view['turned_by']}",
                        f"window {view['window']}", *seat_title(view)]
    if over:
        items.append("winner" + ("s " if len(win) > 1 else " ") +
                     ", ".join(f"player_{q}" for q in sorted(win)))
    svg.title_bar("Op Glad IJs", items, TITLE_H, right=view_note(view))
    # the middle
    y = MID_Y
    svg.rect(MARGIN, y, w - 2 * MARGIN, MID_H, fill=t.panel, rx=8, stroke=t.card_edge,
             stroke_width=0.8)
    mid = view["middle"]
    svg.text(MARGIN + 10, y + 14, f"middle: {len(mid)} card{'s' if len(mid) != 1 else ''}",
             size=12, anchor="start", weight="bold")
    notes = [f"cut-off after {view['options']['max_turned']} turned"]
    if view["out"]:
        notes.insert(0, f"out of the game: {len(view['out'])}")
    svg.text(w - MARGIN - 10, y + 14, "  \u00b7  ".join(notes), size=11, anchor="end",
             fill=t.muted)
    if not over:
        pass_control(svg)
    for k, (code, (x, cy, _)) in enumerate(zip(mid, middle_places(len(mid)))):
        animal_card(svg, x, cy, CW, CH, code, highlight=k == len(mid) - 1 and not over)
    if not mid:
        svg.text(MARGIN + 10, y + 28 + CH / 2, "empty", size=12, anchor="start", fill=t.muted)
    # the players
    cols = columns(n)
    pw = (w - 2 * MARGIN - (cols - 1) * MARGIN) / cols
    top = y + MID_H + MARGIN
    for q in range(n):
        note = f"{won[q]} won" + (" \u00b7 WINNER" if q in win else
                                  " \u00b7 turns next" if view["turner"] == q and not over
                                  else "")
        player_panel(svg, view, q, MARGIN + (q % cols) * (pw + MARGIN),
                     top + (q // cols) * (PANEL_H + MARGIN), pw, note, names)
    return svg.to_string()


def _links(a: str, b: str) -> bool:
    """An animal on card ``a`` belongs in a habitat on card ``b``."""
    return bool(parse_code(a)[1] & parse_code(b)[2])


def clicks(view: Mapping[str, Any], actions: Sequence[int]) -> dict[int, list[Box]]:
    """Where each of ``actions`` is clicked on :func:`draw`'s picture of ``view``: "pass" on
    the pass control; a slap on the middle's cards of its types, the most recently turned
    card of a type: one hand is that card clicked twice, two hands the animal card, then the
    card with its habitat (cards in turned order when neither or both link; a pair of one
    type takes its two latest cards)."""
    mid = view["middle"]
    codes = type_codes(view["options"])
    pairs = slap_types(len(codes))
    places = [(x, y, seen, CH) for x, y, seen in middle_places(len(mid))]
    where: dict[str, list[int]] = {}
    for k, code in enumerate(mid):
        where.setdefault(code, []).append(k)
    out: dict[int, list[Box]] = {}
    for action in actions:
        a = int(action)
        t, u = pairs[a]
        if t < 0:
            out[a] = [PASS_BOX]
        elif u < 0:
            k = where[codes[t]][-1]
            out[a] = [places[k], places[k]]
        else:
            i, j = sorted(where[codes[t]][-2:] if t == u else
                          (where[codes[t]][-1], where[codes[u]][-1]))
            if _links(mid[j], mid[i]) and not _links(mid[i], mid[j]):
                i, j = j, i
            out[a] = [places[i], places[j]]
    return out


def result_text(view: Mapping[str, Any]) -> str:
    """The rule (the most won cards wins, a tie shares the win) and, at the end, the won
    pile sizes that decided it."""
    rule = "The most cards in the won pile wins; a tie is a shared win."
    if view["current_player"] is not None:
        return rule
    won = [len(p) for p in view["won_piles"]]
    who = [f"player_{q}" for q in sorted(_winners(dict(view)))]
    head = f"{who[0]} wins" if len(who) == 1 else "Shared win: " + ", ".join(who)
    figures = ", ".join(f"player_{q} {k}" for q, k in enumerate(won))
    cut = (f" The game was cut off after {view['turned_count']} turned cards."
           if view.get("truncated") else "")
    best = max(won)
    return f"{rule} {head} with {best} won card{'' if best == 1 else 's'} ({figures}).{cut}"
