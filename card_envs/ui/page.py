"""The play page: one HTML document with inline CSS and vanilla JS (no external resources).

It shows the picture of the human seat's view, on which the legal moves are played by
clicking (hit boxes over the picture; :mod:`card_envs.ui.page_script`), the legal moves as
buttons too (the keyboard fallback; a click posts ``{action, turn}``), the other seats' last
moves (marked on the picture and said in a status line), the move log, the result and how the
game is won, a "new game" form and the replay download once the game is over. The game id
lives in the URL's fragment (``/#g=<id>``), so a reload shows the same game.

Layout: on a wide screen the picture sits beside a sidebar (and is never taller than the
window); below 820 px the sidebar goes under the picture, which takes the full width.
``document.body.dataset.state`` is ``loading | busy | your-turn | waiting | over | error`` and
``dataset.turn`` the move counter: the browser tests wait on them.
"""

from __future__ import annotations

from card_envs.core.pictures import theme
from card_envs.draw import player_color
from card_envs.ui.page_script import PAGE_SCRIPT

__all__ = ["NARROW", "PAGE_SCRIPT", "play_page"]

#: widths (CSS px) up to which the sidebar goes under the picture
NARROW = 820

_CSS = """
:root { --bg: %(background)s; --fg: %(text)s; --muted: %(muted)s; --panel: %(panel)s;
  --accent: %(highlight)s; --edge: %(card_edge)s; }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg);
  font: 15px/1.4 system-ui, "DejaVu Sans", Verdana, sans-serif; }
header { display: flex; flex-wrap: wrap; column-gap: 1em; align-items: baseline;
  padding: .5em 1em; background: var(--panel); border-bottom: 1px solid var(--edge); }
header h1 { font-size: 1.15em; margin: 0; }
#status { font-weight: bold; }
main { display: grid; grid-template-columns: minmax(0, 1fr) 22em; gap: 1em; padding: 1em;
  align-items: start; }
#picture svg { display: block; width: 100%%; height: auto; margin: 0 auto;
  max-width: calc((100vh - 4.5em) * var(--aspect, 10)); }
#board p { margin: .4em 0 0 0; overflow-wrap: anywhere; font-size: .93em; }
#last-move { margin: 0 0 .5em 0; overflow-wrap: anywhere; }
#last-move:empty, #rule:empty { display: none; }
aside > section { background: var(--panel); border-radius: 6px; padding: .6em .8em;
  margin-bottom: .8em; min-width: 0; }
aside h2 { font-size: 1em; margin: 0 0 .4em 0; }
#moves { display: flex; flex-wrap: wrap; gap: .3em; max-height: 22em; overflow-y: auto; }
#moves.grouped { display: block; font-size: .93em; }
#moves .group { display: flex; flex-wrap: wrap; gap: .25em; align-items: baseline;
  padding: .15em 0; border-bottom: 1px solid var(--bg); }
#moves .gname { color: var(--muted); margin-right: .2em; }
#moves button, .btn { font: inherit; padding: .2em .5em; border-radius: 4px; max-width: 100%%;
  border: 1px solid var(--edge); background: var(--bg); color: var(--fg); cursor: pointer;
  overflow-wrap: anywhere; text-align: left; }
#moves button:hover, #moves button:focus-visible, .btn:hover { border-color: var(--accent);
  box-shadow: 0 0 0 2px var(--accent); }
#moves button:disabled { opacity: .45; cursor: wait; }
#error { color: #d33; min-height: 1.2em; white-space: pre-wrap; overflow-wrap: anywhere; }
#log { max-height: 16em; overflow-y: auto; margin: 0; padding-left: 2.6em;
  font-size: .92em; overflow-wrap: anywhere; }
#log li.mine { font-weight: bold; }
#log li.hidden { color: var(--muted); font-style: italic; }
#result table { border-collapse: collapse; table-layout: fixed; width: 100%%; }
#result td, #result th { padding: .1em .4em; text-align: left; overflow-wrap: anywhere; }
#result th:nth-child(2) { width: 4.5em; }
#result th:nth-child(3) { width: 3.5em; }
#result tr.winner { color: var(--accent); font-weight: bold; }
#result-text { margin: 0 0 .4em 0; }
form label { display: block; margin: .2em 0; }
form input, form select { font: inherit; width: 100%%; background: var(--bg); color: var(--fg);
  border: 1px solid var(--edge); border-radius: 4px; padding: .15em .3em; }
.muted { color: var(--muted); }
.ui-hits .hit { fill: transparent; stroke: var(--accent); stroke-opacity: .5;
  stroke-width: 1.5px; stroke-dasharray: 5 4; vector-effect: non-scaling-stroke;
  pointer-events: all; cursor: pointer; outline: none; }
.ui-hits .hit:hover, .ui-hits .hit:focus { fill: var(--accent); fill-opacity: .3;
  stroke-opacity: 1; stroke-width: 3px; stroke-dasharray: none; }
.ui-hits .hit[data-step="1"] { stroke-opacity: .9; stroke-width: 2.5px; }
.ui-hits .selected, .ui-hints .hint { fill: var(--accent); fill-opacity: .3;
  stroke: var(--accent); stroke-width: 3px; vector-effect: non-scaling-stroke;
  pointer-events: none; }
.ui-marks .last { fill: none; stroke-width: 3.5px; stroke-dasharray: 8 4;
  vector-effect: non-scaling-stroke; pointer-events: none; }
%(seats)s
body[data-state=busy] .ui-hits { pointer-events: none; }
@media (max-width: %(narrow)dpx) {
  main { grid-template-columns: minmax(0, 1fr); padding: .5em; gap: .6em; }
  #picture svg { max-width: 100%%; }
  header { padding: .4em .6em; }
  #moves { max-height: 40vh; }
}
"""

