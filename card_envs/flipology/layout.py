"""Flipology state layout, config layout and card kinds (constants shared by the kernels).

State (int32 offsets; sized for 8 seats / 60 positions / 120 cards):

| field    | size | meaning                                                              |
|----------|------|----------------------------------------------------------------------|
| header   | 8    | shared header (RNG, CUR, PHASE, DONE, STEPS)                         |
| POS      | 60   | card id at position ``seat*SEATPOS + level*ROWLEN + col``; -1 empty,  |
|          |      | ``NULLC`` (= number of deck cards) a null placed by the Wolves       |
| FACE     | 60   | 1 face up, 0 face down                                               |
| KNOW     | 121  | per card id (and NULLC): bit mask of the seats that know the card    |
| HAND     | 72   | seat*9 + slot: card id in hand, -1 empty                             |
| BONUS    | 8    | Hermit crab points per seat (this game)                              |
| TOTAL    | 8    | series totals per seat                                               |
| REGROW   | 8    | Great Tree: 1 = seat used its Regrowth                               |
| scalars  |      | DECKN ROUND TURN START GAME LEVELS SETK PLACED NULLS CHAIN           |
|          |      | EF_KIND EF_SRC EF_STEP EF_A EF_B EF_COPY EF_PEEK(3) HSCAN HCARD DLEN |
| DLIST    | 120  | the discard pile's card ids (DLEN of them; order irrelevant)         |
| PICK     | 120  | per card id: 0, 1 picked by a Hermit crab counted up, 2 counted down |
| DISC     | 120  | per card id: 1 = in the discard pile                                 |
| DECK     | 120  | draw pile: DECKN cards, DECK[DECKN-1] drawn next                     |
| SEQ      | 120  | per card id: draw number that took it from the deck, 0 in the deck   |
| NDRAW    | 1    | draws so far; RETSEQ (8): NDRAW when a seat used its Regrowth        |
| RET      | 120  | per card id: seats that returned it to the deck by Regrowth          |

Config (``G_*`` options and action offsets, ``T_*`` tables per card id and per position),
actions (``A_*``: the single actions after ``G_SKIP``), the roles of an effect's choices
(``ROLE_*``) and the observation (``OBS_*`` fields, section starts from :func:`obs_layout`;
table in ``card_envs.flipology.env``) follow.
"""

from __future__ import annotations

from typing import NamedTuple

from card_envs.core.kernels import C_HEADER, HEADER

MAX_PLAYERS = 8
MAXPOS = 60
MAXC = 120
HANDMAX = 9
ROUNDS = 3
CHAIN_LIMIT = 64
ALL_SEATS = (1 << MAX_PLAYERS) - 1

# effect sub-steps (EF_STEP): a Monkey chooses its first neighbour (0), its second
# (MONKEY_SECOND), then which of two triggered effects applies (MONKEY_CHOOSE); a Sun peeks
# (0 .. SUN_PEEKS-1), then flips one of its peeks or none (SUN_PEEKS); a Rain's sub-step is the
# row being flipped (seats from the turn player's)
MONKEY_SECOND, MONKEY_CHOOSE = 1, 2
SUN_PEEKS = 3

# variants (cfg[G_VARIANT]) and their rows: (row length, levels, hand size)
NATURE, GREAT_TREE = 0, 1
VARIANTS = ("nature", "great_tree")
ROW_SHAPES = ((7, 1, 9), (5, 3, 5))

# series: play to SERIES_TARGET; a game's winners get SERIES_WIN_BONUS, under the Moon
# SERIES_MOON_WIN instead of their points (the others 0)
SERIES_TARGET = 100
SERIES_WIN_BONUS = 10
SERIES_MOON_WIN = 25

# kinds
DOG, FROG, HAWK, MOLE, MONKEY, PARROT, SNAKE, WOLVES = 0, 1, 2, 3, 4, 5, 6, 7
HERMIT, CAT, SLOTH, KOALA = 8, 9, 10, 11
PANDA, KIWI, QUOKKA, PLATYPUS, OKAPI, RED_PANDA = 12, 13, 14, 15, 16, 17
MOON, RAIN, SUN, WIND, NULL = 18, 19, 20, 21, 22
NUM_KINDS = 23
KIND_NAMES = ("dog", "frog", "hawk", "mole", "monkey", "parrot", "snake", "wolves",
              "hermit_crab", "cat", "sloth", "koala", "panda", "kiwi", "quokka", "platypus",
              "okapi", "red_panda", "moon", "rain", "sun", "wind", "null")

