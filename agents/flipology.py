"""A greedy Flipology heuristic: take the action with the best immediate score difference.

The observation (fields and sections: ``card_envs.flipology.layout``, ``OBS_*`` and
``obs_layout``; table: ``card_envs.flipology.env``) is decoded into the board (face, kind,
points per position, relative seats), the own hand and the pending effect. A card's end value
is its points face up, 0 face down, and for a Sloth/Koala minus its points face up and plus
its points face down; an unknown face-down card is worth its expectation over the deck. Each
legal action is scored as (change of the own score) - (change of the opponents' scores) / (n-1),
plus a small bonus for turning up a card whose effect the agent will apply. With the Moon face
up the objective is reversed (the lowest score wins).

* **Setup:** place the most valuable hand card first (Sloths/Koalas by their face-down value);
  the two least valuable go to the discard pile.
* **Turn / Dog, Frog, Hawk, Snake, Rain, Monkey's choice:** flip the best card.
* **Mole:** the best swap; **Wolves:** remove the card whose loss helps most.
* **Parrot:** copy the effect with the best follow-up by a fixed priority.
* **Sun:** peek at unknown cards; flip a peeked Sloth/Koala of an opponent, else none.
* **Hermit crab:** take the most valuable card (a Sloth/Koala counted face down).
* **Great Tree Regrowth:** regrow a hand worth less than 12.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from card_envs.agents.base import Agent, legal_actions
from card_envs.flipology import layout as L
from card_envs.flipology.game import FlipologyGame

EFFECT_BONUS = {L.DOG: 2.0, L.FROG: 2.0, L.HAWK: 3.0, L.MOLE: 2.5, L.MONKEY: 1.5,
                L.PARROT: 2.0, L.SNAKE: 2.0, L.WOLVES: 4.0, L.RAIN: 1.0, L.SUN: 0.5,
                L.WIND: 0.0}
COPY_PRIORITY = {L.WOLVES: 6, L.HAWK: 5, L.MOLE: 4, L.SNAKE: 3, L.DOG: 2, L.FROG: 2,
                 L.MONKEY: 1}
FLIPPED_BY_EFFECT = (L.DOG, L.FROG, L.HAWK, L.SNAKE)
REGROW_BELOW = 12  # regrow a hand worth less than this


def _value(kind: int, pts: int, up: int) -> float:
    if kind in (L.SLOTH, L.KOALA):
        return -pts if up else pts
    return pts if up else 0.0


class FlipologyHeuristicAgent(Agent):
    """Greedy on the immediate score difference (see the module docstring)."""

    name = "heuristic"

    def __init__(self, env_id: str = "flipology_v0", seed: int | None = None,
                 **options: Any) -> None:
        super().__init__(env_id, seed, **options)
        specs = FlipologyGame.option_specs()
        g = FlipologyGame(**{k: v for k, v in options.items() if k in specs})
        self.g = g
        self.n = g.num_players
        vals_up = [_value(k, p, 1) for k, p, a in zip(g.kinds, g.points, g.aside) if not a]
        vals_down = [_value(k, p, 0) for k, p, a in zip(g.kinds, g.points, g.aside) if not a]
        self.e_up = float(np.mean(vals_up))
        self.e_down = float(np.mean(vals_down))
        self.o = L.obs_layout(self.n, g.seatpos, g.handn, g.ncards)

    # --- decoding ----------------------------------------------------------------------------
    def _decode(self, obs: np.ndarray) -> None:
        o, npos = self.o, self.g.npos
        self.board = obs[o.board:o.hand].reshape(npos, L.OBS_CELL).astype(int)
        self.hand = obs[o.hand:o.hand_counts].reshape(self.g.handn, L.OBS_SLOT).astype(int)
        self.ef = obs[o.effect:o.effect + L.OBS_EFFECT_LEN].astype(int)
        self.phase = int(obs[o.info + L.OBS_PHASE])
        self.moon = any(self.board[p, L.OBS_FACE] == 1 and self.board[p, L.OBS_KIND] == L.MOON
                        for p in range(npos))

    def _cell(self, p: int) -> tuple[int, int, int]:
        """(face, kind, points) observed at position action ``p``."""
        b = self.board[p]
        return int(b[L.OBS_FACE]), int(b[L.OBS_KIND]), int(b[L.OBS_POINTS])

    def _val(self, p: int, up: int | None = None) -> float:
        f, kind, pts = self._cell(p)
        up = f if up is None else up
        if kind < 0:
            return self.e_up if up else self.e_down
        return _value(kind, pts, up)

    def _weight(self, p: int) -> float:
        w = 1.0 if p // self.g.seatpos == 0 else -1.0 / max(self.n - 1, 1)
        return -w if self.moon else w

    def _flip_gain(self, p: int, trigger: bool) -> float:
        f, kind, _ = self._cell(p)
        if f == 1 and kind == L.CAT and self.phase == L.P_EFFECT:
            return 0.0
        gain = (self._val(p, 1 - f) - self._val(p, f)) * self._weight(p)
        if trigger and f == 0:
            gain += EFFECT_BONUS.get(kind, 1.0 if kind < 0 else 0.0) * (0.3 if kind < 0 else 1)
        return gain

    # --- acting ------------------------------------------------------------------------------
    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        legal = legal_actions(action_mask)
        if legal.size == 1:
            return int(legal[0])
        self._decode(np.asarray(observation))
        scores = np.array([self._score(int(a)) for a in legal], float)
        best = legal[scores >= scores.max() - 1e-9]
        return int(best[self.rng.randrange(best.size)])

    def _score(self, a: int) -> float:
        g, ph = self.g, self.phase
        if ph == L.P_SETUP:
            slot = self.hand[a - g.hand0]
            kind, pts = slot[L.OBS_SLOT_KIND], slot[L.OBS_SLOT_POINTS]
            v = max(_value(kind, pts, 0), _value(kind, pts, 1))
            return v + EFFECT_BONUS.get(int(kind), 0.0) * 0.5
        if ph == L.P_REGROW:
            total = sum(max(_value(k, p, 0), _value(k, p, 1))
                        for k, p in self.hand[:, [L.OBS_SLOT_KIND, L.OBS_SLOT_POINTS]] if k >= 0)
            return (1.0 if total < REGROW_BELOW else 0.0) if a == g.skip + L.A_REGROW else 0.5
        if ph == L.P_HERMIT:
            if a == g.skip + L.A_SKIP:
                return 0.0
            c = a - g.disc0
            return float(g.points[c]) * (-1 if self.moon else 1)
        if ph == L.P_HCOUNT:
            up = a == g.skip + L.A_COUNT_UP
            return (1.0 if up else -1.0) * (1 if self.moon else -1)
        if ph == L.P_TURN:
            return self._flip_gain(a, True)
        return self._effect_score(a)

    def _effect_score(self, a: int) -> float:
        g = self.g
        ef = self.ef
        kind, src, step = int(ef[L.OBS_EF_KIND]), int(ef[L.OBS_EF_SRC]), int(ef[L.OBS_EF_STEP])
        if kind == L.SUN:
            if step < L.SUN_PEEKS:
                return 1.0 if self.board[a, L.OBS_KIND] < 0 else 0.0
            if a == g.skip + L.A_SKIP:
                return 0.0
            return self._flip_gain(a, False)
        if kind in FLIPPED_BY_EFFECT:
            return self._flip_gain(a, True)
        if kind == L.RAIN:
            return self._flip_gain(a, False)
        if kind == L.MONKEY:
            if step == L.MONKEY_CHOOSE:
                return float(EFFECT_BONUS.get(int(self.board[a, L.OBS_KIND]), 0.0))
            return self._flip_gain(a, True)
        if kind == L.PARROT:
            return float(COPY_PRIORITY.get(int(self.board[a, L.OBS_KIND]), 0))
        if kind == L.WOLVES:
            return -self._val(a) * self._weight(a)
        if kind == L.MOLE:
            v_src = self._val(src)  # the Mole, face up
            v_q = self._val(a)
            return (v_q - v_src) * self._weight(src) + (v_src - v_q) * self._weight(a)
        return 0.0
