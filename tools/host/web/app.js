// arena hosted-match client: one seat's view of a match served by `arena host`.
// Plain JavaScript, no build step. Events arrive over Server-Sent Events (/api/events); moves
// are POSTed to /api/act. The join token comes from the page address (#token=...) or the form.
// A game that ships a table renderer (/game.js, registered with arenaTable.register) is drawn from
// its structured view: every element the renderer marks with a data-ref ("hand:12", "seat:3",
// "chip:raise") becomes clickable for the legal moves that act on it. Otherwise the text is shown.
"use strict";

const $ = (id) => document.getElementById(id);
const ui = { seat: null, names: [], totals: [], turn: null, lastView: "", logged: 0, struct: null, deadline: null, source: null, token: null, done: false };

// -- the table: renderers and moves on what they act on -------------------------------------
const helpers = {
  el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  },
  ref(e, ref) { e.dataset.ref = ref; return e; },
  seatName(p) { return p === ui.seat ? "you" : `player ${p}` + (ui.names[p] ? ` (${ui.names[p]})` : ""); },
};
const arenaTable = { renderer: null, helpers, register(fn) { this.renderer = fn; } };
window.arenaTable = arenaTable;

function drawTable(struct, text) {
  $("view").textContent = text;
  ui.struct = struct;
  const box = $("table-view");
  if (!arenaTable.renderer || !struct) { box.hidden = true; $("textbox").open = true; return; }
  try {
    box.replaceChildren(arenaTable.renderer(struct, helpers));
    box.hidden = false;
    if (!ui.tableShown) { $("textbox").open = false; ui.tableShown = true; }  // then the reader's choice
  } catch (e) {
    box.hidden = true;
    $("textbox").open = true;
    logLine("The table could not be drawn (" + e + "); the text view is shown.", "warn");
  }
  markActions();
}

function movesByRef() {
  const byRef = new Map();
  const legal = (ui.turn && ui.turn.struct && ui.turn.struct.legal) || [];
  for (const m of legal) for (const r of m.on || []) {
    if (!byRef.has(r)) byRef.set(r, []);
    byRef.get(r).push(m);
  }
  return byRef;
}

function markActions() {
  hideChoices();
  const byRef = movesByRef();
  for (const e of $("table-view").querySelectorAll("[data-ref]")) {
    const moves = byRef.get(e.dataset.ref);
    e.classList.toggle("act", !!moves);
    if (moves) {
      e.tabIndex = 0;
      e.setAttribute("role", "button");
      e.setAttribute("aria-label", (e.textContent.trim() ? e.textContent.trim() + ": " : "") + moves.map((m) => m.label).join(" / "));
      e.onclick = () => choose(moves, e);
      e.onkeydown = (k) => { if (k.key === "Enter" || k.key === " ") { k.preventDefault(); choose(moves, e); } };
    } else {
      e.removeAttribute("tabindex");
      e.removeAttribute("role");
      e.onclick = e.onkeydown = null;
    }
  }
}

function choose(moves, from) {
  if (!ui.turn) return;
  if (moves.length === 1) { send({ turn: ui.turn.turn, action: moves[0].action }); return; }
  const box = $("choices");
  const list = $("choice-list");
  list.replaceChildren();
  $("choices-title").textContent = (from.dataset.title || from.textContent.trim() || "This") + ": choose a move";
  for (const m of moves) {
    const b = helpers.el("button", "", m.label);
    b.type = "button";
    b.dataset.action = String(m.action);
    b.addEventListener("click", () => { hideChoices(); send({ turn: ui.turn.turn, action: m.action }); });
    list.appendChild(b);
  }
  box.hidden = false;
  box.scrollIntoView({ block: "nearest" });
  list.firstChild.focus();
}

function hideChoices() { $("choices").hidden = true; $("choice-list").replaceChildren(); }

function logEvents(struct, text) {
  // The log is the game's own events when its structured view has them, else the new text lines.
  if (struct && Array.isArray(struct.log)) {  // the host sends only new entries, from log_start
    const start = struct.log_start || 0;
    struct.log.forEach((line, i) => { if (start + i >= ui.logged) logLine(line); });
    ui.logged = Math.max(ui.logged, start + struct.log.length);
  } else {
    for (const line of newLines(ui.lastView, text)) logLine(line);
  }
  ui.lastView = text;
}

