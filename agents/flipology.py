"""A greedy Flipology heuristic: take the action with the best immediate score difference.

The observation (fields and sections: ``card_envs.flipology.layout``, ``OBS_*`` and
``obs_layout``; table: ``card_envs.flipology.env``) is decoded into the board (face, kind,
points per position, relative seats), the own hand and the pending effect. The rules come from
the game's queries (``card_envs.flipology.queries``): a card's end value (``card_value``: its
points face up, 0 face down, a Sloth/Koala minus face up and plus face down), the face a flip
leaves (``flip_face``), what an effect's choice does (``effect_role``, ``flip_chains``,
``swap_faces``) and whether the Moon is up (``moon_seen``); an unknown face-down card is worth
its expectation over the deck. Each legal action is scored as (change of the own score) -
(change of the opponents' scores) / (n-1), plus a small bonus for turning up a card whose
effect the agent will apply. With the Moon face up the objective is reversed (the lowest score
wins).

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
from card_envs.flipology import queries as Q
from card_envs.flipology.game import FlipologyGame

EFFECT_BONUS = {L.DOG: 2.0, L.FROG: 2.0, L.HAWK: 3.0, L.MOLE: 2.5, L.MONKEY: 1.5,
                L.PARROT: 2.0, L.SNAKE: 2.0, L.WOLVES: 4.0, L.RAIN: 1.0, L.SUN: 0.5,
                L.WIND: 0.0}
COPY_PRIORITY = {L.WOLVES: 6, L.HAWK: 5, L.MOLE: 4, L.SNAKE: 3, L.DOG: 2, L.FROG: 2,
                 L.MONKEY: 1}
REGROW_BELOW = 12  # regrow a hand worth less than this


def _best(kind: int, pts: int) -> int:
    """A card's end value counted its better way (a Sloth/Koala face down)."""
    return max(Q.card_value(kind, pts, 0), Q.card_value(kind, pts, 1))


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
        vals_up = [Q.card_value(k, p, 1) for k, p, a in zip(g.kinds, g.points, g.aside) if not a]
        vals_down = [Q.card_value(k, p, 0) for k, p, a in zip(g.kinds, g.points, g.aside)
                     if not a]
        self.e_up = float(np.mean(vals_up))
        self.e_down = float(np.mean(vals_down))
        self.null_value = Q.card_value(L.NULL, 0, 1)  # what the Wolves leave in a card's place
        self.o = L.obs_layout(self.n, g.seatpos, g.handn, g.ncards)

    # --- decoding ----------------------------------------------------------------------------
    def _decode(self, obs: np.ndarray) -> None:
        o, npos = self.o, self.g.npos
        self.board = obs[o.board:o.hand].reshape(npos, L.OBS_CELL).astype(int)
        self.hand = obs[o.hand:o.hand_counts].reshape(self.g.handn, L.OBS_SLOT).astype(int)
        self.ef = obs[o.effect:o.effect + L.OBS_EFFECT_LEN].astype(int)
        self.phase = int(obs[o.info + L.OBS_PHASE])
        self.hermit_card = int(obs[o.hermit + L.OBS_HERMIT_CARD])
        self.moon = bool(Q.moon_seen(obs[o.board:o.hand], npos))

    def _cell(self, p: int) -> tuple[int, int, int]:
        """(face, kind, points) observed at position action ``p``."""
        b = self.board[p]
        return int(b[L.OBS_FACE]), int(b[L.OBS_KIND]), int(b[L.OBS_POINTS])

    def _val(self, p: int, up: int | None = None) -> float:
        f, kind, pts = self._cell(p)
        up = f if up is None else up
        if kind < 0:
            return self.e_up if up else self.e_down
        return Q.card_value(kind, pts, up)

    def _weight(self, p: int) -> float:
        w = 1.0 if p // self.g.seatpos == 0 else -1.0 / max(self.n - 1, 1)
        return -w if self.moon else w

    def _flip_gain(self, p: int, trigger: bool) -> float:
        f, kind, _ = self._cell(p)
        turned = Q.flip_face(kind, f, self.phase == L.P_EFFECT)
        if turned == f:
            return 0.0
        gain = (self._val(p, turned) - self._val(p, f)) * self._weight(p)
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
            return _best(kind, pts) + EFFECT_BONUS.get(int(kind), 0.0) * 0.5
        if ph == L.P_REGROW:
            total = sum(_best(k, p)
                        for k, p in self.hand[:, [L.OBS_SLOT_KIND, L.OBS_SLOT_POINTS]] if k >= 0)
            return (1.0 if total < REGROW_BELOW else 0.0) if a == g.skip + L.A_REGROW else 0.5
        if ph == L.P_HERMIT:
            if a == g.skip + L.A_SKIP:
                return 0.0
            c = a - g.disc0
            return float(_best(g.kinds[c], g.points[c])) * (-1 if self.moon else 1)
        if ph == L.P_HCOUNT:  # the sign of the count: a one-point card counted that way
            up = int(a == g.skip + L.A_COUNT_UP)
            sign = Q.card_value(g.kinds[self.hermit_card], 1, up)
            return float(sign) * (-1 if self.moon else 1)
        if ph == L.P_TURN:
            return self._flip_gain(a, True)
        return self._effect_score(a)

    def _effect_score(self, a: int) -> float:
        g = self.g
        ef = self.ef
        kind, src, step = int(ef[L.OBS_EF_KIND]), int(ef[L.OBS_EF_SRC]), int(ef[L.OBS_EF_STEP])
        role = Q.effect_role(kind, step)
        if role == L.ROLE_PEEK:
            return 1.0 if self.board[a, L.OBS_KIND] < 0 else 0.0
        if role == L.ROLE_FLIP:
            if a == g.skip + L.A_SKIP:  # the Sun's "flip none"
                return 0.0
            return self._flip_gain(a, Q.flip_chains(kind))
        if role == L.ROLE_CHOOSE:
            return float(EFFECT_BONUS.get(int(self.board[a, L.OBS_KIND]), 0.0))
        if role == L.ROLE_COPY:
            return float(COPY_PRIORITY.get(int(self.board[a, L.OBS_KIND]), 0))
        if role == L.ROLE_REMOVE:
            return (self.null_value - self._val(a)) * self._weight(a)
        # a swap: the target's card to the Mole's place, the Mole (face up) to the target's
        up_src, up_a = Q.swap_faces(self._cell(src)[0], self._cell(a)[0])
        v_src, v_a = self._val(src), self._val(a)
        return (self._val(a, up_src) - v_src) * self._weight(src) + \
            (self._val(src, up_a) - v_a) * self._weight(a)
