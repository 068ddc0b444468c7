// The stepper's first steps (page 4): from the learner's prompt to E, the ids laid into
// the context's slots, then each slot's token row plus its position row.

import { el } from "../runtime/dom.js";
import { strip } from "./stepper_draw.js";
import { f3, q } from "./stepper_format.js";

export const INPUT_STEPS = [
  {
    key: "tokens",
    title: "Your prompt, laid into the slots",
    map: ["tokens"],
    shape: (r) => `X: [1, ${r.T}] token ids`,
    code: ["export/generate.py#prompt-history", "export/windows.py#context-window"],
    draw(r, view) {
      const slots = el("div", { class: "mha-st__slots", "aria-hidden": "true" });
      for (let s = 0; s < r.T; s++) {
        const id = r.ids[s];
        const kind = id === r.special.PAD ? "pad" : id === r.special.BOS ? "bos" : id === r.special.UNK ? "unk" : "tok";
        slots.append(el("span", { class: `mha-st__slot mha-st__slot--${kind}` }));
      }
      const chips = el("ol", { class: "mha-st__chips" });
      r.real.forEach((s, i) => {
        const id = r.ids[s];
        const kind = id === r.special.BOS ? "bos" : id === r.special.UNK ? "unk" : "tok";
        chips.append(
          el(
            "li",
            { class: `mha-st__chip mha-st__chip--${kind}` },
            el("span", { class: "mha-st__chip-tok", text: r.labels[i] }),
            el("span", {
              class: "mha-st__chip-id",
              text: `${kind === "unk" ? "UNK " : kind === "bos" ? "BOS " : ""}id ${id} · slot ${s}`,
            }),
          ),
        );
      });
      view.picture.append(
        el(
          "p",
          { class: "mha-st__legend", "aria-hidden": "true" },
          el("span", { class: "mha-st__key mha-st__slot--pad" }),
          " PAD ",
          el("span", { class: "mha-st__key mha-st__slot--bos" }),
          " BOS ",
          el("span", { class: "mha-st__key mha-st__slot--tok" }),
          " word ",
          el("span", { class: "mha-st__key mha-st__slot--unk" }),
          " unknown (UNK)",
        ),
        slots,
        chips,
      );
      const pads = r.T - r.n;
      const unk = r.words.filter((w) => w && w.unknown);
      let sentence = `${r.n} id${r.n === 1 ? "" : "s"}: BOS (id ${r.special.BOS}) opens every prompt, then one id per word or mark`;
      if (unk.length)
        sentence += `; ${unk.map((w) => q(w.text)).join(", ")} ${unk.length > 1 ? "are" : "is"} not in the vocabulary, so ${unk.length > 1 ? "they read" : "it reads"} as UNK (id ${r.special.UNK})`;
      sentence += pads ? `; the ${pads} empty slots on the left are PAD (id ${r.special.PAD}).` : ".";
      if (r.dropped)
        sentence += ` The prompt had ${r.dropped + r.T} ids, so the first ${r.dropped} no longer fit in the ${r.T} slots.`;
      const numbers = [
        ["real slots", r.n],
        ["PAD slots", pads],
        ["final slot", `${r.final} (${q(r.labels[r.n - 1])}, id ${r.ids[r.final]})`],
      ];
      const alt = `The ${r.T} slots: ${pads} PAD, then ${r.real.map((s, i) => `${r.labels[i]} (id ${r.ids[s]})`).join(", ")}.`;
      return { sentence, numbers, alt };
    },
  },
  {
    key: "E",
    title: "Token row + position row = E",
    map: ["tokens", "positions", "E"],
    shape: (r) => `E: [1, ${r.T}, ${r.d}]`,
    code: ["export/multihead.py#embed", "export/multihead.py#forward-full"],
    draw(r, view) {
      const last = r.n - 1;
      const row = (get) => Array.from({ length: r.d }, (_, i) => get(r.final, i));
      strip({
        host: view.picture,
        values: row(r.t.token_rows),
        label: `token row of ${q(r.labels[last])} (id ${r.ids[r.final]})`,
        highlight: [0],
      });
      strip({
        host: view.picture,
        values: row(r.t.position_rows),
        label: `position row of slot ${r.final}`,
        highlight: [0],
      });
      strip({ host: view.picture, values: row(r.t.E), label: `E at slot ${r.final}: their sum`, highlight: [0] });
      heatmapRows(r, view, (s, i) => r.t.E(s, i), r.d, `E, one row of ${r.d} numbers per real slot`, [last, [0]]);
      const [tok, pos, e] = [r.t.token_rows(r.final, 0), r.t.position_rows(r.final, 0), r.t.E(r.final, 0)];
      const sentence = `Each id fetches its row of ${r.d} numbers from the token table, and each slot its row from the position table (the same word in another slot gets another position row); E is their sum. At the final slot, ${q(r.labels[last])}, coordinate 0 is ${f3(tok)} + ${f3(pos)} = ${f3(e)}.`;
      return {
        sentence,
        numbers: [
          ["token row", f3(tok)],
          ["position row", f3(pos)],
          ["E", f3(e)],
        ],
        alt: `Token row, position row and E at the final slot ${r.labels[last]}, ${r.d} numbers each; coordinate 0: ${f3(tok)} plus ${f3(pos)} is ${f3(e)}. Below, E for all ${r.n} real slots.`,
      };
    },
  },
];

// E-like tensors: rows = real slots, columns = coordinates, signed colours.
function heatmapRows(r, view, get, cols, title, [hlRow, hlCols]) {
  const box = el("div", { class: "mha-st__rows" }, el("p", { class: "mha-st__heat-title", text: title }));
  view.picture.append(box);
  r.real.forEach((s, i) => {
    const line = el("div", { class: "mha-st__row" }, el("span", { class: "mha-st__row-label", text: r.labels[i] }));
    box.append(line);
    strip({
      host: line,
      values: Array.from({ length: cols }, (_, c) => get(s, c)),
      highlight: i === hlRow ? hlCols : [],
      maxWidth: 520,
    });
  });
}
