// The director's console page. Plain JavaScript, no build step.
// State arrives by server-sent events (/api/events): a snapshot, then one update per change.
// The page derives the running times itself from each state's remaining_ms and sent_at, so the
// tiles tick without any traffic, and works out each tile's class (exceptions first).
//
// What a page costs must not grow with the hall or the hours (issue 17.6): every message is read
// into a checked model first (a field of the wrong type is a problem shown on that tile, never an
// exception that stops the others); only tiles on screen are in the DOM and drawn (placeTiles), a
// changed tile at the first frame after the next tenth of a second, the ticking times once a second; every list the page
// keeps is bounded (PAGE_LIMITS, stated in docs/console.md).
import { clockText } from "./clocktext.js";
import { divisions, divisionShown, divisionTables, finalText, openResults, openSlipTable, recordText, resetResultForm, roundText, saveRound, setDivisions, showDivision, submitResult, tablesText, tileWhere, tileWhereTitle, tshProblems } from "./divisions.js";
import { checkedIn, checkinConflict, openCall, paperlessEvents, paperlessSnapshot, rawTiles, seatMark } from "./paperless.js";
import { csrfToken, post } from "./request.js";
import { HELD, LABEL, ORDER, remainingAt, stateWords, ticks, tileClass, turnSide } from "./tilestate.js";

export const $ = (id) => document.getElementById(id);
export const tables = new Map(); // n -> the checked model of a table (readTable)
export const tiles = new Map(); // n -> DOM element
export let round = {};
export let skewMs = 0; // console's clock minus this browser's clock
export let openTable = null;
export let serverRules = null; // the event's rules ([event], issue 38), from the snapshot: a table's own state's rules win
export let latenessEndings = []; // a result ending so takes a margin, not a slip (the snapshot's lateness_endings)
// ORDER and LABEL, the tile's class (tileClass) and its words (stateWords): tilestate.js, the public page's too;
// a held clock's class is the tile's `held` (hallstate.held: only a station's challenge is "challenge")
// The page's own memory bounds: DOM items kept in the open table's history, the challenge feed and
// the messages at the bottom left, and the longest text a field may show.
export const PAGE_LIMITS = { history: 500, feed: 300, toasts: 6, text: 200 };
const RULE_NAMES = ["game_time_ms", "penalty_per_minute", "forfeit_overtime_ms", "lateness_forfeit_margin"];

// --- time ---------------------------------------------------------------------------------------

export function nowMs() { return Date.now() + skewMs; }
let shownAt = 0; // the console clock's whole second the running times are drawn as of (nextSecond)

// clockText(ms): what a player's display shows, in clocktext.js (imported, shared with ready.js)

// A side's time as of the second the times are drawn (tilestate.js's remainingAt: a frozen state
// is shown as it was). A state newer than that second shows its own moment's time.
export function liveRemaining(st, p) { return remainingAt(st, p, shownAt); }

function penaltySoFar(ms, rules) { // the game's points per minute or part thereof, whole seconds (5.3)
  if (!rules) return 0;
  const over = ms < 0 ? Math.floor(-ms / 1000) : 0;
  return Math.ceil(over / 60) * rules.penalty_per_minute;
}

// --- reading a table: every field checked, whatever the server relays ----------------------------

export function shown(v) { // a device's text, cut to what a tile can show
  const s = String(v);
  return s.length > PAGE_LIMITS.text ? s.slice(0, PAGE_LIMITS.text) + "…" : s;
}
export function isObj(v) { return v !== null && typeof v === "object" && !Array.isArray(v); }
function isNum(v) { return typeof v === "number" && Number.isFinite(v); }
export function textOf(v, what, problems) {
  if (v === undefined || v === null) return "";
  if (typeof v === "string" || isNum(v)) return shown(v);
  problems.push(`${what} is not text`);
  return "";
}

function readRules(r, problems) {
  if (r === undefined || r === null) return null;
  if (!isObj(r)) { problems.push("rules is not an object"); return null; }
  const out = {};
  for (const k of RULE_NAMES) {
    if (!isNum(r[k]) || r[k] < 0) { problems.push(`rules.${k} is not a number`); return null; }
    out[k] = r[k];
  }
  return out;
}

function readPlayers(list, what, problems) {
  if (list === undefined || list === null) return [];
  if (!Array.isArray(list)) { problems.push(`${what} is not a list`); return []; }
  const out = [];
  for (const p of list.slice(0, 2)) {
    if (!isObj(p) || (p.player !== 1 && p.player !== 2)) { problems.push(`${what} has an entry that is not a side 1 or 2`); continue; }
    if (!isNum(p.remaining_ms)) { problems.push(`${what}: side ${p.player} has no remaining_ms`); continue; }
    out.push({ player: p.player, remaining_ms: p.remaining_ms, penalty: isNum(p.penalty) ? p.penalty : 0,
      overtime_s: isNum(p.overtime_s) ? p.overtime_s : 0, forfeit: p.forfeit === true, absent: p.absent === true });
  }
  if (list.length > 2) problems.push(`${what} has more than two sides`);
  return out;
}

function readSides(list, what, problems) { // [1], [2], [1, 2]
  if (list === undefined || list === null) return [];
  if (!Array.isArray(list)) { problems.push(`${what} is not a list`); return []; }
  const out = list.filter((x) => x === 1 || x === 2);
  if (out.length !== list.length) problems.push(`${what} names something other than side 1 or 2`);
  return out;
}

function readState(st, problems) {
  if (st === undefined || st === null) return null;
  if (!isObj(st)) { problems.push("state is not an object"); return null; }
  const phase = typeof st.phase === "string" ? st.phase : "";
  if (!phase) problems.push("state has no phase");
  const sentAt = typeof st.sent_at === "string" ? Date.parse(st.sent_at) : NaN;
  if (st.sent_at !== undefined && Number.isNaN(sentAt)) problems.push("state.sent_at is not a time");
  const rules = readRules(st.rules, problems) || serverRules;
  return { phase, running: st.running === 1 || st.running === 2 ? st.running : null, seq: isNum(st.seq) ? st.seq : null,
    ending: typeof st.ending === "string" ? shown(st.ending) : null,
    players: readPlayers(st.players, "players", problems), sentAt: Number.isNaN(sentAt) ? null : sentAt, rules };
}

