// Lesson page 5: heads forming during training, scrubbed with a slider.
//
// Reads wasm_assets/head_growth.json (written by `python -m export head_growth`):
// snapshots of a rerun of the four-head seed-11 training at log-spaced updates,
// each with every head's attention from the final position of a few prompts,
// the head-atlas shares and the knock-out perplexities. The slider picks a
// snapshot; the page's knock-out figure (#fig-head-growth, drawn at build time
// from the same file) marks it.

import { loadJSON } from "../runtime/assets.js";
import { claim, release } from "../runtime/widget.js";
import { el, uid } from "../runtime/dom.js";

export const PATH = "wasm_assets/head_growth.json";
const state = new Map();

const pct = (x) => `${Math.round(100 * x)}%`;
const signed = (x) => `${x >= 0 ? "+" : "\u2212"}${Math.abs(100 * x).toFixed(1)}%`;
const shown = (t) => (t.startsWith("<") && t.endsWith(">") ? t.slice(1, -1) : t);

function attentionTable(prompt, snapshotLabel) {
  const heads = prompt.weights.length;
  const head = el(
    "tr",
    {},
    el("th", { scope: "col", text: "head" }),
    ...prompt.tokens.map((t) => el("th", { scope: "col", text: shown(t) })),
  );
  const rows = prompt.weights.map((row, h) =>
    el(
      "tr",
      {},
      el("th", { scope: "row", class: `mha-hg__head h${h}-text`, text: `${h + 1}` }),
      ...row.map((w, j) =>
        el(
          "td",
          {
            class: `mha-hg__cell mha-hg__cell--h${h}`,
            "data-head": String(h + 1),
            "data-slot": String(j),
            "data-weight": String(w),
            style: `--w: ${Math.min(1, w).toFixed(3)}`,
            title: `head ${h + 1} on \u201c${shown(prompt.tokens[j])}\u201d: ${pct(w)}`,
          },
          w >= 0.1 ? pct(w) : "",
        ),
      ),
    ),
  );
  return el(
    "table",
    { class: "mha-hg__table", "data-hg": "attention" },
    el("caption", {
      class: "mha-hg__sr",
      text: `Attention of the ${heads} heads from the last token of \u201c${prompt.prompt}\u201d, ${snapshotLabel}`,
    }),
    el("thead", {}, head),
    el("tbody", {}, ...rows),
  );
}

export async function mount(root) {
  if (!claim(state, root)) return;
  const status = el("p", {
    class: "mha-panel mha-panel--info",
    role: "status",
    text: "Loading the training snapshots\u2026",
  });
  root.replaceChildren(status);
  let data;
  try {
    data = await loadJSON(PATH);
  } catch (err) {
    status.className = "mha-panel mha-panel--error";
    status.setAttribute("role", "alert");
    status.textContent = `The training snapshots could not be loaded (${err.message}). The figure above shows the knock-out costs.`;
    return;
  }
  if (!root.isConnected) return;
  const snaps = data.snapshots;
  const sliderId = uid("mha-hg-slider");
  const promptId = uid("mha-hg-prompt");
  const label = (s) => `update ${s.update.toLocaleString("en")} of ${data.updates.toLocaleString("en")}`;
  const slider = el("input", {
    type: "range",
    id: sliderId,
    min: "0",
    max: String(snaps.length - 1),
    step: "1",
    value: "0",
    "data-hg": "slider",
  });
  const select = el(
    "select",
    { id: promptId, "data-hg": "prompt" },
    ...data.prompts.map((p, i) => el("option", { value: String(i), text: p })),
  );
  const updateText = el("output", { for: sliderId, class: "mha-hg__update", "data-hg": "update" });
  const table = el("div", {
    class: "mha-hg__scroll",
    tabindex: "0",
    role: "region",
    "aria-label": "Each head's attention on the prompt (scrolls sideways on a narrow screen)",
  });
  const roles = el("ul", { class: "mha-hg__roles", "data-hg": "roles" });
  const summary = el("p", { class: "mha-hg__summary", "aria-live": "polite", "data-hg": "summary" });
  const start = el("p", { class: "mha-hg__start", "data-hg": "start" });
  const figure = () => document.getElementById("fig-head-growth");
  // How far a head leans toward its strongest kind, above an even spread. At update 0 (the random
  // initialisation) every lean is chance: the largest one there is the yardstick for later leans.
  const excess = (s, h) => h.share[h.signature] - s.uniform[h.signature];
  const chance = snaps[0].update === 0 ? Math.max(...snaps[0].atlas.map((h) => excess(snaps[0], h))) : null;
  const points = (x) => `${(100 * x).toFixed(1)} points`;

  function draw() {
    const i = Number(slider.value);
    const s = snaps[i];
    const prompt = s.prompts[Number(select.value)];
    slider.setAttribute("aria-valuetext", label(s));
    updateText.textContent = label(s);
    root.dataset.snapshot = String(i);
    table.replaceChildren(attentionTable(prompt, label(s)));
    roles.replaceChildren(
      ...s.atlas.map((h, k) => {
        const sig = h.signature;
        const ko = s.knockout[`without_${h.head}`];
        const lean = excess(s, h);
        const small = s.update !== 0 && chance !== null && lean <= chance;
        return el(
          "li",
          { "data-head": String(h.head), "data-within-chance": String(small) },
          el("strong", { class: `h${k}-text`, text: `Head ${h.head}` }),
          ` leans most toward ${data.kinds[sig]}: ${pct(h.share[sig])} against ${pct(s.uniform[sig])} spread ` +
            `evenly (+${points(lean)}${small ? ", no more than chance gave at the random start" : ""}). `,
          `Without it: perplexity ${ko.test_perplexity.toFixed(2)} (${signed(ko.perplexity_change)}).`,
        );
      }),
    );
    start.hidden = s.update !== 0;
    start.textContent =
      s.update === 0
        ? `Update 0 is the random start: the leans below (at most +${points(chance)}) are chance, not roles.`
        : "";
    const top = prompt.weights.map((row) => row.indexOf(Math.max(...row)));
    summary.textContent =
      `At ${label(s)}, the full model's perplexity on the test subset is ` +
      `${s.perplexity.toFixed(2)}. On \u201c${prompt.prompt}\u201d the heads put most weight on ` +
      top.map((j, h) => `\u201c${shown(prompt.tokens[j])}\u201d (head ${h + 1})`).join(", ") +
      ".";
    const fig = figure();
    if (fig) fig.dataset.activeSnapshot = String(i);
  }
  slider.addEventListener("input", draw);
  select.addEventListener("change", draw);
  root.replaceChildren(
    el(
      "div",
      { class: "mha-hg" },
      el(
        "div",
        { class: "mha-hg__controls" },
        el("label", { for: sliderId, text: "Training so far:" }),
        slider,
        updateText,
      ),
      el("div", { class: "mha-hg__controls" }, el("label", { for: promptId, text: "Prompt:" }), select),
      table,
      summary,
      start,
      roles,
    ),
  );
  draw();
}

export function dispose(root) {
  release(state, root);
  const fig = document.getElementById("fig-head-growth");
  if (fig) delete fig.dataset.activeSnapshot;
}
