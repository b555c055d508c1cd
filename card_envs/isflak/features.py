"""Action-aligned (egocentric) features of an Isflak observation, as a torch module.

A movement action ``35 + (k*8 + d)*6 + (s-1)`` is worth what the cell ``s`` steps from penguin
slot ``k``'s *current* cell in direction ``d`` is worth: a plain MLP on the flat observation
has to learn that position-dependent gather. :class:`RayFeatures` computes it from the
observation tensor alone (layout: ``card_envs.isflak.env``) over the ray table of
:mod:`card_envs.isflak.rules` (``RAY``), with no Python loop per sample: by default in one
compiled numba loop over the batch (``backend="numba"``, CPU tensors), or with batched torch
gathers, cell-major (``backend="torch"``, ``forward_torch``: any device; ~2x slower on this
CPU). The two are tested equal.

Per cell ``c`` (``CELL_FEATURES``, on the board as observed):

| name        | meaning                                                                  |
|-------------|--------------------------------------------------------------------------|
| ``pts``     | points of the card / 3 (a gap: -1/3)                                     |
| ``free``    | a card without a penguin (1/0)                                           |
| ``gap``     | no card (1/0)                                                            |
| ``reach``   | sum of the points of the cells a penguin on ``c`` reaches in one move / 10 |
| ``best``    | best card reachable from ``c`` in one move / 3                           |
| ``moves``   | number of cells reachable from ``c`` in one move / 10                    |
| ``own``     | the observer's penguins that could move to ``c`` now / 2                 |
| ``opp``     | the other seats' penguins that could move to ``c`` now / 2               |
| ``border``  | a border cell (1/0)                                                      |
| ``own_cut`` | points the observer's penguins would no longer reach with a penguin put on |
|             | ``c``: for each direction in which ``c`` sees an own penguin, the reach of |
|             | ``c`` in the opposite direction / 10                                     |
| ``opp_cut`` | the same for the other seats' penguins (what a move to ``c`` denies) / 10  |

A penguin on ``c`` blocks its own rays, so ``reach``/``best``/``moves`` of the target of a move
are exactly the values on the board after the move (the vacated source becomes a gap, and was
already a blocker). Cells beyond the board read 0.

Per action (``ACTION_FEATURES``, ``F = 17`` values each, in action order):

* placement ``a`` (cell ``a``): ``legal`` = placement phase and a free border cell (the
  mask may narrow it to number cards), the cell features of ``a``,
  ``src_pts = src_reach = dist = 0``, ``move = 0``, ``place = 1``;
* movement ``(k, d, s)``: ``legal`` = penguin ``k`` is on the board and every cell up to the
  target is free, in the movement phase (equals the action mask there), the cell features of the
  target (0 where the target is off the board or the penguin is unplaced / gone), the points
  and ``reach`` of the source cell (what the penguin leaves), ``dist = s/6``, ``move = 1``,
  ``place = 0``.

The global features are the 11 cell features of the 35 cells (``(B, 385)``). Works for every
player count and ``penguins_per_player`` (given at construction; the observation length is
checked). :func:`potential` is the reward-shaping potential (``GAME_POTENTIALS``). The module
has no parameters: the policy learns on top of it (``card_envs.training``: ``GAME_FEATURES``,
``ActionFeaturePolicy``).
"""

from __future__ import annotations

import numpy as np
import torch

from card_envs.core.jit import njit
from card_envs.isflak.rules import BORDER, CELLS, MAX_DIST, NDIR, RAY
from card_envs.isflak.rules import num_actions as isflak_num_actions
from card_envs.isflak.rules import obs_size as isflak_obs_size

CELL_FEATURES = ("pts", "free", "gap", "reach", "best", "moves", "own", "opp", "border",
                 "own_cut", "opp_cut")
ACTION_FEATURES = ("legal",) + CELL_FEATURES + ("src_pts", "src_reach", "dist", "move",
                                                "place")


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
            xn = x.detach().numpy()
            glob = np.empty((xn.shape[0], self.global_dim), np.float32)
            act = np.empty((xn.shape[0], self.action_dim, self.num_actions), np.float32)
            _nb_features(xn, self.num_players, self.peng, glob, act)
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


