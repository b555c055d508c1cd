"""Action-aligned features of an Op Glad IJs observation (numba and numpy only: no torch).

Whether a slap is correct depends on which animals and habitats are visible on *normal* cards
in the middle, and what it wins on the middle's size and on the other slaps' classes: a plain
MLP on the flat observation (per-type middle counts) has to rediscover the judging rule for
every one of the ``1 + T + T(T+1)/2`` actions. :func:`fill` states these facts per action,
computed by the game's own kernels from the observation alone (layout:
``card_envs.op_glad_ijs.env``): the observed middle counts are replayed into a scratch array
holding the middle's derived fields (``queries.middle_from_counts``: per-type counts, present
types, animals / habitats on normal cards, right-habitat cards, size; the header reads
"running"), on which ``rules.legal_mask`` and the rule queries (``queries.visible``,
``judge``, ``best_slaps``, ``slap_gain``, ``pairs_available``, ``target_exists``) run
unchanged. Nothing is an evaluation: no weights, no heuristic.

Per action (``ACTION_FEATURES``, ``F = 11``, in action order; all 0 for illegal actions):

| name        | meaning                                                                    |
|-------------|----------------------------------------------------------------------------|
| ``legal``   | the action mask of the seat to act: pass, slaps of cards in the middle; all |
|             | 0 once the observer has chosen in this window or the game is over (empty    |
|             | middle); a seat still waiting in the window sees the slaps it will have     |
| ``pass``    | class one-hot of the judge (``layout.J_*``): pass                          |
| ``right``   | one hand on a right-habitat card (correct, priority 1)                     |
| ``animals`` | one hand on a 2-animals card whose animals' habitats are visible (prio 2)  |
| ``habitats``| one hand on a 2-habitats card whose habitats' animals are visible (prio 3) |
| ``pair``    | two hands on two matching cards (correct, priority 4)                      |
| ``fault``   | any other slap: a fault                                                    |
| ``gain``    | change of the observer's won pile if every other seat passes, / 10: the    |
|             | whole middle for a correct one-hand slap, 2 for a correct pair, -1 for a   |
|             | fault with a non-empty won pile, else 0                                    |
| ``split``   | a correct pair of which the middle holds only one: another seat slapping   |
|             | the same pair splits it (one card each)                                    |
| ``outranked``| a correct slap while a correct slap of a higher class is available: if a  |
|             | rival takes that one, this slap wins nothing (and is no fault)             |
| ``again``   | a correct pair after which, if nobody else slaps, the middle still holds a |
|             | correct target and another window opens (window + 1 < ``MAX_WINDOWS``)      |

Global features (``GLOBAL_FEATURES``, ``G = 57`` for every player count and variant):

| name                      | meaning                                                       |
|---------------------------|---------------------------------------------------------------|
| ``middle``                | cards in the middle / 10                                      |
| ``target``                | the middle holds a correct target (``queries.target_exists``) |
| ``best_<class>``          | one-hot of the highest correct class available (right,        |
|                           | animals, habitats, pair; all 0 if none)                       |
| ``right_cards``,           | right-habitat, 2-animals, 2-habitats cards in the middle / 2  |
| ``animals_cards``,        |                                                               |
| ``habitats_cards``        |                                                               |
| ``animal_<a>``            | animal ``a`` visible on a normal card in the middle (6)       |
| ``habitat_<h>``           | habitat ``h`` visible on a normal card in the middle (6)      |
| ``new_animal_<a>``,       | the last turned card shows animal ``a`` / habitat ``h`` (12)  |
| ``new_habitat_<h>``       |                                                               |
| ``new_in_middle``         | a card of the last turned card's type is still in the middle  |
| ``window``                | window index / ``MAX_WINDOWS``                                |
| ``chosen``                | the observer has chosen in this window                        |
| ``turned_by_me``,         | the observer turned the current card / turns next as known so |
| ``turner_me``             | far                                                           |
| ``lead``                  | own won pile - the largest other one, / (cards / seats)       |
| ``draw_<r>``, ``won_<r>``,| relative seat ``r`` (0 = observer; 6 slots, 0 for absent      |
| ``known_<r>``             | seats): draw pile, won pile, public bottom cards, each / (cards |
|                           | / seats)                                                      |

Animals / habitats follow ``parts.deck.ANIMALS`` / ``parts.deck.HABITATS``. Any player count,
variant and custom deck (everything is read from ``cfg``). A shaping potential is not defined
here.
"""

