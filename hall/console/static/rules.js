// The event's rules page: /api/event-rules gives the rules, each key's label, clause and range (the
// clock's own rules table, hall.wire.eventrules.form) and the presets; nothing of them is written here.
// A save posts every value; the console checks them as [event] is and answers one line naming the key.
// After the event's first game has begun the console wants a confirmation and a reason (409 without).
import { clockText } from "./clocktext.js";
import { post } from "./request.js";
const $ = (id) => document.getElementById(id);
let view = null;

function allowed(f) {
  if (f.kind === "choice") return f.choices.map((c) => c.value).join(", ");
  if (f.kind === "duration") return `${clockText(f.low * 1000)} to ${clockText(f.high * 1000)} (M:SS)`;
  return `${f.low} to ${f.high}`;
}

function input(f, value) {
  let el;
  if (f.kind === "choice") {
    el = document.createElement("select");
    for (const c of f.choices) {
      const o = document.createElement("option");
      o.value = c.value; o.textContent = `${c.label} (${c.clause})`;
      el.append(o);
    }
  } else {
    el = document.createElement("input");
    el.size = 8;
    if (f.kind === "int") { el.type = "number"; el.min = f.low; el.max = f.high; el.step = 1; }
  }
  el.name = f.key; el.id = `rule-${f.key}`;
  el.value = String(value);
  return el;
}

function cell(content) {
  const td = document.createElement("td");
  td.append(content);
  return td;
}

function fill(values) {
  for (const f of view.fields) if (f.key in values) $(`rule-${f.key}`).value = String(values[f.key]);
}

function draw(v) {
  view = v;
  $("rules").querySelector("tbody").replaceChildren(...v.fields.map((f) => {
    const tr = document.createElement("tr");
    tr.dataset.key = f.key;
    const label = document.createElement("label");
    label.htmlFor = `rule-${f.key}`; label.textContent = f.label;
    tr.append(cell(label), cell(f.clause), cell(input(f, v.rules[f.key])), cell(allowed(f)));
    return tr;
  }));
  $("presets").replaceChildren(...Object.keys(v.presets).map((name) => {
    const b = document.createElement("button");
    b.type = "button"; b.textContent = `Fill in ${name.toUpperCase()}'s values`;
    b.addEventListener("click", () => fill(v.presets[name]));
    return b;
  }));
  $("confirm-box").hidden = !v.started;
  $("reason").maxLength = v.max_reason;
  const same = v.config && Object.keys(v.config).every((k) => v.config[k] === v.rules[k]);
  $("source").textContent = (v.config === null ? "" : same ? "As console.toml's [event] says. "
    : "Changed on this page since console.toml's [event] was read: these stay across a restart until [event] itself changes. ") +
    (v.started ? "The event's first game has begun." : "No game of the event has begun yet.");
  $("summary").textContent = `${v.rules.game_time} a player, ${v.rules.penalty_per_minute} points a minute of overtime`;
  document.body.dataset.ready = "1";
}

async function load() {
  try {
    const r = await fetch("/api/event-rules", { credentials: "same-origin" });
    if (r.status === 401) { location.href = "/login"; return; }
    draw(await r.json());
    $("error").textContent = "";
  } catch (e) { $("error").textContent = `cannot read /api/event-rules: ${e.message}`; }
}

$("rules-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const rules = {};
  for (const f of view.fields) {
    const value = $(`rule-${f.key}`).value.trim();
    rules[f.key] = f.kind === "int" && /^-?\d+$/.test(value) ? Number(value) : value; // the console says what is wrong
  }
  const body = { rules };
  if (view.started) { body.confirm = $("confirm").checked; body.reason = $("reason").value; }
  $("out").textContent = "";
  try {
    const v = await post("/api/event-rules", body);
    draw(v);
    $("confirm").checked = false; $("reason").value = "";
    $("error").textContent = "";
    $("out").textContent = v.changed ? "Saved: every new game from the console starts with these; games in progress keep theirs."
      : "Nothing changed.";
  } catch (e) {
    $("error").textContent = e.message;
    if (e.status === 409) { view.started = true; $("confirm-box").hidden = false; } // begun since drawn: the values stay
  }
});

load();
