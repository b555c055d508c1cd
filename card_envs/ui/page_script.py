"""The play page's one inline script (vanilla JS; the server's Content-Security-Policy allows it
by its hash, :mod:`card_envs.ui.csp`).

What it does, besides talking to the JSON API (:mod:`card_envs.ui.server`):

* it draws transparent hit rectangles over the picture, one per box a legal move's click
  ``path`` starts with (``<rect class="hit" data-step="0" data-actions="3 7"
  data-action="3">``; ``data-action`` only when one move goes through the box). A click (or
  Enter / Space on a focused box) plays a one-box move; a box that starts two-box moves
  selects it and shows their second boxes (``data-step="1"``); a click elsewhere or Escape
  cancels the selection;
* it marks the other seats' last public moves (``<rect class="last" data-seat=...>``) and says
  them in ``#last-move`` (an ``aria-live`` line);
* the move list is the keyboard fallback: buttons named by the moves' labels (long lists
  grouped by their common start), and hovering or focusing one marks its boxes on the picture.

``document.body.dataset.state`` is ``loading | busy | your-turn | waiting | over | error`` and
``dataset.turn`` the move counter (the browser tests wait on them); ``dataset.selected`` is
the key of the selected box, or absent.
"""

from __future__ import annotations

__all__ = ["PAGE_SCRIPT"]