from __future__ import annotations

import numpy as np

from card_envs.core.game import Game
from card_envs.core.jit import njit
from card_envs.core.kernels import C_PLAYERS
from card_envs.op_glad_ijs.layout import (
    A_ONE,
    A_PASS,
    CA,
    CB,
    CT_AM,
    CT_HM,
    CT_KIND,
    G_N,
    G_T,
    J_ANIMALS,
    J_FAULT,
    J_HABITATS,
    J_PAIR,
    J_PASS,
    J_RIGHT,
    KIND_ANIMALS,
    KIND_HABITATS,
    MAX_PLAYERS,
    MAX_WINDOWS,
    MLEN,
    NRIGHT,
    NUM_ANIMALS,
    O_CHOSEN,
    O_LAST_TURNED,
    O_SEATS,
    O_TURNED_BY,
    O_TURNER,
    O_WINDOW,
    OBS_MIDDLE,
    PLEN,
    PLIST,
    S_DRAW,
    S_KNOWN,
    S_WON,
    SEAT_FIELDS,
)
from card_envs.op_glad_ijs.parts.deck import ANIMALS, HABITATS
from card_envs.op_glad_ijs.parts.piles import count_add
from card_envs.op_glad_ijs.queries import (
    best_slaps,
    judge,
    middle_from_counts,
    pair_base_nb,
    pairs_available,
    slap_gain,
    target_exists,
    visible,
)
from card_envs.op_glad_ijs.rules import legal_mask

__all__ = ["ACTION_FEATURES", "CLASS_NAMES", "GLOBAL_FEATURES", "dims", "fill", "potential"]

_CLASS = {J_PASS: "pass", J_RIGHT: "right", J_ANIMALS: "animals", J_HABITATS: "habitats",
          J_PAIR: "pair", J_FAULT: "fault"}
#: the judge's classes by their ``J_*`` code
CLASS_NAMES = tuple(_CLASS[j] for j in range(len(_CLASS)))
ACTION_FEATURES = ("legal",) + CLASS_NAMES + ("gain", "split", "outranked", "again")
_SEAT = ("draw", "won", "known")
GLOBAL_FEATURES = (("middle", "target") + tuple(f"best_{_CLASS[j]}" for j in
                                                (J_RIGHT, J_ANIMALS, J_HABITATS, J_PAIR))
                   + ("right_cards", "animals_cards", "habitats_cards")
                   + tuple(f"animal_{a}" for a in ANIMALS)
                   + tuple(f"habitat_{h}" for h in HABITATS)
                   + tuple(f"new_animal_{a}" for a in ANIMALS)
                   + tuple(f"new_habitat_{h}" for h in HABITATS)
                   + ("new_in_middle", "window", "chosen", "turned_by_me", "turner_me", "lead")
                   + tuple(f"{f}_{r}" for r in range(MAX_PLAYERS) for f in _SEAT))

