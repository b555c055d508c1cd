"""ANSI rendering of If It Fits: the public table (hands and pile hidden)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from card_envs.core.kernels import CUR
from card_envs.if_it_fits import layout as L
from card_envs.if_it_fits.board import rot_open

if TYPE_CHECKING:
    from card_envs.if_it_fits.game import IfItFitsGame

TOY = "bmy"


def render(game: IfItFitsGame, state: np.ndarray) -> str:
    """Each cell is 3 lines of 5 characters: open sides as gaps in the '#' frame, toys as
    b/m/y, a sprayer as '!', a sleeping cat as Z<seat> (ZP a Princess); a cat on the slot
    between two cells shows as C<seat> (CP Princess, T<kind> a toy card) on the line between."""
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
            o = rot_open(int(game.cfg[tb + L.F_OPEN]), rot)
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
