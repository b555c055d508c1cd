"""Isflak board geometry tables (numpy, read by the kernels and the queries): the rays, the
border, and an order of the cells per direction in which every ray can be built from the next."""

from __future__ import annotations

import numpy as np

from card_envs.isflak.layout import CELLS, COLS, DIRS, MAX_DIST, NDIR, ROWS, SENTINEL


def _ray_table() -> tuple[np.ndarray, np.ndarray]:
    """RAY[(c*8 + d)*6 + s-1]: the cell ``s`` steps from ``c`` in direction ``d`` (``SENTINEL``
    off the board); BORDER[c]: 1 on the border."""
    ray = np.full(CELLS * NDIR * MAX_DIST, SENTINEL, np.int32)
    border = np.zeros(CELLS, np.int32)
    for c in range(CELLS):
        r0, c0 = divmod(c, COLS)
        border[c] = r0 in (0, ROWS - 1) or c0 in (0, COLS - 1)
        for d, (dr, dc) in enumerate(DIRS):
            for s in range(1, MAX_DIST + 1):
                r, cc = r0 + dr * s, c0 + dc * s
                if not (0 <= r < ROWS and 0 <= cc < COLS):
                    break
                ray[(c * NDIR + d) * MAX_DIST + s - 1] = r * COLS + cc
    return ray, border


RAY, BORDER = _ray_table()

# rays never stop at MAX_DIST inside the board, so the ray from c in direction d is its first
# step t plus the ray from t: queries.rays builds all rays at once in ORDER[d] (t before c)
assert max(ROWS, COLS) - 1 <= MAX_DIST


def _order() -> np.ndarray:
    """``ORDER[d]``: the cells sorted so that the first ray step of each comes before it."""
    out = np.empty((NDIR, CELLS), np.int32)
    for d, (dr, dc) in enumerate(DIRS):
        key = [-(dr * (c // COLS) + dc * (c % COLS)) for c in range(CELLS)]
        out[d] = np.argsort(key, kind="stable")
    return out


ORDER = _order()
