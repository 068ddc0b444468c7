// Lesson page 2: one stage of the two-head worksheet as small rounded matrices.
//
//   <div data-mha-widget="worksheet" data-show="E"></div>
//
// data-show is one of: E, W_Q, W_K, W_V, W_O, Q, K, V, scores, A, H, concat,
// update, output. Per-head stages (Q, K, V, scores, A, H) show both heads.
// The numbers come from wasm_assets/worksheet.json (export/worksheet.py).

import { claimLoaded, release } from "../runtime/widget.js";
import { el, failure, loadWorksheet, matrixTable } from "./worksheet_ui.js";

const state = new Map();

const COORDS = (n, prefix = "") => Array.from({ length: n }, (_, k) => `${prefix}${k + 1}`);

function slotLabels(ws) {
  return ws.tokens.map((tok, i) => `${i} ${tok}`); // slots count from 0, as on pages 3-4
}

const FULL = {
  E: ["E: token row + position row, one row per token", (ws) => ws.E],
  concat: [
    "Concatenation [H\u2081 | H\u2082]: head 1 gives columns 1\u20132, head 2 gives 3\u20134",
    (ws) => ws.concat,
  ],
  update: ["Update: concatenation \u00d7 W_O", (ws) => ws.update],
  output: ["Output: E + update (the residual)", (ws) => ws.output],
};
const WEIGHTS = {
  W_Q: "W_Q (4 \u00d7 4): columns 1\u20132 make head 1\u2019s queries, 3\u20134 head 2\u2019s",
  W_K: "W_K (4 \u00d7 4): columns 1\u20132 make head 1\u2019s keys, 3\u20134 head 2\u2019s",
  W_V: "W_V (4 \u00d7 4): columns 1\u20132 make head 1\u2019s values, 3\u20134 head 2\u2019s",
  W_O: "W_O (4 \u00d7 4): mixes the concatenated messages back to width 4",
};
const PER_HEAD = {
  Q: "queries Q",
  K: "keys K",
  V: "values V",
  H: "messages H = A V",
  scores: "scores Q K\u1d40 / \u221a2 (dash = masked)",
  A: "weights A = softmax of each score row",
};

function render(ws, show) {
  const rows = slotLabels(ws);
  if (FULL[show]) {
    const [caption, pick] = FULL[show];
    return [matrixTable({ caption, rowLabels: rows, colLabels: COORDS(ws.d_model), rows: pick(ws), name: show })];
  }
  if (WEIGHTS[show]) {
    return [
      matrixTable({
        caption: WEIGHTS[show],
        rowLabels: COORDS(ws.d_model, "in "),
        colLabels: COORDS(ws.d_model, "out "),
        rows: ws[show],
        digits: 1,
        name: show,
      }),
    ];
  }
  if (PER_HEAD[show]) {
    return Array.from({ length: ws.heads }, (_, h) => {
      const square = show === "scores" || show === "A";
      return matrixTable({
        caption: `Head ${h + 1}: ${PER_HEAD[show]}${square ? " (rows: receivers, columns: sources)" : ""}`,
        rowLabels: rows,
        colLabels: square ? ws.tokens.map((_, j) => String(j)) : COORDS(ws.head_dim), // sources count from 0, like the receivers
        rows: ws[show][h],
        heat: show === "A",
        masked: square ? (i, j) => ws.mask[i][j] !== 1 : null,
        name: `${show}-${h + 1}`,
      });
    });
  }
  throw new Error(`unknown worksheet stage "${show}"`);
}

export async function mount(root) {
  const tablesOf = async () => render(await loadWorksheet(), root.dataset.show || "E");
  const got = await claimLoaded(state, root, tablesOf, { fail: failure });
  if (!got) return;
  const tables = got.data;
  root.replaceChildren(
    el("div", { class: `mha-ws__stage${tables.length > 1 ? " mha-ws__stage--pair" : ""}` }, ...tables),
  );
}

export function dispose(root) {
  release(state, root);
}
