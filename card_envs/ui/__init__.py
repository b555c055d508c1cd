"""Pictures, replays and play in the browser: the ``ui`` layer.

* :mod:`card_envs.ui.pictures`: ``picture_svg(env, observer, theme)``, the SVG of one seat's
  view (or the omniscient one), drawn only from ``env.state_dict(observer)``.
* :mod:`card_envs.ui.record`: the replay format (seed/start + actions: the whole game, the
  engine being deterministic), recording agents' games and reading a replay back.
* :mod:`card_envs.ui.replay_html`: ``write_html(replay, path)``, one self-contained HTML file
  that steps through a game (no network, no CDN).
* :mod:`card_envs.ui.server`: the play server (Starlette + uvicorn, the ``ui`` extra): a person
  plays against agents in the browser; the state lives on the server and the browser only
  ever receives the human seat's view. Its games, and the checks of what a browser asks of
  them, are :mod:`card_envs.ui.sessions`; its page is :mod:`card_envs.ui.page` (its script
  :mod:`card_envs.ui.page_script`: moves are played by clicking the picture); the move log's
  labels come from :mod:`card_envs.ui.moves` (another seat's move is named only when the
  human's view tells it); where moves are clicked, where the others' last moves were played
  and how the game is won come from the games' view modules through :mod:`card_envs.ui.board`.
* :mod:`card_envs.ui.specs`: the command line's agent-list syntax (``mcts:ms=50+c=0.7``).
* :mod:`card_envs.ui.csp`: the Content-Security-Policy of the pages (their one inline script,
  by hash) and the security headers the server sends.

Guide: ``docs/ui.md``.

Layers: ``ui`` imports the core, the games, the agents and the arena; only ``card_envs.cli``
imports ``ui``. Importing this package imports neither Starlette nor uvicorn.
"""

from __future__ import annotations
