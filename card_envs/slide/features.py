"""Action-aligned features of a Slide observation, as a torch module.

A pick ``16 + (value-1)*4 + side`` pushes ``value`` into the own grid from ``side`` toward the
empty slot; what it is worth depends on the grid it leaves, which a plain MLP on the flat
observation has to simulate. :class:`PushFeatures` builds every resulting grid and scores it
with the
expected-points formula of the Slide heuristic (``agents/slide.py``): a face-up card counts 0
when a face-up neighbour has its value, else its value times the chance that no face-down
neighbour turns out equal; a face-down card counts the expected value of an unseen card over
the values no face-up neighbour pairs (chances from the observation's unseen counts). A
reveal of slot ``s`` is scored on the grid with ``s`` opened. Everything is a pure function of
the observation (layout: ``card_envs.slide.env``), with no Python loop per sample: by default
one compiled numba loop over the batch (``backend="numba"``, CPU tensors, the rules'
``shift_in``), or batched torch gathers over a precomputed shift table (``backend="torch"``,
``forward_torch``: any device; ~30x slower on this CPU). The two are tested equal.
:func:`potential` is the reward-shaping potential (``card_envs.training.GAME_POTENTIALS``).

Per action (``ACTION_FEATURES``, in action order):

| name          | pick ``(v, side)``: the grid after the push      | reveal ``s``                 |
|---------------|--------------------------------------------------|------------------------------|
| ``legal``     | the observer acts, pick phase, ``v`` in the      | the observer acts, reveal    |
|               | middle, side allowed (= the action mask)         | phase, ``s`` face down       |
| ``score``     | face-up cards without an equal face-up neighbour, | the grid now, / 50          |
|               | summed, / 50                                     |                              |
| ``delta``     | ``score`` after - now, / 10                      | 0                            |
| ``pairs``     | face-up cards with an equal neighbour / 16       | now / 16                     |
| ``value``     | ``v`` / 10                                       | 0                            |
| ``reveal``    | 0                                                | 1                            |
| ``pick``      | 1                                                | 0                            |
| ``expected``  | expected points (heuristic formula) / 30         | of the grid with ``s`` open  |
| ``exp_delta`` | ``expected`` - expected points now, / 10         | same                         |
| ``pair_change`` | change of ``pairs`` x 16, / 4                  | same, ``s`` open             |
| ``joins``     | ``v`` lands next to a face-up ``v`` (1/0)        | 0                            |
| ``left``      | copies of ``v`` in the middle / 6                | 0                            |
| ``unseen``    | unseen copies of ``v`` / 10                      | 0                            |
| ``down_nb``   | face-down neighbours of the landing cell / 4     | of ``s`` / 4                 |
| ``up_nb``     | face-up neighbours of the landing cell / 4       | of ``s`` / 4                 |

Global features (``GLOBAL_FEATURES``): the own grid's ``score`` now / 50, its expected points
/ 30 and the unseen-value chances (10). Any player count (the own grid comes first).
"""

from __future__ import annotations

import numpy as np
import torch

from card_envs.core.jit import njit
from card_envs.slide.estimate import fill_tables, grid_score, value_shares
from card_envs.slide.rules import NUM_ACTIONS, NUM_VALUES, SLOTS, shift_in, side_ok
from card_envs.slide.rules import obs_size as slide_obs_size

FACE_DOWN = 11
PICK0 = 16
ACTION_FEATURES = ("legal", "score", "delta", "pairs", "value", "reveal", "pick", "expected",
                   "exp_delta", "pair_change", "joins", "left", "unseen", "down_nb", "up_nb")
GLOBAL_FEATURES = ("score", "expected") + tuple(f"p{v}" for v in range(1, NUM_VALUES + 1))


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
            xn = x.detach().numpy()
            glob = np.empty((xn.shape[0], self.global_dim), np.float32)
            act = np.empty((xn.shape[0], self.action_dim, NUM_ACTIONS), np.float32)
            _nb_features(xn, self.num_players, glob, act)
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


# --------------------------------------------------------------------------------------------
# the same features as one compiled loop (the default backend: ~20x faster on a CPU than the
# batched torch ops above; both are tested equal)
# --------------------------------------------------------------------------------------------
@njit(cache=True)
def _nb_neighbours(g: np.ndarray, i: int) -> tuple[int, int]:
    """(face-down, face-up) orthogonal neighbours of slot ``i``."""
    r = i // 4
    c = i % 4
    fd = 0
    fu = 0
    for rr, cc in ((r, c - 1), (r, c + 1), (r - 1, c), (r + 1, c)):
        if 0 <= rr < 4 and 0 <= cc < 4:
            x = g[rr * 4 + cc]
            if x == FACE_DOWN:
                fd += 1
            elif x > 0:
                fu += 1
    return fd, fu


@njit(cache=True)
def _nb_joins(g: np.ndarray, i: int, v: int) -> float:
    r = i // 4
    c = i % 4
    for rr, cc in ((r, c - 1), (r, c + 1), (r - 1, c), (r + 1, c)):
        if 0 <= rr < 4 and 0 <= cc < 4 and g[rr * 4 + cc] == v:
            return 1.0
    return 0.0


