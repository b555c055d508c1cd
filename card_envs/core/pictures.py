"""The picture of a game, found through its contract: the ``draw`` of its ``view`` module, in
a named theme (:mod:`card_envs.draw`). Used by the envs, the single-agent view and the ui."""

from __future__ import annotations

from typing import Any

from card_envs import draw
from card_envs.core.errors import NoViewerError, OptionError
from card_envs.core.game import Game

__all__ = ["theme", "viewer"]


def theme(name: str | draw.Theme) -> draw.Theme:
    """The named picture theme; :class:`OptionError` for an unknown name."""
    try:
        return draw.theme(name)
    except draw.ThemeError as e:
        raise OptionError(str(e)) from None


_theme = theme  # ``picture(theme=...)`` shadows the name


def viewer(game_class: type[Game]) -> Any:
    """The ``draw(view, theme) -> str`` of a game's ``view`` module; :class:`NoViewerError`
    when it has none."""
    fn = getattr(game_class.view, "draw", None)
    if not callable(fn):
        raise NoViewerError(f"{getattr(game_class, 'env_id', game_class.__name__)} has no "
                            "viewer (no draw() in its view module); render modes 'svg' and "
                            "'rgb_array' and env.picture() need one, 'ansi' works")
    return fn
