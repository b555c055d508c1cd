"""Op Glad IJs state-dict codec, consistency check and determinization (the kernel
:func:`determinize` and its Python face ``resample``; schema: ``env.py``).

``fields_to_dict``, ``fields_from_dict``, ``check_state`` and ``resample`` of the game-folder
contract (``card_envs.core.game.Game`` dispatches to them); the linked piles are read and
written by ``parts.linked``, the middle's derived counts recomputed by :func:`derive`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from card_envs.core.checks import int_in as _int_in
from card_envs.core.checks import requirer, short_repr
from card_envs.core.errors import StateDictError
from card_envs.core.game import Game
from card_envs.core.jit import njit
from card_envs.core.kernels import (
    C_PLAYERS,
    CUR,
    DONE,
    DONE_TRUNCATED,
    PHASE,
    draw,
    draw_below,
    draw_shuffle,
    rng_seed,
)
from card_envs.op_glad_ijs import layout as L
from card_envs.op_glad_ijs import rules as R
from card_envs.op_glad_ijs.parts.linked import (
    draw_pile,
    draw_slots,
    link,
    middle,
    out_cards,
    slots,
    types,
    won_pile,
)
from card_envs.op_glad_ijs.queries import pending_hidden

_require = requirer("op_glad_ijs")


# --- the codec -----------------------------------------------------------------------------
def fields_to_dict(game: Game, state: np.ndarray, observer: int | None) -> dict[str, Any]:
    """The game's state-dict fields; with ``observer``, what that seat may know."""
    n, c = game.num_players, game.codes
    draws = []
    for q in range(n):
        pile = draw_pile(state, q)
        kn = int(state[L.KNOWN + q])
        codes = [c[t] if (observer is None or i < kn) else None for i, t in enumerate(pile)]
        draws.append(codes[::-1])  # top first
    choices = [None if state[L.CHOICE + q] < 0 else int(state[L.CHOICE + q])
               for q in range(n)]
    if observer is not None:
        for q in pending_hidden(state, observer):
            choices[q] = None
    lt = int(state[L.LAST_TURNED])
    return {
        "middle": [c[t] for t in middle(state)],
        "draw_piles": draws,
        "known_bottom": [int(state[L.KNOWN + q]) for q in range(n)],
        "won_piles": [[c[t] for t in won_pile(state, q)] for q in range(n)],
        "out": [c[t] for t in out_cards(state)],
        "turner": int(state[L.TURNER]),
        "turned_by": int(state[L.TURNED_BY]),
        "window": int(state[L.WINDOW]),
        "turned_count": int(state[L.TURNED]),
        "last_turned": c[lt] if int(state[L.TURNED]) > 0 else None,
        "choices": choices,
        "last_slaps": [None if state[L.LAST + q] < 0 else int(state[L.LAST + q])
                       for q in range(n)],
        "last_gains": [int(state[L.GAIN + q]) for q in range(n)],
    }


def _codes(game: Game, xs: Any, what: str) -> list[int]:
    if not isinstance(xs, list):
        raise StateDictError(f"{what} must be a list of card codes")
    out = []
    for x in xs:
        if not isinstance(x, str) or x not in game.code_index:
            raise StateDictError(f"{what}: unknown card code {short_repr(x)} for this deck")
        out.append(game.code_index[x])
    return out