# --------------------------------------------------------------------------------------------
# the same features as one compiled loop (the default backend on a CPU: ~10x faster than the
# batched torch ops above; both are tested equal)
# --------------------------------------------------------------------------------------------
@njit(cache=True)
def _nb_features(x: np.ndarray, n: int, peng: int, glob: np.ndarray, act: np.ndarray) -> None:
    """``glob (B, 35*11)`` and ``act (B, 17, 35 + 48P)`` (feature-major) of ``x (B, L)``."""
    nc = len(CELL_FEATURES)
    C = np.zeros((CELLS + 1, nc))
    ok = np.zeros((CELLS, NDIR * MAX_DIST))
    reach_dir = np.zeros((CELLS, NDIR))
    own_dir = np.zeros((CELLS, NDIR))
    opp_dir = np.zeros((CELLS, NDIR))
    pts = np.empty(CELLS + 1)
    occ = np.empty(CELLS + 1)
    free = np.empty(CELLS + 1)
    for b in range(x.shape[0]):
        for c in range(CELLS):
            pts[c] = x[b, c]
            occ[c] = x[b, CELLS + c]
            free[c] = 1.0 if (pts[c] >= 0 and occ[c] == 0) else 0.0
        pts[CELLS] = -1.0
        occ[CELLS] = 0.0
        free[CELLS] = 0.0
        for c in range(CELLS):
            reach = 0.0
            best = 0.0
            moves = 0.0
            for d in range(NDIR):
                rd = 0.0
                own_dir[c, d] = 0.0
                opp_dir[c, d] = 0.0
                going = True
                for s in range(MAX_DIST):
                    t = RAY[(c * NDIR + d) * MAX_DIST + s]
                    if going and free[t] > 0:
                        ok[c, d * MAX_DIST + s] = 1.0
                        rd += pts[t]
                        if pts[t] > best:
                            best = pts[t]
                        moves += 1.0
                    else:
                        if going:
                            if occ[t] == 1:
                                own_dir[c, d] = 1.0
                            elif occ[t] > 1:
                                opp_dir[c, d] = 1.0
                        going = False
                        ok[c, d * MAX_DIST + s] = 0.0
                reach_dir[c, d] = rd
                reach += rd
            C[c, 0] = pts[c] / 3.0
            C[c, 1] = free[c]
            C[c, 2] = 1.0 if pts[c] < 0 else 0.0
            C[c, 3] = reach / 10.0
            C[c, 4] = best / 3.0
            C[c, 5] = moves / 10.0
            own = 0.0
            opp = 0.0
            own_cut = 0.0
            opp_cut = 0.0
            for d in range(NDIR):
                own += own_dir[c, d]
                opp += opp_dir[c, d]
                own_cut += own_dir[c, d] * reach_dir[c, (d + 4) % NDIR]
                opp_cut += opp_dir[c, d] * reach_dir[c, (d + 4) % NDIR]
            C[c, 6] = own / 2.0
            C[c, 7] = opp / 2.0
            C[c, 8] = BORDER[c]
            C[c, 9] = own_cut / 10.0
            C[c, 10] = opp_cut / 10.0
            for f in range(nc):
                glob[b, c * nc + f] = C[c, f]
        phase = x[b, 2 * CELLS + n * (peng + 3)]
        for a in range(act.shape[2]):
            for f in range(act.shape[1]):
                act[b, f, a] = 0.0
        for c in range(CELLS):
            act[b, 0, c] = C[c, 1] * BORDER[c] * (1.0 if phase == 0 else 0.0)
            for f in range(nc):
                act[b, 1 + f, c] = C[c, f]
            act[b, nc + 5, c] = 1.0
        for k in range(peng):
            pos = int(round(x[b, 2 * CELLS + k]))
            here = 1.0 if pos >= 0 else 0.0
            src = pos if pos >= 0 else 0
            for j in range(NDIR * MAX_DIST):
                a = CELLS + k * NDIR * MAX_DIST + j
                t = RAY[src * NDIR * MAX_DIST + j]
                act[b, 0, a] = ok[src, j] * here * (1.0 if phase == 1 else 0.0)
                for f in range(nc):
                    act[b, 1 + f, a] = C[t, f] * here
                act[b, nc + 1, a] = C[src, 0] * here
                act[b, nc + 2, a] = C[src, 3] * here
                act[b, nc + 3, a] = (j % MAX_DIST + 1) / MAX_DIST
                act[b, nc + 4, a] = 1.0


def potential(obs: np.ndarray, num_players: int) -> np.ndarray:
    """Reward-shaping potential of observations ``(B, L)`` (``card_envs.training``,
    ``GAME_POTENTIALS``): the observer's secured points (pile + the cards under its penguins,
    which always end in its pile) minus the best other seat's, / 10; 0 at the deal (no
    penguin placed, empty piles). Placed penguins count from the placement on."""
    obs = np.asarray(obs, np.float64).reshape(len(obs), -1)
    n = int(num_players)
    peng = (obs.shape[1] - 2 * CELLS - 3) // n - 3
    pts = np.clip(obs[:, :CELLS], 0, None)
    occ = obs[:, CELLS:2 * CELLS]
    secured = np.empty((len(obs), n))
    for i in range(n):
        pile = obs[:, 2 * CELLS + i * (peng + 3) + peng + 1]
        secured[:, i] = pile + (pts * (occ == i + 1)).sum(1)
    return (secured[:, 0] - secured[:, 1:].max(1)) / 10.0
