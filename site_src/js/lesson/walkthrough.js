// Attention heatmaps for the B = 2 walkthrough (lesson page 4).
//
// <div data-mha-widget="walkthrough"> loads wasm_assets/walkthrough.json
// (written by `python -m export walkthrough`) and draws, for the chosen
// example, one receiver-by-source table per head: each cell is an attention
// weight on the colour-blind-safe viridis scale, blocked cells are hatched and
// marked "blocked". The numbers stay in the cells, so nothing depends on colour.

import { loadJSON } from "../runtime/assets.js";
import { cellColours, viridis } from "../runtime/colormap.js";

const roots = new WeakSet();

function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else node.setAttribute(k, v);
  }
  node.append(...children);
  return node;
}

function heatmap(data, b, h) {
  const row = data.rows[b];
  const labels = row.slot_tokens;
  const slotNames = data.shown_slots.map((s, i) => `slot ${s} (${row.slot_tokens[i]})`);
  const table = el("table", { class: "mha-heatmap" });
  table.append(el("caption", { text: `Head ${h + 1}` }));
  const head = el("tr", {}, el("th", { scope: "col", text: "receiver", title: "rows: receivers; columns: sources" }));
  labels.forEach((l, j) => head.append(el("th", { scope: "col", text: l, title: slotNames[j] })));
  table.append(el("thead", {}, head));
  const body = el("tbody");
  row.A[h].forEach((weights, i) => {
    const tr = el("tr", {}, el("th", { scope: "row", text: labels[i], title: slotNames[i] }));
    weights.forEach((w, j) => {
      if (row.mask[i][j]) {
        tr.append(el("td", { class: "is-masked", title: "blocked", text: "·" }));
        return;
      }
      const { background, color } = cellColours(w);
      const td = el("td", { text: w.toFixed(2), title: `receiver ${slotNames[i]}, source ${slotNames[j]}: ${w.toFixed(4)}` });
      td.style.background = background;
      td.style.color = color;
      tr.append(td);
    });
    body.append(tr);
  });
  table.append(body);
  // Focusable and named: on a phone the heatmap scrolls sideways, also by keyboard.
  const scroll = el("div", { class: "mha-scroll", tabindex: "0", role: "region",
    "aria-label": `Attention weights of head ${h + 1}` }, table);
  return el("figure", {}, scroll);
}

function legend() {
  const stops = [0, 0.25, 0.5, 0.75, 1].map((x) => `rgb(${viridis(x).join(",")}) ${x * 100}%`).join(", ");
  const bar = el("span", { class: "mha-legend__bar", "aria-hidden": "true" });
  bar.style.background = `linear-gradient(to right, ${stops})`;
  return el("p", { class: "mha-legend" }, el("span", { text: "weight 0" }), bar, el("span", { text: "1" }),
    el("span", { text: " · hatched “·”: blocked by the mask" }));
}

export async function mount(root) {
  if (roots.has(root)) return;
  roots.add(root);
  const status = el("p", { class: "mha-panel mha-panel--info", role: "status", text: "Loading the trained model's attention weights…" });
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
  data.rows.forEach((r, b) => select.append(el("option", { value: String(b), text: `${r.prefix.join(" ")} → ${r.target}` })));
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
  roots.delete(root);
}