function readResult(r, problems) {
  if (r === undefined || r === null) return null;
  if (!isObj(r)) { problems.push("result is not an object"); return null; }
  return { ending: textOf(r.ending, "result.ending", problems), players: readPlayers(r.players, "result.players", problems),
    forfeits: readSides(r.forfeits, "result.forfeits", problems),
    lateness_margin: isNum(r.lateness_margin) ? r.lateness_margin : null };
}

function readFinal(f, problems) {
  if (f === undefined || f === null) return null;
  if (!isObj(f) || !Array.isArray(f.scores) || f.scores.length !== 2 || !f.scores.every(isNum)) {
    problems.push("final has no two scores"); return null;
  }
  const times = Array.isArray(f.remaining_ms) && f.remaining_ms.length === 2 && f.remaining_ms.every(isNum) ? f.remaining_ms : null;
  if (f.remaining_ms !== undefined && f.remaining_ms !== null && !times) problems.push("final.remaining_ms is not two times");
  return { scores: f.scores, forfeits: readSides(f.forfeits || [], "final.forfeits", problems),
    decision: textOf(f.decision, "final.decision", problems), remaining_ms: times,
    no_clock: textOf(f.no_clock, "final.no_clock", problems), signed: f.signed === true,
    names: Array.isArray(f.names) ? [0, 1].map((i) => textOf(f.names[i], "final.names", problems)) : ["", ""] };
}

// The model every drawing function uses: nothing in it has a type other than the one expected.
function readTable(t) {
  const problems = [];
  const names = Array.isArray(t.names) ? [0, 1].map((i) => textOf(t.names[i], "names", problems)) : ["", ""];
  if (t.names !== undefined && t.names !== null && !Array.isArray(t.names)) problems.push("names is not a list");
  let challenge = null;
  if (isObj(t.challenge)) challenge = { station: textOf(t.challenge.station, "challenge.station", problems) };
  else if (t.challenge !== undefined && t.challenge !== null) problems.push("challenge is not an object");
  const held = HELD.includes(t.held) ? t.held : null;
  if (t.held !== undefined && t.held !== null && !held) problems.push(`held is not one of ${HELD.join(", ")}`);
  const status = typeof t.status === "string" ? t.status : null;
  if (t.status !== undefined && t.status !== null && status === null) problems.push("status is not text");
  // the console's own refusals of this table's messages (its latest few): shown as this tile's problems
  const refused = Array.isArray(t.problems) ? t.problems.filter((x) => typeof x === "string").slice(-10).map((x) => "refused " + shown(x)) : [];
  // the game the clock plays instead of this seat's (an earlier round on screen, or this round's not begun)
  const earlier = t.earlier === true;
  const clockOn = earlier && isObj(t.clock_on) ? { division: textOf(t.clock_on.division, "clock_on.division", problems),
    round: textOf(t.clock_on.round, "clock_on.round", problems) } : null;
  const state = readState(t.state, problems);
  if (state) state.frozen = status === "offline" || earlier;
  const division = textOf(t.division, "division", problems);
  const final = readFinal(t.final, problems);
  // a game recorded by table (no TSH game): the names typed with its result, if any
  const typedNames = !division && final && !names.some(Boolean) ? final.names : names;
  const checkin = earlier ? null : checkedIn(t.table, typedNames); // who checked in where (paperless.js)
  const shownNames = checkin ? checkin.names : typedNames;
  // its identity used by two connections in its game (issue 36: hallstate.used_twice): its slips are held
  const twice = isObj(t.twice) ? "identity used twice: slips held" : "";
  return { n: t.table, status, state, names: shownNames, checkin, call: openCall(t.table) || checkinConflict(t.table), twice, challenge, held, refused, earlier, clockOn,
    division, label: textOf(t.label, "label", problems),
    tshTable: textOf(t.tsh_table, "tsh_table", problems),
    result: readResult(t.result, problems), final, problems, cls: "waiting", health: readHealth(t.health_problems) };
}

// A device's health problems, named by the console (health.py, under the director's thresholds)
function readHealth(list) {
  return Array.isArray(list) ? list.filter((x) => typeof x === "string").slice(0, 12).map(shown) : [];
}

export function tableNumber(v) { return Number.isSafeInteger(v) && v > 0 ? v : null; }

// --- classification (exceptions first) ----------------------------------------------------------

function classify(t) { return tileClass(t, shownAt, nowMs(), round); } // tilestate.js: the public page's too

// --- tiles --------------------------------------------------------------------------------------

export function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

// Writes only what changed: an unchanged tile costs the browser no style or layout work.
export function setText(e, text) { if (e.textContent !== text) e.textContent = text; }
function setAttr(e, name, value) { if (e.getAttribute(name) !== value) e.setAttribute(name, value); }

function tileDom(n) {
  const d = el("article", "tile");
  d.dataset.table = n;
  const head = el("div", "head");
  head.append(el("span", "num", String(n)), el("span", "where"), el("span", "label"));
  d.append(head);
  for (const side of [1, 2]) {
    const row = el("div", "side s" + side);
    row.append(el("span", "name"), el("span", "time"));
    d.append(row);
  }
  d.append(el("div", "note"));
  const health = el("div", "health");
  d.append(health);
  d.parts = { label: head.lastChild, where: head.children[1], rows: [...d.querySelectorAll(".side")].map((r) => ({ row: r, name: r.firstChild, time: r.lastChild })), note: d.querySelector(".note"), health };
  return d;
}

function makeTile(n) {
  const d = tileDom(n);
  d.tabIndex = 0;
  d.addEventListener("click", () => openDetail(n));
  d.addEventListener("keydown", (e) => { if (e.key === "Enter") openDetail(n); });
  tiles.set(n, d);
  return d;
}

