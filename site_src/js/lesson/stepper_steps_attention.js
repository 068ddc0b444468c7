// The stepper's attention steps (page 4): queries, keys and values split into heads, the
// scores, the mask, the weights A (the step the learner predicts before it shows) and the
// messages A V, each head drawn in its own colour.

import { el } from "../runtime/dom.js";
import { cssColour, headColour } from "../runtime/palette.js";
import { bars, heatmap, strip } from "./stepper_draw.js";
import { f2, headName, q } from "./stepper_format.js";

// Each head's weights at the final slot over the real sources: [{slot, label, w}] by slot.
export function finalWeights(run, h) {
  return run.real.map((s, i) => ({ slot: s, index: i, label: run.labels[i], w: run.t.A(h, run.final, s) }));
}

export function heaviest(run, h) {
  return finalWeights(run, h).reduce((a, b) => (b.w > a.w ? b : a));
}

// One colour group per head, for a strip of the heads' pieces side by side.
export function headGroups(run) {
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

export const ATTENTION_STEPS = [
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
];
