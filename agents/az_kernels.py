"""Compiled parts of the ``az`` agent (:mod:`card_envs.agents.az`): the batched descent of the
search tree, generated and compiled once per game, and the expansion / backup of a batch of
evaluated leaves.

**The tree** is one information-set tree shared by every determinization (as ``mcts``'s): a
node is a sequence of actions from the searcher's decision; each node has an ``int32`` row
(``ACT``, ``PAR``, ``MOVER``, ``CHILD``, ``SIB``, ``VISITS``, ``EXP``, ``PEND``) and ``float64``
entries ``w`` (summed value of the seat that moved into it), ``prior`` (its network prior) and
``vnet`` (the network's value of the node for the seat to act there: its unvisited children's
first-play value). ``EXP`` is 0 for a node not evaluated yet, 2 while it waits in a batch, 1
once expanded; ``PEND`` counts its visits whose value is not backed up yet.

**A batch** (:func:`descend_template`): each descent takes the next determinization (with a
fresh RNG for chance) and follows PUCT, ``Q + c P sqrt(1 + sum N) / (1 + N)`` over the children
legal in this determinization (a legal action without a child, because another determinization
had other legal actions, gets one with the uniform prior ``1/legal``). Every node passed gets
its visit at once with no value yet (*virtual loss*: the mean value ``Q`` of the backed-up
visits is scaled by ``1 - vloss * pending / visits``, so a pending visit counts as ``vloss`` of
a loss and the next descents of the batch spread out). A descent ends at a finished game
(valued at once by the outcome: the win share), at a node not evaluated (recorded with the
observation and legal mask of the seat to act there) or at a node already waiting in this batch
(a collision: its virtual visits stay until the batch's descents are done, steering the next
descents elsewhere, and are then taken back). :func:`expand_backup` then expands the evaluated
leaves with the softmax of their logits as priors and backs the values up **max-n**: a node adds
the value of the seat that moved into it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from card_envs.agents.search import _next_u64  # noqa: F401  (the generated module's RNG)
from card_envs.core import kernels as K
from card_envs.core.jit import load_generated, njit, template_source

# tree node fields (columns of the int32 node table)
ACT, PAR, MOVER, CHILD, SIB, VISITS, EXP, PEND = range(8)
NODE_FIELDS = 8
#: bytes a node takes (the int32 row and three float64 entries)
NODE_BYTES = 4 * NODE_FIELDS + 3 * 8

# Placeholders: in the generated per-game modules these names are the game's kernels and the
# rollout policy of its search agent.
_step = _legal_mask = _outcome = _observe = _policy = None


@njit(cache=True, inline="always")
def add_child(tree, w, prior, vnet, meta, node, action, mover, p):
    """Append a child of ``node`` for ``action`` played by ``mover``, with prior ``p``, to the
    node table (the caller checks there is room)."""
    new = meta[0]
    meta[0] += 1
    tree[new, ACT] = action
    tree[new, PAR] = node
    tree[new, MOVER] = mover
    tree[new, CHILD] = -1
    tree[new, SIB] = tree[node, CHILD]
    tree[new, VISITS] = 0
    tree[new, EXP] = 0
    tree[new, PEND] = 0
    w[new] = 0.0
    prior[new] = p
    vnet[new] = 0.0
    tree[node, CHILD] = new


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
def backup(node, tree, w, val):
    """Resolve one pending visit on the path from ``node`` to the root, each node adding the
    value ``val`` of the seat that moved into it."""
    nd = node
    while nd >= 0:
        tree[nd, PEND] -= 1
        if nd > 0:
            w[nd] += val[tree[nd, MOVER]]
        nd = tree[nd, PAR]


def descend_template(dets, cfg, it0, attempts, want, c_puct, vloss, mix, horizon, tree, w,
                     prior, vnet, meta, rng,
                     work, mask, tmp, val, pts, winners, rew, leaf_obs, leaf_mask, leaf_node,
                     leaf_seat, clash, out, pobs, leaf_roll):
    """Up to ``attempts`` descents from the root (module docstring), stopping once ``want``
    simulations (leaves recorded + finished games valued) are done. Writes ``out[0]`` leaves
    (rows ``0..out[0]-1`` of ``leaf_*``), ``out[1]`` finished games, ``out[2]`` collisions,
    ``out[3]`` descents made (the determinization index advances by one per descent);
    ``clash`` (``attempts`` entries) holds the collided nodes meanwhile. With ``mix > 0`` each
    new leaf is also played on by the game's rollout policy for at most ``horizon`` moves (-1:
    to the end) and ``leaf_roll`` gets the leaf seat's win share at the end (``1/n`` when cut;
    -1 for a leaf not rolled out)."""
    n = cfg[K.C_PLAYERS]
    A = mask.shape[0]
    M = tree.shape[0]
    D = dets.shape[0]
    leaves = 0
    ends = 0
    clashes = 0
    tries = 0
    while leaves + ends < want and tries < attempts:
        work[:] = dets[(it0 + tries) % D]
        tries += 1
        K.rng_seed(work, _next_u64(rng))
        node = 0
        tree[0, VISITS] += 1
        tree[0, PEND] += 1
        while True:
            if work[K.DONE] != 0:  # a finished game: its win share, backed up now
                _outcome(work, cfg, pts, winners)
                win_shares(winners, n, val)
                backup(node, tree, w, val)
                ends += 1
                break
            state = tree[node, EXP]
            if state == 2:  # waiting in this batch already: a collision (visits kept for now)
                clash[clashes] = node
                clashes += 1
                break
            cur = work[K.CUR]
            if state == 0:  # not evaluated: a leaf for the network
                tree[node, EXP] = 2
                _observe(work, cfg, cur, leaf_obs[leaves])
                _legal_mask(work, cfg, leaf_mask[leaves])
                leaf_node[leaves] = node
                leaf_seat[leaves] = cur
                leaf_roll[leaves] = -1.0
                if mix > 0.0:  # a rollout from the leaf, mixed with the network's value
                    left = horizon
                    while work[K.DONE] == 0 and left != 0:
                        _legal_mask(work, cfg, mask)
                        _step(work, cfg, _policy(work, cfg, work[K.CUR], mask, pobs, rng), rew)
                        left -= 1
                    leaf_roll[leaves] = 1.0 / n  # cut at the horizon: an even share
                    if work[K.DONE] != 0:
                        _outcome(work, cfg, pts, winners)
                        win_shares(winners, n, val)
                        leaf_roll[leaves] = val[cur]
                leaves += 1
                break
            _legal_mask(work, cfg, mask)
            nl = 0
            for a in range(A):
                nl += mask[a]
            total = 0
            nch = 0
            ch = tree[node, CHILD]
            while ch >= 0:
                a = tree[ch, ACT]
                if mask[a]:
                    tmp[a] = 1
                    nch += 1
                    total += tree[ch, VISITS]
                ch = tree[ch, SIB]
            if nch < nl:  # legal here but never seen legal at this node: a child, prior 1/nl
                for a in range(A):
                    if mask[a] and tmp[a] == 0 and meta[0] < M:
                        add_child(tree, w, prior, vnet, meta, node, a, cur, 1.0 / nl)
                        tmp[a] = 1
            sq = math.sqrt(total + 1.0)
            fpu = vnet[node]
            best = -1
            bestv = -1e300
            ch = tree[node, CHILD]
            while ch >= 0:
                a = tree[ch, ACT]
                if tmp[a]:
                    tmp[a] = 0
                    nv = tree[ch, VISITS]
                    pend = tree[ch, PEND]
                    q = w[ch] / (nv - pend) if nv > pend else fpu
                    if pend > 0:  # virtual loss: a pending visit counts vloss of a loss
                        q *= 1.0 - vloss * pend / nv
                    u = q + c_puct * prior[ch] * sq / (1.0 + nv)
                    if u > bestv:
                        bestv = u
                        best = ch
                ch = tree[ch, SIB]
            if best < 0:  # tree full and nothing here is legal: evaluate, do not expand
                _observe(work, cfg, cur, leaf_obs[leaves])
                _legal_mask(work, cfg, leaf_mask[leaves])
                leaf_node[leaves] = node
                leaf_seat[leaves] = cur
                leaf_roll[leaves] = -1.0
                leaves += 1
                break
            _step(work, cfg, tree[best, ACT], rew)
            node = best
            tree[node, VISITS] += 1
            tree[node, PEND] += 1
    for i in range(clashes):  # the collisions' visits steered this batch; now take them back
        nd = clash[i]
        while nd >= 0:
            tree[nd, VISITS] -= 1
            tree[nd, PEND] -= 1
            nd = tree[nd, PAR]
    out[0] = leaves
    out[1] = ends
    out[2] = clashes
    out[3] = tries


@njit(cache=True, nogil=True)
def expand_backup(count, leaf_node, leaf_seat, logits, acts, offsets, values, n, tree, w,
                  prior, vnet, meta, val):
    """Expand the first ``count`` leaves of a batch (children of the legal actions ``acts``,
    priors the softmax of ``logits`` per leaf, rows ``offsets[b]:offsets[b+1]``) and back up
    their ``values`` (each in [0, 1], for the seat to act at the leaf; the other seats share
    the rest). A leaf whose children do not fit stays unexpanded (evaluated again later)."""
    M = tree.shape[0]
    for b in range(count):
        node = leaf_node[b]
        s = leaf_seat[b]
        v = values[b]
        if tree[node, EXP] == 2:
            lo = offsets[b]
            hi = offsets[b + 1]
            if meta[0] + (hi - lo) <= M:
                mx = -np.inf
                for k in range(lo, hi):
                    mx = max(mx, logits[k])
                tot = 0.0
                for k in range(lo, hi):
                    tot += math.exp(logits[k] - mx)
                for k in range(lo, hi):
                    add_child(tree, w, prior, vnet, meta, node, acts[k], s,
                              math.exp(logits[k] - mx) / tot)
                tree[node, EXP] = 1
            else:
                tree[node, EXP] = 0
            vnet[node] = v
        for p in range(n):
            val[p] = (1.0 - v) / (n - 1)
        val[s] = v
        backup(node, tree, w, val)


_GENERATED = """# Generated by card_envs.agents.az_kernels.compiled_descend for {game}; do not edit.
import math

