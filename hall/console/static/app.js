// The director's console page. Plain JavaScript, no build step.
// State arrives by server-sent events (/api/events): a snapshot, then one update per change.
// The page derives the running times itself from each state's remaining_ms and sent_at, so the
// tiles tick without any traffic, and works out each tile's class (exceptions first).
"use strict";

const $ = (id) => document.getElementById(id);
const tables = new Map(); // n -> tile data from the server
const tiles = new Map(); // n -> DOM element
let round = {};
let csrf = null;
let skewMs = 0; // console's clock minus this browser's clock
let openTable = null;
const ORDER = ["offline", "forfeit", "overtime", "challenge", "notstarted", "finished", "running", "waiting"];
const LABEL = {
  offline: "OFFLINE", forfeit: "FORFEIT", overtime: "OVERTIME", challenge: "CHALLENGE",
  notstarted: "NOT STARTED", finished: "FINISHED", running: "running", waiting: "waiting",
};

// --- time ---------------------------------------------------------------------------------------

function nowMs() { return Date.now() + skewMs; }

// What a player's display shows (as the clock: remaining rounded up, overtime whole seconds).
function clockText(ms) {
  let s, sign = "";
  if (ms > 0) { s = Math.ceil(ms / 1000); } else { s = Math.floor(-ms / 1000); if (s) sign = "-"; }
  return `${sign}${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

function liveRemaining(state, p) {
  let ms = p.remaining_ms;
  const ticking = (state.phase === "running" && state.running === p.player) || (state.phase === "late" && p.absent);
  if (ticking && state.sent_at) {
    ms -= Math.max(0, nowMs() - Date.parse(state.sent_at));
    ms = Math.max(ms, -600000); // the clock forfeits at 10 minutes over (5.3.3)
  }
  return ms;
}

function penaltySoFar(ms) { // 10 points per minute or part thereof, whole seconds (5.3)
  const over = ms < 0 ? Math.floor(-ms / 1000) : 0;
  return Math.ceil(over / 60) * 10;
}

// --- classification (exceptions first) ----------------------------------------------------------

function classify(t) {
  const st = t.state;
  if (t.status === "offline") return "offline";
  const players = st ? st.players || [] : [];
  if (players.some((p) => p.forfeit) || (t.result && (t.result.forfeits || []).length)) return "forfeit";
  if (st && st.phase !== "ended" && players.some((p) => liveRemaining(st, p) <= -1000)) return "overtime";
  if (t.challenge || (st && st.phase === "neutralised")) return "challenge";
  const notPlaying = !st || st.phase === "setup" || st.phase === "late";
  if (notPlaying && round.start && nowMs() > (round.start + (round.late_after_s || 0)) * 1000) return "notstarted";
  if ((st && st.phase === "ended") || t.result) return "finished";
  if (st && st.phase === "running") return "running";
  return "waiting";
}

// --- tiles --------------------------------------------------------------------------------------

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function makeTile(n) {
  const d = el("article", "tile");
  d.dataset.table = n;
  d.tabIndex = 0;
  const head = el("div", "head");
  head.append(el("span", "num", String(n)), el("span", "label"));
  d.append(head);
  for (const side of [1, 2]) {
    const row = el("div", "side s" + side);
    row.append(el("span", "name"), el("span", "time"));
    d.append(row);
  }
  d.append(el("div", "note"));
  d.addEventListener("click", () => openDetail(n));
  d.addEventListener("keydown", (e) => { if (e.key === "Enter") openDetail(n); });
  tiles.set(n, d);
  return d;
}

function renderTile(n) {
  const t = tables.get(n);
  const d = tiles.get(n) || makeTile(n);
  const cls = classify(t);
  d.dataset.cls = cls;
  d.className = "tile " + cls;
  const st = t.state;
  if (st) d.dataset.seq = st.seq;
  d.querySelector(".label").textContent = LABEL[cls];
  const rows = d.querySelectorAll(".side");
  const players = st ? st.players || [] : [];
  for (const side of [1, 2]) {
    const row = rows[side - 1];
    const full = (t.names && t.names[side - 1]) || "";
    const name = row.querySelector(".name");
    name.textContent = shortName(full) || `Player ${side}`;
    name.title = full;
    row.classList.toggle("turn", !!st && st.running === side && st.phase === "running");
  }
  d.querySelector(".note").textContent = noteFor(t, cls);
  tickTile(n);
  return d;
}

// TSH writes "Surname, Given": a tile shows "Surname G" (the detail shows the whole name)
function shortName(full) {
  const m = full.match(/^([^,]+),\s*(\S)/);
  return m ? `${m[1]} ${m[2]}` : full;
}

function noteFor(t, cls) {
  const st = t.state;
  if (cls === "offline") return "clock offline (last will)";
  if (t.final) return `recorded ${t.final.scores[0]}–${t.final.scores[1]}`;
  if (cls === "finished" || cls === "forfeit") {
    const r = t.result;
    if (!r) return st ? st.phase : "";
    const pen = (r.players || []).map((p) => p.penalty || 0);
    if ((r.forfeits || []).length) return `${r.ending || "forfeit"}: side ${r.forfeits.join("+")}`;
    return pen.some((x) => x) ? `penalties ${pen[0]} / ${pen[1]}` : "no penalties";
  }
  if (cls === "challenge") {
    if (t.challenge) return `challenge at ${t.challenge.station || "station"}`;
    return "neutralised";
  }
  if (st && st.phase === "late") {
    const absent = (st.players || []).filter((p) => p.absent).map((p) => p.player);
    return absent.length ? `late: waiting for ${absent.join(" and ")}` : "late start";
  }
  if (!st) return "no clock yet";
  return st.phase;
}

function tickTile(n) {
  const t = tables.get(n);
  const d = tiles.get(n);
  const st = t.state;
  const rows = d.querySelectorAll(".side");
  const players = st ? st.players || [] : [];
  for (const side of [1, 2]) {
    const p = players.find((x) => x.player === side);
    const time = rows[side - 1].querySelector(".time");
    if (!p) { time.textContent = "–"; continue; }
    const ms = liveRemaining(st, p);
    const pen = Math.max(p.penalty || 0, penaltySoFar(ms));
    time.textContent = clockText(ms);
    time.title = pen ? `penalty so far: ${pen}` : "";
    time.classList.toggle("over", ms <= -1000);
    if (pen && st.phase !== "ended") d.querySelector(".note").textContent = `side ${side} overtime: −${pen} so far (5.3)`;
  }
}

let sortPending = false;
function resort() {
  sortPending = false;
  const main = $("tiles");
  const list = [...tables.keys()].map((n) => [ORDER.indexOf(tiles.get(n).dataset.cls), n]);
  list.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let prev = null;
  for (const [, n] of list) { // move only tiles out of place, so the grid does not flicker
    const d = tiles.get(n);
    const want = prev ? prev.nextSibling : main.firstChild;
    if (d !== want) main.insertBefore(d, want);
    prev = d;
  }
  const counts = {};
  for (const d of tiles.values()) counts[d.dataset.cls] = (counts[d.dataset.cls] || 0) + 1;
  $("counts").textContent = ORDER.filter((c) => counts[c]).map((c) => `${counts[c]} ${LABEL[c].toLowerCase()}`).join(" · ");
}
function scheduleSort() { if (!sortPending) { sortPending = true; requestAnimationFrame(resort); } }

function updateTable(t) {
  tables.set(t.table, t);
  const before = tiles.get(t.table)?.dataset.cls;
  renderTile(t.table);
  if (tiles.get(t.table).dataset.cls !== before) scheduleSort();
  if (openTable === t.table) renderDetailTile();
}

// every 250 ms: times tick; once a second, classes that time alone changes (overtime, not started)
let tickCount = 0;
setInterval(() => {
  tickCount++;
  let moved = false;
  for (const n of tables.keys()) {
    const t = tables.get(n);
    const st = t.state;
    if (st && (st.phase === "running" || st.phase === "late")) tickTile(n);
    if (tickCount % 4 === 0) {
      const d = tiles.get(n);
      const cls = classify(t);
      if (cls !== d.dataset.cls) { renderTile(n); moved = true; }
    }
  }
  if (moved) scheduleSort();
}, 250);

// --- the event stream ---------------------------------------------------------------------------

function connect() {
  const es = new EventSource("/api/events");
  es.addEventListener("snapshot", (e) => {
    const s = JSON.parse(e.data);
    skewMs = Date.parse(s.server_now) - Date.now();
    $("hall").textContent = s.hall;
    $("user").textContent = s.user;
    setRound(s.round);
    setBroker(s.broker_up, s.broker_up ? "connected" : "connecting");
    for (const t of s.tables) { tables.set(t.table, t); renderTile(t.table); }
    resort();
    $("feed-list").replaceChildren();
    for (const c of s.feed.slice().reverse()) addFeed(c);
    document.body.dataset.ready = "1";
  });
  es.addEventListener("table", (e) => updateTable(JSON.parse(e.data)));
  es.addEventListener("event", (e) => {
    const { table, event } = JSON.parse(e.data);
    if (openTable === table) addHistory(event);
  });
  es.addEventListener("command", (e) => {
    const { table, command } = JSON.parse(e.data);
    if (openTable === table) addHistory({ kind: "command", ...command });
  });
  es.addEventListener("ack", (e) => {
    const { table, ack, command } = JSON.parse(e.data);
    const what = command ? command.cmd : "command";
    const ok = ack.ok !== false && !ack.refused;
    toast(`table ${table}: ${what} ${ok ? "acknowledged" : "REFUSED: " + (ack.reason || ack.error || "no reason given")}`, ok ? "ok" : "bad");
    if (openTable === table) addHistory({ kind: "ack", ...ack, command });
  });
  es.addEventListener("challenge", (e) => {
    const c = JSON.parse(e.data);
    addFeed(c);
    if (openTable != null && Number(c.table) === openTable) setTimeout(() => openDetail(openTable), 300); // its per-word results follow
  });
  es.addEventListener("round", (e) => { setRound(JSON.parse(e.data)); for (const n of tables.keys()) renderTile(n); resort(); });
  es.addEventListener("broker", (e) => { const b = JSON.parse(e.data); setBroker(b.up, b.why); });
  es.onerror = () => setBroker(false, "console connection lost, retrying");
}

function setBroker(up, why) {
  const b = $("broker");
  b.textContent = up ? "broker: connected" : `broker: ${why}`;
  b.className = up ? "up" : "down";
}

function setRound(r) {
  round = r;
  const start = r.start ? new Date(r.start * 1000).toTimeString().slice(0, 5) : "no start set";
  $("round").textContent = `division ${r.division} · round ${r.number} · start ${start}`;
}

function addFeed(c) {
  const li = el("li", "verdict-" + String(c.verdict || "pending").toLowerCase());
  const stamp = c.time || c.sent_at;
  const when = stamp ? new Date(stamp).toTimeString().slice(0, 8) + " " : "";
  li.append(el("span", "", `${when}${c.station}: `));
  const a = el("a", "", `table ${c.table ?? "?"}`);
  a.href = "#";
  a.addEventListener("click", (e) => { e.preventDefault(); if (c.table != null) openDetail(Number(c.table)); });
  li.append(a, el("span", "", ` ${c.verdict || "in progress"}` + (c.word_count ? ` (${c.word_count} words)` : "")));
  $("feed-list").prepend(li);
  $("feed-count").textContent = $("feed-list").children.length;
}

// --- requests -----------------------------------------------------------------------------------

async function getCsrf() {
  const r = await fetch("/api/csrf", { credentials: "same-origin" });
  csrf = (await r.json()).csrf;
}

async function post(url, body) {
  if (!csrf) await getCsrf();
  const r = await fetch(url, {
    method: "POST", credentials: "same-origin",
    headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
    body: JSON.stringify(body),
  });
  const data = await r.json().catch(() => ({}));
  if (r.status === 401) { location.href = "/login"; }
  if (!r.ok) throw new Error(data.error || `HTTP ${r.status}`);
  return data;
}

function toast(text, kind) {
  const t = el("div", "toast " + (kind || ""), text);
  $("toasts").prepend(t);
  setTimeout(() => t.remove(), 8000);
}

function confirmBox(text) {
  return new Promise((resolve) => {
    const d = $("confirm");
    $("confirm-text").textContent = text;
    d.onclose = () => resolve(d.returnValue === "ok");
    d.showModal();
  });
}

// --- commands -----------------------------------------------------------------------------------

function parseTables(text) {
  const out = new Set();
  for (const part of text.split(/[ ,]+/).filter(Boolean)) {
    const m = part.match(/^(\d+)(?:-(\d+))?$/);
    if (!m) throw new Error(`"${part}" is not a table number or range`);
    const a = Number(m[1]), b = Number(m[2] || m[1]);
    for (let i = Math.min(a, b); i <= Math.max(a, b); i++) out.add(i);
  }
  if (!out.size) throw new Error("name at least one table");
  return [...out].sort((x, y) => x - y);
}

function parseTime(text) { // "12:00", "-1:30" -> ms
  const m = text.trim().match(/^(-?)(\d+):([0-5]\d)$/);
  if (!m) throw new Error("time must be m:ss (or -m:ss for overtime)");
  const ms = (Number(m[2]) * 60 + Number(m[3])) * 1000;
  return m[1] ? -ms : ms;
}

const DESCRIBE = {
  late_start: (b) => `start the clocks of absent side ${b.players.join(" and ")} from the scheduled start`,
  arrive: (b) => `record side ${b.player}'s arrival`,
  adjust: (b) => `set side ${b.player}'s time to ${clockText(b.remaining_ms)} (reason: ${b.reason})`,
  new_game: (b) => `start a new game with ${b.game_time_ms / 60000} minutes each (the round's game time)`,
  identify: () => "flash the displays",
};

