// The operations of forward_full, one step each, for page 4's stepper.
//
// A step is {key, title, map, shape(run), code, draw(run, view, state)}:
//   map: the boxes of page 4's model map (site_src/hooks/lesson_figures/model.py,
//     ids "map-<key>") that the step is at;
//   code: sections "file#name" of the site's code (site_src/hooks/stepper_code.py);
//   draw fills view.picture and returns {sentence, numbers, alt}: one sentence,
//     the few numbers it is about (label, value), and the picture's text
//     alternative with the main numbers.
// `run` holds one prompt's tensors as the teaching graph computed them
// (see stepper.js): nothing here computes a tensor, it only reads and draws.

import { el } from "../runtime/dom.js";
import { cssColour, headColour } from "../runtime/palette.js";
import { bars, heatmap, strip } from "./stepper_draw.js";

const f3 = (x) => (Math.abs(x) < 0.0005 ? 0 : x).toFixed(3).replace("-", "−"); // three places, so printed sums add up
export const f2 = (x) =>
  Number.isFinite(x) ? (Math.abs(x) < 0.005 ? 0 : x).toFixed(2).replace("-", "−") : x > 0 ? "∞" : "−∞";
const pct = (p) => `${(100 * p).toFixed(1)} %`;
const q = (s) => `“${s}”`;

function headName(run, h) {
  return run.H === 1 ? "the head" : `head ${h + 1}`;
}

// Each head's weights at the final slot over the real sources: [{slot, label, w}] by slot.
export function finalWeights(run, h) {
  return run.real.map((s, i) => ({ slot: s, index: i, label: run.labels[i], w: run.t.A(h, run.final, s) }));
}

export function heaviest(run, h) {
  return finalWeights(run, h).reduce((a, b) => (b.w > a.w ? b : a));
}

function headGroups(run) {
  return Array.from({ length: run.H }, (_, h) => ({
    from: h * run.dh,
    to: (h + 1) * run.dh,
    colour: headColour(run.host, h),
  }));
}

function headGrid(view, heads) {
  const grid = el("div", { class: heads > 1 ? "mha-st__heads mha-st__heads--many" : "mha-st__heads" });
  view.picture.append(grid);
  return grid;
}

