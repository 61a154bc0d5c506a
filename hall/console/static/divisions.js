// Every division in one hall (issue 18): the page's part. Loaded before app.js, whose functions and
// state (tables, round, post, confirmBox, ...) these use when called. Each tile, dialog, result form
// and export names its division; the director shows one division or all (the header's "Show").
// Results are recorded on the console (a store on disk), never kept by the page.
"use strict";

let divisions = []; // [{name, players, rounds, problems}] from the console
let tshProblems = []; // what the console could not place (each names its file and line)

// --- what the console says about the divisions -------------------------------------------------

function setDivisions(v) {
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
}

function roundText(r) {
  const start = r.start ? new Date(r.start * 1000).toTimeString().slice(0, 5) : "no start set";
  return `${r.division ? "division " + shown(r.division) : "all divisions"} · round ${shown(r.number)} · start ${start}`;
}

// A tile is on screen when it shows every division, or its own.
function divisionShown(t) { return !round.division || !t.division || t.division === round.division; } // a table with no TSH game stays

// The note of a recorded result: a forfeit says who lost and by how much (TSH records it as one).
function finalText(f) {
  if (f.forfeits && f.forfeits.length === 1) return `recorded: forfeit by side ${f.forfeits[0]}, ${Math.abs(f.scores[0])} (not rated)`;
  if (f.forfeits && f.forfeits.length === 2) return `recorded: both forfeited, ${f.scores[0]} / ${f.scores[1]}`;
  return `recorded ${f.scores[0]}–${f.scores[1]}` + (f.decision ? " (director)" : "");
}

function tileWhere(t) { // "A · A4" : the division and TSH's table for the board
  if (!t.division) return "";
  return t.label && !/^board /.test(t.label) ? `${t.division} · ${t.label}` : t.division;
}

// A division's tables this round, for the command dialog ("B" for all of division B's), or null.
function divisionTables(word) {
  const d = divisions.find((x) => x.name.toLowerCase() === String(word).toLowerCase());
  if (!d || /^\d+$/.test(word)) return null;
  const out = [...tables.values()].filter((t) => t.division === d.name).map((t) => t.n);
  if (!out.length) throw new Error(`division ${d.name} has no tables this round`);
  return out;
}

// "tables 1, 2 (division A) and 3 (division B)": what a command dialog asks to confirm.
function tablesText(list) {
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

async function showDivision(name) {
  try { await post("/api/round", { division: name }); } catch (e) { toast(`not changed: ${e.message}`, "bad"); }
}

// --- the result form ---------------------------------------------------------------------------

function resultBody() {
  const t = tables.get(openTable);
  const lateness = latenessEndings.includes(t.result && t.result.ending);
  const body = {};
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

async function submitResult(ev) {
  ev.preventDefault();
  const n = openTable;
  const t = tables.get(n);
  const body = resultBody();
  const where = t.division ? `division ${t.division} round ${round.number}, ` : "";
  try {
    const p = await post(`/api/result/${n}`, body);
    if (p.needs_director && !body.decision) {
      $("decision-row").hidden = false; // 5.3.3 / 2.3.5: no result without the director's decision
      $("result-out").textContent = `${p.note}. The director decides: type the recorded scores and a reason.`;
      return;
    }
    const ok = await confirmBox(`Record ${where}table ${n}: ${outcomeText(p)}? ${p.note}`);
    if (!ok) return;
    const r = await post(`/api/result/${n}`, { ...body, confirm: true });
    $("result-out").textContent = `recorded ${outcomeText(r)}` + (r.recorded === "correct" ? " (corrected)" : "");
    $("correction-row").hidden = true;
  } catch (e) {
    if (/correction needs a reason/.test(e.message)) $("correction-row").hidden = false;
    $("result-out").textContent = e.message;
  }
}

function resetResultForm() {
  $("decision-row").hidden = true;
  $("correction-row").hidden = true;
  for (const id of ["decision1", "decision2", "decision-reason", "correction"]) $(id).value = "";
}

// --- results and exports, per division ---------------------------------------------------------

function openResults() {
  const rn = round.number;
  $("results-round").textContent = `round ${rn}` + (round.division ? `, division ${round.division}` : ", every division");
  const body = $("results-table").querySelector("tbody");
  body.replaceChildren();
  for (const [n, t] of [...tables.entries()].sort((a, b) => a[0] - b[0])) {
    if (!t.result && !t.final) continue;
    if (!divisionShown(t)) continue;
    const tr = el("tr");
    const pen = t.result ? t.result.players.map((p) => p.penalty || 0).join(" / ") : "";
    tr.append(el("td", "", String(n)), el("td", "", t.division || ""), el("td", "", t.names.join(" v ")),
      el("td", "", t.result ? `${t.result.ending || "ended"}, penalties ${pen}` : ""),
      el("td", "", t.final ? finalText(t.final) : "to type"));
    tr.addEventListener("click", () => { $("results").close(); openDetail(n); });
    body.append(tr);
  }
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
  $("results").showModal();
}

// --- round & TSH -------------------------------------------------------------------------------

function bytesToBase64(buf) {
  const bytes = new Uint8Array(buf);
  let s = "";
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
  return btoa(s);
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
