// Every division in one hall (issue 18): the page's part. A module app.js imports; it imports app.js's
// functions and state (tables, round, confirmBox, ...) in turn, which it uses only when called. Each tile, dialog, result form
// and export names its division; the director shows one division or all (the header's "Show").
// Results are recorded on the console (a store on disk), never kept by the page.
import { $, confirmBox, el, latenessEndings, openDetail, openTable, round, serverRules, shown, tables, toast, updateTable } from "./app.js";
import { post } from "./request.js";
import { recordedText } from "./tilestate.js";
import { drawView } from "./viewtable.js";

export let divisions = []; // [{name, players, rounds, problems}] from the console
export let tshProblems = []; // what the console could not place (each names its file and line)

// --- what the console says about the divisions -------------------------------------------------

export function setDivisions(v) {
  if (!v || typeof v !== "object") return;
  divisions = Array.isArray(v.divisions) ? v.divisions.filter((d) => d && typeof d.name === "string").slice(0, 100) : [];
  tshProblems = Array.isArray(v.tsh_problems) ? v.tsh_problems.filter((p) => typeof p === "string").slice(0, 500) : [];
  const sel = $("show-division");
  const want = round.division || "";
  sel.replaceChildren(el("option", "", "all divisions"));
  sel.firstChild.value = "";
  for (const d of divisions) {
    const o = el("option", "", `division ${shown(d.name)}`);
    o.value = d.name;
    sel.append(o);
  }
  sel.value = divisions.some((d) => d.name === want) ? want : "";
  const p = $("tsh-problems");
  p.hidden = tshProblems.length === 0;
  p.textContent = `⚠ ${tshProblems.length} TSH problem${tshProblems.length === 1 ? "" : "s"}`;
  p.title = tshProblems.slice(0, 20).join("\n");
  const list = $("tsh-problem-list");
  list.replaceChildren(...tshProblems.map((x) => el("li", "", shown(x))));
  // each division with its Remove (issue 35: an import added divisions and none could be removed)
  $("division-list").replaceChildren(...divisions.map((d) => {
    const li = el("li", "", `division ${shown(d.name)}: ${Number(d.players) || 0} players `);
    li.dataset.division = d.name;
    const b = el("button", "remove-division", "Remove");
    b.type = "button";
    b.addEventListener("click", () => removeDivision(d.name));
    li.append(b);
    return li;
  }));
  if (!divisions.length) $("division-list").append(el("li", "", "none imported"));
}

async function removeDivision(name) {
  if (!confirm(`Remove division ${name} from this event? Its TSH files stay kept (import it again to bring it back); ` +
    "a division with a recorded result cannot be removed. The audit keeps who and when.")) return;
  try {
    setDivisions(await post("/api/division/remove", { division: name, reason: "removed on the console's page" }));
    $("round-out").textContent = `division ${name} removed`;
  } catch (e) { $("round-out").textContent = e.message; }
}

export function roundText(r) {
  const start = r.start ? new Date(r.start * 1000).toTimeString().slice(0, 5) : "no start set";
  return `${r.division ? "division " + shown(r.division) : "all divisions"} · round ${shown(r.number)} · start ${start}`;
}

// A tile is on screen when it shows every division, or its own.
export function divisionShown(t) { return !round.division || !t.division || t.division === round.division; } // a table with no TSH game stays

// The note of a recorded result: a forfeit says who lost and by how much (TSH records it as one).
export function finalText(f) {
  const mark = (f.no_clock ? " (no clock record)" : "") + (f.signed ? " · signed" : ""); // from the slip alone; signed at the clock
  // recordedText (tilestate.js): what the public page says too
  return recordedText(f) + (f.decision && !(f.forfeits && f.forfeits.length) ? " (director)" : "") + mark;
}

// "B · 12": the division and TSH's table for the board (its `tables`); a TSH table that starts with
// the division's name ("A4" in division A, as TSH events name them) says both, in the little room
// a tile's head has. The tile's title says it in full.
export function tileWhere(t) {
  if (!t.division) return "";
  if (!t.tshTable) return t.division;
  return t.tshTable.toLowerCase().startsWith(t.division.toLowerCase()) ? t.tshTable : `${t.division} · ${t.tshTable}`;
}

export function tileWhereTitle(t) {
  return t.division ? `division ${t.division}` + (t.tshTable ? `, TSH table ${t.tshTable}` : "") : "";
}

function tableText(n, t) { // "table 1 (TSH table A4)": the clock's number and TSH's own, where TSH has one
  return `table ${n}` + (t && t.tshTable ? ` (TSH table ${t.tshTable})` : "");
}

// A division's tables this round, for the command dialog ("B" for all of division B's), or null.
export function divisionTables(word) {
  const d = divisions.find((x) => x.name.toLowerCase() === String(word).toLowerCase());
  if (!d || /^\d+$/.test(word)) return null;
  const out = [...tables.values()].filter((t) => t.division === d.name).map((t) => t.n);
  if (!out.length) throw new Error(`division ${d.name} has no tables this round`);
  return out;
}

