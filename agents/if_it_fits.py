"""A greedy If It Fits heuristic: build boxes where its own cats lie, keep them closed and
toy-rich, and put cats only where it leads.

The observation (table: ``card_envs.if_it_fits.env``; offsets: ``card_envs.if_it_fits.layout``)
is replayed into an engine state (``card_envs.if_it_fits.parts.scratch``, the features' own
replay), and every rule is asked of the game's rule queries (:mod:`card_envs.if_it_fits.queries`):
the box a placement (cell, rotation) of a card would be part of, its value (best toy count
minus sprayers, doubled when closed), the cats as the majority counts them, the cat rule, the
cat slots it opens and the advanced no-wall-to-wall rule. A placement is scored for the agent:
the box's value if the agent has, or can add, the cat majority there, minus half of it if
another player leads. Decisions:

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
from card_envs.core.kernels import C_PLAYERS
from card_envs.if_it_fits import layout as L
from card_envs.if_it_fits.game import IfItFitsGame
from card_envs.if_it_fits.parts.scratch import scratch, sizes
from card_envs.if_it_fits.queries import (
    around,
    box_allows,
    box_counters,
    box_value,
    card_box,
    cat_count,
    find,
    fits,
    free_cells,
    rot_open,
    slots_opened,
)

_NO_TOYS = np.zeros(3, np.int64)
#: the phases whose decision reads the table (the others draw, pass or pick at random)
_TABLE_PHASES = ("cell", "rotation", "play", "cat", "toy_slot", "toy_cell", "princess")


@njit(cache=True)
def box_eval(st: np.ndarray, cfg: np.ndarray, W: np.ndarray, near: np.ndarray, cell: int,
             o: int, b0: int, b1: int, b2: int, sp: int, extra_cat: int
             ) -> tuple[float, float, int]:
    """Box of ``cell`` on the replayed table ``st`` (box records in ``W``, row ``T`` spare;
    ``near``: a row per cell for :func:`~card_envs.if_it_fits.queries.around`):
    a hypothetical card there with open bits ``o``, toys b0..b2 and ``sp`` sprayers, or
    ``o < 0``: the box the cell (or the slot ``cell``) is in. Returns (value, my share,
    can_take): my share = value if the agent (seat 0, plus ``extra_cat`` awake cats) has the
    top cat count and an awake cat, -value/2 if an opponent leads, else 0; can_take = 1 if
    the cat rule allows the agent's cat there."""
    n, adv = cfg[C_PLAYERS], cfg[L.CF_ADV]
    if o >= 0:
        r = cfg[L.CF_ROWS] * cfg[L.CF_COLS]
        around(st, cfg, W, cell, near)
        card_box(W, near, cell, o, b0, b1, b2, sp, r)
    else:
        r = find(st, cfg, cell)
    value = float(box_value(W, r))
    others = 0
    for q in range(1, n):
        others = max(others, cat_count(W, r, q, adv))
    can = 1 if box_allows(W, r, 0, n) else 0
    mine = cat_count(W, r, 0, adv) + 2 * extra_cat
    myaw = W[r, L.B_AWAKE] + extra_cat
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
        game = IfItFitsGame(**options)
        self.cfg = game.cfg
        self.R, self.C, self.n = game.rows, game.cols, game.num_players
        self.adv = int(bool(game.options["advanced"]))
        self.T, self.S, self.B = game.T, game.S, game.B
        self.X = L.obs_public(self.R, self.C, game.nt)
        self.Y = L.obs_tail(self.R, self.C, game.nt, self.n)
        ns, nc = sizes(self.cfg)  # the replay's buffers, zeroed for every decision
        self.st = np.zeros(ns, np.int32)
        self.scfg = np.zeros(nc, np.int32)
        self.W = np.zeros((self.T + 1, L.BOX_ROW), np.int32)
        self.near = np.zeros((self.T, L.NEAR_ROW), np.int32)

    # --- decoding ----------------------------------------------------------------------
    def _table(self, observation: np.ndarray) -> None:
        """The observed table replayed into ``self.st`` / ``self.scfg`` (hand card ``h`` is
        card ``T + h`` there) and its boxes into ``self.W``."""
        for buf in (self.st, self.scfg, self.W, self.near):
            buf.fill(0)
        scratch(np.ascontiguousarray(observation, np.int8), self.cfg, self.st, self.scfg)
        box_counters(self.st, self.scfg, self.W)

    def _hand(self, h: int) -> tuple[int, np.ndarray, int]:
        """Open bits, toys and sprayers of the own hand card at position ``h``."""
        tb = L.CF_TABLE + (self.T + h) * L.FIELDS
        return (int(self.scfg[tb + L.F_OPEN]),
                self.scfg[tb + L.F_BALL:tb + L.F_BALL + 3].astype(np.int64),
                int(self.scfg[tb + L.F_SPRAY]))

    def _eval(self, cell: int, o: int, toys: np.ndarray, sp: int,
              extra_cat: int) -> tuple[float, float, int]:
        """:func:`box_eval` on the replayed table."""
        return box_eval(self.st, self.scfg, self.W, self.near, cell, o, int(toys[0]),
                        int(toys[1]), int(toys[2]), sp, extra_cat)

    def _place(self, cell: int, o: int, toys: np.ndarray, sp: int, supply: int) -> float:
        """Score of a card (open bits ``o``) in ``cell``: the agent's share of its box."""
        v, share, can = self._eval(cell, o, toys, sp, 0)
        if supply > 0 and can and share <= 0 and v >= 2 and \
                slots_opened(self.st, self.scfg, cell, o) > 0:
            v2, share2, _ = self._eval(cell, o, toys, sp, 1)
            share = max(share, share2 - 0.5)
        return share + 0.01 * int(toys.sum()) - 0.3 * sp

    def _best_cell(self, cells: np.ndarray, o: int, toys: np.ndarray, sp: int, supply: int,
                   strict: bool) -> tuple[float, int]:
        """The best (score, cell) for the card over ``cells`` and both rotations."""
        best, arg = -1e9, int(cells[0])
        for c in cells:
            c = int(c)
            for r in range(2):
                orr = int(rot_open(o, r))
                if strict and not fits(self.st, self.scfg, c, orr):
                    continue
                s = self._place(c, orr, toys, sp, supply) + self.rng.random() * 1e-3
                if s > best:
                    best, arg = s, c
        return best, arg

    # --- policy ------------------------------------------------------------------------
    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """The action for the phase (see the module docstring)."""
        legal = legal_actions(action_mask)
        obs = observation.astype(np.int64)
        y = self.Y
        ph, T, B = L.PHASES[int(obs[y + L.Y_PHASE])], self.T, self.B
        if ph == "turn":
            return B + L.A_DRAW
        if ph == "pass":
            return B + L.A_PASS
        if ph not in _TABLE_PHASES:
            return int(legal[self.rng.randrange(legal.size)])
        self._table(observation)
        supply = int(obs[self.X + L.O_SEATS])  # relative seat 0: the agent
        if ph in ("cell", "rotation"):
            o, toys, sp = self._hand(int(obs[y + L.Y_SEL]))
            strict = bool(self.adv) and not obs[y + L.Y_RELAX]
            if ph == "cell":
                return self._best_cell(legal, o, toys, sp, supply, strict)[1]
            cell = int(self.st[L.S_SELCELL])
            scores = [self._place(cell, int(rot_open(o, int(a - B - L.A_ROT))), toys, sp,
                                  supply) + self.rng.random() * 1e-3 for a in legal]
            return int(legal[int(np.argmax(scores))])
        if ph == "play":
            best, arg = -1e9, int(legal[0])
            cells = free_cells(self.st, self.scfg)
            for a in legal:
                h = int(a - B - L.A_HAND)
                if int(self.st[L.S_HAND + h]) == int(self.scfg[L.CF_NC]):  # a Princess
                    s = self._princess_value(obs) - 1.0
                else:
                    o, toys, sp = self._hand(h)
                    s = self._best_cell(cells, o, toys, sp, supply, False)[0] \
                        if cells.size else 0.0
                if s > best:
                    best, arg = s, int(a)
            return arg
        if ph == "cat":
            best, arg = -1e9, B + L.A_SKIP
            last = int(obs[y + L.Y_PILE]) <= 2 * self.n
            for a in legal:
                if a >= B:
                    continue
                v, share, _ = self._eval(int(a - T), -1, _NO_TOYS, 0, 1)
                if share > 0 and (v >= 2 or (last and v >= 1)) and v > best:
                    best, arg = v, int(a)
            return arg
        if ph == "toy_slot":
            scores = []
            for a in legal:
                v, share, _ = self._eval(int(a - T), -1, _NO_TOYS, 0, 0)
                scores.append(share + self.rng.random() * 1e-3)
            return int(legal[int(np.argmax(scores))])
        if ph == "toy_cell":
            x = self.X + L.O_TOY
            toys = obs[x:x + 3].astype(np.int64)
            return self._best_cell(legal, L.ALL_OPEN, toys, 0, supply, False)[1]
        scores = [self._target_value(obs, int(a)) + self.rng.random() * 1e-3
                  for a in legal]  # princess
        return int(legal[int(np.argmax(scores))])

    def _target_value(self, obs: np.ndarray, a: int) -> float:
        """Value of replacing the cat at action ``a`` (slot or cell) by a Princess."""
        T = self.T
        if a >= T:  # an awake cat on a slot
            owner = obs[L.NPLANES * T + a - T]
            cell = a - T
        else:  # a sleeping cat: it lies in the box it joined
            owner = obs[L.PK_OWNER * T + a]
            cell = a
        v, share, _ = self._eval(cell, -1, _NO_TOYS, 0, 0)
        return (-share if owner != L.REL_SELF else share - 5.0) + 0.1 * v

    def _princess_value(self, obs: np.ndarray) -> float:
        """The best value of playing a Princess on an opponent's awake cat."""
        T, S = self.T, self.S
        best = -5.0
        for s in range(S):
            if L.REL_SELF < obs[L.NPLANES * T + s] <= L.MAX_PLAYERS:  # an opponent's awake cat
                best = max(best, self._target_value(obs, T + s))
        return best
