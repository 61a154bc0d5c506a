// The readiness page: /api/ready every 2 s (the console's readiness.py decides what is ready), and
// the director's health thresholds (their names, ranges and meanings come from the server). The
// game time and the forfeit line are shown as a clock shows a time (clockText: clocktext.js, imported).
import { clockText } from "./clocktext.js";
import { post } from "./request.js";
const $ = (id) => document.getElementById(id);

function cell(text, cls) {
  const td = document.createElement("td");
  td.textContent = text;
  if (cls) td.className = cls;
  return td;
}

function known(v, unit) { return v === null || v === undefined ? "unknown" : `${v}${unit || ""}`; }

function row(r, hallVersion) {
  const tr = document.createElement("tr");
  tr.dataset.table = r.table;
  tr.className = r.ready ? "ready" : "not-ready";
  const names = Array.isArray(r.names) ? r.names : ["", ""];
  tr.append(cell(String(r.table)),
    cell(r.division ? `${names[0] || "?"} v ${names[1] || "?"}` + (r.players_known ? "" : " (not known)") : "no pairing"),
    cell(r.status || "never heard", r.online ? "" : "bad"),
    cell(known(r.version) + (r.version && hallVersion && r.version !== hallVersion ? " (differs)" : ""),
      r.version && hallVersion && r.version !== hallVersion ? "bad" : ""),
    cell(`${clockText(r.rules.game_time_ms)}, ${r.rules.penalty_per_minute}/min, forfeit at ${clockText(r.rules.forfeit_overtime_ms)}` +
      (r.rules_differ ? " (not the event's: its next game from the console runs the event's)" : "") +
      (r.rules_from_clock ? "" : " (the event's: no state yet)"), r.rules_differ ? "bad" : ""),
    cell(r.clock_synced === null || r.clock_synced === undefined ? "unknown" :
      r.clock_synced ? `synced${r.clock_offset_ms !== null ? `, offset ${r.clock_offset_ms} ms` : ""}` : "not synced",
      r.clock_synced === false ? "bad" : ""),
    cell(r.health_problems.length ? r.health_problems.join("; ") : (r.health ? "no problem" : "unknown"),
      r.health_problems.length ? "bad" : ""),
    // what blocks a start, and the notes, which do not (readiness.py decides which is which)
    cell((r.ready ? "ready" : "not ready: " + r.why.join("; ")) + (r.notes.length ? ` (note${r.notes.length > 1 ? "s" : ""}, not blocking: ${r.notes.join("; ")})` : ""),
      r.ready ? "good" : "bad"));
  return tr;
}

let thresholdsDrawn = false;
function drawThresholds(th, help) {
  if (thresholdsDrawn) return;
  thresholdsDrawn = true;
  const form = $("thresholds");
  for (const [k, v] of Object.entries(th)) {
    const label = document.createElement("label");
    label.textContent = `${help[k] || k} `;
    const input = document.createElement("input");
    input.name = k; input.value = v; input.size = 8; input.inputMode = "decimal";
    label.append(input);
    form.append(label, document.createElement("br"));
  }
  const save = document.createElement("button");
  save.type = "submit"; save.textContent = "Save thresholds";
  form.append(save);
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const body = {};
    for (const input of form.querySelectorAll("input")) body[input.name] = Number(input.value);
    try {
      await post("/api/health-thresholds", body);
      $("thresholds-out").textContent = "saved";
      refresh();
    } catch (e) { $("thresholds-out").textContent = e.message; }
  });
}

async function refresh() {
  try {
    const r = await fetch("/api/ready", { credentials: "same-origin" });
    if (r.status === 401) { location.href = "/login"; return; }
    const v = await r.json();
    const body = document.querySelector("#ready tbody");
    body.replaceChildren(...v.tables.map((x) => row(x, v.hall_version)));
    const versions = Object.entries(v.versions);
    $("versions").textContent = versions.length <= 1 ? `Version: ${versions.length ? versions[0][0] : "none known"} on every table heard`
      : "Versions differ: " + versions.map(([k, n]) => `${k} on ${n} table(s)`).join(", ");
    const e = v.event_rules; // the event's rules ([event]) and which tables' games run which (readiness.py)
    $("rules").textContent = `The event's rules (${e.preset}): ${e.game_time} a player, ${e.penalty_per_minute} points ` +
      `a minute of overtime, forfeit at ${e.forfeit_overtime} overtime, lateness margin ${e.lateness_forfeit_margin}, ` +
      `challenges ${e.challenge_rule}; a new game from the console starts with them. ` +
      v.rules_groups.map((g) => (g.event ? "Games on the event's rules" :
        `Games on other rules (${g.rules.penalty_per_minute}/min, forfeit at ${clockText(g.rules.forfeit_overtime_ms)} overtime)`) +
        `: table(s) ${g.tables.join(", ")}.`).join(" ");
    $("summary").textContent = `round ${v.round}: ` + (v.not_ready.length ? `${v.not_ready.length} of ${v.tables.length} table(s) not ready`
      : `all ${v.tables.length} table(s) ready`) + (v.with_notes.length ? `; ${v.with_notes.length} with notes that do not block a start` : "");
    document.querySelector("#stations tbody").replaceChildren(...(v.stations || []).map((s) => {
      const tr = document.createElement("tr");
      tr.dataset.station = s.station;
      tr.append(cell(s.station), cell(s.status || "never heard", s.status === "online" ? "" : "bad"), cell(known(s.version)),
        cell(s.health_problems.length ? s.health_problems.join("; ") : (s.health ? "no problem" : "unknown"), s.health_problems.length ? "bad" : ""));
      return tr;
    }));
    drawThresholds(v.thresholds, v.threshold_help);
    $("error").textContent = "";
    document.body.dataset.ready = "1";
  } catch (e) { $("error").textContent = `cannot read /api/ready: ${e.message}`; }
}

refresh();
setInterval(refresh, 2000);