def fields_from_dict(game: Game, state: np.ndarray, d: Mapping[str, Any]) -> None:
    """Write the game's fields of state dict ``d`` into ``state`` (piles linked into the card
    slots in a fixed order, derived counts recomputed)."""
    n = game.num_players
    mid = _codes(game, d["middle"], "middle")
    draws, wons = d["draw_piles"], d["won_piles"]
    for name, v in (("draw_piles", draws), ("won_piles", wons), ("known_bottom",
                    d["known_bottom"]), ("choices", d["choices"]),
                    ("last_slaps", d["last_slaps"]), ("last_gains", d["last_gains"])):
        if not isinstance(v, list) or len(v) != n:
            raise StateDictError(f"{name} must have {n} entries")
    outs = _codes(game, d["out"], "out")
    dps = [_codes(game, draws[q], "draw_piles")[::-1] for q in range(n)]  # bottom first
    wps = [_codes(game, wons[q], "won_piles") for q in range(n)]  # bottom first
    if len(mid) + len(outs) + sum(map(len, dps)) + sum(map(len, wps)) > L.MAX_CARDS:
        raise StateDictError("too many cards")
    slot = 0
    for arr, head, tail, ln in ((mid, L.MHEAD, L.MTAIL, L.MLEN),
                                (outs, L.OHEAD, L.OTAIL, L.OLEN)):
        state[head], state[tail] = link(state, arr, slot)
        state[ln] = len(arr)
        slot += len(arr)
    for q in range(L.MAX_PLAYERS):
        state[L.DTOP + q] = state[L.DBOT + q] = state[L.WTOP + q] = -1
    for q in range(n):
        dp, wp = dps[q], wps[q]
        state[L.DTOP + q], state[L.DBOT + q] = link(state, dp[::-1], slot)
        state[L.DLEN + q] = len(dp)
        slot += len(dp)
        state[L.WTOP + q] = link(state, wp[::-1], slot)[0]
        state[L.WLEN + q] = len(wp)
        slot += len(wp)
        state[L.KNOWN + q] = _int_in(d["known_bottom"][q], 0, len(dp), "known_bottom")
        ch, la = d["choices"][q], d["last_slaps"][q]
        state[L.CHOICE + q] = -1 if ch is None else \
            _int_in(ch, 0, game.num_actions - 1, "choice")
        state[L.LAST + q] = -1 if la is None else \
            _int_in(la, 0, game.num_actions - 1, "last_slaps entry")
        state[L.GAIN + q] = _int_in(d["last_gains"][q], -1, game.N, "last_gains entry")
    for q in range(n, L.MAX_PLAYERS):
        state[L.CHOICE + q] = -1
        state[L.LAST + q] = -1
    state[L.TURNER] = _int_in(d["turner"], 0, n - 1, "turner")
    state[L.TURNED_BY] = _int_in(d["turned_by"], 0, n - 1, "turned_by")
    state[L.WINDOW] = _int_in(d["window"], 0, L.MAX_WINDOWS - 1, "window")
    state[L.TURNED] = _int_in(d["turned_count"], 1, game.max_turned, "turned_count")
    lt = d["last_turned"]
    if not isinstance(lt, str) or lt not in game.code_index:
        raise StateDictError(f"last_turned must be a card code, got {short_repr(lt)}")
    state[L.LAST_TURNED] = game.code_index[lt]
    derive(game, state)


def derive(game: Game, state: np.ndarray) -> None:
    """Recompute the derived fields: the middle's per-type / per-animal / per-habitat counts,
    its sorted list of present types, the per-type counts of public bottom cards."""
    for off, size in ((L.MCOUNT, L.MAX_TYPES), (L.NA, L.NUM_ANIMALS), (L.NH, L.NUM_ANIMALS),
                      (L.NRIGHT, 1), (L.KCOUNT, L.MAX_TYPES), (L.PLEN, 1),
                      (L.PLIST, L.MAX_TYPES)):
        state[off:off + size] = 0
    tables = game.cfg
    present = sorted(set(middle(state)))
    state[L.PLEN] = len(present)
    state[L.PLIST:L.PLIST + len(present)] = present
    for q in range(game.num_players):
        for t in draw_pile(state, q)[:int(state[L.KNOWN + q])]:
            state[L.KCOUNT + t] += 1
    for t in middle(state):
        state[L.MCOUNT + t] += 1
        k = tables[L.CT_KIND + t]
        if k == L.KIND_RIGHT:
            state[L.NRIGHT] += 1
        elif k == L.KIND_NORMAL:
            for i in range(L.NUM_ANIMALS):
                if tables[L.CT_AM + t] >> i & 1:
                    state[L.NA + i] += 1
                if tables[L.CT_HM + t] >> i & 1:
                    state[L.NH + i] += 1


def legal_mask(game: Game, state: np.ndarray) -> np.ndarray:
    """The kernel's legal mask of the seat to act."""
    mask = np.zeros(game.num_actions, np.int8)
    R.legal_mask(state, game.cfg, mask)
    return mask


