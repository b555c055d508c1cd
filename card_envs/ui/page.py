"""The play page: one HTML document with inline CSS and vanilla JS (no external resources).

It shows the picture of the human seat's view, the legal moves as buttons (only legal moves
are buttons; a click posts ``{action, turn}``), the move log, the result, a "new game" form
and the replay download once the game is over. The game id lives in the URL's fragment
(``/#g=<id>``), so a reload shows the same game. ``document.body.dataset.state`` is
``loading | busy | your-turn | waiting | over | error`` and ``dataset.turn`` the move
counter: the browser tests wait on them.
"""

from __future__ import annotations

from card_envs.core.pictures import theme

__all__ = ["PAGE_SCRIPT", "play_page"]

_CSS = """
:root { --bg: %(background)s; --fg: %(text)s; --muted: %(muted)s; --panel: %(panel)s;
  --accent: %(highlight)s; --edge: %(card_edge)s; }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg);
  font: 15px/1.4 system-ui, "DejaVu Sans", Verdana, sans-serif; }
header { display: flex; gap: 1em; align-items: baseline; padding: .6em 1em;
  background: var(--panel); border-bottom: 1px solid var(--edge); }
header h1 { font-size: 1.15em; margin: 0; }
#status { font-weight: bold; }
main { display: grid; grid-template-columns: minmax(0, 1fr) 22em; gap: 1em; padding: 1em; }
#picture svg { max-width: 100%%; height: auto; display: block; }
aside > section { background: var(--panel); border-radius: 6px; padding: .6em .8em;
  margin-bottom: .8em; }
aside h2 { font-size: 1em; margin: 0 0 .4em 0; }
#moves { display: flex; flex-wrap: wrap; gap: .3em; max-height: 22em; overflow-y: auto; }
#moves button, .btn { font: inherit; padding: .25em .55em; border-radius: 4px;
  border: 1px solid var(--edge); background: var(--bg); color: var(--fg); cursor: pointer; }
#moves button:hover, .btn:hover { border-color: var(--accent); }
#moves button:disabled { opacity: .45; cursor: wait; }
#error { color: #d33; min-height: 1.2em; white-space: pre-wrap; }
#log { max-height: 16em; overflow-y: auto; margin: 0; padding-left: 2.6em;
  font-size: .92em; }
#log li.mine { font-weight: bold; }
#log li.hidden { color: var(--muted); font-style: italic; }
#result table { border-collapse: collapse; }
#result td, #result th { padding: .1em .6em; text-align: left; }
#result tr.winner { color: var(--accent); font-weight: bold; }
form label { display: block; margin: .2em 0; }
form input, form select { font: inherit; width: 100%%; background: var(--bg); color: var(--fg);
  border: 1px solid var(--edge); border-radius: 4px; padding: .15em .3em; }
.muted { color: var(--muted); }
"""

