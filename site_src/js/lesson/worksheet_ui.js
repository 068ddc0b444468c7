// Small DOM and number helpers shared by the lesson-page widgets of pages 1–2
// (two_source.js, head_explorer.js, worksheet.js).

import { loadJSON } from "../runtime/assets.js";
import { cellColours } from "../runtime/colormap.js";
import { el, uid } from "../runtime/dom.js";
import { errorText } from "../runtime/widget.js";
import { heatmapTable } from "../runtime/heatmap.js";

export { el, uid };

export const WORKSHEET_PATH = "wasm_assets/worksheet.json";

export function loadWorksheet() {
  return loadJSON(WORKSHEET_PATH);
}

// Rounded for display: fmt(0.8) -> "0.8", fmt(8.4000001) -> "8.4", fmt(-0.004) -> "0".
// A real minus sign keeps negative numbers readable.
export function fmt(x, digits = 2) {
  if (x === null || x === undefined) return "";
  let s = Number(Number(x).toFixed(digits)).toString();
  if (s === "-0") s = "0";
  return s.replace("-", "\u2212");
}

// Fixed number of decimals (tables line up): fixed(0.5) -> "0.50".
export function fixed(x, digits = 2) {
  let s = Number(x).toFixed(digits);
  if (/^-0\.?0*$/.test(s)) s = s.slice(1);
  return s.replace("-", "\u2212");
}

export function vec(values, digits = 2) {
  return `[${values.map((v) => fmt(v, digits)).join(", ")}]`;
}

export function heatStyle(weight) {
  const { background, color } = cellColours(weight);
  return { background, color };
}

// An accessible table for a small matrix. rows: number[][]; masked(i, j) -> true
// shows a dash for a masked entry; heat: colour cells by value in [0, 1].
export function matrixTable({
  caption,
  rowLabels,
  colLabels,
  rows,
  digits = 2,
  heat = false,
  masked = null,
  name = "",
}) {
  // The visible title sits outside the scrolling box (so it never scrolls away on a phone);
  // the table keeps a caption for screen readers.
  const table = heatmapTable({
    caption: { text: caption, class: "mha-ws__sr" },
    tableClass: `mha-ws__matrix${heat ? " mha-ws__matrix--heat" : ""}`,
    corner: { children: [el("span", { class: "mha-ws__sr", text: "row" })] },
    columns: colLabels.map((label) => ({ text: label })),
    rows: rows.map((row, i) => ({
      head: { text: rowLabels[i] },
      cells: row.map((value, j) =>
        masked && masked(i, j)
          ? {
              text: "\u2013",
              attrs: { class: "mha-ws__masked", title: "masked: a later token", "aria-label": "masked" },
            }
          : { text: fixed(value, digits), shade: heat ? value : undefined, attrs: { "data-value": String(value) } },
      ),
    })),
  });
  table.dataset.matrix = name;
  return el(
    "figure",
    { class: "mha-ws__figure" },
    el("p", { class: "mha-ws__caption", "aria-hidden": "true", text: caption }),
    el("div", { class: "mha-ws__scroll", tabindex: "0", role: "region", "aria-label": caption }, table),
  );
}

// Every worksheet figure on a page reads the same file, so one failure is said
// once: in the first failed figure a reader can see (not one in a closed
// <details>), while the others step aside instead of repeating it.
export function failure(root, err) {
  const text =
    `The worksheet figures could not get their numbers: ${errorText(err)}. ` +
    "Reload the page; if it keeps failing, tell the site's maintainer. The other worksheet figures on this page need the same file, so they are left out.";
  root.dataset.mhaFailed = text;
  const failed = [...document.querySelectorAll("[data-mha-failed]")].filter((r) => r.dataset.mhaFailed === text);
  const holder = failed.find((r) => !r.closest("details:not([open])")) || failed[0];
  for (const r of failed) {
    if (r !== holder) {
      r.replaceChildren();
      r.hidden = true;
    } else if (!r.querySelector(".mha-ws-failure")) {
      r.hidden = false;
      r.replaceChildren(el("div", { class: "mha-panel mha-panel--error mha-ws-failure", role: "alert", text }));
    }
  }
}
