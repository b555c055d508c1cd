"""Compiled parts of the batched ``az`` search (:mod:`card_envs.agents.az_search`): one search
tree per game for ``B`` games at once, descended in compiled code (a ``prange`` over the games),
the leaves of every game valued by one network forward pass, expanded and backed up in compiled
code.

**The trees.** Game ``i`` owns rows ``tree[i]`` (``int32`` fields ``ACT``, ``PAR``, ``MOVER``,
``CHILD``, ``SIB``, ``VISITS``, ``PEND``, ``EXP`` per node) and the ``float64`` entries
``w[i]`` (summed value of the seat that moved into the node), ``logp[i]`` (its log prior, the
log-softmax of the parent's logits) and ``vnet[i]`` (the network's value of the node for the
seat to act there). A node is a sequence of actions from the searched decision: one
information-set tree shared by every determinization, as in ``mcts``. ``EXP`` is 0 for a node
not evaluated yet, 2 while it waits for the network, 1 once expanded; ``VISITS`` counts the
visits including the ``PEND`` ones whose value is not backed up yet.

**A wave** (:func:`wave_template`): each active game makes up to ``L`` descents (simulations).
A descent copies the next determinization (``sims % D``), draws fresh chance for it, and from
the root picks a child by

* at the root with ``mode`` 0 (Gumbel): sequential halving over the considered actions
  (Danihelka et al. 2022; ``mctx``'s ``gumbel_muzero_root_action_selection``): the action with
  the visit count the table of considered visits asks for at this simulation, maximising
  ``g(a) + logits(a) + sigma(completed Q)(a)``; below the root the deterministic
  ``argmax pi'(a) - N(a) / (1 + sum N)`` with ``pi' = softmax(logits + sigma(completed Q))``;
* with ``mode`` 1 (PUCT): ``Q + c_puct P sqrt(1 + sum N) / (1 + N)`` everywhere, a pending
  visit counting as ``vloss`` of a loss;

where ``completed Q`` is a child's mean value for the seat to act, or for unvisited children
the network's value of the node mixed with the visited children's (``mctx``'s
``qtransform_completed_by_mix_value``), with ``rescale`` min-max rescaled over the node's
children as ``mctx`` does (else the win shares themselves), scaled by ``sigma = (c_visit +
max N) * c_scale``. Only children legal in
the descent's determinization compete; a legal action never seen at the node gets a child with
the uniform prior. A descent ends at a finished game (its win shares are backed up at once), at
a node not evaluated (a *leaf*: the observation and mask of the seat to act there are written
to the game's leaf rows) or at a node already waiting in this wave (a collision: taken back
after the wave). With ``model_others`` the seats other than the searcher move by the game's
rollout policy and are not tree nodes (Op Glad IJs' simultaneous windows).

**Backup** (:func:`expand_template`) is max-n on a value vector: the network gives every seat's
expected share of the win, each node adds the share of the seat that moved into it, so every
seat maximises its own share for any number of players.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from numba import prange

from card_envs.agents.az_tree import (
    ACT,
    CHILD,
    EXP,
    MOVER,
    PAR,
    PEND,
    SIB,
    VISITS,
    add_child,
    backup,
    completed_q,
    gumbel,
    select_child,
    win_shares,
)
from card_envs.agents.search import _next_u64  # noqa: F401  (the generated module's RNG)
from card_envs.core import kernels as K
from card_envs.core.jit import load_generated, njit, template_source

# Placeholders: in the generated per-game modules these names are the game's kernels and the
# rollout policy of its search agent.
_step = _legal_mask = _outcome = _observe = _policy = _det = _leaf = _descend = None


def roots_template(nthreads, active, states, cfg, seeds, noise, tree, w, vnet, meta, sims, rng,
                   gum, dets, root_seat, rmask, leaf_obs, leaf_mask, leaf_node, leaf_seat, L):
    """Start the search of every active game: a fresh tree, the searcher's observation and mask
    as the root's leaf (row ``i * L``), the game's RNG from ``seeds[i]``, Gumbel draws for the
    legal root actions (``noise``) and the determinizations (the game's kernel ``_det``)."""
    A = rmask.shape[1]
    D = dets.shape[1]
    for i in prange(active.shape[0]):
        if not active[i]:
            continue
        s = states[i]
        seat = s[K.CUR]
        root_seat[i] = seat
        t = tree[i]
        t[0, ACT] = 0
        t[0, PAR] = -1
        t[0, MOVER] = -1
        t[0, CHILD] = -1
        t[0, SIB] = -1
        t[0, VISITS] = 0
        t[0, PEND] = 0
        t[0, EXP] = 0
        w[i, 0] = 0.0
        vnet[i, 0] = 0.0
        meta[i] = 1
        sims[i] = 0
        r = rng[i:i + 1]
        r[0] = seeds[i]
        row = i * L
        _observe(s, cfg, seat, leaf_obs[row])
        _legal_mask(s, cfg, leaf_mask[row])
        leaf_node[row] = 0
        leaf_seat[row] = seat
        for a in range(A):
            rmask[i, a] = leaf_mask[row, a]
            gum[i, a] = gumbel(r) if noise and rmask[i, a] else 0.0
        for d in range(D):
            _det(s, cfg, seat, dets[i, d], r)


def leaf_template(i, row, node, cur, s_work, cfg, mix, horizon, s_mask, pobs, s_rng, rew, pts,
                  winners, s_val, leaf_obs, leaf_mask, leaf_node, leaf_seat, leaf_roll):
    """Record a leaf of game ``i`` in row ``row`` (the observation and mask of the seat to act
    ``cur``); with ``mix`` > 0 the position is then played on by the rollout policy (at most
    ``horizon`` moves; -1: to the end) and ``leaf_roll[row]`` gets every seat's win share at
    its end (an even share when cut)."""
    n = cfg[K.C_PLAYERS]
    _observe(s_work, cfg, cur, leaf_obs[row])
    _legal_mask(s_work, cfg, leaf_mask[row])
    leaf_node[row] = node
    leaf_seat[row] = cur
    if mix > 0.0:
        left = horizon
        while s_work[K.DONE] == 0 and left != 0:
            _legal_mask(s_work, cfg, s_mask)
            _step(s_work, cfg, _policy(s_work, cfg, s_work[K.CUR], s_mask, pobs, s_rng), rew)
            left -= 1
        if s_work[K.DONE] != 0:
            _outcome(s_work, cfg, pts, winners)
            win_shares(winners, n, s_val)
            for p in range(n):
                leaf_roll[row, p] = s_val[p]
        else:
            for p in range(n):
                leaf_roll[row, p] = 1.0 / n


def descend_template(i, dets, cfg, nsims, L, root_seat, rmask, table, mode, c_puct, vloss,
                     c_visit, c_scale, rescale, model_others, mix, horizon, tree, w, logp, vnet,
                     gum, meta, sims, rng, work, mask, tmp, qs, val, pts, winners, rew, pobs,
                     clash, leaf_obs, leaf_mask, leaf_node, leaf_seat, leaf_roll):
    """Up to ``L`` simulations of game ``i`` (module docstring); returns the number of leaves
    written to rows ``i * L ...`` of ``leaf_*``."""
    n = cfg[K.C_PLAYERS]
    A = rmask.shape[1]
    M = tree.shape[1]
    D = dets.shape[1]
    t = tree[i]
    wi = w[i]
    li = logp[i]
    vi = vnet[i]
    gi = gum[i]
    s_work = work[i]
    s_mask = mask[i]
    s_tmp = tmp[i]
    s_qs = qs[i]
    s_val = val[i]
    s_rng = rng[i:i + 1]
    me = root_seat[i]
    leaves = 0
    ends = 0
    clashes = 0
    tries = 0
    m_root = 0
    for a in range(A):
        m_root += rmask[i, a]
    m_root = min(m_root, table.shape[0] - 1)
    while leaves + ends < L and sims[i] < nsims and tries < 4 * L + 4:
        tries += 1
        s_work[:] = dets[i, sims[i] % D]
        K.rng_seed(s_work, _next_u64(s_rng))
        node = 0
        t[0, VISITS] += 1
        t[0, PEND] += 1
        while True:
            if model_others:  # the other seats play the rollout policy, off the tree
                while s_work[K.DONE] == 0 and s_work[K.CUR] != me:
                    _legal_mask(s_work, cfg, s_mask)
                    _step(s_work, cfg, _policy(s_work, cfg, s_work[K.CUR], s_mask, pobs[i],
                                               s_rng), rew[i])
            if s_work[K.DONE] != 0:  # a finished game: its win shares, backed up now
                _outcome(s_work, cfg, pts[i], winners[i])
                win_shares(winners[i], n, s_val)
                backup(t, wi, node, s_val)
                ends += 1
                sims[i] += 1
                break
            state = t[node, EXP]
            if state == 2:  # waiting in this wave already: a collision
                clash[i, clashes] = node
                clashes += 1
                break
            cur = s_work[K.CUR]
            if state == 0:  # not evaluated: a leaf for the network
                t[node, EXP] = 2
                _leaf(i, i * L + leaves, node, cur, s_work, cfg, mix, horizon, s_mask, pobs[i],
                      s_rng, rew[i], pts[i], winners[i], s_val, leaf_obs, leaf_mask, leaf_node,
                      leaf_seat, leaf_roll)
                leaves += 1
                sims[i] += 1
                break
            _legal_mask(s_work, cfg, s_mask)
            if node == 0:
                for a in range(A):
                    s_mask[a] = s_mask[a] & rmask[i, a]
            nl = 0
            for a in range(A):
                nl += s_mask[a]
            nch = 0
            ch = t[node, CHILD]
            while ch >= 0:
                a = t[ch, ACT]
                if s_mask[a]:
                    s_tmp[a] = 1
                    nch += 1
                ch = t[ch, SIB]
            if nch < nl:  # legal here but never seen legal at this node: a uniform prior
                for a in range(A):
                    if s_mask[a] and s_tmp[a] == 0 and meta[i] < M:
                        add_child(tree, w, logp, vnet, meta, i, node, a, cur, -math.log(nl))
                        s_tmp[a] = 1
            considered = -1
            if node == 0 and mode == 0:
                k = t[0, VISITS] - 1  # simulations before this one (pending included)
                if k < table.shape[1]:
                    considered = table[m_root, k]
            best = select_child(t, wi, li, vi, gi, node, s_tmp, s_qs, mode, considered,
                                c_puct, vloss, c_visit, c_scale, rescale)
            ch = t[node, CHILD]
            while ch >= 0:
                s_tmp[t[ch, ACT]] = 0
                ch = t[ch, SIB]
            if best < 0:  # nothing legal has a child (tree full): value it, do not expand
                _leaf(i, i * L + leaves, node, cur, s_work, cfg, mix, horizon, s_mask, pobs[i],
                      s_rng, rew[i], pts[i], winners[i], s_val, leaf_obs, leaf_mask, leaf_node,
                      leaf_seat, leaf_roll)
                leaves += 1
                sims[i] += 1
                break
            _step(s_work, cfg, t[best, ACT], rew[i])
            node = best
            t[node, VISITS] += 1
            t[node, PEND] += 1
    for c in range(clashes):  # a collision's visits steered this wave; now take them back
        nd = clash[i, c]
        while nd >= 0:
            t[nd, VISITS] -= 1
            t[nd, PEND] -= 1
            nd = t[nd, PAR]
    return leaves


def wave_template(nthreads, active, dets, cfg, nsims, L, root_seat, rmask, table, mode,
                  c_puct, vloss, c_visit, c_scale, rescale, model_others, mix, horizon, tree, w,
                  logp, vnet, gum, meta, sims, rng, work, mask, tmp, qs, val, pts, winners, rew,
                  pobs, clash, leaf_obs, leaf_mask, leaf_node, leaf_seat, leaf_roll,
                  leaf_count):
    """One wave over every active game (``leaf_count[i]``: leaves written by game ``i``)."""
    for i in prange(active.shape[0]):
        leaf_count[i] = 0
        if active[i]:
            leaf_count[i] = _descend(
                i, dets, cfg, nsims, L, root_seat, rmask, table, mode, c_puct, vloss, c_visit,
                c_scale, rescale, model_others, mix, horizon, tree, w, logp, vnet, gum, meta,
                sims, rng, work, mask, tmp, qs, val, pts, winners, rew, pobs, clash, leaf_obs,
                leaf_mask, leaf_node, leaf_seat, leaf_roll)


def expand_template(nthreads, games, starts, counts, leaf_node, leaf_seat, logits, acts,
                    offsets, values, leaf_roll, mix, prior_temp, do_backup, tree, w, logp, vnet,
                    meta, val):
    """Expand the evaluated leaves and back their values up. Game ``games[g]`` has leaf rows
    ``starts[g] ... starts[g] + counts[g] - 1``: legal actions ``acts[offsets[r]:offsets[r+1]]``
    with ``logits`` (priors: their softmax at ``prior_temp``), ``values[r, j]`` the share of
    the seat ``j`` places after the seat to act (the network's relative order). A leaf whose
    children do not fit stays unexpanded (evaluated again later). With ``mix`` > 0 a leaf's
    value is ``(1 - mix) network + mix rollout`` (``leaf_roll[r]``: every seat's share at the
    end of the leaf's rollout). ``do_backup`` false: expand only (the roots)."""
    n = values.shape[1]
    M = tree.shape[1]
    for g in prange(games.shape[0]):
        i = games[g]
        t = tree[i]
        v = val[i]
        for r in range(starts[g], starts[g] + counts[g]):
            node = leaf_node[r]
            s = leaf_seat[r]
            for j in range(n):
                v[(s + j) % n] = values[r, j]
            if mix > 0.0:
                for p in range(n):
                    v[p] = (1.0 - mix) * v[p] + mix * leaf_roll[r, p]
            if t[node, EXP] != 1:
                lo = offsets[r]
                hi = offsets[r + 1]
                if meta[i] + (hi - lo) <= M:
                    mx = -1e300
                    for k in range(lo, hi):
                        mx = max(mx, logits[k] / prior_temp)
                    z = 0.0
                    for k in range(lo, hi):
                        z += math.exp(logits[k] / prior_temp - mx)
                    lz = mx + math.log(z)
                    for k in range(lo, hi):
                        add_child(tree, w, logp, vnet, meta, i, node, acts[k], s,
                                  logits[k] / prior_temp - lz)
                    t[node, EXP] = 1
                else:
                    t[node, EXP] = 0
                vnet[i, node] = v[s]
            if do_backup:
                backup(t, w[i], node, v)


def outputs_template(nthreads, active, rmask, gum, mode, c_visit, c_scale, rescale, tree, w,
                     logp, vnet, qs, tmp, visits, q, pi, action, value):
    """Per active game, from the root's children: ``visits`` (completed), ``q`` (mean value
    for the searcher, NaN unvisited), ``pi`` (the improved policy ``softmax(logits +
    sigma(completed Q))`` over the legal actions: the policy target), ``action`` (Gumbel: the
    most visited considered action maximising ``g + logits + sigma(completed Q)``; PUCT: the
    most visited, then the best mean) and ``value`` (the searcher's mixed root value)."""
    A = rmask.shape[1]
    for i in prange(active.shape[0]):
        if not active[i]:
            continue
        t = tree[i]
        wi = w[i]
        li = logp[i]
        s_tmp = tmp[i]
        s_qs = qs[i]
        for a in range(A):
            visits[i, a] = 0
            q[i, a] = np.nan
            pi[i, a] = 0.0
            s_tmp[a] = rmask[i, a]
        _, lse, vmix = completed_q(t, wi, li, vnet[i], 0, s_tmp, s_qs, c_visit, c_scale, 0.0,
                                   rescale)
        value[i] = vmix
        maxn = 0
        smax = -1e300
        ch = t[0, CHILD]
        while ch >= 0:
            a = t[ch, ACT]
            if s_tmp[a]:
                nv = t[ch, VISITS] - t[ch, PEND]
                visits[i, a] = nv
                if nv > 0:
                    q[i, a] = wi[ch] / nv
                maxn = max(maxn, nv)
                smax = max(smax, li[ch] + s_qs[a])
            ch = t[ch, SIB]
        z = 0.0
        ch = t[0, CHILD]
        while ch >= 0:
            a = t[ch, ACT]
            if s_tmp[a]:
                z += math.exp(li[ch] + s_qs[a] - smax)
            ch = t[ch, SIB]
        best = -1
        bestv = -1e300
        ch = t[0, CHILD]
        while ch >= 0:
            a = t[ch, ACT]
            if s_tmp[a]:
                pi[i, a] = math.exp(li[ch] + s_qs[a] - smax) / z
                nv = visits[i, a]
                if mode == 0:
                    s = gum[i, a] + li[ch] - lse + s_qs[a] if nv == maxn else -1e300
                else:
                    s = nv + (wi[ch] / nv if nv > 0 else 0.0) * 1e-6
                if s > bestv:
                    bestv = s
                    best = a
            ch = t[ch, SIB]
        action[i] = best
        for a in range(A):
            s_tmp[a] = 0


_GENERATED = """# Generated by card_envs.agents.az_kernels.compiled_search for {game}; do not edit.
import math

import numpy as np
from numba import prange

from card_envs.agents.az_tree import (ACT, CHILD, EXP, MOVER, PAR, PEND, SIB, VISITS,
                                      add_child, backup, gumbel, select_child, win_shares)
from card_envs.agents.search import _next_u64
from card_envs.core import kernels as K
from card_envs.core.jit import njit
from {step_module} import {step_name} as _step
from {mask_module} import {mask_name} as _legal_mask
from {outcome_module} import {outcome_name} as _outcome
from {obs_module} import {obs_name} as _observe
from {policy_module} import {policy_name} as _policy
from {det_module} import {det_name} as _det


@njit(cache=True, inline="always")
{leaf}

@njit(cache=True)
{descend}

@njit(cache=True, parallel=True)
{roots_par}

@njit(cache=True)
{roots_serial}

@njit(cache=True, parallel=True)
{wave_par}

@njit(cache=True)
{wave_serial}
"""


_BUILT: dict[tuple[Any, ...], tuple[Any, ...]] = {}


def compiled_waves(game: Any, policy: Callable[..., int], det: Callable[..., None]
                   ) -> tuple[Any, Any, Any, Any]:
    """``(waves parallel, waves serial, roots parallel, roots serial)``: :func:`wave_template`
    and :func:`roots_template` bound to ``type(game)``'s kernels, the rollout ``policy`` (a
    numba function ``(state, cfg, seat, mask, obs, rng) -> action``) and the determinization
    kernel ``det`` (``(state, cfg, observer, out, rng)``), compiled once and cached on disk
    through a generated module (numba caches only functions of a real file). All take a
    thread count first; the parallel ones run on at most that many numba threads."""
    from card_envs.core.jit import kernel_imports
    from card_envs.core.vector import _with_threads

    key = (type(game), policy, det)
    if key in _BUILT:
        return _BUILT[key]
    imports, digest = kernel_imports(step=game.k_step, mask=game.k_legal_mask,
                                     outcome=game.k_outcome, obs=game.k_observe,
                                     policy=policy, det=det)
    sources = {f"{kind}_{build}": template_source(template, f"{kind}_{build}")
               for kind, template in (("wave", wave_template), ("roots", roots_template))
               for build in ("par", "serial")}
    text = _GENERATED.format(game=game.env_id,
                             descend=template_source(descend_template, "_descend"),
                             leaf=template_source(leaf_template, "_leaf"),
                             **sources, **imports)
    module = load_generated(f"az_waves_{game.env_id}_{digest}", text)
    _BUILT[key] = (_with_threads(module.wave_par), module.wave_serial,
                   _with_threads(module.roots_par), module.roots_serial)
    return _BUILT[key]


def _builds(template: Callable[..., Any], name: str) -> tuple[Any, Any]:
    """A game-independent template's parallel (behind the thread-count wrapper) and serial
    builds, cached on disk under distinct names."""
    from card_envs.core.vector import _renamed, _with_threads

    par = njit(cache=True, parallel=True)(_renamed(template, f"{name}_par"))
    return _with_threads(par), njit(cache=True)(_renamed(template, f"{name}_serial"))


_EXPAND: tuple[Any, Any] | None = None
_OUTPUTS: tuple[Any, Any] | None = None


def expand_kernels() -> tuple[Any, Any]:
    """``(parallel, serial)`` :func:`expand_template`."""
    global _EXPAND
    if _EXPAND is None:
        _EXPAND = _builds(expand_template, "az_expand")
    return _EXPAND


def output_kernels() -> tuple[Any, Any]:
    """``(parallel, serial)`` :func:`outputs_template`."""
    global _OUTPUTS
    if _OUTPUTS is None:
        _OUTPUTS = _builds(outputs_template, "az_outputs")
    return _OUTPUTS