// Draw a table's model into a tile element (a tile in the grid, or the open detail's copy).
function drawTile(d, t) {
  try {
    const cls = t.cls;
    const problems = t.problems.concat(t.refused.slice().reverse()); // what the page found, then the newest refusal
    const bad = problems.length > 0;
    setAttr(d, "class", "tile " + cls + (bad ? " problem" : ""));
    setAttr(d, "data-cls", cls);
    if (t.state && t.state.seq !== null) setAttr(d, "data-seq", String(t.state.seq));
    if (bad) { setAttr(d, "data-problem", problems.join("; ")); setAttr(d, "title", "problem: " + problems.join("; ")); }
    else if (d.dataset.problem !== undefined) { delete d.dataset.problem; d.removeAttribute("title"); }
    setText(d.parts.label, (bad ? "⚠ " : "") + LABEL[cls]);
    setText(d.parts.where, tileWhere(t)); // the division (and TSH's table) of this round's game here
    setAttr(d.parts.where, "title", tileWhereTitle(t));
    if (d.dataset.division !== t.division) d.dataset.division = t.division;
    const st = t.state;
    for (const side of [1, 2]) {
      const { row, name } = d.parts.rows[side - 1];
      const full = t.names[side - 1];
      setText(name, seatMark(t, side) + (shortName(full) || `Player ${side}`)); // ✓ checked in, ★ TSH's starter
      if (name.title !== full) name.title = full;
      const turn = turnSide(t) === side; // tilestate.js: the public page's too
      if (row.classList.contains("turn") !== turn) row.classList.toggle("turn", turn);
    }
    setText(d.parts.note, bad ? `problem: ${problems[0]}` : noteFor(t, cls));
    // the device's health problems: one line on the grid's tile (each named; all in its tooltip), in full in the detail
    setText(d.parts.health, t.health.length ? `⚡${t.health.length > 1 ? t.health.length + " " : " "}` + t.health.join(" · ") : "");
    setAttr(d.parts.health, "title", t.health.join("; "));
    if (t.health.length) setAttr(d, "data-health", t.health.join("; "));
    else if (d.dataset.health !== undefined) delete d.dataset.health;
    drawTimes(d, t);
  } catch (e) { // a defect of the page's own: shown on this tile, the others still drawn
    d.dataset.problem = `page error: ${e.message}`;
    setText(d.parts.note, `page error: ${e.message}`);
  }
}

// TSH writes "Surname, Given": a tile shows "Surname G" (the detail shows the whole name)
function shortName(full) {
  const m = full.match(/^([^,]+),\s*(\S)/);
  return m ? `${m[1]} ${m[2]}` : full;
}

// The tile's note: the state's words (tilestate.js's stateWords, the public page's too), then what
// only the director sees (a call, how a result was recorded, the penalties, the station).
function noteFor(t, cls) {
  const st = t.state;
  const words = stateWords(t, cls);
  if (cls === "offline") { // its Last Will: the times are its last state's, which a spare takes over
    return st && st.sentAt ? words : `${words} (last will): no state from it`; // times frozen: the tile's own look says so
  }
  if (t.call) return t.call; // a call for the director (paperless.js): before the rest
  if (t.twice) return t.twice; // a copied card beside the clock (docs/security.md "The paperless table")
  if (t.final) return finalText(t.final);
  if (t.clockOn && (!st || st.phase !== "ended")) { // this seat's game is not (or no longer) on the clock
    const on = `clock on ${t.clockOn.division ? t.clockOn.division + " " : ""}round ${t.clockOn.round}'s game`;
    return st ? `left unfinished: ${on}` : on;
  }
  if (cls === "finished" && t.result) {
    const pen = t.result.players.map((p) => p.penalty);
    return `${words}: ` + (pen.some((x) => x) ? `penalties ${pen.join(" / ")}` : "no penalties");
  }
  if (cls === "challenge" && t.challenge) return `${words} at ${t.challenge.station || "station"}`;
  return words;
}

function drawTimes(d, t) {
  const st = t.state;
  const players = st ? st.players : [];
  const recorded = !st && t.final && t.final.remaining_ms; // a recorded game the clock has left: its final times
  for (const side of [1, 2]) {
    const p = players.find((x) => x.player === side);
    const time = d.parts.rows[side - 1].time;
    if (!p) { setText(time, recorded ? clockText(recorded[side - 1]) : "–"); continue; }
    const ms = liveRemaining(st, p);
    const pen = Math.max(p.penalty, penaltySoFar(ms, st.rules));
    setText(time, clockText(ms));
    const tip = pen ? `penalty so far: ${pen}` : "";
    if (time.title !== tip) time.title = tip;
    if (time.classList.contains("over") !== ms <= -1000) time.classList.toggle("over", ms <= -1000);
    if (pen && st.phase !== "ended" && !st.frozen && !t.problems.length && !t.refused.length) setText(d.parts.note, `side ${side} overtime: −${pen} so far (5.3)`);
  }
}

// --- drawing only what is seen: a change within a tenth of a second, the times once a second -------
//
// A tile whose table changed (a press, a class, a problem) is drawn at the first frame after the
// next tenth of a second (needFrame), that tile alone (issue 28.4: a press is seen at once, not at
// the next second; p99 150 ms). The running times
// of the tiles on screen are drawn once a second, all in one frame, as of the console clock's
// whole second (shownAt): every time steps by exactly one second a tick, however late the timer
// fires. Nothing is drawn when nothing changed: no frame is asked for, and the page wakes once a
// second. Each tile is CSS-contained, nothing is written that did not change, and only the rows on
// screen (and one each side) are in the DOM (placeTiles), so a frame costs the changed tiles' style
// and paint and the browser's own pass over about 140 tiles, not 300 (docs/performance.md).

export const visible = new Set(); // tables whose tile is on screen
export const stale = new Set(); // tables whose tile is behind their data, drawn when seen
let detailStale = false;
export let sortPending = false;
let frameQueued = false; // a frame has been asked for (requestAnimationFrame), not yet drawn
let tickDue = false; // a new second: the next frame draws the times
let order = []; // the shown tables (their division on screen) in the grid's order: exceptions first
let grid = null; // the grid's geometry (fitTiles): columns, a row's height and pitch; null for a phone's list

