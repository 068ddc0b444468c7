// "Watch" on the microgpt page: the trained model's four attention heads as
// heatmaps for a name, and the same model's attention as one head over all 16
// numbers. Computed here from microgpt-trained.json (microgpt/model.js). The
// row where the four heads disagree most (headDisagreement) is marked in every
// map and described in words; a third view shows, cell by cell, how far apart
// the heads are.
//
// Test hook: window.mhaMicrogpt = {ready, forward(name), sample(options),
// problem(name)}.

import { forwardAttention, nameProblem, sampleNames } from "./model.js";
import { el, heatmapTable, loadModel, nameField, uid } from "./ui.js";
import { claim, release } from "../runtime/widget.js";

const mounted = new Map();

export function mount(root) {
  const state = claim(mounted, root);
  if (!state) return;
  const ready = loadModel();
  const hookReady = ready.then((model) => ({ config: model.config, uchars: model.uchars }));
  hookReady.catch(() => {}); // the widget shows the failure; a test that waits on it gets the rejection
  state.hook = {
    ready: hookReady,
    forward: async (name, nHead) => forwardAttention(await ready, name, nHead),
    sample: async (options) => sampleNames(await ready, options),
    problem: async (name) => nameProblem(name, (await ready).uchars),
  };
  window.mhaMicrogpt = state.hook;
  root.replaceChildren(el("p", { class: "mgpt-loading", text: "Loading the trained model…" }));
  ready.then(
    (model) => {
      if (!state.disposed) build(root, model, state);
    },
    (err) => {
      root.replaceChildren(
        el("p", {
          class: "mha-panel mha-panel--error",
          role: "alert",
          text: `The trained model could not be loaded: ${err.message}`,
        }),
      );
    },
  );
}

// How differently the heads look back from each position: the mean, over all
// pairs of heads, of the total-variation distance between their weights (half
// the summed absolute differences: 0 when two heads attend alike, 1 when they
// share nothing). Returns {scores: one per position, row: the largest (-1 if all are 0)}.
export function headDisagreement(headWeights) {
  const scores = headWeights.map((perHead) => {
    let acc = 0;
    let pairs = 0;
    for (let a = 0; a < perHead.length; a++) {
      for (let b = a + 1; b < perHead.length; b++) {
        let d = 0;
        for (let t = 0; t < perHead[a].length; t++) d += Math.abs(perHead[a][t] - perHead[b][t]);
        acc += d / 2;
        pairs += 1;
      }
    }
    return pairs ? acc / pairs : 0;
  });
  let row = -1;
  scores.forEach((score, i) => {
    if (score > 1e-12 && (row < 0 || score > scores[row])) row = i;
  });
  return { scores, row };
}

// Per cell: the largest minus the smallest weight the heads give it.
function spreadRows(headWeights) {
  return headWeights.map((perHead) =>
    perHead[0].map((_, t) => {
      const column = perHead.map((w) => w[t]);
      return Math.max(...column) - Math.min(...column);
    }),
  );
}

