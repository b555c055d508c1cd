"""If It Fits' views of a position: the ANSI text of the public table (:func:`render`), the
SVG picture of a state dict (:func:`draw`, the viewer contract of :mod:`card_envs.draw`; its
pieces in ``parts/picture.py`` and ``parts/drawing.py``) with the boxes and scores it shows
(:func:`boxes`, :func:`scores`, :func:`result`): the rule queries asked of the state dict's
table rebuilt as an engine state (:func:`table_state`); where each move is clicked on that
picture (:func:`clicks`) and how the game is won (:func:`result_text`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from card_envs.core.game import Game
from card_envs.core.kernels import C_HEADER, C_PLAYERS, CUR, winners_by_keys
from card_envs.draw import Svg, Theme
from card_envs.draw import theme as as_theme
from card_envs.if_it_fits import layout as L
from card_envs.if_it_fits import queries as Q
from card_envs.if_it_fits.parts import picture as P
from card_envs.if_it_fits.parts.arrays import config, read_table
from card_envs.if_it_fits.parts.board import rebuild
from card_envs.if_it_fits.parts.deck import card_names, default_deck
from card_envs.if_it_fits.queries import card_open

__all__ = ["boxes", "clicks", "draw", "render", "result", "result_text", "scores",
           "table_state"]

TOY = "bmy"


def render(game: Game, state: np.ndarray, observer: int | None = None) -> str:
    """Each cell is 3 lines of 5 characters: open sides as gaps in the '#' frame, toys as
    b/m/y, a sprayer as '!', a sleeping cat as Z<seat> (ZP a Princess); a cat on the slot
    between two cells shows as C<seat> (CP Princess, T<kind> a toy card) on the line between.
    Only the public table is shown, the same for every ``observer``."""
    C, T = game.cols, game.T
    cells = game.arr(state, "cell", T)
    slots = game.arr(state, "slot", game.S)
    cur = int(state[CUR])
    head = f"If It Fits  phase {game.phase_name(state)}  pile {int(state[L.S_PN])}"
    head += f"  to act: player_{cur}" if cur >= 0 else "  game over"
    if state[L.S_ENDTRIG]:
        head += "  END TRIGGERED"
    lines = [head]
    lines.append("supplies " + " ".join(str(int(state[L.S_SUPPLY + q]))
                                        for q in range(game.num_players)) +
                 "  hands " + " ".join(str(int(state[L.S_HANDN + q]))
                                       for q in range(game.num_players)))
    for r in range(game.rows):
        top, mid, bot = [], [], []
        for c in range(C):
            i = r * C + c
            v = int(cells[i])
            if v == 0:
                top.append("     ")
                mid.append("  .  ")
                bot.append("     ")
                continue
            if v < 0:
                who = "P" if v == L.CELL_PRINCESS else str(-v - 1)
                top.append("+---+")
                mid.append(f"|Z{who} |")
                bot.append("+---+")
                continue
            cid, rot = (v - 1) // 2, (v - 1) % 2
            tb = L.CF_TABLE + cid * L.FIELDS
            o = card_open(game.cfg, cid, rot)
            toys = "".join(TOY[k] * int(game.cfg[tb + L.F_BALL + k]) for k in range(3))
            toys += "!" * int(game.cfg[tb + L.F_SPRAY])
            mark = ""
            if r > 0 and slots[i - C]:
                mark = _slot(int(slots[i - C]))
            top.append("#" + (f"{mark:^3}" if o & 1 else "###") + "#")
            mid.append((" " if o & 8 else "#") + f"{toys[:3]:^3}" + (" " if o & 2 else "#"))
            bot.append("#" + ("   " if o & 4 else "###") + "#")
        lines += ["".join(top), "".join(mid), "".join(bot)]
    return "\n".join(lines)


def _slot(v: int) -> str:
    """The label of slot code ``v``: C<seat>, CP (Princess) or T<k> (toy card k)."""
    if v <= L.MAX_PLAYERS:
        return f"C{v - 1}"
    if v == L.SLOT_PRINCESS:
        return "CP"
    return f"T{v - L.SLOT_TOY}"


# --- the picture ---------------------------------------------------------------------------
def table_state(view: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """The table and slots of the state dict ``view`` (public in every view) as an engine
    state whose boxes are rebuilt by the board kernels, and its config."""
    o = view["options"]
    rows, cols = (int(v) for v in o["table"])
    n = int(o["num_players"])
    deck = o.get("deck") or default_deck()
    header = np.zeros(C_HEADER + 8, np.int32)
    header[C_PLAYERS] = n
    cfg, lay = config(header, rows, cols, bool(o.get("advanced")), deck)
    ids = {name: k for k, name in enumerate(card_names(deck))}
    ids["princess"] = lay["nc"]
    state = np.zeros(lay["size"], np.int32)
    T = rows * cols
    read_table(view, rows, cols, n, ids.__getitem__, len(deck["box_cards"]), lay["nc"],
               state[lay["cell"]:lay["cell"] + T], state[lay["sjoin"]:lay["sjoin"] + T],
               state[lay["slot"]:lay["slot"] + T - cols])
    rebuild(state, cfg)
    return state, cfg


def boxes(view: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The boxes of the view's table and their scores now (:func:`queries.boxes
    <card_envs.if_it_fits.queries.boxes>`)."""
    state, cfg = table_state(view)
    return Q.boxes(state, cfg)


