// The public hall: find my table, pairings, standings, live tables; ?screen for a hall screen.
// Plain JavaScript, no build step. It reads relative files (hall.json, players.json, ...), so the same
// page works from the console's public listener and from the published folder on any web host.
// Every setting it follows (how often to ask, how long a division stays on the hall screen, how many
// rows a screen page has, the delay) comes from hall.json: none is defined here (docs/public.md).
// hall.json is asked for again with a conditional request (the browser sends If-None-Match: an
// unchanged file is a 304 with no body); it names the other files' versions, and a file is asked
// for only when its version is new, and drawn again only then.
import { clockText } from "./clocktext.js";
import { LABEL, remainingAt, stateWords, ticks, tileClass, turnSide } from "./tilestate.js";

const $ = (id) => document.getElementById(id);
const data = {}; // file name -> its JSON, as last fetched
export const etags = {}; // file name -> the ETag it came with
let hall = null; // hall.json
const screenMode = new URLSearchParams(location.search).has("screen");
let screenStep = 0;
let screenStarted = false;
let screenDrawn = false;

// --- fetching ---------------------------------------------------------------------------------

async function fetchFile(name, version) {
  const r = await fetch(name, { cache: "no-cache" }); // revalidated every time: a 304 when unchanged
  if (!r.ok) throw new Error(`${name}: ${r.status}`);
  const tag = version || r.headers.get("ETag") || r.headers.get("Last-Modified") || "";
  if (tag && etags[name] === tag && name in data) return false;
  data[name] = await r.json();
  etags[name] = tag;
  return true;
}

// hall.json names every other file's version (its ETag): only a file whose version is new is asked for.
async function poll() {
  try {
    const changed = new Set();
    if (await fetchFile("hall.json")) changed.add("hall.json");
    hall = data["hall.json"];
    for (const name of hall.page.files) {
      const version = (hall.versions || {})[name];
      if (name !== "hall.json" && (!version || version !== etags[name]) && (await fetchFile(name, version))) changed.add(name);
    }
    if (hall.back_at) { // a console just started with a delay: nothing of the hall until then
      if (changed.size) draw(changed);
      $("status").textContent = `shown ${Math.round(hall.delay_s / 60)} min behind: back at ${new Date(hall.back_at).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" })}`;
      setTimeout(poll, hall.page.poll_s * 1000);
      return;
    }
    if (changed.size) draw(changed);
    if (screenMode && !screenStarted) { screenStarted = true; setTimeout(nextScreen, hall.page.cycle_s * 1000); }
    $("status").textContent = `updated ${new Date().toLocaleTimeString()}` +
      (hall.delay_s ? ` · shown ${Math.round(hall.delay_s / 60)} min behind` : "");
  } catch (e) {
    $("status").textContent = `could not update (${e.message}): trying again`;
  }
  setTimeout(poll, ((hall && hall.page.poll_s) || 1) * 1000);
}

// --- helpers ------------------------------------------------------------------------------------

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = String(text);
  return e;
}
function setText(e, text) { if (e.textContent !== text) e.textContent = text; } // an unchanged text is not laid out again
function spread(s) { return s > 0 ? `+${s}` : String(s); }
function where(g) {
  if (!g) return "not paired yet";
  if (g.bye) return "a bye";
  return `table ${g.table}${g.label && g.label !== String(g.table) ? ` (${g.label})` : ""}`;
}
// clockText(ms): clocktext.js, the director's pages' own (imported, written beside this file)
// The time the view is of: now, less the delay the hall is shown with.
export function viewNow() { return Date.now() - ((hall && hall.delay_s) || 0) * 1000; }

// --- find my table ------------------------------------------------------------------------------

function matches(p, q) {
  const m = /^([A-Za-z]*)\s*(\d+)$/.exec(q);
  if (m) return p.number === Number(m[2]) && (!m[1] || p.division.toLowerCase() === m[1].toLowerCase());
  return p.name.toLowerCase().includes(q.toLowerCase());
}