function build(root, model, state) {
  const nHead = model.config.n_head;
  const headDim = model.config.head_dim;
  const nEmbd = model.config.n_embd;
  let view = "heads";
  let current = "emma";

  const field = nameField({
    label: "Name",
    value: current,
    uchars: model.uchars,
    onValid: (name) => {
      current = name;
      render();
    },
  });
  const headsButton = el("button", {
    type: "button",
    class: "md-button",
    "aria-pressed": "true",
    text: `${nHead} heads × ${headDim} numbers`,
  });
  const oneButton = el("button", {
    type: "button",
    class: "md-button",
    "aria-pressed": "false",
    text: `1 head × ${nEmbd} numbers`,
  });
  const diffButton = el("button", {
    type: "button",
    class: "md-button",
    "aria-pressed": "false",
    text: "Where the heads differ",
  });
  const groupLabel = uid("mgpt-view");
  const toggle = el(
    "div",
    { class: "mgpt-toggle", role: "group", "aria-labelledby": groupLabel },
    el("span", { id: groupLabel, class: "mgpt-toggle__label", text: "Attention computed as" }),
    headsButton,
    oneButton,
    diffButton,
  );
  const differ = el("p", { class: "mgpt-watch__differ", "aria-live": "polite" });
  const explain = el("p", { class: "mgpt-watch__explain", "aria-live": "polite" });
  const maps = el("div", { class: "mgpt-watch__maps" });
  const legendText = el("span");
  const legend = el(
    "p",
    { class: "mgpt-legend" },
    el("span", { class: "mgpt-legend__bar", "aria-hidden": "true" }),
    legendText,
  );
  root.replaceChildren(el("div", { class: "mgpt-watch__controls" }, field.box, toggle), explain, differ, maps, legend);

  const setView = (next) => {
    view = next;
    headsButton.setAttribute("aria-pressed", String(view === "heads"));
    oneButton.setAttribute("aria-pressed", String(view === "one"));
    diffButton.setAttribute("aria-pressed", String(view === "differ"));
    render();
  };
  headsButton.addEventListener("click", () => setView("heads"));
  oneButton.addEventListener("click", () => setView("one"));
  diffButton.addEventListener("click", () => setView("differ"));

  function render() {
    if (state.disposed) return;
    const trace = forwardAttention(model, current);
    const labels = trace.labels;
    const compact = labels.length > 9;
    const { scores, row } = headDisagreement(trace.head_weights);
    maps.replaceChildren();
    maps.dataset.view = view;
    maps.dataset.name = current;
    maps.dataset.marked = String(row);
    differ.textContent = row < 0 ? "" : describeDifference(trace, labels, row, scores[row], view);
    // The spread view's cells are differences between heads, not weights: its rows do not add up to 1.
    legendText.textContent =
      view === "differ"
        ? "Colour (viridis): the largest minus the smallest weight the heads give a cell, from 0 (dark purple: the heads agree) " +
          "to 1 (yellow: one head looks there fully, another not at all). Unlike weights, a row need not sum to 1. ∙ is the start marker."
        : "Colour (viridis): attention weight from 0 (dark purple) to 1 (yellow). Each row adds up to 1. ∙ is the start marker.";
    legend.dataset.view = view;
    if (view === "differ") {
      explain.textContent =
        `How far apart the ${nHead} heads are, cell by cell: the largest minus the smallest weight any head gives it ` +
        "(dark: the heads agree; bright: at least one head looks there much more than another).";
      maps.append(
        scrollBox(
          el(
            "div",
            { class: "mgpt-watch__map mgpt-watch__map--one", "data-head": "spread" },
            heatmapTable({
              caption: `Spread between the ${nHead} heads`,
              labels,
              rows: spreadRows(trace.head_weights),
              compact,
              marked: row,
            }),
          ),
          "Spread between the heads",
        ),
      );
    } else if (view === "heads") {
      explain.textContent =
        `Four separate attention patterns for “${current}”: head h compares numbers ${0}–${headDim - 1}, ` +
        `${headDim}–${2 * headDim - 1}, … of the query with the same numbers of every key. Row = the letter that looks back; column = the position it looks at.`;
      for (let h = 0; h < nHead; h++) {
        const rows = trace.head_weights.map((perHead) => perHead[h]);
        maps.append(
          scrollBox(
            el(
              "div",
              { class: "mgpt-watch__map", "data-head": String(h + 1) },
              heatmapTable({
                caption: `Head ${h + 1}: numbers ${h * headDim}–${(h + 1) * headDim - 1}`,
                labels,
                rows,
                compact,
                marked: row,
              }),
            ),
            `Head ${h + 1} heatmap`,
          ),
        );
      }
    } else {
      explain.textContent =
        `One pattern for “${current}”: a single head compares all ${nEmbd} numbers of the query with all ${nEmbd} of every key ` +
        `(same trained weights, scores divided by √${nEmbd}). Every letter now gets one way of looking back instead of ${nHead}.`;
      maps.append(
        scrollBox(
          el(
            "div",
            { class: "mgpt-watch__map mgpt-watch__map--one", "data-head": "all" },
            heatmapTable({
              caption: `One head: numbers 0–${nEmbd - 1}`,
              labels,
              rows: trace.single_head_weights,
              compact,
            }),
          ),
          "One-head heatmap",
        ),
      );
    }
  }
  render();
}

// "The heads disagree most at ...": each head's favourite position in that row.
// `view` says where the row is marked: in each head's map, in the spread map, or (one head) nowhere.
function describeDifference(trace, labels, row, score, view) {
  const show = (i) => (i === 0 ? "the start marker ∙" : `“${labels[i]}”`);
  const looks = trace.head_weights[row].map((w, h) => {
    const best = w.indexOf(Math.max(...w));
    return `head ${h + 1} at ${show(best)} (${Math.round(w[best] * 100)}%)`;
  });
  const where = view === "heads" ? ", marked ▸ in every map" : view === "differ" ? ", marked ▸ in the map" : "";
  const lead = view === "one" ? "With four heads, the heads disagree most" : "▸ The heads disagree most";
  const tail =
    view === "one" ? " The single head below has one pattern per letter, so there is nothing to disagree." : "";
  return (
    `${lead} at ${show(row)} (position ${row}${where}): two heads share on ` +
    `average only ${Math.round((1 - score) * 100)}% of their attention there. Looking back from it, ${looks.join(", ")}.${tail}`
  );
}

// A heatmap box scrolls sideways on a phone: it must then be reachable with the
// keyboard (axe: scrollable-region-focusable), so it takes the focus and a name.
function scrollBox(box, label) {
  box.tabIndex = 0;
  box.setAttribute("role", "region");
  box.setAttribute("aria-label", label);
  return box;
}

export function dispose(root) {
  const state = release(mounted, root);
  if (state && window.mhaMicrogpt === state.hook) delete window.mhaMicrogpt;
}
