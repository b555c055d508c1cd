"""Isflak board geometry tables (numpy, read by the kernels, the agent and the features)."""

from __future__ import annotations

import numpy as np

from card_envs.isflak.layout import CELLS, COLS, DIRS, MAX_DIST, NDIR, ROWS, SENTINEL


def _ray_table() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """RAY[(c*8 + d)*6 + s-1]: the cell ``s`` steps from ``c`` in direction ``d`` (``SENTINEL``
    off the board); RAYLEN[c*8 + d]: how many steps stay on the board; BORDER[c]: 1 on the
    border."""
    ray = np.full(CELLS * NDIR * MAX_DIST, SENTINEL, np.int32)
    raylen = np.zeros(CELLS * NDIR, np.int32)
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
                raylen[c * NDIR + d] = s
    return ray, raylen, border


RAY, RAYLEN, BORDER = _ray_table()
