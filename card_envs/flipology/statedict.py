"""Flipology state-dict codec, consistency check and determinization (schema: ``env.py``);
``game`` is a ``FlipologyGame`` (sizes, deck, options)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from card_envs.core.checks import as_bool, one_of, record, requirer
from card_envs.core.checks import int_in as _int
from card_envs.core.errors import StateDictError
from card_envs.core.game import Game
from card_envs.core.kernels import CUR, DONE, PHASE
from card_envs.flipology import layout as L
from card_envs.flipology.parts.determinize import determinize
from card_envs.flipology.queries import animal, scores_face_down

_req = requirer("flipology")


def _list(x: Any, k: int | None, what: str) -> list:
    if not isinstance(x, list) or (k is not None and len(x) != k):
        raise StateDictError(f"{what} must be a list" + ("" if k is None else f" of {k}"))
    return x


def _cards(x: Any, nc: int, what: str) -> list[int]:
    """``x`` as a list of distinct card ids in ``0..nc-1`` (a card listed twice is refused,
    not merged)."""
    ids = [_int(c, 0, nc - 1, f"{what} card") for c in _list(x, None, what)]
    if len(set(ids)) != len(ids):
        twice = next(c for i, c in enumerate(ids) if c in ids[:i])
        raise StateDictError(f"{what} lists card {twice} twice")
    return ids


def _is(x: Any, name: str) -> bool:
    return isinstance(x, str) and x == name


def _knows(state: np.ndarray, c: int, seat: int | None) -> bool:
    return seat is None or bool(state[L.KNOW + c] >> seat & 1)


def _pos_list(g: Game, p: int) -> list[int] | None:
    if p < 0:
        return None
    s, i = divmod(int(p), g.seatpos)
    return [s, i // g.rowlen, i % g.rowlen]


def _pos_from(g: Game, x: Any, what: str) -> int:
    if x is None:
        return -1
    x = _list(x, 3, what)
    s = _int(x[0], 0, g.num_players - 1, what)
    lv = _int(x[1], 0, g.nlevels - 1, what)
    c = _int(x[2], 0, g.rowlen - 1, what)
    return s * g.seatpos + lv * g.rowlen + c


def fields_to_dict(g: Game, state: np.ndarray, obs: int | None) -> dict[str, Any]:
    """The game's state-dict fields (``obs``: only what that seat knows, else ``None``)."""
    n, nc = g.num_players, g.ncards
    rows, faces = [], []
    for s in range(n):
        rs, fs = [], []
        for lv in range(g.nlevels):
            rr, ff = [], []
            for c in range(g.rowlen):
                p = s * g.seatpos + lv * g.rowlen + c
                card = int(state[L.POS + p])
                rr.append("empty" if card < 0 else "null" if card == nc else
                          card if _knows(state, card, obs) else None)
                ff.append(bool(state[L.FACE + p]))
            rs.append(rr)
            fs.append(ff)
        rows.append(rs)
        faces.append(fs)
    hands = []
    for s in range(n):
        h = [int(state[L.HAND + s * L.HANDMAX + j]) for j in range(g.handn)]
        hands.append(["empty" if c < 0 else (c if obs is None or obs == s else None)
                      for c in h])
    m = int(state[L.DECKN])
    deck = [int(state[L.DECK + i]) for i in range(m - 1, -1, -1)]
    if obs is not None:
        deck = [None] * m
    disc = [c for c in range(nc) if state[L.DISC + c]]
    shown = [c for c in disc if _knows(state, c, obs)]
    discard = shown + [None] * (len(disc) - len(shown))
    picked = [[c, "up" if state[L.PICK + c] == L.PICKED_UP else "down"] for c in range(nc)
              if state[L.PICK + c]]
    known = []
    for s in range(n):
        ks = [c for c in range(nc) if state[L.KNOW + c] >> s & 1]
        vis = [c for c in ks if _knows(state, c, obs)]
        known.append(vis + [None] * (len(ks) - len(vis)))
    seq = [int(state[L.SEQ + c]) if _knows(state, c, obs) else None for c in range(nc)]
    returned = []
    for s in range(n):
        rs = [c for c in range(nc) if state[L.RET + c] >> s & 1]
        vis = [c for c in rs if obs is None or obs == s or _knows(state, c, obs)]
        returned.append(vis + [None] * (len(rs) - len(vis)))
    ef = None
    if state[L.EF_KIND] >= 0:
        ef = {"kind": L.KIND_NAMES[int(state[L.EF_KIND])], "copy": bool(state[L.EF_COPY]),
              "source": _pos_list(g, int(state[L.EF_SRC])), "step": int(state[L.EF_STEP]),
              "a": _pos_list(g, int(state[L.EF_A])), "b": _pos_list(g, int(state[L.EF_B])),
              "peeks": [_pos_list(g, int(state[L.EF_PEEK + j])) for j in range(L.SUN_PEEKS)]}
    return {
        "rows": rows, "face_up": faces, "hands": hands, "deck": deck, "discard": discard,
        "picked": picked, "known": known,
        "round": int(state[L.ROUND]), "turn": int(state[L.TURN]),
        "start_player": int(state[L.START]), "game_number": int(state[L.GAME]),
        "levels": int(state[L.LEVELS]), "setup_done": int(state[L.SETK]),
        "placed": int(state[L.PLACED]), "nulls_placed": int(state[L.NULLS]),
        "chain": int(state[L.CHAIN]),
        "regrow_used": [bool(state[L.REGROW + s]) for s in range(n)],
        "totals": [int(state[L.TOTAL + s]) for s in range(n)],
        "hermit_bonus": [int(state[L.BONUS + s]) for s in range(n)],
        "effect_stack": [] if ef is None else [ef],
        "draw_seq": seq, "draws": int(state[L.NDRAW]),
        "returned": returned,
        "return_time": [int(state[L.RETSEQ + s]) for s in range(n)],
        "hermit_scan": int(state[L.HSCAN]),
        "hermit_card": None if state[L.HCARD] < 0 else int(state[L.HCARD]),
    }