async function sendCommand(body) {
  const ok = await confirmBox(`${DESCRIBE[body.cmd](body)} on table${body.tables.length > 1 ? "s" : ""} ${body.tables.join(", ")}?`);
  if (!ok) return;
  try {
    const r = await post("/api/command", body);
    toast(`${body.cmd} sent to ${r.sent.length} table(s), waiting for acknowledgement`, "");
  } catch (e) {
    toast(`${body.cmd} not sent: ${e.message}`, "bad");
  }
}

function showCommandFields() {
  const cmd = $("cmd").value;
  $("cmd-players").hidden = cmd !== "late_start";
  $("cmd-player-row").hidden = !["arrive", "adjust"].includes(cmd);
  $("cmd-time-row").hidden = $("cmd-reason-row").hidden = cmd !== "adjust";
  $("cmd-game-row").hidden = cmd !== "new_game";
}

function openCommands(preset) {
  $("cmd-error").textContent = "";
  if (preset) {
    $("cmd").value = preset.cmd;
    $("cmd-tables").value = String(preset.table);
    if (preset.player) $("cmd-player").value = String(preset.player);
  }
  $("cmd-game").value = String((round.game_time_ms || 1500000) / 60000);
  showCommandFields();
  $("commands").showModal();
}

function commandBody() {
  const cmd = $("cmd").value;
  const body = { cmd, tables: parseTables($("cmd-tables").value) };
  if (cmd === "late_start") {
    body.players = [1, 2].filter((p) => $("late" + p).checked);
    if (!body.players.length) throw new Error("tick the absent side(s)");
  }
  if (cmd === "arrive" || cmd === "adjust") body.player = Number($("cmd-player").value);
  if (cmd === "adjust") {
    body.remaining_ms = parseTime($("cmd-time").value);
    body.reason = $("cmd-reason").value.trim();
    if (!body.reason) throw new Error("give a reason: it is logged");
  }
  if (cmd === "new_game") body.game_time_ms = Math.round(Number($("cmd-game").value) * 60000);
  return body;
}

