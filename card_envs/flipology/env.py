"""Flipology (``flipology_v0``): flip cards in face-down rows; effects reach the neighbours.

Rules: ``docs/rules/flipology.md``. Version ``1`` (1: a Hermit crab's pick is known to every
seat the moment it is made). 2-8 players (Great Tree 2-4).

**Options.** ``num_players`` (2), ``start_player`` (0 or ``"random"``), ``reward_mode``
(``"win"``: +1 winners / -1 others / 0 all tied; ``"points"``: the final points, negated when
the Moon is face up, in a series the totals), ``variant`` (``"nature"``: rows of 7, 3 rounds
of one turn each; ``"great_tree"``: rows of 5, Regrowth, a new row after rounds 1 and 2, two
turns per round), ``moon`` (False), ``wolves`` (True), ``series`` (False: play games until a
total reaches 100, +10 per game won, 25 for a win under the Moon and 0 for the others),
``max_games`` (20: a series also ends after this many games), ``deck`` (None = the validated
``data/deck.json``; or a mapping of the same schema, validated the same way:
``{"cards": [{"kind": "dog", "points": [5, 5, 6]}, ...]}``, kinds as in
``layout.KIND_NAMES``, points 0-31, at most 120 cards, enough for the deal).

**Turn structure.** Setup: from the start player, each seat places its hand cards one per
step, left to right (Nature: 7 of 9, the 2 left go face down to the discard pile; Great Tree:
Regrowth choice first if unused, then 5 of 5). Turns: the seat to act flips one card of its
(top) row. A card turned face up by the turn flip or by a Dog/Frog/Hawk/Monkey/Snake flip (or
a Parrot copying one) with an effect is applied by the turn player, depth first; every choice
inside an effect is a step of that player (Dog/Frog/Hawk/Snake/Mole/Wolves target; Parrot:
the animal to copy, then its targets; Monkey: which of two triggered effects (Great Tree: the
two neighbours first); Rain: one card per row in seat order from the own row; Sun: 3 peeks,
then one of them or ``skip``). End: each face-up Hermit crab's owner, from the start player,
picks a discarded animal or ``skip`` (Sloth/Koala: then ``count face up``/``face down``).

**Decisions not in the rule text** (single-option choices applied inside the step, the
one-frame effect stack and the 64-effect bound, nulls, the Parrot's and the Sun's targets, the
per-card knowledge, the Hermit crab's owner, the Great Tree's Regrowth order and deal) are
listed with the rules in ``docs/rules/flipology.md`` and tested in ``tests/games/flipology/``.

**Determinization** (``resample``): every card the observer does not know is permuted over
the places such cards occupy (others' face-down cards and hands, setup discards, the deck);
what the other seats know, when a place's card was drawn and which seats returned it stay with
the places. The 5 cards the observer returned by Regrowth go only to the deck or to places
filled by draws after its Regrowth (it knows they are not in the hands dealt before).

Action space ``Discrete(n*SP + HN + NC + 5)``; ``SP`` positions per seat (Nature 7, Great
Tree 15 = 3 levels x 5), ``HN`` hand slots (9 / 5), ``NC`` deck cards (84 by default):

| action                  | meaning                                                        |
|-------------------------|----------------------------------------------------------------|
| 0 .. n*SP-1             | position ``rel_seat*SP + level*ROWLEN + col`` (``rel_seat`` 0 = |
|                         | own row, 1 = next seat clockwise, ...): turn flip, effect target|
| n*SP .. n*SP+HN-1       | setup: place hand slot ``j`` at the next position of the row    |
| DISC0 = n*SP+HN .. +NC-1| Hermit crab: pick discarded card id ``a - DISC0``               |
| DISC0+NC                | skip (Sun: flip none; Hermit crab: no pick)                     |
| DISC0+NC+1 / +2         | Great Tree: regrow / keep the hand                              |
| DISC0+NC+3 / +4         | Hermit crab's Sloth/Koala: count face up / face down            |

(``DISC0+NC`` is ``cfg[layout.G_SKIP]``; the single actions are ``G_SKIP + layout.A_*``.)

Observation ``Box(int16, (3n*SP + 2HN + n + NC + 21 + 4n,))``, seats relative (observer
first), positions as in the action table (section starts: ``layout.obs_layout``; fields within
a section: ``layout.OBS_*``):

| index (k = running offset)   | meaning                                                    |
|------------------------------|------------------------------------------------------------|
| 0 .. 3n*SP-1                 | per position: face (-1 empty, 0 down, 1 up), kind (-1     |
|                              | unknown/empty, 0-22 ``layout.KIND_NAMES``), points (-1)    |
| next 2*HN                    | own hand per slot: kind, points (-1 empty)                 |
| next n                       | cards in hand per seat                                     |
| next NC                      | per card id: 0 not a known discard, 1 in the discard pile, |
|                              | 2 picked by a Hermit crab counted up, 3 counted down       |
| next 1                       | discarded cards unknown to the observer                    |
| next 10                      | pending effect: kind (-1 none), copied by a Parrot, source |
|                              | position, sub-step, Monkey a, b, Sun peeks x3 (positions,  |
|                              | -1), effects applied this turn                             |
| next 2                       | Hermit crab being resolved (position, -1), picked Sloth/   |
|                              | Koala awaiting up/down (card id, -1)                       |
| next 8                       | phase (0 regrow, 1 setup, 2 turn, 3 effect, 4 hermit,      |
|                              | 5 hermit_count, 6 end), round 0-2 (3 at the end), turn in  |
|                              | round, start player, seat to act (-1 at the end), game     |
|                              | number (series), rows dealt, cards in the deck             |
| next 4n                      | four blocks of n (per seat): series totals, public scores  |
|                              | (face-up cards, Sloths/Koalas negative, Hermit picks),     |
|                              | Hermit crab bonuses, Regrowth used                         |

``state_dict()`` fields (beyond ``game, version, options, phase, current_player, steps,
rng``): ``rows`` (seat x level x col: card id, ``"null"``, ``"empty"``), ``face_up`` (same
shape, bools), ``hands`` (seat x slot: card id or ``"empty"``), ``deck`` (card ids, next
drawn first), ``discard`` (card ids, ascending), ``picked`` ([card id, "up"/"down"] Hermit
crab picks), ``known`` (per seat: the card ids it knows), ``round``, ``turn``,
``start_player``, ``game_number``, ``levels``, ``setup_done`` (seats done with this setup),
``placed`` (cards the setup seat placed), ``nulls_placed``, ``chain``, ``regrow_used``,
``totals`` (series), ``hermit_bonus``, ``effect_stack`` (the pending effect: ``[]`` or one
frame ``{kind, copy, source, step, a, b, peeks}``, positions as [seat, level, col]; the
stack never holds more than one frame because every effect's trigger is its last act),
``draw_seq`` (per card id: the draw number that took it from the deck, 0 in the deck),
``draws`` (draws so far this game), ``returned`` (per seat: card ids it returned by Regrowth),
``return_time`` (per seat: ``draws`` at its Regrowth), ``hermit_scan`` (scan index of the
Hermit crab being resolved), ``hermit_card``. ``state_dict(observer=s)`` replaces by null
every card id ``s`` does not know (rows, hands, the deck, unknown discards listed last, other
seats' ``known`` and ``returned`` entries, ``draw_seq`` of unknown cards); ``s``'s own
``returned`` list stays.
"""

from __future__ import annotations

from card_envs.core.env import CardEnv
from card_envs.flipology.game import FlipologyGame


class FlipologyEnv(CardEnv):
    __doc__ = __doc__
    game_class = FlipologyGame