# state (fields read on every step first, for cache locality; POS must be first and
# STATE_SIZE last: init zeroes POS..STATE_SIZE)
POS = HEADER
FACE = POS + MAXPOS
KNOW = FACE + MAXPOS
HAND = KNOW + MAXC + 1
BONUS = HAND + MAX_PLAYERS * HANDMAX
TOTAL = BONUS + MAX_PLAYERS
REGROW = TOTAL + MAX_PLAYERS
DECKN = REGROW + MAX_PLAYERS
ROUND = DECKN + 1
TURN = ROUND + 1
START = TURN + 1
GAME = START + 1
LEVELS = GAME + 1
SETK = LEVELS + 1  # setup: seats done (in order from START)
PLACED = SETK + 1  # setup: cards the current seat has placed in its new row
NULLS = PLACED + 1
CHAIN = NULLS + 1
EF_KIND = CHAIN + 1  # effect being applied (kind), -1 none
EF_SRC = EF_KIND + 1  # position of the card whose effect it is
EF_STEP = EF_SRC + 1
EF_A = EF_STEP + 1
EF_B = EF_A + 1
EF_COPY = EF_B + 1  # 1 if a Parrot is applying a copied effect
EF_PEEK = EF_COPY + 1  # SUN_PEEKS Sun peeks
HSCAN = EF_PEEK + SUN_PEEKS  # Hermit crab scan index
HCARD = HSCAN + 1  # card picked by a Hermit crab awaiting up/down, -1
DLEN = HCARD + 1
DLIST = DLEN + 1  # the discard pile as a list of card ids (same set as DISC), DLEN long
PICK = DLIST + MAXC
DISC = PICK + MAXC
DECK = DISC + MAXC
SEQ = DECK + MAXC  # per card id: draw number that took it from the deck (0 = in the deck)
NDRAW = SEQ + MAXC  # draws from the deck in this game
RETSEQ = NDRAW + 1  # per seat: NDRAW when it returned its hand by Regrowth
RET = RETSEQ + MAX_PLAYERS  # per card id: bit mask of the seats that returned it
STATE_SIZE = RET + MAXC

# PICK values: a Hermit crab's pick, counted as face up / face down (Sloth, Koala; others up)
PICKED_UP, PICKED_DOWN = 1, 2

# phases
P_REGROW, P_SETUP, P_TURN, P_EFFECT, P_HERMIT, P_HCOUNT, P_END = 0, 1, 2, 3, 4, 5, 6
PHASES = ("regrow", "setup", "turn", "effect", "hermit", "hermit_count", "end")

# config (extended array)
G_VARIANT = C_HEADER  # NATURE or GREAT_TREE
G_MOON = C_HEADER + 1
G_WOLVES = C_HEADER + 2
G_SERIES = C_HEADER + 3
G_MAXGAMES = C_HEADER + 4
G_NCARDS = C_HEADER + 5
G_SEATPOS = C_HEADER + 6
G_ROWLEN = C_HEADER + 7
G_NLEVELS = C_HEADER + 8
G_HANDN = C_HEADER + 9
G_NPOS = C_HEADER + 10
G_HAND0 = C_HEADER + 11
G_DISC0 = C_HEADER + 12
G_SKIP = C_HEADER + 13  # the single actions: G_SKIP + A_* (below)
G_NA = C_HEADER + 14
G_TARGET = C_HEADER + 15
T_KIND = C_HEADER + 16
T_PTS = T_KIND + MAXC + 1
T_ASIDE = T_PTS + MAXC + 1  # 1 = card is not used in this configuration
T_ADJ = T_ASIDE + MAXC + 1  # [levels-1][pos][4]
T_D2 = T_ADJ + 3 * MAXPOS * 4  # [levels-1][pos][8]
CFG_SIZE = T_D2 + 3 * MAXPOS * 8