# --- consistency ---------------------------------------------------------------------------
def check_state(game: Game, state: np.ndarray) -> None:
    """Raise :class:`StateDictError` unless ``state`` is a position the rules can reach:
    derived counts, pile links, card conservation, the phase, the pending choices."""
    n, T = game.num_players, game.T
    d = state.copy()
    derive(game, d)
    _require(np.array_equal(d, state), "middle counts do not match the middle")
    lens = [int(state[L.MLEN]), int(state[L.OLEN])]
    for q in range(L.MAX_PLAYERS):
        lens += [int(state[L.DLEN + q]), int(state[L.WLEN + q])]
    _require(all(0 <= x <= L.MAX_CARDS for x in lens), "pile size out of range")
    mids = slots(state, L.MHEAD, L.MLEN)
    outs = slots(state, L.OHEAD, L.OLEN)
    _require(state[L.MTAIL] == (mids[-1] if mids else -1), "bad middle tail")
    _require(state[L.OTAIL] == (outs[-1] if outs else -1), "bad out tail")
    used = mids + outs
    for q in range(n):
        ds = draw_slots(state, q)
        _require(state[L.DBOT + q] == (ds[0] if ds else -1), "bad draw pile bottom")
        used += ds + slots(state, L.WTOP + q, L.WLEN + q)
        _require(0 <= state[L.KNOWN + q] <= state[L.DLEN + q], "known_bottom > pile")
    for q in range(n, L.MAX_PLAYERS):
        _require(state[L.DLEN + q] == state[L.WLEN + q] == state[L.KNOWN + q] ==
                 state[L.GAIN + q] == 0, "unused seats must be empty")
        _require(state[L.DTOP + q] == state[L.DBOT + q] == state[L.WTOP + q] == -1,
                 "unused seats must be empty")
    _require(sorted(used) == list(range(len(used))), "card slots must be used once")
    cards = types(state, used)
    _require(all(0 <= t < T for t in cards), "unknown card type")
    counts = np.bincount(np.asarray(cards, np.int64), minlength=T)
    _require(np.array_equal(counts, game.counts), "cards not conserved (per type)")
    _require(0 <= state[L.LAST_TURNED] < T, "last_turned out of range")
    _require(1 <= state[L.TURNED] <= game.max_turned, "turned_count out of range")
    for q in range(L.MAX_PLAYERS):
        _require(-1 <= state[L.LAST + q] < game.num_actions, "bad last slap")
    _require(0 <= state[L.TURNER] < n and 0 <= state[L.TURNED_BY] < n, "bad turner")
    phase, cur, done = int(state[PHASE]), int(state[CUR]), int(state[DONE])
    _require((done != 0) == (phase == L.P_END), "phase 'end' iff the game is over")
    choices = [int(state[L.CHOICE + q]) for q in range(L.MAX_PLAYERS)]
    if done:
        _require(cur == -1 and state[L.MLEN] == 0, "finished game: no middle, no seat")
        _require(all(c == -1 for c in choices), "finished game: no pending choices")
        left = sum(int(state[L.DLEN + q]) for q in range(n))
        _require((done == DONE_TRUNCATED) == (left > 0), "truncated iff draw cards are left")
        if done == DONE_TRUNCATED:
            _require(state[L.TURNED] == game.max_turned, "cut off only at max_turned")
        return
    _require(0 <= cur < n, "current_player must be a seat while the game runs")
    _require(state[L.MLEN] >= 1 and state[L.OLEN] == 0, "running game: middle, no out")
    _require(0 <= state[L.WINDOW] < L.MAX_WINDOWS, "window out of range")
    mask = legal_mask(game, state)
    for q in range(L.MAX_PLAYERS):
        c = choices[q]
        if q < cur:
            _require(0 <= c < game.num_actions and mask[c] == 1,
                     f"seat {q}: chosen action must be legal")
        else:
            _require(c == -1, f"seat {q} has not chosen yet")


# --- determinization -----------------------------------------------------------------------
_num_actions = njit(cache=True, inline="always")(L.num_actions)  # the layout's, compiled


@njit(cache=True, inline="always")
def _uncount(state: np.ndarray, s: int, m: int, unseen: np.ndarray) -> None:
    """Take the ``m`` cards of the pile linked from slot ``s`` off the per-type ``unseen``."""
    for _ in range(min(m, L.MAX_CARDS)):
        if s < 0:
            break
        t = state[L.CARDS + 2 * s]
        if 0 <= t < L.MAX_TYPES:
            unseen[t] -= 1
        s = state[L.NEXT + 2 * s]


