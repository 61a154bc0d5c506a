// A table the console sends as a view (issue 37): its columns ({key, heading, kind, page}) and its
// rows (each a list of plain values, in the columns' order), the same view its CSV export writes
// (hall/console/scoring/results.py round_view). Every page table drawn from a view is drawn here: the
// header from the columns, the cells from the rows; no page names a column itself.

// The view as the console sent it, checked: columns with a key and a heading, rows as long as the
// columns. A view that is not one draws nothing and says why (thrown: the caller shows it).
function readView(v) {
  if (!v || typeof v !== "object" || !Array.isArray(v.columns) || !Array.isArray(v.rows)) throw new Error("the console's table is not a view");
  const columns = v.columns.filter((c) => c && typeof c.key === "string" && typeof c.heading === "string");
  if (columns.length !== v.columns.length) throw new Error("a column of the console's table has no key or heading");
  const rows = v.rows.filter((r) => Array.isArray(r) && r.length === columns.length);
  if (rows.length !== v.rows.length) throw new Error("a row of the console's table does not match its columns");
  return { columns, rows };
}

// Draw `view` into the <table> `table`: the columns the page shows (`page`), a number right-aligned;
// `text` cuts a value to what the page shows; `onRow(record)` (the row as {key: value}) on a click.
export function drawView(table, view, { text = String, onRow = null } = {}) {
  const { columns, rows } = readView(view);
  const shownCols = columns.map((c, i) => [c, i]).filter(([c]) => c.page !== false);
  const head = document.createElement("thead");
  const tr = document.createElement("tr");
  for (const [c] of shownCols) {
    const th = document.createElement("th");
    th.textContent = text(c.heading);
    th.dataset.key = c.key;
    tr.append(th);
  }
  head.append(tr);
  const body = document.createElement("tbody");
  for (const row of rows) {
    const line = document.createElement("tr");
    for (const [c, i] of shownCols) {
      const td = document.createElement("td");
      td.textContent = row[i] === null || row[i] === undefined ? "" : text(row[i]);
      td.dataset.key = c.key;
      if (c.kind === "number") td.className = "number";
      line.append(td);
    }
    if (onRow) {
      const record = Object.fromEntries(columns.map((c, i) => [c.key, row[i]]));
      line.addEventListener("click", () => onRow(record));
    }
    body.append(line);
  }
  table.replaceChildren(head, body);
  return rows.length;
}