// "tables 1, 2 (division A) and 3 (division B)": what a command dialog asks to confirm.
export function tablesText(list) {
  const groups = new Map();
  for (const n of list) {
    const t = tables.get(n);
    const key = t && t.division ? t.division : "";
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(n);
  }
  const parts = [...groups].map(([div, ns]) => ns.join(", ") + (div ? ` (division ${div})` : ""));
  return `table${list.length > 1 ? "s" : ""} ${parts.join(" and ")}`;
}

export async function showDivision(name) {
  try { await post("/api/round", { division: name }); } catch (e) { toast(`not changed: ${e.message}`, "bad"); }
}

// --- the result form ---------------------------------------------------------------------------

// What the form can record for this table, and why, said before anything is typed or confirmed:
// from the clock's result or from the slip alone (no clock record), for TSH's game or by table.
export function recordText(t) {
  const rules = (t.state && t.state.rules) || serverRules;
  const parts = [];
  if (t.division) parts.push(`Division ${t.division} round ${round.number}: ${t.names.join(" v ")}.`);
  else parts.push(`No TSH game is seated at this table in round ${round.number}: the result is recorded by table ` +
    "(player names optional) and exported as CSV; TSH's score entry needs TSH files (config.tsh with its .t files, or tourney.js: Round & TSH).");
  if (t.result) parts.push("From the clock's result: type the two scores from the slip; the clock's time penalties are applied (5.3).");
  else {
    if (t.clockOn) { // the clock plays another round's game (hallstate.Bound): its result is that round's
      const other = `${t.clockOn.division ? t.clockOn.division + " " : ""}round ${t.clockOn.round}`;
      parts.push(`This table's clock is on ${other}'s game: the result it gives is ${other}'s, recorded with that round on screen.`);
    }
    const pen = rules ? ` (${rules.penalty_per_minute} points a minute or part thereof of overtime, 0 to ` +
      `${Math.ceil(rules.forfeit_overtime_ms / 60000) * rules.penalty_per_minute}: 5.3, 5.3.3)` : "";
    parts.push("No clock result for this game (a clock that broke, no clock at this table, a lost journal): it is recorded " +
      'from the result slip alone (5.4.1) and marked "no clock record". The reason is required and kept in the audit; ' +
      `type any time penalty written on the slip${pen}.`);
    const st = t.state;
    if (st && st.phase && st.phase !== "ended" && t.status !== "offline") {
      parts.push(`This table's clock is still in its game (${st.phase}): its result is due from the clock; use the slip only if the clock cannot give one.`);
    }
  }
  if (t.final) parts.push(`Already ${finalText(t.final)}: a change is a correction and needs its reason (5.4.1).`);
  return parts.join(" ");
}

// A typed penalty: empty is none; anything but digits goes as typed, for the console to refuse by name.
function typedPenalty(v) { v = v.trim(); return v === "" ? 0 : /^\d+$/.test(v) ? Number(v) : v; }

function resultBody() {
  const t = tables.get(openTable);
  const body = {};
  let lateness;
  if (t.result) lateness = latenessEndings.includes(t.result.ending);
  else { // no clock record: the slip says how the game ended and the penalties (results.slip_result checks them)
    const [ending, side] = $("slip-ending").value.split(":");
    lateness = latenessEndings.includes(ending);
    body.no_clock = { reason: $("no-clock-reason").value, ending,
      penalties: [typedPenalty($("slip-pen1").value), typedPenalty($("slip-pen2").value)] };
    if (side) body.no_clock.forfeit = Number(side);
  }
  if (!t.division) body.names = [$("name1").value, $("name2").value]; // recorded by table
  if (!lateness) body.slip = [$("slip1").value, $("slip2").value];
  else body.margin = $("margin").value;
  if (!$("decision-row").hidden) {
    body.decision = { reason: $("decision-reason").value };
    if ($("decision1").value !== "" || $("decision2").value !== "") body.decision.scores = [$("decision1").value, $("decision2").value];
  }
  if (!$("correction-row").hidden && $("correction").value.trim()) body.correction = $("correction").value;
  return body;
}

function outcomeText(p) {
  if (p.forfeits.length === 1) return `side ${p.forfeits[0]} forfeits: ${p.scores[0]} / ${p.scores[1]} (TSH forfeit, not rated)`;
  return `${p.scores[0]} – ${p.scores[1]}`;
}

export async function submitResult(ev) {
  ev.preventDefault();
  const n = openTable;
  const t = tables.get(n);
  const body = resultBody();
  const where = t.division ? `division ${t.division} round ${round.number}, ` : `round ${round.number}, by `;
  try {
    const p = await post(`/api/result/${n}`, body); // worked out, not recorded: every refusal comes before the confirmation
    if (p.needs_director && !body.decision) {
      $("decision-row").hidden = false; // 5.3.3 / 2.3.5: no result without the director's decision
      $("result-out").textContent = `${p.note}. The director decides: type the recorded scores and a reason.`;
      return;
    }
    const ok = await confirmBox(`Record ${where}${tableText(n, t)}${p.no_clock ? " (no clock record)" : ""}: ${outcomeText(p)}? ${p.note}`);
    if (!ok) return;
    const r = await post(`/api/result/${n}`, { ...body, confirm: true });
    $("result-out").textContent = `recorded ${outcomeText(r)}` + (r.recorded === "correct" ? " (corrected)" : "") +
      (r.no_clock ? " (no clock record)" : "");
  } catch (e) {
    if (/correction needs a reason/.test(e.message)) $("correction-row").hidden = false;
    $("result-out").textContent = e.message;
  }
}

