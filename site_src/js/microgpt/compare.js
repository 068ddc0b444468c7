// The honest comparison on the microgpt page: the four-head microgpt beside a
// microgpt trained the same way with one head over all 16 numbers (same
// weights drawn, same names in the same order, same 1,000 steps; written by
// `python -m export.microgpt --n-head 1`). Both training loss curves in one
// chart, each model's average loss over the last steps, and the names each
// invented after training. Everything is read from the two artefacts.

import { el } from "./ui.js";

const SVG = "http://www.w3.org/2000/svg";
export const SMOOTH = 50; // steps in the moving average of the loss curves

function svg(tag, attrs = {}, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  for (const child of children) node.append(child);
  return node;
}

// The mean of each window of `width` losses ending at step i (shorter at the start).
export function movingAverage(losses, width = SMOOTH) {
  const out = [];
  let acc = 0;
  losses.forEach((loss, i) => {
    acc += loss;
    if (i >= width) acc -= losses[i - width];
    out.push(acc / Math.min(i + 1, width));
  });
  return out;
}

// Two smoothed loss curves: [{label, losses, cls}] -> an <svg> with axes and a legend in words.
function lossChart(series) {
  const W = 320;
  const H = 170;
  const pad = { l: 34, r: 8, t: 8, b: 28 };
  const smoothed = series.map((s) => movingAverage(s.losses));
  const all = smoothed.flat();
  const lo = Math.floor(Math.min(...all) * 4) / 4;
  const hi = Math.ceil(Math.max(...all) * 4) / 4;
  const steps = Math.max(...series.map((s) => s.losses.length));
  const x = (i) => pad.l + (i / (steps - 1)) * (W - pad.l - pad.r);
  const y = (v) => pad.t + ((hi - v) / (hi - lo)) * (H - pad.t - pad.b);
  const chart = svg("svg", { viewBox: `0 0 ${W} ${H}`, class: "mgpt-loss__svg", role: "img" });
  const ticks = [];
  for (let v = lo; v <= hi + 1e-9; v += 0.25) ticks.push(v);
  for (const v of ticks) {
    chart.append(svg("line", { x1: pad.l, x2: W - pad.r, y1: y(v), y2: y(v), class: "mgpt-loss__grid" }));
    const label = svg("text", { x: pad.l - 4, y: y(v) + 3, class: "mgpt-loss__tick", "text-anchor": "end" });
    label.textContent = v.toFixed(2);
    chart.append(label);
  }
  for (const step of [0, Math.round(steps / 2), steps]) {
    // The last step's number ends at the plot's right edge instead of spilling past the picture.
    const anchor = step === steps ? "end" : "middle";
    const label = svg("text", {
      x: x(Math.max(0, step - 1)),
      y: H - pad.b + 12,
      class: "mgpt-loss__tick",
      "text-anchor": anchor,
    });
    label.textContent = String(step);
    chart.append(label);
  }
  const axis = svg("text", { x: (pad.l + W - pad.r) / 2, y: H - 4, class: "mgpt-loss__tick", "text-anchor": "middle" });
  axis.textContent = `training step (loss averaged over ${SMOOTH} steps)`;
  chart.append(axis);
  smoothed.forEach((points, k) => {
    const d = points.map((v, i) => `${i ? "L" : "M"}${x(i).toFixed(1)},${y(v).toFixed(1)}`).join("");
    chart.append(svg("path", { d, class: `mgpt-loss__line ${series[k].cls}` }));
  });
  return chart;
}

// The comparison panel for the two trained models (four heads, one head);
// `measured` is microgpt_heads.json (null when it could not be loaded).
export function comparePanel(four, one, measured) {
  const series = [
    {
      label: `${four.config.n_head} heads × ${four.config.head_dim} numbers`,
      losses: four.losses,
      cls: "mgpt-loss__line--four",
      model: four,
      key: "all_on",
    },
    {
      label: `1 head × ${one.config.head_dim} numbers`,
      losses: one.losses,
      cls: "mgpt-loss__line--one",
      model: one,
      key: "one_head_twin",
    },
  ];
  const chart = lossChart(series);
  const whole = measured ? series.map((s) => measured.loss[s.key]) : null;
  const count = measured ? measured.predictions.toLocaleString("en") : "";
  chart.setAttribute(
    "aria-label",
    `Training loss over ${four.config.steps.toLocaleString("en")} steps, one name per step, ` +
      `averaged over ${SMOOTH} steps, for ${series.map((s) => s.label).join(" and ")}.`,
  );
  const legend = el(
    "ul",
    { class: "mgpt-loss__legend" },
    series.map((s, k) =>
      el(
        "li",
        { "data-model": k ? "one" : "four" },
        el("span", { class: `mgpt-loss__key ${s.cls}`, "aria-hidden": "true" }),
        whole ? [`${s.label}: loss over the whole names list `, el("strong", { text: whole[k].toFixed(4) })] : s.label,
      ),
    ),
  );
  const samples = el(
    "div",
    { class: "mgpt-compare__samples" },
    series.map((s, k) =>
      el(
        "div",
        { "data-model": k ? "one" : "four" },
        el("p", {
          class: "mgpt-compare__label",
          text: `${s.label}, after training (temperature ${s.model.config.temperature}):`,
        }),
        el("p", { class: "mgpt-compare__names", text: s.model.samples.join(", ") }),
      ),
    ),
  );
  return el(
    "section",
    {
      class: "mgpt-compare",
      ...(whole ? { "data-loss-four": String(whole[0]), "data-loss-one": String(whole[1]) } : {}),
    },
    el("h3", { text: "The honest comparison: a microgpt trained with one head" }),
    el("p", {
      class: "mgpt-explore__hint",
      text:
        "Knocking heads out of a model trained with four only shows what that model relies on. " +
        "This second microgpt was trained from the same starting weights on the same names in the same order, " +
        `for the same ${one.config.steps.toLocaleString("en")} steps, with one head over all ${one.config.head_dim} numbers.`,
    }),
    el("figure", { class: "mgpt-loss" }, chart, el("figcaption", {}, legend)),
    el("p", { class: "mgpt-compare__verdict", text: verdict(measured, count, four.config.steps) }),
    samples,
  );
}

// What the whole-list losses say, in words, whichever way they come out.
export function verdict(measured, count, steps) {
  if (!measured)
    return (
      "The curves are training losses, one name per step: too noisy to compare the models by. " +
      "The measurement over the whole names list could not be loaded."
    );
  const { one_head_minus_four: gap, four_heads_attention: four, one_head_attention: one } = measured.gain;
  const dir = gap > 0 ? "higher" : "lower";
  const use = (g) => (g <= 0 ? `nothing (its loss drops by ${(-g).toFixed(5)})` : `${g.toFixed(4)}`);
  const size =
    Math.abs(gap) < 0.01
      ? "a few thousandths of a nat per letter: next to nothing"
      : Math.abs(gap) < 0.05
        ? "a few hundredths of a nat per letter: small"
        : "a clear gap";
  return (
    `The curves are training losses, one name per step, too noisy to compare by. Over all ${count} next-letter ` +
    `predictions of the names list, the one-head model's loss is ${Math.abs(gap).toFixed(4)} ${dir} than the four-head one's, ` +
    `${size}. Switching every head off costs the four-head model ${use(four)} and the one-head model ${use(one)}: ` +
    `what attention is worth to each, on first names, after one training run of ${steps.toLocaleString("en")} names.`
  );
}