function scheduleSort() { sortPending = true; needFrame(true); }

// Something to draw: at the browser's next frame, once however many changes come before it. A
// table's change (`held`) waits for the next tenth of a second of the console's clock (CHANGE_SLOT_MS)
// and shares that frame with every change before it, the last tenth's with the ticking times: a
// frame costs the browser about as much whatever it changes (docs/performance.md), and five
// presses a second on screen would otherwise be five frames. The scroll's tiles and the tick are
// drawn at once.
export const CHANGE_SLOT_MS = 100; // press to tile at most this (and a frame) late: issue 28.4's p99 is 150 ms
let slotTimer = 0;
function needFrame(held) {
  if (frameQueued) return;
  if (held) {
    if (!slotTimer) slotTimer = setTimeout(() => { slotTimer = 0; needFrame(); }, CHANGE_SLOT_MS - nowMs() % CHANGE_SLOT_MS);
    return;
  }
  if (slotTimer) { clearTimeout(slotTimer); slotTimer = 0; }
  frameQueued = true;
  requestAnimationFrame(frame);
}

// Still queued while it draws: a tile its own sort places (resort) is drawn by its own drawStale,
// and asks for no second frame.
function frame() {
  try { drawFrame(); } finally { frameQueued = false; }
}

function drawFrame() {
  if (tickDue) { // the times as of this second, set as they are drawn
    tickDue = false;
    lastSecond = Math.floor(nowMs() / 1000);
    shownAt = lastSecond * 1000;
    tick();
  }
  if (sortPending) resort();
  drawStale();
}

function drawStale() {
  for (const n of stale) {
    if (!visible.has(n)) continue;
    stale.delete(n);
    const t = tables.get(n);
    if (t) drawTile(tiles.get(n), t);
  }
  if (detailStale) drawDetailTile();
}

function resort() {
  sortPending = false;
  const list = [...tables.values()].map((t) => [ORDER.indexOf(t.cls), t.n]);
  list.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  order = list.map(([, n]) => n).filter((n) => !tiles.get(n).hidden);
  const counts = {};
  for (const t of tables.values()) counts[t.cls] = (counts[t.cls] || 0) + 1;
  setText($("counts"), ORDER.filter((c) => counts[c]).map((c) => `${counts[c]} ${LABEL[c].toLowerCase()}`).join(" · "));
  $("empty-hall").hidden = tables.size > 0; // an empty hall says where its tables come from, not a blank page
  fitTiles();
}

// Only the tiles on screen are in the grid (issue 28.4): a frame's cost is the browser's pass over
// the page (style, layout, layerizing every tile's paint, the commit), which grew with the 300
// tiles whether one changed or a hundred. The grid's rows are all the same height, so which tiles
// a scroll shows is arithmetic: the rows on screen and one more above and below are in the DOM
// (in the grid's order, moving only tiles out of place so it does not flicker), the rows above and
// below them are the grid's padding, and a tile is drawn when its row comes on screen. A hidden
// tile (another division's) stays in the DOM, hidden; a phone's list (tiles of their contents'
// height) keeps every tile and draws them all.
function placeTiles() {
  const main = $("tiles");
  let from = 0, to = order.length, seenFrom = 0, seenTo = order.length, above = 0, below = 0;
  if (grid && order.length) {
    const rows = Math.ceil(order.length / grid.cols);
    const top = main.offsetTop + 6; // the first row's top in the page (the grid's own padding: style.css)
    const y0 = window.scrollY - top, y1 = y0 + window.innerHeight;
    const first = Math.max(0, Math.floor(y0 / grid.pitch)), last = Math.min(rows, Math.ceil(y1 / grid.pitch));
    // a row is seen when any of it is on screen: its top above the screen's bottom, its bottom below its top
    const seenA = first + (first * grid.pitch + grid.row <= y0 ? 1 : 0);
    const seenB = Math.max(seenA, last);
    const a = Math.min(rows, Math.max(0, first - 1)), b = Math.max(a, Math.min(rows, last + 1));
    from = a * grid.cols; to = Math.min(order.length, b * grid.cols);
    seenFrom = seenA * grid.cols; seenTo = Math.min(order.length, seenB * grid.cols);
    above = a * grid.pitch; below = (rows - b) * grid.pitch;
  }
  setPx(main, "padding-top", 6 + above);
  setPx(main, "padding-bottom", 6 + below);
  let prev = null;
  for (let i = from; i < to; i++) {
    const d = tiles.get(order[i]);
    const at = prev ? prev.nextSibling : main.firstChild;
    if (d !== at) main.insertBefore(d, at);
    prev = d;
  }
  for (let e = prev ? prev.nextSibling : main.firstChild; e;) { // the rest: out of the grid, but a hidden tile stays
    const next = e.nextSibling;
    if (!e.hidden) e.remove();
    e = next;
  }
  for (const d of tiles.values()) if (d.hidden && d.parentNode !== main) main.append(d);
  const seen = new Set(order.slice(seenFrom, seenTo));
  for (const n of visible) if (!seen.has(n)) visible.delete(n);
  for (const n of seen) if (!visible.has(n)) { visible.add(n); stale.add(n); needFrame(); }
}

function setPx(e, name, px) { const v = `${px}px`; if (e.style.getPropertyValue(name) !== v) e.style.setProperty(name, v); }

