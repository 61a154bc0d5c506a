// The audit page: /api/audit?table=N&kind=K (resultstore.py keeps it; the kinds come from the
// server's answer, never from this file), the filters in the page's address so a reload keeps them.
const $ = (id) => document.getElementById(id);

function cell(text) {
  const td = document.createElement("td");
  td.textContent = text;
  return td;
}

function row(a) {
  const tr = document.createElement("tr");
  tr.dataset.table = a.table ?? "";
  tr.dataset.kind = a.kind ?? "";
  if (a.device) tr.className = "device";
  tr.append(cell(a.at), cell(a.table ?? ""), cell(a.kind ?? ""), cell(a.action + (a.device ? " (device)" : "")),
            cell(a.who), cell(a.game ?? ""), cell(a.reason || ""));
  return tr;
}

async function show() {
  const query = new URLSearchParams(location.search);
  const r = await fetch("/api/audit?" + query.toString(), { credentials: "same-origin" });
  if (r.status === 401) { location.href = "/login"; return; }
  const data = await r.json().catch(() => ({}));
  $("error").textContent = r.ok ? "" : data.error || `audit: HTTP ${r.status}`;
  if (!r.ok) return;
  const kind = $("kind");
  if (kind.options.length === 1) kind.append(...data.kinds.map((k) => new Option(k, k)));
  kind.value = query.get("kind") || "";
  $("table").value = query.get("table") || "";
  document.querySelector("#audit tbody").replaceChildren(...data.audit.map(row));
  $("summary").textContent = `${data.audit.length} rows`;
  document.body.dataset.ready = "1";
}

$("filters").addEventListener("submit", (e) => {
  e.preventDefault();
  const query = new URLSearchParams();
  if ($("table").value) query.set("table", $("table").value);
  if ($("kind").value) query.set("kind", $("kind").value);
  history.replaceState(null, "", "/audit" + (query.size ? "?" + query.toString() : ""));
  document.body.dataset.ready = "";
  show();
});

show();