_JS = r"""
const $ = (id) => document.getElementById(id);
const S = { view: null, busy: false, cfg: null };

function setState(s) { document.body.dataset.state = s; }

async function api(method, path, body) {
  const opt = { method, headers: {} };
  if (body !== undefined) {
    opt.headers["Content-Type"] = "application/json";
    opt.body = JSON.stringify(body);
  }
  const r = await fetch(path, opt);
  let data = null;
  try { data = await r.json(); } catch (e) { data = { error: r.statusText }; }
  if (!r.ok) {
    const err = new Error(data.error || r.statusText);
    err.status = r.status;
    throw err;
  }
  return data;
}

function playerName(v, s) {
  return s === v.seat ? "you" : "player_" + s + " (" + v.players[s] + ")";
}

function render(v) {
  S.view = v;
  location.hash = "g=" + v.id;
  $("title").textContent = v.game + " - you are player_" + v.seat;
  $("picture").innerHTML = v.svg;
  let status;
  if (v.over) status = "Game over";
  else if (v.your_turn) status = "Your move (" + v.phase + ")";
  else status = "player_" + v.to_act + " to move";
  $("status").textContent = status;
  const moves = $("moves");
  moves.replaceChildren();
  moves.scrollTop = 0;
  for (const m of v.legal) {
    const b = document.createElement("button");
    b.className = "move";
    b.dataset.action = m.action;
    b.textContent = m.label;
    b.title = "action " + m.action;
    b.addEventListener("click", () => play(m.action));
    moves.appendChild(b);
  }
  if (!v.legal.length) {
    const p = document.createElement("span");
    p.className = "muted";
    p.textContent = v.over ? "The game is over." : "Waiting for the other players.";
    moves.appendChild(p);
  }
  const log = $("log");
  log.replaceChildren();
  for (const e of v.log) {
    const li = document.createElement("li");
    li.value = e.n;
    const what = e.label === null ? "a hidden choice" : e.label;
    li.textContent = playerName(v, e.seat) + ": " + what;
    if (e.seat === v.seat) li.classList.add("mine");
    if (e.label === null) li.classList.add("hidden");
    log.appendChild(li);
  }
  log.scrollTop = log.scrollHeight;
  const res = $("result");
  res.replaceChildren();
  if (v.result) {
    const t = document.createElement("table");
    t.innerHTML = "<tr><th>player</th><th>points</th><th></th></tr>";
    v.result.points.forEach((p, s) => {
      const tr = document.createElement("tr");
      if (v.result.winners[s]) tr.className = "winner";
      for (const x of [playerName(v, s), String(p), v.result.winners[s] ? "wins" : ""]) {
        const td = document.createElement("td");
        td.textContent = x;
        tr.appendChild(td);
      }
      t.appendChild(tr);
    });
    res.appendChild(t);
  }
  $("result-box").hidden = !v.result;
  const link = $("replay-link");
  link.hidden = !v.over;
  link.href = "/api/games/" + v.id + "/replay";
  document.body.dataset.turn = v.turn;
  setState(v.over ? "over" : (v.your_turn ? "your-turn" : "waiting"));
}

function busy(on) {
  S.busy = on;
  for (const b of document.querySelectorAll("#moves button")) b.disabled = on;
  if (on) setState("busy");
}

async function play(action) {
  if (S.busy || !S.view) return;
  busy(true);
  $("error").textContent = "";
  try {
    render(await api("POST", "/api/games/" + S.view.id + "/move",
                     { action: action, turn: S.view.turn }));
  } catch (e) {
    $("error").textContent = e.message;
    if (e.status === 409 || e.status === 404) await load(S.view.id);
    else setState("error");
  } finally {
    S.busy = false;
  }
}

async function load(id) {
  try {
    render(await api("GET", "/api/games/" + id));
  } catch (e) {
    $("error").textContent = e.message;
    setState("error");
  }
}

function formSettings() {
  const seed = $("f-seed").value.trim();
  return {
    game: $("f-game").value, players: parseInt($("f-players").value, 10),
    vs: $("f-vs").value, seat: parseInt($("f-seat").value, 10),
    seed: seed === "" ? null : parseInt(seed, 10), theme: $("f-theme").value,
    options: S.cfg.defaults.game === $("f-game").value ? S.cfg.defaults.options : {},
  };
}

async function newGame() {
  busy(true);
  $("error").textContent = "";
  try {
    render(await api("POST", "/api/games", formSettings()));
  } catch (e) {
    $("error").textContent = e.message;
    setState("error");
  } finally {
    S.busy = false;
  }
}

async function start() {
  setState("loading");
  S.cfg = await api("GET", "/api/config");
  const d = S.cfg.defaults, sel = $("f-game");
  for (const g of S.cfg.games) {
    const o = document.createElement("option");
    o.value = g.env_id;
    o.textContent = g.name + " (" + g.min_players + "-" + g.max_players + " players)";
    sel.appendChild(o);
  }
  sel.value = d.game;
  $("f-players").value = d.players;
  $("f-vs").value = Array.isArray(d.vs) ? d.vs.join(",") : d.vs;
  $("f-seat").value = d.seat;
  $("f-seed").value = d.seed === null ? "" : d.seed;
  $("f-theme").value = d.theme;
  const caps = ["ms", "iterations"].filter((k) => k in S.cfg.limits)
    .map((k) => k + " \u2264 " + S.cfg.limits[k]).join(", ");
  $("vs-help").textContent = "e.g. random, heuristic, mcts:ms=200" +
    (S.cfg.models.length ? "; models: " + S.cfg.models.join(", ") : "") +
    (caps ? " (" + caps + ")" : "");
  $("new-game").addEventListener("click", (ev) => { ev.preventDefault(); newGame(); });
  const m = /g=([A-Za-z0-9_-]+)/.exec(location.hash);
  if (m) {
    try { render(await api("GET", "/api/games/" + m[1])); return; } catch (e) { /* new game */ }
  }
  await newGame();
}
start();
"""

_HTML = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>card-envs: play</title>
<style>%(css)s</style></head>
<body data-state="loading" data-turn="-1">
<header><h1>card-envs</h1><span id="title"></span><span id="status">loading...</span></header>
<main>
<section id="board"><div id="picture"></div></section>
<aside>
<section><h2>Your moves</h2><div id="moves"></div><div id="error" role="alert"></div></section>
<section id="result-box" hidden><h2>Result</h2><div id="result"></div>
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


#: the page's one inline script (the server's Content-Security-Policy allows it by hash)
PAGE_SCRIPT = _JS


def play_page(theme_name: str = "light") -> str:
    """The play page's HTML in the colours of ``theme_name``."""
    t = theme(theme_name)
    css = _CSS % {k: getattr(t, k) for k in
                  ("background", "text", "muted", "panel", "highlight", "card_edge")}
    return _HTML % {"css": css, "js": _JS}