from card_envs.core.jit import njit

from card_envs.agents.az_kernels import (ACT, CHILD, EXP, MOVER, PAR, PEND, SIB, VISITS,
                                         add_child, backup, win_shares)
from card_envs.agents.search import _next_u64
from card_envs.core import kernels as K
from {rules} import legal_mask as _legal_mask
from {rules} import outcome as _outcome
from {rules} import step as _step
from {observe} import observe as _observe
from {policy_module} import {policy_name} as _policy


@njit(cache=True, nogil=True)
{source}"""

_DESCEND: dict[tuple[type, Any], Callable[..., None]] = {}


def compiled_descend(game: Any, policy: Callable[..., int]) -> Callable[..., None]:
    """:func:`descend_template` bound to ``type(game)``'s kernels and the rollout ``policy``
    (a numba function ``(state, cfg, seat, mask, obs, rng) -> action``), compiled once and cached on
    disk (a generated module in card-envs' kernel cache folder, as
    :func:`card_envs.agents.search.compiled_search` does: numba caches only functions of a
    real file)."""
    key = (type(game), policy)
    if key in _DESCEND:
        return _DESCEND[key]
    src = template_source(descend_template, "descend")
    observe = (game.observe or game.rules).__name__
    py = getattr(policy, "py_func", policy)
    text = _GENERATED.format(game=game.env_id, rules=game.rules.__name__, observe=observe,
                             policy_module=py.__module__, policy_name=py.__name__, source=src)
    name = f"az_descend_{game.env_id}_{py.__module__.replace('.', '_')}_{py.__name__}"
    module = load_generated(name, text)
    _DESCEND[key] = module.descend
    return module.descend
