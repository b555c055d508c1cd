"""Plain-Python reference model of If It Fits (boxes, masks, scoring), the numpy
determinization (``ref_resample``) and position helpers for
tests/games/if_it_fits/test_if_it_fits*.py."""

from __future__ import annotations

import json
import random
from collections import deque
from typing import Any

import numpy as np
from hypothesis import HealthCheck, settings

import card_envs
from card_envs.core import kernels as K
from card_envs.if_it_fits import layout as L
from card_envs.if_it_fits.layout import (
    A_DIR,
    A_DRAW,
    A_END,
    A_HAND,
    A_PASS,
    A_ROT,
    A_SKIP,
    A_SLEEP,
    A_START,
    NUM_START,
    SIDES,
    TOYS,
)
from card_envs.if_it_fits.parts import deck as D
from card_envs.if_it_fits.queries import boxes as table_boxes

ENV = "if_it_fits_v0"
DECK = json.loads(D.DATA.read_text())
DR = {0: (-1, 0), 1: (0, 1), 2: (1, 0), 3: (0, -1)}
PROPS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def make(**opts: Any) -> Any:
    return card_envs.make_raw(ENV, **opts)


def play_random(env: Any, rnd: random.Random, k: int = 10**6) -> None:
    while k > 0 and not env.state_array[K.DONE]:
        env.step(rnd.choice(env.legal_actions()))
        k -= 1


def to_turn(env: Any, seed: int = 0) -> None:
    env.reset(seed=seed)
    while env.game.phase_name(env.state_array).startswith("start"):
        env.step(env.legal_actions()[0])


