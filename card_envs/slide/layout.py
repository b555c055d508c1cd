"""Slide's state layout, phases, action encoding and observation offsets (constants only:
imported by the kernels, the Game class, the agent, the features and the tests).

State (int32 offsets, sized for the maximum of 6 seats):

| field  | offset      | size | meaning                                                      |
|--------|-------------|------|--------------------------------------------------------------|
| header | 0           | 8    | shared header (`card_envs.core.kernels`): RNG, CUR, PHASE... |
| GRID   | 8           | 96   | seat*16 + row*4 + col: value 1-10, 0 = empty slot            |
| FACE   | 104         | 96   | 1 = face up, 0 = face down                                   |
| MID    | 200         | 10   | count of each value 1-10 in the middle                       |
| ROUND  | 210         | 1    | 0-15                                                         |
| FIRST  | 211         | 1    | seat holding the first-player token                          |
| REVEAL | 212         | 6    | slot chosen this reveal phase per seat, -1 = not yet         |

Phases: 0 reveal, 1 pick, 2 end. Actions: ``Discrete(56)``: ``0-15`` reveal slot
``row*4+col``; ``16 + (value-1)*4 + side`` pick ``value`` and push it in from ``side``
(0 left, 1 right, 2 top, 3 bottom).

Observation (``16n + 25`` entries, table in ``card_envs.slide.env``): the ``n`` grids first
(``SLOTS`` codes each, the observer's own grid at ``0..15``), then the tail at
``obs_tail(n) = 16n``; ``OBS_*`` are offsets into that tail.
"""

from __future__ import annotations

from card_envs.core.kernels import HEADER

MAX_PLAYERS = 6
NUM_VALUES = 10  # card values 1-10
COPIES = 10  # copies of each value in the deck
SLOTS = 16  # cells of a 4x4 grid, slot = row*4 + col
ROUNDS = 16

# --- actions ------------------------------------------------------------------------------
NUM_ACTIONS = 56
PICK0 = 16  # first pick action: PICK0 + (value-1)*4 + side
LEFT, RIGHT, TOP, BOTTOM = 0, 1, 2, 3
SIDES = ("left", "right", "top", "bottom")  # names of the sides, by side code

# --- phases -------------------------------------------------------------------------------
P_REVEAL, P_PICK, P_END = 0, 1, 2
PHASES = ("reveal", "pick", "end")  # by phase code

# --- state --------------------------------------------------------------------------------
GRID = HEADER
FACE = GRID + MAX_PLAYERS * SLOTS
MID = FACE + MAX_PLAYERS * SLOTS
ROUND = MID + NUM_VALUES
FIRST = ROUND + 1
REVEAL = FIRST + 1
STATE_SIZE = REVEAL + MAX_PLAYERS

# --- observation --------------------------------------------------------------------------
FACE_DOWN_CODE = 11  # observation code of a face-down card (0 empty, 1-10 face up)
OBS_MID = 0  # tail + OBS_MID + v-1: copies of value v in the middle
OBS_UNSEEN = OBS_MID + NUM_VALUES  # tail + OBS_UNSEEN + v-1: copies of v not visible anywhere
OBS_PHASE = OBS_UNSEEN + NUM_VALUES  # phase code
OBS_ROUND = OBS_PHASE + 1  # round 0-15
OBS_FIRST = OBS_ROUND + 1  # first player, relative seat
OBS_CUR = OBS_FIRST + 1  # seat to act, relative (-1 at the end)
OBS_OWN_REVEAL = OBS_CUR + 1  # own reveal choice this reveal phase (-1 if none)
OBS_TAIL_SIZE = OBS_OWN_REVEAL + 1  # 25 entries after the grids


def obs_tail(n: int) -> int:
    """Index of the first entry after the ``n`` grids of an ``n``-seat observation."""
    return SLOTS * n


def obs_size(n: int) -> int:
    """Length of the observation vector for ``n`` seats."""
    return obs_tail(n) + OBS_TAIL_SIZE


def obs_players(size: int) -> int:
    """Number of seats of an observation vector of length ``size``."""
    return (size - OBS_TAIL_SIZE) // SLOTS
