// The stepper's last steps (page 4): from the heads' messages to the next token. The
// messages are joined, W_O adds each head's part into one update, E is added back, and only
// the final slot goes on through the hidden layer to the logits, where greedy decoding picks.

import { el } from "../runtime/dom.js";
import { headColour } from "../runtime/palette.js";
import { bars, strip } from "./stepper_draw.js";
import { f2, f3, headName, pct, q } from "./stepper_format.js";
import { headGroups } from "./stepper_steps_attention.js";

export const OUTPUT_STEPS = [
  {
    key: "concat",
    title: "Concatenate the heads' messages",
    map: ["concat"],
    shape: (r) => `joined: [1, ${r.T}, ${r.d}]`,
    code: ["export/multihead.py#full-concat"],
    draw(r, view) {
      const last = r.n - 1;
      const values = Array.from({ length: r.d }, (_, i) => r.t.joined(r.final, i));
      const hl = Array.from({ length: r.H }, (_, h) => h * r.dh);
      strip({
        host: view.picture,
        values,
        label: `joined at ${q(r.labels[last])}`,
        groups: headGroups(r),
        highlight: hl,
      });
      const sentence =
        r.H === 1
          ? `With one head there is nothing to join: its ${r.dh}-number message is the row, unchanged (joined[${q(r.labels[last])}, 0] = ${f2(values[0])}).`
          : `The ${r.H} messages of ${r.dh} numbers sit side by side again, ${r.d} numbers per slot: coordinates 0–${r.dh - 1} are head 1's, ${r.dh}–${2 * r.dh - 1} head 2's, and so on; at ${q(r.labels[last])} each head's piece starts ${hl.map((i) => f2(values[i])).join(", ")}.`;
      return {
        sentence,
        numbers: hl.map((i, h) => [`joined[${q(r.labels[last])}, ${i}] (${headName(r, h)})`, f2(values[i])]),
        alt: `The joined row at the final slot, ${r.d} numbers in ${r.H} head piece${r.H > 1 ? "s" : ""}; each piece starts ${hl.map((i) => f2(values[i])).join(", ")}.`,
      };
    },
  },
  {
    key: "wo",
    title: "W_O mixes the heads into one update: each head adds its part",
    map: ["wo"],
    shape: (r) => `update: [1, ${r.T}, ${r.d}]`,
    code: ["export/multihead.py#full-wo"],
    draw(r, view) {
      const last = r.n - 1;
      const at = q(r.labels[last]);
      const range = Array.from({ length: r.d }, (_, i) => i);
      // Head h's message meets only its own columns of W_O's weight: the update is the sum of the
      // heads' parts plus W_O's bias (the teaching graph's head_parts and wo_bias).
      const parts = Array.from({ length: r.H }, (_, h) => range.map((i) => r.t.head_parts(h, r.final, i)));
      const bias = range.map((i) => r.t.wo_bias(i));
      const update = range.map((i) => r.t.update(r.final, i));
      const sum = range.map((i) => parts.reduce((a, p) => a + p[i], bias[i]));
      const box = el("div", {
        class: "mha-st__parts",
        "data-parts": JSON.stringify(parts),
        "data-bias": JSON.stringify(bias),
        "data-update": JSON.stringify(update),
      });
      view.picture.append(box);
      const scale = Math.max(1e-9, ...[...parts.flat(), ...bias, ...sum].map(Math.abs)); // one colour scale: the strips add up
      parts.forEach((p, h) =>
        strip({
          host: box,
          values: p,
          scale,
          label: `${headName(r, h)}'s part: its message × its ${r.dh} columns of W_O`,
          groups: [{ from: 0, to: r.d, colour: headColour(r.host, h) }],
        }),
      );
      strip({ host: box, values: bias, scale, label: "+ W_O's bias (the same at every slot)" });
      strip({ host: box, values: sum, scale, label: `= the update at ${at}`, highlight: [0, 1, 2] });
      const sentence =
        r.H === 1
          ? `With one head, its message times W_O, plus W_O's bias, is the whole update: at ${at} it starts ${[0, 1, 2].map((i) => f2(update[i])).join(", ")}.`
          : `W_O is a ${r.d} × ${r.d} layer, but head h's message only ever meets its own ${r.dh} columns of it, so the update is the sum of ${r.H} parts, one per head, plus W_O's bias: each head adds its own contribution. At ${at}, coordinate 0 is ${parts.map((p) => f2(p[0])).join(" + ")} + ${f2(bias[0])} = ${f2(update[0])}.`;
      return {
        sentence,
        numbers: [
          ...parts.map((p, h) => [`${headName(r, h)}'s part[${at}, 0]`, f2(p[0])]),
          ["bias[0]", f2(bias[0])],
          [`update[${at}, 0]`, f2(update[0])],
        ],
        alt: `The update at the final slot as ${r.H} head part${r.H > 1 ? "s" : ""} and W_O's bias, ${r.d} numbers each; coordinate 0: ${parts.map((p) => f2(p[0])).join(" + ")} + ${f2(bias[0])} = ${f2(update[0])}.`,
      };
    },
  },
  {
    key: "residual",
    title: "The residual: add E back",
    map: ["residual"],
    shape: (r) => `updated: [1, ${r.T}, ${r.d}]`,
    code: ["export/multihead.py#full-residual"],
    draw(r, view) {
      const last = r.n - 1;
      const rows = { E: r.t.E, update: r.t.update, updated: r.t.updated };
      for (const [name, get] of Object.entries(rows)) {
        strip({
          host: view.picture,
          values: Array.from({ length: r.d }, (_, i) => get(r.final, i)),
          label: `${name} at ${q(r.labels[last])}`,
          highlight: [0],
        });
      }
      const [e, u, s] = [r.t.E(r.final, 0), r.t.update(r.final, 0), r.t.updated(r.final, 0)];
      return {
        sentence: `The update is added to E, the row the block started with, so the attention block only has to learn a change: at ${q(r.labels[last])}, coordinate 0 is ${f3(e)} + ${f3(u)} = ${f3(s)}.`,
        numbers: [
          ["E", f3(e)],
          ["update", f3(u)],
          ["updated", f3(s)],
        ],
        alt: `E, the update and their sum at the final slot, ${r.d} numbers each; coordinate 0: ${f3(e)} plus ${f3(u)} is ${f3(s)}.`,
      };
    },
  },
  {
    key: "hidden",
    title: "The hidden layer reads the final slot",
    map: ["hidden"],
    shape: (r) => `hidden: [1, ${r.hidden}]`,
    code: ["export/multihead.py#full-hidden"],
    draw(r, view) {
      const values = Array.from({ length: r.hidden }, (_, i) => r.t.hidden(i));
      let top = 0;
      values.forEach((v, i) => {
        if (v > values[top]) top = i;
      });
      const zeros = values.filter((v) => v === 0).length;
      strip({ host: view.picture, values, label: `hidden (${r.hidden} units, ReLU)`, highlight: [top], perRow: 32 });
      return {
        sentence: `Only the final slot's updated row goes on: a layer turns its ${r.d} numbers into ${r.hidden}, and ReLU sets the negative ones to 0, here ${zeros} of ${r.hidden}; the strongest unit is ${top} at ${f2(values[top])}.`,
        numbers: [
          ["units at 0", zeros],
          [`unit ${top}`, f2(values[top])],
        ],
        alt: `The ${r.hidden} hidden units of the final slot: ${zeros} are 0, the largest is unit ${top} at ${f2(values[top])}.`,
      };
    },
  },
  {
    key: "vocab",
    title: "Logits → probabilities → the next token",
    map: ["vocab", "generate"],
    shape: (r) => `logits: [1, ${r.C}]`,
    code: ["export/multihead.py#full-vocab", "export/generate.py#choose-next"],
    draw(r, view, state) {
      const items = r.top.map((id, k) => ({
        label: r.tokenText(id),
        value: r.probs[id],
        text: `${pct(r.probs[id])} · logit ${f2(r.logits[id])}`,
        mark: k === 0,
      }));
      bars({ host: view.picture, items });
      const chosen = r.tokenText(r.top[0]);
      const append = el("button", {
        type: "button",
        class: "md-button md-button--primary mha-st__append",
        text: `Append ${q(chosen)} and run again`,
        onclick: () => state.append(),
      });
      view.actions.append(append); // outside the picture: a figure read as one image hides its buttons
      return {
        sentence: `The vocabulary head gives one logit per token, ${r.C} in all; softmax turns them into probabilities (${r.excluded.map((id) => r.tokenText(id)).join(", ")} are never chosen). The top is ${q(chosen)} at ${pct(r.probs[r.top[0]])}, so greedy decoding picks it; appending it and running again is one step of generation.`,
        numbers: [
          ["chosen", q(chosen)],
          ["its logit", f2(r.logits[r.top[0]])],
          ["its probability", pct(r.probs[r.top[0]])],
        ],
        alt: `The five most likely next tokens: ${r.top.map((id) => `${r.tokenText(id)} ${pct(r.probs[id])}`).join(", ")}.`,
      };
    },
  },
];
