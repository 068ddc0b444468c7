// Lesson page 2: the head explorer over the two-head worksheet.
//
// The learner picks a receiver (one of the ten tokens) and a head with native
// radio buttons (Tab into a group, arrow keys to move). The widget shows that
// receiver's query, its score against every key, the softmax weights as a
// viridis heat strip and a table, and the message (the weighted sum of value
// rows). All numbers come from wasm_assets/worksheet.json, which
// export/worksheet.py computes.

import { claimLoaded, release } from "../runtime/widget.js";
import { el, failure, fixed, fmt, heatStyle, loadWorksheet, uid, vec } from "./worksheet_ui.js";

const state = new Map();

function radioGroup({ legend, name, options, checked, onChange, className }) {
  const inputs = [];
  const items = options.map(({ value, label, srLabel }) => {
    const id = uid("mha-hx-opt");
    const input = el("input", { type: "radio", name, id, value: String(value), class: "mha-hx__radio" });
    input.checked = value === checked;
    input.addEventListener("change", () => {
      if (input.checked) onChange(value);
    });
    inputs.push(input);
    return el(
      "span",
      { class: "mha-hx__option" },
      input,
      el("label", { for: id, "aria-label": srLabel || label }, label),
    );
  });
  return {
    inputs,
    node: el("fieldset", { class: `mha-hx__group ${className || ""}` }, el("legend", { text: legend }), ...items),
  };
}

