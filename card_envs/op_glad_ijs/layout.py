"""Op Glad IJs layout: the state, config, observation and action encodings (constants only).

Every module that reads the arrays imports its offsets from here (the ``njit`` kernels of
``rules``, ``observe``, ``queries``, ``parts.piles`` and ``parts.resolve``, the Python codecs,
the agents, the features, the tests). numba freezes these globals into the compiled kernels;
this file names ``njit`` so that ``card_envs.core.jit.source_hash`` counts it and an edit here
recompiles them.

Cards are stored as *type* indices ``0..T-1`` of the configuration
(``parts.deck.configured_types``).

Config (int32, built by ``OpGladIJsGame.configure``): the shared header, then ``G_T`` (types),
``G_N`` (cards), ``G_MAXT`` (cut-off), and tables of ``MAX_TYPES`` entries per type
(``CT_COUNT`` count, ``CT_KIND`` kind, ``CT_AM`` animal bitmask, ``CT_HM`` habitat bitmask),
then the action decoding tables ``CA`` / ``CB`` (first and second type of each action, -1 for
none).

State layout (int32 offsets; sized for 6 seats, 120 cards, 48 types; hot fields first):

| field       | offset | size | meaning                                                     |
|-------------|--------|------|-------------------------------------------------------------|
| header      | 0      | 8    | shared header (`card_envs.core.kernels`)                    |
| CHOICE      | 8      | 6    | action chosen in the current window (-1 = not yet)          |
| LAST        | 14     | 6    | action of the last resolved window (-1 = none yet)          |
| TURNED_BY   | 20     | 1    | seat that turned the card of the current reaction phase     |
| TURNER      | 21     | 1    | seat turning next as known so far (before skipping empties) |
| WINDOW      | 22     | 1    | window index within the current card's reaction phase, 0-15 |
| TURNED      | 23     | 1    | cards turned so far (cut-off at ``max_turned``)             |
| LAST_TURNED | 24     | 1    | type of the last turned card                                |
| GAIN        | 25     | 6    | change of each won-pile size in the last resolved window    |
| DLEN        | 31     | 6    | draw pile sizes                                             |
| WLEN        | 37     | 6    | won pile sizes                                              |
| KNOWN       | 43     | 6    | public cards at the bottom of each draw pile (after faults) |
| MLEN        | 49     | 1    | cards in the middle                                         |
| OLEN        | 50     | 1    | cards out of the game                                       |
| NRIGHT      | 51     | 1    | right-habitat cards in the middle                           |
| NA          | 52     | 6    | normal cards in the middle showing animal a                 |
| NH          | 58     | 6    | normal cards in the middle showing habitat h                |
| PLEN        | 64     | 1    | number of types present in the middle                       |
| DTOP        | 65     | 6    | slot of each draw pile's top card (-1 = empty pile)         |
| DBOT        | 71     | 6    | slot of each draw pile's bottom card (-1 = empty pile)      |
| WTOP        | 77     | 6    | slot of each won pile's top card (-1 = empty pile)          |
| MHEAD/MTAIL | 83     | 2    | slots of the earliest / latest middle card (-1 = empty)     |
| OHEAD/OTAIL | 85     | 2    | slots of the first / last card out of the game (-1 = none)  |
| PLIST       | 87     | 48   | the types present in the middle, ascending                  |
| MCOUNT      | 135    | 48   | middle count per type                                       |
| KCOUNT      | 183    | 48   | per type: public cards at the bottoms of all draw piles     |
| CARDS       | 231    | 240  | per card slot (x120): type, next slot (-1 = end of its pile) |

Every card is in exactly one pile, so the piles are singly linked lists over ``MAX_CARDS``
card slots (``CARDS + 2 * slot`` = its type, ``NEXT + 2 * slot`` = the next slot): a draw
pile links top to bottom (turn = pop the top, fault = append at the bottom), a won pile top to
bottom (a stack), the middle and the out pile earliest to latest. ``init`` deals the shuffled
deck's ``k``-th card into slot ``k``. 471 int32 (1,884 bytes) in all.

Observation (``obs_size(n, T)`` int8, the table in ``card_envs.op_glad_ijs.env``): the middle's
count per type at ``OBS_MIDDLE + t``; then, from ``T``, the card fields ``O_*``; then one block
of ``SEAT_FIELDS`` per relative seat ``r`` from ``T + O_SEATS + SEAT_FIELDS * r`` (fields
``S_*``); then the per-type public bottom counts from ``obs_known(n, T)``.

Actions: ``A_PASS``, one hand on type ``t`` = ``A_ONE + t``, two hands on types ``t <= u`` =
``pair_action(t, u, T)``; ``num_actions(T)`` in all.
"""

from __future__ import annotations

from card_envs.core.kernels import HEADER

