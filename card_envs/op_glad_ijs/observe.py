"""Op Glad IJs observation: the ``observe`` kernel and the bounds of its entries (layout:
``card_envs.op_glad_ijs.layout``, the table in ``card_envs.op_glad_ijs.env``)."""

from __future__ import annotations

import numpy as np

from card_envs.core.game import Game
from card_envs.core.jit import njit
from card_envs.core.kernels import C_PLAYERS, rel_seat
from card_envs.op_glad_ijs import layout as L
from card_envs.op_glad_ijs.layout import (
    A_PASS,
    CA,
    CARDS,
    CB,
    CHOICE,
    DLEN,
    G_T,
    KCOUNT,
    KNOWN,
    LAST,
    LAST_TURNED,
    MCOUNT,
    O_CHOSEN,
    O_LAST_TURNED,
    O_OWN,
    O_SEATS,
    O_TURNED_BY,
    O_TURNER,
    O_WINDOW,
    OBS_MIDDLE,
    S_DRAW,
    S_KNOWN,
    S_LAST,
    S_WON,
    S_WON_TOP,
    SEAT_FIELDS,
    TURNED_BY,
    TURNER,
    WINDOW,
    WLEN,
    WTOP,
)

# the layout's encoding function, compiled for the kernel
obs_known_nb = njit(cache=True, inline="always")(L.obs_known)


@njit(cache=True)
def observe(state: np.ndarray, cfg: np.ndarray, seat: int, obs: np.ndarray) -> None:
    """Write ``seat``'s observation (layout in ``card_envs.op_glad_ijs.env``); seats are
    relative, the observer first. Other seats' pending choices and the order of the unknown
    part of every draw pile are not shown."""
    n = cfg[C_PLAYERS]
    T = cfg[G_T]
    for t in range(T):
        obs[OBS_MIDDLE + t] = state[MCOUNT + t]
    obs[T + O_LAST_TURNED] = state[LAST_TURNED]
    obs[T + O_WINDOW] = state[WINDOW]
    obs[T + O_TURNED_BY] = rel_seat(state[TURNED_BY], seat, n)
    obs[T + O_TURNER] = rel_seat(state[TURNER], seat, n)
    a = state[CHOICE + seat]
    obs[T + O_CHOSEN] = 1 if a >= 0 else 0
    obs[T + O_OWN] = cfg[CA + a] if a > A_PASS else -1
    obs[T + O_OWN + 1] = cfg[CB + a] if a > A_PASS else -1
    kb = obs_known_nb(n, T)
    for t in range(T):
        obs[kb + t] = state[KCOUNT + t]
    k = T + O_SEATS
    q = seat
    for _ in range(n):
        w = state[WLEN + q]
        obs[k + S_DRAW] = state[DLEN + q]
        obs[k + S_WON] = w
        obs[k + S_WON_TOP] = state[CARDS + 2 * state[WTOP + q]] if w > 0 else -1
        obs[k + S_KNOWN] = state[KNOWN + q]
        la = state[LAST + q]
        obs[k + S_LAST] = cfg[CA + la] if la > A_PASS else -1
        obs[k + S_LAST + 1] = cfg[CB + la] if la > A_PASS else -1
        k += SEAT_FIELDS
        q = q + 1 if q + 1 < n else 0


def obs_bounds(game: Game) -> tuple[np.ndarray, np.ndarray]:
    """Per-entry lower and upper bounds of ``game``'s observation vector."""
    n, T, N = game.num_players, game.T, game.N
    lo = np.zeros(game.obs_size, np.int64)
    hi = np.zeros(game.obs_size, np.int64)
    hi[L.OBS_MIDDLE:L.OBS_MIDDLE + T] = game.counts
    card = ((L.O_LAST_TURNED, -1, T - 1), (L.O_WINDOW, 0, L.MAX_WINDOWS - 1),
            (L.O_TURNED_BY, 0, n - 1), (L.O_TURNER, 0, n - 1), (L.O_CHOSEN, 0, 1),
            (L.O_OWN, -1, T - 1), (L.O_OWN + 1, -1, T - 1))
    seat = ((L.S_DRAW, 0, N), (L.S_WON, 0, N), (L.S_WON_TOP, -1, T - 1), (L.S_KNOWN, 0, N),
            (L.S_LAST, -1, T - 1), (L.S_LAST + 1, -1, T - 1))
    for off, low, high in card:
        lo[T + off], hi[T + off] = low, high
    for r in range(n):
        for off, low, high in seat:
            k = T + L.O_SEATS + L.SEAT_FIELDS * r + off
            lo[k], hi[k] = low, high
    kb = L.obs_known(n, T)
    hi[kb:kb + T] = game.counts
    return lo, hi