# --- independent model of the table (from the state dict and the deck JSON) ---------------
class Model:
    def __init__(self, d: dict[str, Any], deck: dict[str, Any] | None = None) -> None:
        deck = deck or d["options"]["deck"] or DECK
        self.cards = {c["name"]: c for k in ("box_cards", "start_cards") for c in deck[k]}
        self.toycards = {c["name"]: c for c in deck["special_toy_cards"]}
        self.d = d
        self.R, self.C = len(d["table"]), len(d["table"][0])
        self.n = len(d["hands"])
        self.adv = d["options"]["advanced"]

    def cell(self, r: int, c: int) -> Any:
        if 0 <= r < self.R and 0 <= c < self.C:
            return self.d["table"][r][c]
        return "edge"

    def open_sides(self, x: Any) -> str:
        if x is None or x == "edge" or "sleeping_cat" in x:
            return ""
        if x["card"] in self.toycards:
            return "NESW"
        o = self.cards[x["card"]]["open"]
        if x["rot"]:
            o = "".join(SIDES[(SIDES.index(s) + 2) % 4] for s in o)
        return o

    def toys(self, x: Any) -> list[int]:
        c = self.cards.get(x["card"]) or self.toycards[x["card"]]
        return [c["toys"].get(t, 0) for t in TOYS]

    def joined(self, r: int, c: int, d: int) -> bool:
        a = self.cell(r, c)
        b = self.cell(r + DR[d][0], c + DR[d][1])
        return SIDES[d] in self.open_sides(a) and SIDES[(d + 2) % 4] in self.open_sides(b)

    def boxes(self) -> list[dict[str, Any]]:
        seen: dict[tuple[int, int], int] = {}
        out = []
        for r in range(self.R):
            for c in range(self.C):
                x = self.cell(r, c)
                if x is None or "sleeping_cat" in x or (r, c) in seen:
                    continue
                k = len(out)
                comp = [(r, c)]
                seen[(r, c)] = k
                q = deque([(r, c)])
                while q:
                    a, b = q.popleft()
                    for d in range(4):
                        na, nb = a + DR[d][0], b + DR[d][1]
                        if (na, nb) not in seen and self.joined(a, b, d):
                            seen[(na, nb)] = k
                            comp.append((na, nb))
                            q.append((na, nb))
                out.append({"cells": comp})
        for r in range(self.R):
            for c in range(self.C):
                x = self.cell(r, c)
                if x is not None and "sleeping_cat" in x:
                    k = seen[tuple(x["joined"])]
                    seen[(r, c)] = k
                    out[k]["cells"].append((r, c))
        for k, b in enumerate(out):
            closed = True
            toys = [0, 0, 0]
            spray = 0
            cats = {q: [0, 0] for q in range(self.n)}
            princesses = 0
            for (r, c) in b["cells"]:
                x = self.cell(r, c)
                if "sleeping_cat" in x:
                    if x["sleeping_cat"] == "princess":
                        princesses += 1
                    else:
                        cats[x["sleeping_cat"]][1] += 1
                    continue
                for t, v in enumerate(self.toys(x)):
                    toys[t] += v
                spray += self.cards.get(x["card"], {}).get("sprayer", 0)
                for d in range(4):
                    if SIDES[d] in self.open_sides(x):
                        y = self.cell(r + DR[d][0], c + DR[d][1])
                        if y is None or y == "edge":
                            closed = False
            for r in range(self.R - 1):
                for c in range(self.C):
                    s = self.d["slots"][r][c]
                    if s is None or seen.get((r, c)) != k:
                        continue
                    if "toy" in s:
                        for t, v in enumerate(self.toycards[s["toy"]]["toys"].get(t, 0)
                                              for t in TOYS):
                            toys[t] += v
                    elif s["cat"] == "princess":
                        princesses += 1
                    else:
                        cats[s["cat"]][0] += 1
            b.update(closed=closed, toys=toys, sprayers=spray, cats=cats,
                     princesses=princesses,
                     value=(max(toys) - spray) * (2 if closed else 1))
            b["cells"] = sorted(b["cells"])
        self.box_of = seen
        return sorted(out, key=lambda b: b["cells"][0])

    def score(self) -> tuple[list[float], list[float]]:
        pts, minus = [0.0] * self.n, [0.0] * self.n
        for b in self.boxes():
            cnt = [2 * a + (1 if self.adv else 2) * s for a, s in
                   (b["cats"][q] for q in range(self.n))]
            top = max(cnt)
            if top == 0:
                continue
            mult = 2 if b["closed"] else 1
            for q in range(self.n):
                a, s = b["cats"][q]
                if cnt[q] == top and a > 0:
                    pts[q] += b["value"]
                    minus[q] += b["sprayers"] * mult
                if not self.adv and a > 0:
                    pts[q] += a + s - 1
        return pts, minus

    # --- legal actions, brute force --------------------------------------------------
    def legal(self) -> set[int]:
        d, R, C = self.d, self.R, self.C
        T, S = R * C, (R - 1) * C
        B = T + S
        bx = self.boxes()
        p = d["current_player"]
        ph = d["phase"]
        hand = d["hands"][p] if p is not None else []

        def allowed(box: int) -> bool:
            b = bx_by_index[box]
            if b["cats"][p][0] + b["cats"][p][1] > 0:
                return True
            return sum(sum(v) for v in b["cats"].values()) + b["princesses"] == 0

        order = {id(b): i for i, b in enumerate(bx)}
        bx_by_index = {}
        for b in bx:
            i = self.box_of[b["cells"][0]]
            bx_by_index[i] = b
        _ = order
        occupied = {(r, c) for r in range(R) for c in range(C)
                    if d["table"][r][c] is not None}
        frontier = [(r, c) for r in range(R) for c in range(C)
                    if (r, c) not in occupied and
                    any((r + a, c + b) in occupied for a, b in DR.values())]

        def opens(name: str, rot: int) -> str:
            return self.open_sides({"card": name, "rot": rot})

        def fits(r: int, c: int, o: str) -> bool:
            for dd in range(4):
                y = self.cell(r + DR[dd][0], c + DR[dd][1])
                if y is None or y == "edge" or "sleeping_cat" in y:
                    continue
                if SIDES[(dd + 2) % 4] not in self.open_sides(y) and SIDES[dd] not in o:
                    return False
            return True

        strict = self.adv and not d["relaxed"]

        def slot_ok(s: int) -> bool:
            r, c = divmod(s, C)
            a, b = self.cell(r, c), self.cell(r + 1, c)
            if a is None or b is None or "sleeping_cat" in a or "sleeping_cat" in b:
                return False
            if not self.joined(r, c, 2) or d["slots"][r][c] is not None:
                return False
            return allowed(self.box_of[(r, c)])

        def sleep_dirs(r: int, c: int) -> list[int]:
            out = []
            for dd in range(4):
                y = self.cell(r + DR[dd][0], c + DR[dd][1])
                if y is None or y == "edge" or "sleeping_cat" in y:
                    continue
                if SIDES[(dd + 2) % 4] in self.open_sides(y) and \
                        allowed(self.box_of[(r + DR[dd][0], c + DR[dd][1])]):
                    out.append(dd)
            return out

        cats_on_table = sum(5 - x for x in d["supplies"])
        res: set[int] = set()
        if ph == "turn":
            res.add(B + A_DRAW)
            if d["supplies"][p] > 0 and any(sleep_dirs(r, c) for r, c in frontier):
                res.add(B + A_SLEEP)
        elif ph == "play":
            for h, name in enumerate(hand):
                if (name == "princess" and cats_on_table) or (name != "princess" and frontier):
                    res.add(B + A_HAND + h)
        elif ph == "cell":
            name = hand[d["selected_hand"]]
            for r, c in frontier:
                if not strict or fits(r, c, opens(name, 0)) or fits(r, c, opens(name, 1)):
                    res.add(r * C + c)
        elif ph in ("rotation", "start_rotation"):
            name = hand[d["selected_hand"]] if ph == "rotation" else d["selected_start"]
            r, c = d["selected_cell"]
            for rot in range(2):
                if not strict or fits(r, c, opens(name, rot)):
                    res.add(B + A_ROT + rot)
        elif ph == "cat":
            r, c = d["played_cell"]
            for s in ((r - 1) * C + c, r * C + c):
                if 0 <= s < S and slot_ok(s):
                    res.add(T + s)
            res.add(B + A_SKIP)
        elif ph == "toy_slot":
            res = {T + s for s in range(S) if slot_ok(s)}
        elif ph == "toy_cell":
            res = {r * C + c for r, c in frontier}
        elif ph == "princess":
            for r in range(R):
                for c in range(C):
                    x = d["table"][r][c]
                    if x and "sleeping_cat" in x and x["sleeping_cat"] != "princess":
                        res.add(r * C + c)
                    if r < R - 1:
                        s = d["slots"][r][c]
                        if s and "cat" in s and s["cat"] != "princess":
                            res.add(T + r * C + c)
        elif ph == "sleep_cell":
            res = {r * C + c for r, c in frontier if sleep_dirs(r, c)}
        elif ph == "sleep_dir":
            res = {B + A_DIR + dd for dd in sleep_dirs(*d["selected_cell"])}
        elif ph == "discard":
            res = {B + A_HAND + h for h in range(len(hand))}
        elif ph == "pass":
            res = {B + A_PASS}
        elif ph == "start_card":
            used = set(d["start_cards_used"])
            res = {B + A_START + k for k in range(5) if f"S{k + 1}" not in used}
        elif ph == "start_end":
            row = R // 2
            for e, col in enumerate((d["start_row"][0] - 1, d["start_row"][1] + 1)):
                if 0 <= col < C and (not strict or any(
                        fits(row, col, opens(d["selected_start"], rot)) for rot in range(2))):
                    res.add(B + A_END + e)
        return res


