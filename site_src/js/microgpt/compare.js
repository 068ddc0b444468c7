// The honest comparison on the microgpt page: the four-head microgpt beside a
// microgpt trained the same way with one head over all 16 numbers (same
// weights drawn, same names in the same order, same 1,000 steps; written by
// `python -m export.microgpt --n-head 1`). Both training loss curves in one
// chart, each model's average loss over the last steps, and the names each
// invented after training. Everything is read from the two artefacts.

import { el } from "./ui.js";

const SVG = "http://www.w3.org/2000/svg";
export const SMOOTH = 50;   // steps in the moving average of the loss curves
export const TAIL = 100;    // the last steps averaged for the headline figure

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

export function tailMean(losses, tail = TAIL) {
  const last = losses.slice(-tail);
  return last.reduce((a, b) => a + b, 0) / last.length;
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
    const label = svg("text", { x: x(Math.max(0, step - 1)), y: H - pad.b + 12, class: "mgpt-loss__tick", "text-anchor": "middle" });
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

// The comparison panel for the two trained models (four heads, one head).
export function comparePanel(four, one) {
  const series = [
    { label: `${four.config.n_head} heads × ${four.config.head_dim} numbers`, losses: four.losses, cls: "mgpt-loss__line--four", model: four },
    { label: `1 head × ${one.config.head_dim} numbers`, losses: one.losses, cls: "mgpt-loss__line--one", model: one },
  ];
  const means = series.map((s) => tailMean(s.losses));
  const chart = lossChart(series);
  const summary = `Training loss over ${four.config.steps.toLocaleString("en")} steps. Average of the last ${TAIL} steps: ` +
    series.map((s, k) => `${s.label} ${means[k].toFixed(3)}`).join("; ") + ".";
  chart.setAttribute("aria-label", summary);
  const legend = el("ul", { class: "mgpt-loss__legend" },
    series.map((s, k) => el("li", { "data-model": k ? "one" : "four" },
      el("span", { class: `mgpt-loss__key ${s.cls}`, "aria-hidden": "true" }),
      `${s.label}: last-${TAIL}-step loss `, el("strong", { text: means[k].toFixed(3) }))));
  const samples = el("div", { class: "mgpt-compare__samples" },
    series.map((s, k) => el("div", { "data-model": k ? "one" : "four" },
      el("p", { class: "mgpt-compare__label", text: `${s.label}, after training (temperature ${s.model.config.temperature}):` }),
      el("p", { class: "mgpt-compare__names", text: s.model.samples.join(", ") }))));
  const diff = means[1] - means[0];
  const verdict = Math.abs(diff) < 0.01
    ? "The two end up about as good: on first names, a model this small gains nothing measurable from four heads."
    : diff > 0
      ? `The one-head model ends ${diff.toFixed(3)} higher: for first names, four small searches beat one big one here.`
      : `The one-head model ends ${(-diff).toFixed(3)} lower: on first names, one wide search is enough here.`;
  return el("section", { class: "mgpt-compare", "data-tail-four": String(means[0]), "data-tail-one": String(means[1]) },
    el("h3", { text: "The honest comparison: a microgpt trained with one head" }),
    el("p", { class: "mgpt-explore__hint", text: "Knocking heads out of a model trained with four only shows what that model relies on. " +
      "This second microgpt was trained from the same starting weights on the same names in the same order, " +
      `for the same ${one.config.steps.toLocaleString("en")} steps, with one head over all ${one.config.head_dim} numbers.` }),
    el("figure", { class: "mgpt-loss" }, chart, el("figcaption", {}, legend)),
    el("p", { class: "mgpt-compare__verdict", text: `${verdict} (Training loss on the names seen, one name per step, one run each: a difference of a few hundredths is noise.)` }),
    samples);
}
