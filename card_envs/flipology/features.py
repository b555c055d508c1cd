"""Action-aligned features of a Flipology observation (numba and numpy only: no torch).

The interface of :mod:`card_envs.core.features`: :func:`fill` writes, from ONE observation row
(layout: ``card_envs.flipology.env``; seats and positions relative to the observer) and the
game's ``cfg``, the global features and, per action, what the action names and what it does.
Everything is a pure function of the observation (unchanged when ``env.resample(seat)``
redraws what the seat cannot see) and of the options in ``cfg``: facts, no evaluation.

How: the observation is turned into a *visible state* (``parts.visible``: the engine's state
layout with the observer as seat 0: every known card by a card id of its kind and points,
every unknown face-down card by a placeholder scoring 0 face down), on which the rules' own
kernels run: ``rules.legal_mask`` gives ``legal`` (the action mask of the observer when it is
to act, else 0 everywhere), ``parts.effects.apply_effect`` / ``parts.effects.flip`` the direct
consequence of each effect choice (undone after measuring it); the rule queries (``queries``)
give the points (``seat_points``, ``card_value``), the turn flip (``flip_face``) and what an
effect's choice does (``effect_role``).

Per action (``ACTION_FEATURES``, ``F = 41``; 0 where a feature does not apply). The *card*
of an action: a position's card (every position, legal or not), a setup slot's hand card, a
Hermit crab pick's discarded card (every known discard), for ``count face up/down`` the picked
Sloth/Koala.

| name            | meaning                                                                |
|-----------------|------------------------------------------------------------------------|
| ``legal``       | the action mask of the seat to act (the observer acts; else 0)         |
| ``own``         | the position is in the observer's rows (a setup slot: 1)               |
| ``seat``        | relative seat of the position / (n - 1) (1 / (n - 1): next clockwise)  |
| ``level``       | row level / 2 (Great Tree; 0 the bottom row; a setup slot: the new row) |
| ``col``         | column / (row length - 1) (a setup slot: where the card goes)          |
| ``face_up``     | the card is face up (1/0)                                              |
| ``known``       | the observer knows the card (1/0)                                      |
| ``points``      | the card's points / 10 (0 unknown)                                     |
| ``unseen_kind`` | cards of the card's kind the observer has not seen / 8                 |
| ``dog`` ..      | the card's effect, one-hot over the 11 effect kinds: ``dog``, ``frog``, |
|                 | ``hawk``, ``mole``, ``monkey``, ``parrot``, ``snake``, ``wolves``,     |
|                 | ``rain``, ``sun``, ``wind``                                            |
| ``sloth_koala`` ``cat`` ``hermit`` ``moon`` ``null`` | the card's kind without effect (1/0) |
| ``turn``        | face change of the flipped card: +1 up, -1 down, 0 none (a face-up Cat |
|                 | flipped by an effect stays up; a Monkey's first choice: its coming flip) |
| ``triggers``    | the card turned up applies its effect next (a Monkey's choice of the   |
|                 | effect to apply: 1); 0 if a flipped card is unknown to the observer    |
| ``d_own``       | change of the observer's end points (``seat_points``) / 10: the flip,  |
|                 | swap, removal or setup placement (with the Great Tree's forced last    |
|                 | card); a Hermit crab pick: its points (a Sloth/Koala: 0, then          |
|                 | ``count face up`` -points, ``face down`` +points)                      |
| ``d_opp``       | the same for the other seats (summed) / 10; both are 0 when the card   |
|                 | turned or removed is unknown; a Mole swap counts the known cards       |
| ``nb_down``     | face-down neighbours of the position (a setup slot: its target) / 4    |
| ``nb_up``       | face-up neighbours / 4                                                 |

and what the action does, one-hot: ``flip`` (turn flip, Dog, Frog, Hawk, Snake, Monkey, Rain,
the Sun's flip), ``swap`` (Mole), ``remove`` (Wolves), ``copy`` (Parrot: the card's effect),
``choose`` (Monkey: the card's effect applies), ``peek`` (Sun), ``place`` (setup), ``pick``
(Hermit crab pick, count face up/down), ``regrow``, ``pass`` (skip, keep).

Global features (``GLOBAL_FEATURES``, ``G = 65``):

| name                     | meaning                                                       |
|--------------------------|---------------------------------------------------------------|
| ``phase_<name>``         | the phase, one-hot (``layout.PHASES``)                        |
| ``to_act``, ``start``    | the observer acts / is the start player (1/0)                 |
| ``round``, ``turn``      | round / 3, turn in the round / turns per round                |
| ``levels``               | rows dealt / 3                                                |
| ``ef_<kind>``            | the pending effect's kind, one-hot over the 11 effect kinds   |
| ``ef_copy``, ``ef_step``, ``chain`` | copied by a Parrot; sub-step / 3; effects this turn / 8 |
| ``own_points``           | the observer's end points now / 30 (all its cards are known)  |
| ``own_public``, ``opp_public_max`` | public scores / 30 (observer, best other seat)      |
| ``opp_known_max``        | best other seat's end points from the known cards / 30        |
| ``bonus``                | the observer's Hermit crab bonus / 10                         |
| ``own_down``, ``hidden`` | own face-down cards / positions per seat; cards in the other  |
|                          | rows unknown to the observer / positions per seat             |
| ``moon_up``, ``moon_game`` | a Moon face up in some row; the Moon is in this game's deck |
| ``series``, ``game``     | a series; game number / max games                             |
| ``total``, ``opp_total_max`` | series totals / 100 (observer, best other seat)           |
| ``deck``                 | cards in the deck / deck size                                 |
| ``unknown_discards``     | discarded cards unknown to the observer / 10                  |
| ``unseen``               | cards in play the observer has not seen / deck size           |
| ``unseen_mean``          | their mean points / 10                                        |
| ``unseen_<kind>``        | unseen cards per kind (all but null) / 8                      |

"Seen" cards: the known cards on the board, the own hand and the known discards; the cards in
play are the deck's without those set aside by the options. Works for every option (player
count, variant, Moon, Wolves, series, custom decks).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from card_envs.core.jit import njit
from card_envs.core.kernels import C_PLAYERS, PHASE
from card_envs.flipology import layout as L
from card_envs.flipology.parts.effects import apply_effect, flip
from card_envs.flipology.parts.visible import (
    FRAME,
    FRAME_FIELDS,
    W_FRAME,
    W_IDS,
    W_PTS,
    W_SEEN,
    W_SIZE,
    W_UNSEEN,
    obs_sections,
    visible,
)
from card_envs.flipology.queries import (
    card_value,
    effect_role,
    flip_face,
    has_effect,
    moon_up,
    scores_face_down,
    seat_points,
)
from card_envs.flipology.rules import legal_mask

__all__ = ["ACTION_FEATURES", "GLOBAL_FEATURES", "dims", "fill"]

EFFECT_KINDS = tuple(k for k in range(L.NUM_KINDS) if has_effect(k))
PASSIVE = ("sloth_koala", "cat", "hermit", "moon", "null")
ROLES = L.CHOICE_ROLES + ("place", "pick", "regrow", "pass")
ACTION_FEATURES = (("legal", "own", "seat", "level", "col", "face_up", "known", "points",
                    "unseen_kind") + tuple(L.KIND_NAMES[k] for k in EFFECT_KINDS) + PASSIVE
                   + ("turn", "triggers", "d_own", "d_opp", "nb_down", "nb_up") + ROLES)
SEEN_KINDS = tuple(k for k in range(L.NUM_KINDS) if k != L.NULL)
GLOBAL_FEATURES = (tuple(f"phase_{p}" for p in L.PHASES)
                   + ("to_act", "start", "round", "turn", "levels")
                   + tuple(f"ef_{L.KIND_NAMES[k]}" for k in EFFECT_KINDS)
                   + ("ef_copy", "ef_step", "chain", "own_points", "own_public",
                      "opp_public_max", "opp_known_max", "bonus", "own_down", "hidden",
                      "moon_up", "moon_game", "series", "total", "opp_total_max", "game",
                      "deck", "unknown_discards", "unseen", "unseen_mean")
                   + tuple(f"unseen_{L.KIND_NAMES[k]}" for k in SEEN_KINDS))

_AF = {name: i for i, name in enumerate(ACTION_FEATURES)}
_GF = {name: i for i, name in enumerate(GLOBAL_FEATURES)}
F_LEGAL, F_OWN, F_SEAT, F_LEVEL, F_COL = (_AF[k] for k in ("legal", "own", "seat", "level",
                                                           "col"))
F_FACE, F_KNOWN, F_POINTS, F_UNSEEN = (_AF[k] for k in ("face_up", "known", "points",
                                                        "unseen_kind"))
F_TURN, F_TRIG, F_DOWN, F_DOPP, F_NBD, F_NBU = (_AF[k] for k in ("turn", "triggers", "d_own",
                                                                 "d_opp", "nb_down", "nb_up"))
R_FLIP, R_SWAP, R_REMOVE, R_COPY, R_CHOOSE, R_PEEK, R_PLACE, R_PICK, R_REGROW, R_PASS = (
    _AF[k] for k in ROLES)  # consecutive: the role of an effect's choice is R_FLIP + ROLE_*
G_PHASE0, G_EF0, G_UNSEEN0 = _GF["phase_" + L.PHASES[0]], _GF["ef_dog"], _GF["unseen_dog"]
(G_TO_ACT, G_START, G_ROUND, G_TURN, G_LEVELS, G_EFCOPY, G_EFSTEP, G_CHAIN, G_OWNPTS, G_OWNPUB,
 G_OPPPUB, G_OPPKNOWN, G_BONUS, G_OWNDOWN, G_HIDDEN, G_MOONUP, G_MOONGAME, G_SERIESF, G_TOTAL,
 G_OPPTOTAL, G_GAMEF, G_DECK, G_UNKDISC, G_UNSEEN, G_UNSEENMEAN) = (_GF[k] for k in (
    "to_act", "start", "round", "turn", "levels", "ef_copy", "ef_step", "chain", "own_points",
    "own_public", "opp_public_max", "opp_known_max", "bonus", "own_down", "hidden", "moon_up",
    "moon_game", "series", "total", "opp_total_max", "game", "deck", "unknown_discards",
    "unseen", "unseen_mean"))

# per kind: the action feature naming it (its effect or its passive kind; -1 none)
_KIND_FEATURE = np.full(L.NUM_KINDS, -1, np.int64)
for _k in EFFECT_KINDS:
    _KIND_FEATURE[_k] = _AF[L.KIND_NAMES[_k]]
for _k in range(L.NUM_KINDS):
    if scores_face_down(_k):
        _KIND_FEATURE[_k] = _AF["sloth_koala"]
_KIND_FEATURE[L.CAT], _KIND_FEATURE[L.HERMIT] = _AF["cat"], _AF["hermit"]
_KIND_FEATURE[L.MOON], _KIND_FEATURE[L.NULL] = _AF["moon"], _AF["null"]
# per kind: its global pending-effect feature (-1: not an effect kind)
_EF_FEATURE = np.full(L.NUM_KINDS, -1, np.int64)
for _i, _k in enumerate(EFFECT_KINDS):
    _EF_FEATURE[_k] = G_EF0 + _i
_SEEN_FEATURE = np.full(L.NUM_KINDS, -1, np.int64)
for _i, _k in enumerate(SEEN_KINDS):
    _SEEN_FEATURE[_k] = G_UNSEEN0 + _i
del _k, _i

MAX_LEVELS = max(shape[1] for shape in L.ROW_SHAPES)


def dims(game: Any) -> tuple[int, int]:
    """``(G, F)``: the same for every option."""
    return len(GLOBAL_FEATURES), len(ACTION_FEATURES)


@njit(cache=True, inline="always")
def _card(act: np.ndarray, a: int, k: int, v: int, unseen: np.ndarray) -> None:
    """The card block of action ``a``: a known card of kind ``k`` and points ``v``."""
    act[F_KNOWN, a] = 1.0
    act[F_POINTS, a] = v / 10.0
    act[F_UNSEEN, a] = unseen[k] / 8.0
    f = _KIND_FEATURE[k]
    if f >= 0:
        act[f, a] = 1.0


@njit(cache=True, inline="always")
def _nb(act: np.ndarray, a: int, cfg: np.ndarray, vs: np.ndarray, p: int) -> None:
    """Face-down / face-up neighbours of position ``p`` (features of action ``a``)."""
    base = L.T_ADJ + ((vs[L.LEVELS] - 1) * L.MAXPOS + p) * 4
    dn = 0
    up = 0
    for j in range(4):
        q = cfg[base + j]
        if q >= 0 and vs[L.POS + q] >= 0:
            if vs[L.FACE + q]:
                up += 1
            else:
                dn += 1
    act[F_NBD, a] = dn / 4.0
    act[F_NBU, a] = up / 4.0


@njit(cache=True, inline="always")
def _known(obs: np.ndarray, board: int, p: int) -> bool:
    """The observer knows the card at position ``p``."""
    return p >= 0 and obs[board + p * L.OBS_CELL + L.OBS_KIND] >= 0


@njit(cache=True)
def _delta(act: np.ndarray, a: int, cfg: np.ndarray, vs: np.ndarray, pts: np.ndarray,
           p1: int, p2: int, p3: int) -> None:
    """``d_own`` / ``d_opp`` of action ``a``: the changed visible state's points of the seats
    of positions ``p1..p3`` (-1: none) minus ``pts`` (the points before)."""
    sp = cfg[L.G_SEATPOS]
    s1 = p1 // sp if p1 >= 0 else -1
    s2 = p2 // sp if p2 >= 0 else -1
    s3 = p3 // sp if p3 >= 0 else -1
    if s2 == s1:
        s2 = -1
    if s3 == s1 or s3 == s2:
        s3 = -1
    own = 0
    opp = 0
    for s in (s1, s2, s3):
        if s >= 0:
            d = seat_points(vs, cfg, s) - pts[s]
            if s == 0:
                own += d
            else:
                opp += d
    act[F_DOWN, a] = own / 10.0
    act[F_DOPP, a] = opp / 10.0


@njit(cache=True)
def _effect_actions(obs: np.ndarray, cfg: np.ndarray, board: int, vs: np.ndarray,
                    pts: np.ndarray, frame: np.ndarray, act: np.ndarray) -> None:
    """Consequences of the pending effect's legal choices: each applied to the visible state
    by the rules (``apply_effect``; a Monkey's first choice: the coming ``flip``), measured
    and undone."""
    npos = cfg[C_PLAYERS] * cfg[L.G_SEATPOS]
    skip = cfg[L.G_SKIP]
    if act[F_LEGAL, skip] > 0:
        act[R_PASS, skip] = 1.0
    k = vs[L.EF_KIND]
    step = vs[L.EF_STEP]
    src = vs[L.EF_SRC]
    pa = vs[L.EF_A]
    pb = vs[L.EF_B]
    chain0 = vs[L.CHAIN]
    dlen0 = vs[L.DLEN]
    role = R_FLIP + effect_role(k, step)
    for i in range(FRAME):
        frame[i] = vs[FRAME_FIELDS[i]]
    save = frame[FRAME:]
    for q in range(npos):
        if act[F_LEGAL, q] == 0:
            continue
        act[role, q] = 1.0
        if role == R_PEEK or role == R_COPY:
            continue  # nothing on the board changes
        save[0] = q
        save[1] = src
        save[2] = pa
        save[3] = pb
        for i in range(4):
            p = save[i]
            save[4 + i] = vs[L.POS + p] if p >= 0 else 0
            save[8 + i] = vs[L.FACE + p] if p >= 0 else 0
        face0 = vs[L.FACE + q]
        second = k == L.MONKEY and step == L.MONKEY_SECOND
        if k == L.MONKEY and step == 0:
            trig = flip(vs, cfg, q) and chain0 < L.CHAIN_LIMIT
        else:
            apply_effect(vs, cfg, q)
            trig = vs[L.CHAIN] > chain0 or (k == L.MONKEY and vs[L.EF_STEP] == L.MONKEY_CHOOSE)
        known = _known(obs, board, q) and (not second or _known(obs, board, pa))
        if role == R_FLIP:
            act[F_TURN, q] = vs[L.FACE + q] - face0
        if trig and (known or role == R_CHOOSE):
            act[F_TRIG, q] = 1.0
        if role == R_SWAP or known:
            _delta(act, q, cfg, vs, pts, q, src if role == R_SWAP else -1, pa if second else -1)
        for i in range(3, -1, -1):
            p = save[i]
            if p >= 0:
                vs[L.POS + p] = save[4 + i]
                vs[L.FACE + p] = save[8 + i]
        for i in range(FRAME):
            vs[FRAME_FIELDS[i]] = frame[i]
        vs[L.CHAIN] = chain0
        vs[L.DLEN] = dlen0
        vs[L.NULLS] = 0


@njit(cache=True)
def fill(obs: np.ndarray, cfg: np.ndarray, glob: np.ndarray, act: np.ndarray) -> None:
    """Write every entry of ``glob`` ``(G,)`` and ``act`` ``(F, A)`` (feature-major) from one
    observation row ``obs`` and the game's ``cfg`` (module docstring)."""
    n = cfg[C_PLAYERS]
    sp = cfg[L.G_SEATPOS]
    rl = cfg[L.G_ROWLEN]
    hn = cfg[L.G_HANDN]
    nc = cfg[L.G_NCARDS]
    npos = n * sp
    lay = obs_sections(n, sp, hn, nc)
    board = lay.board
    work = np.empty(W_SIZE, np.int32)
    vs = work[:L.STATE_SIZE]
    seen = work[W_SEEN:W_SEEN + L.NUM_KINDS]
    unseen = work[W_UNSEEN:W_UNSEEN + L.NUM_KINDS]
    pts = work[W_PTS:W_PTS + L.MAX_PLAYERS]
    unseen_pts = visible(obs, cfg, lay, vs, work[W_IDS:W_SEEN], seen, unseen)
    n_unseen = 0
    for k in range(L.NUM_KINDS):
        unseen[k] = max(unseen[k] - seen[k], 0)
        n_unseen += unseen[k]
    for s in range(n):
        pts[s] = seat_points(vs, cfg, s)
    info = lay.info
    ph = vs[PHASE]
    cur = obs[info + L.OBS_CUR]
    levels = vs[L.LEVELS]

    # --- global features ---------------------------------------------------------------
    glob[:] = 0.0
    if 0 <= ph < len(L.PHASES):
        glob[G_PHASE0 + ph] = 1.0
    glob[G_TO_ACT] = 1.0 if cur == 0 else 0.0
    glob[G_START] = 1.0 if obs[info + L.OBS_START] == 0 else 0.0
    glob[G_ROUND] = obs[info + L.OBS_ROUND] / L.ROUNDS
    per_round = n if cfg[L.G_VARIANT] == L.NATURE else 2 * n
    glob[G_TURN] = obs[info + L.OBS_TURN] / per_round
    glob[G_LEVELS] = levels / MAX_LEVELS
    ek = vs[L.EF_KIND]
    if 0 <= ek < L.NUM_KINDS and _EF_FEATURE[ek] >= 0:
        glob[_EF_FEATURE[ek]] = 1.0
    glob[G_EFCOPY] = vs[L.EF_COPY]
    glob[G_EFSTEP] = vs[L.EF_STEP] / L.SUN_PEEKS
    glob[G_CHAIN] = vs[L.CHAIN] / 8.0
    seats = lay.seats
    glob[G_OWNPTS] = pts[0] / 30.0
    glob[G_OWNPUB] = obs[seats + L.OBS_PUBLIC * n] / 30.0
    glob[G_BONUS] = vs[L.BONUS] / 10.0
    glob[G_TOTAL] = obs[seats + L.OBS_TOTAL * n] / L.SERIES_TARGET
    best_pub = -(1 << 30)
    best_pts = -(1 << 30)
    best_tot = -(1 << 30)
    for s in range(1, n):
        best_pub = max(best_pub, obs[seats + L.OBS_PUBLIC * n + s])
        best_pts = max(best_pts, pts[s])
        best_tot = max(best_tot, obs[seats + L.OBS_TOTAL * n + s])
    glob[G_OPPPUB] = best_pub / 30.0
    glob[G_OPPKNOWN] = best_pts / 30.0
    glob[G_OPPTOTAL] = best_tot / L.SERIES_TARGET
    own_down = 0
    hidden = 0
    for p in range(npos):
        j = board + p * L.OBS_CELL
        if obs[j + L.OBS_FACE] == 0:
            if p < sp:
                own_down += 1
            elif obs[j + L.OBS_KIND] < 0:
                hidden += 1
    glob[G_OWNDOWN] = own_down / sp
    glob[G_HIDDEN] = hidden / sp
    glob[G_MOONUP] = 1.0 if moon_up(vs, cfg) else 0.0
    glob[G_MOONGAME] = cfg[L.G_MOON]
    glob[G_SERIESF] = cfg[L.G_SERIES]
    glob[G_GAMEF] = obs[info + L.OBS_GAME] / cfg[L.G_MAXGAMES]
    glob[G_DECK] = obs[info + L.OBS_DECKN] / nc
    glob[G_UNKDISC] = obs[lay.unknown] / 10.0
    glob[G_UNSEEN] = n_unseen / nc
    glob[G_UNSEENMEAN] = unseen_pts / n_unseen / 10.0 if n_unseen > 0 else 0.0
    for k in range(L.NUM_KINDS):
        if _SEEN_FEATURE[k] >= 0:
            glob[_SEEN_FEATURE[k]] = unseen[k] / 8.0

    # --- what each action names --------------------------------------------------------
    act[:, :] = 0.0
    for p in range(npos):
        j = board + p * L.OBS_CELL
        f = obs[j + L.OBS_FACE]
        if f < 0:
            continue
        r = p // sp
        i = p - r * sp
        lv = i // rl
        act[F_OWN, p] = 1.0 if r == 0 else 0.0
        act[F_SEAT, p] = r / (n - 1)
        act[F_LEVEL, p] = lv / (MAX_LEVELS - 1)
        act[F_COL, p] = (i - lv * rl) / (rl - 1)
        act[F_FACE, p] = f
        k = obs[j + L.OBS_KIND]
        if 0 <= k < L.NUM_KINDS:
            _card(act, p, k, obs[j + L.OBS_POINTS], unseen)
        _nb(act, p, cfg, vs, p)
    top = (levels - 1) * rl  # the own top row's first position
    placed = 0
    for col in range(rl):
        if vs[L.POS + top + col] >= 0:
            placed += 1
    h0 = cfg[L.G_HAND0]
    for j in range(hn):
        c = vs[L.HAND + j]
        if c >= 0:
            a = h0 + j
            _card(act, a, cfg[L.T_KIND + c], cfg[L.T_PTS + c], unseen)
            act[F_OWN, a] = 1.0
            act[F_LEVEL, a] = (levels - 1) / (MAX_LEVELS - 1)
            act[F_COL, a] = min(placed, rl - 1) / (rl - 1)
            if placed < rl:
                _nb(act, a, cfg, vs, top + placed)
    d0 = cfg[L.G_DISC0]
    for i in range(vs[L.DLEN]):
        c = vs[L.DLIST + i]
        _card(act, d0 + c, cfg[L.T_KIND + c], cfg[L.T_PTS + c], unseen)

    # --- what the legal actions do -----------------------------------------------------
    if cur != 0 or ph == L.P_END:
        return
    legal_mask(vs, cfg, act[F_LEGAL])
    skip = cfg[L.G_SKIP]
    if ph == L.P_TURN:
        for a in range(top, top + rl):
            up = vs[L.FACE + a]
            k = cfg[L.T_KIND + vs[L.POS + a]]
            turned = flip_face(k, up, False)
            act[R_FLIP, a] = 1.0
            act[F_TURN, a] = turned - up
            if not up and _known(obs, board, a) and has_effect(k):
                act[F_TRIG, a] = 1.0
            vs[L.FACE + a] = turned
            _delta(act, a, cfg, vs, pts, a, -1, -1)
            vs[L.FACE + a] = up
    elif ph == L.P_EFFECT:
        _effect_actions(obs, cfg, board, vs, pts, work[W_FRAME:W_SIZE], act)
    elif ph == L.P_SETUP:
        p = top + placed
        forced = hn == rl and placed == rl - 2  # the last card follows by itself
        for j in range(hn):
            a = h0 + j
            if act[F_LEGAL, a] == 0:
                continue
            act[R_PLACE, a] = 1.0
            vs[L.POS + p] = vs[L.HAND + j]
            vs[L.FACE + p] = 0
            if forced:
                for jj in range(hn):
                    if jj != j and vs[L.HAND + jj] >= 0:
                        vs[L.POS + p + 1] = vs[L.HAND + jj]
                        vs[L.FACE + p + 1] = 0
            _delta(act, a, cfg, vs, pts, p, -1, -1)
            vs[L.POS + p] = -1
            if forced:
                vs[L.POS + p + 1] = -1
    elif ph == L.P_REGROW:
        act[R_REGROW, skip + L.A_REGROW] = 1.0
        act[R_PASS, skip + L.A_KEEP] = 1.0
    elif ph == L.P_HERMIT:
        act[R_PASS, skip + L.A_SKIP] = 1.0
        for c in range(nc):
            a = d0 + c
            if act[F_LEGAL, a] > 0:
                act[R_PICK, a] = 1.0
                k = cfg[L.T_KIND + c]
                if not scores_face_down(k):  # a Sloth/Koala: counted at the next step
                    act[F_DOWN, a] = card_value(k, cfg[L.T_PTS + c], 1) / 10.0
    elif ph == L.P_HCOUNT:
        c = obs[lay.hermit + L.OBS_HERMIT_CARD]
        if 0 <= c < nc:
            k = cfg[L.T_KIND + c]
            v = cfg[L.T_PTS + c]
            for a, up in ((skip + L.A_COUNT_UP, 1), (skip + L.A_COUNT_DOWN, 0)):
                _card(act, a, k, v, unseen)
                act[R_PICK, a] = 1.0
                act[F_DOWN, a] = card_value(k, v, up) / 10.0