def boxes(game: Any, state: Any) -> list[dict[str, Any]]:
    """The engine's boxes (``queries.boxes``), each seat's cats also as ``cats``: {seat:
    [awake, asleep]} (the model's form)."""
    out = table_boxes(state, game.cfg)
    for b in out:
        b["cats"] = {q: [b["awake"][q], b["asleep"][q]] for q in range(game.num_players)}
    return out


def engine_boxes(env: Any) -> list[dict[str, Any]]:
    return boxes(env.game, env.state_array)


def same_boxes(env: Any) -> None:
    ours = Model(env.state_dict()).boxes()
    theirs = engine_boxes(env)
    assert [b["cells"] for b in ours] == [b["cells"] for b in theirs]
    for a, b in zip(ours, theirs):
        for k in ("closed", "toys", "sprayers", "cats", "princesses", "value"):
            assert a[k] == b[k], (k, a, b)


# --- the determinization in numpy ------------------------------------------------------------
def ref_resample(g: Any, state: np.ndarray, observer: int,
                 rng: np.random.Generator) -> np.ndarray:
    """If It Fits' ``resample`` before the kernel ``determinize`` replaced it: the box cards
    in the pile and in the other hands are dealt anew over the same places, then every pile
    segment is shuffled in itself. Kept: the Princesses of each other hand (at their hand
    positions), the Princesses and special toy cards of each segment, the card being placed
    (phases cell / rotation) and the state's RNG words."""
    out = state.copy()
    n, nb = g.num_players, g.nb
    po = g.lay["pile"]
    pn = int(out[L.S_PN])
    segments = [(int(out[L.S_SEGB + j]), min(int(out[L.S_SEGB + j + 1]), pn))
                for j in range(int(out[L.S_NSEG]))]
    for a, b in segments:  # canonical order first: where a Princess lies is unknown
        out[po + a:po + b] = np.sort(out[po + a:po + b])
    places = [po + k for k in range(pn) if out[po + k] < nb]
    cur = int(out[K.CUR])
    keep = -1
    if cur >= 0 and L.PHASES[int(out[K.PHASE])] in ("cell", "rotation"):
        keep = L.S_HAND + cur * L.HANDMAX + int(out[L.S_SEL])
    for q in range(n):
        if q == observer:
            continue
        for k in range(int(out[L.S_HANDN + q])):
            x = L.S_HAND + q * L.HANDMAX + k
            if out[x] < nb and x != keep:
                places.append(x)
    vals = np.sort(out[places])  # sorted: the draw depends on rng alone, not the deal
    out[places] = rng.permutation(vals)
    for a, b in segments:
        if b > a:
            out[po + a:po + b] = rng.permutation(out[po + a:po + b])
    return out


