// The Devices page: list what /api/devices says every 2 s; assign, replace and revoke with the
// session's CSRF token. The highest table number comes from the server (max_table).
"use strict";
let csrf = null;
let maxTable = 999;
const body = document.querySelector("#devices tbody");
const error = document.getElementById("error");

async function post(path, payload) {
  if (!csrf) csrf = (await (await fetch("/api/csrf", { credentials: "same-origin" })).json()).csrf;
  const r = await fetch(path, {
    method: "POST",
    credentials: "same-origin",
    headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
    body: JSON.stringify(payload),
  });
  const answer = await r.json().catch(() => ({}));
  if (!r.ok) throw new Error(answer.error || `${path}: ${r.status}`);
  return answer;
}

function cell(text) {
  const td = document.createElement("td");
  td.textContent = text;
  return td;
}

function row(d) {
  const tr = document.createElement("tr");
  tr.dataset.device = d.device;
  tr.dataset.state = d.state;
  const number = d.table ?? d.station ?? "";
  const asks = d.asks != null && d.table !== d.asks ? ` (asks for ${d.asks})` : "";  // its own menu's request
  tr.append(cell(d.code), cell(d.kind), cell(d.device), cell(d.state + asks), cell(String(number)),
            cell(d.online ? "online" : "—"), cell(d.version), cell(d.address));
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
  go.addEventListener("click", () => act("/api/devices/assign",
    { device: d.device, number: input.value, replace: box.checked }));
  form.append(input, replace, go);
  const revoke = document.createElement("button");
  revoke.type = "button";
  revoke.className = "revoke";
  revoke.textContent = "Revoke";
  revoke.disabled = d.state !== "enrolled";
  revoke.addEventListener("click", () => {
    if (confirm(`Revoke ${d.device}? It is disconnected and refused until assigned again.`)) act("/api/devices/revoke", { device: d.device });
  });
  const last = document.createElement("td");
  last.append(revoke);
  tr.append(form, last);
  return tr;
}

let editing = false;
body.addEventListener("focusin", () => { editing = true; });
body.addEventListener("focusout", () => { editing = false; });

async function act(path, payload) {
  error.textContent = "";
  try {
    await post(path, payload);
    editing = false;
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
  body.replaceChildren(...data.devices.map(row));
  document.body.dataset.ready = "1";
}

refresh();
setInterval(refresh, 2000);
