"""Exceptions raised by card-envs. All are ``ValueError`` subclasses so that callers who only
know the standard library can still catch them."""

from __future__ import annotations

from collections.abc import Sequence


class CardEnvError(ValueError):
    """Base class of every error card-envs raises on bad input."""


class IllegalActionError(CardEnvError):
    """An action that is not legal now: masked out, out of range, of the wrong type, or sent to a
    game that has ended. The game state is left unchanged."""

    def __init__(self, message: str, action: object = None, phase: str | None = None,
                 legal: Sequence[int] = ()) -> None:
        self.action = action
        self.phase = phase
        self.legal = list(legal)
        super().__init__(message)


class OptionError(CardEnvError):
    """An invalid environment option (unknown name, out-of-range value, wrong type)."""


class StateDictError(CardEnvError):
    """A state dict that cannot be loaded (wrong game, missing or malformed fields,
    an inconsistent position). The environment keeps its previous state."""


class NoViewerError(OptionError):
    """The game has no picture (its ``view`` module has no ``draw``), so it cannot be drawn
    (``render_mode`` ``"svg"`` / ``"rgb_array"``, ``env.picture()``); ``"ansi"`` works."""
