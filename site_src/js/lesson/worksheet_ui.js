// Small DOM and number helpers shared by the lesson-page widgets of pages 1–2
// (two_source.js, head_explorer.js, worksheet.js).

import { loadJSON } from "../runtime/assets.js";
import { cellColours } from "../runtime/colormap.js";

export const WORKSHEET_PATH = "wasm_assets/worksheet.json";

export function loadWorksheet() {
  return loadJSON(WORKSHEET_PATH);
}

// el("p", { class: "x", text: "hi", "aria-live": "polite" }, child, ...)
export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "text") node.textContent = value;
    else if (key === "class") node.className = value;
    else if (key === "style") Object.assign(node.style, value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

let counter = 0;
export function uid(prefix) {
  counter += 1;
  return `${prefix}-${counter}`;
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
export function matrixTable({ caption, rowLabels, colLabels, rows, digits = 2, heat = false, masked = null, name = "" }) {
  const head = el("tr", {}, el("th", { scope: "col" }, el("span", { class: "mha-ws__sr", text: "row" })),
    ...colLabels.map((label) => el("th", { scope: "col", text: label })));
  const body = rows.map((row, i) => el("tr", {},
    el("th", { scope: "row", text: rowLabels[i] }),
    ...row.map((value, j) => {
      if (masked && masked(i, j)) {
        return el("td", { class: "mha-ws__masked", title: "masked: a later token", "aria-label": "masked" }, "\u2013");
      }
      const props = { "data-value": String(value) };
      if (heat) props.style = heatStyle(value);
      return el("td", props, fixed(value, digits));
    })));
  // The visible title sits outside the scrolling box (so it never scrolls away on a phone);
  // the table keeps a caption for screen readers.
  const table = el("table", { class: `mha-ws__matrix${heat ? " mha-ws__matrix--heat" : ""}`, "data-matrix": name },
    el("caption", { class: "mha-ws__sr", text: caption }), el("thead", {}, head), el("tbody", {}, ...body));
  return el("figure", { class: "mha-ws__figure" },
    el("p", { class: "mha-ws__caption", "aria-hidden": "true", text: caption }),
    el("div", { class: "mha-ws__scroll", tabindex: "0", role: "region", "aria-label": caption }, table));
}

// Every worksheet figure on a page reads the same file, so one failure is said
// once: in the first failed figure a reader can see (not one in a closed
// <details>), while the others step aside instead of repeating it.
export function failure(root, err) {
  const text = `The worksheet figures could not get their numbers: ${err && err.message ? err.message : err}. ` +
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
