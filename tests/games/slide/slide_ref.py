"""Plain-Python reference of Slide's rules (push, sides, scoring, winners, rewards,
observation, a whole game, the determinization) and position helpers for the tests in
``tests/games/slide/``.

The reference is written from the rules (``docs/rules/slide.md``), not from the kernels; only
the constants (sides, pick offset, phase names, the face-down code, counts) come from
``card_envs.slide.layout``."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
from hypothesis import HealthCheck, settings

import card_envs
from card_envs.core.kernels import PHASE
from card_envs.slide.layout import (
    BOTTOM,
    COPIES,
    FACE,
    FACE_DOWN_CODE,
    GRID,
    LEFT,
    MID,
    NUM_VALUES,
    P_REVEAL,
    PHASES,
    PICK0,
    REVEAL,
    RIGHT,
    ROUNDS,
    SLOTS,
    TOP,
)
from card_envs.slide.manifest import MANIFEST

ENV_ID = MANIFEST.env_id


def hyp(max_examples: int = 100) -> settings:
    return settings(max_examples=max_examples, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


# =============================================================================================
# Pure-Python reference of the rules (written from docs/rules/slide.md, not from the code)
# =============================================================================================
def pick_action(value: int, side: int) -> int:
    return PICK0 + (value - 1) * 4 + side


def edge_end(empty: int, side: int) -> tuple[int, int]:
    """The grid position where a card pushed in from ``side`` lands (row/column of ``empty``)."""
    r, c = divmod(empty, 4)
    return {LEFT: (r, 0), RIGHT: (r, 3), TOP: (0, c), BOTTOM: (3, c)}[side]


def ref_sides(empty: int) -> list[int]:
    """Sides allowed by the spec: every edge of the gap's row/column whose end is not the gap."""
    return [s for s in range(4) if edge_end(empty, s) != divmod(empty, 4)]


def ref_push(grid, face, empty: int, side: int, value: int):
    """Push ``value`` (face up) from ``side``: the line from that edge to the gap moves one
    place toward the gap, values and face flags together. Returns new (grid, face)."""
    r, c = divmod(empty, 4)
    g = [list(row) for row in grid]
    f = [list(row) for row in face]
    assert g[r][c] == 0, "push needs the gap"
    line = {LEFT: [(r, k) for k in range(4)], RIGHT: [(r, k) for k in (3, 2, 1, 0)],
            TOP: [(k, c) for k in range(4)], BOTTOM: [(k, c) for k in (3, 2, 1, 0)]}[side]
    seg = line[:line.index((r, c)) + 1]  # edge ... gap
    assert len(seg) >= 2, "pushing straight into the gap is not allowed"
    moved = [(value, True)] + [(g[i][j], f[i][j]) for i, j in seg[:-1]]
    for (i, j), (v, up) in zip(seg, moved):
        g[i][j], f[i][j] = v, up
    return g, f


def ref_score(grid) -> tuple[int, int]:
    """Final scoring by connected groups: every group of >= 2 orthogonally connected equal
    values vanishes; returns (points, cards left)."""
    seen: set[tuple[int, int]] = set()
    pts = cards = 0
    for r in range(4):
        for c in range(4):
            if (r, c) in seen:
                continue
            v = grid[r][c]
            comp, stack = [(r, c)], [(r, c)]
            seen.add((r, c))
            while stack:
                i, j = stack.pop()
                for a, b in ((i - 1, j), (i + 1, j), (i, j - 1), (i, j + 1)):
                    if 0 <= a < 4 and 0 <= b < 4 and (a, b) not in seen and grid[a][b] == v:
                        seen.add((a, b))
                        comp.append((a, b))
                        stack.append((a, b))
            if len(comp) == 1 and v:
                pts += v
                cards += 1
    return pts, cards


def ref_winners(scores: list[tuple[int, int]]) -> list[bool]:
    """Lowest points, then fewest cards; equal (points, cards) share the win."""
    best = min(scores)
    return [s == best for s in scores]