function setStatus(text, cls) {
  const s = $("status");
  s.textContent = text;
  s.className = cls || "";
}

function logLine(text, cls) {
  const li = document.createElement("li");
  li.textContent = text;
  if (cls) li.className = cls;
  $("lines").appendChild(li);
  li.scrollIntoView({ block: "nearest" });
}

function fmt(x) { return (x > 0 ? "+" : "") + (Math.round(x * 1000) / 1000); }

function renderSeats() {
  const ul = $("seats");
  ul.replaceChildren();
  ui.names.forEach((name, p) => {
    const li = document.createElement("li");
    const who = document.createElement("span");
    who.textContent = `player ${p}: ${name}` + (p === ui.seat ? " (you)" : "");
    const score = document.createElement("span");
    score.textContent = fmt(ui.totals[p] || 0);
    li.append(who, score);
    if (p === ui.seat) li.className = "you";
    ul.appendChild(li);
  });
}

function clearTurn() {
  ui.turn = null;
  ui.deadline = null;
  markActions();
  $("buttons").replaceChildren();
  $("say").disabled = true;
  $("say-button").disabled = true;
  $("clock").textContent = "";
}

function showTurn(ev) {
  ui.turn = ev;
  drawTable(ev.struct, ev.text);
  $("result").hidden = true;
  const box = $("buttons");
  box.replaceChildren();
  if (ev.decision === "text") {
    $("prompt").textContent = `Your turn: say something (at most ${ev.max_text_length} characters).`;
    const say = $("say");
    say.disabled = false;
    say.maxLength = ev.max_text_length;
    $("say-button").disabled = false;
    updateCount();
    say.focus();
  } else {
    $("prompt").textContent = "Your turn: choose a move.";
    for (const a of ev.actions) {
      const b = document.createElement("button");
      b.type = "button";
      b.textContent = a.label;
      b.dataset.action = String(a.action);
      b.addEventListener("click", () => send({ turn: ev.turn, action: a.action }));
      box.appendChild(b);
    }
  }
  ui.deadline = ev.time_limit ? Date.now() + ev.time_limit * 1000 : null;
  setStatus("Your turn", "turn");
}

function updateCount() {
  const say = $("say");
  $("count").textContent = say.disabled ? "" : `${say.value.length}/${say.maxLength}`;
}

async function send(move) {
  if (!ui.turn) return;
  for (const b of $("buttons").querySelectorAll("button")) b.disabled = true;
  for (const e of $("table-view").querySelectorAll(".act")) e.classList.add("sent");
  $("say-button").disabled = true;
  try {
    const r = await fetch("/api/act", {
      method: "POST",
      headers: { "Content-Type": "application/json", "Authorization": "Bearer " + ui.token },
      body: JSON.stringify(move),
    });
    if (!r.ok) {
      const body = await r.json().catch(() => ({ error: r.statusText }));
      logLine("The host refused that move: " + body.error, "warn");
      setStatus("Move refused", "error");
      if (ui.turn) showTurn(ui.turn);
    }
  } catch (e) {
    logLine("Could not reach the host: " + e, "warn");
    if (ui.turn) showTurn(ui.turn);
  }
}

function newLines(before, after) {
  const seen = new Set(before.split("\n"));
  return after.split("\n").filter((l) => l.trim() && !seen.has(l));
}

