"""Op Glad IJs (``op_glad_ijs_v0``): slap an animal together with the habitat where it belongs.

Rules: ``docs/rules/op_glad_ijs.md`` (as implemented). Version ``0``. 2-6 players.

**Options.** ``num_players`` (2), ``start_player`` (0 or ``"random"``), ``reward_mode``
(``"win"``: +1 winners / -1 others / 0 all tied; ``"points"``: final won-pile size;
``"cards"``: dense, after every window each seat's change in won-pile size, 0 on the other
steps, nothing extra at the end), ``advanced`` (bool: all 108 cards), ``two_animals`` (bool: add
only the six 2-animals cards), ``two_habitats`` (bool: add only the six 2-habitats cards);
a kind is in play if ``advanced`` or its own flag is set (``advanced=True`` means both),
``max_turned`` (1000: the cut-off below; smaller values give shorter episodes, e.g. for
training and for the shared kit's random-play checks), ``deck`` (``None``:
``data/deck.json``, validated on load; or a list of ``{"code", "count", "set"}`` entries,
same schema, at most 48 types / 120 cards).

**Card types** (T of them: 36 default, 42 with one extra kind, 48 advanced), in this order:
the 30 normal cards (deck order: animal-major, habitat ascending), the 6 right-habitat cards,
then the 2-animals, then the 2-habitats cards. Codes: ``"gorilla/ice_floe"``,
``"camel/desert"`` (right habitat), ``"animals:camel+penguin"``, ``"habitats:desert+water_lily"``
(animals camel, penguin, toad, spider, mountain_goat, gorilla; habitats desert, ice_floe,
water_lily, spider_web, mountains, rainforest).

**Turn structure.** Turning cards is automatic. After every turned card a reaction phase of up
to 16 windows; in a window every seat (also with an empty draw pile) chooses, one AEC step each,
in seat order 0..n-1; choices are hidden until the last seat has chosen, then the window is
judged against the middle and resolved inside that step (priority classes, whole-middle wins,
split of equal pair slaps, faults). Another window opens while a slap took cards and a correct
target is left; otherwise the end check runs and the next card is turned. The parallel env
(``op_glad_ijs_v0.parallel_env()``, :class:`card_envs.core.parallel.ParallelCardEnv`) does one
window per ``step``; its default ``illegal_action="lose"`` matches ``env()``, pass
``illegal_action="raise"`` for the raw behaviour.

**Decisions where the spec is silent** (tested; also in ``docs/rules/op_glad_ijs.md``):

* Seats choose in seat order 0..n-1 in every window (the order is irrelevant: choices are
  hidden and resolved together).
* A pair slap takes the earliest-turned card of each type (for a type slapped twice: the two
  earliest); the won pile gets them in turned order.
* Equal pair slaps: while handling the seeded random order, a slap on pair P whose middle holds
  only one P pair *and* has other unhandled slappers of P is split with one of them (drawn at
  random; that one is "later" and becomes the last taker); with two or more P pairs left it
  simply takes one pair.
* The "left of the slapper" rule (right-habitat card in a non-matching pair, no cards taken)
  also covers a pair of a right-habitat card with a 2-animals/2-habitats card; "first
  clockwise from the player who turned the card" starts with that player.
* Cut-off: when the reaction phase of the 1000th (``max_turned``) turned card ends with draw
  cards left, the game is truncated (scored as usual). Cards left in the middle at the end
  go ``out``.
* The end check and who turns next use the draw piles after the phase's faults.
* The observation summarizes the public bottom cards of the draw piles (per seat how many, per
  type how many in all piles); their exact order per pile is in ``state_dict(observer=s)``.
  Won piles are public, the observation shows their sizes and top cards (the card a fault
  would slide); the full piles are in ``state_dict(observer=s)``.
* ``resample`` pools the unknown draw-pile cards of all seats (nobody knows which unknown card
  lies in which pile) and redraws other seats' pending choices among the legal actions.

Action space ``Discrete(1 + T + T(T+1)/2)`` (703 default, 1225 advanced):

| action                    | meaning                                                    |
|---------------------------|------------------------------------------------------------|
| 0                         | pass                                                       |
| 1 + t, t < T              | one hand on a card of type t                               |
| 1 + T + off(t) + (u - t)  | two hands on types t <= u; off(t) = t*T - t(t-1)/2         |

A slap is legal iff its types lie in the middle (type t twice needs two such cards); pass is
always legal. Faults are legal actions (they are punished, not forbidden).

Observation ``Box(int8, (2T + 7 + 6n,))``, seats relative to the observer (observer first):

| index                 | meaning                                                        |
|-----------------------|----------------------------------------------------------------|
| 0 .. T-1              | middle: count of each card type                                |
| T                     | type of the last turned card                                   |
| T+1                   | window index within the current card's reaction phase (0-15)   |
| T+2                   | relative seat that turned the current card                     |
| T+3                   | relative seat turning next as known so far (``turner``)        |
| T+4                   | 1 if the observer already chose in this window                 |
| T+5, T+6              | the observer's own pending choice: types (-1 none)             |
| T+7+6r                | relative seat r (r = 0..n-1): draw-pile size                   |
| T+8+6r                | won-pile size                                                  |
| T+9+6r                | top card of the won pile (type, -1 empty)                      |
| T+10+6r               | public cards at the bottom of the draw pile                    |
| T+11+6r, T+12+6r      | its slap in the last resolved window (two types, -1 none)      |
| T+7+6n .. 2T+6+6n     | per type: cards publicly known to lie at draw-pile bottoms     |

The order of the unknown part of every draw pile and other seats' pending choices are never
observed. ``action_mask`` is ``int8``; all zeros for a seat that is not to act.

``state_dict()`` fields (beyond the shared ones): ``middle`` (codes in turned order),
``draw_piles`` (per seat, top first), ``known_bottom`` (per seat: how many bottom cards are
public), ``won_piles`` (per seat, top last), ``out`` (codes), ``turner`` (seat turning next as
known so far: the card's turner's left neighbour, the last taker, or the left neighbour of a
right-habitat pair faulter; empty draw piles are skipped when the card is turned),
``turned_by``, ``window``, ``turned_count``, ``last_turned`` (code), ``choices`` (per seat:
action chosen in this window or null), ``last_slaps`` (per seat: action of the last resolved
window or null), ``last_gains`` (per seat: change of its won-pile size in the last resolved
window; with ``reward_mode="cards"`` it restores the pending dense rewards when a state dict is
loaded). ``state_dict(observer=s)`` replaces the unknown draw-pile cards and other
seats' pending choices by null.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from card_envs.core import kernels as K
from card_envs.core.env import CardEnv
from card_envs.core.parallel import ParallelCardEnv
from card_envs.op_glad_ijs import layout as L
from card_envs.op_glad_ijs.game import OpGladIJsGame


class OpGladIJsEnv(CardEnv):
    __doc__ = __doc__
    game_class = OpGladIJsGame

    @classmethod
    def parallel_env(cls, **options: Any) -> ParallelCardEnv:
        """The native PettingZoo ``ParallelEnv``: one ``step`` is one reaction window."""
        return ParallelCardEnv(cls.game_class, **options)

    @classmethod
    def raw_parallel_env(cls, **options: Any) -> ParallelCardEnv:
        """``parallel_env`` whose masked-out actions raise ``IllegalActionError``."""
        return ParallelCardEnv(cls.game_class, illegal_action="raise", **options)

    def _set_state(self, state: np.ndarray) -> None:
        """As ``CardEnv._set_state``, plus the dense ``cards`` rewards of the last resolved
        window that the AEC bookkeeping still holds: ``rewards`` right after the resolving
        step, and the cumulative reward of every seat that has not acted since."""
        super()._set_state(state)
        if state[K.DONE] or self.game.options["reward_mode"] != "cards" or \
                state[L.LAST] < 0:
            return
        cur = int(state[K.CUR])
        for q, a in enumerate(self.possible_agents):
            g = float(state[L.GAIN + q])
            if cur == 0:
                self.rewards[a] = g
            if q >= cur:
                self._cumulative_rewards[a] = g
        self._dirty_rewards = cur == 0
