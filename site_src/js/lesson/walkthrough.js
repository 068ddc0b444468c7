// Attention heatmaps for the B = 2 walkthrough (lesson page 4).
//
// <div data-mha-widget="walkthrough"> loads wasm_assets/walkthrough.json
// (written by `python -m export walkthrough`) and draws, for the chosen
// example, one receiver-by-source table per head: each cell is an attention
// weight on the colour-blind-safe viridis scale, blocked cells are hatched and
// marked "blocked". The numbers stay in the cells, so nothing depends on colour.

import { loadJSON } from "../runtime/assets.js";
import { viridis } from "../runtime/colormap.js";
import { el } from "../runtime/dom.js";
import { heatmapTable } from "../runtime/heatmap.js";
import { claim, release } from "../runtime/widget.js";

const state = new Map();
const PAD_TOKEN = "<PAD>"; // the vocabulary's padding item as walkthrough.json names its slots

function heatmap(data, b, h) {
  const row = data.rows[b];
  const labels = row.slot_tokens;
  const slotNames = data.shown_slots.map((s, i) => `slot ${s} (${row.slot_tokens[i]})`);
  const table = heatmapTable({
    caption: `Head ${h + 1}`,
    tableClass: "mha-heatmap",
    corner: { text: "receiver", attrs: { title: "rows: receivers; columns: sources" } },
    columns: labels.map((l, j) => ({ text: l, attrs: { title: slotNames[j] } })),
    rows: row.A[h].map((weights, i) => ({
      head: { text: labels[i], attrs: { title: slotNames[i] } },
      // A PAD receiver predicts nothing, and its weights go to the padding before the shown slots,
      // so its shown cells would not add up to 1: the row stays blank (the legend says why).
      cells: weights.map((w, j) =>
        labels[i] === PAD_TOKEN
          ? { text: "", attrs: { class: "is-pad-row", title: "a PAD receiver: not shown" } }
          : row.mask[i][j]
            ? { text: "·", attrs: { class: "is-masked", title: "blocked" } }
            : {
                text: w.toFixed(2),
                shade: w,
                attrs: { title: `receiver ${slotNames[i]}, source ${slotNames[j]}: ${w.toFixed(4)}` },
              },
      ),
    })),
  });
  // Focusable and named: on a phone the heatmap scrolls sideways, also by keyboard.
  const scroll = el(
    "div",
    { class: "mha-scroll", tabindex: "0", role: "region", "aria-label": `Attention weights of head ${h + 1}` },
    table,
  );
  return el("figure", {}, scroll);
}

function legend() {
  const stops = [0, 0.25, 0.5, 0.75, 1].map((x) => `rgb(${viridis(x).join(",")}) ${x * 100}%`).join(", ");
  const bar = el("span", { class: "mha-legend__bar", "aria-hidden": "true" });
  bar.style.background = `linear-gradient(to right, ${stops})`;
  return el(
    "p",
    { class: "mha-legend" },
    el("span", { text: "weight 0" }),
    bar,
    el("span", { text: "1" }),
    el("span", {
      text: " · hatched “·”: blocked by the mask · PAD rows blank: a PAD slot predicts nothing, and its weights go to the padding left of the shown slots",
    }),
  );
}

export async function mount(root) {
  if (!claim(state, root)) return;
  const status = el("p", {
    class: "mha-panel mha-panel--info",
    role: "status",
    text: "Loading the trained model's attention weights…",
  });
  root.replaceChildren(status);
  let data;
  try {
    data = await loadJSON("wasm_assets/walkthrough.json");
  } catch (err) {
    status.className = "mha-panel mha-panel--error";
    status.textContent = `The walkthrough data could not be loaded (${err.message}). The tables above show the same weights.`;
    return;
  }
  const id = `mha-walk-${Math.random().toString(36).slice(2, 8)}`;
  const select = el("select", { id });
  data.rows.forEach((r, b) =>
    select.append(el("option", { value: String(b), text: `${r.prefix.join(" ")} → ${r.target}` })),
  );
  const grid = el("div", { class: "mha-heads", "aria-live": "polite" });
  const draw = () => {
    const b = Number(select.value);
    grid.replaceChildren(...Array.from({ length: data.heads }, (_, h) => heatmap(data, b, h)));
  };
  select.addEventListener("change", draw);
  const controls = el("div", { class: "mha-walk__controls" }, el("label", { for: id, text: "Example:" }), select);
  root.replaceChildren(controls, legend(), grid);
  draw();
}

export function dispose(root) {
  release(state, root);
}