function drawFind() {
  const list = $("found");
  list.replaceChildren();
  const q = $("who").value.trim();
  const players = (data["players.json"] || {}).players || [];
  if (!q) return;
  try { localStorage.setItem("rackside-who", q); } catch (e) { /* private mode: not remembered */ }
  const found = players.filter((p) => matches(p, q)).slice(0, 20);
  if (!found.length) list.append(el("li", "muted", "nobody by that name or number"));
  for (const p of found) {
    const li = el("li", "card player");
    li.append(el("h3", "", `${p.name} (${p.division}${p.number})`));
    for (const [when, g] of [["now", p.now], ["next", p.next]]) {
      if (when === "next" && !g) continue;
      const line = el("div", "game");
      const round = g ? `Round ${g.round}` : `Round ${data["players.json"].round}`;
      line.append(el("div", "muted", round), el("div", "big table", where(g)));
      if (g && g.opponent) line.append(el("div", "", `against ${g.opponent.name} (${p.division}${g.opponent.number})` + (g.first ? ", you start" : "")));
      li.append(line);
    }
    list.append(li);
  }
}

// --- pairings, standings ------------------------------------------------------------------------

function pairingsTable(r, games) {
  const t = el("table", "pairings");
  const head = el("tr");
  for (const h of ["Table", "Players", "Result"]) head.append(el("th", h === "Players" ? "" : "n", h));
  t.append(head);
  for (const g of games) {
    const tr = el("tr");
    tr.append(el("td", "n", g.label && g.label !== String(g.table) ? `${g.table} (${g.label})` : g.table),
      el("td", "", g.players.map((p) => `${p.name} (${g.division}${p.number})`).join(" v ")),
      el("td", "n", g.result ? g.result.join("-") : ""));
    t.append(tr);
  }
  return t;
}

function drawPairings() {
  const box = $("pairings");
  box.replaceChildren();
  for (const r of (data["pairings.json"] || {}).rounds || []) {
    box.append(el("h2", "", `Round ${r.round}`), pairingsTable(r, r.games));
    for (const [div, numbers] of Object.entries(r.byes || {})) box.append(el("p", "muted", `Byes, division ${div}: ${numbers.join(", ")}`));
  }
}

function standingsTable(d, rows) {
  const t = el("table", "standings");
  const head = el("tr");
  for (const h of ["#", "Player", "W", "L", "Spread"]) head.append(el("th", h === "Player" ? "" : "n", h));
  t.append(head);
  for (const r of rows) {
    const tr = el("tr");
    tr.append(el("td", "n", r.rank), el("td", "", `${r.name} (${d.division}${r.number})`), el("td", "n", r.wins),
      el("td", "n", r.losses), el("td", "n", spread(r.spread)));
    t.append(tr);
  }
  return t;
}

function drawStandings() {
  const divs = (data["standings.json"] || {}).divisions || [];
  const pick = $("division");
  const chosen = pick.value;
  if (pick.options.length !== divs.length) {
    pick.replaceChildren(...divs.map((d) => { const o = el("option", "", d.division); o.value = d.division; return o; }));
  }
  if (chosen) pick.value = chosen;
  const d = divs.find((x) => x.division === pick.value) || divs[0];
  const box = $("standings-table");
  box.replaceChildren();
  if (!d) return;
  box.append(el("p", "muted", d.after_round ? `after round ${d.after_round}` : "before round 1"), standingsTable(d, d.rows));
}

// --- live tables: the times tick here, from remaining_ms and sent_at ------------------------------

// A live table as the director's tile models it (tilestate.js derives its class, times and words
// from this, on both pages): live.json's fields, checked. A state ticks at most stale_s past its
// sent_at (a clock sends its state every few seconds while it runs, so an older state is one that
// stopped coming, and its time is held: hall.json's page.stale_s); an offline clock's is frozen.
function sides(list) { return Array.isArray(list) ? list.filter((x) => x === 1 || x === 2) : []; }