_HTML = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>card-envs: play</title>
<style>%(css)s</style></head>
<body data-state="loading" data-turn="-1">
<header><h1>card-envs</h1><span id="title"></span><span id="status">loading...</span></header>
<main>
<section id="board"><div id="picture"></div>
<p id="board-help" class="muted" hidden>Click a marked place on the board to play (two-step
moves: the piece, then where it goes; Esc cancels), or use the buttons.</p>
<p id="rule" class="muted"></p></section>
<aside>
<section><h2>Your moves</h2>
<p id="last-move" role="status" aria-live="polite"></p><div id="moves"></div>
<div id="error" role="alert"></div></section>
<section id="result-box" hidden><h2>Result</h2><p id="result-text"></p><div id="result"></div>
<a id="replay-link" class="btn" hidden download>Download the replay</a></section>
<section><h2>Moves so far</h2><ol id="log"></ol></section>
<section><h2>New game</h2><form id="new-game-form">
<label>game <select id="f-game"></select></label>
<label>players <input id="f-players" type="number" min="2" max="8"></label>
<label>opponents (agent specs) <input id="f-vs" type="text"></label>
<p id="vs-help" class="muted"></p>
<label>your seat <input id="f-seat" type="number" min="0" max="7"></label>
<label>seed (empty: random) <input id="f-seed" type="number" min="0"></label>
<label>theme <select id="f-theme"><option>light</option><option>dark</option></select></label>
<button id="new-game" class="btn">New game</button>
</form></section>
</aside>
</main>
<script>%(js)s</script>
</body></html>
"""


def play_page(theme_name: str = "light") -> str:
    """The play page's HTML in the colours of ``theme_name``."""
    t = theme(theme_name)
    seats = "\n".join(f'.ui-marks .last[data-seat="{s}"] {{ stroke: {player_color(t, s)}; }}'
                      for s in range(len(t.palette)))
    css = _CSS % {"seats": seats, "narrow": NARROW,
                  **{k: getattr(t, k) for k in
                     ("background", "text", "muted", "panel", "highlight", "card_edge")}}
    return _HTML % {"css": css, "js": PAGE_SCRIPT}
