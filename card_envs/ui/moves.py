"""Move labels that keep hidden information hidden: what one seat may read about a move.

``action_to_str`` names an action completely ("reveal r2c1", "slap camel/desert"), but another
seat may not know which action was played (Slide's reveal choices and Op Glad IJs' slaps stay
hidden until everyone has chosen). :func:`describe_move` labels a move for ``observer`` only if
the observer's own view determines it: no other action with another label, in the true
position or in positions resampled from the observer's knowledge, leads to the same view
afterwards. Otherwise the label is ``None`` (the log shows "a hidden choice").
"""

from __future__ import annotations

from typing import Any

import numpy as np

from card_envs.core import kernels as K

__all__ = ["describe_move", "is_public", "view_after"]


def view_after(game: Any, state: np.ndarray, action: int, observer: int,
                rewards: np.ndarray) -> dict[str, Any]:
    """``observer``'s state dict after ``action`` in a copy of ``state`` (a Game's array)."""
    st = state.copy()
    game.k_step(st, game.cfg, action, rewards)
    return game.state_dict(st, observer)


def is_public(env: Any, action: int, observer: int, samples: int = 2, seed: int = 0) -> bool:
    """Whether ``observer`` can tell ``action`` (legal for the seat to act in ``env``) from its
    view after the move: no action with another label gives the same view, in ``env``'s
    position or in ``samples`` positions resampled for ``observer`` (seeded by ``seed``)."""
    game = env.game
    if game.perfect_information:
        return True
    rewards = np.zeros(game.num_players, np.float32)
    state = env.state_array
    target = view_after(game, state, action, observer, rewards)
    label = game.action_to_str(action)
    rng = np.random.default_rng(seed)
    positions = [state, *(env.resample(observer, rng).state_array for _ in range(samples))]
    for st in positions:
        for b in game.legal_actions(st):
            if b != action and game.action_to_str(b) != label and \
                    view_after(game, st, b, observer, rewards) == target:
                return False
    return True


def describe_move(env: Any, action: int, observer: int, samples: int = 2,
                  seed: int = 0) -> dict[str, Any]:
    """The log entry of ``action``, about to be played in ``env`` by the seat to act, as
    ``observer`` sees it: ``{"seat": who, "label": text or None}``. The
    observer's own moves are always labelled; others' only when :func:`is_public`."""
    seat = int(env.state_array[K.CUR])
    public = seat == observer or is_public(env, action, observer, samples, seed)
    return {"seat": seat, "label": env.action_to_str(action) if public else None}