// The tiles as large as the screen allows for this many tables, never smaller than the 100-table
// size (152 x 108 px, 12 x 9 on 1920 x 1080): 40 tables on 1920 px get tiles 1.5 times as wide,
// taller still, and times twice the size, legible from a few metres as the clock's own digits are.
// When the rows have room to spare ("stacked") each side's name takes a line of its own above its
// time, so a name is cut no more than a 100-table tile cuts it. A phone's list (under 700 px) is
// left alone.
function fitTiles() {
  const main = $("tiles");
  const n = tiles.size;
  let best = 1, rowScale = 1, bestCols = 0;
  if (n && window.innerWidth > 700) {
    const gap = 5, w = main.clientWidth - 12, h = window.innerHeight - document.querySelector("header").offsetHeight - 12;
    for (let cols = 1; cols <= n; cols++) {
      const rows = Math.ceil(n / cols);
      const sw = (w - gap * (cols - 1)) / cols / 152, sh = (h - gap * (rows - 1)) / rows / 108;
      if (Math.min(sw, sh) > best) { best = Math.min(sw, sh); rowScale = sh; bestCols = cols; }
    }
    best = Math.min(3, Math.floor(best * 20) / 20);
    rowScale = Math.max(best, Math.min(3 * 1.5, Math.floor(rowScale * 20) / 20));
  }
  const key = `${best} ${rowScale} ${bestCols}`;
  if (main.dataset.scale !== key) setScale(main, key, best, rowScale, bestCols);
  // the grid's geometry, as style.css lays it out: columns of at least 152 px x --s (or --cols of
  // them), rows of 108 px x --h, 5 px apart, inside 6 px of padding
  const h = stacked(best, rowScale) ? rowScale : best;
  const cols = () => best > 1 ? bestCols : Math.max(1, Math.floor((main.clientWidth - 12 + 5) / (152 * best + 5)));
  grid = window.innerWidth > 700 ? { cols: cols(), row: 108 * h, pitch: 108 * h + 5 } : null;
  placeTiles();
  if (grid && grid.cols !== cols()) { grid.cols = cols(); placeTiles(); } // the page's height brought (or took) a scroll bar
}

function stacked(best, rowScale) { return best > 1 && rowScale >= best * 1.2; }

function setScale(main, key, best, rowScale, bestCols) {
  const stacked = best > 1 && rowScale >= best * 1.2;
  main.dataset.scale = key;
  main.classList.toggle("stacked", stacked);
  main.style.setProperty("--s", String(best));
  main.style.setProperty("--cols", best > 1 ? String(bestCols) : "auto-fill");
  main.style.setProperty("--h", String(stacked ? rowScale : best));
  main.style.setProperty("--t", String(best > 1 ? best * (stacked ? 1.4 : 1.25) : 1));
  main.style.setProperty("--n", String(best > 1 ? 1 + (best - 1) * (stacked ? 0.8 : 0.4) : 1));
}
window.addEventListener("resize", () => fitTiles());
// The header wraps rather than cut (issue 35): when its height changes (a narrower window, a longer
// round or count), the drawers start below it and the tiles fit the rest. A ResizeObserver reports
// after the browser's layout, so this reads no layout of its own.
let headerH = 40;
new ResizeObserver((entries) => {
  const h = Math.round(entries[entries.length - 1].borderBoxSize[0].blockSize);
  if (h === headerH) return;
  headerH = h;
  document.documentElement.style.setProperty("--header-h", h + "px");
  fitTiles();
}).observe(document.querySelector("header"));
window.addEventListener("scroll", placeTiles, { passive: true });

// A clock repeats its state every few seconds with nothing new but the times, which the page
// computes itself: such a repeat changes the model, not the tile, so it costs no frame.
const lookOf = new WeakMap(); // model -> what its tile shows apart from the ticking times
function sameLook(before, t) {
  const st = t.state;
  const look = JSON.stringify([t.status, t.cls, t.names, t.checkin, t.call, t.problems, t.refused, t.challenge, t.held, t.result, t.final, t.division, t.label,
    t.tshTable, t.earlier, t.clockOn,
    st && [st.phase, st.running, st.seq, st.players.map((p) => [p.player, p.penalty, p.forfeit, p.absent])]]);
  lookOf.set(t, look);
  return !!before && lookOf.get(before) === look;
}

// A table's message: read it, class it, and draw it now if it is on screen (else when it is).
export function updateTable(raw, drawNow) {
  if (!isObj(raw)) return;
  const n = tableNumber(raw.table);
  if (n === null) { console.warn("a table message without a table number", raw.table); return; }
  rawTiles.set(n, raw); // a check-in redraws it (paperless.js)
  const t = readTable(raw);
  const before = tables.get(n);
  let cls;
  try { cls = classify(t); } catch (e) { cls = "waiting"; t.problems.push(`page error: ${e.message}`); }
  t.cls = cls;
  tables.set(n, t);
  const fresh = !tiles.has(n);
  const d = tiles.get(n) || makeTile(n);
  const hidden = !divisionShown(t); // set even off screen: a hidden tile is never seen to be drawn
  const shownNow = d.hidden !== hidden;
  if (shownNow) d.hidden = hidden;
  const same = sameLook(before, t); // its look kept also when drawn now (a snapshot's): its next repeat is one
  if (fresh || drawNow) drawTile(d, t); // a new tile is drawn once at once: its place in the grid is not known yet
  else if (!same) { stale.add(n); if (visible.has(n)) needFrame(true); }
  if (fresh || shownNow || !before || before.cls !== cls) scheduleSort();
  if (openTable === n) { detailStale = true; needFrame(true); }
}

// Once a second (a tile's time changes once a second): the classes time alone changes (overtime,
// not started) for every table, and the times of the tiles on screen.
function tick() {
  for (const t of tables.values()) {
    let cls;
    try { cls = classify(t); } catch (e) { continue; }
    if (cls !== t.cls) { t.cls = cls; stale.add(t.n); sortPending = true; }
  }
  for (const n of visible) {
    const t = tables.get(n);
    if (!t || stale.has(n)) continue;
    if (ticks(t.state)) drawTimes(tiles.get(n), t); // tilestate.js: the public page's too
  }
  if (openTable !== null) detailStale = true;
}

// The console clock's whole seconds: a timer for the next one (not a poll: a timer fires a little
// late, never early, and a poll would add its own period), its frame drawing the times as of it. A
// clock set back (the snapshot's skew, a time step) counts on from there.
export let lastSecond = 0; // the whole second (of the console's clock) the times on screen show
function nextSecond() {
  const now = nowMs();
  const second = Math.floor(now / 1000);
  if (second !== lastSecond) { tickDue = true; needFrame(); }
  setTimeout(nextSecond, 1000 - (now - second * 1000));
}
nextSecond();

