"""Isflak's action-aligned features as a torch module (the manifest's ``train.features``).

:class:`RayFeatures` maps a ``(B, L)`` observation tensor to ``(global (B, 385), per_action
(B, 35 + 48P, 17))``: the features of :mod:`card_envs.isflak.features` (their tables are
there). By default the compiled numba loop computes them (``backend="numba"``, CPU tensors:
:func:`card_envs.isflak.features.features`); ``backend="torch"`` (``forward_torch``, any
device, ~2x slower on this CPU) computes the same with batched torch gathers, cell-major,
over the rules' ray table. The two are tested equal. The module has no parameters: the policy
learns on top of it (:class:`card_envs.rl.policy.ActionFeaturePolicy`).
"""

from __future__ import annotations

import numpy as np
import torch

from card_envs.isflak.features import ACTION_FEATURES, CELL_FEATURES, features
from card_envs.isflak.rules import BORDER, CELLS, MAX_DIST, NDIR, RAY
from card_envs.isflak.rules import num_actions as isflak_num_actions
from card_envs.isflak.rules import obs_size as isflak_obs_size

__all__ = ["RayFeatures"]


class RayFeatures(torch.nn.Module):
    """``forward(obs) -> (global, per_action)``: ``global`` ``(B, 35*9)`` the cell features
    (module docstring) of every cell, ``per_action`` ``(B, 35 + 48P, 15)``.

    ``num_players`` and ``penguins_per_player`` (``P``) fix the observation layout; with
    ``penguins_per_player=None`` it is derived from ``num_actions`` (``35 + 48P``) or, failing
    that, the rules' default table."""

    global_dim = CELLS * len(CELL_FEATURES)
    action_dim = len(ACTION_FEATURES)

    def __init__(self, obs_size: int, num_players: int, num_actions: int | None = None,
                 penguins_per_player: int | None = None, backend: str = "numba") -> None:
        super().__init__()
        if backend not in ("numba", "torch"):
            raise ValueError(f"backend must be 'numba' or 'torch', not {backend!r}")
        self.backend = backend
        n = int(num_players)
        if penguins_per_player is None:
            if num_actions is not None:
                penguins_per_player = (int(num_actions) - CELLS) // (NDIR * MAX_DIST)
            else:
                penguins_per_player = {2: 4, 3: 3}.get(n, 2)
        peng = int(penguins_per_player)
        if isflak_obs_size(n, peng) != obs_size:
            raise ValueError(f"isflak observation of length {obs_size} does not match "
                             f"{n} players x {peng} penguins")
        if num_actions is not None and isflak_num_actions(peng) != num_actions:
            raise ValueError(f"{num_actions} actions do not match {peng} penguins")
        self.num_players, self.peng = n, peng
        self.num_actions = isflak_num_actions(peng)
        ray = torch.as_tensor(RAY.astype(np.int64))                       # (35*8*6,)
        self.register_buffer("ray_flat", ray, persistent=False)
        self.register_buffer("border", torch.as_tensor(BORDER, dtype=torch.float32),
                             persistent=False)
        dist = torch.arange(1, MAX_DIST + 1, dtype=torch.float32).repeat(NDIR) / MAX_DIST
        self.register_buffer("dist_col", dist, persistent=False)           # (48,): s / 6
        self.register_buffer("opposite", torch.tensor([(d + 4) % NDIR for d in range(NDIR)]),
                             persistent=False)

    def cell_features(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(C, reach_ok)``: the cell features ``(B, 36, 11)`` (row 35: beyond the board, all
        0) and ``reach_ok`` ``(35, 48, B)``: the cell ``s`` steps from ``c`` in direction
        ``d`` (column ``d*6 + s-1``) can be reached from ``c`` in one move.

        Computed cell-major (``(cells, ..., B)``): the ray gathers are then row copies."""
        B = x.shape[0]
        xt = x.t()
        pts = xt[:CELLS]
        occ = xt[CELLS:2 * CELLS]
        # 36 cells (with the off-board sentinel) x channels x B: free, points (>= 0), own, other
        cell = torch.zeros(CELLS + 1, 4, B, dtype=x.dtype, device=x.device)
        cell[:CELLS, 0] = ((pts >= 0) & (occ == 0)).to(x.dtype)
        cell[:CELLS, 1] = pts.clamp(min=0)
        cell[:CELLS, 2] = (occ == 1).to(x.dtype)
        cell[:CELLS, 3] = (occ > 1).to(x.dtype)
        along = cell.index_select(0, self.ray_flat).view(CELLS * NDIR, MAX_DIST, 4, B)
        ok = torch.cumprod(along[:, :, 0], dim=1)                          # (280, 6, B)
        gain = (ok * along[:, :, 1]).view(CELLS, NDIR * MAX_DIST, B)
        # penguins that see c: the first non-free cell on a ray from c holds a penguin
        seen = along[:, :, 2:4].clone()                                   # (280, 6, 2, B)
        seen[:, 1:] *= ok[:, :-1, None]
        seen_dir = seen.sum(1).view(CELLS, NDIR, 2, B)
        reach_dir = gain.view(CELLS, NDIR, MAX_DIST, B).sum(2)            # (35, 8, B)
        opposite = reach_dir[:, self.opposite]                            # reach in d+4
        okc = ok.view(CELLS, NDIR * MAX_DIST, B)
        feats = torch.zeros(CELLS + 1, len(CELL_FEATURES), B, dtype=x.dtype, device=x.device)
        feats[:CELLS, 0] = pts / 3.0
        feats[:CELLS, 1] = cell[:CELLS, 0]
        feats[:CELLS, 2] = (pts < 0).to(x.dtype)
        feats[:CELLS, 3] = gain.sum(1) / 10.0
        feats[:CELLS, 4] = gain.amax(1) / 3.0
        feats[:CELLS, 5] = okc.sum(1) / 10.0
        feats[:CELLS, 6:8] = seen_dir.sum(1) / 2.0
        feats[:CELLS, 8] = self.border[:, None]
        feats[:CELLS, 9:11] = (seen_dir * opposite[:, :, None]).sum(1) / 10.0
        return feats.permute(2, 0, 1).contiguous(), okc

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        x = x.flatten(1).float()
        if self.backend == "numba" and x.device.type == "cpu":
            glob, act = features(x.detach().numpy(), self.num_players, self.peng)
            return torch.from_numpy(glob), torch.from_numpy(act).transpose(1, 2)
        return self.forward_torch(x)

    def forward_torch(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The batched-torch implementation (any device; the reference of the tests)."""
        x = x.flatten(1).float()
        B = x.shape[0]
        C, ok = self.cell_features(x)                                    # (B,36,11), (35,48,B)
        fc = C.shape[2]
        P = self.peng
        nm = P * NDIR * MAX_DIST
        phase = x[:, 2 * CELLS + self.num_players * (P + 3)]
        # feature-major: act[b, f, a]
        act = torch.zeros(B, len(ACTION_FEATURES), CELLS + nm, dtype=x.dtype, device=x.device)
        cells_t = C[:, :CELLS].transpose(1, 2)                             # (B, 9, 35)
        # placement columns: a free border cell in the placement phase
        act[:, 0, :CELLS] = cells_t[:, 1] * self.border * (phase == 0).to(x.dtype)[:, None]
        act[:, 1:1 + fc, :CELLS] = cells_t
        act[:, -1, :CELLS] = 1.0
        # movement columns: own penguin slots (observer = relative seat 0)
        pos = x[:, 2 * CELLS:2 * CELLS + P].round().long()                 # (B, P), -1 none
        here = (pos >= 0).to(x.dtype)
        src = pos.clamp(min=0)
        j = torch.arange(NDIR * MAX_DIST, device=x.device)
        b = torch.arange(B, device=x.device)
        legal = ok.take((src[:, :, None] * (NDIR * MAX_DIST) + j) * B + b[:, None, None])
        legal = legal * (here * (phase == 1).to(x.dtype)[:, None])[:, :, None]
        act[:, 0, CELLS:] = legal.view(B, nm)
        tgt = self.ray_flat.view(CELLS, -1)[src].view(B, 1, nm)            # (B, 1, P*48)
        tf = torch.gather(C.transpose(1, 2), 2, tgt.expand(B, fc, nm))     # (B, 9, P*48)
        here_m = here[:, :, None].expand(B, P, NDIR * MAX_DIST).reshape(B, 1, nm)
        act[:, 1:1 + fc, CELLS:] = tf * here_m
        sf = torch.gather(C, 1, src[:, :, None].expand(B, P, fc)) * here[:, :, None]
        act[:, 1 + fc, CELLS:] = sf[:, :, None, 0].expand(B, P, NDIR * MAX_DIST).reshape(B, nm)
        act[:, 2 + fc, CELLS:] = sf[:, :, None, 3].expand(B, P, NDIR * MAX_DIST).reshape(B, nm)
        act[:, 3 + fc, CELLS:] = self.dist_col.repeat(P)
        act[:, 4 + fc, CELLS:] = 1.0
        return C[:, :CELLS].reshape(B, -1), act.transpose(1, 2)
