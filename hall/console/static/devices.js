// The Devices page: list what /api/devices says every 2 s; assign, replace, revoke and remove with
// the session's CSRF token. An assignment names the row's code (what the director reads off the
// device), never its id; a row whose code another row shows too is flagged and cannot be assigned. The highest table number comes from the server (max_table).
// Its "Update" section: upload a bundle, list /api/update's clocks every 2 s (version, game, last
// update), and send the update to the chosen ones or all; the size limit and the phases that
// count as a game in progress come from the server (max_bytes, in_progress).
import { post } from "./request.js";
let maxTable = null; // rows are drawn only once /api/devices has said
const body = document.querySelector("#devices tbody");
const error = document.getElementById("error");

function cell(text) {
  const td = document.createElement("td");
  td.textContent = text;
  return td;
}

// A device waiting for its number is on the broker as the join client (issue 35: it showed "—"):
// connected while its hello is there (its Last Will clears it)
function onlineText(d) {
  if (d.state === "waiting") return d.connected ? "connected, waiting for its number" : "—";
  return d.online ? "online" : "—";
}

function row(d) {
  const tr = document.createElement("tr");
  tr.dataset.device = d.device;
  tr.dataset.key = d.key;
  tr.dataset.state = d.state;
  if (d.clash) tr.classList.add("clash");
  const number = d.table ?? d.station ?? "";
  const asks = d.asks != null && d.table !== d.asks ? ` (asks for ${d.asks})` : "";  // its own menu's request
  const code = cell(d.code_text + (d.clash ? " — shown by two devices: remove the one not in front of you" : ""));
  code.className = "code";
  tr.append(code, cell(d.kind), cell(d.device), cell(d.state + asks), cell(String(number)),
            cell(onlineText(d)), cell(d.version), cell(d.address));
  const form = document.createElement("td");
  const input = document.createElement("input");
  input.className = "number";
  input.size = 4;
  input.setAttribute("aria-label", `number for ${d.device}`);
  if (d.kind === "clock") { input.type = "number"; input.min = 1; input.max = maxTable; }
  if (asks) input.value = d.asks;  // the director confirms it with Assign
  const replace = document.createElement("label");
  const box = document.createElement("input");
  box.type = "checkbox";
  box.className = "replace";
  replace.append(box, " replace");
  const go = document.createElement("button");
  go.type = "button";
  go.className = "assign";
  go.textContent = d.state === "enrolled" ? "Renumber" : "Assign";
  go.disabled = d.clash;
  go.addEventListener("click", () => act("/api/devices/assign",
    { code: d.code, number: input.value, replace: box.checked }, d.key));
  form.append(input, replace, go);
  const revoke = document.createElement("button");
  revoke.type = "button";
  revoke.className = "revoke";
  revoke.textContent = "Revoke";
  revoke.disabled = d.state !== "enrolled";
  revoke.addEventListener("click", () => {
    if (confirm(`Revoke ${d.device}? It is disconnected and refused until assigned again.`)) act("/api/devices/revoke", { device: d.key }, d.key);
  });
  const remove = document.createElement("button");
  remove.type = "button";
  remove.className = "remove";
  remove.textContent = "Remove";
  remove.addEventListener("click", () => {
    if (confirm(`Remove ${d.device} (code ${d.code_text})? It is revoked and no longer listed; a device still on says hello again.`)) {
      act("/api/devices/remove", { device: d.key }, d.key);
    }
  });
  const last = document.createElement("td");
  last.append(revoke, " ", remove);
  tr.append(form, last);
  return tr;
}

let editing = false;
body.addEventListener("focusin", () => { editing = true; });
body.addEventListener("focusout", () => { editing = false; });

async function act(path, payload, key) {
  error.textContent = "";
  try {
    await post(path, payload);
    editing = false;
    const tr = body.querySelector(`tr[data-key="${CSS.escape(key)}"]`);  // done: what was typed goes
    if (tr) { tr.querySelector("input.number").value = ""; tr.querySelector("input.replace").checked = false; }
    await refresh();
  } catch (e) {
    error.textContent = e.message;
  }
}

async function refresh() {
  const r = await fetch("/api/devices", { credentials: "same-origin" });
  if (r.status === 401) { location.href = "/login"; return; }
  const data = await r.json();
  if (!r.ok) { error.textContent = data.error || `devices: ${r.status}`; return; }
  maxTable = data.max_table;
  document.getElementById("hall").textContent = data.hall;
  const waiting = data.devices.filter((d) => d.state !== "enrolled").length;
  document.getElementById("counts").textContent = `${data.devices.length} device(s), ${waiting} waiting`;
  if (editing) return;  // never redraw under the director's typing
  // nor lose what was typed: a number (or a ticked "replace") left in a row while the director
  // looked elsewhere stays in that device's new row
  const typed = new Map();
  for (const tr of body.querySelectorAll("tr[data-key]")) {
    const input = tr.querySelector("input.number"), box = tr.querySelector("input.replace");
    if (input && (input.value !== input.defaultValue || box.checked)) typed.set(tr.dataset.key, [input.value, box.checked]);
  }
  const rows = data.devices.map(row);
  for (const tr of rows) {
    const kept = typed.get(tr.dataset.key);
    if (kept) { tr.querySelector("input.number").value = kept[0]; tr.querySelector("input.replace").checked = kept[1]; }
  }
  body.replaceChildren(...rows);
  document.body.dataset.ready = "1";
  document.body.dataset.redrawn = String(Number(document.body.dataset.redrawn || 0) + 1);  // for tests: the list was redrawn
}