# actions: positions (n * SEATPOS), hand slots (G_HAND0, HANDN), discard card ids (G_DISC0,
# NCARDS), then the single actions at G_SKIP + A_*
A_SKIP, A_REGROW, A_KEEP, A_COUNT_UP, A_COUNT_DOWN = 0, 1, 2, 3, 4
SINGLES = ("skip", "regrow", "keep", "count face up", "count face down")

# what a position choice of the pending effect does (``queries.effect_role``)
CHOICE_ROLES = ("flip", "swap", "remove", "copy", "choose", "peek")
ROLE_FLIP, ROLE_SWAP, ROLE_REMOVE, ROLE_COPY, ROLE_CHOOSE, ROLE_PEEK = range(len(CHOICE_ROLES))

# observation (int16, seats relative: the observer first); sections in obs_layout order
OBS_CLIP = 30000  # series totals are clipped to +-OBS_CLIP
OBS_CELL = 3  # per position: face (-1 empty, 0 down, 1 up), kind, points (-1 unknown)
OBS_FACE, OBS_KIND, OBS_POINTS = 0, 1, 2
OBS_SLOT = 2  # per own hand slot: kind, points (-1 empty)
OBS_SLOT_KIND, OBS_SLOT_POINTS = 0, 1
# pending effect: kind, copied by a Parrot, source, sub-step, Monkey a, b, 3 Sun peeks, chain
OBS_EF_KIND, OBS_EF_COPY, OBS_EF_SRC, OBS_EF_STEP, OBS_EF_A, OBS_EF_B = 0, 1, 2, 3, 4, 5
OBS_EF_PEEK = 6  # SUN_PEEKS entries
OBS_EF_CHAIN = OBS_EF_PEEK + SUN_PEEKS
OBS_EFFECT_LEN = OBS_EF_CHAIN + 1
OBS_HERMIT_POS, OBS_HERMIT_CARD = 0, 1  # Hermit crab being resolved, its Sloth/Koala pick
OBS_HERMIT_LEN = 2
OBS_PHASE, OBS_ROUND, OBS_TURN, OBS_START, OBS_CUR, OBS_GAME, OBS_LEVELS, OBS_DECKN = range(8)
OBS_INFO_LEN = 8
# per seat, blocks of n: series total, public score, Hermit crab bonus, Regrowth used
OBS_TOTAL, OBS_PUBLIC, OBS_BONUS, OBS_REGROW = 0, 1, 2, 3
OBS_SEAT_FIELDS = 4


class ObsLayout(NamedTuple):
    """Start of each observation section (``size``: the observation length)."""

    board: int  # n * SEATPOS cells of OBS_CELL
    hand: int  # HANDN slots of OBS_SLOT
    hand_counts: int  # n: cards in hand per seat
    discard: int  # NCARDS: 0 not a known discard, 1 discarded, 2 picked up, 3 picked down
    unknown: int  # 1: discarded cards unknown to the observer
    effect: int  # OBS_EFFECT_LEN
    hermit: int  # OBS_HERMIT_LEN
    info: int  # OBS_INFO_LEN
    seats: int  # OBS_SEAT_FIELDS blocks of n
    size: int


def obs_layout(n: int, seatpos: int, handn: int, ncards: int) -> ObsLayout:
    """Section starts of the observation of ``n`` seats with these row and deck sizes."""
    hand = OBS_CELL * n * seatpos
    hand_counts = hand + OBS_SLOT * handn
    discard = hand_counts + n
    unknown = discard + ncards
    effect = unknown + 1
    hermit = effect + OBS_EFFECT_LEN
    info = hermit + OBS_HERMIT_LEN
    seats = info + OBS_INFO_LEN
    return ObsLayout(0, hand, hand_counts, discard, unknown, effect, hermit, info, seats,
                     seats + OBS_SEAT_FIELDS * n)


def obs_size(n: int, seatpos: int, handn: int, ncards: int) -> int:
    """Length of the observation."""
    return obs_layout(n, seatpos, handn, ncards).size
