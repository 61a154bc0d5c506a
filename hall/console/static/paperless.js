// The paperless table on the director's page (issue 27; hall/console/tableside/paperless.py): who checked in
// where (on each tile: a checked-in side's player, the starter TSH names marked), the calls from the
// tables (the incident queue: table, who called (the server's `who`: a side, the keypad, the
// buttons), since when, waiting for how long; apart from the challenges), the players at the wrong
// table, the signed slips held, and the one confirmation at the scheduled start that starts the
// absent sides at every table whose clock has a keypad and whose players have not all checked in
// (2.3.2(a), 2.3.3(a)); at a clock without one nobody checks in.
// A module app.js imports: it calls paperlessSnapshot, paperlessEvents, checkedIn, checkinConflict and seatMark.
// Every list is the server's, bounded there (checkin.MAX_WRONG, incidents.MAX_CALLS, signedslips.MAX_HELD).
import { $, confirmBox, el, isObj, nowMs, on, round, setText, shown, tableNumber, tables, textOf, timeOfDay, toast, updateTable } from "./app.js";
import { clockText } from "./clocktext.js";
import { post } from "./request.js";

const checkins = new Map(); // table -> {sides: {"1": {number, name, starter}}, starter}
let paperless = { calls: [], wrong_tables: [], held_slips: [], slips_setting: "record" };
export const rawTiles = new Map(); // table -> its last tile message (app.js's updateTable keeps it), to redraw on a check-in

export function paperlessSnapshot(p) {
  checkins.clear();
  if (!isObj(p)) return;
  for (const c of Array.isArray(p.checkins) ? p.checkins : []) if (isObj(c) && tableNumber(c.table) !== null) checkins.set(c.table, c);
  setPaperless(p);
}

export function paperlessEvents(es) {
  on(es, "checkin", (c) => {
    const n = isObj(c) ? tableNumber(c.table) : null;
    if (n === null) return;
    checkins.set(n, c);
    if (rawTiles.has(n)) updateTable(rawTiles.get(n));
  });
  on(es, "paperless", setPaperless);
}

// A table's open call, as its tile's note says it ("" for none)
export function openCall(n) {
  const c = paperless.calls.find((x) => x.table === n && x.status !== "resolved");
  if (!c) return "";
  return `CALL ${shown(c.who)}: ${c.status === "waiting" ? "waiting since " + timeOfDay(c.at).trim() : "acknowledged"}`;
}

function setPaperless(p) {
  if (!isObj(p)) return;
  const before = new Set(paperless.calls.map((c) => c.table));
  paperless = {
    calls: Array.isArray(p.calls) ? p.calls.filter(isObj) : [],
    wrong_tables: Array.isArray(p.wrong_tables) ? p.wrong_tables.filter(isObj) : [],
    held_slips: Array.isArray(p.held_slips) ? p.held_slips.filter(isObj) : [],
    slips_setting: typeof p.slips_setting === "string" ? p.slips_setting : "record",
  };
  drawIncidents();
  for (const c of paperless.calls) before.add(c.table);
  for (const n of before) if (rawTiles.has(n)) updateTable(rawTiles.get(n)); // their tiles' notes
}

// --- the tile: who sits where ----------------------------------------------------------------------

// The tile's names in the sides the players checked in at (whichever way round the clock was put,
// 1.4.5), and each side's mark: ✓ checked in, ★ the starter TSH names (2.1).
export function checkedIn(n, names) {
  const c = checkins.get(n);
  const sides = c && isObj(c.sides) ? c.sides : {};
  const marks = ["", ""];
  for (const side of [1, 2]) {
    const s = sides[String(side)];
    if (isObj(s)) marks[side - 1] = (s.starter === true ? "★" : "✓");
  }
  // the seat's names by side, as the console maps them (checkin.on_sides): the page maps nothing itself
  const out = c && Array.isArray(c.names) && c.names.length === 2 ? c.names.map((x) => textOf(x, "checkin.names", [])) : names.slice();
  return { names: out, marks };
}