def ref_rewards(mode: str, scores: list[tuple[int, int]]) -> list[float]:
    if mode == "points":
        return [-float(p) for p, _ in scores]
    w = ref_winners(scores)
    if all(w):
        return [0.0] * len(w)
    return [1.0 if x else -1.0 for x in w]


class RefSlide:
    """A whole game of Slide in plain Python, started from a dealt set of grids."""

    def __init__(self, n: int, grids, first: int) -> None:
        self.n = n
        self.grids = [[list(row) for row in g] for g in grids]
        self.faces = [[[False] * 4 for _ in range(4)] for _ in range(n)]
        self.middle: list[int] = []
        self.round = 0
        self.first = first
        self.phase = "reveal"
        self.cur: int | None = first
        self.reveals: list[int | None] = [None] * n
        self.steps = 0
        self.reveal_phases = 1

    def legal(self) -> list[int]:
        if self.phase == "end":
            return []
        p = self.cur
        if self.phase == "reveal":
            return [r * 4 + c for r in range(4) for c in range(4) if not self.faces[p][r][c]]
        empty = self.reveals[p]
        return sorted(pick_action(v, s) for v in set(self.middle) for s in ref_sides(empty))

    def step(self, a: int) -> None:
        assert a in self.legal()
        p, n = self.cur, self.n
        nxt = (p + 1) % n
        self.steps += 1
        if self.phase == "reveal":
            self.reveals[p] = a
            if nxt != self.first:
                self.cur = nxt
                return
            for q in range(n):  # simultaneous: resolved once all have chosen
                r, c = divmod(self.reveals[q], 4)
                self.middle.append(self.grids[q][r][c])
                self.grids[q][r][c] = 0
                self.faces[q][r][c] = False
            self.phase, self.cur = "pick", self.first
            return
        v, side = divmod(a - PICK0, 4)
        self.middle.remove(v + 1)
        self.grids[p], self.faces[p] = ref_push(self.grids[p], self.faces[p], self.reveals[p],
                                                side, v + 1)
        if nxt != self.first:
            self.cur = nxt
            return
        assert not self.middle
        if self.round < ROUNDS - 1:
            self.round += 1
            self.first = (self.first + 1) % n  # token passes left
            self.cur = self.first
            self.phase = "reveal"
            self.reveals = [None] * n
            self.reveal_phases += 1
            return
        self.phase, self.cur = "end", None

    def scores(self) -> list[tuple[int, int]]:
        return [ref_score(g) for g in self.grids]


def ref_obs(sd: dict, seat: int) -> list[int]:
    """Observation of ``seat`` computed from the full state dict per the env docstring table."""
    n = len(sd["grids"])
    out: list[int] = []
    for i in range(n):
        q = (seat + i) % n
        for r in range(4):
            for c in range(4):
                v, up = sd["grids"][q][r][c], sd["face_up"][q][r][c]
                out.append(0 if v == 0 else (v if up else FACE_DOWN_CODE))
    mid = Counter(sd["middle"])
    visible = Counter(v for q in range(n) for r in range(4) for c in range(4)
                      for v in [sd["grids"][q][r][c]] if v and sd["face_up"][q][r][c])
    values = range(1, NUM_VALUES + 1)
    out += [mid[v] for v in values]
    out += [COPIES - mid[v] - visible[v] for v in values]
    cur = sd["current_player"]
    own = sd["reveals"][seat]
    out += [PHASES.index(sd["phase"]), sd["round"], (sd["first_player"] - seat) % n,
            -1 if cur is None else (cur - seat) % n,
            own if (sd["phase"] == "reveal" and own is not None) else -1]
    return out


def brute_mask(sd: dict) -> set[int]:
    """Legal actions of the seat to act, by brute force from the full state dict (the gap is
    found in the grid, not taken from ``reveals``)."""
    if sd["phase"] == "end":
        return set()
    p = sd["current_player"]
    g, f = sd["grids"][p], sd["face_up"][p]
    if sd["phase"] == "reveal":
        return {r * 4 + c for r in range(4) for c in range(4) if g[r][c] > 0 and not f[r][c]}
    gaps = [r * 4 + c for r in range(4) for c in range(4) if g[r][c] == 0]
    assert len(gaps) == 1
    return {pick_action(v, s) for v in set(sd["middle"]) for s in ref_sides(gaps[0])}


