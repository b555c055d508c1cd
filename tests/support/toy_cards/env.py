"""Three Cards (``toy_v0``): a test-only toy game; the highest card takes the trick.

Version ``0``. 2-3 players. Options: ``num_players`` (2), ``start_player`` (0 or
``"random"``), ``reward_mode`` (``"win"`` or ``"points"``: tricks won).

Nine cards, values 1-9. Each seat is dealt three (secret); the rest stay out of play, unseen.
Three tricks: from the lead, clockwise, each seat plays one card face up; the highest card
takes the trick and its owner leads the next. Most tricks wins (ties share the win).

Action space ``Discrete(9)``: action ``v`` plays the card of value ``v + 1`` (legal if it is
in the hand of the seat to act).

Observation ``Box(int8, (21 + n,))``, seats relative to the observer:

| index        | meaning                                                                    |
|--------------|----------------------------------------------------------------------------|
| 0 .. 8       | 1 if that card is in the observer's hand                                   |
| 9 .. 17      | 0 unplayed; 1 + seat: played in an earlier trick; 1 + n + seat: on the table |
| 18 .. 17+n   | tricks won per seat                                                        |
| 18+n         | tricks completed                                                           |
| 19+n, 20+n   | lead seat, seat to act (-1 at the end)                                     |

``state_dict()`` fields: ``owners`` (seat dealt each card, null undealt), ``played`` (trick of
each card, null unplayed), ``tricks``, ``trick``, ``lead``; ``state_dict(observer=s)`` shows
``"hidden"`` for the owners of cards ``s`` has not seen.
"""

from __future__ import annotations

from card_envs.core.env import CardEnv
from toy_cards.game import ToyGame


class ToyEnv(CardEnv):
    __doc__ = __doc__
    game_class = ToyGame
