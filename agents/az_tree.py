"""The search tree of the batched ``az`` search (:mod:`card_envs.agents.az_kernels` has the
layout): node fields, the considered-visits table of sequential halving, and the compiled
per-node steps every wave uses: adding a child, backing up a win-share vector, the completed Q
of a node's children and the choice of the child to descend to."""

from __future__ import annotations

import math

import numpy as np

from card_envs.core import kernels as K
from card_envs.core.jit import njit

# tree node fields (the int32 columns)
ACT, PAR, MOVER, CHILD, SIB, VISITS, PEND, EXP = range(8)
NODE_FIELDS = 8
#: bytes a node takes (the int32 row and three float64 entries)
NODE_BYTES = 4 * NODE_FIELDS + 3 * 8
#: root selection modes
GUMBEL, PUCT = 0, 1


def considered_visits(m: int, n: int) -> list[int]:
    """Sequential halving's visit count at each of ``n`` simulations with ``m`` considered
    actions (``mctx.seq_halving.get_sequence_of_considered_visits``): the simulation with that
    index goes to a considered action with this many visits."""
    if m <= 1:
        return list(range(n))
    log2m = int(math.ceil(math.log2(m)))
    seq: list[int] = []
    visits = [0] * m
    k = m
    while len(seq) < n:
        extra = max(1, int(n / (log2m * k)))
        for _ in range(extra):
            seq.extend(visits[:k])
            for j in range(k):
                visits[j] += 1
        k = max(2, k // 2)
    return seq[:n]


def considered_table(max_m: int, n: int) -> np.ndarray:
    """``table[m, k]``: :func:`considered_visits` for every ``m`` in ``0..max_m`` (int32)."""
    out = np.zeros((max_m + 1, max(n, 1)), np.int32)
    for m in range(max_m + 1):
        out[m, :n] = considered_visits(m, n)
    return out


@njit(cache=True, inline="always")
def add_child(tree, w, logp, vnet, meta, i, node, action, mover, lp):
    """Append a child of ``node`` (game ``i``) for ``action`` played by ``mover`` with log
    prior ``lp`` (the caller checks there is room)."""
    new = meta[i]
    meta[i] += 1
    t = tree[i]
    t[new, ACT] = action
    t[new, PAR] = node
    t[new, MOVER] = mover
    t[new, CHILD] = -1
    t[new, SIB] = t[node, CHILD]
    t[new, VISITS] = 0
    t[new, PEND] = 0
    t[new, EXP] = 0
    w[i, new] = 0.0
    logp[i, new] = lp
    vnet[i, new] = 0.0
    t[node, CHILD] = new


@njit(cache=True, inline="always")
def win_shares(winners, n, val):
    """``val[p]``: seat ``p``'s share of a finished game's win (1/k for k tied winners; an even
    share if nobody won)."""
    nw = 0
    for p in range(n):
        nw += winners[p]
    for p in range(n):
        val[p] = winners[p] / nw if nw > 0 else 1.0 / n


@njit(cache=True, inline="always")
def backup(t, wi, node, val):
    """Resolve one pending visit on the path from ``node`` to the root of one tree (``t``, its
    ``wi``), each node adding the value ``val`` of the seat that moved into it."""
    nd = node
    while nd >= 0:
        t[nd, PEND] -= 1
        if nd > 0:
            wi[nd] += val[t[nd, MOVER]]
        nd = t[nd, PAR]


@njit(cache=True)
def completed_q(t, wi, li, vi, node, avail, qs, c_visit, c_scale, vloss, rescale):
    """For the children of ``node`` whose action is marked in ``avail``: ``qs[a]`` gets
    ``sigma(completed Q)`` (module docstring) and the return value is ``(sum of visits
    including pending, log-sum-exp of their log priors, mixed value of the node)``. A pending
    visit counts as ``vloss`` of a loss in its child's Q (virtual loss: the descents of one
    wave spread out). ``rescale``: Q min-max rescaled over the children first (``mctx``'s
    default, for values of no fixed scale); else the shares themselves."""
    lmax = -1e300
    ch = t[node, CHILD]
    while ch >= 0:
        if avail[t[ch, ACT]] and li[ch] > lmax:
            lmax = li[ch]
        ch = t[ch, SIB]
    z = 0.0
    total = 0
    done_sum = 0
    done_max = 0
    psum = 0.0
    pq = 0.0
    ch = t[node, CHILD]
    while ch >= 0:
        if avail[t[ch, ACT]]:
            p = math.exp(li[ch] - lmax)
            z += p
            total += t[ch, VISITS]
            d = t[ch, VISITS] - t[ch, PEND]
            if d > 0:
                done_sum += d
                done_max = max(done_max, d)
                psum += p
                pq += p * wi[ch] / d
        ch = t[ch, SIB]
    lse = lmax + math.log(z) if z > 0 else 0.0
    vmix = vi[node]
    if done_sum > 0:
        vmix = (vi[node] + done_sum * (pq / psum)) / (done_sum + 1.0)
    lo = 1e300
    hi = -1e300
    ch = t[node, CHILD]
    while ch >= 0:
        a = t[ch, ACT]
        if avail[a]:
            d = t[ch, VISITS] - t[ch, PEND]
            q = wi[ch] / d if d > 0 else vmix
            if t[ch, PEND] > 0 and vloss > 0.0:
                q = q * d / (d + vloss * t[ch, PEND]) if d > 0 else 0.0
            qs[a] = q
            lo = min(lo, q)
            hi = max(hi, q)
        ch = t[ch, SIB]
    scale = (c_visit + done_max) * c_scale
    if rescale:
        scale /= max(hi - lo, 1e-8)
    else:
        lo = 0.0
    ch = t[node, CHILD]
    while ch >= 0:
        a = t[ch, ACT]
        if avail[a]:
            qs[a] = (qs[a] - lo) * scale
        ch = t[ch, SIB]
    return total, lse, vmix


@njit(cache=True)
def select_child(t, wi, li, vi, gi, node, avail, qs, mode, considered, c_puct, vloss, c_visit,
                 c_scale, rescale):
    """The child of ``node`` to descend into among those marked in ``avail`` (module
    docstring; ``considered`` >= 0: the Gumbel root's visit count for this simulation, -1 below
    the root), or -1 if there is none."""
    best = -1
    bestv = -1e300
    if mode == 1:  # PUCT
        lmax = -1e300
        total = 0
        ch = t[node, CHILD]
        while ch >= 0:
            if avail[t[ch, ACT]]:
                lmax = max(lmax, li[ch])
                total += t[ch, VISITS]
            ch = t[ch, SIB]
        z = 0.0
        ch = t[node, CHILD]
        while ch >= 0:
            if avail[t[ch, ACT]]:
                z += math.exp(li[ch] - lmax)
            ch = t[ch, SIB]
        sq = math.sqrt(total + 1.0)
        ch = t[node, CHILD]
        while ch >= 0:
            if avail[t[ch, ACT]]:
                nv = t[ch, VISITS]
                pend = t[ch, PEND]
                q = wi[ch] / (nv - pend) if nv > pend else vi[node]
                if pend > 0:
                    q *= 1.0 - vloss * pend / nv
                u = q + c_puct * math.exp(li[ch] - lmax) / z * sq / (1.0 + nv)
                if u > bestv:
                    bestv = u
                    best = ch
            ch = t[ch, SIB]
        return best
    total, lse, _ = completed_q(t, wi, li, vi, node, avail, qs, c_visit, c_scale, vloss,
                                rescale)
    if considered >= 0:  # the Gumbel root: sequential halving
        ch = t[node, CHILD]
        while ch >= 0:
            a = t[ch, ACT]
            if avail[a] and t[ch, VISITS] == considered:
                s = max(-1e9, gi[a] + li[ch] - lse + qs[a])
                if s > bestv:
                    bestv = s
                    best = ch
            ch = t[ch, SIB]
        if best >= 0:
            return best
    # deterministic selection: argmax softmax(logits + sigma(cq)) - N / (1 + sum N)
    smax = -1e300
    ch = t[node, CHILD]
    while ch >= 0:
        a = t[ch, ACT]
        if avail[a]:
            smax = max(smax, li[ch] + qs[a])
        ch = t[ch, SIB]
    z = 0.0
    ch = t[node, CHILD]
    while ch >= 0:
        a = t[ch, ACT]
        if avail[a]:
            z += math.exp(li[ch] + qs[a] - smax)
        ch = t[ch, SIB]
    ch = t[node, CHILD]
    while ch >= 0:
        a = t[ch, ACT]
        if avail[a]:
            s = math.exp(li[ch] + qs[a] - smax) / z - t[ch, VISITS] / (1.0 + total)
            if s > bestv:
                bestv = s
                best = ch
        ch = t[ch, SIB]
    return best


@njit(cache=True)
def copy_state(state, cfg, observer, out, rng):
    """The determinization of a perfect-information game: the position itself (the chance of
    every simulation is drawn afresh anyway)."""
    out[:] = state


@njit(cache=True, inline="always")
def gumbel(rng):
    """A standard Gumbel draw from the search RNG."""
    u = ((K.draw(rng) >> np.uint64(11)) + 0.5) / 9007199254740992.0
    return -math.log(-math.log(u))
