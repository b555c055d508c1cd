"""A greedy If It Fits heuristic: build boxes where its own cats lie, keep them closed and
toy-rich, and put cats only where it leads.

The observation (table: ``card_envs.if_it_fits.env``; offsets: ``card_envs.if_it_fits.layout``)
is decoded into the table planes. For a placement (cell, rotation) of a card the box it would
be part of is found by a flood fill through open-open sides (numba), and scored for the agent:
its value (best toy count minus sprayers, doubled when closed) if the agent has, or can add,
the cat majority there, minus half of it if another player leads. Decisions:

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

from card_envs.agents.base import Agent, legal_actions
from card_envs.core.jit import njit
from card_envs.if_it_fits.board import rot_open
from card_envs.if_it_fits.game import IfItFitsGame, default_deck
from card_envs.if_it_fits.layout import (
    A_DRAW,
    A_HAND,
    A_PASS,
    A_ROT,
    A_SKIP,
    ALL_OPEN,
    CARD_REC,
    CK_BOX,
    CK_EMPTY,
    CK_SLEEPER,
    CR_KIND,
    CR_SIDES,
    CR_SPRAY,
    CR_TOYS,
    HANDMAX,
    HK_PRINCESS,
    MAX_PLAYERS,
    NPLANES,
    O_HAND,
    O_SEATS,
    O_TOY,
    OPEN_N,
    OPEN_S,
    PHASES,
    PK_JOIN,
    PK_KIND,
    PK_OWNER,
    PK_SIDES,
    PK_SPRAY,
    PK_TOYS,
    REL_SELF,
    SLOT_PRINCESS,
    SLOT_TOY,
    TOYREC,
    TR_COL,
    TR_ON,
    TR_ROW,
    TR_TOYS,
    Y_PHASE,
    Y_PILE,
    Y_RELAX,
    Y_SEL,
    Y_SELCELL,
    Y_SELSTART,
    obs_public,
    obs_tail,
)


@njit(cache=True)
def _nb(i: int, d: int, R: int, C: int) -> int:
    """The cell next to ``i`` in direction ``d`` on an R x C table, or -1."""
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
    kind = obs[PK_KIND * T:PK_KIND * T + T]
    ob = np.zeros(T, np.int64)
    for i in range(T):
        if CK_EMPTY < kind[i] < CK_SLEEPER:  # a card
            ob[i] = obs[PK_SIDES * T + i]
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
                toys[k] += obs[(PK_TOYS + k) * T + i]
            spray += obs[PK_SPRAY * T + i]
        for d in range(4):
            if not ob[i] & (1 << d):
                continue
            j = _nb(i, d, R, C)
            if j < 0:
                frontier += 1
                continue
            kj = kind[j] if j != cell else CK_BOX
            if kj == CK_EMPTY:
                frontier += 1
            elif kj < CK_SLEEPER and ob[j] & (1 << ((d + 2) & 3)) and not inbox[j]:
                inbox[j] = True
                stack[top] = j
                top += 1
    cnt = np.zeros(SLOT_TOY + 1, np.int64)  # per owner code (relative seat + 1, Princess)
    awake = np.zeros(SLOT_TOY + 1, np.int64)
    for s in range(S):
        code = obs[NPLANES * T + s]
        if code == 0:
            continue
        if inbox[s] and inbox[s + C]:
            if code <= SLOT_PRINCESS:
                cnt[code] += 2
                awake[code] += 1
    y = NPLANES * T + S
    for k in range(nt):
        rec = y + TOYREC * k
        if obs[rec + TR_ON]:
            s = obs[rec + TR_ROW] * C + obs[rec + TR_COL]
            if inbox[s]:
                for t in range(3):
                    toys[t] += obs[rec + TR_TOYS + t]
    for i in range(T):
        if kind[i] == CK_SLEEPER:
            jd = obs[PK_JOIN * T + i] - 1
            j = _nb(i, jd, R, C)
            if j >= 0 and inbox[j]:
                cnt[obs[PK_OWNER * T + i]] += 1 if adv else 2
    best = max(toys[0], max(toys[1], toys[2]))
    value = float(best - spray) * (2.0 if frontier == 0 else 1.0)
    others = 0
    for q in range(REL_SELF + 1, n + 1):
        others = max(others, cnt[q])
    can = 1 if cnt[REL_SELF] > 0 or (others == 0 and cnt[SLOT_PRINCESS] == 0) else 0
    mine = cnt[REL_SELF] + 2 * extra_cat
    myaw = awake[REL_SELF] + extra_cat
    share = 0.0
    if mine > 0 and myaw > 0 and mine >= others:
        share = value
    elif others > mine:
        share = -0.5 * value
    return value, share, can


class IfItFitsHeuristicAgent(Agent):
    """The greedy heuristic of this module's docstring."""
    name = "heuristic"

    def __init__(self, env_id: str = "if_it_fits_v0", seed: int | None = None,
                 **options: Any) -> None:
        super().__init__(env_id, seed=seed, **options)
        spec = IfItFitsGame.option_specs()
        self.R, self.C = options.get("table", spec["table"].default)
        self.n = int(options.get("num_players", spec["num_players"].default))
        self.adv = int(bool(options.get("advanced", spec["advanced"].default)))
        self.T = self.R * self.C
        self.S = self.T - self.C
        self.B = self.T + self.S
        deck = options.get("deck")
        deck = default_deck() if deck is None else deck
        self.nt = len(deck["special_toy_cards"])
        self.X = obs_public(self.R, self.C, self.nt)
        self.Y = obs_tail(self.R, self.C, self.nt, self.n)

    # --- decoding ----------------------------------------------------------------------
    def _extra(self, obs: np.ndarray) -> dict[str, Any]:
        """The own hand, supply, drawn toy card and the scalars of the observation."""
        x, y = self.X, self.Y
        hand = [obs[x + O_HAND + CARD_REC * h:x + O_HAND + CARD_REC * (h + 1)]
                for h in range(HANDMAX)]
        sup = obs[x + O_SEATS]  # relative seat 0: the agent
        return {"hand": hand, "supply": int(sup), "pile": int(obs[y + Y_PILE]),
                "phase": PHASES[int(obs[y + Y_PHASE])], "sel": int(obs[y + Y_SEL]),
                "selstart": int(obs[y + Y_SELSTART]), "selcell": int(obs[y + Y_SELCELL]) *
                self.C + int(obs[y + Y_SELCELL + 1]), "toy": obs[x + O_TOY:x + O_TOY + 3]}

    def _place(self, obs: np.ndarray, cell: int, o: int, toys: np.ndarray, sp: int,
               supply: int) -> float:
        """Score of a card (open bits ``o``) in ``cell``: the agent's share of its box."""
        v, share, can = box_eval(obs, self.R, self.C, self.n, self.nt, cell, o, int(toys[0]),
                                 int(toys[1]), int(toys[2]), sp, 0, self.adv)
        if supply > 0 and can and share <= 0 and v >= 2 and self._slot_near(obs, cell, o):
            v2, share2, _ = box_eval(obs, self.R, self.C, self.n, self.nt, cell, o, int(toys[0]),
                                     int(toys[1]), int(toys[2]), sp, 1, self.adv)
            share = max(share, share2 - 0.5)
        return share + 0.01 * int(toys.sum()) - 0.3 * sp

    def _is_card(self, obs: np.ndarray, j: int) -> bool:
        """Cell ``j`` holds a card (not empty, not a sleeping cat)."""
        return CK_EMPTY < obs[PK_KIND * self.T + j] < CK_SLEEPER

    def _slot_near(self, obs: np.ndarray, cell: int, o: int) -> bool:
        """A card with open bits ``o`` in ``cell`` would make a free cat slot."""
        T, C = self.T, self.C
        sides, slots = PK_SIDES * T, NPLANES * T
        if o & OPEN_N and cell >= C:
            j = cell - C
            if self._is_card(obs, j) and obs[sides + j] & OPEN_S and obs[slots + j] == 0:
                return True
        if o & OPEN_S and cell + C < T:
            j = cell + C
            if self._is_card(obs, j) and obs[sides + j] & OPEN_N and obs[slots + cell] == 0:
                return True
        return False

    def _fits(self, obs: np.ndarray, cell: int, o: int) -> bool:
        """The advanced no-wall-to-wall rule allows open bits ``o`` in ``cell``."""
        sides = PK_SIDES * self.T
        for d in range(4):
            j = _nb(cell, d, self.R, self.C)
            if j < 0 or not self._is_card(obs, j):
                continue
            if not obs[sides + j] & (1 << ((d + 2) & 3)) and not o & (1 << d):
                return False
        return True

    @staticmethod
    def _rot(o: int, r: int) -> int:
        return int(rot_open(o, r))

    def _card(self, row: np.ndarray) -> tuple[int, np.ndarray, int]:
        """Open bits, toys and sprayers of an observed card row."""
        o = sum(int(row[CR_SIDES + d]) << d for d in range(4))
        return o, row[CR_TOYS:CR_TOYS + 3].astype(np.int64), int(row[CR_SPRAY])

    def _best_cell(self, obs: np.ndarray, cells: np.ndarray, o: int, toys: np.ndarray,
                   sp: int, supply: int, strict: bool) -> tuple[float, int]:
        """The best (score, cell) for the card over ``cells`` and both rotations."""
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
        """The action for the phase (see the module docstring)."""
        legal = legal_actions(action_mask)
        obs = observation.astype(np.int64)
        e = self._extra(obs)
        ph, T, B = e["phase"], self.T, self.B
        if ph == "turn":
            return B + A_DRAW
        if ph in ("cell", "rotation"):
            o, toys, sp = self._card(e["hand"][e["sel"]])
            strict = bool(self.adv) and not obs[self.Y + Y_RELAX]
            if ph == "cell":
                return self._best_cell(obs, legal, o, toys, sp, e["supply"], strict)[1]
            cell = e["selcell"]
            scores = [self._place(obs, cell, self._rot(o, int(a - B - A_ROT)), toys, sp,
                                  e["supply"]) + self.rng.random() * 1e-3 for a in legal]
            return int(legal[int(np.argmax(scores))])
        if ph == "play":
            best, arg = -1e9, int(legal[0])
            cells = np.flatnonzero((obs[PK_KIND * T:PK_KIND * T + T] == CK_EMPTY) &
                                   self._frontier(obs))
            for a in legal:
                row = e["hand"][int(a - B - A_HAND)]
                if row[CR_KIND] == HK_PRINCESS:
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
            return self._best_cell(obs, legal, ALL_OPEN, toys, 0, e["supply"], False)[1]
        if ph == "princess":
            scores = [self._target_value(obs, int(a)) + self.rng.random() * 1e-3
                      for a in legal]
            return int(legal[int(np.argmax(scores))])
        if ph == "pass":
            return B + A_PASS
        return int(legal[self.rng.randrange(legal.size)])

    def _frontier(self, obs: np.ndarray) -> np.ndarray:
        """Cells next to an occupied cell (boolean, per cell)."""
        R, C = self.R, self.C
        occ = (obs[PK_KIND * self.T:PK_KIND * self.T + self.T] != CK_EMPTY).reshape(R, C)
        f = np.zeros((R, C), bool)
        f[1:] |= occ[:-1]
        f[:-1] |= occ[1:]
        f[:, 1:] |= occ[:, :-1]
        f[:, :-1] |= occ[:, 1:]
        return f.ravel()

    def _target_value(self, obs: np.ndarray, a: int) -> float:
        """Value of replacing the cat at action ``a`` (slot or cell) by a Princess."""
        T = self.T
        if a >= T:  # an awake cat on a slot
            s = a - T
            owner = obs[NPLANES * T + s]
            cell = s
        else:
            owner = obs[PK_OWNER * T + a]
            cell = _nb(a, int(obs[PK_JOIN * T + a]) - 1, self.R, self.C)
        v, share, _ = box_eval(obs, self.R, self.C, self.n, self.nt, cell, -1, 0, 0, 0, 0, 0,
                               self.adv)
        return (-share if owner != REL_SELF else share - 5.0) + 0.1 * v

    def _princess_value(self, obs: np.ndarray) -> float:
        """The best value of playing a Princess on an opponent's awake cat."""
        T, S = self.T, self.S
        best = -5.0
        for s in range(S):
            if REL_SELF < obs[NPLANES * T + s] <= MAX_PLAYERS:  # an opponent's awake cat
                best = max(best, self._target_value(obs, T + s))
        return best
