// The token inspector: for one generated token, what every model saw in the
// step that produced it. renderInspector(section, view) draws it from a step's
// window, each model's output for that window (logits, attention) and the
// manifest's model list, so other views of a step can be added here.

import { el } from "../runtime/dom.js";
import { cellColours } from "../runtime/colormap.js";
import { excludedIds, probabilities, topK } from "../runtime/generate.js";
import { tokenText } from "./format.js";

// section: the inspector element. view: {
//   name, label, stepIndex: the chosen token's model and step,
//   step: {window, id} of that step,
//   outputs: {modelName: {logits, attention} | {error}} for step.window,
//   models: the manifest's entries ({name, label, heads}), in column order,
//   vocab, T, onClose, colours: {modelName: [css colour per head]} (optional, evidence.heads.colours) }
export function renderInspector(section, view) {
  const { label, stepIndex, step, outputs, models, vocab, T, onClose } = view;
  const real = [];
  step.window.forEach((id, slot) => {
    if (id !== vocab.special.PAD) real.push(slot);
  });
  const heading = el("h3", { tabindex: "-1" },
    `Step ${stepIndex + 1} of ${label}: before it chose “`, el("span", { class: "mha-chosen", text: tokenText(vocab, step.id) }), "”");
  const close = el("button", { type: "button", class: "md-button", text: "Close", onclick: onClose });
  const intro = el("p", {
    text: `All ${models.length} models read the same ${real.length}-token window (the ${T}-slot context before this token; ` +
      "empty padding slots are left out). Each heatmap column is one head; a cell is how much the final position attended to that token.",
  });
  const maps = el("div", { class: "mha-heatmaps" });
  const table = attentionTable({ window: step.window, real, outputs, models, vocab, T, colours: view.colours });
  maps.append(table || el("p", { text: "The attention models are not running, so there is no heatmap." }));
  const tops = el("div", { class: "mha-topk" });
  for (const m of models) {
    if (outputs[m.name]) tops.append(topList(m, outputs[m.name], vocab));
  }
  section.replaceChildren(el("div", { class: "mha-inspector__head" }, heading, close), intro, maps,
    el("h4", { text: "Most likely next tokens" }), tops);
  section.hidden = false;
  return { heading, close };
}

// One column per head of every attention model (heads from the manifest).
function attentionTable({ window, real, outputs, models, vocab, T, colours }) {
  const heads = [];
  const groups = [];
  for (const m of models) {
    const out = outputs[m.name];
    if (!(m.heads > 0) || !out || !out.attention) continue;
    const n = m.heads;
    groups.push({ label: m.label, count: n });
    for (let h = 0; h < n; h++) {
      const weights = real.map((slot) => out.attention[h * T + slot]);
      heads.push({ label: n === 1 ? "one head" : `head ${h + 1}`, group: m.name, weights, colour: colours?.[m.name]?.[h] });
    }
  }
  if (!heads.length) return null;
  const caption = el("caption", {
    text: "Final-query attention over the window. Colours (viridis) are scaled per column to its largest weight; numbers are percentages.",
  });
  const headRow = el("tr", {}, el("th", { scope: "col", text: "token" }),
    heads.map((h) => el("th", { scope: "col", class: `mha-heat__h mha-heat__h--${h.group}` },
      h.colour ? el("span", { class: "mha-knock__swatch", "aria-hidden": "true", style: { background: h.colour } }) : null,
      h.label)));
  const groupRow = el("tr", {}, el("td", {}),
    groups.map((g) => el("th", { scope: "colgroup", colspan: g.count, text: g.label })));
  const maxes = heads.map((h) => Math.max(1e-9, ...h.weights));
  const body = el("tbody");
  real.forEach((slot, r) => {
    body.append(el("tr", {}, el("th", { scope: "row", class: "mha-heat__tok", text: tokenText(vocab, window[slot]) }),
      heads.map((h, c) => {
        const w = h.weights[r];
        const { background, color } = cellColours(w / maxes[c]);
        return el("td", { class: "mha-heat__cell", style: `background:${background};color:${color}`, text: `${Math.round(w * 100)}` });
      })));
  });
  return el("div", { class: "mha-heat__scroll" },
    el("table", { class: "mha-heat" }, caption, el("thead", {}, groupRow, headRow), body));
}

function topList(model, out, vocab) {
  const box = el("div", { class: "mha-topk__model" }, el("h5", { text: model.label }));
  if (out.error) {
    box.append(el("p", { text: out.error }));
    return box;
  }
  const p = probabilities(out.logits, excludedIds(vocab.special));
  const list = el("ol", { class: "mha-topk__list" });
  for (const id of topK(p, 5)) {
    const pct = p[id] * 100;
    list.append(el("li", {},
      el("span", { class: "mha-topk__tok", text: tokenText(vocab, id) }),
      el("span", { class: "mha-topk__bar", "aria-hidden": "true" }, el("span", { style: `width:${Math.max(1, pct).toFixed(1)}%` })),
      el("span", { class: "mha-topk__p", text: `${pct.toFixed(1)}%` })));
  }
  box.append(list);
  return box;
}
