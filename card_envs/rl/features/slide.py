"""Slide's action-aligned features as a torch module (the manifest's ``train.features``).

:class:`PushFeatures` maps a ``(B, L)`` observation tensor to ``(global (B, 12), per_action
(B, 56, 15))``: the features of :mod:`card_envs.slide.features` (their table is there). By
default the compiled numba loop computes them (``backend="numba"``, CPU tensors:
:func:`card_envs.slide.features.features`); ``backend="torch"`` (``forward_torch``, any device,
~30x slower on this CPU) computes the same in batched torch gathers over a precomputed shift
table. The two are tested equal.
"""

from __future__ import annotations

import torch

from card_envs.slide.features import (
    ACTION_FEATURES,
    FACE_DOWN,
    GLOBAL_FEATURES,
    PICK0,
    features,
)
from card_envs.slide.rules import NUM_ACTIONS, NUM_VALUES, SLOTS
from card_envs.slide.rules import obs_size as slide_obs_size

__all__ = ["PushFeatures"]


def _tables() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """``SRC[e, side, i]``: the slot whose card lands on ``i`` when a card is pushed in from
    ``side`` toward the gap ``e`` (16: the pushed card; identity where the side is not
    allowed), ``LAND[e, side]``: where the pushed card lands, ``OK[e, side]``: the side is
    allowed, ``NB[i]``: the 4 orthogonal neighbours of ``i`` (16: none)."""
    src = torch.zeros(SLOTS, 4, SLOTS, dtype=torch.long)
    land = torch.zeros(SLOTS, 4, dtype=torch.long)
    ok = torch.zeros(SLOTS, 4)
    for e in range(SLOTS):
        r, c = divmod(e, 4)
        for side in range(4):
            a = list(range(SLOTS))
            if side == 0 and c > 0:      # left: row r, cells 0..c shift right
                for k in range(c, 0, -1):
                    a[r * 4 + k] = r * 4 + k - 1
                a[r * 4], land[e, side] = SLOTS, r * 4
            elif side == 1 and c < 3:    # right
                for k in range(c, 3):
                    a[r * 4 + k] = r * 4 + k + 1
                a[r * 4 + 3], land[e, side] = SLOTS, r * 4 + 3
            elif side == 2 and r > 0:    # top
                for k in range(r, 0, -1):
                    a[k * 4 + c] = (k - 1) * 4 + c
                a[c], land[e, side] = SLOTS, c
            elif side == 3 and r < 3:    # bottom
                for k in range(r, 3):
                    a[k * 4 + c] = (k + 1) * 4 + c
                a[12 + c], land[e, side] = SLOTS, 12 + c
            else:
                land[e, side] = e
                src[e, side] = torch.arange(SLOTS)
                continue
            ok[e, side] = 1.0
            src[e, side] = torch.tensor(a)
    nb = torch.full((SLOTS, 4), SLOTS, dtype=torch.long)
    for i in range(SLOTS):
        r, c = divmod(i, 4)
        for j, (rr, cc) in enumerate(((r, c - 1), (r, c + 1), (r - 1, c), (r + 1, c))):
            if 0 <= rr < 4 and 0 <= cc < 4:
                nb[i, j] = rr * 4 + cc
    return src, land, ok, nb