const STEPS = [
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
  {
    key: "qkv",
    title: "Queries, keys and values, split into heads",
    map: ["qkv"],
    shape: (r) => `Q, K, V: [1, ${r.H}, ${r.T}, ${r.dh}]`,
    code: ["export/multihead.py#split-heads", "export/multihead.py#full-heads"],
    draw(r, view) {
      const last = r.n - 1;
      const groups = headGroups(r);
      for (const [name, get] of [
        ["Q", r.t.Q],
        ["K", r.t.K],
        ["V", r.t.V],
      ]) {
        const values = [];
        for (let h = 0; h < r.H; h++) for (let i = 0; i < r.dh; i++) values.push(get(h, r.final, i));
        strip({
          host: view.picture,
          values,
          label: `${name} at ${q(r.labels[last])}: ${r.H === 1 ? `one head of ${r.dh}` : `${r.H} heads × ${r.dh}`}`,
          groups,
          highlight: name === "Q" ? [0, 1, 2] : [],
        });
      }
      const q0 = [0, 1, 2].map((i) => r.t.Q(0, r.final, i));
      const split =
        r.H === 1
          ? `with one head the split only changes the shape: the head gets all ${r.dh}`
          : `the split cuts each into ${r.H} pieces of ${r.dh}, one per head, and moves the head axis in front of the slots`;
      return {
        sentence: `W_Q, W_K and W_V turn every row of E into a query (what the slot looks for), a key (what it offers) and a value (what it passes on); ${split}. ${headName(r, 0)[0].toUpperCase() + headName(r, 0).slice(1)}'s query at ${q(r.labels[last])} starts ${q0.map(f2).join(", ")}.`,
        numbers: q0.map((v, i) => [`Q[${r.H === 1 ? "" : "head 1, "}${q(r.labels[last])}, ${i}]`, f2(v)]),
        alt: `Query, key and value of the final slot ${r.labels[last]}, ${r.d} numbers each, in ${r.H} head${r.H > 1 ? "s" : ""} of ${r.dh}. Query of head 1 starts ${q0.map(f2).join(", ")}.`,
      };
    },
  },
  {
    key: "scores",
    title: "Scores: how well each query matches each key",
    map: ["scores"],
    shape: (r) => `scores: [1, ${r.H}, ${r.T}, ${r.T}]`,
    code: ["export/multihead.py#full-scores"],
    draw(r, view) {
      const grid = headGrid(view, r.H);
      const last = r.n - 1;
      const best = [];
      for (let h = 0; h < r.H; h++) {
        let lo = Infinity;
        let hi = -Infinity;
        for (const a of r.real)
          for (const b of r.real) {
            const v = r.t.scores(h, a, b);
            lo = Math.min(lo, v);
            hi = Math.max(hi, v);
          }
        let top = 0;
        r.real.forEach((s, i) => {
          if (r.t.scores(h, r.final, s) > r.t.scores(h, r.final, r.real[top])) top = i;
        });
        best.push({ i: top, v: r.t.scores(h, r.final, r.real[top]) });
        heatmap({
          host: grid,
          n: r.n,
          labels: r.labels,
          colour: headColour(r.host, h),
          title: r.H === 1 ? "one head" : `head ${h + 1}`,
          cell: (a, b) => ({ t: (r.t.scores(h, r.real[a], r.real[b]) - lo) / Math.max(1e-9, hi - lo), blocked: false }),
          highlight: [[last, top]],
        });
      }
      // the sentence's arithmetic, from the graph's own Q and K rows
      let dot = 0;
      for (let i = 0; i < r.dh; i++) dot += r.t.Q(0, r.final, i) * r.t.K(0, r.real[best[0].i], i);
      return {
        sentence: `A score is a query dotted with a key, divided by √${r.dh} = ${Math.sqrt(r.dh)}; every head scores every pair. At ${q(r.labels[last])}, ${headName(r, 0)}'s query matches the key of ${q(r.labels[best[0].i])} best: q · k = ${f2(dot)}, and ${f2(dot)} / ${Math.sqrt(r.dh)} = ${f2(best[0].v)}. Later slots get scores too: the mask comes next.`,
        numbers: [
          [`q · k, ${headName(r, 0)}`, f2(dot)],
          [`score, ${headName(r, 0)}`, `${f2(best[0].v)} (${q(r.labels[best[0].i])})`],
          ...best.slice(1).map((b, h) => [`best score, ${headName(r, h + 1)}`, `${f2(b.v)} (${q(r.labels[b.i])})`]),
        ],
        alt:
          `Scores of every receiver and source among the ${r.n} real slots, per head. At the final slot the best score is ` +
          best.map((b, h) => `${headName(r, h)}: ${r.labels[b.i]} ${f2(b.v)}`).join("; ") +
          ".",
      };
    },
  },
  {
    key: "mask",
    title: "The mask: no looking ahead, no reading PAD",
    map: ["mask"],
    shape: (r) => `mask: [1, ${r.T}, ${r.T}] (true = blocked)`,
    code: ["export/multihead.py#full-mask"],
    draw(r, view) {
      let future = 0;
      let pad = 0;
      let open = 0;
      for (let a = 0; a < r.T; a++)
        for (let b = 0; b < r.T; b++) {
          if (!r.t.mask(a, b)) open++;
          else if (b > a) future++;
          else pad++;
        }
      const openFinal = r.real.filter((s) => !r.t.mask(r.final, s)).length;
      heatmap({
        host: view.picture,
        n: r.n,
        labels: r.labels,
        colour: cssColour(r.host, "--mha-mask-open"),
        title: "real slots: receivers (rows) × sources (columns); open = may read, hatched = blocked",
        cell: (a, b) => ({ t: 0.7, blocked: r.t.mask(r.real[a], r.real[b]) }),
      });
      const pads = r.T - r.n;
      return {
        sentence: `Of the ${r.T} × ${r.T} pairs, ${future} are blocked because the source comes later than the receiver and ${pad} because a real token would read PAD; blocked scores become −∞, so their weights will be exactly 0. The final slot may read all ${openFinal} real tokens${pads ? ` and none of the ${pads} PAD slots` : ""}.`,
        numbers: [
          ["blocked: later source", future],
          ["blocked: PAD source", pad],
          ["open pairs", open],
        ],
        alt: `Mask over the ${r.n} real slots: each receiver may read itself and earlier slots (lower triangle). In all ${r.T} by ${r.T} pairs, ${future} are blocked as later, ${pad} as PAD, ${open} are open.`,
      };
    },
  },
  {
    key: "A",
    title: "Softmax: scores become weights A",
    map: ["A"],
    shape: (r) => `A: [1, ${r.H}, ${r.T}, ${r.T}]`,
    code: ["export/multihead.py#full-softmax"],
    predict: true,
    draw(r, view, state) {
      const last = r.n - 1;
      if (!state.revealed) {
        view.picture.append(
          el("p", { class: "mha-st__hidden-note", text: "The weights are hidden until you have made your guess." }),
        );
        return {
          sentence: `Before you look: at the final slot (${q(r.labels[last])}), which source will ${r.H === 1 ? "the head" : "each head"} weigh most? Pick below, then reveal the real weights.`,
          numbers: [],
          alt: "The weights are hidden until you reveal them.",
        };
      }
      const grid = headGrid(view, r.H);
      const tops = [];
      for (let h = 0; h < r.H; h++) {
        const top = heaviest(r, h);
        tops.push(top);
        const fig = el("div", { class: "mha-st__head" });
        grid.append(fig);
        heatmap({
          host: fig,
          n: r.n,
          labels: r.labels,
          colour: headColour(r.host, h),
          title: r.H === 1 ? "one head" : `head ${h + 1}`,
          cell: (a, b) => ({
            t: r.t.mask(r.real[a], r.real[b]) ? 0 : r.t.A(h, r.real[a], r.real[b]),
            blocked: r.t.mask(r.real[a], r.real[b]),
          }),
          highlight: [[last, top.index]],
        });
        const items = finalWeights(r, h)
          .sort((x, y) => y.w - x.w)
          .slice(0, 4)
          .map((w) => ({ label: w.label, value: w.w, text: f2(w.w), mark: state.picks[h] === w.index }));
        bars({ host: fig, items, colour: headColour(r.host, h) });
      }
      // (with BOS the only source there is no choice to explain)
      const parked = r.n > 1 ? tops.map((t, h) => ({ t, h })).filter(({ t }) => r.ids[t.slot] === r.special.BOS) : [];
      let sentence =
        `Softmax turns each receiver's allowed scores into weights that add up to 1 (blocked pairs get exactly 0). At ${q(r.labels[last])}, ` +
        tops.map((t, h) => `${headName(r, h)} weighs ${q(t.label)} most (${f2(t.w)})`).join(", ") +
        ".";
      if (parked.length) {
        sentence += ` ${parked
          .map(({ h }) => headName(r, h))
          .join(" and ")
          .replace(/^./, (c) =>
            c.toUpperCase(),
          )} ${parked.length > 1 ? "park" : "parks"} ${parked.length > 1 ? "their" : "its"} weight on BOS: the weights must add up to 1, so a head that finds nothing useful here puts them on a source that changes little from prompt to prompt, and BOS opens every prompt.`;
      }
      return {
        sentence,
        numbers: tops.map((t, h) => [`heaviest, ${headName(r, h)}`, `${q(t.label)} ${f2(t.w)}`]),
        alt:
          `Weights A per head over the ${r.n} real slots, each row adding up to 1. At the final slot: ` +
          tops.map((t, h) => `${headName(r, h)} weighs ${t.label} most, ${f2(t.w)}`).join("; ") +
          ".",
      };
    },
  },
  {
    key: "AV",
    title: "Messages: A V blends the value rows",
    map: ["AV"],
    shape: (r) => `messages: [1, ${r.H}, ${r.T}, ${r.dh}]`,
    code: ["export/multihead.py#full-messages"],
    draw(r, view) {
      const last = r.n - 1;
      const grid = headGrid(view, r.H);
      for (let h = 0; h < r.H; h++) {
        const values = Array.from({ length: r.dh }, (_, i) => r.t.messages(h, r.final, i));
        strip({
          host: grid,
          values,
          label: `${headName(r, h)}: message at ${q(r.labels[last])}`,
          highlight: h === 0 ? [0] : [],
          groups: [{ from: 0, to: r.dh, colour: headColour(r.host, h) }],
          maxWidth: r.H === 1 ? 640 : 300,
        });
      }
      const top = heaviest(r, 0);
      const m0 = r.t.messages(0, r.final, 0);
      const v0 = r.t.V(0, top.slot, 0);
      return {
        sentence: `Each head's message at a slot is the sum of the value rows it reads, each times its weight. ${headName(r, 0).replace(/^./, (c) => c.toUpperCase())} at ${q(r.labels[last])} takes ${f2(top.w)} of ${q(top.label)}'s value (whose first number is ${f2(v0)}) plus smaller shares of the others: its message starts ${f2(m0)}.`,
        numbers: [
          [`weight of ${q(top.label)}`, f2(top.w)],
          [`V[${q(top.label)}, 0]`, f2(v0)],
          [`message[${q(r.labels[last])}, 0]`, f2(m0)],
        ],
        alt: `Messages at the final slot, ${r.dh} numbers per head. ${headName(r, 0)} starts ${[0, 1, 2].map((i) => f2(r.t.messages(0, r.final, i))).join(", ")}.`,
      };
    },
  },
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

export function steps() {
  return STEPS;
}
