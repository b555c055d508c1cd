"""If It Fits (``if_it_fits_v0``): build cardboard boxes from cards, fill them with cat toys and
put your cats in the boxes that score best.

Rules: ``docs/rules/if_it_fits.md`` (the rules as implemented, every **Decision:** included).

Version ``0``. 2-5 players. Options: ``num_players`` (2), ``start_player`` (0 or
``"random"``), ``reward_mode`` (``"win"``: +1 winners / -1 others / 0 all tied; ``"points"``:
the final points), ``table`` ((rows, cols), default (11, 11); rows 3-21, cols 5-21),
``advanced`` (False), ``deck`` (None = the default deck in ``data/deck.json``; or a dict / JSON
path with the same schema, validated: see ``card_envs/if_it_fits/parts/deck.py``).

**Turn structure.** Setup: hands of 2 box cards; the pile is split into near-equal piles (top
piles larger), one Princess shuffled into each (advanced: 5 Princesses through the whole
pile). Start cards: the start player picks a start card and a rotation for the centre cell
``(rows//2, cols//2)``; then clockwise each other seat picks a card, an end of the start row
(west/east) and a rotation. Then turns from the start player:

* ``turn``: **draw** (A) or **sleeping cat** (B, only with a cat in supply and a legal cell).
  A drawn special toy card goes at once to ``toy_slot`` (a free cat slot of a box the seat's
  cat could enter) or, if there is none, ``toy_cell`` (laid as a card open on all sides);
  then the seat plays from its hand (an empty hand ends the turn).
* ``play`` (hand position) -> box card: ``cell`` -> ``rotation`` -> ``cat`` (a slot touching
  the card just played, or **skip**; asked only if a slot is possible and a cat is in supply);
  Princess: ``princess`` (the cat to replace: a slot or a sleeping cat's cell).
* ``discard`` (hand position) when no card in the hand can be played.
* B: ``sleep_cell`` -> ``sleep_dir`` (the neighbouring card whose box the cat joins). The
  cat rule is judged on the box it joins only (**Decision** of the spec): a cell is legal if
  some neighbouring card shows it an open side and that card's box has no cat of another
  player or a Princess unless the seat has a cat there too; an open side of another box that
  the sleeping cat merely faces is shut by it, whoever has cats there.
* End: the pile is empty or a seat's supply is empty (fifth cat) at the end of a turn. Then
  turns go on with ``play`` / ``discard`` only; a seat with an empty hand gets ``pass``. The
  game ends when every hand is empty. Scoring per box as in the rules; ties: fewest minus
  points.

**Decisions not in the rule text** (tested):

* The advanced no-wall-to-wall rule is lifted for a card (box, start) that has no placement
  obeying it anywhere (checked when the card is chosen); a sleeping cat's sides never count
  as walls for it, in either direction.
* A special toy card is placed on a slot regardless of the seat's cat supply; if the table has
  no free cell and no slot for it (only possible on small tables), it is discarded.
* Discarded cards are public (face up) and leave the game.
* Start cards and special toy cards laid as cards count as box cards (boxes, cat slots, the
  card a sleeping cat is laid against).
* Dealing the hands from the box cards only is the spec's "a special toy card drawn now goes
  back, the pile is shuffled, draw again" (same distribution).
* The first turn after the start cards is the start player's.
* A Princess in the hand is playable only if some player's cat is on the table; it replaces
  players' cats only, never another Princess.
* The selected hand position (not the card) is public while a card is being placed.
* ``resample`` keeps the number of Princesses each other seat holds and per pile segment, and
  the card currently being placed; everything else hidden is redrawn.

Action space ``Discrete(T + S + 20)`` with ``T = rows*cols`` cells (``r*cols + c``) and
``S = (rows-1)*cols`` cat slots (slot ``s`` lies between cell ``s`` and the cell south of it);
``B = T + S``:

| action        | meaning                                                               |
|---------------|-----------------------------------------------------------------------|
| 0 .. T-1      | cell: card / toy card / sleeping cat there; Princess onto a sleeping cat |
| T .. B-1      | slot: awake cat / special toy card there; Princess onto the cat there |
| B+0 .. B+2    | hand position (play or discard)                                       |
| B+3, B+4      | rotation 0 / 180 degrees                                              |
| B+5 .. B+8    | sleeping cat joins the card to the N / E / S / W                      |
| B+9 .. B+13   | start card S1 .. S5                                                   |
| B+14, B+15    | start row end: west / east                                            |
| B+16          | draw                                                                  |
| B+17          | play a sleeping cat                                                   |
| B+18          | skip (no awake cat)                                                   |
| B+19          | pass (end phase, empty hand)                                          |

Observation ``Box(int8, (8T + S + 6NT + 87 + 2n,))`` (``NT`` special toy cards in the deck, 3
by default; 1187 entries for 2 players on 11 x 11), seats relative to the observer (observer =
1 in cat-owner codes, 0 in per-seat vectors); the offsets are named in
``card_envs/if_it_fits/layout.py`` (``PK_*``, ``TR_*``, ``CR_*``, ``O_*`` from X, ``Y_*`` from Y):

| index                 | meaning                                                          |
|-----------------------|------------------------------------------------------------------|
| 0 .. T-1              | cell kind: 0 empty, 1 box, 2 start, 3 special toy card, 4 sleeping cat |
| T .. 2T-1             | open sides after rotation, bits N=1, E=2, S=4, W=8 (0-15)        |
| 2T .. 5T-1            | ball, mouse, yarn icons on the card (3 planes)                   |
| 5T .. 6T-1            | water sprayers on the card                                       |
| 6T .. 7T-1            | sleeping cat: 1..n relative owner + 1, 6 Princess, 0 none        |
| 7T .. 8T-1            | sleeping cat: direction of the card it joined, 1..4 = N/E/S/W    |
| 8T .. 8T+S-1          | slot: 0 free, 1..n awake cat (rel. owner+1), 6 Princess, 7 toy |
| 8T+S .. +6NT-1        | per special toy card: on a slot (0/1), slot row, col, ball, mouse, yarn |
| X .. X+26 (X=8T+S+6NT) | own hand, 3 positions x [kind 0 none/1 box/2 Princess, N, E, S, W, |
|                       | ball, mouse, yarn, sprayer]                                      |
| X+27 .. X+71          | start cards S1..S5 x [available, N, E, S, W, ball, mouse, yarn, spray] |
| X+72 .. X+74          | drawn special toy card waiting to be placed: ball, mouse, yarn   |
| X+75 .. X+75+n-1      | cats in supply per relative seat                                 |
| X+75+n .. X+75+2n-1   | hand sizes per relative seat                                     |
| Y = X+75+2n           | draw pile size                                                   |
| Y+1                   | phase (index into the phase list below)                          |
| Y+2                   | seat to act, relative (-1 at the end)                            |
| Y+3                   | end triggered                                                    |
| Y+4                   | hand position being played (cell/rotation/princess), else -1     |
| Y+5                   | start card being laid (0-4), else -1                             |
| Y+6, Y+7              | selected cell row, col (-1)                                      |
| Y+8, Y+9              | cell of the card played this turn: row, col (-1)                 |
| Y+10                  | advanced rule lifted for the card being placed                   |
| Y+11                  | start player, relative                                           |

Phases: ``start_card, start_end, start_rotation, turn, toy_slot, toy_cell, play, cell,
rotation, cat, princess, sleep_cell, sleep_dir, discard, pass, end``. Other hands and the
pile order are never observed. ``action_mask`` is ``int8``; all zeros for a seat not to act.

``state_dict()`` fields (beyond ``game, version, options, phase, current_player, steps,
rng``): ``table`` (rows x cols: null, ``{"card": name, "rot": 0|1}``, or ``{"sleeping_cat":
seat|"princess", "joined": [r, c]}``), ``slots`` ((rows-1) x cols: null, ``{"cat":
seat|"princess"}`` or ``{"toy": name}``), ``hands`` (card names per seat, ``"princess"``),
``supplies`` (cats per seat), ``draw_pile`` (top first), ``pile_segments`` (segment
boundaries in the pile, bottom-up indices), ``discarded``, ``end_triggered``,
``first_player``, ``start_cards_laid``, ``start_cards_used``, ``start_row`` ([west col, east
col]), ``selected_hand``, ``selected_start``, ``selected_cell``, ``played_cell``,
``relaxed``, ``drawn_toy``. Card names come from the deck (default: ``X-1`` .. ``U2-8``,
``S1`` .. ``S5``, ``balls``, ``mice``, ``yarns``). ``state_dict(observer=s)`` replaces other
seats' hand cards and every pile card by null.
"""

from __future__ import annotations

from card_envs.core.env import CardEnv
from card_envs.if_it_fits.game import IfItFitsGame


class IfItFitsEnv(CardEnv):
    __doc__ = __doc__
    game_class = IfItFitsGame
