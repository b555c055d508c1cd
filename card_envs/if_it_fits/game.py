"""If It Fits' game specification: options, sizes, state-dict codec, checks, determinization."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from card_envs.core.checks import as_bool, requirer
from card_envs.core.checks import int_in as _int
from card_envs.core.checks import record as _record
from card_envs.core.checks import seq as _seq
from card_envs.core.errors import OptionError, StateDictError
from card_envs.core.game import Game, Option, bool_option
from card_envs.core.kernels import CUR, DONE, DONE_TRUNCATED, PHASE
from card_envs.if_it_fits import board as Bd
from card_envs.if_it_fits import deck as D
from card_envs.if_it_fits import render as _render
from card_envs.if_it_fits import rules as R

_require = requirer("if_it_fits")


DIRS = "NESW"
PHASES = ("start_card", "start_end", "start_rotation", "turn", "toy_slot", "toy_cell", "play",
          "cell", "rotation", "cat", "princess", "sleep_cell", "sleep_dir", "discard", "pass",
          "end")
_DEFAULT_DECK: dict[str, Any] | None = None


def default_deck() -> dict[str, Any]:
    global _DEFAULT_DECK
    if _DEFAULT_DECK is None:
        _DEFAULT_DECK = D.load_default()
    return _DEFAULT_DECK


def _table(v: Any, _: Mapping[str, Any]) -> tuple[int, int]:
    ok = isinstance(v, (tuple, list)) and len(v) == 2 and all(
        isinstance(x, (int, np.integer)) and not isinstance(x, bool) for x in v)
    if not ok or not (3 <= v[0] <= 21 and 5 <= v[1] <= 21):
        raise OptionError(f"if_it_fits_v0: table must be (rows, cols) with rows in 3..21 and "
                          f"cols in 5..21, got {v!r}")
    return int(v[0]), int(v[1])


def _deck(v: Any, opts: Mapping[str, Any]) -> dict[str, Any] | None:
    if v is None:
        return None
    d = D.validate(v)
    if len(d["box_cards"]) < 2 * D.NUM_START:
        raise OptionError("if_it_fits deck: at least 10 box cards are needed (hands of 2)")
    return d


class IfItFitsGame(Game):
    name = "if_it_fits"
    env_id = "if_it_fits_v0"
    version = "0"
    rules = R
    min_players, max_players, default_players = 2, 5, 2
    phases = PHASES
    obs_dtype = np.int8
    extra_options = {
        "table": Option((11, 11), "(rows, cols) of the table grid, rows 3-21, cols 5-21",
                        _table),
        "advanced": Option(False, "advanced rules", bool_option("if_it_fits_v0", "advanced")),
        "deck": Option(None, "None (default deck) or a deck dict / JSON path "
                             "(schema: card_envs/if_it_fits/deck.py)", _deck),
    }

    def configure(self, cfg: np.ndarray) -> np.ndarray:
        self.rows, self.cols = self.options["table"]
        self.deck = self.options["deck"] or default_deck()
        self.card_names = D.card_names(self.deck)
        table = D.card_table(self.deck)
        nb, nt = len(self.deck["box_cards"]), len(self.deck["special_toy_cards"])
        lay = Bd.layout(self.rows, self.cols, nb, nt)
        self.nb, self.nt, self.nc = nb, nt, lay["nc"]
        self.T, self.S = self.rows * self.cols, (self.rows - 1) * self.cols
        self.lay = lay
        ext = np.zeros(Bd.CF_TABLE + table.size, np.int32)
        ext[:cfg.size] = cfg
        ext[Bd.CF_ROWS], ext[Bd.CF_COLS] = self.rows, self.cols
        ext[Bd.CF_ADV] = int(self.options["advanced"])
        ext[Bd.CF_NB], ext[Bd.CF_NT] = nb, nt
        self.npr = 5 if self.options["advanced"] else self.num_players
        ext[Bd.CF_NPR], ext[Bd.CF_NC], ext[Bd.CF_PILEMAX] = self.npr, lay["nc"], lay["pilemax"]
        for k, name in ((Bd.CF_O_PILE, "pile"), (Bd.CF_O_CELL, "cell"),
                        (Bd.CF_O_SJOIN, "sjoin"), (Bd.CF_O_PARENT, "parent"),
                        (Bd.CF_O_FRONT, "front"), (Bd.CF_O_CATS, "cats"),
                        (Bd.CF_O_COPEN, "copen"), (Bd.CF_O_NBC, "nbc"),
                        (Bd.CF_O_WALLNB, "wallnb"), (Bd.CF_O_OPENNB, "opennb"),
                        (Bd.CF_O_SLOT, "slot"), (Bd.CF_O_SLOTOK, "slotok"),
                        (Bd.CF_O_OBSC, "obsc"), (Bd.CF_O_DISC, "disc"), (Bd.CF_SIZE, "size"),
                        (Bd.CF_O_FLIST, "flist"), (Bd.CF_O_FPOS, "fpos")):
            ext[k] = lay[name]
        ext[Bd.CF_TABLE:] = table
        self.num_actions = R.num_actions(self.rows, self.cols)
        self.obs_size = R.obs_size(self.rows, self.cols, self.num_players, nt)
        ext[Bd.CF_OBS] = self.obs_size
        self.state_size = lay["size"]
        self.B = self.T + self.S
        return ext

    def obs_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        n, T, S = self.num_players, self.T, self.S
        lo, hi = [], []

        def add(low: int, high: int, k: int = 1) -> None:
            lo.extend([low] * k)
            hi.extend([high] * k)

        add(0, 4, T)
        add(0, 15, T)
        add(0, 9, 4 * T)
        add(0, 6, T)
        add(0, 4, T)
        add(0, 7, S)
        for _ in range(self.nt):
            add(0, 1)
            add(0, self.rows - 2)
            add(0, self.cols - 1)
            add(0, 9, 3)
        for _ in range(3):
            add(0, 2)
            add(0, 1, 4)
            add(0, 9, 4)
        for _ in range(5):
            add(0, 1, 5)
            add(0, 9, 4)
        add(0, 9, 3)
        add(0, Bd.CATS_EACH, n)
        add(0, Bd.HANDMAX, n)
        add(0, self.lay["pilemax"])
        add(0, len(PHASES) - 1)
        add(-1, n - 1)
        add(0, 1)
        add(-1, Bd.HANDMAX - 1)
        add(-1, 4)
        add(-1, self.rows - 1)
        add(-1, self.cols - 1)
        add(-1, self.rows - 1)
        add(-1, self.cols - 1)
        add(0, 1)
        add(0, n - 1)
        return np.asarray(lo), np.asarray(hi)

    # --- views -----------------------------------------------------------------------------
    def arr(self, state: np.ndarray, name: str, size: int) -> np.ndarray:
        o = self.lay[name]
        return state[o:o + size]

    def cell_name(self, i: int) -> str:
        return f"r{i // self.cols}c{i % self.cols}"

    def card_name(self, cid: int) -> str:
        return "princess" if cid == self.nc else self.card_names[cid]

    def card_id(self, name: Any) -> int:
        if not isinstance(name, str):
            raise StateDictError(f"a card is named by a string, got {name!r}")
        if name == "princess":
            return self.nc
        if name not in self.card_names:
            raise StateDictError(f"unknown card {name!r}")
        return self.card_names.index(name)

    def hand(self, state: np.ndarray, q: int) -> list[int]:
        m = int(state[Bd.S_HANDN + q])
        return [int(x) for x in state[Bd.S_HAND + q * Bd.HANDMAX:][:m]]

    def pile(self, state: np.ndarray) -> list[int]:
        return [int(x) for x in self.arr(state, "pile", int(state[Bd.S_PN]))]

    # --- state dict ------------------------------------------------------------------------
    def fields_to_dict(self, state: np.ndarray, observer: int | None) -> dict[str, Any]:
        n, C = self.num_players, self.cols
        cells = self.arr(state, "cell", self.T)
        joins = self.arr(state, "sjoin", self.T)
        slots = self.arr(state, "slot", self.S)
        table: list[list[Any]] = []
        for r in range(self.rows):
            row: list[Any] = []
            for c in range(C):
                v = int(cells[r * C + c])
                if v > 0:
                    row.append({"card": self.card_name((v - 1) // 2), "rot": (v - 1) % 2})
                elif v < 0:
                    j = int(joins[r * C + c])
                    row.append({"sleeping_cat": "princess" if v == -6 else -v - 1,
                                "joined": [j // C, j % C]})
                else:
                    row.append(None)
            table.append(row)
        slot_rows: list[list[Any]] = []
        for r in range(self.rows - 1):
            row = []
            for c in range(C):
                v = int(slots[r * C + c])
                if v == 0:
                    row.append(None)
                elif v <= Bd.MAX_PLAYERS:
                    row.append({"cat": v - 1})
                elif v == Bd.SLOT_PRINCESS:
                    row.append({"cat": "princess"})
                else:
                    row.append({"toy": self.card_name(self.nb + 5 + v - Bd.SLOT_TOY)})
            slot_rows.append(row)
        hands: list[list[Any]] = []
        for q in range(n):
            h = [self.card_name(c) for c in self.hand(state, q)]
            hands.append(h if observer is None or observer == q else [None] * len(h))
        pile = [self.card_name(c) for c in reversed(self.pile(state))]
        if observer is not None:
            pile = [None] * len(pile)

        def cell_or_none(i: int) -> list[int] | None:
            return None if i < 0 else [i // C, i % C]

        sel = int(state[Bd.S_SEL])
        toy = int(state[Bd.S_TOY])
        return {
            "table": table, "slots": slot_rows, "hands": hands,
            "supplies": [int(state[Bd.S_SUPPLY + q]) for q in range(n)],
            "draw_pile": pile,
            "pile_segments": [int(state[Bd.S_SEGB + j])
                              for j in range(int(state[Bd.S_NSEG]) + 1)],
            "discarded": [self.card_name(int(c)) for c in
                          self.arr(state, "disc", int(state[Bd.S_DISCN]))],
            "end_triggered": bool(state[Bd.S_ENDTRIG]),
            "first_player": int(state[Bd.S_FIRST]),
            "start_cards_laid": int(state[Bd.S_STARTN]),
            "start_cards_used": [self.card_names[self.nb + k] for k in range(5)
                                 if state[Bd.S_STARTUSED] & (1 << k)],
            "start_row": [int(state[Bd.S_STARTW]), int(state[Bd.S_STARTE])],
            "selected_hand": None if sel < 0 else sel,
            "selected_start": None if state[Bd.S_SELSTART] < 0 else
            self.card_names[self.nb + int(state[Bd.S_SELSTART])],
            "selected_cell": cell_or_none(int(state[Bd.S_SELCELL])),
            "played_cell": cell_or_none(int(state[Bd.S_PLAYED])),
            "relaxed": bool(state[Bd.S_RELAX]),
            "drawn_toy": None if toy < 0 else self.card_name(toy),
        }

    def fields_from_dict(self, state: np.ndarray, d: Mapping[str, Any]) -> None:
        n, C, T, S = self.num_players, self.cols, self.T, self.S
        for k in range(Bd.S_FIRST, Bd.S_DYN):
            state[k] = 0
        state[Bd.S_HAND:Bd.S_HAND + Bd.MAX_PLAYERS * Bd.HANDMAX] = -1
        cells = self.arr(state, "cell", T)
        joins = self.arr(state, "sjoin", T)
        slots = self.arr(state, "slot", S)
        table = d["table"]
        if not isinstance(table, list) or len(table) != self.rows or \
                any(not isinstance(r, list) or len(r) != C for r in table):
            raise StateDictError(f"table must be {self.rows} x {C}")
        joins[:] = -1
        for r, row in enumerate(table):
            for c, x in enumerate(row):
                i = r * C + c
                if x is None:
                    continue
                if isinstance(x, Mapping) and "card" in x:
                    x = _record(x, ("card", "rot"), "table cell")
                    cid = self.card_id(x["card"])
                    rot = _int(x["rot"], 0, 1, "rot")
                    if cid >= self.nc:
                        raise StateDictError("a Princess cannot lie in a cell as a card")
                    cells[i] = 1 + 2 * cid + rot
                else:
                    x = _record(x, ("sleeping_cat", "joined"), "table cell (card or cat)")
                    o = x["sleeping_cat"]
                    o = Bd.PRINCESS_OWNER if _is(o, "princess") else _int(o, 0, n - 1, "owner")
                    jr, jc = _seq(x["joined"], "joined", 2)
                    j = _int(jr, 0, self.rows - 1, "joined") * C + _int(jc, 0, C - 1, "joined")
                    if abs(jr - r) + abs(jc - c) != 1:
                        raise StateDictError("a sleeping cat joins a neighbouring card")
                    cells[i] = -(o + 1)
                    joins[i] = j
        for i in range(T):
            if joins[i] >= 0 and cells[joins[i]] <= 0:
                raise StateDictError("a sleeping cat must join a card")
        srows = d["slots"]
        if not isinstance(srows, list) or len(srows) != self.rows - 1 or \
                any(not isinstance(r, list) or len(r) != C for r in srows):
            raise StateDictError(f"slots must be {self.rows - 1} x {C}")
        for r, row in enumerate(srows):
            for c, x in enumerate(row):
                if x is None:
                    continue
                if isinstance(x, Mapping) and "cat" in x:
                    x = _record(x, ("cat",), "slot")
                    v = Bd.SLOT_PRINCESS if _is(x["cat"], "princess") else \
                        1 + _int(x["cat"], 0, n - 1, "cat")
                else:
                    x = _record(x, ("toy",), "slot (cat or toy)")
                    cid = self.card_id(x["toy"])
                    if not self.nb + 5 <= cid < self.nc:
                        raise StateDictError("only special toy cards lie on slots")
                    v = Bd.SLOT_TOY + cid - self.nb - 5
                slots[r * C + c] = v
        hands = d["hands"]
        if not isinstance(hands, list) or len(hands) != n:
            raise StateDictError(f"hands must have {n} entries")
        for q, h in enumerate(hands):
            if not isinstance(h, list) or len(h) > Bd.HANDMAX:
                raise StateDictError("a hand holds at most 3 cards")
            for k, name in enumerate(h):
                state[Bd.S_HAND + q * Bd.HANDMAX + k] = self.card_id(name)
            state[Bd.S_HANDN + q] = len(h)
        sup = d["supplies"]
        if not isinstance(sup, list) or len(sup) != n:
            raise StateDictError(f"supplies must have {n} entries")
        for q, v in enumerate(sup):
            state[Bd.S_SUPPLY + q] = _int(v, 0, Bd.CATS_EACH, "supply")
        pile = d["draw_pile"]
        if not isinstance(pile, list) or len(pile) > self.lay["pilemax"]:
            raise StateDictError("bad draw_pile")
        po = self.lay["pile"]
        state[po:po + self.lay["pilemax"]] = 0
        for k, name in enumerate(reversed(pile)):
            state[po + k] = self.card_id(name)
        state[Bd.S_PN] = len(pile)
        segs = d["pile_segments"]
        if not isinstance(segs, list) or not 2 <= len(segs) <= n + 1:
            raise StateDictError("bad pile_segments")
        state[Bd.S_NSEG] = len(segs) - 1
        for j, v in enumerate(segs):
            state[Bd.S_SEGB + j] = _int(v, 0, self.lay["pilemax"], "pile_segments")
        disc = d["discarded"]
        if not isinstance(disc, list) or len(disc) > self.nc + 5:
            raise StateDictError("bad discarded")
        for k, name in enumerate(disc):
            state[self.lay["disc"] + k] = self.card_id(name)
        state[Bd.S_DISCN] = len(disc)
        state[Bd.S_ENDTRIG] = int(as_bool(d["end_triggered"], "end_triggered"))
        state[Bd.S_FIRST] = _int(d["first_player"], 0, n - 1, "first_player")
        state[Bd.S_STARTN] = _int(d["start_cards_laid"], 0, n, "start_cards_laid")
        used = 0
        for name in _seq(d["start_cards_used"], "start_cards_used", max_len=5):
            k = self.card_id(name) - self.nb
            if not 0 <= k < 5:
                raise StateDictError("start_cards_used lists start cards")
            used |= 1 << k
        state[Bd.S_STARTUSED] = used
        w, e = _seq(d["start_row"], "start_row", 2)
        state[Bd.S_STARTW] = _int(w, 0, C - 1, "start_row")
        state[Bd.S_STARTE] = _int(e, 0, C - 1, "start_row")
        sel = d["selected_hand"]
        state[Bd.S_SEL] = -1 if sel is None else _int(sel, 0, Bd.HANDMAX - 1, "selected_hand")
        ss = d["selected_start"]
        state[Bd.S_SELSTART] = -1 if ss is None else self.card_id(ss) - self.nb
        if not -1 <= state[Bd.S_SELSTART] < 5:
            raise StateDictError(f"selected_start must be a start card, got {ss!r}")

        def cell(x: Any) -> int:
            if x is None:
                return -1
            x = _seq(x, "cell", 2)
            return _int(x[0], 0, self.rows - 1, "cell") * C + _int(x[1], 0, C - 1, "cell")

        state[Bd.S_SELCELL] = cell(d["selected_cell"])
        state[Bd.S_PLAYED] = cell(d["played_cell"])
        state[Bd.S_RELAX] = int(as_bool(d["relaxed"], "relaxed"))
        toy = d["drawn_toy"]
        state[Bd.S_TOY] = -1 if toy is None else self.card_id(toy)
        Bd.rebuild(state, self.cfg)

    # --- consistency -----------------------------------------------------------------------
    def check_state(self, state: np.ndarray) -> None:
        n, T, S, nb, nc = self.num_players, self.T, self.S, self.nb, self.nc
        phase, cur = int(state[PHASE]), int(state[CUR])
        _require(0 <= phase < len(PHASES), "phase in range")
        _require(bool(state[DONE]) == (PHASES[phase] == "end"), "phase 'end' iff game over")
        _require(int(state[DONE]) != DONE_TRUNCATED, "If It Fits is never cut off (truncated)")
        _require((cur == -1) if state[DONE] else (0 <= cur < n), "current player")
        cells = self.arr(state, "cell", T)
        slots = self.arr(state, "slot", S)
        seen = np.zeros(nc, np.int64)
        princesses = 0
        for v in cells:
            if v > 0:
                _require((v - 1) // 2 < nc, "card id in range")
                seen[(v - 1) // 2] += 1
            elif v == -6:
                princesses += 1
            else:
                _require(v >= -n, "sleeping cat owner in range")
        for v in slots:
            _require(0 <= v <= Bd.SLOT_TOY + self.nt - 1, "slot code in range")
            _require(not 1 <= v <= Bd.MAX_PLAYERS or v <= n, "slot cat owner in range")
            if v >= Bd.SLOT_TOY:
                seen[nb + 5 + v - Bd.SLOT_TOY] += 1
            princesses += int(v == Bd.SLOT_PRINCESS)
        extra = [*self.pile(state), *[int(c) for c in
                                       self.arr(state, "disc", int(state[Bd.S_DISCN]))]]
        for q in range(n):
            _require(0 <= state[Bd.S_HANDN + q] <= Bd.HANDMAX, "hand size")
            extra += self.hand(state, q)
        if state[Bd.S_TOY] >= 0:
            extra.append(int(state[Bd.S_TOY]))
        for c in extra:
            _require(0 <= c <= nc, "card id in range")
            if c == nc:
                princesses += 1
            else:
                seen[c] += 1
        _require(bool((seen[:nb] == 1).all()), "every box card exactly once")
        _require(bool((seen[nb + 5:] == 1).all()), "every special toy card exactly once")
        _require(bool((seen[nb:nb + 5] <= 1).all()), "start cards at most once")
        _require(princesses == self.npr, "Princesses conserved")
        for q in range(n):
            for c in self.hand(state, q):
                _require(not nb <= c < nc, "only box cards and Princesses in hands")
        for c in self.pile(state):
            _require(not nb <= c < nb + 5, "no start card in the pile")
        used = int(state[Bd.S_STARTUSED])
        for k in range(5):
            _require(seen[nb + k] == (used >> k) & 1, "start cards used are on the table")
        _require(bin(used).count("1") == state[Bd.S_STARTN], "start cards laid")
        for q in range(n):
            on = int((slots == q + 1).sum() + (cells == -(q + 1)).sum())
            _require(on + state[Bd.S_SUPPLY + q] == Bd.CATS_EACH, f"seat {q}: 5 cats")
            locs = sorted(int(x) for x in state[Bd.S_CATLOC + q * 5:Bd.S_CATLOC + q * 5 + 5])
            want = sorted([-1] * int(state[Bd.S_SUPPLY + q]) +
                          [s for s in range(S) if slots[s] == q + 1] +
                          [S + i for i in range(T) if cells[i] == -(q + 1)])
            _require(locs == want, f"seat {q}: cat locations")
        for q in range(n, Bd.MAX_PLAYERS):
            _require(state[Bd.S_SUPPLY + q] == 0 and state[Bd.S_HANDN + q] == 0,
                     "unused seats empty")
        # derived structures agree with a rebuild from the table
        ref = state.copy()
        Bd.rebuild(ref, self.cfg)
        for name, size in (("copen", T), ("nbc", T), ("wallnb", T), ("opennb", T),
                           ("slotok", S), ("obsc", self.lay["disc"] - self.lay["obsc"])):
            _require(np.array_equal(self.arr(state, name, size), self.arr(ref, name, size)),
                     f"derived {name} matches the table")
        slotok, copen = self.arr(state, "slotok", S), self.arr(state, "copen", T)
        _require(bool((slotok[slots != 0] == 1).all()),
                 "cats and toy cards lie only on cat slots (two joined open sides)")
        joins = self.arr(state, "sjoin", T)
        for i in np.flatnonzero(cells < 0).tolist():
            j = int(joins[i])
            _require(any(Bd.neighbour(self.cfg, j, d) == i and copen[j] >> d & 1
                         for d in range(4)),
                     "a sleeping cat lies at an open side of the card it joins")
        _require(state[Bd.S_FRONTN] == ref[Bd.S_FRONTN], "frontier count")
        fl, fp, m = self.lay["flist"], self.lay["fpos"], int(state[Bd.S_FRONTN])
        front = sorted(int(x) for x in state[fl:fl + m])
        _require(front == sorted(int(x) for x in ref[fl:fl + m]), "frontier cells")
        _require(all(state[fp + c] >= 0 and state[fl + state[fp + c]] == c for c in front) and
                 int((state[fp:fp + T] >= 0).sum()) == m, "frontier positions")
        a, b = state.copy(), ref
        for i in range(T):
            if cells[i] == 0:
                continue
            ra, rb = Bd.find(a, self.cfg, i), Bd.find(b, self.cfg, i)
            fa, fb = self.lay["front"], self.lay["cats"]
            _require(a[fa + ra] == b[fa + rb], "box open-side counter")
            _require(np.array_equal(a[fb + ra * 6:fb + ra * 6 + 6],
                                    b[fb + rb * 6:fb + rb * 6 + 6]), "box cat counters")
        ph = PHASES[phase]
        if ph.startswith("start"):
            _require(state[Bd.S_STARTN] < n, "start phase while start cards remain")
        if ph in ("cell", "rotation", "princess"):
            sel = int(state[Bd.S_SEL])
            _require(0 <= sel < state[Bd.S_HANDN + cur], "selected hand position")
            is_pr = self.hand(state, cur)[sel] == nc
            _require(is_pr == (ph == "princess"), "selected card matches the phase")
        if ph in ("toy_slot", "toy_cell"):
            _require(nb + 5 <= state[Bd.S_TOY] < nc, "a drawn toy card waits")
        else:
            _require(state[Bd.S_TOY] == -1, "no toy card waiting")
        self._check_turn(state, ph, cur, cells)

    def _check_turn(self, state: np.ndarray, ph: str, cur: int, cells: np.ndarray) -> None:
        """The pile segments, the start row and the fields of the turn in progress: what the
        kernels read in the current phase must be there (positions may be set up freely
        otherwise)."""
        n, T, C, nb = self.num_players, self.T, self.cols, self.nb
        adv = bool(self.options["advanced"])
        pn = int(state[Bd.S_PN])
        hands = [int(state[Bd.S_HANDN + q]) for q in range(n)]
        supply = [int(state[Bd.S_SUPPLY + q]) for q in range(n)]
        sel, selcell = int(state[Bd.S_SEL]), int(state[Bd.S_SELCELL])
        played, selstart = int(state[Bd.S_PLAYED]), int(state[Bd.S_SELSTART])
        relax, endtrig = int(state[Bd.S_RELAX]), int(state[Bd.S_ENDTRIG])
        startn, used = int(state[Bd.S_STARTN]), int(state[Bd.S_STARTUSED])
        _require(relax in (0, 1) and endtrig in (0, 1), "flags are 0/1")
        _require(adv or relax == 0, "the basic game is never relaxed")
        _require(-1 <= sel < Bd.HANDMAX and -1 <= selcell < T and -1 <= played < T and
                 -1 <= selstart < 5, "selections in range")
        for q in range(Bd.MAX_PLAYERS):
            h = hands[q] if q < n else 0
            _require(bool((state[Bd.S_HAND + q * Bd.HANDMAX + h:
                                 Bd.S_HAND + (q + 1) * Bd.HANDMAX] == -1).all()),
                     "hand slots beyond the hand are empty")
        nseg = int(state[Bd.S_NSEG])
        segb = [int(state[Bd.S_SEGB + j]) for j in range(nseg + 1)]
        _require(1 <= nseg <= n and segb[0] == 0 and segb == sorted(segb) and segb[-1] >= pn
                 and not state[Bd.S_SEGB + nseg + 1:Bd.S_DYN].any(),
                 "pile segments: 0, then ascending bounds up to at least the pile size")
        if ph == "end":
            return
        if not endtrig:  # a waiting seat draws on its turn: its hand needs room
            _require(all(h <= Bd.HANDMAX - 1 for q, h in enumerate(hands) if q != cur),
                     "at most two cards in a waiting hand before the end is triggered")
        if ph.startswith("start"):
            row = self.rows // 2
            w, e = int(state[Bd.S_STARTW]), int(state[Bd.S_STARTE])
            starts = [i for i in range(T) if cells[i] != 0]
            _require(all(cells[i] > 0 and nb <= (cells[i] - 1) // 2 < nb + 5 for i in starts)
                     and not self.arr(state, "slot", self.S).any(),
                     "only start cards on the table before the first turn")
            want = list(range(row * C + w, row * C + e + 1)) if startn else []
            _require(starts == want and (startn or w == e == C // 2),
                     "the start cards lie side by side in the middle row, from start_row[0] "
                     "to start_row[1] (the centre column while there is none)")
            _require(hands[cur] <= Bd.HANDMAX - 1, "at most two cards before the first turn")
            _require((selstart >= 0) == (ph != "start_card") and
                     (selstart < 0 or not used >> selstart & 1),
                     "a start card not yet laid is selected after start_card")
            if ph == "start_end":
                _require(startn >= 1, "the first start card goes to the centre")
            if ph == "start_rotation":
                ends = [R.start_end_cell(state, self.cfg, k) for k in (0, 1)] \
                    if startn else [row * C + C // 2]
                _require(selcell in ends and selcell >= 0,
                         "the start card goes to the centre / an end of the start row")
            return
        if ph in ("turn", "sleep_cell", "sleep_dir"):
            _require(pn >= 1 and hands[cur] <= Bd.HANDMAX - 1,
                     "draw or sleep: a card to draw, room in the hand")
        if ph == "cat" and not endtrig:
            _require(hands[cur] <= Bd.HANDMAX - 1, "at most two cards left after playing one")
        if ph == "pass":
            _require(hands[cur] == 0, "pass: an empty hand")
        if ph in ("sleep_cell", "sleep_dir"):
            _require(supply[cur] >= 1, "a cat to lay to sleep")
        if ph == "sleep_dir":
            _require(selcell >= 0 and cells[selcell] == 0 and
                     R.sleep_cell_ok(state.copy(), self.cfg, cur, selcell),
                     "the sleeping cat's cell is chosen")
        if ph == "rotation":
            _require(selcell >= 0 and cells[selcell] == 0 and
                     state[self.lay["nbc"] + selcell] > 0, "the card's cell is chosen")
        if ph == "cat":
            _require(played >= 0 and cells[played] > 0 and supply[cur] >= 1,
                     "a card was played this turn and a cat is left")
        if ph in ("cell", "rotation"):
            fit = bool(R.any_fit(state.copy(), self.cfg, self.hand(state, cur)[sel]))
            _require(relax == int(adv and not fit), "relaxed iff advanced and the card fits "
                     "nowhere")

    # --- text ------------------------------------------------------------------------------
    def action_to_str(self, action: int) -> str:
        T, B = self.T, self.B
        if action < T:
            return f"cell {self.cell_name(action)}"
        if action < B:
            s = action - T
            return f"slot {self.cell_name(s)}/{self.cell_name(s + self.cols)}"
        a = action - B
        if a < R.A_ROT:
            return f"hand {a}"
        if a < R.A_DIR:
            return f"rotate {180 * (a - R.A_ROT)}"
        if a < R.A_START:
            return f"join {DIRS[a - R.A_DIR]}"
        if a < R.A_END:
            return f"start card {self.card_names[self.nb + a - R.A_START]}"
        if a < R.A_DRAW:
            return f"start row {('west', 'east')[a - R.A_END]}"
        return ("draw", "sleeping cat", "skip", "pass")[a - R.A_DRAW]

    def render(self, state: np.ndarray, observer: int | None = None) -> str:
        return _render.render(self, state)

    # --- determinization -------------------------------------------------------------------
    def resample(self, state: np.ndarray, observer: int,
                 rng: np.random.Generator) -> np.ndarray:
        """Redraw the other hands and the pile order: the box cards in the pile and in the
        other hands are dealt anew over the same places, then every pile segment (the basic
        game's Princess piles; the whole pile when advanced) is shuffled in itself. Kept: the
        number of Princesses each other seat holds, the number per segment, and a card being
        placed right now (its hand position was chosen). The result depends only on what
        ``observer`` knows and on ``rng``."""
        out = state.copy()
        n, nb = self.num_players, self.nb
        po = self.lay["pile"]
        pn = int(out[Bd.S_PN])
        segments = [(int(out[Bd.S_SEGB + j]), min(int(out[Bd.S_SEGB + j + 1]), pn))
                    for j in range(int(out[Bd.S_NSEG]))]
        for a, b in segments:  # canonical order first: where a Princess lies is unknown
            out[po + a:po + b] = np.sort(out[po + a:po + b])
        places = [po + k for k in range(pn) if out[po + k] < nb]
        cur = int(out[CUR])
        keep = -1
        if cur >= 0 and PHASES[int(out[PHASE])] in ("cell", "rotation"):
            keep = Bd.S_HAND + cur * Bd.HANDMAX + int(out[Bd.S_SEL])
        for q in range(n):
            if q == observer:
                continue
            for k in range(int(out[Bd.S_HANDN + q])):
                x = Bd.S_HAND + q * Bd.HANDMAX + k
                if out[x] < nb and x != keep:
                    places.append(x)
        vals = np.sort(out[places])  # sorted: the draw depends on rng alone, not the deal
        out[places] = rng.permutation(vals)
        for a, b in segments:
            if b > a:
                out[po + a:po + b] = rng.permutation(out[po + a:po + b])
        return out


def _is(x: Any, name: str) -> bool:
    return isinstance(x, str) and x == name


def boxes(game: IfItFitsGame, state: np.ndarray) -> list[dict[str, Any]]:
    """The engine's boxes (from its union-find and counters): per box its cells (sorted), the
    closed flag, toy counts, sprayers, value and cats (per seat [awake, sleeping]; Princesses).
    Used by tests and tools; not on the hot path."""
    st = state.copy()
    T, C, S = game.T, game.cols, game.S
    cells = game.arr(st, "cell", T)
    slots = game.arr(st, "slot", S)
    out: dict[int, dict[str, Any]] = {}
    for i in range(T):
        v = int(cells[i])
        if v == 0:
            continue
        r = Bd.find(st, game.cfg, i)
        b = out.setdefault(r, {"cells": [], "toys": [0, 0, 0], "sprayers": 0,
                               "cats": {q: [0, 0] for q in range(game.num_players)},
                               "princesses": 0,
                               "closed": bool(st[game.lay["front"] + r] == 0)})
        b["cells"].append(i)
        if v > 0:
            tb = Bd.CF_TABLE + ((v - 1) // 2) * Bd.FIELDS
            for k in range(3):
                b["toys"][k] += int(game.cfg[tb + Bd.F_BALL + k])
            b["sprayers"] += int(game.cfg[tb + Bd.F_SPRAY])
        elif v == -6:
            b["princesses"] += 1
        else:
            b["cats"][-v - 1][1] += 1
    for s in range(S):
        v = int(slots[s])
        if v == 0:
            continue
        b = out[Bd.find(st, game.cfg, s)]
        if v <= Bd.MAX_PLAYERS:
            b["cats"][v - 1][0] += 1
        elif v == Bd.SLOT_PRINCESS:
            b["princesses"] += 1
        else:
            tb = Bd.CF_TABLE + (game.nb + 5 + v - Bd.SLOT_TOY) * Bd.FIELDS
            for k in range(3):
                b["toys"][k] += int(game.cfg[tb + Bd.F_BALL + k])
    res = []
    for b in out.values():
        b["cells"] = [(i // C, i % C) for i in sorted(b["cells"])]
        b["value"] = (max(b["toys"]) - b["sprayers"]) * (2 if b["closed"] else 1)
        res.append(b)
    return sorted(res, key=lambda b: b["cells"][0])
