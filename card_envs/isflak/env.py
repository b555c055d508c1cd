"""Isflak (``isflak_v0``): penguins slide over a 5x7 grid of cards and take the floes they leave.

Rules, as implemented and for players: ``docs/rules/isflak.md`` (every decision below is there
too). State layout and offsets: ``card_envs.isflak.layout``.

Version ``0``. 2-6 players. Perfect information: ``resample`` returns a copy (the core re-seeds
its RNG, which draws nothing after the deal), ``state_dict(observer=s)`` is the full dict
without ``rng``.

**Options**

| option                  | default                                | values                        |
|-------------------------|----------------------------------------|-------------------------------|
| ``num_players``         | 2                                      | 2-6                           |
| ``penguins_per_player`` | ``None`` = table: 2p 4, 3p 3, 4-6p 2   | int >= 1, players x P <= 16   |
| ``card_points``         | ``{"ace": 3, "face": 2, "number": 1}`` | see below                     |
| ``start_player``        | 0                                      | a seat, or ``"random"``       |
| ``reward_mode``         | ``"win"``                              | ``"win"``, ``"points"``       |

``card_points``: a dict with exactly the keys ``ace``, ``face``, ``number`` or a 3-sequence
``(ace, face, number)``; integers 0-20; normalized to the dict form. ``reward_mode``:
``"win"``: +1 winners / -1 others / 0 if all tie; ``"points"``: each seat's final points.

**Turn structure.** Placement: from the start player clockwise, one penguin per turn until all
are placed; a penguin goes on a free border card, on a number card (2-10) if any free border
number card exists, else on a face card, never on an ace (n x P <= 16 guarantees a legal cell).
Movement, starting again with the start player: move one penguin like a chess queen, 1-6 cells,
never onto or over a penguin or a gap; the card it stood on goes to the mover's pile and becomes
a gap. When the turn reaches a seat none of whose penguins can move, it goes out automatically
inside ``step`` (no action): it banks the cards under its penguins (in slot order), the penguins
leave, the cells become gaps, and the turn passes on (every later seat that cannot move goes out
the same way). The game ends when everyone is out. Most points wins; tie -> more cards; still
tied -> shared win.

**Decisions not in the rule text** (tested): a seat is only checked (and goes out) when the turn
reaches it, never earlier; a seat whose turn comes while it can still move must move (there is
no pass); banked cards enter the pile in penguin-slot order; the unused 17 cards are not part of
the state; ``penguins_per_player`` may be any value with n x P in 1..16 (the action space grows
with P); card points are limited to 0-20 so that observations fit ``int16``; the observation
dtype is ``int8`` when the highest possible pile score fits (35 cards x the points: always with
the default points), else ``int16``.

Action space ``Discrete(35 + 48P)`` (``P`` = penguins per player; 227 for 2 players):

| action                          | meaning                                                  |
|---------------------------------|----------------------------------------------------------|
| 0-34                            | placement: put the next penguin on cell ``row*7 + col``  |
| ``35 + (k*8 + d)*6 + (s-1)``    | movement: penguin slot ``k`` (0..P-1), direction ``d``,  |
|                                 | distance ``s`` (1-6)                                     |

Directions ``d``: 0 N (row-1), 1 NE, 2 E (col+1), 3 SE, 4 S (row+1), 5 SW, 6 W (col-1), 7 NW.
A seat's penguins keep their slot numbers for the whole game (slot ``k`` = its ``k``-th placed
penguin).

Observation ``Box(int8 or int16, (70 + n(P+3) + 3,))``, seats relative to the observer (observer
= 0):

| index                      | meaning                                                          |
|----------------------------|------------------------------------------------------------------|
| 0 .. 34                    | points of the card on cell ``row*7+col`` (``card_points``), -1 gap |
| 35 .. 69                   | penguin on the cell: 0 none, else 1 + its owner's relative seat  |
| 70 + i(P+3) + k, k < P     | rel. seat ``i``'s penguin slot ``k``: cell, -1 unplaced / gone   |
| 70 + i(P+3) + P            | relative seat ``i`` is out (0/1)                                 |
| 70 + i(P+3) + P + 1        | its points (pile)                                                |
| 70 + i(P+3) + P + 2        | its pile size (cards)                                            |
| 70 + n(P+3)                | phase: 0 placement, 1 movement, 2 end                            |
| 70 + n(P+3) + 1            | seat to act, relative (-1 at the end)                            |
| 70 + n(P+3) + 2            | penguins placed so far (n x P after the placement)               |

The card kind (ace / face / number) is not a separate plane: with the default points it is the
points value, and the placement rule that depends on it is in the action mask.

``action_mask`` is ``int8``; all zeros for a seat that is not to act.

``state_dict()`` fields (beyond the shared ``game, version, options, phase, current_player,
steps, rng``): ``grid`` (5 x 7: card code such as ``"AS"``, ``"10H"``, ``"KD"`` (ranks A 2-10 J
Q K, suits S H D C), ``null`` for a gap; a card under a penguin is still on the grid),
``penguins`` (per seat: P entries ``[row, col]`` by slot, ``null`` for a penguin not yet placed
or gone), ``piles`` (per seat: card codes in the order taken), ``out`` (per seat: bool).
Search helpers: ``clone()``,
``legal_actions()``, and ``card_envs.Engine("isflak_v0")`` (``new_state / legal_actions /
apply / step / clone`` on raw state arrays).
"""

from __future__ import annotations

from card_envs.core.env import CardEnv
from card_envs.isflak.game import IsflakGame


class IsflakEnv(CardEnv):
    __doc__ = __doc__
    game_class = IsflakGame
