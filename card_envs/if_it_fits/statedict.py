"""If It Fits state-dict codec, consistency checks and determinization (the kernel
:func:`determinize` and its Python face ``resample``; schema: ``env.py``), dispatched to by
:class:`~card_envs.core.game.Game`; ``g`` is an If It Fits game (``card_envs.if_it_fits.game``:
its sizes, offsets ``lay`` and card names)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from card_envs.core.checks import as_bool, requirer, short_repr
from card_envs.core.checks import int_in as _int
from card_envs.core.checks import seq as _seq
from card_envs.core.errors import StateDictError
from card_envs.core.game import Game
from card_envs.core.jit import njit
from card_envs.core.kernels import (
    C_PLAYERS,
    CUR,
    DONE,
    DONE_TRUNCATED,
    PHASE,
    draw,
    draw_shuffle,
    rng_seed,
)
from card_envs.if_it_fits import layout as L
from card_envs.if_it_fits.parts.arrays import read_table
from card_envs.if_it_fits.parts.board import rebuild
from card_envs.if_it_fits.queries import (
    any_fit,
    find,
    nbr_count,
    neighbour,
    sleep_cell_ok,
    start_end_cell,
)

_require = requirer("if_it_fits")


def fields_to_dict(g: Game, state: np.ndarray, observer: int | None) -> dict[str, Any]:
    """The game's state-dict fields; ``observer`` set: what that seat sees (other hands and
    the pile as nulls)."""
    n, C = g.num_players, g.cols
    cells = g.arr(state, "cell", g.T)
    joins = g.arr(state, "sjoin", g.T)
    slots = g.arr(state, "slot", g.S)
    table: list[list[Any]] = []
    for r in range(g.rows):
        row: list[Any] = []
        for c in range(C):
            v = int(cells[r * C + c])
            if v > 0:
                row.append({"card": g.card_name((v - 1) // 2), "rot": (v - 1) % 2})
            elif v < 0:
                j = int(joins[r * C + c])
                row.append({"sleeping_cat": "princess" if v == L.CELL_PRINCESS else -v - 1,
                            "joined": [j // C, j % C]})
            else:
                row.append(None)
        table.append(row)
    slot_rows: list[list[Any]] = []
    for r in range(g.rows - 1):
        row = []
        for c in range(C):
            v = int(slots[r * C + c])
            if v == 0:
                row.append(None)
            elif v <= L.MAX_PLAYERS:
                row.append({"cat": v - 1})
            elif v == L.SLOT_PRINCESS:
                row.append({"cat": "princess"})
            else:
                row.append({"toy": g.card_name(g.nb + L.NUM_START + v - L.SLOT_TOY)})
        slot_rows.append(row)
    hands: list[list[Any]] = []
    for q in range(n):
        h = [g.card_name(c) for c in g.hand(state, q)]
        hands.append(h if observer is None or observer == q else [None] * len(h))
    pile = [g.card_name(c) for c in reversed(g.pile(state))]
    if observer is not None:
        pile = [None] * len(pile)

    def cell_or_none(i: int) -> list[int] | None:
        return None if i < 0 else [i // C, i % C]

    sel = int(state[L.S_SEL])
    toy = int(state[L.S_TOY])
    return {
        "table": table, "slots": slot_rows, "hands": hands,
        "supplies": [int(state[L.S_SUPPLY + q]) for q in range(n)],
        "draw_pile": pile,
        "pile_segments": [int(state[L.S_SEGB + j])
                          for j in range(int(state[L.S_NSEG]) + 1)],
        "discarded": [g.card_name(int(c)) for c in
                      g.arr(state, "disc", int(state[L.S_DISCN]))],
        "end_triggered": bool(state[L.S_ENDTRIG]),
        "first_player": int(state[L.S_FIRST]),
        "start_cards_laid": int(state[L.S_STARTN]),
        "start_cards_used": [g.card_names[g.nb + k] for k in range(L.NUM_START)
                             if state[L.S_STARTUSED] & (1 << k)],
        "start_row": [int(state[L.S_STARTW]), int(state[L.S_STARTE])],
        "selected_hand": None if sel < 0 else sel,
        "selected_start": None if state[L.S_SELSTART] < 0 else
        g.card_names[g.nb + int(state[L.S_SELSTART])],
        "selected_cell": cell_or_none(int(state[L.S_SELCELL])),
        "played_cell": cell_or_none(int(state[L.S_PLAYED])),
        "relaxed": bool(state[L.S_RELAX]),
        "drawn_toy": None if toy < 0 else g.card_name(toy),
    }


def fields_from_dict(g: Game, state: np.ndarray, d: Mapping[str, Any]) -> None:
    """Write the fields of ``d`` into ``state`` (validated entry by entry), then rebuild the
    derived arrays from the table."""
    n, C, T, S = g.num_players, g.cols, g.T, g.S
    for k in range(L.S_FIRST, L.S_DYN):
        state[k] = 0
    state[L.S_HAND:L.S_HAND + L.MAX_PLAYERS * L.HANDMAX] = -1
    cells = g.arr(state, "cell", T)
    joins = g.arr(state, "sjoin", T)
    slots = g.arr(state, "slot", S)
    read_table(d, g.rows, C, n, g.card_id, g.nb, g.nc, cells, joins, slots)
    hands = d["hands"]
    if not isinstance(hands, list) or len(hands) != n:
        raise StateDictError(f"hands must have {n} entries")
    for q, h in enumerate(hands):
        if not isinstance(h, list) or len(h) > L.HANDMAX:
            raise StateDictError("a hand holds at most 3 cards")
        for k, name in enumerate(h):
            state[L.S_HAND + q * L.HANDMAX + k] = g.card_id(name)
        state[L.S_HANDN + q] = len(h)
    sup = d["supplies"]
    if not isinstance(sup, list) or len(sup) != n:
        raise StateDictError(f"supplies must have {n} entries")
    for q, v in enumerate(sup):
        state[L.S_SUPPLY + q] = _int(v, 0, L.CATS_EACH, "supply")
    pile = d["draw_pile"]
    if not isinstance(pile, list) or len(pile) > g.lay["pilemax"]:
        raise StateDictError("bad draw_pile")
    po = g.lay["pile"]
    state[po:po + g.lay["pilemax"]] = 0
    for k, name in enumerate(reversed(pile)):
        state[po + k] = g.card_id(name)
    state[L.S_PN] = len(pile)
    segs = d["pile_segments"]
    if not isinstance(segs, list) or not 2 <= len(segs) <= n + 1:
        raise StateDictError("bad pile_segments")
    state[L.S_NSEG] = len(segs) - 1
    for j, v in enumerate(segs):
        state[L.S_SEGB + j] = _int(v, 0, g.lay["pilemax"], "pile_segments")
    disc = d["discarded"]
    if not isinstance(disc, list) or len(disc) > g.nc + L.NUM_PRINCESS:
        raise StateDictError("bad discarded")
    for k, name in enumerate(disc):
        state[g.lay["disc"] + k] = g.card_id(name)
    state[L.S_DISCN] = len(disc)
    state[L.S_ENDTRIG] = int(as_bool(d["end_triggered"], "end_triggered"))
    state[L.S_FIRST] = _int(d["first_player"], 0, n - 1, "first_player")
    state[L.S_STARTN] = _int(d["start_cards_laid"], 0, n, "start_cards_laid")
    used = 0
    for name in _seq(d["start_cards_used"], "start_cards_used", max_len=L.NUM_START):
        k = g.card_id(name) - g.nb
        if not 0 <= k < L.NUM_START:
            raise StateDictError("start_cards_used lists start cards")
        if used >> k & 1:
            raise StateDictError(f"start_cards_used lists {short_repr(name)} twice")
        used |= 1 << k
    state[L.S_STARTUSED] = used
    w, e = _seq(d["start_row"], "start_row", 2)
    state[L.S_STARTW] = _int(w, 0, C - 1, "start_row")
    state[L.S_STARTE] = _int(e, 0, C - 1, "start_row")
    sel = d["selected_hand"]
    state[L.S_SEL] = -1 if sel is None else _int(sel, 0, L.HANDMAX - 1, "selected_hand")
    ss = d["selected_start"]
    state[L.S_SELSTART] = -1 if ss is None else g.card_id(ss) - g.nb
    if not -1 <= state[L.S_SELSTART] < L.NUM_START:
        raise StateDictError(f"selected_start must be a start card, got {short_repr(ss)}")

    def cell(x: Any) -> int:
        if x is None:
            return -1
        x = _seq(x, "cell", 2)
        return _int(x[0], 0, g.rows - 1, "cell") * C + _int(x[1], 0, C - 1, "cell")

    state[L.S_SELCELL] = cell(d["selected_cell"])
    state[L.S_PLAYED] = cell(d["played_cell"])
    state[L.S_RELAX] = int(as_bool(d["relaxed"], "relaxed"))
    toy = d["drawn_toy"]
    state[L.S_TOY] = -1 if toy is None else g.card_id(toy)
    rebuild(state, g.cfg)


def check_state(g: Game, state: np.ndarray) -> None:
    """Raise StateDictError unless ``state`` is consistent: cards and cats conserved, codes
    in range, derived arrays equal to a rebuild, the turn's fields as the phase needs them."""
    n, T, S, nb, nc = g.num_players, g.T, g.S, g.nb, g.nc
    phase, cur = int(state[PHASE]), int(state[CUR])
    _require(0 <= phase < len(L.PHASES), "phase in range")
    _require(bool(state[DONE]) == (L.PHASES[phase] == "end"), "phase 'end' iff game over")
    _require(int(state[DONE]) != DONE_TRUNCATED, "If It Fits is never cut off (truncated)")
    _require((cur == -1) if state[DONE] else (0 <= cur < n), "current player")
    cells = g.arr(state, "cell", T)
    slots = g.arr(state, "slot", S)
    seen = np.zeros(nc, np.int64)
    princesses = 0
    for v in cells:
        if v > 0:
            _require((v - 1) // 2 < nc, "card id in range")
            seen[(v - 1) // 2] += 1
        elif v == L.CELL_PRINCESS:
            princesses += 1
        else:
            _require(v >= -n, "sleeping cat owner in range")
    for v in slots:
        _require(0 <= v <= L.SLOT_TOY + g.nt - 1, "slot code in range")
        _require(not 1 <= v <= L.MAX_PLAYERS or v <= n, "slot cat owner in range")
        if v >= L.SLOT_TOY:
            seen[nb + L.NUM_START + v - L.SLOT_TOY] += 1
        princesses += int(v == L.SLOT_PRINCESS)
    extra = [*g.pile(state), *[int(c) for c in
                                   g.arr(state, "disc", int(state[L.S_DISCN]))]]
    for q in range(n):
        _require(0 <= state[L.S_HANDN + q] <= L.HANDMAX, "hand size")
        extra += g.hand(state, q)
    if state[L.S_TOY] >= 0:
        extra.append(int(state[L.S_TOY]))
    for c in extra:
        _require(0 <= c <= nc, "card id in range")
        if c == nc:
            princesses += 1
        else:
            seen[c] += 1
    _require(bool((seen[:nb] == 1).all()), "every box card exactly once")
    _require(bool((seen[nb + L.NUM_START:] == 1).all()), "every special toy card exactly once")
    _require(bool((seen[nb:nb + L.NUM_START] <= 1).all()), "start cards at most once")
    _require(princesses == g.npr, "Princesses conserved")
    for q in range(n):
        for c in g.hand(state, q):
            _require(not nb <= c < nc, "only box cards and Princesses in hands")
    for c in g.pile(state):
        _require(not nb <= c < nb + L.NUM_START, "no start card in the pile")
    used = int(state[L.S_STARTUSED])
    for k in range(L.NUM_START):
        _require(seen[nb + k] == (used >> k) & 1, "start cards used are on the table")
    _require(bin(used).count("1") == state[L.S_STARTN], "start cards laid")
    for q in range(n):
        on = int((slots == q + 1).sum() + (cells == -(q + 1)).sum())
        _require(on + state[L.S_SUPPLY + q] == L.CATS_EACH, f"seat {q}: 5 cats")
        c0 = L.S_CATLOC + q * L.CATS_EACH
        locs = sorted(int(x) for x in state[c0:c0 + L.CATS_EACH])
        want = sorted([-1] * int(state[L.S_SUPPLY + q]) +
                      [s for s in range(S) if slots[s] == q + 1] +
                      [S + i for i in range(T) if cells[i] == -(q + 1)])
        _require(locs == want, f"seat {q}: cat locations")
    for q in range(n, L.MAX_PLAYERS):
        _require(state[L.S_SUPPLY + q] == 0 and state[L.S_HANDN + q] == 0,
                 "unused seats empty")
    # derived structures agree with a rebuild from the table
    ref = state.copy()
    rebuild(ref, g.cfg)
    for name, size in (("copen", T), ("nbr", T), ("obsc", g.lay["disc"] - g.lay["obsc"])):
        _require(np.array_equal(g.arr(state, name, size), g.arr(ref, name, size)),
                 f"derived {name} matches the table")
    copen = g.arr(state, "copen", T)
    _require(bool((copen[:S][slots != 0] & L.COPEN_SLOT).all()),
             "cats and toy cards lie only on cat slots (two joined open sides)")
    joins = g.arr(state, "sjoin", T)
    for i in np.flatnonzero(cells < 0).tolist():
        j = int(joins[i])
        _require(any(neighbour(g.cfg, j, d) == i and copen[j] >> d & 1
                     for d in range(4)),
                 "a sleeping cat lies at an open side of the card it joins")
    _require(state[L.S_FRONTN] == ref[L.S_FRONTN], "frontier count")
    fl, fp, m = g.lay["flist"], g.lay["fpos"], int(state[L.S_FRONTN])
    front = sorted(int(x) for x in state[fl:fl + m])
    _require(front == sorted(int(x) for x in ref[fl:fl + m]), "frontier cells")
    _require(all(state[fp + c] >= 0 and state[fl + state[fp + c]] == c for c in front) and
             int((state[fp:fp + T] >= 0).sum()) == m, "frontier positions")
    a, b = state.copy(), ref
    for i in range(T):
        if cells[i] == 0:
            continue
        ra, rb = find(a, g.cfg, i), find(b, g.cfg, i)
        fa, fb = g.lay["front"], g.lay["cats"]
        _require(a[fa + ra] == b[fa + rb], "box open-side counter")
        _require(a[fb + ra] == b[fb + rb], "box cat counters")
    ph = L.PHASES[phase]
    if ph.startswith("start"):
        _require(state[L.S_STARTN] < n, "start phase while start cards remain")
    if ph in ("cell", "rotation", "princess"):
        sel = int(state[L.S_SEL])
        _require(0 <= sel < state[L.S_HANDN + cur], "selected hand position")
        is_pr = g.hand(state, cur)[sel] == nc
        _require(is_pr == (ph == "princess"), "selected card matches the phase")
    if ph in ("toy_slot", "toy_cell"):
        _require(nb + L.NUM_START <= state[L.S_TOY] < nc, "a drawn toy card waits")
    else:
        _require(state[L.S_TOY] == -1, "no toy card waiting")
    _check_turn(g, state, ph, cur, cells)


def _check_turn(g: Game, state: np.ndarray, ph: str, cur: int,
                cells: np.ndarray) -> None:
    """The pile segments, the start row and the fields of the turn in progress: what the
    kernels read in the current phase must be there (positions may be set up freely
    otherwise)."""
    n, T, C, nb = g.num_players, g.T, g.cols, g.nb
    adv = bool(g.options["advanced"])
    pn = int(state[L.S_PN])
    hands = [int(state[L.S_HANDN + q]) for q in range(n)]
    supply = [int(state[L.S_SUPPLY + q]) for q in range(n)]
    sel, selcell = int(state[L.S_SEL]), int(state[L.S_SELCELL])
    played, selstart = int(state[L.S_PLAYED]), int(state[L.S_SELSTART])
    relax, endtrig = int(state[L.S_RELAX]), int(state[L.S_ENDTRIG])
    startn, used = int(state[L.S_STARTN]), int(state[L.S_STARTUSED])
    _require(relax in (0, 1) and endtrig in (0, 1), "flags are 0/1")
    _require(adv or relax == 0, "the basic game is never relaxed")
    _require(-1 <= sel < L.HANDMAX and -1 <= selcell < T and -1 <= played < T and
             -1 <= selstart < L.NUM_START, "selections in range")
    for q in range(L.MAX_PLAYERS):
        h = hands[q] if q < n else 0
        _require(bool((state[L.S_HAND + q * L.HANDMAX + h:
                             L.S_HAND + (q + 1) * L.HANDMAX] == -1).all()),
                 "hand slots beyond the hand are empty")
    nseg = int(state[L.S_NSEG])
    segb = [int(state[L.S_SEGB + j]) for j in range(nseg + 1)]
    _require(1 <= nseg <= n and segb[0] == 0 and segb == sorted(segb) and segb[-1] >= pn
             and not state[L.S_SEGB + nseg + 1:L.S_DYN].any(),
             "pile segments: 0, then ascending bounds up to at least the pile size")
    if ph == "end":
        return
    if not endtrig:  # a waiting seat draws on its turn: its hand needs room
        _require(all(h <= L.HANDMAX - 1 for q, h in enumerate(hands) if q != cur),
                 "at most two cards in a waiting hand before the end is triggered")
    if ph.startswith("start"):
        row = g.rows // 2
        w, e = int(state[L.S_STARTW]), int(state[L.S_STARTE])
        starts = [i for i in range(T) if cells[i] != 0]
        _require(all(cells[i] > 0 and nb <= (cells[i] - 1) // 2 < nb + L.NUM_START for i in starts)
                 and not g.arr(state, "slot", g.S).any(),
                 "only start cards on the table before the first turn")
        want = list(range(row * C + w, row * C + e + 1)) if startn else []
        _require(starts == want and (startn or w == e == C // 2),
                 "the start cards lie side by side in the middle row, from start_row[0] "
                 "to start_row[1] (the centre column while there is none)")
        _require(hands[cur] <= L.HANDMAX - 1, "at most two cards before the first turn")
        _require((selstart >= 0) == (ph != "start_card") and
                 (selstart < 0 or not used >> selstart & 1),
                 "a start card not yet laid is selected after start_card")
        if ph == "start_end":
            _require(startn >= 1, "the first start card goes to the centre")
        if ph == "start_rotation":
            ends = [start_end_cell(state, g.cfg, k) for k in (0, 1)] \
                if startn else [row * C + C // 2]
            _require(selcell in ends and selcell >= 0,
                     "the start card goes to the centre / an end of the start row")
        return
    if ph in ("turn", "sleep_cell", "sleep_dir"):
        _require(pn >= 1 and hands[cur] <= L.HANDMAX - 1,
                 "draw or sleep: a card to draw, room in the hand")
    if ph == "cat" and not endtrig:
        _require(hands[cur] <= L.HANDMAX - 1, "at most two cards left after playing one")
    if ph == "pass":
        _require(hands[cur] == 0, "pass: an empty hand")
    if ph in ("sleep_cell", "sleep_dir"):
        _require(supply[cur] >= 1, "a cat to lay to sleep")
    if ph == "sleep_dir":
        _require(selcell >= 0 and cells[selcell] == 0 and
                 sleep_cell_ok(state.copy(), g.cfg, cur, selcell),
                 "the sleeping cat's cell is chosen")
    if ph == "rotation":
        _require(selcell >= 0 and cells[selcell] == 0 and
                 nbr_count(state, g.cfg, selcell) > 0, "the card's cell is chosen")
    if ph == "cat":
        _require(played >= 0 and cells[played] > 0 and supply[cur] >= 1,
                 "a card was played this turn and a cat is left")
    if ph in ("cell", "rotation"):
        fit = bool(any_fit(state.copy(), g.cfg, g.hand(state, cur)[sel]))
        _require(relax == int(adv and not fit), "relaxed iff advanced and the card fits "
                 "nowhere")


@njit(cache=True)
def determinize(state: np.ndarray, cfg: np.ndarray, observer: int, out: np.ndarray,
                rng: np.ndarray) -> None:
    """Write into ``out`` a full state consistent with what ``observer`` knows, drawn from
    ``rng`` (a one-element uint64 array) alone, with ``out``'s RNG words seeded from it.

    The box cards the observer cannot see (all but those on the table, discarded, in its own
    hand and the card being placed) are listed in id order from those public fields and dealt
    uniformly over the other hands' box-card places and the pile's; in every pile segment the
    Princesses and special toy cards it holds take random places, the dealt box cards the
    rest. Kept as the numpy version kept them (``env.py``): the Princesses of each other hand
    (at their hand positions), the Princesses and special toy cards of each pile segment (as
    multisets), and the card being placed in phases cell / rotation; these are the only hidden
    entries read. The box cards in other hands and the pile, the order in a segment and the
    state's RNG are not, so states that differ only there give the same ``out``. ``state`` must
    be a valid If It Fits state of ``cfg``; ``out`` has its size."""
    n = min(cfg[C_PLAYERS], L.MAX_PLAYERS)
    nb, nc = cfg[L.CF_NB] & L.IDX, cfg[L.CF_NC]
    po, pilemax = cfg[L.CF_O_PILE] & L.IDX, cfg[L.CF_PILEMAX] & L.IDX
    for i in range(min(state.shape[0], out.shape[0])):
        out[i] = state[i]
    rng_seed(out, draw(rng))
    cur, ph = state[CUR], state[PHASE]
    keep = -1  # the card being placed: its hand position is public and it stays there
    if 0 <= cur < n and (ph == L.P_CELL or ph == L.P_ROT) and 0 <= state[L.S_SEL] < L.HANDMAX:
        keep = L.S_HAND + cur * L.HANDMAX + state[L.S_SEL]
    # scratch: [0, nb) known flags, compacted in place into the unknown box cards (the pool);
    # then a segment's special cards and its places
    work = np.zeros(nb + 2 * pilemax, np.int32)
    c0 = cfg[L.CF_O_CELL] & L.IDX
    for i in range((cfg[L.CF_ROWS] & L.IDX) * (cfg[L.CF_COLS] & L.IDX)):
        c = (state[c0 + i] - 1) >> 1
        if state[c0 + i] > 0 and c < nb:
            work[c] = 1
    d0 = cfg[L.CF_O_DISC] & L.IDX
    for k in range(min(state[L.S_DISCN], nc + L.NUM_PRINCESS)):
        c = state[d0 + k]
        if 0 <= c < nb:
            work[c] = 1
    for q in range(n):
        for k in range(min(state[L.S_HANDN + q], L.HANDMAX)):
            x = L.S_HAND + q * L.HANDMAX + k
            c = state[x]
            if (q == observer or x == keep) and 0 <= c < nb:
                work[c] = 1
    m = 0
    for c in range(nb):  # ascending, and m <= c: flag c is read before slot m is written
        if work[c] == 0:
            work[m] = c
            m += 1
    pool = work[:m]
    draw_shuffle(rng, pool, m)
    p = 0  # next pool card
    for q in range(n):  # other hands: a Princess stays, box cards come from the pool
        if q == observer:
            continue
        for k in range(min(state[L.S_HANDN + q], L.HANDMAX)):
            x = L.S_HAND + q * L.HANDMAX + k
            if x != keep and state[x] != nc and p < m:
                out[x] = pool[p]
                p += 1
    spec = work[nb:nb + pilemax]
    slots = work[nb + pilemax:]
    pn = min(max(state[L.S_PN], 0), pilemax)
    for j in range(min(state[L.S_NSEG], L.MAX_PLAYERS)):
        a = min(max(state[L.S_SEGB + j], 0), pn)
        b = min(max(state[L.S_SEGB + j + 1], a), pn)
        ns = 0  # the segment's Princesses and special toy cards, sorted
        for t in range(a, b):
            c = state[po + t]
            if c >= nb:
                i = ns
                while i > 0 and spec[i - 1] > c:
                    spec[i] = spec[i - 1]
                    i -= 1
                spec[i] = c
                ns += 1
        for t in range(b - a):
            slots[t] = t
            out[po + a + t] = -1
        draw_shuffle(rng, slots[:b - a], ns)  # their places: a random ordered choice
        for i in range(ns):
            out[po + a + slots[i]] = spec[i]
        for t in range(a, b):
            if out[po + t] < 0 and p < m:
                out[po + t] = pool[p]
                p += 1


def resample(g: Game, state: np.ndarray, observer: int,
             rng: np.random.Generator) -> np.ndarray:
    """Redraw the other hands and the pile order (the box cards the observer cannot see dealt
    anew over the same places, every pile segment shuffled in itself; Princess counts and the
    card being placed kept): :func:`determinize` seeded with 64 bits of ``rng``."""
    out = np.empty_like(state)
    seed = np.array([rng.integers(0, 2**64, dtype=np.uint64)])  # (faster than size=1)
    determinize(state, g.cfg, observer, out, seed)
    return out