# per-action rows (the class one-hot is row F_CLASS + J_*)
F_LEGAL = ACTION_FEATURES.index("legal")
F_CLASS = ACTION_FEATURES.index(_CLASS[0])
F_GAIN = ACTION_FEATURES.index("gain")
F_SPLIT = ACTION_FEATURES.index("split")
F_OUTRANKED = ACTION_FEATURES.index("outranked")
F_AGAIN = ACTION_FEATURES.index("again")
# global entries
G_MIDDLE = GLOBAL_FEATURES.index("middle")
G_TARGET = GLOBAL_FEATURES.index("target")
G_BEST = GLOBAL_FEATURES.index("best_right") - J_RIGHT  # + J_* of the best correct class
G_SPECIAL = GLOBAL_FEATURES.index("right_cards")  # + 0, 1, 2: right, 2-animals, 2-habitats
G_ANIMAL = GLOBAL_FEATURES.index(f"animal_{ANIMALS[0]}")
G_HABITAT = GLOBAL_FEATURES.index(f"habitat_{HABITATS[0]}")
G_NEW_ANIMAL = GLOBAL_FEATURES.index(f"new_animal_{ANIMALS[0]}")
G_NEW_HABITAT = GLOBAL_FEATURES.index(f"new_habitat_{HABITATS[0]}")
G_NEW_IN = GLOBAL_FEATURES.index("new_in_middle")
G_WINDOW = GLOBAL_FEATURES.index("window")
G_CHOSEN = GLOBAL_FEATURES.index("chosen")
G_TURNED_BY = GLOBAL_FEATURES.index("turned_by_me")
G_TURNER = GLOBAL_FEATURES.index("turner_me")
G_LEAD = GLOBAL_FEATURES.index("lead")
G_SEATS = GLOBAL_FEATURES.index("draw_0")
NUM_SEAT = len(_SEAT)


def dims(game: Game) -> tuple[int, int]:
    """``(G, F)`` of an Op Glad IJs game (the same for every option)."""
    if getattr(game, "env_id", None) != "op_glad_ijs_v0":
        raise ValueError(f"not an Op Glad IJs game: {type(game).__name__}")
    return len(GLOBAL_FEATURES), len(ACTION_FEATURES)


