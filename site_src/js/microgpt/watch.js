// "Watch" on the microgpt page: the trained model's four attention heads as
// heatmaps for a name, and the same model's attention as one head over all 16
// numbers. Computed here from microgpt-trained.json (microgpt/model.js).
//
// Test hook: window.mhaMicrogpt = {ready, forward(name), sample(options),
// problem(name)}.

import { forwardAttention, nameProblem, sampleNames } from "./model.js";
import { el, heatmapTable, loadModel, nameField, uid } from "./ui.js";

const mounted = new Map();

export function mount(root) {
  if (mounted.has(root)) return;
  const state = { disposed: false };
  mounted.set(root, state);
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
  ready.then((model) => {
    if (!state.disposed) build(root, model, state);
  }, (err) => {
    root.replaceChildren(el("p", { class: "mha-panel mha-panel--error", role: "alert", text: `The trained model could not be loaded: ${err.message}` }));
  });
}

function build(root, model, state) {
  const nHead = model.config.n_head;
  const headDim = model.config.head_dim;
  const nEmbd = model.config.n_embd;
  let view = "heads";
  let current = "emma";

  const field = nameField({ label: "Name", value: current, uchars: model.uchars, onValid: (name) => { current = name; render(); } });
  const headsButton = el("button", { type: "button", class: "md-button", "aria-pressed": "true", text: `${nHead} heads × ${headDim} numbers` });
  const oneButton = el("button", { type: "button", class: "md-button", "aria-pressed": "false", text: `1 head × ${nEmbd} numbers` });
  const groupLabel = uid("mgpt-view");
  const toggle = el("div", { class: "mgpt-toggle", role: "group", "aria-labelledby": groupLabel },
    el("span", { id: groupLabel, class: "mgpt-toggle__label", text: "Attention computed as" }), headsButton, oneButton);
  const explain = el("p", { class: "mgpt-watch__explain", "aria-live": "polite" });
  const maps = el("div", { class: "mgpt-watch__maps" });
  const legend = el("p", { class: "mgpt-legend" },
    el("span", { class: "mgpt-legend__bar", "aria-hidden": "true" }),
    "Colour (viridis): attention weight from 0 (dark purple) to 1 (yellow). Each row adds up to 1. ∙ is the start marker.");
  root.replaceChildren(el("div", { class: "mgpt-watch__controls" }, field.box, toggle), explain, maps, legend);

  const setView = (next) => {
    view = next;
    headsButton.setAttribute("aria-pressed", String(view === "heads"));
    oneButton.setAttribute("aria-pressed", String(view === "one"));
    render();
  };
  headsButton.addEventListener("click", () => setView("heads"));
  oneButton.addEventListener("click", () => setView("one"));

  function render() {
    if (state.disposed) return;
    const trace = forwardAttention(model, current);
    const labels = trace.labels;
    const compact = labels.length > 7;
    maps.replaceChildren();
    maps.dataset.view = view;
    maps.dataset.name = current;
    if (view === "heads") {
      explain.textContent = `Four separate attention patterns for “${current}”: head h compares numbers ${0}–${headDim - 1}, ` +
        `${headDim}–${2 * headDim - 1}, … of the query with the same numbers of every key. Row = the letter that looks back; column = the position it looks at.`;
      for (let h = 0; h < nHead; h++) {
        const rows = trace.head_weights.map((perHead) => perHead[h]);
        maps.append(scrollBox(el("div", { class: "mgpt-watch__map", "data-head": String(h + 1) },
          heatmapTable({ caption: `Head ${h + 1}: numbers ${h * headDim}–${(h + 1) * headDim - 1}`, labels, rows, compact })),
          `Head ${h + 1} heatmap`));
      }
    } else {
      explain.textContent = `One pattern for “${current}”: a single head compares all ${nEmbd} numbers of the query with all ${nEmbd} of every key ` +
        `(same trained weights, scores divided by √${nEmbd}). Every letter now gets one way of looking back instead of ${nHead}.`;
      maps.append(scrollBox(el("div", { class: "mgpt-watch__map mgpt-watch__map--one", "data-head": "all" },
        heatmapTable({ caption: `One head: numbers 0–${nEmbd - 1}`, labels, rows: trace.single_head_weights, compact })),
        "One-head heatmap"));
    }
  }
  render();
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
  const state = mounted.get(root);
  if (state) {
    state.disposed = true;
    if (window.mhaMicrogpt === state.hook) delete window.mhaMicrogpt;
  }
  mounted.delete(root);
}
