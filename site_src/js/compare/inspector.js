// The token inspector: for one generated token, what every model saw in the
// step that produced it. renderInspector(section, view) draws it from a step's
// window, each model's output for that window (logits, attention) and the
// manifest's model list, so other views of a step can be added here.

import { viridis } from "../runtime/colormap.js";
import { el } from "../runtime/dom.js";
import { heatmapTable } from "../runtime/heatmap.js";
import { headColourVar } from "../runtime/palette.js";
import { probabilities, topK } from "../runtime/generate.js";
import { tokenText } from "./format.js";
import { siteUrl } from "../runtime/assets.js";
import { detokenize } from "../runtime/tokenizer.js";

const STEPPER_PAGE = "lesson/4-model-training-generation/"; // page 4, where the forward-pass stepper is

// section: the inspector element. view: {
//   name, label, stepIndex: the chosen token's model and step,
//   step: {window, id} of that step,
//   words: for each slot of step.window, {text, unknown} as the learner wrote
//     it (an unknown word keeps its spelling), or null for padding,
//   outputs: {modelName: {logits, attention} | {error}} for step.window,
//   models: the manifest's entries ({name, label, heads}), in column order,
//   vocab, T, excluded: the ids generation never picks, onClose }
// Returns {heading, close}.
export function renderInspector(section, view) {
  const { label, stepIndex, step, outputs, models, vocab, T, onClose } = view;
  const excluded = view.excluded; // the manifest's generation.excluded_ids
  const words =
    view.words || step.window.map((id) => ({ text: tokenText(vocab, id), unknown: id === vocab.special.UNK }));
  const real = [];
  step.window.forEach((id, slot) => {
    if (id !== vocab.special.PAD) real.push(slot);
  });
  const heading = el(
    "h2",
    { tabindex: "-1", id: "mha-compare-inspector-title" },
    `Step ${stepIndex + 1} of ${label}: before it chose “`,
    el("span", { class: "mha-chosen", text: tokenText(vocab, step.id) }),
    "”",
  );
  const close = el("button", { type: "button", class: "md-button", text: "Close", onclick: onClose });
  const stepper = stepperLink(view, words);
  const intro = el("p", {
    text:
      `All ${models.length} models read the same ${real.length}-token window (the ${T}-slot context before this token; ` +
      "empty padding slots are left out). Each heatmap column is one head; a cell is how much the final position attended to that token.",
  });
  const maps = el("div", { class: "mha-heatmaps" });
  const table = attentionTable({ real, words, outputs, models, T });
  maps.append(table || el("p", { text: "The attention models are not running, so there is no heatmap." }));
  const tops = el("div", { class: "mha-topk" });
  const lists = models
    .filter((m) => outputs[m.name])
    .map((m) => ({ model: m, ...topTokens(outputs[m.name], excluded) }));
  // One scale for every model's bars, so a 7.8 % guess never looks as sure as a 39.4 % one; full width is the
  // largest probability shown here, not 100 %, so a 5 % bar beside a 13 % one stays readable.
  const ran = lists.filter((l) => l.p);
  const widest = ran.reduce((a, l) => (!a || l.p[l.top[0]] > a.p[a.top[0]] ? l : a), null);
  const scale = widest ? widest.p[widest.top[0]] : 0;
  if (scale > 0) {
    tops.append(
      el("p", {
        class: "mha-topk__scale",
        text:
          `Bars on one scale for all ${ran.length} models: a full bar is ${(scale * 100).toFixed(1)}%, the largest ` +
          `probability here (${widest.model.label}, “${tokenText(vocab, widest.top[0])}”).`,
      }),
    );
  }
  for (const l of lists) tops.append(topList(l, vocab, scale || 1));
  section.replaceChildren(
    el(
      "div",
      { class: "mha-inspector__head" },
      heading,
      el("span", { class: "mha-inspector__actions" }, stepper, close),
    ),
    intro,
    maps,
    el("h3", { text: "Most likely next tokens" }),
    tops,
  );
  section.hidden = false;
  return { heading, close };
}

// "Step through this prompt": page 4's stepper with this step's window as the
// prompt (the words as the learner wrote them, without BOS) and this model, or
// the four-head one when this is the MLP; the stepper checks the name against
// the manifest itself.
function stepperLink(view, words) {
  const { step, vocab, models, name } = view;
  const skip = new Set([vocab.special.PAD, vocab.special.BOS, vocab.special.EOS]);
  const tokens = [];
  step.window.forEach((id, slot) => {
    if (!skip.has(id)) tokens.push(words[slot] ? words[slot].text : vocab.itos[id]);
  });
  const own = models.find((m) => m.name === name && m.heads > 0);
  const model = own ? own.name : (models.find((m) => m.heads > 1) || models.find((m) => m.heads > 0) || {}).name;
  const query = new URLSearchParams({ prompt: detokenize(tokens) });
  if (model) query.set("model", model);
  return el("a", {
    class: "md-button mha-inspector__stepper",
    href: `${siteUrl(STEPPER_PAGE)}?${query}#stepper`,
    text: "Step through this prompt",
  });
}