// --- updates ---------------------------------------------------------------------------------------
const clocks = document.querySelector("#clocks tbody");
const updateResult = document.getElementById("update-result");
const chosen = new Set();
let maxBundleBytes = 0;

function outcomeText(u) {
  if (!u) return "—";
  return `${u.outcome} ${u.version}${u.why ? `: ${u.why}` : ""}`;
}

function clockRow(t, inProgress) {
  const tr = document.createElement("tr");
  tr.dataset.table = t.table;
  if (t.update) tr.dataset.outcome = t.update.outcome;
  const pick = document.createElement("td");
  const box = document.createElement("input");
  box.type = "checkbox";
  box.className = "choose";
  box.setAttribute("aria-label", `choose table ${t.table}`);
  box.checked = chosen.has(t.table);
  box.addEventListener("change", () => { if (box.checked) chosen.add(t.table); else chosen.delete(t.table); });
  pick.append(box);
  const game = t.phase ? t.phase + (inProgress.includes(t.phase) ? " (in progress)" : "") : "—";
  tr.append(pick, cell(String(t.table)), cell(t.online ? "online" : "—"), cell(t.version || "—"), cell(game),
            cell(outcomeText(t.update)));
  return tr;
}

async function refreshUpdates() {
  const r = await fetch("/api/update", { credentials: "same-origin" });
  if (r.status === 401) { location.href = "/login"; return; }
  const data = await r.json();
  if (!r.ok) { updateResult.textContent = data.error || `update: ${r.status}`; return; }
  maxBundleBytes = data.max_bytes;
  const b = data.bundle;
  document.getElementById("bundle").textContent = b
    ? `On offer: rackside ${b.version} (${(b.size / 1e6).toFixed(1)} MB, SHA-256 ${b.sha256})` : "No bundle uploaded.";
  clocks.replaceChildren(...data.tables.map((t) => clockRow(t, data.in_progress)));
  document.getElementById("update").dataset.ready = "1";
}

document.getElementById("upload").addEventListener("submit", async (e) => {
  e.preventDefault();
  const file = document.getElementById("bundle-file").files[0];
  const sha = document.getElementById("bundle-sha256").value.trim();
  if (!file) { updateResult.textContent = "choose the bundle file"; return; }
  if (maxBundleBytes && file.size > maxBundleBytes) {
    updateResult.textContent = `${file.name} is over ${maxBundleBytes} bytes`;
    return;
  }
  updateResult.textContent = `uploading ${file.name} ...`;
  try {
    const answer = await post("/api/update/bundle", file, { headers: { "X-Bundle-SHA256": sha } });
    updateResult.textContent = `uploaded rackside ${answer.version}`;
  } catch (err) {
    updateResult.textContent = err.message;
  }
  await refreshUpdates();
});

async function sendUpdate(tables) {
  try {
    const betweenRounds = document.getElementById("between-rounds").checked;
    const answer = await post("/api/update/send", { tables, between_rounds: betweenRounds });
    // a clock running a newer version is refused until the director confirms the downgrade by name
    // (issue 36): the confirmation sends allow_downgrade for those tables alone, and it is audited
    const older = answer.refused.filter((x) => x.downgrade).map((x) => x.table);
    if (older.length && confirm(`Tables ${older.join(", ")} run a newer version than this bundle. ` +
                                "Downgrade them to it? (audited)")) {
      const again = await post("/api/update/send", { tables: older, between_rounds: betweenRounds, allow_downgrade: true });
      answer.sent.push(...again.sent);
      answer.refused = answer.refused.filter((x) => !x.downgrade).concat(again.refused);
    }
    const sent = answer.sent.map((s) => s.table).join(", ") || "none";
    const refused = answer.refused.map((x) => `table ${x.table}: ${x.why}`).join("; ");
    updateResult.textContent = `sent to tables ${sent}${refused ? `; refused: ${refused}` : ""}`;
  } catch (err) {
    updateResult.textContent = err.message;
  }
  await refreshUpdates();
}

document.getElementById("update-chosen").addEventListener("click", () => {
  if (!chosen.size) { updateResult.textContent = "choose the tables to update"; return; }
  sendUpdate([...chosen].sort((a, b) => a - b));
});
document.getElementById("update-all").addEventListener("click", () => {
  if (confirm("Update every clock?")) sendUpdate("all");
});

refresh();
setInterval(refresh, 2000);
refreshUpdates();
setInterval(refreshUpdates, 2000);
