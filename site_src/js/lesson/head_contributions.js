// Lesson page 2: heads add up. concat · W_O is the sum of each head's own part.
//
// Head h's message only ever meets its own rows of W_O (rows h·d_h … (h+1)·d_h − 1),
// so concat · W_O = Σ_h message_h · W_O[rows of h]: every head adds its own
// contribution to the update. For the receiver chosen in the head explorer (it
// announces its choice with a "mha:explorer-receiver" event), this widget shows each
// head's message times its rows, their sum, and the worksheet's own concat · W_O
// (wasm_assets/worksheet.json, computed by export/lesson/worksheet.py), which the
// sum must equal.

import { headColourVar } from "../runtime/palette.js";
import { claimLoaded, release } from "../runtime/widget.js";
import { el, failure, fmt, loadWorksheet, vec } from "./worksheet_ui.js";

const state = new Map();

// message (d_h numbers) times rows [from, from + d_h) of W_O: one row of d_model numbers.
export function contribution(message, W_O, from) {
  const out = new Array(W_O[0].length).fill(0);
  message.forEach((m, r) =>
    W_O[from + r].forEach((w, c) => {
      out[c] += m * w;
    }),
  );
  return out;
}

export async function mount(root) {
  const got = await claimLoaded(state, root, loadWorksheet, { extra: { receiver: null, onPick: null }, fail: failure });
  if (!got) return;
  const { entry: s, data: ws } = got;
  const T = ws.tokens.length;
  const dh = ws.head_dim;
  const explorer = document.querySelector("[data-mha-widget='head_explorer']");
  s.receiver = explorer && explorer.dataset.receiver ? Number(explorer.dataset.receiver) : T - 1;

  const title = el("p", { class: "mha-hc__title", "aria-live": "polite" });
  const body = el("tbody");
  const table = el(
    "table",
    { class: "mha-hc__table" },
    el("caption", { class: "mha-ws__sr", text: "Each head's contribution to concat · W_O, and their sum" }),
    el(
      "thead",
      {},
      el(
        "tr",
        {},
        el("th", { scope: "col", text: "part" }),
        el("th", { scope: "col", text: "message × its rows of W_O" }),
        el("th", { scope: "col", text: "contribution" }),
      ),
    ),
    body,
  );
  const check = el("p", { class: "mha-hc__check", "data-hc": "check" });

  function render() {
    const i = s.receiver;
    const parts = Array.from({ length: ws.heads }, (_, h) => contribution(ws.H[h][i], ws.W_O, h * dh));
    const sum = parts.reduce((acc, p) => acc.map((x, c) => x + p[c]));
    const update = ws.update[i];
    const gap = Math.max(...sum.map((x, c) => Math.abs(x - update[c])));
    title.textContent = `Receiver \u201c${ws.tokens[i]}\u201d (slot ${i}): what each head adds to the update`;
    const rows = parts.map((p, h) =>
      el(
        "tr",
        {
          class: `mha-hc__row mha-hc__row--h${h + 1}`,
          "data-head": String(h + 1),
          "data-contribution": JSON.stringify(p),
        },
        el(
          "th",
          { scope: "row" },
          el("span", { class: "mha-swatch", style: `background: ${headColourVar(h)}`, "aria-hidden": "true" }),
          ` head ${h + 1}`,
        ),
        el("td", { text: `${vec(ws.H[h][i])} \u00d7 W_O rows ${h * dh}\u2013${(h + 1) * dh - 1}` }),
        el("td", { class: "mha-hc__vec", text: vec(p) }),
      ),
    );
    rows.push(
      el(
        "tr",
        { class: "mha-hc__row mha-hc__row--sum", "data-sum": JSON.stringify(sum) },
        el("th", { scope: "row", text: "sum" }),
        el("td", { text: parts.map((_, h) => `head ${h + 1}`).join(" + ") }),
        el("td", { class: "mha-hc__vec", text: vec(sum) }),
      ),
    );
    body.replaceChildren(...rows);
    check.textContent =
      `The worksheet's concat \u00b7 W_O for this receiver is ${vec(update)}: ` +
      (gap < 1e-9 ? "the same numbers. " : `it differs by ${fmt(gap, 12)}. `) +
      "Each head changes the update only through its own rows of W_O.";
    root.dataset.receiver = String(i);
  }

  s.onPick = (event) => {
    s.receiver = event.detail.receiver;
    render();
  };
  document.addEventListener("mha:explorer-receiver", s.onPick);
  root.replaceChildren(
    el(
      "div",
      { class: "mha-hc" },
      title,
      el(
        "div",
        { class: "mha-ws__scroll", tabindex: "0", role: "region", "aria-label": "Each head's contribution" },
        table,
      ),
      check,
    ),
  );
  render();
}

export function dispose(root) {
  const s = release(state, root);
  if (s && s.onPick) document.removeEventListener("mha:explorer-receiver", s.onPick);
}