@njit(cache=True)
def _nb_features(x: np.ndarray, n: int, glob: np.ndarray, act: np.ndarray) -> None:
    """``glob (B, 12)``, ``act (B, 15, 56)`` (feature-major) of observations ``x (B, L)``."""
    base = SLOTS * n
    g = np.empty(SLOTS, np.int64)
    h = np.empty(SLOTS, np.int64)
    p = np.empty(NUM_VALUES)
    up = np.zeros((NUM_VALUES + 1, 5))
    down = np.zeros((NUM_VALUES + 1, 5))
    down_all = np.zeros(5)
    for b in range(x.shape[0]):
        for i in range(SLOTS):
            g[i] = int(round(x[b, i]))
        value_shares(x[b, base + NUM_VALUES:base + 2 * NUM_VALUES], p)
        fill_tables(p, up, down, down_all)
        phase = x[b, base + 2 * NUM_VALUES]
        to_act = x[b, base + 23] == 0
        now, pairs_now, face_now = grid_score(g, up, down, down_all)
        glob[b, 0] = face_now / 50.0
        glob[b, 1] = now / 30.0
        for v in range(NUM_VALUES):
            glob[b, 2 + v] = p[v]
        for a in range(NUM_ACTIONS):
            for f in range(act.shape[1]):
                act[b, f, a] = 0.0
        e = -1
        for i in range(SLOTS):
            if g[i] == 0 and e < 0:
                e = i
        # reveals
        for s in range(SLOTS):
            for i in range(SLOTS):
                h[i] = g[i]
            h[s] = 0
            ex, pr, _ = grid_score(h, up, down, down_all)
            act[b, 0, s] = 1.0 if (phase == 0 and to_act and g[s] == FACE_DOWN) else 0.0
            act[b, 1, s] = face_now / 50.0
            act[b, 3, s] = pairs_now / 16.0
            act[b, 5, s] = 1.0
            act[b, 7, s] = ex / 30.0
            act[b, 8, s] = (ex - now) / 10.0
            act[b, 9, s] = (pr - pairs_now) / 4.0
            fd, fu = _nb_neighbours(g, s)
            act[b, 13, s] = fd / 4.0
            act[b, 14, s] = fu / 4.0
        # picks
        ee = e if e >= 0 else 0
        for v in range(1, NUM_VALUES + 1):
            mid = x[b, base + v - 1]
            for side in range(4):
                a = PICK0 + (v - 1) * 4 + side
                for i in range(SLOTS):
                    h[i] = g[i]
                ok = side_ok(ee, side)
                land = ee
                if ok:
                    shift_in(h, 0, ee, side, v)
                    r = ee // 4
                    c = ee % 4
                    land = (r * 4 if side == 0 else r * 4 + 3 if side == 1
                            else c if side == 2 else 12 + c)
                ex, pr, fc = grid_score(h, up, down, down_all)
                legal = ok and mid > 0 and phase == 1 and e >= 0 and to_act
                act[b, 0, a] = 1.0 if legal else 0.0
                act[b, 1, a] = fc / 50.0
                act[b, 2, a] = (fc - face_now) / 10.0
                act[b, 3, a] = pr / 16.0
                act[b, 4, a] = v / 10.0
                act[b, 6, a] = 1.0
                act[b, 7, a] = ex / 30.0
                act[b, 8, a] = (ex - now) / 10.0
                act[b, 9, a] = (pr - pairs_now) / 4.0
                act[b, 10, a] = _nb_joins(h, land, v)
                act[b, 11, a] = mid / 6.0
                act[b, 12, a] = x[b, base + NUM_VALUES + v - 1] / 10.0
                fd, fu = _nb_neighbours(h, land)
                act[b, 13, a] = fd / 4.0
                act[b, 14, a] = fu / 4.0


def potential(obs: np.ndarray, num_players: int) -> np.ndarray:
    """Reward-shaping potential of observations ``(B, L)`` (``card_envs.training``,
    ``GAME_POTENTIALS``): the lowest estimated total of the other seats minus the observer's,
    / 20 (lower is better in Slide). A grid's estimate: its face-up cards without an equal
    face-up neighbour plus, per face-down card, the mean unseen value. 0 at the deal (all
    grids face down)."""
    obs = np.asarray(obs, np.float64).reshape(len(obs), -1)
    n = int(num_players)
    base = SLOTS * n
    unseen = obs[:, base + NUM_VALUES:base + 2 * NUM_VALUES]
    cnt = unseen.sum(1)
    mean = np.where(cnt > 0, (unseen * np.arange(1, NUM_VALUES + 1)).sum(1)
                    / np.maximum(cnt, 1), 5.5)
    g = obs[:, :base].reshape(len(obs), n, 4, 4)
    up = (g >= 1) & (g <= NUM_VALUES)
    pad = np.pad(g, ((0, 0), (0, 0), (1, 1), (1, 1)))
    same = np.zeros_like(up)
    for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1)):
        same |= pad[:, :, 1 + dr:5 + dr, 1 + dc:5 + dc] == g
    est = (g * (up & ~same)).sum((2, 3)) + (g == FACE_DOWN).sum((2, 3)) * mean[:, None]
    return (est[:, 1:].min(1) - est[:, 0]) / 20.0