def fields_from_dict(g: Game, state: np.ndarray, d: Mapping[str, Any]) -> None:
    """Write the game's state-dict fields ``d`` into ``state`` (types and ranges checked)."""
    n, nc = g.num_players, g.ncards
    state[L.POS:L.POS + L.MAXPOS] = -1
    state[L.HAND:L.HAND + L.MAX_PLAYERS * L.HANDMAX] = -1
    rows = _list(d["rows"], n, "rows")
    faces = _list(d["face_up"], n, "face_up")
    for s in range(n):
        for lv in range(g.nlevels):
            rr = _list(_list(rows[s], g.nlevels, "rows[s]")[lv], g.rowlen, "row")
            ff = _list(_list(faces[s], g.nlevels, "face_up[s]")[lv], g.rowlen, "face row")
            for c in range(g.rowlen):
                p = s * g.seatpos + lv * g.rowlen + c
                x = rr[c]
                state[L.POS + p] = -1 if _is(x, "empty") else nc if _is(x, "null") else \
                    _int(x, 0, nc - 1, "card id")
                state[L.FACE + p] = as_bool(ff[c], "face_up entry")
    hands = _list(d["hands"], n, "hands")
    for s in range(n):
        h = _list(hands[s], g.handn, "hand")
        for j, x in enumerate(h):
            state[L.HAND + s * L.HANDMAX + j] = -1 if _is(x, "empty") else \
                _int(x, 0, nc - 1, "hand card")
    deck = _list(d["deck"], None, "deck")
    _req(len(deck) <= L.MAXC, "deck too long")
    state[L.DECKN] = len(deck)
    for i, x in enumerate(reversed(deck)):
        state[L.DECK + i] = _int(x, 0, nc - 1, "deck card")
    for c in _cards(d["discard"], nc, "discard"):
        state[L.DISC + c] = 1
    _rebuild_dlist(state, nc)
    picked = [_list(x, 2, "picked entry") for x in _list(d["picked"], None, "picked")]
    for c, (_, how) in zip(_cards([c for c, _ in picked], nc, "picked"), picked):
        one_of(how, ("up", "down"), "picked entry's count direction")
        state[L.PICK + c] = L.PICKED_UP if how == "up" else L.PICKED_DOWN
    known = _list(d["known"], n, "known")
    for s in range(n):
        for c in _cards(known[s], nc, f"known[{s}]"):
            state[L.KNOW + c] |= 1 << s
    full = (1 << n) - 1
    for c in range(nc):  # known to every seat: public (as the kernels mark it)
        if state[L.KNOW + c] == full:
            state[L.KNOW + c] = L.ALL_SEATS
    state[L.KNOW + nc] = L.ALL_SEATS
    state[L.ROUND] = _int(d["round"], 0, L.ROUNDS, "round")
    state[L.TURN] = _int(d["turn"], 0, 2 * n - 1, "turn")
    state[L.START] = _int(d["start_player"], 0, n - 1, "start_player")
    state[L.GAME] = _int(d["game_number"], 0, g.options["max_games"], "game_number")
    state[L.LEVELS] = _int(d["levels"], 1, g.nlevels, "levels")
    state[L.SETK] = _int(d["setup_done"], 0, n, "setup_done")
    state[L.PLACED] = _int(d["placed"], 0, g.rowlen, "placed")
    state[L.NULLS] = _int(d["nulls_placed"], 0, L.MAXPOS * 1000, "nulls_placed")
    state[L.CHAIN] = _int(d["chain"], 0, L.CHAIN_LIMIT, "chain")
    for s, x in enumerate(_list(d["regrow_used"], n, "regrow_used")):
        state[L.REGROW + s] = as_bool(x, "regrow_used entry")
    for s, x in enumerate(_list(d["totals"], n, "totals")):
        state[L.TOTAL + s] = _int(x, -10**6, 10**6, "total")
    for s, x in enumerate(_list(d["hermit_bonus"], n, "hermit_bonus")):
        state[L.BONUS + s] = _int(x, -10**4, 10**4, "hermit_bonus")
    stack = _list(d["effect_stack"], None, "effect_stack")
    _req(len(stack) <= 1, "the effect stack holds at most one frame (effects are tail calls)")
    ef = stack[0] if stack else None
    state[L.EF_KIND] = -1
    state[L.EF_SRC] = state[L.EF_A] = state[L.EF_B] = -1
    state[L.EF_PEEK:L.EF_PEEK + L.SUN_PEEKS] = -1
    state[L.EF_STEP] = state[L.EF_COPY] = 0
    if ef is not None:
        ef = record(ef, ("kind", "copy", "source", "step", "a", "b", "peeks"), "effect")
        state[L.EF_KIND] = L.KIND_NAMES.index(one_of(ef["kind"], L.KIND_NAMES, "effect kind"))
        state[L.EF_COPY] = as_bool(ef["copy"], "effect copy")
        state[L.EF_SRC] = _pos_from(g, ef["source"], "effect source")
        state[L.EF_STEP] = _int(ef["step"], 0, max(n, L.SUN_PEEKS), "effect step")
        state[L.EF_A] = _pos_from(g, ef["a"], "effect a")
        state[L.EF_B] = _pos_from(g, ef["b"], "effect b")
        for j, x in enumerate(_list(ef["peeks"], L.SUN_PEEKS, "peeks")):
            state[L.EF_PEEK + j] = _pos_from(g, x, "peek")
    for c, x in enumerate(_list(d["draw_seq"], nc, "draw_seq")):
        state[L.SEQ + c] = _int(x, 0, 10**6, "draw_seq entry")
    state[L.NDRAW] = _int(d["draws"], 0, 10**6, "draws")
    for s, rs in enumerate(_list(d["returned"], n, "returned")):
        for c in _cards(rs, nc, f"returned[{s}]"):
            state[L.RET + c] |= 1 << s
    for s, x in enumerate(_list(d["return_time"], n, "return_time")):
        state[L.RETSEQ + s] = _int(x, 0, 10**6, "return_time entry")
    state[L.HSCAN] = _int(d["hermit_scan"], 0, n * g.seatpos, "hermit_scan")
    hc = d["hermit_card"]
    state[L.HCARD] = -1 if hc is None else _int(hc, 0, nc - 1, "hermit_card")


