"""A greedy If It Fits heuristic: build boxes where its own cats lie, keep them closed and
toy-rich, and put cats only where it leads.

The observation (layout: ``card_envs.if_it_fits.env``) is decoded into the table planes. For a
placement (cell, rotation) of a card the box it would be part of is found by a flood fill
through open-open sides (numba), and scored for the agent: its value (best toy count minus
sprayers, doubled when closed) if the agent has, or can add, the cat majority there, minus half
of it if another player leads. Decisions:

* **turn:** always draw (no sleeping cats).
* **play:** the box card with the best placement; a Princess when it takes a box worth at
  least 2 from a leading opponent, or when nothing else is playable.
* **cell / rotation / toy cell:** the best-scoring placement (ties: seeded RNG).
* **cat:** put an awake cat on the best slot if the box is worth >= 2 and the agent then leads
  there (or it is the last chance: the pile is almost gone); else skip.
* **toy slot:** the slot in the box where the agent's share is best.
* **Princess:** the opponent cat in the most valuable box an opponent leads.
* start cards, discards and everything else: the first legal action with the best simple
  score, otherwise random.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agents.base import Agent, legal_actions
from card_envs.core.jit import njit

NPL, TOYREC = 8, 6
A_HAND, A_ROT, A_DIR, A_START, A_END, A_DRAW, A_SLEEP, A_SKIP, A_PASS = \
    0, 3, 5, 9, 14, 16, 17, 18, 19
PHASES = ("start_card", "start_end", "start_rotation", "turn", "toy_slot", "toy_cell", "play",
          "cell", "rotation", "cat", "princess", "sleep_cell", "sleep_dir", "discard", "pass",
          "end")


@njit(cache=True)
def _nb(i: int, d: int, R: int, C: int) -> int:
    r, c = i // C, i % C
    if d == 0:
        return i - C if r > 0 else -1
    if d == 2:
        return i + C if r + 1 < R else -1
    if d == 1:
        return i + 1 if c + 1 < C else -1
    return i - 1 if c > 0 else -1


@njit(cache=True)
def box_eval(obs: np.ndarray, R: int, C: int, n: int, nt: int, cell: int, o: int, b0: int,
             b1: int, b2: int, sp: int, extra_cat: int, adv: int) -> tuple[float, float, int]:
    """Box of ``cell`` (a hypothetical card there with open bits ``o``, toys b0..b2, ``sp``
    sprayers; ``o < 0`` = the cell's current card). Returns (value, my share, can_take):
    my share = value if the agent (plus ``extra_cat`` awake cats) has the top cat count
    and an awake cat, -value/2 if an opponent leads, else 0; can_take = 1 if the cat rule
    allows the agent's cat there."""
    T = R * C
    S = T - C
    kind = obs[0:T]
    ob = np.zeros(T, np.int64)
    for i in range(T):
        if kind[i] >= 1 and kind[i] <= 3:
            ob[i] = obs[T + i]
    if o >= 0:
        ob[cell] = o
    inbox = np.zeros(T, np.bool_)
    stack = np.empty(T, np.int64)
    top = 0
    stack[0] = cell
    top = 1
    inbox[cell] = True
    toys = np.zeros(3, np.int64)
    spray = 0
    frontier = 0
    while top > 0:
        top -= 1
        i = stack[top]
        if i == cell and o >= 0:
            toys[0] += b0
            toys[1] += b1
            toys[2] += b2
            spray += sp
        else:
            for k in range(3):
                toys[k] += obs[(2 + k) * T + i]
            spray += obs[5 * T + i]
        for d in range(4):
            if not ob[i] & (1 << d):
                continue
            j = _nb(i, d, R, C)
            if j < 0:
                frontier += 1
                continue
            kj = kind[j] if j != cell else 1
            if kj == 0:
                frontier += 1
            elif kj <= 3 and ob[j] & (1 << ((d + 2) & 3)) and not inbox[j]:
                inbox[j] = True
                stack[top] = j
                top += 1
    cnt = np.zeros(8, np.int64)
    awake = np.zeros(8, np.int64)
    for s in range(S):
        code = obs[NPL * T + s]
        if code == 0:
            continue
        if inbox[s] and inbox[s + C]:
            if code <= 6:
                cnt[code] += 2
                awake[code] += 1
    y = NPL * T + S
    for k in range(nt):
        if obs[y + TOYREC * k]:
            s = obs[y + TOYREC * k + 1] * C + obs[y + TOYREC * k + 2]
            if inbox[s]:
                for t in range(3):
                    toys[t] += obs[y + TOYREC * k + 3 + t]
    for i in range(T):
        if kind[i] == 4:
            jd = obs[7 * T + i] - 1
            j = _nb(i, jd, R, C)
            if j >= 0 and inbox[j]:
                cnt[obs[6 * T + i]] += 1 if adv else 2
    best = max(toys[0], max(toys[1], toys[2]))
    value = float(best - spray) * (2.0 if frontier == 0 else 1.0)
    others = 0
    for q in range(2, n + 1):
        others = max(others, cnt[q])
    can = 1 if cnt[1] > 0 or (others == 0 and cnt[6] == 0) else 0
    mine = cnt[1] + 2 * extra_cat
    myaw = awake[1] + extra_cat
    share = 0.0
    if mine > 0 and myaw > 0 and mine >= others:
        share = value
    elif others > mine:
        share = -0.5 * value
    return value, share, can


class IfItFitsHeuristicAgent(Agent):
    name = "heuristic"

    def __init__(self, env_id: str = "if_it_fits_v0", seed: int | None = None,
                 **options: Any) -> None:
        super().__init__(env_id, seed=seed, **options)
        self.R, self.C = options.get("table", (11, 11))
        self.n = int(options.get("num_players", 2))
        self.adv = int(bool(options.get("advanced", False)))
        self.T = self.R * self.C
        self.S = self.T - self.C
        self.B = self.T + self.S
        deck = options.get("deck")
        self.nt = 3 if deck is None else len(deck["special_toy_cards"])
        self.X = NPL * self.T + self.S + TOYREC * self.nt

    # --- decoding ----------------------------------------------------------------------
    def _extra(self, obs: np.ndarray) -> dict[str, Any]:
        x, n = self.X, self.n
        hand = [obs[x + 9 * h:x + 9 * h + 9] for h in range(3)]
        y = x + 27 + 45 + 3
        sup = obs[y]
        y += 2 * n
        return {"hand": hand, "supply": int(sup), "pile": int(obs[y]),
                "phase": PHASES[int(obs[y + 1])], "sel": int(obs[y + 4]),
                "selstart": int(obs[y + 5]), "selcell": int(obs[y + 6]) * self.C +
                int(obs[y + 7]), "toy": obs[x + 72:x + 75]}

    def _place(self, obs: np.ndarray, cell: int, o: int, toys: np.ndarray, sp: int,
               supply: int) -> float:
        v, share, can = box_eval(obs, self.R, self.C, self.n, self.nt, cell, o, int(toys[0]),
                                 int(toys[1]), int(toys[2]), sp, 0, self.adv)
        if supply > 0 and can and share <= 0 and v >= 2 and self._slot_near(obs, cell, o):
            v2, share2, _ = box_eval(obs, self.R, self.C, self.n, self.nt, cell, o, int(toys[0]),
                                     int(toys[1]), int(toys[2]), sp, 1, self.adv)
            share = max(share, share2 - 0.5)
        return share + 0.01 * int(toys.sum()) - 0.3 * sp

    def _slot_near(self, obs: np.ndarray, cell: int, o: int) -> bool:
        T, C = self.T, self.C
        if o & 1 and cell >= C:
            j = cell - C
            if 1 <= obs[j] <= 3 and obs[T + j] & 4 and obs[NPL * T + j] == 0:
                return True
        if o & 4 and cell + C < T:
            j = cell + C
            if 1 <= obs[j] <= 3 and obs[T + j] & 1 and obs[NPL * T + cell] == 0:
                return True
        return False

    def _fits(self, obs: np.ndarray, cell: int, o: int) -> bool:
        T = self.T
        for d in range(4):
            j = _nb(cell, d, self.R, self.C)
            if j < 0 or not 1 <= obs[j] <= 3:
                continue
            if not obs[T + j] & (1 << ((d + 2) & 3)) and not o & (1 << d):
                return False
        return True

    @staticmethod
    def _rot(o: int, r: int) -> int:
        return o if r == 0 else ((o << 2) | (o >> 2)) & 15

    def _card(self, row: np.ndarray) -> tuple[int, np.ndarray, int]:
        o = sum(int(row[1 + d]) << d for d in range(4))
        return o, row[5:8].astype(np.int64), int(row[8])

    def _best_cell(self, obs: np.ndarray, cells: np.ndarray, o: int, toys: np.ndarray,
                   sp: int, supply: int, strict: bool) -> tuple[float, int]:
        best, arg = -1e9, int(cells[0])
        for c in cells:
            c = int(c)
            for r in range(2):
                orr = self._rot(o, r)
                if strict and not self._fits(obs, c, orr):
                    continue
                s = self._place(obs, c, orr, toys, sp, supply) + self.rng.random() * 1e-3
                if s > best:
                    best, arg = s, c
        return best, arg

    # --- policy ------------------------------------------------------------------------
    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        legal = legal_actions(action_mask)
        obs = observation.astype(np.int64)
        e = self._extra(obs)
        ph, T, B = e["phase"], self.T, self.B
        if ph == "turn":
            return B + A_DRAW
        if ph in ("cell", "rotation"):
            o, toys, sp = self._card(e["hand"][e["sel"]])
            strict = bool(self.adv) and not obs[-2]
            if ph == "cell":
                return self._best_cell(obs, legal, o, toys, sp, e["supply"], strict)[1]
            cell = e["selcell"]
            scores = [self._place(obs, cell, self._rot(o, int(a - B - A_ROT)), toys, sp,
                                  e["supply"]) + self.rng.random() * 1e-3 for a in legal]
            return int(legal[int(np.argmax(scores))])
        if ph == "play":
            best, arg = -1e9, int(legal[0])
            cells = np.flatnonzero((obs[:T] == 0) & self._frontier(obs))
            for a in legal:
                row = e["hand"][int(a - B)]
                if row[0] == 2:
                    s = self._princess_value(obs) - 1.0
                else:
                    o, toys, sp = self._card(row)
                    s = self._best_cell(obs, cells, o, toys, sp, e["supply"],
                                        False)[0] if cells.size else 0.0
                if s > best:
                    best, arg = s, int(a)
            return arg
        if ph == "cat":
            best, arg = -1e9, B + A_SKIP
            last = e["pile"] <= 2 * self.n
            for a in legal:
                if a >= B:
                    continue
                s = int(a - T)
                v, share, _ = box_eval(obs, self.R, self.C, self.n, self.nt, s, -1, 0, 0, 0, 0, 1,
                                       self.adv)
                if share > 0 and (v >= 2 or (last and v >= 1)) and v > best:
                    best, arg = v, int(a)
            return arg
        if ph == "toy_slot":
            scores = []
            for a in legal:
                s = int(a - T)
                v, share, _ = box_eval(obs, self.R, self.C, self.n, self.nt, s, -1, 0, 0, 0, 0, 0,
                                       self.adv)
                scores.append(share + self.rng.random() * 1e-3)
            return int(legal[int(np.argmax(scores))])
        if ph == "toy_cell":
            toys = e["toy"].astype(np.int64)
            return self._best_cell(obs, legal, 15, toys, 0, e["supply"], False)[1]
        if ph == "princess":
            scores = [self._target_value(obs, int(a)) + self.rng.random() * 1e-3
                      for a in legal]
            return int(legal[int(np.argmax(scores))])
        if ph == "pass":
            return B + A_PASS
        return int(legal[self.rng.randrange(legal.size)])

    def _frontier(self, obs: np.ndarray) -> np.ndarray:
        R, C = self.R, self.C
        occ = (obs[:self.T] > 0).reshape(R, C)
        f = np.zeros((R, C), bool)
        f[1:] |= occ[:-1]
        f[:-1] |= occ[1:]
        f[:, 1:] |= occ[:, :-1]
        f[:, :-1] |= occ[:, 1:]
        return f.ravel()

    def _target_value(self, obs: np.ndarray, a: int) -> float:
        T = self.T
        if a >= T:  # an awake cat on a slot
            s = a - T
            owner = obs[NPL * T + s]
            cell = s
        else:
            owner = obs[6 * T + a]
            cell = _nb(a, int(obs[7 * T + a]) - 1, self.R, self.C)
        v, share, _ = box_eval(obs, self.R, self.C, self.n, self.nt, cell, -1, 0, 0, 0, 0, 0,
                               self.adv)
        return (-share if owner != 1 else share - 5.0) + 0.1 * v

    def _princess_value(self, obs: np.ndarray) -> float:
        T, S = self.T, self.S
        best = -5.0
        for s in range(S):
            if 1 < obs[NPL * T + s] <= 5:
                best = max(best, self._target_value(obs, T + s))
        return best
