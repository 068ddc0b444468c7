// Pictures of the stepper (page 4): heatmaps for T x T tensors and cell strips
// for vectors, drawn on canvases. A canvas is a picture only (aria-hidden); the
// step's figure carries the text alternative with the main numbers.
//
// Colours come from the page's CSS, so the pictures follow light and dark mode:
// --mha-head-1..4 (site_src/css/figures.css) for anything that belongs to a
// head, and two of the stepper's own variables (site_src/css/stepper.css) for
// the sign of values that belong to no head.

import { el } from "../runtime/dom.js";
import { cssColour } from "../runtime/palette.js";

function setup(canvas, width, height) {
  const ratio = Math.min(3, globalThis.devicePixelRatio || 1);
  canvas.width = Math.round(width * ratio);
  canvas.height = Math.round(height * ratio);
  canvas.style.width = `${width}px`;
  canvas.style.height = `${height}px`;
  const ctx = canvas.getContext("2d");
  ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
  return ctx;
}

function parseColour(css) {
  const probe = document.createElement("canvas").getContext("2d");
  probe.fillStyle = css;
  const hex = probe.fillStyle; // normalised to #rrggbb or rgba()
  if (hex.startsWith("#")) return [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
  const m = hex.match(/\d+(\.\d+)?/g);
  return m ? m.slice(0, 3).map(Number) : [0, 114, 178];
}

// A fill of `colour` at strength t (0..1) over the page background.
function mix(rgb, bg, t) {
  const s = Math.max(0, Math.min(1, t));
  return `rgb(${rgb.map((c, i) => Math.round(bg[i] + (c - bg[i]) * s)).join(",")})`;
}

function labelFont(node) {
  const family = getComputedStyle(node).fontFamily || "sans-serif";
  return (px) => `${px}px ${family}`;
}

const LABEL_PX = 11; // the heatmaps' word labels, in CSS px at the canvas's own size

function fit(text, max) {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

// One T x T picture (real slots only): rows are receivers, columns sources.
// cell(r, c) -> {t: 0..1 strength, blocked: bool}; highlight: [[r, c], ...].
export function heatmap({ host, n, labels, cell, colour, highlight = [], title = "", maxWidth = 320 }) {
  const canvas = el("canvas", { class: "mha-st__canvas", "aria-hidden": "true" });
  const box = el(
    "div",
    { class: "mha-st__heat" },
    title ? el("p", { class: "mha-st__heat-title", text: title }) : null,
    canvas,
  );
  host.append(box);
  const width = Math.max(120, Math.min(maxWidth, box.clientWidth || maxWidth));
  const showLabels = n <= 16;
  const left = showLabels ? Math.min(64, 8 + 6.5 * Math.max(...labels.map((l) => fit(l, 9).length))) : 6;
  const top = showLabels ? left : 6;
  const size = Math.max(2, Math.floor((width - left - 4) / n));
  const ctx = setup(canvas, left + size * n + 4, top + size * n + 4);
  const fg = cssColour(host, "--md-default-fg-color");
  const bg = parseColour(cssColour(host, "--md-default-bg-color"));
  const light = cssColour(host, "--md-default-fg-color--lightest");
  const rgb = parseColour(colour);
  const font = labelFont(host);
  for (let r = 0; r < n; r++) {
    for (let c = 0; c < n; c++) {
      const v = cell(r, c);
      if (v.blocked) {
        ctx.fillStyle = light;
        ctx.fillRect(left + c * size, top + r * size, size, size);
        if (size >= 8) {
          ctx.strokeStyle = fg;
          ctx.globalAlpha = 0.25;
          ctx.beginPath();
          ctx.moveTo(left + c * size + 2, top + (r + 1) * size - 2);
          ctx.lineTo(left + (c + 1) * size - 2, top + r * size + 2);
          ctx.stroke();
          ctx.globalAlpha = 1;
        }
      } else {
        ctx.fillStyle = mix(rgb, bg, 0.06 + 0.94 * v.t);
        ctx.fillRect(left + c * size, top + r * size, size, size);
      }
    }
  }
  ctx.strokeStyle = fg;
  ctx.globalAlpha = 0.35;
  ctx.strokeRect(left - 0.5, top - 0.5, size * n + 1, size * n + 1);
  ctx.globalAlpha = 1;
  ctx.lineWidth = 2;
  for (const [r, c] of highlight) {
    ctx.strokeStyle = fg;
    ctx.strokeRect(left + c * size + 1, top + r * size + 1, size - 2, size - 2);
  }
  ctx.lineWidth = 1;
  if (showLabels) {
    ctx.fillStyle = fg;
    ctx.font = font(LABEL_PX);
    canvas.dataset.labelPx = String(LABEL_PX); // what tests read back, with the canvas's drawn scale
    ctx.textAlign = "right";
    ctx.textBaseline = "middle";
    labels.forEach((l, i) => ctx.fillText(fit(l, 9), left - 4, top + i * size + size / 2));
    labels.forEach((l, i) => {
      ctx.save();
      ctx.translate(left + i * size + size / 2, top - 4);
      ctx.rotate(-Math.PI / 2.6);
      ctx.textAlign = "left";
      ctx.fillText(fit(l, 9), 0, 0);
      ctx.restore();
    });
  }
  return box;
}

// A row of cells for a vector: values -> signed strength; groups colour the
// segments of heads (a band under each head's coordinates).
// values: array; highlight: indices; groups: [{from, to, colour, label}].
// scale: the magnitude drawn at full colour (default: this strip's own largest), so strips that add up share one.
export function strip({
  host,
  values,
  label = "",
  highlight = [],
  groups = null,
  maxWidth = 640,
  perRow = 64,
  scale = null,
}) {
  const canvas = el("canvas", { class: "mha-st__canvas", "aria-hidden": "true" });
  const box = el(
    "div",
    { class: "mha-st__strip" },
    label ? el("p", { class: "mha-st__strip-label", text: label }) : null,
    canvas,
  );
  host.append(box);
  const n = values.length;
  const width = Math.max(100, Math.min(maxWidth, box.clientWidth || maxWidth));
  let cols = Math.min(n, perRow);
  // a phone: wrap into more rows rather than draw cells too thin to see
  while (cols > 16 && (width - 2) / cols < 4.5 && cols % 2 === 0) cols /= 2;
  const rows = Math.ceil(n / cols);
  const size = Math.max(3, Math.min(18, Math.floor((width - 2) / cols)));
  const cellH = Math.max(size, 8);
  const band = groups ? 5 : 0;
  const rowH = cellH + band + 2;
  const ctx = setup(canvas, cols * size + 2, rows * rowH + 2);
  const bg = parseColour(cssColour(host, "--md-default-bg-color"));
  const pos = parseColour(cssColour(host, "--mha-st-positive"));
  const neg = parseColour(cssColour(host, "--mha-st-negative"));
  const fg = cssColour(host, "--md-default-fg-color");
  const max = scale || Math.max(1e-9, ...Array.from(values, (v) => Math.abs(v)));
  for (let i = 0; i < n; i++) {
    const x = 1 + (i % cols) * size;
    const y = 1 + Math.floor(i / cols) * rowH;
    const v = values[i];
    ctx.fillStyle = mix(v >= 0 ? pos : neg, bg, 0.08 + (0.92 * Math.abs(v)) / max);
    ctx.fillRect(x, y, size - (size > 5 ? 1 : 0), cellH);
  }
  if (groups) {
    for (const g of groups) {
      ctx.fillStyle = g.colour;
      for (let i = g.from; i < g.to; i++) {
        const x = 1 + (i % cols) * size;
        const y = 1 + Math.floor(i / cols) * rowH + cellH + 1;
        ctx.fillRect(x, y, size, band - 1);
      }
    }
  }
  ctx.lineWidth = 2;
  ctx.strokeStyle = fg;
  for (const i of highlight) {
    const x = 1 + (i % cols) * size;
    const y = 1 + Math.floor(i / cols) * rowH;
    ctx.strokeRect(x, y, size - 1, cellH);
  }
  return box;
}

// Horizontal bars with a text label and value (HTML, so they read as text too).
export function bars({ host, items, colour = null }) {
  const list = el("ol", { class: "mha-st__bars" });
  const max = Math.max(1e-9, ...items.map((it) => it.value));
  for (const it of items) {
    list.append(
      el(
        "li",
        { class: it.mark ? "mha-st__bar mha-st__bar--mark" : "mha-st__bar" },
        el("span", { class: "mha-st__bar-label", text: it.label }),
        el(
          "span",
          { class: "mha-st__bar-track", "aria-hidden": "true" },
          el("span", {
            class: "mha-st__bar-fill",
            style: { width: `${Math.max(1, (100 * it.value) / max).toFixed(1)}%`, background: colour || "" },
          }),
        ),
        el("span", { class: "mha-st__bar-value", text: it.text }),
      ),
    );
  }
  host.append(list);
  return list;
}
