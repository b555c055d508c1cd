"""Helpers and independent references for the Flipology tests (``tests/games/flipology/``).

Positions are set up by swapping chosen cards into place in a real dealt game (every card stays
conserved); masks, scores, the observed board and whole turns (``RefTurn``) are re-derived here
from state dicts, written from ``docs/rules/flipology.md`` and not from the engine. Encodings
(kinds, actions, observation fields, sub-steps) come from ``card_envs.flipology.layout``.
"""

from __future__ import annotations

import json

import numpy as np

import card_envs
from card_envs.core import kernels as K
from card_envs.flipology import layout as L
from card_envs.flipology.manifest import MANIFEST

ENV_ID = MANIFEST.env_id
KINDS = L.KIND_NAMES
EFFECT_KINDS = {"dog", "frog", "hawk", "mole", "monkey", "parrot", "snake", "wolves", "rain",
                "sun", "wind"}
ANIMALS = set(KINDS[:L.RED_PANDA + 1])
COPYABLE = {"dog", "frog", "hawk", "mole", "monkey", "snake", "wolves"}


# --- helpers ------------------------------------------------------------------------------
def after_setup(seed: int = 0, **opts):
    """A raw env whose setup is done (every seat placed its first cards in hand order);
    seat ``start_player`` (0) is to take the first turn."""
    env = card_envs.make_raw(ENV_ID, **opts)
    env.reset(seed=seed)
    g = env.game
    while g.phase_name(env.state_array) in ("setup", "regrow"):
        legal = env.legal_actions()
        env.step(g.skip + 2 if g.phase_name(env.state_array) == "regrow" else legal[0])
    return env


def card_of(g, kind: str, points: int | None = None, avoid=()) -> list[int]:
    return [c for c in range(g.ncards) if KINDS[g.kinds[c]] == kind and
            (points is None or g.points[c] == points) and c not in avoid]