// One column per head of every attention model (heads from the manifest).
function attentionTable({ real, words, outputs, models, T }) {
  const heads = [];
  const groups = [];
  for (const m of models) {
    const out = outputs[m.name];
    if (!(m.heads > 0) || !out || !out.attention) continue;
    const n = m.heads;
    groups.push({ label: m.label, count: n });
    for (let h = 0; h < n; h++) {
      const weights = real.map((slot) => out.attention[h * T + slot]);
      heads.push({ label: n === 1 ? "one head" : `head ${h + 1}`, group: m.name, weights, colour: headColourVar(h) });
    }
  }
  if (!heads.length) return null;
  const groupRow = el(
    "tr",
    {},
    el("td", {}),
    groups.map((g) => el("th", { scope: "colgroup", colspan: g.count, text: g.label })),
  );
  const rows = real.map((slot, r) => {
    const word = words[slot] || { text: "", unknown: false };
    const head = word.unknown
      ? {
          attrs: {
            class: "mha-heat__tok mha-heat__tok--unk",
            title: "outside the vocabulary: the models read it as unknown",
          },
          children: [
            el("span", { class: "mha-token--unk", text: word.text }),
            el("span", { class: "mha-sr", text: " (unknown to the models)" }),
          ],
        }
      : { attrs: { class: "mha-heat__tok" }, text: word.text };
    return {
      head,
      cells: heads.map((h) => ({
        attrs: { class: "mha-heat__cell" },
        text: `${Math.round(h.weights[r] * 100)}`,
        shade: h.weights[r],
      })),
    };
  });
  // One colour scale for every column (0 to 1), so 18 % in a diffuse head never looks like 91 % in a sharp one.
  const note =
    "Final-query attention over the window, in percent. Colours (viridis) use one scale for every column: 0 % dark purple to 100 % yellow.";
  // The visible note sits outside the scrolling box, so a wide table never cuts it
  // on a phone; the table keeps it as its caption for screen readers.
  const table = heatmapTable({
    caption: { text: note, class: "mha-sr" },
    tableClass: "mha-heat",
    corner: { text: "token" },
    columns: heads.map((h) => ({
      attrs: { class: `mha-heat__h mha-heat__h--${h.group}` },
      children: [
        h.colour
          ? el("span", { class: "mha-knock__swatch", "aria-hidden": "true", style: { background: h.colour } })
          : null,
        h.label,
      ],
    })),
    headRows: [groupRow],
    rows,
  });
  // Focusable, so the table can be scrolled sideways from the keyboard on a phone.
  return el(
    "div",
    {},
    el("p", { class: "mha-heat__note", "aria-hidden": "true", text: note }),
    scaleLegend(),
    el("div", { class: "mha-heat__scroll", tabindex: 0, role: "region", "aria-label": "Attention heatmap" }, table),
  );
}

// The colour scale, drawn from the same map as the cells.
function scaleLegend() {
  const stops = [0, 0.25, 0.5, 0.75, 1].map((x) => `rgb(${viridis(x).join(", ")}) ${x * 100}%`);
  return el(
    "p",
    { class: "mha-heat__legend", "aria-hidden": "true" },
    el("span", { text: "0 %" }),
    el("span", {
      class: "mha-heat__legend-bar",
      style: { background: `linear-gradient(to right, ${stops.join(", ")})` },
    }),
    el("span", { text: "100 %" }),
  );
}

// A model's probabilities for the step and its five most likely ids, or {error} when it did not run.
function topTokens(out, excluded) {
  if (out.error) return { error: out.error };
  const p = probabilities(out.logits, excluded);
  return { p, top: topK(p, 5) };
}

function topList({ model, error, p, top }, vocab, scale) {
  const box = el("div", { class: "mha-topk__model" }, el("h4", { text: model.label }));
  if (error) {
    box.append(el("p", { text: error }));
    return box;
  }
  const list = el("ol", { class: "mha-topk__list" });
  for (const id of top) {
    const pct = p[id] * 100;
    list.append(
      el(
        "li",
        {},
        el("span", { class: "mha-topk__tok", text: tokenText(vocab, id) }),
        el(
          "span",
          { class: "mha-topk__bar", "aria-hidden": "true" },
          el("span", { style: `width:${Math.max(1, (100 * p[id]) / scale).toFixed(1)}%` }),
        ),
        el("span", { class: "mha-topk__p", text: `${pct.toFixed(1)}%` }),
      ),
    );
  }
  box.append(list);
  return box;
}

// Shows the inspector where the learner is: scrolled into view, focus on its
// title; Escape or Close hides it and puts focus back on `opener` (the token
// button that opened it).
//
// view.extend(section), when given, adds more to the inspector after it is
// drawn (for example switches that re-run the step); if it puts the focus
// inside the inspector, the focus stays there.
export function openInspector(section, view, opener) {
  const close = () => {
    view.onClose();
    if (opener && opener.isConnected) opener.focus();
  };
  const parts = renderInspector(section, { ...view, onClose: close });
  if (view.extend) parts.extra = view.extend(section);
  section.onkeydown = (event) => {
    if (event.key === "Escape") {
      event.preventDefault();
      close();
    }
  };
  section.scrollIntoView({ block: "start" });
  if (!section.contains(document.activeElement)) parts.heading.focus({ preventScroll: true });
  return parts;
}