export function resetResultForm() {
  $("decision-row").hidden = true;
  $("correction-row").hidden = true;
  for (const id of ["decision1", "decision2", "decision-reason", "correction", "no-clock-reason", "slip-pen1", "slip-pen2",
    "name1", "name2", "margin"]) $(id).value = "";
  $("slip-ending").value = "end";
}

// --- results and exports, per division ---------------------------------------------------------

// The round's recorded results as the console has them: the same view as the CSV (GET /api/results,
// results.round_view), drawn by viewtable.js; a click on a row opens its table. The games whose
// clock has a result nobody has typed yet are named below it (from the tiles).
export async function openResults() {
  const rn = round.number;
  $("results-round").textContent = `round ${rn}` + (round.division ? `, division ${round.division}` : ", every division");
  const q = `?round=${encodeURIComponent(rn)}` + (round.division ? `&division=${encodeURIComponent(round.division)}` : "");
  try {
    const r = await fetch("/api/results" + q, { credentials: "same-origin" });
    const view = await r.json();
    if (!r.ok) throw new Error(view.error || `HTTP ${r.status}`);
    drawView($("results-table"), view, { text: shown, onRow: (row) => { $("results").close(); openDetail(row.table); } });
  } catch (e) {
    $("results-table").replaceChildren();
    toast(`results not shown: ${e.message}`, "bad");
  }
  const waiting = [...tables.entries()].filter(([, t]) => t.result && !t.final && divisionShown(t)).map(([n]) => n).sort((a, b) => a - b);
  $("results-waiting").textContent = waiting.length ? `A clock result to type: ${tablesText(waiting)}.` : "";
  const links = $("export-links");
  links.replaceChildren();
  for (const d of divisions) {
    if (round.division && d.name !== round.division) continue;
    const q = `?division=${encodeURIComponent(d.name)}&round=${encodeURIComponent(rn)}`;
    const li = el("li", "", `division ${d.name}: `);
    const csv = el("a", "", "CSV");
    csv.href = "/api/export/round.csv" + q;
    csv.dataset.division = d.name;
    const tsh = el("a", "", "TSH score entry");
    tsh.href = "/api/export/tsh.txt" + q;
    tsh.dataset.division = d.name;
    li.append(csv, " · ", tsh);
    links.append(li);
  }
  // games with no TSH game (a hall without TSH files, a table TSH does not seat): recorded by table,
  // CSV only; TSH's score entry needs TSH's player numbers, so it says what it needs
  if (!divisions.length || [...tables.values()].some((t) => !t.division && t.final)) {
    const li = el("li", "", "recorded by table (no TSH game): ");
    const csv = el("a", "", "CSV");
    csv.href = `/api/export/round.csv?by=table&round=${encodeURIComponent(rn)}`;
    li.append(csv, " · TSH score entry: needs TSH files (config.tsh with its .t files, or tourney.js), imported under Round & TSH, " +
      "for the players' TSH numbers");
    links.append(li);
  }
  $("results").showModal();
}

// A table the console has never heard of (no clock, no TSH game): a tile on this page only, for its
// slip; the console knows the table once that result is recorded (and says "no such table" past its limit).
export function openSlipTable() {
  const n = Number($("slip-table").value.trim());
  if (!Number.isSafeInteger(n) || n < 1) { toast("type the table's number", "bad"); return; }
  if (!tables.has(n)) updateTable({ table: n }, true);
  $("results").close();
  openDetail(n);
}

// --- round & TSH -------------------------------------------------------------------------------

function bytesToBase64(buf) {
  const bytes = new Uint8Array(buf);
  let s = "";
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

export async function saveRound(ev) {
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
    const files = [...$("r-tsh").files];
    if (files.length) { // the bytes as on disk: TSH's .t files are ISO-8859-1 unless config.tsh says otherwise
      const sent = await Promise.all(files.map(async (f) => ({ name: f.name, data: bytesToBase64(await f.arrayBuffer()) })));
      const r = await post("/api/tsh", { files: sent });
      $("round-out").textContent = r.divisions.map((d) => `${d.name}: ${d.players} players`).join(", ") +
        (r.problems.length ? ` — ${r.problems.length} problem(s): ${r.problems.slice(0, 5).join("; ")}` : "");
    }
    await post("/api/round", body);
    if (!files.length) $("round-dialog").close();
  } catch (e) {
    $("round-out").textContent = e.message;
  }
}