// --- the event stream ---------------------------------------------------------------------------

// One handler a kind of event; a message the page cannot read is skipped with a line in the
// browser's console, and the stream goes on.
export function on(es, kind, fn) {
  es.addEventListener(kind, (e) => {
    try { fn(JSON.parse(e.data)); } catch (err) { console.error(`console page: a ${kind} event not shown:`, err); }
  });
}

function connect() {
  const es = stream.source = new EventSource("/api/events");
  on(es, "snapshot", (s) => {
    stream.id = typeof s.stream === "string" ? s.stream : null;
    if (openTable !== null) watchTable(openTable); // a new stream (a reconnect) watches nothing yet
    skewMs = Date.parse(s.server_now) - Date.now();
    if (Number.isNaN(skewMs)) skewMs = 0;
    lastSecond = Math.floor(nowMs() / 1000);
    shownAt = lastSecond * 1000;
    serverRules = readRules(s.rules, []);
    if (Array.isArray(s.lateness_endings)) latenessEndings = s.lateness_endings;
    $("hall").textContent = shown(s.hall);
    $("user").textContent = shown(s.user);
    setRound(s.round);
    setDivisions(s);
    setBroker(s.broker_up, s.broker_up ? "connected" : "connecting");
    paperlessSnapshot(s.paperless); // before the tiles: they show who checked in where
    for (const t of Array.isArray(s.tables) ? s.tables : []) updateTable(t, true);
    resort();
    $("feed-list").replaceChildren();
    for (const c of (Array.isArray(s.feed) ? s.feed : []).slice(0, PAGE_LIMITS.feed).reverse()) addFeed(c);
    document.body.dataset.ready = "1";
  });
  on(es, "table", (t) => updateTable(t));
  on(es, "rules", (r) => { serverRules = readRules(r.rules, []) || serverRules; }); // the rules page changed the event's
  // the open table's detail and history (watchTable): for the table the drawer shows, or none
  on(es, "detail", (d) => { if (isObj(d) && shownInDrawer(d.table)) showDetail(d); });
  on(es, "event", ({ table, event }) => { if (shownInDrawer(table)) addHistory(event); });
  on(es, "command", ({ table, command }) => { if (shownInDrawer(table)) addHistory({ ...command, kind: "command" }); });
  paperlessEvents(es); // check-in, calls, held slips (paperless.js)
  on(es, "ack", ({ table, ack, command }) => {
    const a = isObj(ack) ? ack : {};
    const what = isObj(command) ? shown(command.cmd) : "command";
    const ok = a.ok !== false && !a.refused;
    // the console's own commands (a pairing, a seat, a slip's outcome: paperless.py) go to the history only
    const own = isObj(command) && command.by === "console";
    if (!own) toast(`table ${shown(table)}: ${what} ${ok ? "acknowledged" : "REFUSED: " + shown(a.reason || a.error || "no reason given")}`, ok ? "ok" : "bad");
    if (shownInDrawer(table)) addHistory({ ...a, kind: "ack", command });
  });
  on(es, "challenge", (c) => {
    addFeed(c);
    // its per-word results follow: the open table's detail again (its stream), the result form left as typed
    const n = openTable;
    if (n != null && Number(c.table) === n) setTimeout(() => { if (openTable === n) watchTable(n); }, 300);
  });
  on(es, "divisions", setDivisions);
  on(es, "round", (r) => {
    setRound(r);
    setDivisions({ divisions, tsh_problems: tshProblems });
    for (const [n, d] of tiles) d.hidden = !divisionShown(tables.get(n));
    for (const t of tables.values()) { t.cls = classify(t); stale.add(t.n); }
    resort();
  });
  on(es, "broker", (b) => setBroker(b.up, b.why));
  on(es, "problem", (text) => toast(`the console refused a message: ${shown(text)}`, "bad")); // from a device it does not know
  es.onerror = () => setBroker(false, "console connection lost, retrying");
}

// A new stream in place of this page's (the console no longer knows it for this page): its
// snapshot draws the hall again and watches the open table.
function reconnect() {
  if (stream.source) stream.source.close();
  stream.id = null;
  connect();
}

function setBroker(up, why) {
  const b = $("broker");
  b.textContent = up ? "broker: connected" : `broker: ${shown(why)}`;
  b.className = up ? "up" : "down";
}

function setRound(r) {
  round = r;
  $("round").textContent = roundText(r);
}

// The round's game time in minutes, for a form: the round's (the snapshot always has it), else the
// event's rules (serverRules), never a copy of WESPA's here; empty before the snapshot.
function roundGameMinutes() {
  const ms = round.game_time_ms || (serverRules && serverRules.game_time_ms);
  return ms ? String(ms / 60000) : "";
}

export function timeOfDay(stamp) { // "hh:mm:ss " of a device's ISO time, or nothing
  const ms = typeof stamp === "string" ? Date.parse(stamp) : NaN;
  return Number.isNaN(ms) ? "" : new Date(ms).toTimeString().slice(0, 8) + " ";
}

export function addFeed(c) {
  if (!isObj(c)) return;
  const verdict = typeof c.verdict === "string" && c.verdict ? shown(c.verdict) : "";
  const li = el("li", "verdict-" + (verdict || "pending").toLowerCase().replace(/[^a-z]/g, ""));
  li.append(el("span", "", `${timeOfDay(c.time || c.sent_at)}${shown(c.station)}: `));
  const n = tableNumber(Number(c.table));
  const a = el("a", "", `table ${n ?? "?"}`);
  a.href = "#";
  a.addEventListener("click", (e) => { e.preventDefault(); if (n !== null) openDetail(n); });
  li.append(a, el("span", "", ` ${verdict || "in progress"}` + (isNum(c.word_count) ? ` (${c.word_count} words)` : "")));
  const list = $("feed-list");
  list.prepend(li);
  while (list.children.length > PAGE_LIMITS.feed) list.lastChild.remove();
  $("feed-count").textContent = list.children.length;
}

