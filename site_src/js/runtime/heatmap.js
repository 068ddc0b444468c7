// The one heatmap builder of the site's widgets: an accessible table (caption,
// column and row headers with their scope) whose cells are coloured on the
// viridis scale with readable text (runtime/colormap.js). The numbers stay in
// the cells, so nothing depends on colour alone.
//
//   heatmapTable({
//     caption: "Head 1",                 // text, or {text, class}
//     tableClass: "mha-heatmap",
//     corner: {text: "receiver"},        // the top-left header cell (optional)
//     columns: [{text: "the"}, ...],     // column headers
//     headRows: [trNode],                // rows above the column headers (optional)
//     rows: [{head: {text: "the"}, cells: [{text: "0.52", shade: 0.52}, ...]}, ...],
//   })
//
// A header or cell is {text} or {children}, plus attrs (passed to el()). A
// cell with a numeric `shade` in [0, 1] gets its background and text colour
// from it; a cell without one (a masked entry, say) is left uncoloured.

import { cellColours } from "./colormap.js";
import { el } from "./dom.js";

function content(spec) {
  if (spec === null || spec === undefined) return [];
  if (typeof spec === "string") return [spec];
  return spec.children ?? (spec.text !== undefined ? [spec.text] : []);
}

function header(spec, scope) {
  const attrs = (spec && typeof spec === "object" ? spec.attrs : null) || {};
  return el("th", { scope, ...attrs }, content(spec));
}

// A row or column header holds a word the learner may have typed, of any
// length: it is cut to a few characters on screen (css: .mha-heat__label, with
// an ellipsis) and kept whole for screen readers and in its tooltip, so a
// 300-letter word never widens the table or the page.
function labelHeader(spec, scope) {
  const th = header(spec, scope);
  const text = th.textContent;
  const label = el("span", { class: "mha-heat__label" }, [...th.childNodes]);
  if (text.length > 12) label.title = text;
  th.replaceChildren(label);
  return th;
}

export function heatCell(spec) {
  const td = el("td", spec.attrs || {}, content(spec));
  if (Number.isFinite(spec.shade)) {
    const { background, color } = cellColours(spec.shade);
    td.style.background = background;
    td.style.color = color;
  }
  return td;
}

export function heatmapTable({ caption, tableClass, corner = null, columns, headRows = [], rows }) {
  const table = el("table", { class: tableClass });
  if (caption !== undefined && caption !== null) {
    const spec = typeof caption === "string" ? { text: caption } : caption;
    table.append(el("caption", { class: spec.class, text: spec.text }));
  }
  const headRow = el(
    "tr",
    {},
    corner === false ? null : header(corner || { text: "" }, "col"),
    columns.map((c) => labelHeader(c, "col")),
  );
  table.append(el("thead", {}, headRows, headRow));
  table.append(
    el(
      "tbody",
      {},
      rows.map((row) => el("tr", row.attrs || {}, labelHeader(row.head, "row"), row.cells.map(heatCell))),
    ),
  );
  return table;
}
