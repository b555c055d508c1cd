"""A replay as one self-contained HTML page: ``write_html(replay, "game.html")``.

The page embeds the SVG picture of every step (inline CSS and JS, no external URL, no
``<script src>``, no ``<link href>``: it opens from a file with no network) and steps through
the game: first / previous / next / last buttons, the arrow keys (Home / End too), a slider,
the move list (``action_to_str`` of each move; click one to jump there), a view selector (all
cards, or what one seat saw) and, at the end, the points and how the game was won (the game's
``result_text`` for the view shown). Below 820 px wide the sidebar goes under the picture.

The page's Content-Security-Policy (a ``<meta>`` tag, :mod:`card_envs.ui.csp`) lets only its
own script run and loads nothing from the network.

Size: identical pictures are stored once, each picture as a list of indices into a table of
its distinct SVG elements (consecutive pictures share most of theirs), and the data is
gzipped and base64-encoded into the page, unpacked by the browser's ``DecompressionStream``.
Every seat's view is embedded for games of up to ``seat_views_up_to`` steps (300); longer
games (Op Glad IJs' long runs) get the omniscient picture only, which the page says.
"""

from __future__ import annotations

import base64
import gzip
import json
import re
import time
from pathlib import Path
from typing import Any

from card_envs.core.files import write_text_atomic
from card_envs.core.pictures import theme as get_theme
from card_envs.ui.board import result_sentence
from card_envs.ui.csp import meta_tag
from card_envs.ui.pictures import picture_svg
from card_envs.ui.record import play_back_envs, result_of

__all__ = ["SEAT_VIEWS_UP_TO", "build_data", "pack_svgs", "render_html", "write_html"]

SEAT_VIEWS_UP_TO = 300
_ELEMENT_END = re.compile(r"(?<=>)")


def pack_svgs(svgs: list[str]) -> tuple[list[str], list[list[int]]]:
    """``(pieces, parts)``: every SVG cut after each ``>`` into pieces, each distinct piece
    stored once; ``"".join(pieces[i] for i in parts[k]) == svgs[k]``."""
    pieces: list[str] = []
    where: dict[str, int] = {}
    parts = []
    for svg in svgs:
        ids = []
        for piece in _ELEMENT_END.split(svg):
            if piece:
                if piece not in where:
                    where[piece] = len(pieces)
                    pieces.append(piece)
                ids.append(where[piece])
        parts.append(ids)
    return pieces, parts


def build_data(replay: dict[str, Any], theme: str = "light",
               seat_views_up_to: int = SEAT_VIEWS_UP_TO) -> dict[str, Any]:
    """The page's data: ``svgs`` (unique pictures), ``frames`` (per view, the picture index
    of every step), ``moves``, ``status`` per step, ``views``, ``result``, ``result_text``
    (per view: how the game is won, at the last step), ``note``."""
    steps = len(replay.get("actions", []))
    svgs: list[str] = []
    index: dict[str, int] = {}
    frames: dict[str, list[int]] = {}
    moves: list[dict[str, Any]] = []
    status: list[str] = []
    env = None
    views: list[tuple[str, int | None]] = []
    for env, seat in play_back_envs(replay):
        if not views:
            n = env.game.num_players
            views = [("all", None)]
            if steps <= seat_views_up_to:
                views += [(str(s), s) for s in range(n)]
            frames = {key: [] for key, _ in views}
        if seat is not None:
            moves.append({"n": len(moves) + 1, "seat": seat,
                          "label": env.action_to_str(replay["actions"][len(moves)])})
        for key, observer in views:
            svg = picture_svg(env, observer, theme)
            if svg not in index:
                index[svg] = len(svgs)
                svgs.append(svg)
            frames[key].append(index[svg])
        sd = env.state_dict()
        cur = sd["current_player"]
        status.append(f"{sd['phase']}: " + ("game over" if cur is None else
                                           f"player_{cur} to move"))
    assert env is not None
    n = env.game.num_players
    labels = replay.get("players") or [""] * n
    names = [f"player_{s}" + (f" ({labels[s]})" if s < len(labels) and labels[s] else "")
             for s in range(n)]
    view_list = [{"key": "all", "label": "all cards"}] + \
        [{"key": k, "label": f"{names[s]}'s view"} for k, s in views if s is not None]
    note = "" if len(views) > 1 else (
        f"This game has {steps} steps: only the picture with all cards is embedded (seat "
        f"views up to {seat_views_up_to} steps).")
    return {"env_id": env.game.env_id, "game": env.game.name, "names": names,
            "seed": replay.get("seed"), "svgs": svgs, "frames": frames, "moves": moves,
            "status": status, "views": view_list, "result": result_of(env), "note": note,
            "result_text": {key: result_sentence(env, env.state_dict(observer=observer))
                            for key, observer in views},
            "theme": theme}