// --- table detail -------------------------------------------------------------------------------

async function openDetail(n) {
  openTable = n;
  $("detail").hidden = false;
  $("feed").hidden = true;
  $("detail-title").firstChild.textContent = `Table ${n} `;
  $("detail-history").replaceChildren();
  $("detail-challenges").replaceChildren();
  $("result-out").textContent = "";
  renderDetailTile();
  const r = await fetch(`/api/table/${n}`, { credentials: "same-origin" });
  if (!r.ok) return;
  const d = await r.json();
  if (openTable !== n) return;
  for (const h of d.history) addHistory(h);
  for (const c of d.challenges) {
    const li = el("li", "", `${c.station}: ${c.verdict || "in progress"}` + (c.lexicon ? ` (${c.lexicon})` : ""));
    const words = c.word_results || [];
    if (words.length) {
      const ul = el("ul", "words");
      for (const w of words) {
        const ok = w.valid ?? w.acceptable ?? w.ok;
        ul.append(el("li", ok ? "valid" : "invalid", `${w.word}: ${ok ? "valid" : "not valid"}`));
      }
      li.append(ul);
    }
    $("detail-challenges").append(li);
  }
}

function renderDetailTile() {
  const n = openTable;
  const t = tables.get(n);
  if (!t) return;
  const box = $("detail-tile");
  box.replaceChildren(tiles.get(n).cloneNode(true));
  const res = $("detail-result");
  res.hidden = !t.result;
  if (t.result) {
    const r = t.result;
    const ps = r.players || [];
    $("detail-clock-result").textContent = `${r.ending || "ended"}; ` + ps.map((p) =>
      `side ${p.player}: ${clockText(p.remaining_ms)}, overtime ${p.overtime_s || 0} s, penalty ${p.penalty || 0}`).join("; ") +
      ((r.forfeits || []).length ? `; forfeited by side ${r.forfeits.join(" and ")}` : "") +
      (r.lateness_margin ? `; lateness margin ${r.lateness_margin}` : "");
    $("slip1-label").textContent = (t.names && t.names[0]) || "Side 1";
    $("slip2-label").textContent = (t.names && t.names[1]) || "Side 2";
    const lateness = ["lateness forfeit", "optional forfeit"].includes(r.ending);
    $("margin-label").hidden = !lateness;
    if (lateness && !$("margin").value) $("margin").value = r.lateness_margin || 75;
  }
}

