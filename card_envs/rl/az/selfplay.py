"""Batched self-play: many games in lockstep, every move searched by one batched search.

:class:`SelfPlay` owns ``slots`` games on a :class:`~card_envs.core.vector.VectorEnv`
(auto-reset: a finished slot is dealt its next game at once) and a
:class:`~card_envs.agents.az_search.BatchSearch`. :meth:`SelfPlay.play` makes ``steps`` moves
in every slot: each move with more than one legal action is searched (Gumbel root with noise:
the move played is the search's, a sample of the improved policy) and recorded as a sample
(the observation, the mask, the improved policy over the legal actions, the seat); a move with
one legal action is played without a search. When a game ends, each of its samples gets its
target: the win share of every seat (1 for a sole winner, ``1/k`` for ``k`` tied winners, an
even share for a game nobody won), in the order the network reads it (the sample's seat
first). Games still running at the end of a round carry over to the next one.

Everything a slot does comes from the run's seed, the slot and the move number, so a run is
reproducible, and :meth:`state` / :meth:`load_state` carry it across a restart exactly.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from card_envs.core import kernels as K

__all__ = ["SelfPlay", "mix_seeds", "slot_seed"]

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
#: game ids: global slot + GAME_STRIDE * (the slot's game number)
GAME_STRIDE = 1 << 16


def mix_seeds(base: int, idx: np.ndarray, step: int) -> np.ndarray:
    """One 64-bit seed per index for move ``step`` of a run seeded ``base`` (splitmix64 of
    the three; vectorized)."""
    with np.errstate(over="ignore"):
        z = (np.uint64(base & (2**64 - 1)) * _GOLDEN + idx.astype(np.uint64) * np.uint64(
            0xD1B54A32D192ED03) + np.uint64(step) * np.uint64(0x8CB92BA72F3D8DD7))
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def slot_seed(seed: int, slot: int) -> int:
    """The deal seed of a slot's first game (its later games continue its RNG)."""
    return int(np.random.SeedSequence([seed, slot]).generate_state(1, np.uint64)[0] >> 2)