@njit(cache=True)
def determinize(state: np.ndarray, cfg: np.ndarray, observer: int, out: np.ndarray,
                rng: np.ndarray) -> None:
    """Write into ``out`` a full state consistent with what ``observer`` knows, drawn from
    ``rng`` (a one-element uint64 array) alone: the unknown parts of all draw piles redrawn
    pooled (a uniform permutation of the cards nobody has seen over their slots; the public
    bottom cards stay), the other seats' unresolved choices of this window redrawn uniformly
    among the legal actions, and ``out``'s RNG words seeded from ``rng``.

    Only public fields are read: the pool is the deck less the middle, the public bottom
    cards, the won piles and the out pile (counts of the config, ``MCOUNT``, ``KCOUNT`` and
    the piles' links), never the types in the unknown slots; other seats' pending choices and
    the state's RNG are overwritten unread. So states that differ only in what ``observer``
    cannot see give the same ``out``. ``state`` must be a valid Op Glad IJs state of ``cfg``
    (the pile walks trust its links)."""
    n = min(cfg[C_PLAYERS], L.MAX_PLAYERS)
    T = min(cfg[L.G_T], L.MAX_TYPES)
    for i in range(min(state.shape[0], out.shape[0])):
        out[i] = state[i]
    rng_seed(out, draw(rng))
    # the cards nobody has seen, per type: the deck less every public card
    unseen = np.zeros(L.MAX_TYPES, np.int64)
    for t in range(T):
        unseen[t] = cfg[L.CT_COUNT + t] - state[L.MCOUNT + t] - state[L.KCOUNT + t]
    for q in range(n):
        _uncount(state, state[L.WTOP + q], state[L.WLEN + q], unseen)
    _uncount(state, state[L.OHEAD], state[L.OLEN], unseen)
    # the unknown slots: each draw pile's links from the top down to its public bottom part
    unknown = np.empty(L.MAX_CARDS, np.int64)
    nu = 0
    for q in range(n):
        s = state[L.DTOP + q]
        for _ in range(min(state[L.DLEN + q] - state[L.KNOWN + q], L.MAX_CARDS - nu)):
            if s < 0:
                break
            unknown[nu] = s
            nu += 1
            s = state[L.NEXT + 2 * s]
    pool = np.empty(L.MAX_CARDS, np.int32)  # the unseen cards, by type
    m = 0
    for t in range(T):
        for _ in range(min(max(unseen[t], 0), L.MAX_CARDS - m)):
            pool[m] = t
            m += 1
    k = min(nu, m)
    draw_shuffle(rng, pool[:m], k)
    for j in range(k):
        out[L.CARDS + 2 * unknown[j]] = pool[j]
    # the other seats' choices of this window (whether a seat has chosen is public: seat order)
    if state[DONE] != 0:
        return
    cur = min(state[CUR], n)  # seats 0..cur-1 have chosen
    if cur - (1 if 0 <= observer < cur else 0) <= 0:
        return
    mask = np.empty(L.MAX_ACTIONS, np.int8)
    R.legal_mask(state, cfg, mask)  # reads only the middle
    legal = np.empty(L.MAX_ACTIONS, np.int32)
    nl = 0
    for a in range(_num_actions(T)):
        if mask[a]:
            legal[nl] = a
            nl += 1
    if nl == 0:
        return
    for q in range(cur):
        if q != observer:
            out[L.CHOICE + q] = legal[draw_below(rng, nl)]


def resample(game: Game, state: np.ndarray, observer: int,
             rng: np.random.Generator) -> np.ndarray:
    """Redraw the unknown parts of all draw piles (pooled: nobody knows which unknown card
    lies in which pile, nor in which order; the public bottom cards stay), and other seats'
    unresolved choices of this window among the legal actions: :func:`determinize` seeded
    with 64 bits of ``rng``. The result depends only on what ``observer`` knows and on
    ``rng``."""
    out = np.empty_like(state)
    seed = np.array([rng.integers(0, 2**64, dtype=np.uint64)])  # (faster than size=1)
    determinize(state, game.cfg, observer, out, seed)
    return out