// A check-in the clock refused because the other side holds that number (issue 40): the tile's note,
// "" for none. A player typed their opponent's number; the director sees which side and whose number.
export function checkinConflict(n) {
  const c = checkins.get(n);
  const x = c && isObj(c.conflict) ? c.conflict : null;
  if (!x) return "";
  const name = textOf(x.name, "checkin.conflict.name", []);
  return `CHECK-IN side ${shown(x.side)}: #${shown(x.number)}${name ? " " + name : ""} is checked in on side ${shown(x.held_by)}`;
}

export function seatMark(t, side) { return t.checkin && t.checkin.marks[side - 1] ? t.checkin.marks[side - 1] + " " : ""; }

// --- the incident queue ---------------------------------------------------------------------------

function waitedText(at) {
  const ms = typeof at === "string" ? Date.parse(at) : NaN;
  if (Number.isNaN(ms)) return "";
  return clockText(Math.max(0, Math.floor((nowMs() - ms) / 1000)) * 1000); // whole seconds waited, m:ss
}

function drawIncidents() {
  const open = paperless.calls.filter((c) => c.status !== "resolved");
  const waiting = open.filter((c) => c.status === "waiting").length;
  const b = $("open-calls");
  const parts = [`Calls ${open.length}`];
  if (paperless.wrong_tables.length) parts.push(`wrong table ${paperless.wrong_tables.length}`);
  if (paperless.held_slips.length) parts.push(`slips held ${paperless.held_slips.length}`);
  setText(b, parts.join(" · "));
  b.classList.toggle("warn", waiting > 0 || paperless.wrong_tables.length > 0);
  const list = $("call-list");
  list.replaceChildren();
  for (const c of paperless.calls.slice(0, 100)) {
    const li = el("li", "call " + shown(c.status));
    li.dataset.table = String(c.table);
    li.dataset.call = shown(c.call);
    const head = el("span", "what", `table ${tableNumber(c.table) ?? "?"} · ${shown(c.who)} · ${timeOfDay(c.at)}`);
    li.append(head);
    if (c.status === "resolved") {
      li.append(el("span", "status", ` resolved by ${shown(c.resolved_by)}: ${shown(c.reason)}`));
    } else {
      li.append(el("span", "waited", ` waiting ${waitedText(c.at)}`));
      li.append(el("span", "status", c.status === "acknowledged" ? ` acknowledged by ${shown(c.acked_by)}` : ""));
      const actions = el("span", "actions");
      if (c.status === "waiting") actions.append(button("Acknowledge", () => answerCall(c, "ack")));
      actions.append(button("Resolve…", () => resolveCall(c)));
      li.append(actions);
    }
    list.append(li);
  }
  const wrong = $("wrong-list");
  wrong.replaceChildren();
  for (const w of paperless.wrong_tables.slice(0, 100)) {
    const to = tableNumber(w.goes_to);
    wrong.append(el("li", "", `table ${tableNumber(w.table) ?? "?"} side ${shown(w.side)}: player ${shown(w.number)}` +
      (w.name ? ` (${shown(w.name)})` : "") + (to !== null ? ` plays at table ${to}` : " is not in this round's pairings")));
  }
  const held = $("held-list");
  held.replaceChildren();
  for (const h of paperless.held_slips.slice(0, 200)) {
    const s = isObj(h.slip) ? h.slip : {};
    const sc = Array.isArray(s.scores) ? s.scores.map(shown).join("–") : "?";
    const li = el("li", "", `table ${tableNumber(h.table) ?? "?"}: ${sc} signed; ${shown(h.why)} `);
    if (h.agrees === true) li.append(button("Record", () => heldSlip(h, "record")));
    li.append(button("Set aside…", () => heldSlip(h, "dismiss")));
    held.append(li);
  }
  $("paperless-empty").hidden = paperless.calls.length + paperless.wrong_tables.length + paperless.held_slips.length > 0;
}

function button(text, fn) {
  const b = el("button", "", text);
  b.type = "button";
  b.addEventListener("click", fn);
  return b;
}