class SelfPlay:
    """Self-play of ``slots`` games (module docstring) of ``env_id`` with game ``options``;
    slot ``j`` of the run is global slot ``first + j`` (its seeds). ``search`` settings:
    ``sims``, ``considered``, ``determinizations``, ``max_nodes``, ``c_visit``, ``c_scale``,
    ``rescale``, ``mix``, ``horizon``, ``prior_temp``."""

    def __init__(self, env_id: str, options: dict[str, Any], slots: int, first: int, seed: int,
                 sims: int, considered: int, determinizations: int, max_nodes: int,
                 c_visit: float, c_scale: float, prior_temp: float, rescale: bool = True,
                 mix: float = 0.0, horizon: int = -1, threads: int = 1) -> None:
        from card_envs.agents.az_search import BatchSearch
        from card_envs.core.registry import env_class
        from card_envs.core.vector import VectorEnv

        self.env_id = env_id
        self.game = g = env_class(env_id).game_class(**options)
        self.options = dict(options)
        self.slots, self.first, self.seed = int(slots), int(first), int(seed)
        self.sims, self.c_visit, self.c_scale = int(sims), float(c_visit), float(c_scale)
        self.rescale, self.mix, self.horizon = bool(rescale), float(mix), int(horizon)
        self.prior_temp = float(prior_temp)
        self.vec = VectorEnv(g, self.slots, seed=0)
        self.vec.fix_threads(threads)
        self.vec.reset(seeds=[slot_seed(self.seed, self.first + j) for j in range(self.slots)])
        self.search = BatchSearch(g, num_games=self.slots, leaves=1, max_nodes=max_nodes,
                                  determinizations=determinizations, considered=considered,
                                  threads=threads)
        self.step_no = 0
        self.games_done = 0
        self.moves = np.zeros(self.slots, np.int64)  # moves of each slot's current game
        self._pending: list[list[tuple[np.ndarray, ...]]] = [[] for _ in range(self.slots)]
        self._gid = np.arange(self.slots, dtype=np.int64) + self.first  # GAME_STRIDE

    # ----------------------------------------------------------------- playing
    def play(self, evaluator: Any, steps: int) -> dict[str, np.ndarray]:
        """Make ``steps`` moves in every slot; the samples of the games that ended, as arrays
        (``obs``, ``mask``, ``pi`` (the improved policy of each sample's legal actions, in
        ascending action order, concatenated), ``pi_len``, ``z`` (``(N, n)`` win shares,
        the sample's seat first), ``seat``, ``value`` (the search's root value), ``game``)
        and per finished game ``lengths``, ``winners`` (``(G, n)`` shares) and ``first``
        (the seat to move first); ``decisions`` counts all moves."""
        vec, g = self.vec, self.game
        n = g.num_players
        done: list[tuple[np.ndarray, ...]] = []
        lengths, shares_out, decisions = [], [], 0
        idx = np.arange(self.slots)
        for _ in range(steps):
            masks = vec.action_masks
            nlegal = masks.sum(axis=1)
            active = nlegal > 1
            seeds = mix_seeds(self.seed, idx + self.first, self.step_no)
            actions = np.argmax(masks, axis=1).astype(np.int64)  # the only legal action
            if active.any():
                res = self.search.run(vec.states, evaluator, self.sims, seeds, active,
                                      noise=True, c_visit=self.c_visit, c_scale=self.c_scale,
                                      rescale=self.rescale, mix=self.mix,
                                      horizon=self.horizon, prior_temp=self.prior_temp)
                act_idx = np.flatnonzero(active)
                actions[act_idx] = res.action[act_idx]
                for j in act_idx:
                    m = masks[j]
                    legal = np.flatnonzero(m)
                    self._pending[j].append((vec.observations[j].copy(), m.copy(),
                                             res.pi[j, legal].astype(np.float32),
                                             int(vec.current_player[j]), float(res.value[j])))
            decisions += self.slots
            self.step_no += 1
            self.moves += 1
            _, _, _, rewards, term, trunc = vec.step(actions)
            for j in np.flatnonzero(term | trunc):
                won = rewards[j] > 0
                sh = won / won.sum() if won.any() else np.full(n, 1.0 / n)
                for obs, m, pi, seat, v in self._pending[j]:
                    z = np.roll(sh, -seat).astype(np.float32)
                    done.append((obs, m, pi, seat, v, z, int(self._gid[j])))
                lengths.append(int(self.moves[j]))
                shares_out.append(sh.astype(np.float32))
                self._pending[j] = []
                self.moves[j] = 0
                self._gid[j] += GAME_STRIDE  # the slot's next game
                self.games_done += 1
        return self._arrays(done, lengths, shares_out, decisions)

    def _arrays(self, done: list[tuple[Any, ...]], lengths: list[int],
                shares: list[np.ndarray], decisions: int) -> dict[str, np.ndarray]:
        g = self.game
        n, A, width = g.num_players, g.num_actions, g.obs_size
        if done:
            obs, mask, pi, seat, val, z, gid = zip(*done)
            out = {"obs": np.stack(obs), "mask": np.stack(mask),
                   "pi": np.concatenate(pi).astype(np.float32),
                   "pi_len": np.array([len(p) for p in pi], np.int32),
                   "z": np.stack(z), "seat": np.array(seat, np.int8),
                   "value": np.array(val, np.float32), "game": np.array(gid, np.int64)}
        else:
            out = {"obs": np.zeros((0, width), g.obs_dtype), "mask": np.zeros((0, A), np.int8),
                   "pi": np.zeros(0, np.float32), "pi_len": np.zeros(0, np.int32),
                   "z": np.zeros((0, n), np.float32), "seat": np.zeros(0, np.int8),
                   "value": np.zeros(0, np.float32), "game": np.zeros(0, np.int64)}
        out["lengths"] = np.array(lengths, np.int32)
        out["winners"] = np.array(shares, np.float32).reshape(-1, n)
        out["decisions"] = np.array([decisions], np.int64)
        return out

    # ----------------------------------------------------------------- restart
    def state(self) -> dict[str, np.ndarray]:
        """Everything needed to continue exactly: the slots' game states, move counters,
        game ids and the samples of the games still running (arrays only)."""
        pend = [(j, *s) for j in range(self.slots) for s in self._pending[j]]
        g = self.game
        d = {"states": self.vec.states.copy(), "moves": self.moves.copy(),
             "gid": self._gid.copy(),
             "counters": np.array([self.step_no, self.games_done], np.int64)}
        if pend:
            slot, obs, mask, pi, seat, val = zip(*pend)
            d.update(p_slot=np.array(slot, np.int64), p_obs=np.stack(obs),
                     p_mask=np.stack(mask), p_pi=np.concatenate(pi).astype(np.float32),
                     p_len=np.array([len(p) for p in pi], np.int64),
                     p_seat=np.array(seat, np.int64), p_val=np.array(val, np.float64))
        else:
            d.update(p_slot=np.zeros(0, np.int64),
                     p_obs=np.zeros((0, g.obs_size), g.obs_dtype),
                     p_mask=np.zeros((0, g.num_actions), np.int8), p_pi=np.zeros(0, np.float32),
                     p_len=np.zeros(0, np.int64), p_seat=np.zeros(0, np.int64),
                     p_val=np.zeros(0, np.float64))
        return d

    def load_state(self, d: dict[str, np.ndarray]) -> None:
        """Continue from :meth:`state` (shapes checked; each game state must load)."""
        g, vec = self.game, self.vec
        states = np.asarray(d["states"], np.int32)
        if states.shape != vec.states.shape:
            raise ValueError(f"self-play state for {states.shape[0]} slots of state size "
                             f"{states.shape[1:]}, this run has {vec.states.shape}")
        vec.states[:] = states
        for j in range(self.slots):  # the turn each slot is at
            s = vec.states[j]
            c = int(s[K.CUR])
            vec.current_player[j] = c
            g.k_legal_mask(s, g.cfg, vec.action_masks[j])
            if c >= 0:
                g.k_observe(s, g.cfg, c, vec.observations[j])
        self.moves[:] = d["moves"]
        self._gid[:] = d["gid"]
        self.step_no, self.games_done = (int(v) for v in d["counters"])
        self._pending = [[] for _ in range(self.slots)]
        off = np.concatenate([[0], np.cumsum(d["p_len"])])
        for k, j in enumerate(d["p_slot"]):
            self._pending[int(j)].append((d["p_obs"][k].copy(), d["p_mask"][k].copy(),
                                          d["p_pi"][off[k]:off[k + 1]].astype(np.float32),
                                          int(d["p_seat"][k]), float(d["p_val"][k])))
