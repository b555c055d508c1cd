"""Op Glad IJs heuristic: slap the best correct target, never fault.

The agent reads the middle's per-type counts from the observation (layout:
``card_envs.op_glad_ijs.env``) and the card-type tables of the configured deck (from the game
options it is given). In priority order it slaps: a right-habitat card (one hand, wins the whole
middle); a 2-animals card whose two habitats are visible on normal cards; a 2-habitats card
whose two animals are visible on normal cards; a matching pair (an animal on one card belongs in
a habitat on the other). Ties within a class are broken with the seeded RNG. With nothing
correct it passes, so it never faults.

``miss_rate`` (default 0) is the curriculum knob: with that probability the agent passes even
though a correct target exists (a slower player), e.g.
``OpGladIJsHeuristicAgent("op_glad_ijs_v0", seed=0, miss_rate=0.3)``; the registry's
``"heuristic"`` is ``miss_rate=0``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agents.base import Agent, legal_actions
from card_envs.op_glad_ijs import rules as R
from card_envs.op_glad_ijs.game import OpGladIJsGame


class OpGladIJsHeuristicAgent(Agent):
    """Best correct slap by the spec's priority classes; passes otherwise (never faults)."""

    name = "heuristic"

    def __init__(self, env_id: str = "op_glad_ijs_v0", seed: int | None = None,
                 miss_rate: float = 0.0, **options: Any) -> None:
        super().__init__(env_id, seed, **options)
        if not 0.0 <= miss_rate <= 1.0:
            raise ValueError(f"miss_rate must be in [0, 1], got {miss_rate!r}")
        self.miss_rate = float(miss_rate)
        known = OpGladIJsGame.option_specs()
        game = OpGladIJsGame(**{k: v for k, v in options.items() if k in known})
        self.T = T = game.T
        cfg = game.cfg
        self.kind = cfg[R.CT_KIND:R.CT_KIND + T].astype(np.int64)
        self.am = cfg[R.CT_AM:R.CT_AM + T].astype(np.int64)
        self.hm = cfg[R.CT_HM:R.CT_HM + T].astype(np.int64)
        plain = self.kind <= R.KIND_RIGHT
        link = ((self.am[:, None] & self.hm[None, :]) | (self.hm[:, None] & self.am[None, :]))
        self.match = (link != 0) & plain[:, None] & plain[None, :]

    def targets(self, counts: np.ndarray) -> list[int]:
        """The correct actions of the best priority class for a middle (per-type counts)."""
        T = self.T
        present = counts > 0
        right = np.flatnonzero(present & (self.kind == R.KIND_RIGHT))
        if right.size:
            return [1 + int(t) for t in right]
        normal = present & (self.kind == R.KIND_NORMAL)
        va = int(np.bitwise_or.reduce(self.am[normal])) if normal.any() else 0
        vh = int(np.bitwise_or.reduce(self.hm[normal])) if normal.any() else 0
        for kind, mask, vis in ((R.KIND_ANIMALS, self.am, vh), (R.KIND_HABITATS, self.hm, va)):
            sel = np.flatnonzero(present & (self.kind == kind) & ((mask & ~vis) == 0))
            if sel.size:
                return [1 + int(t) for t in sel]
        idx = np.flatnonzero(present & (self.kind <= R.KIND_RIGHT))
        out = []
        for i, t in enumerate(idx):
            for u in idx[i + 1:]:
                if self.match[t, u]:
                    out.append(R.pair_action(int(t), int(u), T))
        return out

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        legal = legal_actions(action_mask)
        good = self.targets(np.asarray(observation[:self.T]))
        if not good or (self.miss_rate and self.rng.random() < self.miss_rate):
            return 0 if action_mask[0] else int(legal[0])
        return good[0] if len(good) == 1 else good[self.rng.randrange(len(good))]