def scores(view: Mapping[str, Any], bxs: Sequence[Mapping[str, Any]] | None = None
           ) -> tuple[list[int], list[int]]:
    """(points, minus points) per seat if the table were scored now (at the end: the final
    score): the boxes' (``bxs``, default :func:`boxes`) summed."""
    n = int(view["options"]["num_players"])
    bxs = boxes(view) if bxs is None else bxs
    return ([sum(b["points"][q] for b in bxs) for q in range(n)],
            [sum(b["minus"][q] for b in bxs) for q in range(n)])


def result(view: Mapping[str, Any], bxs: Sequence[Mapping[str, Any]] | None = None
           ) -> tuple[list[int], list[bool]] | None:
    """Final (points, winners) of a finished game (most points, then fewest minus points;
    still tied: shared), or ``None`` while playing."""
    if view["phase"] != "end":
        return None
    pts, minus = scores(view, bxs)
    won = np.zeros(len(pts), np.int64)
    winners_by_keys(np.asarray(pts, np.float64), -np.asarray(minus, np.float64), len(pts), won)
    return pts, [bool(w) for w in won]


def draw(view: Mapping[str, Any], theme: Theme | str) -> str:
    """The SVG document of ``view`` (an If It Fits state dict, what its observer knows) in
    ``theme`` (a Theme or its name). Left, the table: cardboard cards with a thick wall on
    each closed side (joined cards run into one another: a box), their toys and sprayers,
    awake cats on the cat slots between two cards, sleeping cats in their cells, a pill with
    each box's value (gold: closed, doubled). Right, one panel per seat (cats in supply, hand:
    the viewer's own cards face up, others' backs, the score if the table were scored now,
    final at the end), the draw pile, the waiting toy card, start cards, discards and a
    legend. The picture's size depends only on the options."""
    theme = as_theme(theme)
    z = P.sizes(view)
    svg = Svg(z["W"], z["H"], theme, title="If It Fits")
    bxs = boxes(view)
    res = result(view, bxs)
    pts, _ = scores(view, bxs)
    P.title(svg, view, z, res)
    P.table(svg, view, z, bxs)
    for s in range(z["n"]):
        P.seat(svg, view, s, z, pts, res)
    P.info(svg, view, z)
    return svg.to_string()


def clicks(view: Mapping[str, Any], actions: Sequence[int]) -> dict[int, list[P.Box]]:
    """Where each of ``actions`` is clicked on :func:`draw`'s picture of ``view``: a cell
    (``cell rRcC``; ``start row west/east``: the cell at that end of the start row; ``join D``:
    the card in direction D of the sleeping cat's cell), a cat slot on the line between its
    two cells, a card of the hand of the seat to act (``hand K``) or a start card in the
    information panel, and the title bar's controls for ``draw``, ``sleeping cat``,
    ``rotate 0/180``, ``skip`` and ``pass``."""
    z = P.sizes(view)
    R, C = z["R"], z["C"]
    T, S = R * C, (R - 1) * C
    B = T + S
    chips = dict(P.controls(view, z))
    out: dict[int, list[P.Box]] = {}
    for action in actions:
        a = int(action)
        k = a - B
        if a < T:
            box = P.cell_box(z, a // C, a % C)
        elif a < B:
            box = P.slot_box(z, (a - T) // C, (a - T) % C)
        elif k < L.A_ROT:
            box = P.hand_box(z, int(view["current_player"]), k - L.A_HAND)
        elif k < L.A_DIR:
            box = chips[f"rotate {180 * (k - L.A_ROT)}"]
        elif k < L.A_START:
            (r, c), d = view["selected_cell"], k - L.A_DIR
            box = P.cell_box(z, r + (-1, 0, 1, 0)[d], c + (0, 1, 0, -1)[d])
        elif k < L.A_END:
            box = P.start_card_box(z, k - L.A_START)
        elif k < L.A_DRAW:
            west, east = view["start_row"]
            box = P.cell_box(z, R // 2, west - 1 if k == L.A_END else east + 1)
        else:
            box = chips[("draw", "sleeping cat", "skip", "pass")[k - L.A_DRAW]]
        out[a] = [box]
    return out


def result_text(view: Mapping[str, Any]) -> str:
    """The rule (most points, then fewest minus points) and, at the end, the points (and the
    minus points when they broke a tie) that decided it."""
    rule = ("Most points wins: each box scores its most frequent toy minus its water sprayers "
            "(doubled when closed) for the players with the most cats in it; a tie goes to "
            "the fewest minus points, then is shared.")
    res = result(view)
    if res is None:
        return rule
    pts, win = res
    _, minus = scores(view)
    who = [f"player_{q}" for q, w in enumerate(win) if w]
    head = f"{who[0]} wins" if len(who) == 1 else "Shared win: " + ", ".join(who)
    best = max(pts)
    text = f"{rule} {head} with {best} point{'' if abs(best) == 1 else 's'} (" + ", ".join(
        f"player_{q} {p}" for q, p in enumerate(pts)) + ")"
    if sum(p == best for p in pts) > 1:
        text += "; minus points " + ", ".join(
            f"player_{q} {m}" for q, m in enumerate(minus) if pts[q] == best)
    return text + "."
