// Small helpers shared by the microgpt page's widgets.

import { loadJSON } from "../runtime/assets.js";
import { el, uid } from "../runtime/dom.js";
import { heatmapTable as buildHeatmap } from "../runtime/heatmap.js";
import { nameProblem } from "./model.js";

export { el, uid }; // the site's one DOM helper and id maker (runtime/dom.js)

export const MODEL_PATH = "wasm_assets/microgpt-trained.json";
// The same microgpt trained with one head over all 16 numbers (export/artefacts.py: microgpt_one_head).
export const ONE_HEAD_PATH = "wasm_assets/microgpt-one-head.json";

export function loadModel(path = MODEL_PATH) {
  return loadJSON(path).then((model) => {
    if (model.format !== "microgpt-trained/1")
      throw new Error(`${path} has format ${model.format}, expected microgpt-trained/1`);
    return model;
  });
}

export const START_LABEL = "∙"; // how the start marker (BOS) is shown

export function tokenLabel(label) {
  return label === "" ? START_LABEL : label;
}

// A labelled text box for a name, with the validation message under it.
// onValid(name) fires for every acceptable value (on input and on Enter).
export function nameField({ label, value = "emma", uchars, onValid, hint = "letters a–z, 1 to 15 of them" }) {
  const id = uid("mgpt-name");
  const input = el("input", {
    type: "text",
    id,
    value,
    autocomplete: "off",
    spellcheck: false,
    maxLength: 40,
    "aria-describedby": `${id}-msg ${id}-hint`,
  });
  input.setAttribute("autocapitalize", "none");
  const message = el("p", { class: "mgpt-field__message", id: `${id}-msg`, "aria-live": "polite" });
  const box = el(
    "div",
    { class: "mgpt-field" },
    el("label", { for: id, text: label }),
    input,
    el("small", { id: `${id}-hint`, text: hint }),
    message,
  );
  // "Zoe " is zoe: the model knows lowercase letters only, so capitals and spaces around are forgiven.
  const validate = () => {
    const name = input.value.trim().toLowerCase();
    const problem = nameProblem(name, uchars);
    message.textContent = problem;
    input.setAttribute("aria-invalid", problem ? "true" : "false");
    if (!problem) onValid(name);
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
// `marked` (a row index, optional) outlines that row: Watch marks where the heads disagree most.
export function heatmapTable({ caption, labels, rows, compact, marked = -1, digits = 2 }) {
  return buildHeatmap({
    caption,
    tableClass: `mgpt-heat${compact ? " mgpt-heat--compact" : ""}`,
    corner: { attrs: { class: "mgpt-heat__corner" }, children: [el("span", { class: "mgpt-sr", text: "looks at →" })] },
    columns: labels.map((label) => ({ text: tokenLabel(label) })),
    rows: rows.map((weights, i) => ({
      attrs: i === marked ? { class: "mgpt-heat__row--marked", "data-marked": "true" } : {},
      head: { text: i === marked ? `▸${tokenLabel(labels[i])}` : tokenLabel(labels[i]) },
      cells: labels.map((label, t) =>
        t > i
          ? { attrs: { class: "mgpt-heat__future" }, children: [el("span", { class: "mgpt-sr", text: "not visible" })] }
          : {
              attrs: {
                class: "mgpt-heat__cell",
                title: `${tokenLabel(labels[i])} → ${tokenLabel(label)}: ${weights[t].toFixed(3)}`,
              },
              children: [el("span", { class: "mgpt-heat__value", text: weights[t].toFixed(digits).replace(/^0/, "") })],
              shade: weights[t],
            },
      ),
    })),
  });
}