def render_html(data: dict[str, Any]) -> str:
    """The HTML page of :func:`build_data`'s ``data`` (its pictures packed by
    :func:`pack_svgs`)."""
    pieces, parts = pack_svgs(data["svgs"])
    page = {**{k: v for k, v in data.items() if k != "svgs"}, "pieces": pieces,
            "svg_parts": parts}
    packed = base64.b64encode(gzip.compress(
        json.dumps(page, separators=(",", ":")).encode("utf-8"), 9, mtime=0)).decode("ascii")
    t = get_theme(data["theme"])
    css = _CSS % {k: getattr(t, k) for k in ("background", "text", "muted", "panel",
                                              "highlight", "card_edge")}
    title = f"{data['game']} replay" + (f" (seed {data['seed']})"
                                        if data.get("seed") is not None else "")
    return _HTML % {"title": title, "css": css, "js": _JS, "data": packed,
                    "csp": meta_tag(_JS)}


def write_html(replay: dict[str, Any], path: str | Path, theme: str = "light",
               seat_views_up_to: int = SEAT_VIEWS_UP_TO) -> dict[str, Any]:
    """Write the replay page to ``path``; returns ``{steps, views, pictures, bytes,
    seconds}`` (a bad replay raises ``StateDictError`` / ``IllegalActionError`` and writes
    nothing; the page is written to a temporary file that replaces ``path`` once complete,
    so a failure never leaves half a page)."""
    t = time.perf_counter()
    data = build_data(replay, theme, seat_views_up_to)
    html = render_html(data)
    write_text_atomic(path, html)
    return {"steps": len(data["moves"]), "views": [v["key"] for v in data["views"]],
            "pictures": len(data["svgs"]), "bytes": len(html.encode("utf-8")),
            "seconds": time.perf_counter() - t}


_CSS = """
:root { --bg: %(background)s; --fg: %(text)s; --muted: %(muted)s; --panel: %(panel)s;
  --accent: %(highlight)s; --edge: %(card_edge)s; }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg);
  font: 15px/1.4 system-ui, "DejaVu Sans", Verdana, sans-serif; }
header { display: flex; flex-wrap: wrap; gap: .6em; align-items: center; padding: .5em 1em;
  background: var(--panel); border-bottom: 1px solid var(--edge); }
header h1 { font-size: 1.1em; margin: 0 1em 0 0; }
button, select { font: inherit; padding: .2em .6em; border-radius: 4px;
  border: 1px solid var(--edge); background: var(--bg); color: var(--fg); cursor: pointer; }
#slider { flex: 1 1 12em; }
header label { min-width: 0; max-width: 100%%; }
#view { max-width: 16em; text-overflow: ellipsis; }
#where { font-variant-numeric: tabular-nums; min-width: 14em; }
main { display: grid; grid-template-columns: minmax(0, 1fr) 21em; gap: 1em; padding: 1em;
  align-items: start; }
#picture svg { width: 100%%; height: auto; display: block; margin: 0 auto;
  max-width: calc((100vh - 5em) * var(--aspect, 10)); }
aside > section { background: var(--panel); border-radius: 6px; padding: .6em .8em;
  margin-bottom: .8em; min-width: 0; }
aside h2 { font-size: 1em; margin: 0 0 .4em 0; }
#moves { max-height: 60vh; overflow-y: auto; margin: 0; padding-left: 3em; font-size: .92em; }
#moves li { cursor: pointer; padding: 0 .3em; border-radius: 3px; overflow-wrap: anywhere; }
#moves li:hover { outline: 1px solid var(--edge); }
#moves li.current { background: var(--accent); color: #000; }
#result table { border-collapse: collapse; table-layout: fixed; width: 100%%; }
#result td, #result th { padding: .1em .4em; text-align: left; overflow-wrap: anywhere; }
#result th:nth-child(2) { width: 4.5em; }
#result th:nth-child(3) { width: 3.5em; }
#result tr.winner { color: var(--accent); font-weight: bold; }
#result-text { margin: 0 0 .4em 0; }
.muted { color: var(--muted); }
@media (max-width: 820px) {
  main { grid-template-columns: minmax(0, 1fr); padding: .5em; gap: .6em; }
  #picture svg { max-width: 100%%; }
  header { padding: .4em .6em; }
  #where { min-width: 0; }
  #moves { max-height: 40vh; }
}
"""

