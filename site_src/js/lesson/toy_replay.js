// Lesson page 1: replays the recorded learning curves of the trained toy task.
//
// The figure above it (::figure:: toy-curves, drawn at build time from
// the toy task stage's toy_task.json) carries every run's recorded points on its paths
// (data-points "update:share ..."). This widget redraws those paths up to the
// chosen update, so the learner can watch one head stay near chance while
// several heads leave the plateau. Nothing is trained here: these are the
// recorded runs, and the widget says so.

import { el } from "../runtime/dom.js";
import { claim, release } from "../runtime/widget.js";

const FRAME_MS = 140;
const state = new Map();

function parse(pathEl) {
  return pathEl.dataset.points
    .trim()
    .split(/\s+/)
    .map((p) => p.split(":").map(Number));
}

function pct(x) {
  return `${(100 * x).toFixed(1)} %`;
}

export function mount(root) {
  const s = claim(state, root, { timer: null });
  if (!s) return;
  const figure = document.getElementById("fig-toy-curves");
  const svg = figure && figure.querySelector("svg");
  const frame = svg && svg.querySelector(".mha-toy__replay");
  if (!frame) {
    root.textContent = "The learning-curve figure this replay drives is missing from the page.";
    return;
  }
  const steps = Number(frame.dataset.steps);
  const [x0, x1, y0, y1] = ["x0", "x1", "y0", "y1"].map((k) => Number(frame.dataset[k]));
  const X = (s) => x0 + (s / steps) * (x1 - x0);
  const Y = (a) => y0 + (1 - a) * (y1 - y0);
  const runs = [...svg.querySelectorAll("path[data-points]")].map((p) => ({
    el: p,
    heads: Number(p.dataset.heads),
    points: parse(p),
  }));
  const updates = [...new Set(runs.flatMap((r) => r.points.map(([s]) => s)))].sort((a, b) => a - b);
  const heads = [...new Set(runs.map((r) => r.heads))].sort((a, b) => a - b);
  // The cursor marks the update the curves are drawn up to, and says which above the plot. At rest the
  // figure shows the whole runs, and a line at the last update would only look stuck there: it appears
  // once the learner replays or moves the slider.
  const SVG = "http://www.w3.org/2000/svg";
  const cursor = document.createElementNS(SVG, "line");
  cursor.setAttribute("class", "mha-toy__cursor");
  cursor.setAttribute("y1", String(y0));
  cursor.setAttribute("y2", String(y1));
  const cursorLabel = document.createElementNS(SVG, "text");
  cursorLabel.setAttribute("class", "mha-fig__small mha-toy__cursor-label");
  cursorLabel.setAttribute("y", String(y0 - 7));
  cursorLabel.setAttribute("font-size", "13");
  const cursorGroup = document.createElementNS(SVG, "g");
  cursorGroup.setAttribute("aria-hidden", "true");
  cursorGroup.style.display = "none";
  cursorGroup.append(cursor, cursorLabel);
  frame.append(cursorGroup);

  const slider = el("input", {
    type: "range",
    min: "0",
    max: String(updates.length - 1),
    step: "1",
    value: String(updates.length - 1),
    "aria-label": "Recorded update shown",
  });
  const play = el("button", { type: "button", class: "md-button", text: "Replay the recorded runs" });
  const out = el("output", { "aria-live": "polite" });
  root.replaceChildren(el("div", { class: "mha-toy-replay" }, play, slider, out));

  const draw = (k) => {
    const upto = updates[k];
    const shown = new Map();
    for (const r of runs) {
      const pts = r.points.filter(([s]) => s <= upto);
      r.el.setAttribute("d", pts.map(([s, a], i) => `${i ? "L" : "M"}${X(s).toFixed(1)},${Y(a).toFixed(1)}`).join(" "));
      const last = pts[pts.length - 1];
      if (!shown.has(r.heads)) shown.set(r.heads, []);
      shown.get(r.heads).push(last ? last[1] : 0);
    }
    cursor.setAttribute("x1", X(upto).toFixed(1));
    cursor.setAttribute("x2", X(upto).toFixed(1));
    cursorLabel.textContent = `update ${upto.toLocaleString("en")}`;
    cursorLabel.setAttribute("x", X(upto).toFixed(1));
    // centred on the line, but kept inside the plot's width at either end
    const third = (x1 - x0) / 6;
    cursorLabel.setAttribute("text-anchor", X(upto) < x0 + third ? "start" : X(upto) > x1 - third ? "end" : "middle");
    const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const parts = heads.map((h) => `${h} ${h === 1 ? "head" : "heads"} ${pct(mean(shown.get(h)))}`);
    out.textContent =
      `Recorded runs, update ${upto.toLocaleString("en")} of ${steps.toLocaleString("en")} ` +
      `(mean over seeds): ${parts.join(", ")}.`;
    slider.value = String(k);
    slider.setAttribute("aria-valuetext", `update ${upto}`);
  };

  const stop = () => {
    clearTimeout(s.timer);
    s.timer = null;
    play.textContent = "Replay the recorded runs";
  };
  const tick = (k) => {
    draw(k);
    if (k < updates.length - 1) s.timer = setTimeout(() => tick(k + 1), FRAME_MS);
    else stop();
  };
  const showCursor = () => {
    cursorGroup.style.display = "";
  };
  play.addEventListener("click", () => {
    if (s.timer) return stop();
    showCursor();
    play.textContent = "Pause";
    tick(Number(slider.value) >= updates.length - 1 ? 0 : Number(slider.value));
  });
  slider.addEventListener("input", () => {
    stop();
    showCursor();
    draw(Number(slider.value));
  });
  draw(updates.length - 1);
}

export function dispose(root) {
  const s = release(state, root);
  if (s) clearTimeout(s.timer);
}
