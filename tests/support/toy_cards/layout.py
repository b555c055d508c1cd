"""Three Cards: the state, config and observation layout (offsets into the int32 arrays)."""

from __future__ import annotations

from card_envs.core.kernels import HEADER

CARDS = 9  # values 1..9, one card each; action v plays the card of value v + 1
HAND = 3  # cards dealt to each seat; also the number of tricks
MAX_PLAYERS = 3
P_PLAY, P_END = 0, 1
PHASES = ("play", "end")

# state fields after the shared header
OWNER = HEADER  # [CARDS] seat dealt the card, -1 undealt
PLAYED = OWNER + CARDS  # [CARDS] trick the card was played in, -1 not yet
TRICKS = PLAYED + CARDS  # [MAX_PLAYERS] tricks won
TRICK = TRICKS + MAX_PLAYERS  # tricks completed (HAND at the end)
LEAD = TRICK + 1  # seat that led the current trick
STATE_SIZE = LEAD + 1

NUM_ACTIONS = CARDS

# observation (seats relative to the observer, 0 = itself)
O_HAND = 0  # [CARDS] 1 if the card is in the observer's hand
O_PLAYED = O_HAND + CARDS  # [CARDS] 0 unplayed, 1+seat earlier trick, 1+n+seat current trick
O_TRICKS = O_PLAYED + CARDS  # [n] tricks won


def obs_size(n: int) -> int:
    """Observation length for ``n`` seats: hand, played, tricks, trick, lead, seat to act."""
    return O_TRICKS + n + 3