// --- requests -----------------------------------------------------------------------------------

export function toast(text, kind) {
  const t = el("div", "toast " + (kind || ""), text);
  const box = $("toasts");
  box.prepend(t);
  while (box.children.length > PAGE_LIMITS.toasts) box.lastChild.remove();
  setTimeout(() => t.remove(), 8000);
}

export function confirmBox(text) {
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
    const ofDivision = divisionTables(part); // a division's name: its tables this round (divisions.js)
    if (ofDivision) { for (const n of ofDivision) out.add(n); continue; }
    const m = part.match(/^(\d+)(?:-(\d+))?$/);
    if (!m) throw new Error(`"${part}" is not a table number, range or division`);
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

// Before a round's games start: the tables the readiness view (/api/ready) finds not ready, named
async function notReadyText(tables) {
  try {
    const r = await fetch("/api/ready", { credentials: "same-origin" });
    const v = await r.json();
    const rows = v.tables.filter((x) => !x.ready && tables.includes(x.table));
    return rows.length ? ` Not ready: ${rows.map((x) => `table ${x.table} (${x.why.map(shown).join("; ")})`).join(", ")}.` : "";
  } catch (e) { return ` The readiness view could not be read (${e.message}).`; }
}

async function sendCommand(body) {
  const warn = body.cmd === "new_game" ? await notReadyText(body.tables) : "";
  const ok = await confirmBox(`${DESCRIBE[body.cmd](body)} on ${tablesText(body.tables)}?${warn}`);
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
  $("cmd-game").value = roundGameMinutes();
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

let detailTile = null; // the open table's tile, drawn by drawTile as the grid's are

export function openDetail(n) {
  openTable = n;
  $("detail").hidden = false;
  $("feed").hidden = true;
  const t = tables.get(n);
  $("detail-title").firstChild.textContent = `Table ${n} ` + (t && t.tshTable ? `(TSH table ${t.tshTable}) ` : "") +
    (t && t.division ? `· division ${t.division} · round ${round.number} ` : "");
  resetResultForm();
  $("detail-history").replaceChildren();
  $("detail-challenges").replaceChildren();
  $("result-out").textContent = "";
  detailTile = tileDom(n);
  $("detail-tile").replaceChildren(detailTile);
  drawDetailTile();
  watchTable(n);
}

// The open table's history comes on the page's one stream (hub.py): the page says which table it
// watches (POST /api/events/ID/watch, ID from the snapshot), and the stream brings its detail as it
// is now, then each new entry; other pages never get it. The console applies watch requests as
// they arrive, so the page sends one at a time, in the order it made them (two in flight could
// leave the stream watching the table the drawer left). Asked again on a reconnect (a new stream)
// and for a challenge's per-word results; a stream the console does not know for this page (it
// ended, or it is another login's: a 410) is opened again, and its snapshot watches again; any other
// refusal (a table the console has yet to hear of) is asked again while the drawer shows that table.
function shownInDrawer(n) { return openTable !== null && n === openTable; }
// this page's stream: its id (the snapshot's `stream`) and its EventSource
export const stream = { id: null, source: null };
const WATCH_RETRY_MS = 3000;
export const WATCH_TIMEOUT_MS = 10000; // a request with no answer (a connection half dead after a sleep) holds up the next no longer
let watchChain = Promise.resolve(); // the watch requests, one after another
function sendWatch(table) {
  const sent = watchChain.then(() => {
    const id = stream.id; // the stream as it is when the request goes (a reconnect may have replaced it)
    if (id === null) return null;
    return post(`/api/events/${encodeURIComponent(id)}/watch`, { table }, { signal: AbortSignal.timeout(WATCH_TIMEOUT_MS) })
      .catch((e) => { throw Object.assign(e, { stream: id }); });
  });
  watchChain = sent.catch(() => {});
  return sent;
}

export async function watchTable(n) {
  if (stream.id === null || openTable !== n) return; // (the snapshot asks again once the stream is up)
  try {
    await sendWatch(n);
  } catch (e) {
    if (e.status === 410) { if (e.stream === stream.id) reconnect(); return; } // (a stream replaced since: its snapshot watches)
    setTimeout(() => { if (openTable === n) watchTable(n); }, WATCH_RETRY_MS);
  }
}

function closeDetail() {
  openTable = null;
  sendWatch(null).catch(() => {}); // (a stream gone watches nothing; no stream yet, nothing is sent)
}

function showDetail(d) {
  $("detail-history").replaceChildren();
  $("detail-challenges").replaceChildren();
  // the newest PAGE_LIMITS.history entries, oldest first: addHistory puts each on top
  const history = Array.isArray(d.history) ? d.history.slice(-PAGE_LIMITS.history) : [];
  for (const h of history) addHistory(h);
  for (const c of Array.isArray(d.challenges) ? d.challenges : []) {
    if (!isObj(c)) continue;
    const li = el("li", "", `${shown(c.station)}: ${shown(c.verdict || "in progress")}` + (c.lexicon ? ` (${shown(c.lexicon)})` : ""));
    const words = Array.isArray(c.word_results) ? c.word_results : [];
    if (words.length) {
      const ul = el("ul", "words");
      for (const w of words.slice(0, 64)) {
        if (!isObj(w)) continue;
        const ok = w.valid ?? w.acceptable ?? w.ok;
        ul.append(el("li", ok ? "valid" : "invalid", `${shown(w.word)}: ${ok ? "valid" : "not valid"}`));
      }
      li.append(ul);
    }
    $("detail-challenges").append(li);
  }
}

function drawDetailTile() {
  detailStale = false;
  const n = openTable;
  const t = tables.get(n);
  if (!t || !detailTile) return;
  drawTile(detailTile, t);
  // an arrival is recorded for a side whose lateness is being counted (2.3.3), never on a game
  // already running or finished
  const st = t.state;
  for (const p of [1, 2]) {
    const late = !!st && st.phase === "late" && st.players.some((x) => x.player === p && x.absent);
    document.querySelector(`#detail-actions [data-quick="arrive${p}"]`).hidden = !late;
  }
  // every table's game can be recorded: from its clock's result, or from the slip alone (no clock
  // record); a table with no TSH game by table. The form says which before anything is typed.
  $("detail-result").hidden = false;
  setText($("result-can"), recordText(t));
  $("no-clock-row").hidden = !!t.result;
  $("names-row").hidden = !!t.division;
  if (t.final) $("correction-row").hidden = false; // 5.4.1: a recorded result changes only as a correction, with its reason
  setText($("slip1-label"), t.names[0] || "Side 1");
  setText($("slip2-label"), t.names[1] || "Side 2");
  if (!t.result) {
    setText($("detail-clock-result"), "");
    const lateness = latenessEndings.includes($("slip-ending").value.split(":")[0]);
    $("margin-label").hidden = !lateness;
    if (lateness && !$("margin").value && serverRules) $("margin").value = serverRules.lateness_forfeit_margin;
  }
  if (t.result) {
    const r = t.result;
    setText($("detail-clock-result"), `${r.ending || "ended"}; ` + r.players.map((p) =>
      `side ${p.player}: ${clockText(p.remaining_ms)}, overtime ${p.overtime_s} s, penalty ${p.penalty}`).join("; ") +
      (r.forfeits.length ? `; forfeited by side ${r.forfeits.join(" and ")}` : "") +
      (r.lateness_margin ? `; lateness margin ${r.lateness_margin}` : ""));
    const lateness = latenessEndings.includes(r.ending);
    $("margin-label").hidden = !lateness;
    const rules = (t.state && t.state.rules) || serverRules;
    if (lateness && !$("margin").value) $("margin").value = r.lateness_margin || (rules ? rules.lateness_forfeit_margin : "");
  }
}

function historyText(h) {
  const p = [];
  const at = timeOfDay(h.at || h.sent_at);
  const f = (v) => (v === undefined || v === null ? "" : shown(Array.isArray(v) ? v.join(",") : v));
  if (h.kind === "command") return `${at}COMMAND ${f(h.cmd)} by ${f(h.by)}` + (h.reason ? ` (reason: ${f(h.reason)})` : "") + (h.player ? ` side ${f(h.player)}` : "") + (h.players ? ` sides ${f(h.players)}` : "");
  if (h.kind === "ack") return `${at}ack ${isObj(h.command) ? f(h.command.cmd) : f(h.id)}: ${h.ok === false ? "refused: " + f(h.reason) : "applied"}`;
  if (h.kind === "result") return `${at}RESULT: ${f(h.ending) || "ended"}` + (Array.isArray(h.forfeits) && h.forfeits.length ? `, forfeited by side ${f(h.forfeits).replace(",", " and ")}` : "");
  if (h.kind === "slip") return `${at}SLIP signed: ${f(h.scores).replace(",", "–")}, penalties ${f(h.penalties).replace(",", "/")}, players ${f(h.numbers)}`;
  if (h.kind === "challenge") return `${at || timeOfDay(h.time)}challenge at ${f(h.station)}: ${f(h.verdict) || "in progress"}`;
  const src = h.source === "hall" ? ` (director${h.by ? " " + f(h.by) : ""}${h.reason ? ", reason: " + f(h.reason) : ""})` : "";
  p.push(`${at}#${f(h.seq)} ${f(h.input) || "input"}`);
  if (h.player) p.push(` ${f(h.player)}`);
  if (h.players) p.push(` ${f(h.players)}`);
  if (isNum(h.remaining_ms)) p.push(` to ${clockText(h.remaining_ms)}`);
  if (isNum(h.number)) p.push(` number ${h.number}`); // a check-in (issue 27)
  if (h.call) p.push(` ${f(h.call)}`); // a call, and its answers
  return p.join("") + src;
}

// The open table's history, newest first, at most PAGE_LIMITS.history items (a flood of one
// table's events must not grow the page).
export function addHistory(h) {
  if (!isObj(h)) return;
  let text;
  try { text = historyText(h); } catch (e) { text = `an entry the page cannot show (${e.message})`; }
  const kind = typeof h.kind === "string" && /^[a-z]+$/.test(h.kind) ? h.kind : "input";
  const list = $("detail-history");
  list.prepend(el("li", "h-" + kind, text));
  while (list.children.length > PAGE_LIMITS.history) list.lastChild.remove();
}

// --- round & TSH (results, exports and the TSH import: divisions.js) ------------------------------

function openRound() {
  $("r-division").value = round.division;
  $("r-number").value = round.number;
  $("r-start").value = round.start ? new Date(round.start * 1000).toTimeString().slice(0, 5) : "";
  $("r-late").value = Math.round((round.late_after_s || 0) / 60);
  $("r-game").value = roundGameMinutes();
  $("round-out").textContent = "";
  $("round-dialog").showModal();
}

// --- wiring -------------------------------------------------------------------------------------

document.querySelectorAll(".drawer .close").forEach((b) => b.addEventListener("click", () => {
  b.closest(".drawer").hidden = true;
  if (b.closest("#detail")) closeDetail();
}));
$("open-feed").addEventListener("click", () => { $("feed").hidden = !$("feed").hidden; $("detail").hidden = true; closeDetail(); });
$("open-commands").addEventListener("click", () => openCommands());
$("open-results").addEventListener("click", openResults);
$("open-round").addEventListener("click", openRound);
$("tsh-problems").addEventListener("click", () => { openRound(); $("tsh-problem-list").parentElement.open = true; });
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
$("result-form").addEventListener("submit", submitResult); // submitResult, openResults, saveRound: divisions.js
$("slip-ending").addEventListener("change", drawDetailTile);
$("slip-table-open").addEventListener("click", openSlipTable);
$("show-division").addEventListener("change", (e) => showDivision(e.target.value));
$("logout").addEventListener("click", async () => { await post("/api/logout", {}); location.href = "/login"; });

csrfToken().then(connect);
