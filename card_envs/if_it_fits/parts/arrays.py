"""If It Fits' arrays from Python values: the config array of a set of options (for the game and
for the picture, which has only a state dict's options) and a state dict's table and slots as
the state's cell, join and slot codes (for the state-dict loader and the picture)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from card_envs.core.checks import int_in as _int
from card_envs.core.checks import record as _record
from card_envs.core.checks import seq as _seq
from card_envs.core.errors import StateDictError
from card_envs.core.kernels import C_PLAYERS
from card_envs.if_it_fits import layout as L
from card_envs.if_it_fits.parts.deck import card_table

_OFFSETS = ((L.CF_O_PILE, "pile"), (L.CF_O_CELL, "cell"), (L.CF_O_SJOIN, "sjoin"),
            (L.CF_O_PARENT, "parent"), (L.CF_O_FRONT, "front"), (L.CF_O_CATS, "cats"),
            (L.CF_O_COPEN, "copen"), (L.CF_O_NBR, "nbr"), (L.CF_O_SLOT, "slot"),
            (L.CF_O_OBSC, "obsc"), (L.CF_O_DISC, "disc"), (L.CF_SIZE, "size"),
            (L.CF_O_FLIST, "flist"), (L.CF_O_FPOS, "fpos"))


def config(header: np.ndarray, rows: int, cols: int, advanced: bool,
           deck: Mapping[str, Any]) -> tuple[np.ndarray, dict[str, int]]:
    """The config array (``header``, the shared entries with ``C_PLAYERS``, then the table, the
    offsets and the card table: ``CF_*`` of the layout) and the state offsets
    (:func:`~card_envs.if_it_fits.layout.offsets`) of a validated deck on a rows x cols
    table."""
    table = card_table(deck)
    nb, nt = len(deck["box_cards"]), len(deck["special_toy_cards"])
    n = int(header[C_PLAYERS])
    lay = L.offsets(rows, cols, nb, nt)
    nc = table.size // L.FIELDS
    ext = np.zeros(L.CF_TABLE + table.size + 3 * nc, np.int32)
    ext[:header.size] = header
    ext[L.CF_ROWS], ext[L.CF_COLS] = rows, cols
    ext[L.CF_ADV] = int(advanced)
    ext[L.CF_NB], ext[L.CF_NT] = nb, nt
    ext[L.CF_NPR] = L.NUM_PRINCESS if advanced else n
    ext[L.CF_NC], ext[L.CF_PILEMAX] = lay["nc"], lay["pilemax"]
    for k, name in _OFFSETS:
        ext[k] = lay[name]
    ext[L.CF_TABLE:L.CF_TABLE + table.size] = table
    ext[L.CF_O_ROWS] = L.CF_TABLE + table.size
    ext[L.CF_TABLE + table.size:] = card_rows(table)
    ext[L.CF_OBS] = L.obs_size(rows, cols, n, nt)
    return ext, lay


def card_rows(table: np.ndarray) -> np.ndarray:
    """The observation's card row of every card id of the card ``table`` (``CARD_REC``
    entries: 0 for the kind, filled in by ``observe``, then the open sides N, E, S, W, the toys
    and the sprayers), packed 4 entries per int32 (little-endian), 3 int32 per card."""
    t = table.reshape(-1, L.FIELDS)
    rows = np.zeros((len(t), 12), np.uint8)
    for d in range(4):
        rows[:, L.CR_SIDES + d] = (t[:, L.F_OPEN] >> d) & 1
    rows[:, L.CR_TOYS:L.CR_TOYS + 3] = t[:, L.F_BALL:L.F_BALL + 3]
    rows[:, L.CR_SPRAY] = t[:, L.F_SPRAY]
    return rows.view("<u4").astype(np.int64).astype(np.int32).ravel()


def _is(x: Any, name: str) -> bool:
    """``x`` is the string ``name``."""
    return isinstance(x, str) and x == name


def read_table(d: Mapping[str, Any], rows: int, cols: int, n: int,
               card_id: Callable[[Any], int], nb: int, nc: int, cells: np.ndarray,
               joins: np.ndarray, slots: np.ndarray) -> None:
    """The ``table`` and ``slots`` of the state dict ``d`` of an ``n``-seat game on a rows x
    cols table, checked entry by entry (:class:`StateDictError`): the cell codes into
    ``cells`` (zeros), the cells the sleeping cats joined into ``joins``, the slot codes into
    ``slots`` (zeros). ``card_id`` maps a card name to its id (``nc``: the Princess; ``nb``
    box cards, then the start and the special toy cards)."""
    C, T = cols, rows * cols
    table = d["table"]
    if not isinstance(table, list) or len(table) != rows or \
            any(not isinstance(r, list) or len(r) != C for r in table):
        raise StateDictError(f"table must be {rows} x {C}")
    joins[:] = -1
    for r, row in enumerate(table):
        for c, x in enumerate(row):
            i = r * C + c
            if x is None:
                continue
            if isinstance(x, Mapping) and "card" in x:
                x = _record(x, ("card", "rot"), "table cell")
                cid = card_id(x["card"])
                rot = _int(x["rot"], 0, 1, "rot")
                if cid >= nc:
                    raise StateDictError("a Princess cannot lie in a cell as a card")
                cells[i] = 1 + 2 * cid + rot
            else:
                x = _record(x, ("sleeping_cat", "joined"), "table cell (card or cat)")
                o = x["sleeping_cat"]
                o = L.PRINCESS_OWNER if _is(o, "princess") else _int(o, 0, n - 1, "owner")
                jr, jc = _seq(x["joined"], "joined", 2)
                j = _int(jr, 0, rows - 1, "joined") * C + _int(jc, 0, C - 1, "joined")
                if abs(jr - r) + abs(jc - c) != 1:
                    raise StateDictError("a sleeping cat joins a neighbouring card")
                cells[i] = -(o + 1)
                joins[i] = j
    for i in range(T):
        if joins[i] >= 0 and cells[joins[i]] <= 0:
            raise StateDictError("a sleeping cat must join a card")
    srows = d["slots"]
    if not isinstance(srows, list) or len(srows) != rows - 1 or \
            any(not isinstance(r, list) or len(r) != C for r in srows):
        raise StateDictError(f"slots must be {rows - 1} x {C}")
    for r, row in enumerate(srows):
        for c, x in enumerate(row):
            if x is None:
                continue
            if isinstance(x, Mapping) and "cat" in x:
                x = _record(x, ("cat",), "slot")
                v = L.SLOT_PRINCESS if _is(x["cat"], "princess") else \
                    1 + _int(x["cat"], 0, n - 1, "cat")
            else:
                x = _record(x, ("toy",), "slot (cat or toy)")
                cid = card_id(x["toy"])
                if not nb + L.NUM_START <= cid < nc:
                    raise StateDictError("only special toy cards lie on slots")
                v = L.SLOT_TOY + cid - nb - L.NUM_START
            slots[r * C + c] = v
