// "Unlocked" on the microgpt page: microgpt.py (export/microgpt/microgpt.py, the
// whole model on one page) with line numbers, its multi-head attention lines
// highlighted (found by the two marker comments), the lines the exercise's
// blanks stand for marked again, and a count of the lines learned so far.
//
// "Learned" means: every line up to the start of the multi-head block before
// the exercise is solved (the earlier lessons' material), and every line up
// to the end of the attention block once it is solved.

import { siteUrl } from "../runtime/assets.js";
import { getProgress, onProgress } from "./progress.js";
import { el } from "./ui.js";

export const SOURCE_PATH = "wasm_assets/microgpt.py";
const BEGIN = "# --- multi-head attention begins ---";
const END = "# --- multi-head attention ends ---";
const mounted = new Map();

export function findBlock(lines) {
  const begin = lines.findIndex((l) => l.trim() === BEGIN);
  const end = lines.findIndex((l) => l.trim() === END);
  if (begin < 0 || end <= begin) return null;
  return { beginMarker: begin + 1, endMarker: end + 1, first: begin + 2, last: end }; // 1-based
}

export function mount(root) {
  if (mounted.has(root)) return;
  const state = { off: null, disposed: false };
  mounted.set(root, state);
  root.replaceChildren(el("p", { class: "mgpt-loading", text: "Loading microgpt.py…" }));
  fetch(siteUrl(SOURCE_PATH))
    .then((r) => {
      if (!r.ok) throw new Error(`${SOURCE_PATH} is missing on this site (HTTP ${r.status})`);
      return r.text();
    })
    .then((text) => {
      if (!state.disposed) build(root, text.replace(/\n$/, "").split("\n"), state);
    })
    .catch((err) => {
      root.replaceChildren(el("p", { class: "mha-panel mha-panel--error", role: "alert", text: `microgpt.py could not be loaded: ${err.message}` }));
    });
}

function build(root, lines, state) {
  const block = findBlock(lines);
  if (!block) {
    root.replaceChildren(el("p", { class: "mha-panel mha-panel--error", role: "alert", text: "microgpt.py has no multi-head attention markers." }));
    return;
  }
  const inBlock = (n) => n >= block.first && n <= block.last;
  const find = (re) => {
    for (let n = block.first; n <= block.last; n++) if (re.test(lines[n - 1])) return n;
    return null;
  };
  const loopLine = find(/for h in range/);
  const extendLine = find(/\.extend\(/);
  const woLine = find(/attn_wo/);
  // The exercise's two blanks: slicing every key and value, and extend.
  const blanks = new Set([find(/^\s*k_h = /), find(/^\s*v_h = /), extendLine].filter(Boolean));

  const count = el("span", { class: "mgpt-src__count", "aria-live": "polite" });
  const intro = el("p", { class: "mgpt-src__intro" });
  const parts = [`Lines ${block.first} to ${block.last} (highlighted) are multi-head attention`];
  if (loopLine) parts.push(`line ${loopLine} loops over the heads and the next lines slice q, every key and every value`);
  if (extendLine) parts.push(`line ${extendLine} glues each head's four numbers on with extend`);
  if (woLine) parts.push(`line ${woLine} mixes the heads with attn_wo`);
  intro.textContent = `${parts.join("; ")}. The lines marked ✎ (${[...blanks].join(", ")}) are the ones you wrote ` +
    "in the exercise, with the same names: start, q_h, k_h, v_h and HEAD_DIM.";

  const code = el("code");
  lines.forEach((line, i) => {
    const n = i + 1;
    const classes = `mgpt-src__line${inBlock(n) ? " mgpt-src__line--mha" : ""}${blanks.has(n) ? " mgpt-src__line--blank" : ""}`;
    const row = el("span", { class: classes, "data-line": String(n) },
      el("span", { class: "mgpt-src__no", "aria-hidden": "true", text: blanks.has(n) ? `✎${n}` : String(n) }),
      el("span", { class: "mgpt-src__text", text: line || " " }));
    code.append(row, "\n");
  });
  const scroller = el("div", { class: "mgpt-src", tabIndex: 0, role: "region", "aria-label": `microgpt.py, ${lines.length} lines; lines ${block.first} to ${block.last} are highlighted` },
    el("pre", {}, code));
  const title = el("p", { class: "mgpt-src__title" }, el("strong", { text: "microgpt.py" }), count);
  root.replaceChildren(intro, title, scroller);

  const render = (progress) => {
    const learned = progress.solved ? block.endMarker : block.beginMarker - 1;
    count.textContent = ` ${learned} / ${lines.length} lines learned` +
      (progress.solved ? " (multi-head attention unlocked)" : " (solve the exercise to unlock the highlighted block)");
    count.dataset.learned = String(learned);
    count.dataset.total = String(lines.length);
    scroller.dataset.solved = String(progress.solved);
  };
  render(getProgress());
  state.off = onProgress((progress) => render(progress));
  // Show the highlighted block first (scroll inside the box, not the page).
  requestAnimationFrame(() => {
    const first = code.querySelector(".mgpt-src__line--mha");
    if (first) scroller.scrollTop = Math.max(0, first.offsetTop - scroller.clientHeight / 4);
  });
}

export function dispose(root) {
  const state = mounted.get(root);
  if (state) {
    state.disposed = true;
    if (state.off) state.off();
  }
  mounted.delete(root);
}