export function modelOf(t, live) {
  const raw = t.state;
  let state = null;
  if (raw && typeof raw === "object") {
    const sent = Date.parse(raw.sent_at);
    const rules = raw.rules && Object.keys(raw.rules).length ? raw.rules : live.rules;
    state = {
      phase: String(raw.phase || ""), running: raw.running === 1 || raw.running === 2 ? raw.running : null,
      ending: typeof raw.ending === "string" ? raw.ending : null,
      players: (Array.isArray(raw.players) ? raw.players : []).filter((p) => p && (p.player === 1 || p.player === 2) && typeof p.remaining_ms === "number")
        .map((p) => ({ player: p.player, remaining_ms: p.remaining_ms, forfeit: p.forfeit === true, absent: p.absent === true })),
      sentAt: Number.isNaN(sent) ? null : sent,
      rules: rules && typeof rules.forfeit_overtime_ms === "number" ? rules : null,
      frozen: raw.frozen === true || t.offline === true,
      until: Number.isNaN(sent) ? null : sent + ((hall && hall.page.stale_s) || 0) * 1000,
    };
  }
  const r = t.clock_result, f = t.final;
  return {
    status: t.offline === true ? "offline" : "online", state, earlier: Boolean(raw && raw.frozen === true),
    names: [0, 1].map((i) => String((t.names || [])[i] || "")),
    result: r && typeof r === "object" ? { ending: typeof r.ending === "string" ? r.ending : null, forfeits: sides(r.forfeits) } : null,
    final: f && Array.isArray(f.scores) && f.scores.length === 2 ? { scores: f.scores, forfeits: sides(f.forfeits) } : null,
    challenge: t.challenge === true ? { station: "" } : null,
    held: typeof t.held === "string" ? t.held : null, // the director's word for a held clock (tilestate.js checks it)
  };
}

// Each table's card is kept (table -> {card, sig, m (its model), ...}); a new live.json redraws only the cards
// whose table changed, at the next frame, and the running times tick once a second, each text
// written only when it changed: 300 live tables cost a few cards a poll and a few hundred texts a
// second, not the whole list (bench/public_viewers.py holds it to 5 % of a core and the next frame).
const cards = new Map();
let liveDue = false;

function drawLive() {
  if (!liveDue) { liveDue = true; requestAnimationFrame(drawLiveNow); }
}

function makeCard(t) {
  const card = el("div", "card live-table");
  card.dataset.table = t.table;
  const title = el("h3", "");
  const times = el("div", "times");
  const sides = [1, 2].map((side) => {
    const s = el("div", "side");
    s.dataset.side = side;
    const who = el("div", "who");
    const time = el("div", "time", "");
    s.append(who, time);
    times.append(s);
    return { el: s, who, time };
  });
  const result = el("div", "result muted", "");
  // the state's label and words, as the director's tile says them (its note goes on with the director's own)
  const words = el("div", "words");
  const label = el("span", "label", "");
  const note = el("span", "note", "");
  words.append(label, " ", note);
  card.append(title, words, times, result);
  return { card, title, sides, result, label, note, sig: null };
}

function fillCard(c, t, live) {
  c.m = modelOf(t, live);
  setText(c.title, `Table ${t.table}${t.label && t.label !== String(t.table) ? ` (${t.label})` : ""}`);
  c.sides.forEach((s, i) => setText(s.who, c.m.names[i] || `side ${i + 1}`));
  setText(c.result, t.result ? `result ${t.result.join("-")}` : "");
  // the state the card shows (a probe of bench/public_viewers.py watches it change)
  c.card.dataset.sent = `${(t.state && t.state.sent_at) || ""}${t.result ? " " + t.result.join("-") : ""}`;
}

function drawLiveNow() {
  liveDue = false;
  const live = data["live.json"] || {};
  const box = $("live");
  const seen = new Set();
  let prev = null;
  for (const t of live.tables || []) {
    const key = String(t.table);
    seen.add(key);
    const sig = JSON.stringify(t);
    let c = cards.get(key);
    if (!c) { c = makeCard(t); cards.set(key, c); }
    if (c.sig !== sig) { fillCard(c, t, live); c.sig = sig; tickCard(c); }
    const want = prev ? prev.nextSibling : box.firstChild; // table order, moving nothing already in place
    if (c.card !== want) box.insertBefore(c.card, want);
    prev = c.card;
  }
  for (const [key, c] of cards) if (!seen.has(key)) { c.card.remove(); cards.delete(key); }
}

