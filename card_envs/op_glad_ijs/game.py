"""Op Glad IJs's game specification: options, sizes, state-dict codec, determinization."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from card_envs.core.checks import int_in as _int_in
from card_envs.core.checks import requirer
from card_envs.core.errors import OptionError, StateDictError
from card_envs.core.game import Game, Option, bool_option
from card_envs.core.kernels import CUR, DONE, PHASE
from card_envs.op_glad_ijs import deck as D
from card_envs.op_glad_ijs import render as _render
from card_envs.op_glad_ijs import rules as R

_require = requirer("op_glad_ijs")


def _max_turned(v: Any, _: Mapping[str, Any]) -> int:
    if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or not 1 <= v <= 10**6:
        raise OptionError(f"op_glad_ijs_v0: max_turned must be an int in 1..1000000, got {v!r}")
    return int(v)


class OpGladIJsGame(Game):
    name = "op_glad_ijs"
    env_id = "op_glad_ijs_v0"
    version = "0"
    rules = R
    min_players, max_players, default_players = 2, 6, 2
    phases = ("react", "end")
    reward_modes = ("win", "points", "cards")
    obs_dtype = np.int8
    extra_options = {
        "advanced": Option(False, "all 108 cards: adds the 2-animals and 2-habitats cards",
                           bool_option("op_glad_ijs_v0", "advanced")),
        "two_animals": Option(False, "add the six 2-animals cards",
                              bool_option("op_glad_ijs_v0", "two_animals")),
        "two_habitats": Option(False, "add the six 2-habitats cards",
                               bool_option("op_glad_ijs_v0", "two_habitats")),
        "max_turned": Option(R.MAX_TURNED, "cut-off: the game is truncated after the reaction "
                             "phase of this many turned cards (1..1000000)", _max_turned),
        "deck": Option(None, "None (data/deck.json) or a list of {code, count, set} entries",
                       D.check_deck_option),
    }

    def configure(self, cfg: np.ndarray) -> np.ndarray:
        o = self.options
        self.with_animals = o["advanced"] or o["two_animals"]
        self.with_habitats = o["advanced"] or o["two_habitats"]
        types = D.configured_types(o["deck"], self.with_animals, self.with_habitats)
        self.codes = [c for c, _ in types]
        self.code_index = {c: i for i, c in enumerate(self.codes)}
        self.T = T = len(types)
        tables = D.type_tables(types)
        self.counts = tables[0, :T].copy()
        self.kinds = tables[1, :T].copy()
        self.N = int(self.counts.sum())
        if self.N < self.num_players:
            raise OptionError(f"op_glad_ijs_v0: the deck has only {self.N} cards")
        self.num_actions = R.num_actions(T)
        self.obs_size = R.obs_size(self.num_players, T)
        self.state_size = R.STATE_SIZE
        full = np.zeros(R.CFG_SIZE, np.int32)
        full[:cfg.shape[0]] = cfg
        full[R.G_T] = T
        full[R.G_N] = self.N
        full[R.G_MAXT] = self.max_turned = o["max_turned"]
        full[R.CT_COUNT:R.CT_COUNT + D.MAX_TYPES] = tables[0]
        full[R.CT_KIND:R.CT_KIND + D.MAX_TYPES] = tables[1]
        full[R.CT_AM:R.CT_AM + D.MAX_TYPES] = tables[2]
        full[R.CT_HM:R.CT_HM + D.MAX_TYPES] = tables[3]
        self.act_types = [(-1, -1)] + [(t, -1) for t in range(T)] + \
            [(t, u) for t in range(T) for u in range(t, T)]
        for a, (t, u) in enumerate(self.act_types):
            full[R.CA + a] = t
            full[R.CB + a] = u
        return full

    def obs_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        n, T, N = self.num_players, self.T, self.N
        lo = [np.zeros(T), [-1, 0, 0, 0, 0, -1, -1]]
        hi = [self.counts, [T - 1, R.MAX_WINDOWS - 1, n - 1, n - 1, 1, T - 1, T - 1]]
        for _ in range(n):
            lo.append([0, 0, -1, 0, -1, -1])
            hi.append([N, N, T - 1, N, T - 1, T - 1])
        lo.append(np.zeros(T))
        hi.append(self.counts)
        return np.concatenate(lo), np.concatenate(hi)

    # --- views -----------------------------------------------------------------------------
    @staticmethod
    def _slots(state: np.ndarray, head: int, length: int) -> list[int]:
        """The card slots of the pile whose first slot is ``state[head]`` and which holds
        ``state[length]`` cards, in link order; raises :class:`StateDictError` for broken
        links."""
        out = []
        s = int(state[head])
        for _ in range(max(0, min(int(state[length]), R.MAX_CARDS + 1))):
            _require(0 <= s < R.MAX_CARDS, "broken pile links")
            out.append(s)
            s = int(state[R.NEXT + 2 * s])
        _require(s == -1, "broken pile links")
        return out

    @staticmethod
    def _types(state: np.ndarray, slots: list[int]) -> list[int]:
        return [int(state[R.CARDS + 2 * s]) for s in slots]

    def middle(self, state: np.ndarray) -> list[int]:
        return self._types(state, self._slots(state, R.MHEAD, R.MLEN))

    def draw_slots(self, state: np.ndarray, seat: int) -> list[int]:
        """Slots of seat's draw pile, bottom first."""
        return self._slots(state, R.DTOP + seat, R.DLEN + seat)[::-1]

    def draw_pile(self, state: np.ndarray, seat: int) -> list[int]:
        """Seat's draw pile, bottom first."""
        return self._types(state, self.draw_slots(state, seat))

    def won_pile(self, state: np.ndarray, seat: int) -> list[int]:
        """Seat's won pile, bottom first (top last)."""
        return self._types(state, self._slots(state, R.WTOP + seat, R.WLEN + seat)[::-1])

    def out_cards(self, state: np.ndarray) -> list[int]:
        return self._types(state, self._slots(state, R.OHEAD, R.OLEN))

    @staticmethod
    def _link(state: np.ndarray, types: list[int], slot: int) -> tuple[int, int]:
        """Store ``types`` (in link order) in slots ``slot, slot + 1, ...`` linked in that
        order; returns the first and last slot (-1, -1 if empty)."""
        k = len(types)
        for i, t in enumerate(types):
            state[R.CARDS + 2 * (slot + i)] = t
            state[R.NEXT + 2 * (slot + i)] = slot + i + 1 if i + 1 < k else -1
        return (slot, slot + k - 1) if k else (-1, -1)

    def pending_hidden(self, state: np.ndarray, observer: int) -> list[int]:
        """Seats whose choice in the current window ``observer`` cannot see."""
        if state[DONE]:
            return []
        return [q for q in range(int(state[CUR])) if q != observer]

    def action_types(self, action: int) -> tuple[int, int]:
        return self.act_types[action]

    # --- state dict ------------------------------------------------------------------------
    def fields_to_dict(self, state: np.ndarray, observer: int | None) -> dict[str, Any]:
        n, c = self.num_players, self.codes
        draws = []
        for q in range(n):
            pile = self.draw_pile(state, q)
            kn = int(state[R.KNOWN + q])
            codes = [c[t] if (observer is None or i < kn) else None for i, t in enumerate(pile)]
            draws.append(codes[::-1])  # top first
        choices = [None if state[R.CHOICE + q] < 0 else int(state[R.CHOICE + q])
                   for q in range(n)]
        if observer is not None:
            for q in self.pending_hidden(state, observer):
                choices[q] = None
        lt = int(state[R.LAST_TURNED])
        return {
            "middle": [c[t] for t in self.middle(state)],
            "draw_piles": draws,
            "known_bottom": [int(state[R.KNOWN + q]) for q in range(n)],
            "won_piles": [[c[t] for t in self.won_pile(state, q)] for q in range(n)],
            "out": [c[t] for t in self.out_cards(state)],
            "turner": int(state[R.TURNER]),
            "turned_by": int(state[R.TURNED_BY]),
            "window": int(state[R.WINDOW]),
            "turned_count": int(state[R.TURNED]),
            "last_turned": c[lt] if int(state[R.TURNED]) > 0 else None,
            "choices": choices,
            "last_slaps": [None if state[R.LAST + q] < 0 else int(state[R.LAST + q])
                           for q in range(n)],
            "last_gains": [int(state[R.GAIN + q]) for q in range(n)],
        }

    def _codes(self, xs: Any, what: str) -> list[int]:
        if not isinstance(xs, list):
            raise StateDictError(f"{what} must be a list of card codes")
        out = []
        for x in xs:
            if not isinstance(x, str) or x not in self.code_index:
                raise StateDictError(f"{what}: unknown card code {x!r} for this deck")
            out.append(self.code_index[x])
        return out

    def fields_from_dict(self, state: np.ndarray, d: Mapping[str, Any]) -> None:
        n = self.num_players
        mid = self._codes(d["middle"], "middle")
        draws, wons = d["draw_piles"], d["won_piles"]
        for name, v in (("draw_piles", draws), ("won_piles", wons), ("known_bottom",
                        d["known_bottom"]), ("choices", d["choices"]),
                        ("last_slaps", d["last_slaps"]), ("last_gains", d["last_gains"])):
            if not isinstance(v, list) or len(v) != n:
                raise StateDictError(f"{name} must have {n} entries")
        outs = self._codes(d["out"], "out")
        dps = [self._codes(draws[q], "draw_piles")[::-1] for q in range(n)]  # bottom first
        wps = [self._codes(wons[q], "won_piles") for q in range(n)]  # bottom first
        if len(mid) + len(outs) + sum(map(len, dps)) + sum(map(len, wps)) > R.MAX_CARDS:
            raise StateDictError("too many cards")
        slot = 0
        for arr, head, tail, ln in ((mid, R.MHEAD, R.MTAIL, R.MLEN),
                                    (outs, R.OHEAD, R.OTAIL, R.OLEN)):
            state[head], state[tail] = self._link(state, arr, slot)
            state[ln] = len(arr)
            slot += len(arr)
        for q in range(R.MAX_PLAYERS):
            state[R.DTOP + q] = state[R.DBOT + q] = state[R.WTOP + q] = -1
        for q in range(n):
            dp, wp = dps[q], wps[q]
            state[R.DTOP + q], state[R.DBOT + q] = self._link(state, dp[::-1], slot)
            state[R.DLEN + q] = len(dp)
            slot += len(dp)
            state[R.WTOP + q] = self._link(state, wp[::-1], slot)[0]
            state[R.WLEN + q] = len(wp)
            slot += len(wp)
            state[R.KNOWN + q] = _int_in(d["known_bottom"][q], 0, len(dp), "known_bottom")
            ch, la = d["choices"][q], d["last_slaps"][q]
            state[R.CHOICE + q] = -1 if ch is None else \
                _int_in(ch, 0, self.num_actions - 1, "choice")
            state[R.LAST + q] = -1 if la is None else \
                _int_in(la, 0, self.num_actions - 1, "last_slaps entry")
            state[R.GAIN + q] = _int_in(d["last_gains"][q], -1, self.N, "last_gains entry")
        for q in range(n, R.MAX_PLAYERS):
            state[R.CHOICE + q] = -1
            state[R.LAST + q] = -1
        state[R.TURNER] = _int_in(d["turner"], 0, n - 1, "turner")
        state[R.TURNED_BY] = _int_in(d["turned_by"], 0, n - 1, "turned_by")
        state[R.WINDOW] = _int_in(d["window"], 0, R.MAX_WINDOWS - 1, "window")
        state[R.TURNED] = _int_in(d["turned_count"], 1, self.max_turned, "turned_count")
        lt = d["last_turned"]
        if not isinstance(lt, str) or lt not in self.code_index:
            raise StateDictError(f"last_turned must be a card code, got {lt!r}")
        state[R.LAST_TURNED] = self.code_index[lt]
        self._derive(state)

    def _derive(self, state: np.ndarray) -> None:
        """Recompute the derived fields: the middle's per-type / per-animal / per-habitat
        counts, its sorted list of present types, the per-type counts of public bottom cards."""
        for off, size in ((R.MCOUNT, R.MAX_TYPES), (R.NA, 6), (R.NH, 6), (R.NRIGHT, 1),
                          (R.KCOUNT, R.MAX_TYPES), (R.PLEN, 1), (R.PLIST, R.MAX_TYPES)):
            state[off:off + size] = 0
        tables = self.cfg
        present = sorted(set(self.middle(state)))
        state[R.PLEN] = len(present)
        state[R.PLIST:R.PLIST + len(present)] = present
        for q in range(self.num_players):
            for t in self.draw_pile(state, q)[:int(state[R.KNOWN + q])]:
                state[R.KCOUNT + t] += 1
        for t in self.middle(state):
            state[R.MCOUNT + t] += 1
            k = tables[R.CT_KIND + t]
            if k == R.KIND_RIGHT:
                state[R.NRIGHT] += 1
            elif k == R.KIND_NORMAL:
                for i in range(6):
                    if tables[R.CT_AM + t] >> i & 1:
                        state[R.NA + i] += 1
                    if tables[R.CT_HM + t] >> i & 1:
                        state[R.NH + i] += 1

    def check_state(self, state: np.ndarray) -> None:
        n, T = self.num_players, self.T
        d = state.copy()
        self._derive(d)
        _require(np.array_equal(d, state), "middle counts do not match the middle")
        lens = [int(state[R.MLEN]), int(state[R.OLEN])]
        for q in range(R.MAX_PLAYERS):
            lens += [int(state[R.DLEN + q]), int(state[R.WLEN + q])]
        _require(all(0 <= x <= R.MAX_CARDS for x in lens), "pile size out of range")
        mids = self._slots(state, R.MHEAD, R.MLEN)
        outs = self._slots(state, R.OHEAD, R.OLEN)
        _require(state[R.MTAIL] == (mids[-1] if mids else -1), "bad middle tail")
        _require(state[R.OTAIL] == (outs[-1] if outs else -1), "bad out tail")
        slots = mids + outs
        for q in range(n):
            ds = self.draw_slots(state, q)
            _require(state[R.DBOT + q] == (ds[0] if ds else -1), "bad draw pile bottom")
            slots += ds + self._slots(state, R.WTOP + q, R.WLEN + q)
            _require(0 <= state[R.KNOWN + q] <= state[R.DLEN + q], "known_bottom > pile")
        for q in range(n, R.MAX_PLAYERS):
            _require(state[R.DLEN + q] == state[R.WLEN + q] == state[R.KNOWN + q] ==
                     state[R.GAIN + q] == 0, "unused seats must be empty")
            _require(state[R.DTOP + q] == state[R.DBOT + q] == state[R.WTOP + q] == -1,
                     "unused seats must be empty")
        _require(sorted(slots) == list(range(len(slots))), "card slots must be used once")
        cards = self._types(state, slots)
        _require(all(0 <= t < T for t in cards), "unknown card type")
        counts = np.bincount(np.asarray(cards, np.int64), minlength=T)
        _require(np.array_equal(counts, self.counts), "cards not conserved (per type)")
        _require(0 <= state[R.LAST_TURNED] < T, "last_turned out of range")
        _require(1 <= state[R.TURNED] <= self.max_turned, "turned_count out of range")
        for q in range(R.MAX_PLAYERS):
            _require(-1 <= state[R.LAST + q] < self.num_actions, "bad last slap")
        _require(0 <= state[R.TURNER] < n and 0 <= state[R.TURNED_BY] < n, "bad turner")
        phase, cur, done = int(state[PHASE]), int(state[CUR]), int(state[DONE])
        _require((done != 0) == (phase == R.P_END), "phase 'end' iff the game is over")
        choices = [int(state[R.CHOICE + q]) for q in range(R.MAX_PLAYERS)]
        if done:
            _require(cur == -1 and state[R.MLEN] == 0, "finished game: no middle, no seat")
            _require(all(c == -1 for c in choices), "finished game: no pending choices")
            left = sum(int(state[R.DLEN + q]) for q in range(n))
            _require((done == 2) == (left > 0), "truncated iff draw cards are left")
            if done == 2:
                _require(state[R.TURNED] == self.max_turned, "cut off only at max_turned")
            return
        _require(0 <= cur < n, "current_player must be a seat while the game runs")
        _require(state[R.MLEN] >= 1 and state[R.OLEN] == 0, "running game: middle, no out")
        _require(0 <= state[R.WINDOW] < R.MAX_WINDOWS, "window out of range")
        mask = np.zeros(self.num_actions, np.int8)
        R.legal_mask(state, self.cfg, mask)
        for q in range(R.MAX_PLAYERS):
            c = choices[q]
            if q < cur:
                _require(0 <= c < self.num_actions and mask[c] == 1,
                         f"seat {q}: chosen action must be legal")
            else:
                _require(c == -1, f"seat {q} has not chosen yet")

    # --- text ------------------------------------------------------------------------------
    def action_to_str(self, action: int) -> str:
        t, u = self.act_types[action]
        if t < 0:
            return "pass"
        if u < 0:
            return f"slap {self.codes[t]}"
        return f"slap {self.codes[t]} + {self.codes[u]}"

    def render(self, state: np.ndarray, observer: int | None = None) -> str:
        return _render.render(self, state)

    # --- determinization -------------------------------------------------------------------
    def resample(self, state: np.ndarray, observer: int,
                 rng: np.random.Generator) -> np.ndarray:
        """Redraw the unknown parts of all draw piles (pooled: nobody knows which unknown card
        lies in which pile, nor in which order; the public bottom cards stay), and other
        seats' unresolved choices of this window among the legal actions. The result depends
        only on what ``observer`` knows and on ``rng``."""
        out = state.copy()
        n = self.num_players
        unknown = []  # slots of the unknown cards, per pile from the public bottom part up
        for q in range(n):
            unknown += self.draw_slots(out, q)[int(out[R.KNOWN + q]):]
        pool = sorted(self._types(out, unknown))  # sorted: the draw depends on rng alone
        pool = rng.permutation(np.asarray(pool, np.int32)) if pool else pool
        for s, t in zip(unknown, pool):
            out[R.CARDS + 2 * s] = t
        legal = np.flatnonzero(self._mask(out))
        for q in self.pending_hidden(out, observer):
            out[R.CHOICE + q] = int(rng.choice(legal))
        return out

    def _mask(self, state: np.ndarray) -> np.ndarray:
        mask = np.zeros(self.num_actions, np.int8)
        R.legal_mask(state, self.cfg, mask)
        return mask