function addHistory(h) {
  let text;
  const when = h.at || h.sent_at;
  const at = when ? new Date(when).toTimeString().slice(0, 8) + " " : "";
  if (h.kind === "command") text = `${at}COMMAND ${h.cmd} by ${h.by}` + (h.reason ? ` (reason: ${h.reason})` : "") + (h.player ? ` side ${h.player}` : "") + (h.players ? ` sides ${h.players.join(",")}` : "");
  else if (h.kind === "ack") text = `${at}ack ${h.command ? h.command.cmd : h.id}: ${h.ok === false ? "refused: " + (h.reason || "") : "applied"}`;
  else if (h.kind === "result") text = `${at}RESULT: ${h.ending || "ended"}` + ((h.forfeits || []).length ? `, forfeited by side ${h.forfeits.join(" and ")}` : "");
  else if (h.kind === "challenge" && h.time && !when) text = `${new Date(h.time).toTimeString().slice(0, 8)} challenge at ${h.station}: ${h.verdict || "in progress"}`;
  else if (h.kind === "challenge") text = `${at}challenge at ${h.station}: ${h.verdict || "in progress"}`;
  else {
    const src = h.source === "hall" ? ` (director${h.by ? " " + h.by : ""}${h.reason ? ", reason: " + h.reason : ""})` : "";
    text = `${at}#${h.seq} ${h.input || "input"}${h.player ? " " + h.player : ""}${h.players ? " " + h.players.join(",") : ""}${h.remaining_ms != null ? " to " + clockText(h.remaining_ms) : ""}${src}`;
  }
  $("detail-history").prepend(el("li", "h-" + (h.kind || "input"), text));
}

