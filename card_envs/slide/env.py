"""Slide (``slide_v0``): end with the lowest total in your 4x4 grid.

Rules: ``docs/rules/slide.md`` (every **Decision:** there is implemented and tested).

Version ``0``. 2-6 players. Options: ``num_players`` (2), ``start_player`` (a seat, default 0,
or ``"random"``), ``reward_mode`` (``"win"``: +1 winners / -1 others / 0 all tied; ``"points"``:
``-points``).

**Turn structure.** 16 rounds. Reveal: in seat order from the first player, each seat picks one
of its face-down slots (hidden from the others until all have chosen); then all chosen cards go
face up to the middle. Pick: in seat order from the first player, each seat takes a value from
the middle and pushes it into its grid from an edge on the row/column of its empty slot (never
straight into the gap). The first-player token then passes left. At the end every card with an
equal orthogonal neighbour is removed; lowest remaining total wins, then fewest cards, else a
shared win.

**Decisions not in the rule text** (tested; listed in ``docs/rules/slide.md``): face-down cards
are unknown to everyone, including their owner; the 100 - 16n undealt cards are out of play and
unseen.

Action space ``Discrete(56)``:

| action      | meaning                                                                |
|-------------|------------------------------------------------------------------------|
| 0-15        | reveal own face-down slot ``row*4 + col``                              |
| 16-55       | pick: ``16 + (value-1)*4 + side``; side 0 left, 1 right, 2 top, 3 bottom |

Observation ``Box(int8, (16n + 25,))``, seats relative to the observer (observer first):

| index            | meaning                                                              |
|------------------|----------------------------------------------------------------------|
| 0 .. 16n-1       | grids, seat-relative, slot ``row*4+col``: 0 empty, 1-10 face up, 11 down |
| 16n .. 16n+9     | middle: count of each value 1-10                                     |
| 16n+10 .. 16n+19 | unseen: copies of each value not visible anywhere (10 - seen)        |
| 16n+20           | phase: 0 reveal, 1 pick, 2 end                                       |
| 16n+21           | round 0-15                                                           |
| 16n+22           | first player, relative seat                                          |
| 16n+23           | seat to act, relative (-1 at the end)                                |
| 16n+24           | own reveal choice this reveal phase (slot, -1 if none / not reveal)  |

Other seats' reveal choices are hidden until the reveal resolves; face-down values are never
observed. ``action_mask`` is ``int8``; all zeros for a seat that is not to act.

``state_dict()`` fields (beyond the shared ``game, version, options, phase, current_player,
steps, rng``): ``grids`` (n x 4 x 4 ints, 1-10, 0 empty; true values also when face down),
``face_up`` (n x 4 x 4 bools), ``middle`` (values, ascending), ``round`` (0-15),
``first_player`` (seat), ``reveals`` (per seat: slot chosen this reveal phase, or null).
``state_dict(observer=s)`` replaces face-down values and other seats' unresolved reveals by null.
"""

from __future__ import annotations

from card_envs.core.env import CardEnv
from card_envs.slide.game import SlideGame


class SlideEnv(CardEnv):
    __doc__ = __doc__
    game_class = SlideGame