async function answerCall(c, action, reason) {
  try {
    await post(`/api/call/${c.table}`, { call: c.call, action, reason });
    toast(`table ${c.table}: call ${action === "ack" ? "acknowledged" : "resolved"}`, "ok");
  } catch (e) { toast(`table ${c.table}: ${e.message}`, "bad"); }
}

function askReason(text) { // a reason, in the page's own dialog (recorded and journalled on the clock)
  return new Promise((resolve) => {
    const d = $("reason-dialog");
    $("reason-text").textContent = text;
    $("reason-input").value = "";
    d.onclose = () => resolve(d.returnValue === "ok" ? $("reason-input").value.trim() : null);
    d.showModal();
  });
}

async function resolveCall(c) {
  const reason = await askReason(`Resolve table ${c.table}'s call: the reason (audited, and journalled on the clock)`);
  if (reason === null) return;
  if (!reason) { toast("a call is resolved with a reason", "bad"); return; }
  answerCall(c, "resolve", reason);
}

async function heldSlip(h, action) {
  let reason;
  if (action === "dismiss") {
    reason = await askReason(`Set table ${h.table}'s signed slip aside: why (audited; record the result from the form)`);
    if (!reason) return;
  }
  try {
    await post(`/api/slip/${h.table}`, { game: h.slip.game, action, reason });
    toast(`table ${h.table}: slip ${action === "record" ? "recorded" : "set aside"}`, "ok");
  } catch (e) { toast(`table ${h.table}: ${e.message}`, "bad"); }
}

// --- the scheduled start: one confirmation for every absent side ------------------------------------

// Whether table n's clock has a keypad: its last tile message's state says so (the page's own
// reading of the state keeps only what the tile draws)
function hasKeypad(n) {
  const raw = rawTiles.get(n);
  return isObj(raw) && isObj(raw.state) && raw.state.keypad === true;
}

// Offered once the round's scheduled start has passed and a table of the round whose clock has a
// keypad is still in setup (the server says which sides: those not checked in).
function absentOffer() {
  const due = !!round.start && nowMs() >= round.start * 1000;
  const setup = [...tables].some(([n, t]) => t.division && t.state && t.state.phase === "setup" && t.status === "online" && hasKeypad(n));
  const b = $("start-absent");
  if (b.hidden !== !(due && setup)) b.hidden = !(due && setup);
}

async function startAbsent() {
  let plan;
  try {
    const r = await fetch("/api/start-absent", { credentials: "same-origin" });
    plan = await r.json();
  } catch (e) { toast(`the tables not checked in could not be read: ${e.message}`, "bad"); return; }
  const rows = Array.isArray(plan.tables) ? plan.tables.filter(isObj) : [];
  if (!rows.length) { toast("every table's players have checked in", "ok"); return; }
  const start = new Date(plan.start * 1000).toTimeString().slice(0, 5);
  const list = rows.map((x) => `table ${x.table} (${x.players.length === 2 ? "both sides" : "side " + x.players[0]})`).join(", ");
  const ok = await confirmBox(`Start the clocks of the absent players from the scheduled start (${start}) at ${rows.length} ` +
    `table(s): ${list}? (2.3.2(a), 2.3.3(a))`);
  if (!ok) return;
  try {
    const r = await post("/api/start-absent", { tables: rows.map((x) => x.table) });
    toast(`late start sent to ${r.sent.length} table(s)`, "ok");
  } catch (e) { toast(`not sent: ${e.message}`, "bad"); }
}

setInterval(() => {
  absentOffer();
  for (const li of document.querySelectorAll("#call-list li.call:not(.resolved)")) {
    const c = paperless.calls.find((x) => String(x.table) === li.dataset.table && x.call === li.dataset.call);
    const w = li.querySelector(".waited");
    if (c && w) setText(w, ` waiting ${waitedText(c.at)}`);
  }
}, 1000);

document.addEventListener("DOMContentLoaded", () => {
  $("open-calls").addEventListener("click", () => { $("calls").hidden = !$("calls").hidden; $("feed").hidden = true; });
  $("start-absent").addEventListener("click", startAbsent);
});