const handlers = {
  hello(ev) {
    ui.seat = ev.seat; ui.names = ev.seats; ui.totals = ev.seats.map(() => 0); ui.lastView = ""; ui.logged = 0;
    $("lines").replaceChildren();
    $("view").textContent = "";
    $("table-view").replaceChildren();
    $("result").hidden = true;
    clearTurn();
    $("speech").hidden = !ev.text_decisions;
    $("game").textContent = `${ev.game} — you are player ${ev.seat}` + (ev.games > 1 ? ` — ${ev.games} games` : "");
    document.title = `arena — ${ev.game} (player ${ev.seat})`;
    renderSeats();
    setStatus("Connected");
  },
  game_start(ev) {
    ui.lastView = "";
    ui.logged = 0;
    $("result").hidden = true;
    logLine(`Game ${ev.index + 1} begins.`);
    $("prompt").textContent = "Waiting for other players.";
  },
  view(ev) {
    logEvents(ev.struct, ev.text);
    drawTable(ev.struct, ev.text);
    if (!ui.turn) setStatus("Waiting for other players");
  },
  turn(ev) { showTurn(ev); },
  moved(ev) {
    clearTurn();
    $("say").value = "";
    updateCount();
    $("prompt").textContent = "Waiting for other players.";
    logLine(ev.by === "clock" ? `Time ran out: "${ev.label}" was played for you.` : `You: ${ev.label}`,
            ev.by === "clock" ? "warn" : "mine");
    setStatus("Waiting for other players");
  },
  game_over(ev) {
    clearTurn();
    ev.returns.forEach((x, p) => { ui.totals[p] = (ui.totals[p] || 0) + x; });
    renderSeats();
    logEvents(ev.struct, ev.text);
    drawTable(ev.struct, ev.text);
    const out = $("outcome");
    out.textContent = `You ${ev.outcome} (${fmt(ev.you)}).` + (ev.forfeit ? ` Forfeit: ${ev.forfeit}` : "");
    out.className = ev.outcome;
    $("result").hidden = false;
    $("prompt").textContent = "Game over.";
    logLine(`Game ${ev.index + 1} over: you ${ev.outcome} (${fmt(ev.you)}); returns ${ev.returns.map(fmt).join(", ")}.`, "mine");
    setStatus(`Game over: you ${ev.outcome}`);
  },
  series_over(ev) {
    ui.done = true;
    if (ui.source) ui.source.close();
    $("prompt").textContent = "The match is over.";
    logLine(`Match over after ${ev.games} game(s): your total ${fmt(ev.total)}.`, "mine");
    setStatus(`Match over: your total ${fmt(ev.total)}`);
  },
};

async function probe() {
  // EventSource hides HTTP errors: ask the host why the stream was refused.
  try {
    const r = await fetch("/api/whoami", { headers: { "Authorization": "Bearer " + ui.token } });
    const body = await r.json();
    if (r.status === 403) { setStatus("Refused: " + body.error, "error"); showJoin(); return; }
    if (body.connected) setStatus("This seat is already open in another window; retrying…", "error");
  } catch (e) {
    setStatus("Host unreachable; retrying…", "error");
  }
  setTimeout(connect, 2000);
}

function connect() {
  if (ui.done) return;
  const es = new EventSource("/api/events?token=" + encodeURIComponent(ui.token));
  ui.source = es;
  es.onmessage = (e) => {
    const ev = JSON.parse(e.data);
    const h = handlers[ev.type];
    if (h) h(ev);
  };
  es.onerror = () => {
    if (ui.done) { es.close(); return; }
    if (es.readyState === EventSource.CLOSED) probe();
    else setStatus("Connection lost; reconnecting…", "error");
  };
}

function showJoin() {
  $("join").hidden = false;
  $("board").hidden = true;
}

function start(token) {
  ui.token = token;
  $("join").hidden = true;
  $("board").hidden = false;
  connect();
}

setInterval(() => {
  if (ui.deadline) {
    const left = Math.max(0, Math.ceil((ui.deadline - Date.now()) / 1000));
    $("clock").textContent = `Time left for this move: ${left}s`;
  }
}, 250);

document.addEventListener("DOMContentLoaded", () => {
  $("say").addEventListener("input", updateCount);
  $("choices-cancel").addEventListener("click", hideChoices);
  document.addEventListener("keydown", (k) => { if (k.key === "Escape") hideChoices(); });
  $("speech").addEventListener("submit", (e) => {
    e.preventDefault();
    if (ui.turn && ui.turn.decision === "text") send({ turn: ui.turn.turn, text: $("say").value });
  });
  $("join").addEventListener("submit", (e) => {
    e.preventDefault();
    const t = $("token-input").value.trim();
    if (t) { history.replaceState(null, "", "#token=" + encodeURIComponent(t)); start(t); }
  });
  const token = new URLSearchParams(location.hash.slice(1)).get("token");
  if (token) start(token); else showJoin();
});
