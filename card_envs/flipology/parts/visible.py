"""The visible state of a Flipology observation (numba), on which the features run the rules'
own kernels: the engine's state layout with the observer as seat 0, every known card by a card
id of its kind and points, every unknown face-down card by a placeholder scoring 0 face down
(a null of the deck, else a card that is no Sloth/Koala); and the work buffer of one row of
``features.fill``."""

from __future__ import annotations

from typing import Any

import numpy as np

from card_envs.core.jit import njit
from card_envs.core.kernels import C_PLAYERS, CUR, DONE, PHASE
from card_envs.flipology import layout as L
from card_envs.flipology.parts.deck import MAX_POINTS
from card_envs.flipology.queries import scores_face_down

__all__ = ["FRAME", "FRAME_FIELDS", "NPTS", "OBS_FRAME", "W_FRAME", "W_IDS", "W_PTS", "W_SEEN",
           "W_SIZE", "W_UNSEEN", "card_id", "obs_sections", "visible"]

NPTS = MAX_POINTS + 1
# the state fields of the pending effect (saved and restored around a trial choice)
# (their places in the observation's effect section: OBS_FRAME)
FRAME_FIELDS = np.array((L.EF_KIND, L.EF_SRC, L.EF_STEP, L.EF_A, L.EF_B, L.EF_COPY)
                        + tuple(L.EF_PEEK + i for i in range(L.SUN_PEEKS)), np.int64)
OBS_FRAME = np.array((L.OBS_EF_KIND, L.OBS_EF_SRC, L.OBS_EF_STEP, L.OBS_EF_A, L.OBS_EF_B,
                      L.OBS_EF_COPY) + tuple(L.OBS_EF_PEEK + i for i in range(L.SUN_PEEKS)),
                     np.int64)
FRAME = len(FRAME_FIELDS)

#: ``layout.obs_layout`` compiled: the section starts of an observation inside a kernel
obs_sections = njit(cache=True)(L.obs_layout)


# the work buffer of one row (int32): visible state, card ids by (kind, points), seen and
# unseen cards per kind, points per seat, a saved effect frame
W_IDS = L.STATE_SIZE
W_SEEN = W_IDS + L.NUM_KINDS * NPTS
W_UNSEEN = W_SEEN + L.NUM_KINDS
W_PTS = W_UNSEEN + L.NUM_KINDS
W_FRAME = W_PTS + L.MAX_PLAYERS
W_SIZE = W_FRAME + FRAME + 12  # + 4 saved positions (position, card, face)


@njit(cache=True)
def visible(obs: np.ndarray, cfg: np.ndarray, lay: Any, vs: np.ndarray, ids: np.ndarray,
            seen: np.ndarray, unseen: np.ndarray) -> int:
    """Write the visible state ``vs`` of ``obs`` (module docstring; ``lay``: the observation's
    sections, :data:`obs_sections`; ``ids``: scratch for card ids by kind and points), the
    ``seen`` cards per kind and the cards in play per kind (``unseen``, before subtracting
    ``seen``); returns the points of the cards in play minus those of the seen cards."""
    n = cfg[C_PLAYERS]
    nc = cfg[L.G_NCARDS]
    hold = -1  # placeholder of unknown cards: a deck null (0 points), else no Sloth/Koala
    unseen[:] = 0
    seen_pts = 0
    for c in range(nc):  # ids: read back only where they check out (no initialisation)
        k = cfg[L.T_KIND + c]
        ids[k * NPTS + cfg[L.T_PTS + c]] = c
        if k == L.NULL or (hold < 0 and not scores_face_down(k)):
            hold = c
        if cfg[L.T_ASIDE + c] == 0:
            unseen[k] += 1
            seen_pts -= cfg[L.T_PTS + c]
    hold = max(hold, 0)
    seen[:] = 0
    npos = n * cfg[L.G_SEATPOS]
    for p in range(npos):
        j = lay.board + p * L.OBS_CELL
        f = obs[j + L.OBS_FACE]
        if f < 0:
            vs[L.POS + p] = -1
            vs[L.FACE + p] = 0
            continue
        vs[L.FACE + p] = f
        k = obs[j + L.OBS_KIND]
        v = obs[j + L.OBS_POINTS]
        if k == L.NULL:
            vs[L.POS + p] = nc
        elif 0 <= k < L.NUM_KINDS and 0 <= v < NPTS:
            vs[L.POS + p] = card_id(cfg, ids, k, v, hold)
            seen[k] += 1
            seen_pts += v
        else:
            vs[L.POS + p] = hold
    for p in range(npos, L.MAXPOS):
        vs[L.POS + p] = -1
        vs[L.FACE + p] = 0
    for j in range(cfg[L.G_HANDN]):
        k = obs[lay.hand + j * L.OBS_SLOT + L.OBS_SLOT_KIND]
        v = obs[lay.hand + j * L.OBS_SLOT + L.OBS_SLOT_POINTS]
        if 0 <= k < L.NUM_KINDS and 0 <= v < NPTS:
            vs[L.HAND + j] = card_id(cfg, ids, k, v, hold)
            seen[k] += 1
            seen_pts += v
        else:
            vs[L.HAND + j] = -1
    m = 0
    for c in range(nc):
        d = obs[lay.discard + c]
        if d > 0:
            vs[L.DLIST + m] = c
            vs[L.PICK + c] = d - 1
            seen[cfg[L.T_KIND + c]] += 1
            seen_pts += cfg[L.T_PTS + c]
            m += 1
    vs[L.DLEN] = m
    for s in range(n):
        vs[L.BONUS + s] = obs[lay.seats + L.OBS_BONUS * n + s]
    for i in range(FRAME):
        vs[FRAME_FIELDS[i]] = obs[lay.effect + OBS_FRAME[i]]
    vs[L.CHAIN] = obs[lay.effect + L.OBS_EF_CHAIN]
    vs[L.NULLS] = 0
    ph = obs[lay.info + L.OBS_PHASE]
    vs[PHASE] = ph
    vs[DONE] = 1 if ph == L.P_END else 0
    vs[CUR] = max(obs[lay.info + L.OBS_CUR], 0)
    vs[L.LEVELS] = obs[lay.info + L.OBS_LEVELS]
    return -seen_pts


@njit(cache=True, inline="always")
def card_id(cfg: np.ndarray, ids: np.ndarray, k: int, v: int, hold: int) -> int:
    """A card id of kind ``k`` and points ``v`` (``hold`` if the deck has none)."""
    c = ids[k * NPTS + v]
    if 0 <= c < cfg[L.G_NCARDS] and cfg[L.T_KIND + c] == k and cfg[L.T_PTS + c] == v:
        return c
    return hold
