// Small helpers shared by the microgpt page's widgets.

import { loadJSON } from "../runtime/assets.js";
import { cellColours } from "../runtime/colormap.js";

// Black or white, whichever contrasts more with an "rgb(r, g, b)" background
// (WCAG relative luminance; on viridis the better one is always above 4.5:1).
function textOn(background) {
  const [r, g, b] = (background.match(/\d+/g) || [0, 0, 0]).slice(0, 3).map((v) => {
    const c = Number(v) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  const lum = 0.2126 * r + 0.7152 * g + 0.0722 * b;
  return (lum + 0.05) / 0.05 >= 1.05 / (lum + 0.05) ? "#000" : "#fff";
}
import { nameProblem } from "./model.js";

export const MODEL_PATH = "wasm_assets/microgpt-trained.json";

export function loadModel() {
  return loadJSON(MODEL_PATH).then((model) => {
    if (model.format !== "microgpt-trained/1") throw new Error(`${MODEL_PATH} has format ${model.format}, expected microgpt-trained/1`);
    return model;
  });
}

export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key.startsWith("aria-") || key.startsWith("data-") || key === "role" || key === "for" || key === "scope") node.setAttribute(key, value);
    else node[key] = value;
  }
  for (const child of children) if (child !== null && child !== undefined && child !== false) node.append(child);
  return node;
}

let counter = 0;
export function uid(prefix) {
  counter += 1;
  return `${prefix}-${counter}-${Math.random().toString(36).slice(2, 6)}`;
}

export const START_LABEL = "∙"; // how the start marker (BOS) is shown

export function tokenLabel(label) {
  return label === "" ? START_LABEL : label;
}

// A labelled text box for a name, with the validation message under it.
// onValid(name) fires for every acceptable value (on input and on Enter).
export function nameField({ label, value = "emma", uchars, onValid, hint = "lowercase a–z, 1 to 15 letters" }) {
  const id = uid("mgpt-name");
  const input = el("input", { type: "text", id, value, autocomplete: "off", spellcheck: false, maxLength: 40, "aria-describedby": `${id}-msg ${id}-hint` });
  input.setAttribute("autocapitalize", "none");
  const message = el("p", { class: "mgpt-field__message", id: `${id}-msg`, "aria-live": "polite" });
  const box = el("div", { class: "mgpt-field" },
    el("label", { for: id, text: label }),
    input,
    el("small", { id: `${id}-hint`, text: hint }),
    message);
  const validate = () => {
    const problem = nameProblem(input.value, uchars);
    message.textContent = problem;
    input.setAttribute("aria-invalid", problem ? "true" : "false");
    if (!problem) onValid(input.value);
    return !problem;
  };
  input.addEventListener("input", validate);
  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter") validate();
  });
  return { box, input, message, validate };
}

// One heatmap as an accessible table: rows are the attending positions
// (queries), columns the positions they look at (keys); the upper triangle is
// empty because a letter cannot look ahead.
export function heatmapTable({ caption, labels, rows, compact }) {
  const table = el("table", { class: `mgpt-heat${compact ? " mgpt-heat--compact" : ""}` });
  table.append(el("caption", { text: caption }));
  const head = el("tr", {}, el("th", { scope: "col", class: "mgpt-heat__corner" }, el("span", { class: "mgpt-sr", text: "looks at →" })));
  labels.forEach((label) => head.append(el("th", { scope: "col", text: tokenLabel(label) })));
  table.append(el("thead", {}, head));
  const body = el("tbody");
  rows.forEach((weights, i) => {
    const tr = el("tr", {}, el("th", { scope: "row", text: tokenLabel(labels[i]) }));
    labels.forEach((label, t) => {
      if (t > i) {
        tr.append(el("td", { class: "mgpt-heat__future" }, el("span", { class: "mgpt-sr", text: "not visible" })));
        return;
      }
      const w = weights[t];
      const { background } = cellColours(w);
      const color = textOn(background);
      const td = el("td", { class: "mgpt-heat__cell", title: `${tokenLabel(labels[i])} → ${tokenLabel(label)}: ${w.toFixed(3)}` },
        el("span", { class: "mgpt-heat__value", text: w.toFixed(2).replace(/^0/, "") }));
      td.style.background = background;
      td.style.color = color;
      tr.append(td);
    });
    body.append(tr);
  });
  table.append(body);
  return table;
}