def ref_resample(game, state: np.ndarray, observer: int,
                 rng: np.random.Generator) -> np.ndarray:
    """The determinization in numpy (Slide's ``resample`` before the kernel ``determinize``):
    every face-down value redrawn from the cards nobody has seen, other seats' unresolved
    reveal choices redrawn uniformly among their face-down slots; the RNG words are kept."""
    out = state.copy()
    n = game.num_players
    g = out[GRID:GRID + SLOTS * n]
    f = out[FACE:FACE + SLOTS * n]
    down = np.flatnonzero((g > 0) & (f == 0))
    seen = np.bincount(g[f == 1], minlength=NUM_VALUES + 1)[1:] + out[MID:MID + NUM_VALUES]
    pool = np.repeat(np.arange(1, NUM_VALUES + 1), COPIES - seen)
    g[down] = rng.choice(pool, size=down.size, replace=False)
    if out[PHASE] == P_REVEAL:
        for q in range(n):
            if q != observer and out[REVEAL + q] >= 0:
                slots = np.flatnonzero(f[q * SLOTS:(q + 1) * SLOTS] == 0)
                out[REVEAL + q] = int(rng.choice(slots))
    return out


# =============================================================================================
# Helpers on the real env
# =============================================================================================
def make(n: int = 2, **kw) -> card_envs.core.env.CardEnv:
    return card_envs.make_raw(ENV_ID, num_players=n, **kw)


def mask_of(env) -> set[int]:
    return set(np.flatnonzero(env.observe(env.agent_selection)["action_mask"]).tolist())


def random_action(env, rng: np.random.Generator) -> int:
    return int(rng.choice(env.legal_actions()))


def load_pick_state(n, grids, faces, middle, round_, first, cur, reveals,
                    reward_mode="win"):
    """A raw env loaded (through ``load_state_dict``) with a pick-phase position."""
    env = make(n, reward_mode=reward_mode)
    env.reset(seed=0)
    d = env.state_dict()
    d.update(phase="pick", current_player=cur, grids=grids, face_up=faces,
             middle=sorted(middle), round=round_, first_player=first, reveals=reveals)
    env.load_state_dict(json.loads(json.dumps(d)))
    return env


def last_pick_env(finals, reward_mode="win"):
    """Raw env one pick before the end: seats 0..n-2 have their final grid (all face up); the
    last seat (n-1) has a gap at (0,1) and pushing ``finals[-1][0][0]`` from the left gives
    its final grid. Returns (env, the last action)."""
    n = len(finals)
    last = finals[-1]
    pre = [list(row) for row in last]
    pre[0] = [last[0][1], 0, last[0][2], last[0][3]]
    grids = [[list(r) for r in g] for g in finals[:-1]] + [pre]
    faces = [[[v != 0 for v in row] for row in g] for g in grids]
    env = load_pick_state(n, grids, faces, [last[0][0]], 15, 0, n - 1, [1] * n,
                          reward_mode=reward_mode)
    return env, pick_action(last[0][0], LEFT)


def full_counts(sd: dict) -> Counter:
    c = Counter(v for g in sd["grids"] for row in g for v in row if v)
    c.update(sd["middle"])
    return c


EXAMPLE_GRID = [[1, 1, 5, 9], [2, 1, 5, 9], [3, 3, 3, 8], [4, 6, 7, 8]]
CHECKER_9_10 = [[10, 9, 10, 9], [9, 10, 9, 10], [10, 9, 10, 9], [9, 10, 9, 10]]  # 152, 16
CHECKER_7_10 = [[10, 7, 10, 7], [7, 10, 7, 10], [10, 7, 10, 7], [7, 10, 7, 10]]  # 136, 16
TWO_SINGLES_19 = [[10, 2, 2, 3], [4, 4, 9, 3], [5, 5, 6, 6], [7, 7, 8, 8]]  # 19 points, 2 cards
