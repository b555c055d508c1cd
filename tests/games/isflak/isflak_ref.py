"""Plain-Python reference of Isflak's rules and position helpers for the tests in
tests/games/isflak/.

The rules are re-implemented from ``docs/rules/isflak.md``; only the encoding (board size,
directions, action and card codes) is imported from ``card_envs.isflak.layout``, and
``test_layout_matches_the_documented_encoding`` pins that encoding to the documented numbers.
"""

from __future__ import annotations

import json
import random

import numpy as np
from hypothesis import HealthCheck, settings

import card_envs
from card_envs.isflak.layout import (
    CELLS,
    COLS,
    DIRS,
    MAX_DIST,
    MOVE0,
    MOVES_PER_PENGUIN,
    PHASES,
    RANKS,
    ROWS,
    SUITS,
    move_action,
)

ENV_ID = "isflak_v0"
ALL_CARDS = [r + s for s in SUITS for r in RANKS]
# the spec's penguins-per-player table: an expected value, so written out, not imported
TABLE = {2: 4, 3: 3, 4: 2, 5: 2, 6: 2}
__all__ = ["CELLS", "COLS", "DIRS", "MAX_DIST", "MOVE0", "MOVES_PER_PENGUIN", "RANKS", "ROWS",
           "SUITS", "move_action"]  # re-exported for the tests


def hyp(n: int) -> settings:
    return settings(max_examples=n, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow])


# =============================================================================================
# Pure-Python reference (written from docs/rules/isflak.md, working on state dicts)
# =============================================================================================
def kind(code: str) -> str:
    r = code[:-1]
    return "ace" if r == "A" else ("face" if r in "JQK" else "number")


def pts(code: str, points: dict) -> int:
    return points[kind(code)]


def on_border(r: int, c: int) -> bool:
    return r in (0, ROWS - 1) or c in (0, COLS - 1)


def decode_move(a: int) -> tuple[int, int, int]:
    """(penguin slot k, direction d, distance s) of movement action ``a``."""
    k, rest = divmod(a - MOVE0, MOVES_PER_PENGUIN)
    return k, rest // MAX_DIST, rest % MAX_DIST + 1


def occupied(sd: dict) -> set[tuple[int, int]]:
    return {tuple(p) for row in sd["penguins"] for p in row if p is not None}


def ref_moves(sd: dict, seat: int) -> set[int]:
    """Every legal move of ``seat``: queen lines over cards without penguins or gaps."""
    occ = occupied(sd)
    out = set()
    for k, p in enumerate(sd["penguins"][seat]):
        if p is None:
            continue
        for d, (dr, dc) in enumerate(DIRS):
            for s in range(1, MAX_DIST + 1):
                r, c = p[0] + dr * s, p[1] + dc * s
                if not (0 <= r < ROWS and 0 <= c < COLS):
                    break
                if sd["grid"][r][c] is None or (r, c) in occ:
                    break
                out.add(move_action(k, d, s))
    return out


def ref_placements(sd: dict) -> set[int]:
    occ = occupied(sd)
    free = [(r, c) for r in range(ROWS) for c in range(COLS)
            if on_border(r, c) and (r, c) not in occ and sd["grid"][r][c] is not None]
    numbers = {r * COLS + c for r, c in free if kind(sd["grid"][r][c]) == "number"}
    if numbers:
        return numbers
    return {r * COLS + c for r, c in free if kind(sd["grid"][r][c]) == "face"}


def brute_mask(sd: dict) -> set[int]:
    if sd["phase"] == "end":
        return set()
    if sd["phase"] == "placement":
        return ref_placements(sd)
    return ref_moves(sd, sd["current_player"])


