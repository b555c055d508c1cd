"""The scores a Flipology picture prints, from a state dict alone: the dict is turned into the
engine's arrays (:func:`arrays`) and scored by the rules' own queries (``queries``) and
``rules.outcome``, so the picture and the engine cannot disagree."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from card_envs.core.kernels import C_PLAYERS
from card_envs.flipology import queries as Q
from card_envs.flipology.layout import (
    BONUS,
    CFG_SIZE,
    FACE,
    G_SEATPOS,
    G_SERIES,
    MAXPOS,
    POS,
    ROW_SHAPES,
    STATE_SIZE,
    TOTAL,
    VARIANTS,
)
from card_envs.flipology.parts.deck import card_table, write_card_tables
from card_envs.flipology.rules import outcome

__all__ = ["arrays", "game_points", "moon_up", "public_score", "result"]


def arrays(view: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """(state, cfg) of the rows, faces, Hermit crab bonuses and series totals of ``view``,
    enough for the scoring queries. A card the view does not name is face down and scores 0
    there (the null id stands for it); every card that scores is named in any seat's view:
    face-up cards, and at the end the revealed Sloths and Koalas."""
    o = view["options"]
    n = int(o["num_players"])
    rl, nl, _ = ROW_SHAPES[VARIANTS.index(o["variant"])]
    kinds, pts = card_table(view)
    nc = len(kinds)
    cfg = np.zeros(CFG_SIZE, np.int32)
    cfg[C_PLAYERS] = n
    cfg[G_SEATPOS] = rl * nl
    cfg[G_SERIES] = int(bool(o.get("series")))
    write_card_tables(cfg, kinds, pts)
    state = np.zeros(STATE_SIZE, np.int32)
    state[POS:POS + MAXPOS] = -1
    for s in range(n):
        for lv in range(nl):
            for c in range(rl):
                p = s * rl * nl + lv * rl + c
                cid = view["rows"][s][lv][c]
                state[POS + p] = -1 if cid == "empty" else cid if isinstance(cid, int) else nc
                state[FACE + p] = bool(view["face_up"][s][lv][c])
        state[BONUS + s] = int(view["hermit_bonus"][s])
        state[TOTAL + s] = int(view["totals"][s])
    return state, cfg


def public_score(view: Mapping[str, Any], s: int) -> int:
    """Seat ``s``'s score from public information (``queries.public_score``)."""
    state, cfg = arrays(view)
    return int(Q.public_score(state, cfg, s))


def moon_up(view: Mapping[str, Any]) -> bool:
    """The Moon lies face up in some row (``queries.moon_up``)."""
    state, cfg = arrays(view)
    return bool(Q.moon_up(state, cfg))


def _points(fn: Any, view: Mapping[str, Any]) -> tuple[list[int], list[bool]]:
    state, cfg = arrays(view)
    n = int(cfg[C_PLAYERS])
    points = np.zeros(n, np.float64)
    winners = np.zeros(n, np.int64)
    fn(state, cfg, points, winners)
    return [int(p) for p in points], [bool(w) for w in winners]


def game_points(view: Mapping[str, Any]) -> tuple[list[int], list[bool]]:
    """(points, winners) of the game in the rows as the rules score it at its end
    (``queries.game_result``)."""
    return _points(Q.game_result, view)


def result(view: Mapping[str, Any]) -> tuple[list[int], list[bool]] | None:
    """Final (points, winners) of a finished game (``rules.outcome``; a series: the totals),
    or ``None`` while playing."""
    if view["phase"] != "end":
        return None
    return _points(outcome, view)