MAX_PLAYERS = 6
MAX_CARDS = 120  # cards of one configuration (int8 observation bounds)
MAX_TYPES = 48  # card types of one configuration (obs/action tables are sized by it)
MAX_ACTIONS = 1 + MAX_TYPES + MAX_TYPES * (MAX_TYPES + 1) // 2
MAX_WINDOWS = 16  # reaction windows per turned card
MAX_TURNED = 1000  # default cut-off
NUM_ANIMALS = 6  # animals, and habitats (habitat i is animal i's own)

# card kinds (CT_KIND)
KIND_NORMAL, KIND_RIGHT, KIND_ANIMALS, KIND_HABITATS = 0, 1, 2, 3
KIND_NAMES = ("normal", "right_habitat", "two_animals", "two_habitats")

# judgement classes of a slap (``queries.judge``), in priority order of the correct ones
J_PASS, J_RIGHT, J_ANIMALS, J_HABITATS, J_PAIR, J_FAULT = 0, 1, 2, 3, 4, 5

# reward modes (C_REWARD) and phases (PHASE)
REWARD_MODES = ("win", "points", "cards")
REWARD_CARDS = REWARD_MODES.index("cards")
PHASES = ("react", "end")
P_REACT, P_END = PHASES.index("react"), PHASES.index("end")

# config
G_T = 4  # types
G_N = 5  # cards
G_MAXT = 6  # cut-off: turned cards
CT_COUNT = 12  # per-type tables, after the 12 entries of the base config (Game.__init__)
CT_KIND = CT_COUNT + MAX_TYPES
CT_AM = CT_KIND + MAX_TYPES
CT_HM = CT_AM + MAX_TYPES
CA = CT_HM + MAX_TYPES
CB = CA + MAX_ACTIONS
CFG_SIZE = CB + MAX_ACTIONS

# state (hot fields first)
CHOICE = HEADER
LAST = CHOICE + MAX_PLAYERS
TURNED_BY = LAST + MAX_PLAYERS
TURNER = TURNED_BY + 1
WINDOW = TURNER + 1
TURNED = WINDOW + 1
LAST_TURNED = TURNED + 1
GAIN = LAST_TURNED + 1
DLEN = GAIN + MAX_PLAYERS
WLEN = DLEN + MAX_PLAYERS
KNOWN = WLEN + MAX_PLAYERS
MLEN = KNOWN + MAX_PLAYERS
OLEN = MLEN + 1
NRIGHT = OLEN + 1
NA = NRIGHT + 1
NH = NA + NUM_ANIMALS
PLEN = NH + NUM_ANIMALS
DTOP = PLEN + 1
DBOT = DTOP + MAX_PLAYERS
WTOP = DBOT + MAX_PLAYERS
MHEAD = WTOP + MAX_PLAYERS
MTAIL = MHEAD + 1
OHEAD = MTAIL + 1
OTAIL = OHEAD + 1
PLIST = OTAIL + 1
MCOUNT = PLIST + MAX_TYPES
KCOUNT = MCOUNT + MAX_TYPES
CARDS = KCOUNT + MAX_TYPES  # per slot: type, next
NEXT = CARDS + 1  # state[NEXT + 2 * slot]
STATE_SIZE = CARDS + 2 * MAX_CARDS

# actions
A_PASS = 0
A_ONE = 1  # one hand on type t: A_ONE + t


def num_actions(t: int) -> int:
    """Size of the action space with ``t`` card types."""
    return A_ONE + t + t * (t + 1) // 2


def pair_base(t: int, T: int) -> int:
    """``pair_base(t, T) + u`` is the two-hand slap on types ``t <= u``."""
    return A_ONE + T + t * T - t * (t - 1) // 2 - t


def pair_action(t: int, u: int, T: int) -> int:
    """Action of a two-hand slap on types ``t <= u``."""
    return pair_base(t, T) + u


# observation: the middle's count per type, then (offsets from T) the card's fields
OBS_MIDDLE = 0
O_LAST_TURNED = 0  # type of the last turned card
O_WINDOW = 1  # window index within the card's reaction phase
O_TURNED_BY = 2  # relative seat that turned the card
O_TURNER = 3  # relative seat turning next as known so far
O_CHOSEN = 4  # 1 if the observer already chose in this window
O_OWN = 5  # the observer's pending choice: two types (-1 none)
O_SEATS = 7  # first per-seat block
# per relative seat r, from T + O_SEATS + SEAT_FIELDS * r
S_DRAW = 0  # draw-pile size
S_WON = 1  # won-pile size
S_WON_TOP = 2  # top card of the won pile (type, -1 empty)
S_KNOWN = 3  # public cards at the bottom of the draw pile
S_LAST = 4  # its slap in the last resolved window: two types (-1 none)
SEAT_FIELDS = 6


def obs_known(n: int, t: int) -> int:
    """Offset of the per-type counts of public draw-pile bottom cards."""
    return t + O_SEATS + SEAT_FIELDS * n


def obs_size(n: int, t: int) -> int:
    """Observation length with ``n`` seats and ``t`` card types."""
    return obs_known(n, t) + t