class Ref:
    """A game of Isflak in plain Python, continued from a state dict."""

    def __init__(self, sd: dict) -> None:
        sd = json.loads(json.dumps(sd))
        self.n = sd["options"]["num_players"]
        self.P = sd["options"]["penguins_per_player"]
        self.points = sd["options"]["card_points"]
        self.sd = sd

    def step(self, a: int) -> None:
        sd, n = self.sd, self.n
        assert a in brute_mask(sd)
        p = sd["current_player"]
        sd["steps"] += 1
        if sd["phase"] == "placement":
            k = sd["penguins"][p].index(None)
            sd["penguins"][p][k] = [a // COLS, a % COLS]
            if any(x is None for row in sd["penguins"] for x in row):
                sd["current_player"] = (p + 1) % n
                return
            sd["phase"] = "movement"
        else:
            k, d, s = decode_move(a)
            r0, c0 = sd["penguins"][p][k]
            path = [(r0 + DIRS[d][0] * i, c0 + DIRS[d][1] * i) for i in range(1, s + 1)]
            sd["penguins"][p][k] = list(path[s - 1])
            sd["piles"][p].append(sd["grid"][r0][c0])
            sd["grid"][r0][c0] = None
        q = (p + 1) % n
        for _ in range(n):
            if not sd["out"][q]:
                if ref_moves(sd, q):
                    sd["current_player"] = q
                    return
                for k, pos in enumerate(sd["penguins"][q]):  # out: bank under penguins
                    if pos is not None:
                        sd["piles"][q].append(sd["grid"][pos[0]][pos[1]])
                        sd["grid"][pos[0]][pos[1]] = None
                        sd["penguins"][q][k] = None
                sd["out"][q] = True
            q = (q + 1) % n
        sd["phase"], sd["current_player"] = "end", None

    def scores(self) -> list[tuple[int, int]]:
        return [(sum(pts(c, self.points) for c in pile), len(pile)) for pile in self.sd["piles"]]


def ref_winners(scores) -> list[bool]:
    best = max(scores)
    return [s == best for s in scores]


def ref_rewards(mode: str, scores) -> list[float]:
    if mode == "points":
        return [float(p) for p, _ in scores]
    w = ref_winners(scores)
    return [0.0] * len(w) if all(w) else [1.0 if x else -1.0 for x in w]


def ref_obs(sd: dict, seat: int) -> list[int]:
    n, P, points = len(sd["out"]), sd["options"]["penguins_per_player"], \
        sd["options"]["card_points"]
    owner = {tuple(p): q for q, row in enumerate(sd["penguins"]) for p in row if p is not None}
    cells = [(r, c) for r in range(ROWS) for c in range(COLS)]
    out = [-1 if sd["grid"][r][c] is None else pts(sd["grid"][r][c], points) for r, c in cells]
    out += [0 if (r, c) not in owner else 1 + (owner[(r, c)] - seat) % n for r, c in cells]
    for i in range(n):
        q = (seat + i) % n
        out += [-1 if p is None else p[0] * COLS + p[1] for p in sd["penguins"][q]]
        out += [int(sd["out"][q]), sum(pts(c, points) for c in sd["piles"][q]),
                len(sd["piles"][q])]
    cur = sd["current_player"]
    placed = sum(p is not None for row in sd["penguins"] for p in row) \
        if sd["phase"] == "placement" else n * P
    out += [PHASES.index(sd["phase"]),
            -1 if cur is None else (cur - seat) % n, placed]
    return out


def cards_in(sd: dict) -> list[str]:
    return [c for row in sd["grid"] for c in row if c is not None] + \
        [c for pile in sd["piles"] for c in pile]


# =============================================================================================
# Helpers on the real env
# =============================================================================================
def make(n: int = 2, **kw):
    return card_envs.make_raw(ENV_ID, num_players=n, **kw)


def mask_of(env) -> set[int]:
    return set(np.flatnonzero(env.observe(env.agent_selection)["action_mask"]).tolist())


def load(n: int, grid, penguins, piles=None, out=None, cur=0, phase="movement", **opts):
    """A raw env loaded (through ``load_state_dict``) with the given position."""
    env = make(n, **opts)
    env.reset(seed=0)
    d = env.state_dict()
    d.update(grid=grid, penguins=penguins, piles=piles or [[] for _ in range(n)],
             out=out or [False] * n, current_player=cur, phase=phase)
    env.load_state_dict(json.loads(json.dumps(d)))
    return env


def deck_grid(seed: int = 0, avoid_aces: bool = True):
    """A 5x7 grid of distinct cards (no aces unless asked) and the unused cards."""
    rnd = random.Random(seed)
    pool = [c for c in ALL_CARDS if not (avoid_aces and c[0] == "A")]
    rnd.shuffle(pool)
    grid = [pool[r * COLS:(r + 1) * COLS] for r in range(ROWS)]
    return grid, pool[CELLS:]


def with_gaps(grid, gaps, seat_pile: int, n: int):
    """Remove the cards at ``gaps`` from ``grid`` into seat ``seat_pile``'s pile."""
    grid = [list(row) for row in grid]
    piles = [[] for _ in range(n)]
    for r, c in gaps:
        piles[seat_pile].append(grid[r][c])
        grid[r][c] = None
    return grid, piles