class PushFeatures(torch.nn.Module):
    """``forward(obs) -> (global (B, 12), per_action (B, 56, 15))`` (module docstring)."""

    global_dim = len(GLOBAL_FEATURES)
    action_dim = len(ACTION_FEATURES)

    def __init__(self, obs_size: int, num_players: int, num_actions: int | None = None,
                 backend: str = "numba") -> None:
        super().__init__()
        if backend not in ("numba", "torch"):
            raise ValueError(f"backend must be 'numba' or 'torch', not {backend!r}")
        self.backend = backend
        n = int(num_players)
        if slide_obs_size(n) != obs_size:
            raise ValueError(f"slide observation of length {obs_size} does not match {n} "
                             "players")
        if num_actions is not None and num_actions != NUM_ACTIONS:
            raise ValueError(f"slide has {NUM_ACTIONS} actions, not {num_actions}")
        self.num_players = n
        self.num_actions = NUM_ACTIONS
        src, land, ok, nb = _tables()
        self.register_buffer("src", src, persistent=False)
        self.register_buffer("land", land, persistent=False)
        self.register_buffer("side_ok", ok, persistent=False)
        self.register_buffer("nb", nb, persistent=False)
        self.register_buffer("values", torch.arange(1, NUM_VALUES + 1, dtype=torch.float32),
                             persistent=False)

    # --- expected points of grids --------------------------------------------------------
    def score(self, grids: torch.Tensor, p: torch.Tensor
              ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Expected points (the heuristic's formula), the number of paired face-up cards and
        the sum of the unpaired face-up cards of ``grids`` ``(B, M, 16)`` (codes 0 empty,
        1-10 face up, 11 face down) with the unseen-value chances ``p`` ``(B, 10)``: three
        ``(B, M)`` tensors."""
        B, M, _ = grids.shape
        g = torch.cat([grids, torch.zeros_like(grids[..., :1])], -1)       # slot 16: none
        nbv = g[..., self.nb]                                              # (B, M, 16, 4)
        me = grids
        down_nb = (nbv == FACE_DOWN).sum(-1)                               # k, (B, M, 16)
        up = (me >= 1) & (me <= NUM_VALUES)
        paired = up & (nbv == me[..., None]).any(-1)
        # tables over value 0..10 (0: none) and k 0..4: q^k with q = 1 - p
        q = torch.cat([torch.ones_like(p[:, :1]), 1.0 - p], 1)             # (B, 11)
        qk = q[:, :, None] ** torch.arange(5, dtype=p.dtype, device=p.device)  # (B, 11, 5)
        vals = torch.cat([torch.zeros(1, dtype=p.dtype, device=p.device), self.values])
        up_t = vals[None, :, None] * qk                                     # v q_v^k
        pv = torch.cat([torch.zeros_like(p[:, :1]), p], 1)
        down_t = (pv * vals)[:, :, None] * qk                               # p_u u q_u^k
        down_all = down_t.sum(1)                                            # (B, 5)
        flat_up = up_t.reshape(B, -1)
        flat_down = down_t.reshape(B, -1)
        code = me.clamp(max=NUM_VALUES) * up                                # 0 unless face up
        s_up = torch.gather(flat_up, 1, (code * 5 + down_nb).view(B, -1)).view(B, M, SLOTS)
        s_up = s_up * (up & ~paired)
        # face down: down_all[k] minus each distinct face-up neighbour value's term
        x = torch.gather(down_all, 1, down_nb.view(B, -1)).view(B, M, SLOTS)
        nbup = ((nbv >= 1) & (nbv <= NUM_VALUES)).long() * nbv
        for j in range(4):
            u = nbup[..., j]
            fresh = u > 0
            for i in range(j):
                fresh = fresh & (u != nbup[..., i])
            t = torch.gather(flat_down, 1, (u * 5 + down_nb).view(B, -1)).view(B, M, SLOTS)
            x = x - t * fresh
        s_down = x * (me == FACE_DOWN)
        face = (me * (up & ~paired)).sum(-1).to(p.dtype)
        return (s_up + s_down).sum(-1), paired.sum(-1).to(p.dtype), face

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        x = x.flatten(1).float()
        if self.backend == "numba" and x.device.type == "cpu":
            glob, act = features(x.detach().numpy(), self.num_players)
            return torch.from_numpy(glob), torch.from_numpy(act).transpose(1, 2)
        return self.forward_torch(x)

    def forward_torch(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The batched-torch implementation (any device; the reference of the tests)."""
        x = x.flatten(1).float()
        B = x.shape[0]
        n = self.num_players
        base = SLOTS * n
        grid = x[:, :SLOTS].round().long()
        middle = x[:, base:base + NUM_VALUES]
        unseen = x[:, base + NUM_VALUES:base + 2 * NUM_VALUES]
        phase = x[:, base + 2 * NUM_VALUES]
        tot = unseen.sum(1, keepdim=True)
        p = torch.where(tot > 0, unseen / tot.clamp(min=1.0), torch.full_like(unseen, 0.1))
        now, pairs_now, face_now = self.score(grid[:, None], p)            # (B, 1) each
        to_act = x[:, base + 23] == 0
        # picks: the gap e (slot 0 if there is none; then no pick is legal)
        has_gap = (grid == 0).any(1)
        e = (grid == 0).to(torch.long).argmax(1)
        src = self.src[e]                                                  # (B, 4, 16)
        gpad = torch.cat([grid, torch.zeros_like(grid[:, :1])], 1)         # 16: placeholder
        shifted = torch.gather(gpad[:, None, :].expand(B, 4, SLOTS + 1), 2, src)
        v = torch.arange(1, NUM_VALUES + 1, device=x.device)
        picks = torch.where(src[:, None] == SLOTS, v[None, :, None, None],
                            shifted[:, None])                              # (B, 10, 4, 16)
        picks = picks.reshape(B, NUM_VALUES * 4, SLOTS)
        # reveals: slot s opened
        eye = torch.eye(SLOTS, dtype=torch.bool, device=x.device)
        opened = torch.where(eye[None], torch.zeros_like(grid)[:, None], grid[:, None])
        exp, pairs, face = self.score(torch.cat([opened, picks], 1), p)   # (B, 56) each
        land = self.land[e]                                                # (B, 4)
        land_idx = land[:, None, :].expand(B, NUM_VALUES, 4).reshape(B, -1)  # (B, 40)
        land_nb = self.nb[land_idx]                                        # (B, 40, 4)
        pad = torch.cat([picks, torch.zeros_like(picks[..., :1])], -1)
        nbv = torch.gather(pad, 2, land_nb)                                # (B, 40, 4)
        vv = v.repeat_interleave(4)[None, :]                               # (B, 40)
        gnb = gpad[:, self.nb]                                             # (B, 16, 4)
        f = {name: i for i, name in enumerate(ACTION_FEATURES)}
        act = torch.zeros(B, len(ACTION_FEATURES), NUM_ACTIONS, dtype=x.dtype,
                          device=x.device)
        side_ok = self.side_ok[e].repeat(1, NUM_VALUES)                    # (B, 40)
        in_mid = (middle > 0).to(x.dtype).repeat_interleave(4, dim=1)
        act[:, f["legal"], PICK0:] = side_ok * in_mid * (
            (phase == 1) & has_gap & to_act).to(x.dtype)[:, None]
        act[:, f["legal"], :PICK0] = ((grid == FACE_DOWN)
                                      & ((phase == 0) & to_act)[:, None]).to(x.dtype)
        act[:, f["score"], PICK0:] = face[:, SLOTS:] / 50.0
        act[:, f["score"], :PICK0] = face_now / 50.0
        act[:, f["delta"], PICK0:] = (face[:, SLOTS:] - face_now) / 10.0
        act[:, f["pairs"], PICK0:] = pairs[:, SLOTS:] / 16.0
        act[:, f["pairs"], :PICK0] = pairs_now / 16.0
        act[:, f["value"], PICK0:] = vv / 10.0
        act[:, f["reveal"], :PICK0] = 1.0
        act[:, f["pick"], PICK0:] = 1.0
        act[:, f["expected"]] = exp / 30.0
        act[:, f["exp_delta"]] = (exp - now) / 10.0
        act[:, f["pair_change"]] = (pairs - pairs_now) / 4.0
        act[:, f["joins"], PICK0:] = (nbv == vv[..., None]).any(-1).to(x.dtype)
        act[:, f["left"], PICK0:] = middle.repeat_interleave(4, dim=1) / 6.0
        act[:, f["unseen"], PICK0:] = unseen.repeat_interleave(4, dim=1) / 10.0
        act[:, f["down_nb"], PICK0:] = (nbv == FACE_DOWN).sum(-1) / 4.0
        act[:, f["up_nb"], PICK0:] = ((nbv >= 1) & (nbv <= NUM_VALUES)).sum(-1) / 4.0
        act[:, f["down_nb"], :PICK0] = (gnb == FACE_DOWN).sum(-1) / 4.0
        act[:, f["up_nb"], :PICK0] = ((gnb >= 1) & (gnb <= NUM_VALUES)).sum(-1) / 4.0
        glob = torch.cat([face_now / 50.0, now / 30.0, p], 1)
        return glob, act.transpose(1, 2)