PAGE_SCRIPT = r"""
const $ = (id) => document.getElementById(id);
const GROUP_AT = 20;  // longer move lists are grouped by the start of their labels
const S = { view: null, busy: false, cfg: null, sel: null, ns: null };  // ns: the SVG's

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

function boxKey(b) { return b.map(Number).join(","); }

// the words all of labels start with ("move penguin 0" of "move penguin 0 NE 1", ...)
function commonStart(labels) {
  let p = labels[0];
  for (const l of labels) while (!l.startsWith(p)) p = p.slice(0, -1);
  if (labels.every((l) => l.length === p.length || /[\s/]/.test(l[p.length]))) return p.trim();
  return p.replace(/[^\s/]*$/, "").replace(/[\s/]+$/, "");
}

function svgRect(box, cls) {
  const r = document.createElementNS(S.ns, "rect");
  const [x, y, w, h] = box.map(Number);
  r.setAttribute("x", x);
  r.setAttribute("y", y);
  r.setAttribute("width", w);
  r.setAttribute("height", h);
  r.setAttribute("class", cls);
  return r;
}

// an overlay group of the picture (marks < hints < hits), emptied
function layer(name) {
  const g = $("picture").querySelector("svg > g.ui-" + name);
  if (g) g.replaceChildren();
  return g;
}

function showPicture(v) {
  $("picture").innerHTML = v.svg;
  const svg = $("picture").querySelector("svg");
  if (!svg) return;
  S.ns = svg.namespaceURI;
  const vb = svg.viewBox.baseVal;
  if (vb && vb.width > 0 && vb.height > 0) svg.style.setProperty("--aspect", vb.width / vb.height);
  svg.setAttribute("role", "img");
  for (const name of ["marks", "hints", "hits"]) {
    const g = document.createElementNS(S.ns, "g");
    g.setAttribute("class", "ui-" + name);
    svg.appendChild(g);
  }
  const marks = layer("marks");
  for (const m of v.last) {
    for (const b of m.boxes || []) {
      const r = svgRect(b, "last");
      r.dataset.seat = m.seat;
      r.dataset.n = m.n;
      marks.appendChild(r);
    }
  }
}

// the boxes the next click may hit: [{key, box, moves}]
function targets() {
  const step = S.sel === null ? 0 : 1, out = new Map();
  for (const m of S.view.legal) {
    if (m.path.length <= step || (step === 1 && boxKey(m.path[0]) !== S.sel)) continue;
    const k = boxKey(m.path[step]);
    if (!out.has(k)) out.set(k, { key: k, box: m.path[step], moves: [] });
    out.get(k).moves.push(m);
  }
  return [...out.values()];
}

function drawHits() {
  const g = layer("hits");
  if (!g || !S.view || !S.view.your_turn) return;
  const step = S.sel === null ? 0 : 1;
  if (step === 1) g.appendChild(svgRect(S.sel.split(",").map(Number), "selected"));
  for (const t of targets()) {
    const r = svgRect(t.box, "hit");
    const done = t.moves.length === 1 && t.moves[0].path.length === step + 1;
    const name = done ? t.moves[0].label
      : "select " + commonStart(t.moves.map((m) => m.label)) + ", then where";
    r.dataset.step = step;
    r.dataset.actions = t.moves.map((m) => m.action).join(" ");
    if (t.moves.length === 1) r.dataset.action = t.moves[0].action;
    r.setAttribute("tabindex", "0");
    r.setAttribute("role", "button");
    r.setAttribute("aria-label", name);
    const tip = document.createElementNS(S.ns, "title");
    tip.textContent = name;
    r.appendChild(tip);
    r.addEventListener("click", (e) => { e.stopPropagation(); choose(step, t, false); });
    r.addEventListener("keydown", (e) => {
      if (e.key !== "Enter" && e.key !== " ") return;
      e.preventDefault();
      e.stopPropagation();
      choose(step, t, true);
    });
    g.appendChild(r);
  }
}

function choose(step, t, byKey) {
  if (S.busy || !S.view || !S.view.your_turn) return;
  const m = t.moves[0];
  if (t.moves.length === 1 && m.path.length === step + 1) { play(m.action); return; }
  if (step !== 0) return;  // a path names one move: cannot happen
  S.sel = t.key;
  document.body.dataset.selected = t.key;
  $("status").textContent = "Your move: " + commonStart(t.moves.map((x) => x.label)) +
    " - now click where (Esc cancels)";
  drawHits();
  if (byKey) {
    const first = $("picture").querySelector("g.ui-hits .hit");
    if (first) first.focus();
  }
}

function cancel() {
  if (S.sel === null) return;
  S.sel = null;
  delete document.body.dataset.selected;
  if (S.view) $("status").textContent = statusText(S.view);
  drawHits();
}

function hint(m) {
  const g = layer("hints");
  if (g && m) for (const b of m.path) g.appendChild(svgRect(b, "hint"));
}

function moveButton(m, text) {
  const b = document.createElement("button");
  b.className = "move";
  b.dataset.action = m.action;
  b.textContent = text;
  b.title = m.label;
  if (text !== m.label) b.setAttribute("aria-label", m.label);
  b.addEventListener("click", () => { cancel(); play(m.action); });
  b.addEventListener("mouseenter", () => hint(m));
  b.addEventListener("focus", () => hint(m));
  b.addEventListener("mouseleave", () => hint(null));
  b.addEventListener("blur", () => hint(null));
  return b;
}

function groupKey(label) {
  const slash = label.indexOf("/");
  if (slash > 0) return label.slice(0, slash);
  const w = label.split(" ");
  return w.length >= 4 ? w.slice(0, -2).join(" ") : w.slice(0, -1).join(" ");
}

function showMoves(v) {
  const moves = $("moves");
  moves.replaceChildren();
  moves.scrollTop = 0;
  moves.classList.toggle("grouped", v.legal.length > GROUP_AT);
  if (v.legal.length > GROUP_AT) {
    const runs = [];  // consecutive moves of one group key, in the server's order
    for (const m of v.legal) {
      const k = groupKey(m.label);
      if (runs.length && runs[runs.length - 1].key === k) runs[runs.length - 1].moves.push(m);
      else runs.push({ key: k, moves: [m] });
    }
    for (const run of runs) {
      const row = document.createElement("div");
      row.className = "group";
      row.setAttribute("role", "group");
      if (run.key && run.moves.length > 1) {
        row.setAttribute("aria-label", run.key);
        const name = document.createElement("span");
        name.className = "gname";
        name.textContent = run.key;
        row.appendChild(name);
        for (const m of run.moves) {
          row.appendChild(moveButton(m, m.label.slice(run.key.length).replace(/^[\s/]+/, "")));
        }
      } else {
        for (const m of run.moves) row.appendChild(moveButton(m, m.label));
      }
      moves.appendChild(row);
    }
  } else {
    for (const m of v.legal) moves.appendChild(moveButton(m, m.label));
  }
  if (!v.legal.length) {
    const p = document.createElement("span");
    p.className = "muted";
    p.textContent = v.over ? "The game is over." : "Waiting for the other players.";
    moves.appendChild(p);
  }
  $("board-help").hidden = !v.legal.some((m) => m.path.length);
}

function showLog(v) {
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
  $("last-move").textContent = v.last.map((e) => playerName(v, e.seat) +
    (e.label === null ? " made a hidden choice" : " played: " + e.label)).join("; ");
}

function showResult(v) {
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
  $("result-text").textContent = v.over ? v.result_text : "";
  $("rule").textContent = v.over ? "" : v.result_text;
  $("result-box").hidden = !v.result;
  const link = $("replay-link");
  link.hidden = !v.over;
  link.href = "/api/games/" + v.id + "/replay";
}

function statusText(v) {
  if (v.over) return "Game over";
  return v.your_turn ? "Your move (" + v.phase + ")" : "player_" + v.to_act + " to move";
}

// the new-game form shows the settings of the game on screen (a reload, a new game)
function syncForm(v) {
  if ([...$("f-game").options].some((o) => o.value === v.env_id)) $("f-game").value = v.env_id;
  $("f-players").value = v.players.length;
  $("f-seat").value = v.seat;
  $("f-theme").value = v.theme;
}

function render(v) {
  if (!S.view || S.view.id !== v.id) syncForm(v);
  S.view = v;
  S.sel = null;
  delete document.body.dataset.selected;
  location.hash = "g=" + v.id;
  $("title").textContent = v.game + " - you are player_" + v.seat;
  $("status").textContent = statusText(v);
  showPicture(v);
  showMoves(v);
  showLog(v);
  showResult(v);
  drawHits();
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
  document.addEventListener("click", (e) => {
    if (S.sel !== null && !(e.target.closest && e.target.closest(".hit"))) cancel();
  });
  document.addEventListener("keydown", (e) => { if (e.key === "Escape") cancel(); });
  const m = /g=([A-Za-z0-9_-]+)/.exec(location.hash);
  if (m) {
    try { render(await api("GET", "/api/games/" + m[1])); return; } catch (e) { /* new game */ }
  }
  await newGame();
}
start();
"""