export async function mount(root) {
  const got = await claimLoaded(state, root, loadWorksheet, { extra: { receiver: null, head: 0 }, fail: failure });
  if (!got) return;
  const { entry: s, data: ws } = got;
  const T = ws.tokens.length;
  s.receiver = T - 1;
  const group = uid("mha-hx");
  const slotLabel = (i) => `${i} \u00b7 ${ws.tokens[i]}`; // slots count from 0, as in the code and pages 3-4

  const receivers = radioGroup({
    legend: "Receiver (the token whose query reads the others)",
    name: `${group}-receiver`,
    className: "mha-hx__tokens",
    options: ws.tokens.map((tok, i) => ({ value: i, label: tok, srLabel: `slot ${i}, ${tok}` })),
    checked: s.receiver,
    onChange: (v) => {
      s.receiver = v;
      render();
    },
  });
  const heads = radioGroup({
    legend: "Head",
    name: `${group}-head`,
    options: Array.from({ length: ws.heads }, (_, h) => ({ value: h, label: `Head ${h + 1}` })),
    checked: s.head,
    onChange: (v) => {
      s.head = v;
      render();
    },
  });

  const summary = el("p", { class: "mha-hx__summary", "aria-live": "polite", "data-hx": "summary" });
  const query = el("p", { class: "mha-hx__query", "data-hx": "query" });
  const strip = el("div", { class: "mha-hx__strip", role: "img", "data-hx": "strip" });
  const tableBody = el("tbody");
  const table = el(
    "table",
    { class: "mha-hx__table", "data-hx": "table" },
    el("caption", { text: "Sources of this receiver, in the chosen head" }),
    el(
      "thead",
      {},
      el(
        "tr",
        {},
        el("th", { scope: "col", text: "source" }),
        el("th", { scope: "col", text: "key k" }),
        el("th", { scope: "col", text: "score q\u00b7k/\u221a2" }),
        el("th", { scope: "col", text: "weight" }),
        el("th", { scope: "col", text: "value v" }),
      ),
    ),
    tableBody,
  );
  const messageOut = el("p", { class: "mha-hx__message", "data-hx": "message" });
  const legend = el(
    "p",
    { class: "mha-hx__legend" },
    el("span", { class: "mha-hx__ramp", "aria-hidden": "true" }),
    "Colour: darker purple = weight near 0, yellow = weight near 1 (viridis, readable with common colour-vision differences). A dash marks a later token that the mask hides.",
  );

  function render() {
    const i = s.receiver;
    const h = s.head;
    const q = ws.Q[h][i];
    const weights = ws.A[h][i];
    const scores = ws.scores[h][i];
    const msg = ws.H[h][i];
    query.textContent = `Query of \u201c${ws.tokens[i]}\u201d (slot ${i}) in head ${h + 1}: q = ${vec(q)}`;

    strip.replaceChildren(
      ...ws.tokens.map((tok, j) => {
        const allowed = ws.mask[i][j] === 1;
        return el(
          "span",
          {
            class: `mha-hx__cell${allowed ? "" : " mha-hx__cell--masked"}`,
            "data-source": String(j),
            style: allowed ? heatStyle(weights[j]) : undefined,
          },
          el("span", { class: "mha-hx__cell-token", text: tok }),
          el("span", { class: "mha-hx__cell-weight", text: allowed ? fixed(weights[j]) : "\u2013" }),
        );
      }),
    );
    const readable = ws.tokens
      .map((tok, j) => (ws.mask[i][j] === 1 ? `${tok} ${fixed(weights[j])}` : null))
      .filter(Boolean);
    strip.setAttribute("aria-label", `Weights of head ${h + 1} for receiver slot ${i}: ${readable.join(", ")}`);

    tableBody.replaceChildren(
      ...ws.tokens.map((tok, j) => {
        const allowed = ws.mask[i][j] === 1;
        const cells = allowed
          ? [
              el("td", { text: vec(ws.K[h][j]) }),
              el("td", { text: fixed(scores[j]) }),
              el("td", { "data-weight": String(weights[j]), style: heatStyle(weights[j]), text: fixed(weights[j]) }),
              el("td", { text: vec(ws.V[h][j]) }),
            ]
          : [
              el("td", { text: vec(ws.K[h][j]) }),
              el("td", { class: "mha-hx__masked", colspan: "3", text: "masked: a later token, weight 0" }),
            ];
        return el(
          "tr",
          { "data-source": String(j), class: allowed ? "" : "mha-hx__row--masked" },
          el("th", { scope: "row", text: slotLabel(j) }),
          ...cells,
        );
      }),
    );

    const terms = ws.tokens
      .map((_, j) => j)
      .filter((j) => ws.mask[i][j] === 1)
      .map((j) => `${fixed(weights[j])} \u00d7 ${vec(ws.V[h][j])}`);
    messageOut.replaceChildren(
      el("strong", { text: `Message h = ${vec(msg)}` }),
      el("br"),
      el("span", { class: "mha-hx__sum", text: `= ${terms.join(" + ")}` }),
    );

    let best = 0;
    for (let j = 1; j <= i; j++) if (weights[j] > weights[best]) best = j;
    const total = weights.reduce((a, b) => a + b, 0);
    summary.textContent =
      `Receiver \u201c${ws.tokens[i]}\u201d (slot ${i}), head ${h + 1}: it may read slots 0 to ${i}; ` +
      `the largest weight, ${fixed(weights[best])}, is on \u201c${ws.tokens[best]}\u201d (slot ${best}). ` +
      `The weights add up to ${fmt(total)}. Message ${vec(msg)}.`;
    root.dataset.receiver = String(i);
    root.dataset.head = String(h);
    // page 2's head contributions follow the chosen receiver
    document.dispatchEvent(new CustomEvent("mha:explorer-receiver", { detail: { receiver: i } }));
    // The flow figure of this page (drawn by site_src/hooks/figures.py) highlights the chosen head's lane.
    for (const fig of document.querySelectorAll('.mha-fig[data-fig="operation-flow"]')) {
      fig.dataset.activeHead = String(h);
      const status = fig.querySelector(".mha-fig__status");
      if (status)
        status.textContent = `Highlighted: head ${h + 1}, as chosen in the head explorer (receiver \u201c${ws.tokens[i]}\u201d, slot ${i}).`;
    }
  }

  root.replaceChildren(
    el(
      "div",
      { class: "mha-hx" },
      el("div", { class: "mha-hx__controls" }, receivers.node, heads.node),
      summary,
      query,
      strip,
      legend,
      el(
        "div",
        { class: "mha-ws__scroll", tabindex: "0", role: "region", "aria-label": "Scores, weights and values" },
        table,
      ),
      messageOut,
    ),
  );
  render();
}

export function dispose(root) {
  release(state, root);
}