function tickCard(c) {
  const m = c.m, st = m.state;
  const at = viewNow();
  const cls = tileClass(m, at, at, null); // tilestate.js: the director's tile's class
  const words = stateWords(m, cls);
  // written only when changed, as the texts are: setting an attribute changes it (and restyles) even to its own value
  if (c.card.dataset.cls !== cls) c.card.dataset.cls = cls;
  if (c.card.dataset.words !== words) c.card.dataset.words = words;
  setText(c.label, LABEL[cls]);
  setText(c.note, words === LABEL[cls].toLowerCase() ? "" : words); // "running", said once
  for (const s of c.sides) {
    const side = Number(s.el.dataset.side);
    const p = st && st.players.find((x) => x.player === side);
    const ms = p ? remainingAt(st, p, at) : null;
    setText(s.time, ms === null ? "" : clockText(ms));
    s.el.classList.toggle("turn", turnSide(m) === side); // tilestate.js: the director's tile's too
    s.el.classList.toggle("over", ms !== null && ms < 0);
  }
}

// Once a second: the running times only (a still table's card was drawn with its data).
function tick() {
  if ($("live").hidden) return;
  for (const c of cards.values()) if (ticks(c.m.state)) tickCard(c); // tilestate.js: the director's tiles' too
}

// --- the hall screen: each division's standings, then the pairings, a page at a time ---------------

function screenPages() {
  const rows = hall.page.screen_rows;
  const pages = [];
  for (const d of (data["standings.json"] || {}).divisions || []) {
    for (let i = 0; i < Math.max(d.rows.length, 1); i += rows) {
      pages.push(() => [el("h2", "", `Division ${d.division} standings` + (d.after_round ? `, after round ${d.after_round}` : "")),
        standingsTable(d, d.rows.slice(i, i + rows))]);
    }
  }
  for (const r of (data["pairings.json"] || {}).rounds || []) {
    for (let i = 0; i < r.games.length; i += rows) {
      pages.push(() => [el("h2", "", `Round ${r.round} pairings`), pairingsTable(r, r.games.slice(i, i + rows))]);
    }
  }
  return pages;
}

function drawScreen() {
  const pages = screenPages();
  if (!pages.length) return;
  const box = $("screen");
  box.replaceChildren(...pages[screenStep % pages.length]());
}

function nextScreen() {
  screenStep += 1;
  drawScreen();
  setTimeout(nextScreen, hall.page.cycle_s * 1000);
}

// --- the page -----------------------------------------------------------------------------------

// Only what changed is drawn again: a poll that brings a new live.json alone redraws a few cards,
// not the pairings and standings of the whole event.
function draw(changed) {
  $("hall").textContent = hall.hall;
  $("round").textContent = hall.round === null ? "" : `round ${hall.round}`;
  document.title = hall.round === null ? hall.hall : `${hall.hall}: round ${hall.round}`;
  if (screenMode) {
    if (changed.has("standings.json") || changed.has("pairings.json") || !screenDrawn) { screenDrawn = true; drawScreen(); }
    return;
  }
  if (changed.has("players.json")) drawFind();
  if (changed.has("pairings.json")) drawPairings();
  if (changed.has("standings.json")) drawStandings();
  if (changed.has("live.json")) drawLive();
}

function show(tab) {
  for (const b of document.querySelectorAll("#tabs button")) b.classList.toggle("on", b.dataset.tab === tab);
  for (const s of document.querySelectorAll(".tab")) s.hidden = s.id !== tab;
  if (tab === "live") tick(); // the times were not ticked while hidden
}

document.addEventListener("DOMContentLoaded", () => {
  if (screenMode) {
    document.body.classList.add("screen");
    for (const s of document.querySelectorAll(".tab")) s.hidden = true;
    $("screen").hidden = false;
  }
  for (const b of document.querySelectorAll("#tabs button")) b.addEventListener("click", () => show(b.dataset.tab));
  $("who").addEventListener("input", drawFind);
  $("division").addEventListener("change", drawStandings);
  try { $("who").value = localStorage.getItem("rackside-who") || ""; } catch (e) { /* private mode */ }
  setInterval(tick, 1000);
  poll();
});