_JS = r"""
const $ = (id) => document.getElementById(id);
let D = null, step = 0, view = "all";

async function unpack(b64) {
  const bin = atob(b64.trim());
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return JSON.parse(await new Response(stream).text());
}

function show(k) {
  const last = D.status.length - 1;
  step = Math.max(0, Math.min(last, k));
  $("picture").innerHTML = D.svgs[D.frames[view][step]];
  const svg = $("picture").querySelector("svg"), vb = svg && svg.viewBox.baseVal;
  if (vb && vb.width > 0 && vb.height > 0) svg.style.setProperty("--aspect", vb.width / vb.height);
  $("slider").value = step;
  $("where").textContent = "step " + step + " / " + last + " - " + D.status[step];
  for (const li of document.querySelectorAll("#moves li.current")) li.classList.remove("current");
  if (step > 0) {
    const li = $("move-" + step);
    li.classList.add("current");
    li.scrollIntoView({ block: "nearest" });
  }
  $("result-box").hidden = !(D.result && step === last);
  $("result-text").textContent = (D.result_text || {})[view] || "";
  document.body.dataset.step = step;
}

function buildResult() {
  if (!D.result) return;
  const t = document.createElement("table");
  t.innerHTML = "<tr><th>player</th><th>points</th><th></th></tr>";
  D.result.points.forEach((p, s) => {
    const tr = document.createElement("tr");
    if (D.result.winners[s]) tr.className = "winner";
    for (const x of [D.names[s], String(p), D.result.winners[s] ? "wins" : ""]) {
      const td = document.createElement("td");
      td.textContent = x;
      tr.appendChild(td);
    }
    t.appendChild(tr);
  });
  $("result").appendChild(t);
}

async function start() {
  D = await unpack($("data").textContent);
  D.svgs = D.svg_parts.map((ids) => ids.map((i) => D.pieces[i]).join(""));
  $("title").textContent = document.title;
  const sel = $("view");
  for (const v of D.views) {
    const o = document.createElement("option");
    o.value = v.key;
    o.textContent = v.label;
    sel.appendChild(o);
  }
  sel.addEventListener("change", () => { view = sel.value; show(step); });
  const ol = $("moves");
  for (const m of D.moves) {
    const li = document.createElement("li");
    li.id = "move-" + m.n;
    li.value = m.n;
    li.textContent = D.names[m.seat] + ": " + m.label;
    li.addEventListener("click", () => show(m.n));
    ol.appendChild(li);
  }
  $("note").textContent = D.note;
  const slider = $("slider");
  slider.max = D.status.length - 1;
  slider.addEventListener("input", () => show(parseInt(slider.value, 10)));
  $("first").addEventListener("click", () => show(0));
  $("prev").addEventListener("click", () => show(step - 1));
  $("next").addEventListener("click", () => show(step + 1));
  $("last").addEventListener("click", () => show(D.status.length - 1));
  document.addEventListener("keydown", (e) => {
    if (e.target.tagName === "SELECT") return;
    const go = { ArrowLeft: step - 1, ArrowRight: step + 1, Home: 0,
                 End: D.status.length - 1 }[e.key];
    if (go !== undefined) { e.preventDefault(); show(go); }
  });
  buildResult();
  show(0);
  document.body.dataset.state = "ready";
}
start().catch((e) => { $("where").textContent = "cannot open this replay: " + e;
                       document.body.dataset.state = "error"; });
"""

_HTML = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
%(csp)s
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>%(title)s</title>
<style>%(css)s</style></head>
<body data-state="loading" data-step="-1">
<header><h1 id="title"></h1>
<button id="first" title="first (Home)">&#x21E4;</button>
<button id="prev" title="previous (Left arrow)">&#x25C0;</button>
<button id="next" title="next (Right arrow)">&#x25B6;</button>
<button id="last" title="last (End)">&#x21E5;</button>
<input id="slider" type="range" min="0" max="0" value="0">
<span id="where">loading...</span>
<label>view <select id="view"></select></label></header>
<main><section id="board"><div id="picture"></div><p id="note" class="muted"></p></section>
<aside><section id="result-box" hidden><h2>Result</h2><p id="result-text"></p>
<div id="result"></div></section>
<section><h2>Moves</h2><ol id="moves"></ol></section></aside></main>
<script type="application/octet-stream" id="data">%(data)s</script>
<script>%(js)s</script>
</body></html>
"""