def arrange(env, cards: dict, faces: dict | None = None) -> None:
    """Put card kinds at absolute positions: ``cards = {pos: (kind, points|None)}``; faces
    ``{pos: 0/1}`` (default face down). Swaps keep every card in exactly one place; knowledge
    is rebuilt (own rows, face-up cards public)."""
    st_ = env.state_array.copy()
    g = env.game
    used: set[int] = set()
    for p, spec in cards.items():
        kind, pts = spec if isinstance(spec, tuple) else (spec, None)
        cands = [c for c in card_of(g, kind, pts) if c not in used and not g.aside[c]]
        c = cands[0]
        used.add(c)
        x = int(st_[L.POS + p])
        if x == c:
            continue
        where = np.flatnonzero(st_[L.POS:L.POS + g.npos] == c)
        hand = np.flatnonzero(st_[L.HAND:L.HAND + L.MAX_PLAYERS * L.HANDMAX] == c)
        deck = np.flatnonzero(st_[L.DECK:L.DECK + st_[L.DECKN]] == c)
        if where.size:
            st_[L.POS + where[0]] = x
        elif hand.size:
            st_[L.HAND + hand[0]] = x
        elif deck.size:
            st_[L.DECK + deck[0]] = x
        else:
            assert st_[L.DISC + c]
            st_[L.DISC + c] = 0
            st_[L.DISC + x] = 1
        st_[L.POS + p] = c
        st_[L.SEQ + c], st_[L.SEQ + x] = st_[L.SEQ + x], st_[L.SEQ + c]  # draw time: place
        st_[L.KNOW + c] = 0
    for p, f in (faces or {}).items():
        st_[L.FACE + p] = f
    for p in cards:
        st_[L.FACE + p] = (faces or {}).get(p, 0)
    for p in range(g.npos):
        c = int(st_[L.POS + p])
        if 0 <= c < g.ncards:
            st_[L.KNOW + c] |= 1 << (p // g.seatpos)
            if st_[L.FACE + p]:
                st_[L.KNOW + c] = L.ALL_SEATS
    env.load_state_dict(g.state_dict(st_))


FILL = ["snake"] * 4 + ["monkey"] * 4 + ["parrot"] * 3 + ["sun"] * 3 + ["wind"] * 3 + ["rain"] * 3


def exact(env, cards: dict) -> dict:
    """``cards`` plus no-score fillers (face down, no Sloth/Koala) on every other position."""
    free = [p for p in range(env.game.npos) if p not in cards]
    return {**{p: FILL[i] for i, p in enumerate(free)}, **cards}


def all_down(env) -> dict:
    """Faces dict turning every dealt position face down."""
    return {p: 0 for p in range(env.game.npos)}


def kind_at(env, p: int) -> str:
    c = int(env.state_array[L.POS + p])
    return "null" if c == env.game.ncards else KINDS[env.game.kinds[c]]


def face(env, p: int) -> int:
    return int(env.state_array[L.FACE + p])


def phase(env) -> str:
    return env.game.phase_name(env.state_array)


def act_pos(env, p: int) -> int:
    """The position action of absolute position ``p`` for the seat to act."""
    g = env.game
    cur = int(env.state_array[K.CUR])
    s, i = divmod(p, g.seatpos)
    return ((s - cur) % g.num_players) * g.seatpos + i


def legal_positions(env) -> set[int]:
    """Absolute positions among the legal position actions."""
    g = env.game
    cur = int(env.state_array[K.CUR])
    out = set()
    for a in env.legal_actions():
        if a < g.npos:
            rel, i = divmod(a, g.seatpos)
            out.add(((cur + rel) % g.num_players) * g.seatpos + i)
    return out


def obs_sections(g) -> L.ObsLayout:
    """Section starts of ``g``'s observation."""
    return L.obs_layout(g.num_players, g.seatpos, g.handn, g.ncards)


def obs_cell(obs, a: int) -> list[int]:
    """The observed cell of position action ``a`` (seats relative): index it by ``L.OBS_FACE``,
    ``L.OBS_KIND``, ``L.OBS_POINTS``."""
    return [int(x) for x in obs[L.OBS_CELL * a:L.OBS_CELL * (a + 1)]]


def _cell(up: int, kind: int, pts: int) -> list[int]:
    out = [0] * L.OBS_CELL
    out[L.OBS_FACE], out[L.OBS_KIND], out[L.OBS_POINTS] = up, kind, pts
    return out


# --- independent references ---------------------------------------------------------------
def ref_points(g, d: dict) -> list[int]:
    """Scores from the state dict: face-up cards, minus face-up Sloths/Koalas, plus face-down
    Sloths/Koalas, plus Hermit crab picks."""
    out = []
    for s, seat_rows in enumerate(d["rows"]):
        tot = d["hermit_bonus"][s]
        for lv, row in enumerate(seat_rows):
            for c, card in enumerate(row):
                if not isinstance(card, int):
                    continue
                kind, pts, up = KINDS[g.kinds[card]], g.points[card], d["face_up"][s][lv][c]
                if kind in ("sloth", "koala"):
                    tot += -pts if up else pts
                elif up:
                    tot += pts
        out.append(tot)
    return out


def ref_board_obs(g, view: dict, seat: int) -> list[int]:
    """The board part of ``seat``'s observation, from its state-dict view."""
    out = []
    n = g.num_players
    for r in range(n):
        s = (seat + r) % n
        for lv in range(g.nlevels):
            for c in range(g.rowlen):
                x, up = view["rows"][s][lv][c], view["face_up"][s][lv][c]
                if x == "empty":
                    out += _cell(-1, -1, -1)
                elif x == "null":
                    out += _cell(int(up), L.NULL, 0)
                elif x is None:
                    out += _cell(int(up), -1, -1)
                else:
                    out += _cell(int(up), g.kinds[x], g.points[x])
    return out


def ref_mask(g, d: dict) -> list[int]:
    """Legal actions enumerated from the full state dict (written from the spec)."""
    n, sp, rl = g.num_players, g.seatpos, g.rowlen
    cur, ph = d["current_player"], d["phase"]
    if cur is None:
        return []
    levels = d["levels"]

    def cell(s, lv, c):
        return d["rows"][s][lv][c]

    def exists(s, lv, c):
        return lv < levels and cell(s, lv, c) != "empty"

    def kind(s, lv, c):
        x = cell(s, lv, c)
        return "null" if x == "null" else KINDS[g.kinds[x]]

    def act(s, lv, c):
        return ((s - cur) % n) * sp + lv * rl + c

    allpos = [(s, lv, c) for s in range(n) for lv in range(g.nlevels) for c in range(rl)
              if exists(s, lv, c)]

    def nbrs(s, lv, c):
        out = [(s, lv, c - 1) if c > 0 else ((s + 1) % n, lv, rl - 1),
               (s, lv, c + 1) if c < rl - 1 else ((s - 1) % n, lv, 0)]
        out += [(s, lv + dl, c) for dl in (-1, 1) if 0 <= lv + dl < levels]
        return [q for q in out if exists(*q)]

    if ph == "setup":
        return sorted(g.hand0 + j for j, x in enumerate(d["hands"][cur]) if x != "empty")
    if ph == "regrow":
        return [g.skip + L.A_REGROW, g.skip + L.A_KEEP]
    if ph == "hermit_count":
        return [g.skip + L.A_COUNT_UP, g.skip + L.A_COUNT_DOWN]
    if ph == "hermit":
        picked = {c for c, _ in d["picked"]}
        return sorted([g.disc0 + c for c in d["discard"] if c not in picked and
                       KINDS[g.kinds[c]] in ANIMALS] + [g.skip + L.A_SKIP])
    if ph == "turn":
        return sorted(act(cur, levels - 1, c) for c in range(rl))
    ef = d["effect_stack"][0]
    k, src, step = ef["kind"], tuple(ef["source"]), ef["step"]
    if k == "dog":
        tg = nbrs(*src)
    elif k == "frog":
        one = set(nbrs(*src))
        tg = {q for a in one for q in nbrs(*a)} - one - {src}
    elif k == "hawk":
        tg = [q for q in allpos if q[:2] != src[:2]]
    elif k == "mole":
        tg = [q for q in allpos if q != src]
    elif k == "wolves":
        tg = [q for q in allpos if q != src and cell(*q) != "null"]
    elif k == "snake":
        tg = [q for q in allpos if q[:2] == src[:2] and q != src]
    elif k == "parrot":
        tg = [q for q in allpos if d["face_up"][q[0]][q[1]][q[2]] and kind(*q) in COPYABLE]
    elif k == "monkey":
        if step == L.MONKEY_CHOOSE:
            tg = [tuple(ef["a"]), tuple(ef["b"])]
        else:
            tg = [q for q in nbrs(*src) if ef["a"] is None or q != tuple(ef["a"])]
    elif k == "rain":
        s = (cur + step) % n
        tg = [q for q in allpos if q[0] == s]
    elif k == "sun":
        peeks = [tuple(x) for x in ef["peeks"] if x is not None]
        if step < L.SUN_PEEKS:
            tg = [q for q in allpos if q[0] != cur and not d["face_up"][q[0]][q[1]][q[2]]
                  and q not in peeks]
        else:
            return sorted([act(*q) for q in peeks] + [g.skip + L.A_SKIP])
    else:
        raise AssertionError(k)
    return sorted({act(*q) for q in tg})


class RefTurn:
    """Turn and effect steps on a full state dict, written from the spec (no chance). Returns
    the expected dict, or None where it does not predict (the end of the game, a new row)."""

    def __init__(self, g, d: dict) -> None:
        self.g, self.d = g, json.loads(json.dumps(d))
        self.n = g.num_players

    def kind(self, q) -> str:
        x = self.d["rows"][q[0]][q[1]][q[2]]
        return "null" if x == "null" else KINDS[self.g.kinds[x]]

    def up(self, q) -> bool:
        return self.d["face_up"][q[0]][q[1]][q[2]]

    def set_up(self, q, v: bool) -> None:
        self.d["face_up"][q[0]][q[1]][q[2]] = v
        x = self.d["rows"][q[0]][q[1]][q[2]]
        if v and isinstance(x, int):
            for s in range(self.n):
                if x not in self.d["known"][s]:
                    self.d["known"][s].append(x)

    def flip(self, q) -> bool:
        """An effect's flip: True if it turned up a card with an effect."""
        if self.up(q):
            if self.kind(q) != "cat":
                self.set_up(q, False)
            return False
        self.set_up(q, True)
        return self.kind(q) in EFFECT_KINDS

    def start(self, q) -> None:
        self.d["effect_stack"] = []
        if self.d["chain"] >= L.CHAIN_LIMIT:
            return
        self.d["chain"] += 1
        self.d["effect_stack"] = [{"kind": self.kind(q), "copy": False, "source": list(q),
                                   "step": 0, "a": None, "b": None,
                                   "peeks": [None] * L.SUN_PEEKS}]

    def pos(self, a: int):
        g, cur = self.g, self.d["current_player"]
        rel, i = divmod(a, g.seatpos)
        return ((cur + rel) % self.n, i // g.rowlen, i % g.rowlen)

    def monkey(self, a, b) -> None:
        ef = self.d["effect_stack"][0]
        ta = self.flip(a)
        tb = b is not None and self.flip(b)
        if ta and tb and self.d["chain"] < L.CHAIN_LIMIT:
            ef.update(a=list(a), b=list(b), step=L.MONKEY_CHOOSE)
        elif ta or tb:
            self.start(a if ta else b)
        else:
            self.d["effect_stack"] = []

    def apply(self, a: int) -> None:
        d, g = self.d, self.g
        ef = d["effect_stack"][0]
        k, src, step = ef["kind"], tuple(ef["source"]), ef["step"]
        if k == "sun" and step == L.SUN_PEEKS:
            if a != g.skip + L.A_SKIP:
                self.set_up(self.pos(a), True)
            d["effect_stack"] = []
            return
        q = self.pos(a)
        if k in ("dog", "frog", "hawk", "snake"):
            if self.flip(q):
                self.start(q)
            else:
                d["effect_stack"] = []
        elif k == "mole":
            r = d["rows"]
            x, y = r[q[0]][q[1]][q[2]], r[src[0]][src[1]][src[2]]
            fx = self.up(q)
            r[q[0]][q[1]][q[2]], r[src[0]][src[1]][src[2]] = y, x
            self.set_up(q, True)
            self.set_up(src, fx)
            if isinstance(x, int) and x not in d["known"][src[0]]:
                d["known"][src[0]].append(x)
            d["effect_stack"] = []
        elif k == "wolves":
            x = d["rows"][q[0]][q[1]][q[2]]
            d["discard"] = sorted(d["discard"] + [x])
            for s in range(self.n):
                if x not in d["known"][s]:
                    d["known"][s].append(x)
            d["rows"][q[0]][q[1]][q[2]] = "null"
            d["face_up"][q[0]][q[1]][q[2]] = True
            d["nulls_placed"] += 1
            d["effect_stack"] = []
        elif k == "parrot":
            ef.update(kind=self.kind(q), copy=True, step=0)
        elif k == "monkey":
            if step == 0:
                ef.update(a=list(q), step=L.MONKEY_SECOND)
            elif step == L.MONKEY_SECOND:
                self.monkey(tuple(ef["a"]), q)
            else:
                self.start(q)
        elif k == "rain":
            self.flip(q)
            ef["step"] = step + 1
            if step + 1 >= self.n:
                d["effect_stack"] = []
        elif k == "sun":
            ef["peeks"][step] = list(q)
            x = d["rows"][q[0]][q[1]][q[2]]
            if isinstance(x, int) and x not in d["known"][d["current_player"]]:
                d["known"][d["current_player"]].append(x)
            ef["step"] = step + 1

    def settle(self) -> bool:
        d = self.d
        while d["effect_stack"]:
            ef = d["effect_stack"][0]
            k, src = ef["kind"], tuple(ef["source"])
            if k == "wind":
                for c in range(self.g.rowlen):
                    if c != src[2]:
                        self.flip((src[0], src[1], c))
                d["effect_stack"] = []
                continue
            d["phase"] = "effect"
            opts = ref_mask(self.g, d)
            if k == "monkey" and ef["step"] == 0 and len(opts) <= 2:
                qs = self.neighbours(src)  # (left, right, down, up) that exist
                self.monkey(qs[0], qs[1] if len(qs) > 1 else None)
                continue
            if not opts:
                if k == "sun" and ef["step"] < L.SUN_PEEKS:
                    ef["step"] = L.SUN_PEEKS
                else:
                    d["effect_stack"] = []
                continue
            if len(opts) == 1:
                self.apply(opts[0])
                continue
            return True
        return False

    def neighbours(self, q):
        n, rl, levels = self.n, self.g.rowlen, self.d["levels"]
        s, lv, c = q
        out = [(s, lv, c - 1) if c > 0 else ((s + 1) % n, lv, rl - 1),
               (s, lv, c + 1) if c < rl - 1 else ((s - 1) % n, lv, 0)]
        return out + [(s, lv + dl, c) for dl in (-1, 1) if 0 <= lv + dl < levels]

    def step(self, a: int) -> dict | None:
        d = self.d
        if d["phase"] == "turn":
            d["chain"] = 0
            q = self.pos(a)
            if self.up(q):
                self.set_up(q, False)
            else:
                self.set_up(q, True)
                if self.kind(q) in EFFECT_KINDS:
                    self.start(q)
        else:
            self.apply(a)
        if self.settle():
            return self.finish()
        d["phase"] = "turn"
        n = self.n
        per_round = n if self.g.nlevels == 1 else 2 * n
        d["turn"] += 1
        if d["turn"] == per_round:
            if d["round"] == L.ROUNDS - 1 or self.g.nlevels > 1:
                return None
            d["turn"], d["round"] = 0, d["round"] + 1
        d["current_player"] = (d["start_player"] + d["turn"]) % n
        return self.finish()

    def finish(self) -> dict:
        self.d["steps"] += 1
        for s in range(self.n):
            self.d["known"][s].sort()
        return self.d




# --- determinization ------------------------------------------------------------------------
def ref_resample(g, state: np.ndarray, observer: int, rng: np.random.Generator) -> np.ndarray:
    """The Python determinization ``statedict.resample`` was before the compiled kernel
    ``statedict.determinize`` (kept as the reference of its distribution): permute every card
    ``observer`` does not know over the places such cards occupy (others' face-down cards and
    hands, setup discards, the deck). What the other seats know, when a place's card was drawn
    and which seats returned it stay with the places; the cards the observer returned by
    Regrowth go only to the deck or to places drawn after that. Reads the hidden cards
    themselves (so its output depends on them): a reference, not for search."""
    out = state.copy()
    nc = g.ncards
    bit = 1 << observer
    refs: list[int] = []  # state offsets holding an unknown card id
    disc_cards: list[int] = []
    for p in range(g.npos):
        c = int(state[L.POS + p])
        if 0 <= c < nc and not state[L.KNOW + c] & bit:
            refs.append(L.POS + p)
    for i in range(L.MAX_PLAYERS * L.HANDMAX):
        c = int(state[L.HAND + i])
        if c >= 0 and not state[L.KNOW + c] & bit:
            refs.append(L.HAND + i)
    for i in range(int(state[L.DECKN])):
        c = int(state[L.DECK + i])
        if not state[L.KNOW + c] & bit:
            refs.append(L.DECK + i)
    for c in range(nc):
        if state[L.DISC + c] and not state[L.KNOW + c] & bit:
            disc_cards.append(c)
    old = [int(state[r]) for r in refs] + disc_cards
    mine = [c for c in old if state[L.RET + c] & bit]  # returned by the observer
    new: list[int] = [-1] * len(old)
    if mine:
        t = int(state[L.RETSEQ + observer])
        ok = [j for j, c in enumerate(old) if (j < len(refs) and refs[j] >= L.DECK and
                                               refs[j] < L.DECK + L.MAXC)
              or state[L.SEQ + c] > t]
        for j, c in zip(rng.choice(ok, size=len(mine), replace=False).tolist(),
                        rng.permutation(mine).tolist()):
            new[j] = c
    rest = [c for c in old if c not in set(mine)]
    free = [j for j in range(len(old)) if new[j] < 0]
    for j, c in zip(free, rng.permutation(rest).tolist() if rest else []):
        new[j] = int(c)
    for c in disc_cards:
        out[L.DISC + c] = 0
    for j, (c_old, c_new) in enumerate(zip(old, new)):
        out[L.KNOW + c_new] = state[L.KNOW + c_old]
        out[L.PICK + c_new] = state[L.PICK + c_old]
        out[L.SEQ + c_new] = state[L.SEQ + c_old]
        out[L.RET + c_new] = (state[L.RET + c_old] & ~bit) | (state[L.RET + c_new] & bit)
        if j < len(refs):
            out[refs[j]] = c_new
        else:
            out[L.DISC + c_new] = 1
    disc = np.flatnonzero(out[L.DISC:L.DISC + nc])
    out[L.DLIST:L.DLIST + L.MAXC] = 0
    out[L.DLIST:L.DLIST + disc.size] = disc
    out[L.DLEN] = disc.size
    return out
