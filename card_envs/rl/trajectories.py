"""Per-seat trajectories in a flat sample buffer, kept by compiled code (for card-envs' own PPO,
:mod:`card_envs.rl.ppo`, and RLlib's batched runner, :mod:`card_envs.rl.rllib.batched`): each
sample is linked to the next move of the same (game, seat), each seat's rewards are credited to
its pending sample, GAE follows the links, and minibatches gather their legal-action rows from
the flat store.
"""

from __future__ import annotations

from typing import Any

from card_envs.core.jit import njit

__all__ = ["credit", "gae", "gather_rows", "link", "observer"]


# ------------------------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def link(ptr, games, seats, pending, nxt):
    """Samples ``ptr..ptr+m`` were played by ``seats`` in ``games``: each follows the pending
    sample of its (game, seat), which it replaces."""
    for j in range(games.shape[0]):
        g, s = games[j], seats[j]
        p = pending[g, s]
        if p >= 0:
            nxt[p] = ptr + j
        pending[g, s] = ptr + j


@njit(cache=True, nogil=True)
def credit(rewards, ended, pending, rew, done):
    """Add every seat's reward to its pending sample; a game that ended closes them all."""
    for g in range(rewards.shape[0]):
        for s in range(pending.shape[1]):
            p = pending[g, s]
            if p >= 0:
                rew[p] += rewards[g, s]
                if ended[g]:
                    done[p] = True
                    pending[g, s] = -1
            elif ended[g]:
                pending[g, s] = -1


@njit(cache=True, nogil=True)
def gae(rew, val, nxt, done, boot, phi, boot_phi, shaping, gamma, lam, adv, ret):
    """GAE over linked samples (``nxt[j] > j`` or -1: cut, bootstrapped by ``boot[j]``),
    with potential-based shaping ``shaping * (gamma phi' - phi)``."""
    for j in range(rew.shape[0] - 1, -1, -1):
        if done[j]:
            nv, na, nphi = 0.0, 0.0, 0.0
        elif nxt[j] >= 0:
            nv, na, nphi = val[nxt[j]], adv[nxt[j]], phi[nxt[j]]
        else:
            nv, na, nphi = boot[j], 0.0, boot_phi[j]
        r = rew[j] + shaping * (gamma * nphi - phi[j])
        adv[j] = r + gamma * nv - val[j] + gamma * lam * na
        ret[j] = adv[j] + val[j]


@njit(cache=True, nogil=True)
def gather_rows(idx, roff, rows, racts, acts_taken, out_rows, out_acts, out_off, out_pos):
    """The legal-action rows of samples ``idx`` (CSR ``roff`` into ``rows`` / ``racts``) as a
    new CSR batch; ``out_pos[i]``: the row of sample ``idx[i]``'s taken action."""
    k = 0
    out_off[0] = 0
    for i in range(idx.shape[0]):
        j = idx[i]
        for r in range(roff[j], roff[j + 1]):
            out_rows[k] = rows[r]
            out_acts[k] = racts[r]
            if racts[r] == acts_taken[j]:
                out_pos[i] = k
            k += 1
        out_off[i + 1] = k


def _observe_seats(game: Any) -> Any:
    """``run(states, cfg, games, seats, out)``: seat ``seats[j]``'s view of game ``games[j]``."""
    observe = game.k_observe

    def run(states, cfg, games, seats, out):
        for j in range(games.shape[0]):
            observe(states[games[j]], cfg, seats[j], out[j])

    return njit(run)


_OBSERVERS: dict[type, Any] = {}


def observer(game: Any) -> Any:
    """The compiled seat observer of ``game`` (:func:`_observe_seats`), one per game class."""
    key = type(game)
    if key not in _OBSERVERS:
        _OBSERVERS[key] = _observe_seats(game)
    return _OBSERVERS[key]