@njit(cache=True)
def fill(obs: np.ndarray, cfg: np.ndarray, glob: np.ndarray, act: np.ndarray) -> None:
    """Write ``glob`` (``(G,)``) and ``act`` (``(F, A)``, feature-major) of one observation
    ``obs`` (module docstring)."""
    n = cfg[C_PLAYERS]
    T = cfg[G_T]
    share = cfg[G_N] / n
    glob[:] = 0.0
    act[:, :] = 0.0
    # the middle's derived fields, rebuilt by the pile kernel from the observed counts
    mid = middle_from_counts(obs[OBS_MIDDLE:OBS_MIDDLE + T], cfg)
    m = mid[MLEN]
    n2a = 0  # 2-animals cards
    n2h = 0  # 2-habitats cards
    for t in range(T):
        kind = cfg[CT_KIND + t]
        if kind == KIND_ANIMALS:
            n2a += obs[OBS_MIDDLE + t]
        elif kind == KIND_HABITATS:
            n2h += obs[OBS_MIDDLE + t]
    va, vh = visible(mid)
    best = best_slaps(mid, cfg)[1]
    # global features
    glob[G_MIDDLE] = m / 10.0
    glob[G_TARGET] = 1.0 if target_exists(mid, cfg) else 0.0
    if best < J_FAULT:
        glob[G_BEST + best] = 1.0
    glob[G_SPECIAL] = mid[NRIGHT] / 2.0
    glob[G_SPECIAL + 1] = n2a / 2.0
    glob[G_SPECIAL + 2] = n2h / 2.0
    for i in range(NUM_ANIMALS):
        glob[G_ANIMAL + i] = va >> i & 1
        glob[G_HABITAT + i] = vh >> i & 1
    lt = obs[T + O_LAST_TURNED]
    if lt >= 0:
        for i in range(NUM_ANIMALS):
            glob[G_NEW_ANIMAL + i] = cfg[CT_AM + lt] >> i & 1
            glob[G_NEW_HABITAT + i] = cfg[CT_HM + lt] >> i & 1
        glob[G_NEW_IN] = 1.0 if obs[OBS_MIDDLE + lt] > 0 else 0.0
    window = obs[T + O_WINDOW]
    glob[G_WINDOW] = window / MAX_WINDOWS
    chosen = obs[T + O_CHOSEN] != 0
    glob[G_CHOSEN] = 1.0 if chosen else 0.0
    glob[G_TURNED_BY] = 1.0 if obs[T + O_TURNED_BY] == 0 else 0.0
    glob[G_TURNER] = 1.0 if obs[T + O_TURNER] == 0 else 0.0
    own_won = obs[T + O_SEATS + S_WON]
    top = -1
    for r in range(n):
        o = T + O_SEATS + SEAT_FIELDS * r
        g = G_SEATS + NUM_SEAT * r
        glob[g] = obs[o + S_DRAW] / share
        glob[g + 1] = obs[o + S_WON] / share
        glob[g + 2] = obs[o + S_KNOWN] / share
        if r > 0 and obs[o + S_WON] > top:
            top = obs[o + S_WON]
    glob[G_LEAD] = (own_won - top) / share
    if chosen or m == 0:  # not to act: already chose, or the game is over
        return
    # per action
    legal_mask(mid, cfg, act[F_LEGAL])
    act[F_CLASS + J_PASS, A_PASS] = 1.0
    again_ok = window + 1 < MAX_WINDOWS
    k = mid[PLEN]
    for i in range(k):  # the slaps on present types; the mask says which are legal
        first = mid[PLIST + i]
        base = pair_base_nb(first, T)
        for jj in range(i - 1, k):  # i - 1: one hand on first; else two hands, with type jj
            a = A_ONE + first if jj < i else base + mid[PLIST + jj]
            if act[F_LEGAL, a] == 0.0:
                continue
            j = judge(mid, cfg, a, va, vh)
            act[F_CLASS + j, a] = 1.0
            act[F_GAIN, a] = slap_gain(mid, j, own_won) / 10.0
            if j == J_FAULT:
                continue
            act[F_OUTRANKED, a] = 1.0 if j > best else 0.0
            if j != J_PAIR:  # a correct one-hand slap wins the whole middle
                continue
            t = cfg[CA + a]
            u = cfg[CB + a]
            act[F_SPLIT, a] = 1.0 if pairs_available(mid, t, u) == 1 else 0.0
            if again_ok:
                count_add(mid, cfg, t, -1)
                count_add(mid, cfg, u, -1)
                act[F_AGAIN, a] = 1.0 if target_exists(mid, cfg) else 0.0
                count_add(mid, cfg, u, 1)
                count_add(mid, cfg, t, 1)


#: the shaping potential's scale: a lead of this many won cards is worth 1
POTENTIAL_CARDS = 20.0


def potential(obs: np.ndarray, num_players: int) -> np.ndarray:
    """Reward-shaping potential of observations ``(B, L)`` (the manifest's ``train.potential``,
    for :class:`card_envs.rl.sb3.shaping.PotentialShaping`): the observer's won pile minus the
    largest other one (public sizes; the game is won on them), / :data:`POTENTIAL_CARDS`.
    0 at the deal (every won pile empty). ``ValueError`` for rows that are not
    ``num_players``-seat observations (``2T + 7 + 6n`` entries)."""
    n = int(num_players)
    x = np.asarray(obs)
    x = x.reshape(1, -1) if x.ndim == 1 else x
    T2 = x.shape[-1] - O_SEATS - SEAT_FIELDS * n if x.ndim == 2 else -1
    if x.ndim != 2 or n < 2 or T2 <= 0 or T2 % 2:
        raise ValueError(f"{n}-seat Op Glad IJs observations (2T + 7 + 6n entries) expected, "
                         f"got shape {np.shape(obs)}")
    won = x[:, T2 // 2 + O_SEATS + S_WON + SEAT_FIELDS * np.arange(n)].astype(np.float64)
    return (won[:, 0] - won[:, 1:].max(1)) / POTENTIAL_CARDS