// --- results ------------------------------------------------------------------------------------

async function submitResult(ev) {
  ev.preventDefault();
  const n = openTable;
  const t = tables.get(n);
  const lateness = ["lateness forfeit", "optional forfeit"].includes(t.result && t.result.ending);
  const body = {};
  if (!lateness) body.slip = [$("slip1").value, $("slip2").value];
  else body.margin = $("margin").value;
  try {
    const p = await post(`/api/result/${n}`, body);
    const ok = await confirmBox(`Record table ${n}: ${p.scores[0]} – ${p.scores[1]}? ${p.note}` + (p.needs_director ? " (DIRECTOR: check this)" : ""));
    if (!ok) return;
    await post(`/api/result/${n}`, { ...body, confirm: true });
    $("result-out").textContent = `recorded ${p.scores[0]} – ${p.scores[1]}`;
  } catch (e) {
    $("result-out").textContent = e.message;
  }
}

function openResults() {
  $("results-round").textContent = `division ${round.division}, round ${round.number}`;
  const body = $("results-table").querySelector("tbody");
  body.replaceChildren();
  for (const [n, t] of [...tables.entries()].sort((a, b) => a[0] - b[0])) {
    if (!t.result) continue;
    const tr = el("tr");
    const pen = (t.result.players || []).map((p) => p.penalty || 0).join(" / ");
    tr.append(el("td", "", n), el("td", "", (t.names || []).join(" v ")), el("td", "", `${t.result.ending || "ended"}, penalties ${pen}`),
      el("td", "", t.final ? `${t.final.scores[0]} – ${t.final.scores[1]}` : "to type"));
    tr.addEventListener("click", () => { $("results").close(); openDetail(n); });
    body.append(tr);
  }
  $("results").showModal();
}