def _rebuild_dlist(state: np.ndarray, nc: int) -> None:
    disc = np.flatnonzero(state[L.DISC:L.DISC + nc])
    state[L.DLIST:L.DLIST + L.MAXC] = 0
    state[L.DLIST:L.DLIST + disc.size] = disc
    state[L.DLEN] = disc.size


def check_state(g: Game, state: np.ndarray) -> None:
    """Raise :class:`StateDictError` unless ``state`` is a consistent position."""
    n, nc, sp, rl = g.num_players, g.ncards, g.seatpos, g.rowlen
    phase, cur, done = int(state[PHASE]), int(state[CUR]), int(state[DONE])
    pos = state[L.POS:L.POS + L.MAXPOS]
    face = state[L.FACE:L.FACE + L.MAXPOS]
    hand = state[L.HAND:L.HAND + L.MAX_PLAYERS * L.HANDMAX].reshape(L.MAX_PLAYERS, L.HANDMAX)
    m = int(state[L.DECKN])
    _req(0 <= m <= L.MAXC, "deck size")
    deck = state[L.DECK:L.DECK + m]
    disc = np.flatnonzero(state[L.DISC:L.DISC + nc])
    _req(not state[L.DISC + nc:L.DISC + L.MAXC].any(), "discard flags beyond the deck")
    dl = state[L.DLIST:L.DLIST + int(state[L.DLEN])]
    _req(len(set(dl.tolist())) == dl.size and sorted(dl.tolist()) == disc.tolist(),
         "discard list = discard flags")
    where = np.zeros(nc, np.int64)
    for arr in (pos[(pos >= 0) & (pos < nc)], hand[hand >= 0], deck, disc):
        _req(bool(((arr >= 0) & (arr < nc)).all()), "card id out of range")
        np.add.at(where, arr, 1)
    aside = np.array(g.aside, bool)
    _req(bool((where[~aside] == 1).all()), "every card in play is in exactly one place")
    _req(bool((where[aside] == 0).all()), "cards set aside are out of play")
    _req(int((pos == nc).sum()) == int(state[L.NULLS]), "nulls placed = nulls in the rows")
    _req(bool(((pos == -1) <= (face == 0)).all()), "empty positions are face down")
    _req(bool(np.isin(face, (0, 1)).all()), "faces are 0/1")
    _req(bool((pos[g.npos:] == -1).all()) and bool((hand[n:] == -1).all()), "unused seats")
    _req(bool((hand[:, g.handn:] == -1).all()), "hand slots beyond the hand size")
    pick = state[L.PICK:L.PICK + L.MAXC]
    for c in np.flatnonzero(pick):
        _req(c < nc and state[L.DISC + c] == 1 and pick[c] in (L.PICKED_UP, L.PICKED_DOWN) and
             animal(g.kinds[c]), "picked cards are discarded animals")
    know = state[L.KNOW:L.KNOW + nc + 1]
    full = (1 << n) - 1
    _req(int(know[nc]) == L.ALL_SEATS, "nulls are public")
    _req(bool((know[:nc] >= 0).all() and (know[:nc] <= L.ALL_SEATS).all()), "knowledge bits")
    for p in range(g.npos):
        c = int(pos[p])
        if 0 <= c < nc:
            _req(bool(know[c] >> (p // sp) & 1), "a seat knows the cards in its rows")
            if face[p]:
                _req(int(know[c]) & full == full, "face-up cards are public")
    for s in range(n):
        for c in hand[s][hand[s] >= 0]:
            _req(bool(know[c] >> s & 1), "a seat knows its hand")
    seq = state[L.SEQ:L.SEQ + nc]
    ndraw = int(state[L.NDRAW])
    _req(bool((seq[deck] == 0).all()) and bool((seq[aside] == 0).all()),
         "cards in the deck or set aside were not drawn")
    drawn = seq[seq > 0]
    _req(len(set(drawn.tolist())) == drawn.size and bool((drawn <= ndraw).all()),
         "distinct draw numbers up to the number of draws")
    ret = state[L.RET:L.RET + nc]
    for s in range(n):
        _req(0 <= state[L.RETSEQ + s] <= ndraw and
             (state[L.REGROW + s] or state[L.RETSEQ + s] == 0),
             "return_time: the number of draws when the seat used its Regrowth")
        mine = np.flatnonzero(ret >> s & 1)
        if mine.size:
            _req(bool(state[L.REGROW + s]), "returned cards only after a Regrowth")
            _req(bool(((seq[mine] == 0) | (seq[mine] > state[L.RETSEQ + s])).all()),
                 "returned cards are in the deck or were drawn after their return")
    levels, setk, placed = int(state[L.LEVELS]), int(state[L.SETK]), int(state[L.PLACED])
    _req(1 <= levels <= g.nlevels, "levels")
    order = [(int(state[L.START]) + i) % n for i in range(n)]
    setup = phase in (L.P_REGROW, L.P_SETUP)
    for i, s in enumerate(order):
        for lv in range(g.nlevels):
            row = pos[s * sp + lv * rl:s * sp + lv * rl + rl]
            if lv >= levels:
                _req(bool((row == -1).all()), "rows above the dealt levels are empty")
            elif lv < levels - 1 or not setup or i < setk:
                _req(bool((row >= 0).all()), f"seat {s} level {lv}: row full")
        if setup:
            top = pos[s * sp + (levels - 1) * rl:s * sp + levels * rl]
            k = 0 if i < setk else (placed if i == setk else 0)
            if i >= setk:
                _req(int((top >= 0).sum()) == k and bool((top[:k] >= 0).all()),
                     f"seat {s}: {k} cards placed")
            held = int((hand[s] >= 0).sum())
            want = 0 if i < setk else g.handn - k
            _req(held == want, f"seat {s} holds {want} cards in the setup")
        else:
            _req(not (hand[s] >= 0).any(), "hands are empty after the setup")
    ef = int(state[L.EF_KIND])
    _req(done == (phase == L.P_END) and (cur == -1) == bool(done), "end phase iff done")
    if setup:
        _req(setk < n and cur == order[setk], "the setup seat acts")
        _req(phase == L.P_SETUP or not state[L.REGROW + cur], "regrowth once per game")
    if phase == L.P_REGROW:  # Regrowth draws a new hand before the old one goes back
        _req(g.options["variant"] == "great_tree" and placed == 0 and m >= g.handn,
             "regrow only in the Great Tree, before placing, with a hand left in the deck")
    gt = g.options["variant"] == "great_tree"
    rnd, turn = int(state[L.ROUND]), int(state[L.TURN])
    if phase in (L.P_TURN, L.P_EFFECT):
        _req(cur == (int(state[L.START]) + turn) % n, "turn order")
    if not done:
        hermit = phase in (L.P_HERMIT, L.P_HCOUNT)
        _req(rnd == L.ROUNDS if hermit else rnd < L.ROUNDS,
             "round: 0..2 while playing, 3 for the Hermit crabs")
        _req(turn < (2 * n if gt else n), "turn within the round")
        _req(hermit or levels == (rnd + 1 if gt else 1), "one level per round (Great Tree)")
        _req(int(state[L.GAME]) < (g.options["max_games"] if g.options["series"] else 1),
             "game number")
    if gt and not done and phase != L.P_END:  # deck cards for the levels still to deal
        regrow_left = any(not state[L.REGROW + s] for s in range(n))
        need = (g.nlevels - levels) * n * g.handn + \
            (g.handn if regrow_left and (setup or levels < g.nlevels) else 0)
        _req(m >= need, f"{need} cards left in the deck for the deals and Regrowths to come")
    _req((ef >= 0) == (phase == L.P_EFFECT), "a pending effect iff the effect phase")
    if ef >= 0:
        _check_effect(g, state, pos, cur)
    hc = int(state[L.HCARD])
    _req((hc >= 0) == (phase == L.P_HCOUNT), "hermit card iff the count choice")
    if hc >= 0:
        _req(state[L.DISC + hc] == 1 and pick[hc] == 0 and
             scores_face_down(g.kinds[hc]), "hermit card is an unpicked Sloth/Koala")
        _req(int(know[hc]) & full == full, "a Hermit crab's pick is public")
    if phase in (L.P_HERMIT, L.P_HCOUNT):
        k = int(state[L.HSCAN])
        _req(k < n * sp, "hermit scan")
        p = order[k // sp] * sp + k % sp
        _req(pos[p] >= 0 and 0 <= pos[p] < nc and face[p] == 1 and
             g.kinds[pos[p]] == L.HERMIT and cur == p // sp, "the hermit crab's owner acts")


def _check_effect(g: Game, state: np.ndarray, pos: np.ndarray, cur: int) -> None:
    """The pending effect frame: an effect with a choice, of its source card (or copied by a
    Parrot), at a sub-step of that effect with the positions it has chosen so far."""
    n, nc, sp = g.num_players, g.ncards, g.seatpos
    ef, src, step = int(state[L.EF_KIND]), int(state[L.EF_SRC]), int(state[L.EF_STEP])
    copy, a, b = int(state[L.EF_COPY]), int(state[L.EF_A]), int(state[L.EF_B])
    peeks = [int(state[L.EF_PEEK + j]) for j in range(L.SUN_PEEKS)]

    def card_at(p: int) -> bool:  # a card or a null
        return 0 <= p < g.npos and 0 <= pos[p] <= nc

    _req(card_at(src) and pos[src] < nc, "the effect's source is a card")
    face = state[L.FACE:L.FACE + L.MAXPOS]
    _req(face[src] == 1 or ef == L.RAIN, "the effect's source card is face up (the Rain may "
         "have turned itself down)")
    _req(ef <= L.WOLVES or ef in (L.RAIN, L.SUN), "a pending effect with a choice")
    _req(copy in (0, 1), "effect copy flag is 0/1")
    src_kind = g.kinds[int(pos[src])]
    if copy:
        _req(src_kind == L.PARROT and ef <= L.WOLVES and ef != L.PARROT,
             "a Parrot copies a Dog, Frog, Hawk, Mole, Monkey, Snake or Wolves effect")
    else:
        _req(src_kind == ef, "the effect is its source card's")
    if ef == L.MONKEY:
        ok = (step == 0 and a == b == -1) or \
            (step == L.MONKEY_SECOND and card_at(a) and b == -1) or \
            (step == L.MONKEY_CHOOSE and card_at(a) and card_at(b) and a != b)
        _req(ok, "Monkey: step 0, 1 after choosing a, 2 choosing between a and b")
    else:
        _req(a == b == -1, "positions a and b only for a Monkey")
    if ef == L.SUN:
        _req(0 <= step <= L.SUN_PEEKS, "Sun: three peeks, then a flip")
        k = sum(p >= 0 for p in peeks)
        _req(all(p >= 0 for p in peeks[:k]) and (k == step if step < L.SUN_PEEKS else True),
             "Sun: one peek per step so far")
        _req(all(card_at(p) and p // sp != cur for p in peeks[:k]),
             "Sun: peeks at the cards of other seats")
    else:
        _req(peeks == [-1, -1, -1], "peeks only for the Sun")
        _req(step < n if ef == L.RAIN else step == 0 if ef != L.MONKEY else True,
             "effect step: one per seat for the Rain, none for single choices")


def resample(g: Game, state: np.ndarray, observer: int,
             rng: np.random.Generator) -> np.ndarray:
    """A full state consistent with what ``observer`` knows: :func:`determinize` seeded with
    64 bits drawn from ``rng``."""
    out = np.empty_like(state)
    seed = np.array([rng.integers(0, 2**64, dtype=np.uint64)], np.uint64)
    determinize(state, g.cfg, observer, out, seed)
    return out