# --- building positions -------------------------------------------------------------------
def position(env: Any, cells: dict, slots: dict | None = None, hands: list | None = None,
             phase: str = "turn", cur: int = 0, **extra: Any) -> dict[str, Any]:
    """Load a position: ``cells`` maps (r, c) to (card name, rot) or ("cat", owner, (jr, jc));
    ``slots`` maps (r, c) to a seat, "princess" or a toy card name."""
    g = env.game
    d = env.state_dict()
    n = g.num_players
    R, C = g.rows, g.cols
    table: list[list[Any]] = [[None] * C for _ in range(R)]
    used: set[str] = set()
    on_table_pr = 0
    cats = [0] * n
    for (r, c), x in cells.items():
        if x[0] == "cat":
            table[r][c] = {"sleeping_cat": x[1], "joined": list(x[2])}
            if x[1] == "princess":
                on_table_pr += 1
            else:
                cats[x[1]] += 1
        else:
            table[r][c] = {"card": x[0], "rot": x[1]}
            used.add(x[0])
    srows: list[list[Any]] = [[None] * C for _ in range(R - 1)]
    for (r, c), v in (slots or {}).items():
        if isinstance(v, int):
            srows[r][c] = {"cat": v}
            cats[v] += 1
        elif v == "princess":
            srows[r][c] = {"cat": "princess"}
            on_table_pr += 1
        else:
            srows[r][c] = {"toy": v}
            used.add(v)
    hands = hands if hands is not None else [[] for _ in range(n)]
    for h in hands:
        used.update(x for x in h if x != "princess")
    in_hands_pr = sum(h.count("princess") for h in hands)
    rest = [c for c in g.card_names[:g.nb] + g.card_names[g.nb + NUM_START:] if c not in used]
    pile = rest + ["princess"] * (g.npr - on_table_pr - in_hands_pr)
    starts = [x for x in g.card_names[g.nb:g.nb + NUM_START] if x in used]
    d.update(table=table, slots=srows, hands=hands, draw_pile=pile,
             pile_segments=[0, len(pile)], discarded=[], supplies=[5 - k for k in cats],
             end_triggered=False, start_cards_laid=len(starts), start_cards_used=starts,
             selected_hand=None, selected_start=None, selected_cell=None, played_cell=None,
             relaxed=False, drawn_toy=None, phase=phase, current_player=cur)
    d.update(extra)
    env.load_state_dict(d)
    return d


def fresh(**opts: Any) -> Any:
    env = make(**opts)
    to_turn(env)
    return env