// --- round & TSH --------------------------------------------------------------------------------

function openRound() {
  $("r-division").value = round.division;
  $("r-number").value = round.number;
  $("r-start").value = round.start ? new Date(round.start * 1000).toTimeString().slice(0, 5) : "";
  $("r-late").value = Math.round((round.late_after_s || 0) / 60);
  $("r-game").value = (round.game_time_ms || 1500000) / 60000;
  $("round-out").textContent = "";
  $("round-dialog").showModal();
}

async function saveRound(ev) {
  ev.preventDefault();
  if (ev.submitter && ev.submitter.value === "cancel") { $("round-dialog").close(); return; }
  const body = {
    division: $("r-division").value, number: $("r-number").value,
    late_after_s: Math.round(Number($("r-late").value) * 60), game_time_ms: Math.round(Number($("r-game").value) * 60000),
  };
  const hhmm = $("r-start").value;
  if (hhmm) {
    const d = new Date(); const [h, m] = hhmm.split(":").map(Number);
    d.setHours(h, m, 0, 0);
    body.start = d.getTime() / 1000;
  } else body.start = null;
  try {
    const file = $("r-tsh").files[0];
    if (file) {
      const r = await post("/api/tsh", { name: file.name, text: await file.text() });
      $("round-out").textContent = r.divisions.map((d) => `${d.name}: ${d.players} players`).join(", ") + (r.problems.length ? `; ${r.problems.join("; ")}` : "");
    }
    await post("/api/round", body);
    if (!file) $("round-dialog").close();
  } catch (e) {
    $("round-out").textContent = e.message;
  }
}

// --- wiring -------------------------------------------------------------------------------------

document.querySelectorAll(".drawer .close").forEach((b) => b.addEventListener("click", () => {
  b.closest(".drawer").hidden = true;
  if (b.closest("#detail")) openTable = null;
}));
$("open-feed").addEventListener("click", () => { $("feed").hidden = !$("feed").hidden; $("detail").hidden = true; openTable = null; });
$("open-commands").addEventListener("click", () => openCommands());
$("open-results").addEventListener("click", openResults);
$("open-round").addEventListener("click", openRound);
$("round-form").addEventListener("submit", saveRound);
$("cmd").addEventListener("change", showCommandFields);
$("command-form").addEventListener("submit", (ev) => {
  if (ev.submitter && ev.submitter.value === "cancel") return;
  ev.preventDefault();
  let body;
  try { body = commandBody(); } catch (e) { $("cmd-error").textContent = e.message; return; }
  $("commands").close();
  sendCommand(body);
});
$("detail-actions").addEventListener("click", (ev) => {
  const q = ev.target.dataset.quick;
  if (!q || openTable == null) return;
  if (q === "identify") sendCommand({ cmd: "identify", tables: [openTable] });
  else if (q === "arrive1" || q === "arrive2") sendCommand({ cmd: "arrive", tables: [openTable], player: Number(q.slice(-1)) });
  else if (q === "adjust") openCommands({ cmd: "adjust", table: openTable });
});
$("result-form").addEventListener("submit", submitResult);
$("logout").addEventListener("click", async () => { await post("/api/logout", {}); location.href = "/login"; });

getCsrf().then(connect);
