"""Where things lie on the Flipology picture (``view.draw``), from the options and a state dict
alone: the picture's geometry, each seat's panel and its row positions and hand slots, the
cards of the discard pile, and the controls of the moves that have no place on the table.
The picture (``parts.picture``) draws at these places and ``view.clicks`` answers with them,
so a click box always lies on what it names."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from card_envs.flipology.layout import ROW_SHAPES, SINGLES, SUN_PEEKS, VARIANTS

__all__ = ["CH", "CW", "DH", "DW", "END", "GAP", "HEAD", "HH", "HW", "INFO_TEXT", "M", "PAD",
           "TITLE", "Box", "cell_box", "control_boxes", "controls_shown", "discard_layout",
           "hand_box", "panel_xy", "sizes"]

Box = tuple[float, float, float, float]  # x, y, width, height in the picture's units

CW, CH, GAP = 58, 80, 6  # row cards
HW, HH, HGAP = 38, 54, 4  # hand cards
DW, DH, DGAP = 30, 42, 4  # discard pile cards
END, PAD, HEAD, M = 30, 10, 40, 12  # row-end gutters, padding, panel header, margin
TITLE = 54
INFO_TEXT = 60  # the info panel's text lines above the discard pile
CHIP_H, CHIP_Y, CHIP_GAP = 18, 37, 6  # the controls: on the title bar's second line

# the single actions' controls, in groups that are never legal together (the index of a
# single action in ``SINGLES`` -> its group); a group is drawn right-aligned in the title bar
CONTROL_GROUPS = ((0,), (1, 2), (3, 4))


def sizes(view: Mapping[str, Any]) -> dict[str, Any]:
    """Picture geometry from the options alone (so every frame of a game has one size)."""
    o = view["options"]
    n = int(o["num_players"])
    rl, nl, hn = ROW_SHAPES[VARIANTS.index(o["variant"])]
    pw = 2 * PAD + 2 * END + rl * CW + (rl - 1) * GAP
    ph = HEAD + nl * (CH + GAP) + HH + 14 + PAD
    rows = (n + 1) // 2
    width = 2 * pw + 3 * M
    height = TITLE + rows * (ph + M)
    if n % 2:  # the info panel takes the free place beside the last seat
        info = (M + pw + M, TITLE + (rows - 1) * (ph + M), pw, ph)
    else:
        info = (M, height, width - 2 * M, INFO_TEXT + 2 * (DH + 12) + PAD)
        height += info[3] + M
    return {"n": n, "rl": rl, "nl": nl, "hn": hn, "pw": pw, "ph": ph, "W": width,
            "H": height, "info": info}


def panel_xy(s: int, z: Mapping[str, Any]) -> tuple[float, float]:
    """Top left corner of seat ``s``'s panel (two panels a line, seat order)."""
    r, c = divmod(s, 2)
    return M + c * (z["pw"] + M), TITLE + r * (z["ph"] + M)


def cell_box(s: int, lv: int, c: int, z: Mapping[str, Any]) -> Box:
    """Seat ``s``'s position at level ``lv`` (0 the first row laid; the top level is drawn
    first), column ``c``."""
    x, y = panel_xy(s, z)
    i = z["nl"] - 1 - lv
    return x + PAD + END + c * (CW + GAP), y + HEAD + i * (CH + GAP), CW, CH


def hand_box(s: int, j: int, z: Mapping[str, Any]) -> Box:
    """Seat ``s``'s hand slot ``j`` (under its rows)."""
    x, y = panel_xy(s, z)
    return x + PAD + END + j * (HW + HGAP), y + HEAD + z["nl"] * (CH + GAP) + 6, HW, HH


def discard_layout(view: Mapping[str, Any], z: Mapping[str, Any]
                   ) -> list[tuple[int | None, Box]]:
    """The discard pile's cards as the info panel lays them out: the cards the view knows in
    id order, then one back for those it does not (``None``), each with the box of its
    visible part. When they do not fit the panel side by side, the cards of a line overlap."""
    x, y, w, h = z["info"]
    disc = view["discard"]
    entries: list[int | None] = [c for c in disc if c is not None]
    if len(entries) < len(disc):
        entries.append(None)
    if not entries:
        return []
    width = w - 2 * PAD
    lines = max(1, int((h - INFO_TEXT - PAD) // (DH + 12)))
    per = max(1, int(width // (DW + DGAP)))
    step = DW + DGAP
    if len(entries) > per * lines:
        per = -(-len(entries) // lines)
        room = width - DW - (24 if entries[-1] is None else 0)  # the unknown count's place
        step = room / (per - 1)
    out: list[tuple[int | None, Box]] = []
    for j, c in enumerate(entries):
        last = j % per == per - 1 or j == len(entries) - 1
        out.append((c, (x + PAD + (j % per) * step, y + INFO_TEXT + (j // per) * (DH + 12),
                        DW if last else min(DW, step), DH)))
    return out


def controls_shown(view: Mapping[str, Any]) -> tuple[int, ...]:
    """The single actions (indices in ``SINGLES``) whose controls the picture of ``view``
    shows: the Sun's "skip" once it has looked, the Hermit crab's "skip", the Regrowth
    choice, the Hermit crab's count of a Sloth or Koala."""
    ph = view["phase"]
    if ph == "effect":
        ef = view["effect_stack"][0] if view["effect_stack"] else None
        sun = ef is not None and ef["kind"] == "sun" and int(ef["step"]) >= SUN_PEEKS
        return CONTROL_GROUPS[0] if sun else ()
    return {"hermit": CONTROL_GROUPS[0], "regrow": CONTROL_GROUPS[1],
            "hermit_count": CONTROL_GROUPS[2]}.get(ph, ())


def control_boxes(single: int, z: Mapping[str, Any]) -> tuple[Box, Sequence[tuple[int, Box]]]:
    """The chip of the single action ``single`` (index in ``SINGLES``) and the chips of its
    whole group (``(index, box)`` each), right-aligned on the title bar's second line."""
    group = next(g for g in CONTROL_GROUPS if single in g)
    widths = [12 + 6.4 * len(SINGLES[i]) for i in group]
    x = z["W"] - M - sum(widths) - CHIP_GAP * (len(group) - 1)
    chips = []
    for i, wd in zip(group, widths):
        chips.append((i, (x, CHIP_Y - CHIP_H / 2, wd, float(CHIP_H))))
        x += wd + CHIP_GAP
    return dict(chips)[single], chips
