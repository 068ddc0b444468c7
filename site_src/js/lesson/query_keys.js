// Lesson page 1: one query, many keys, as a picture.
//
//   <div data-mha-widget="query_keys" data-head="1" data-receiver="9" data-sources="1,5,6,7"></div>
//
// The query of one receiver and the keys of a few sources are 2-D arrows the
// learner drags (pointer) or moves (focus a tip, then the arrow keys; Shift for
// bigger steps). Every move recomputes each source's dot product with the query
// and the softmax over those dot products; each key's arrow is drawn as thick
// as its weight. The start positions are the worksheet's head-1 query and keys
// (wasm_assets/worksheet.json, 2 numbers per head), so what the learner moves
// away from is the page-2 worksheet itself. The table under the picture is its
// text alternative and updates with it.

import { claim, failedPanel, holds, release } from "../runtime/widget.js";
import { el, fmt, loadWorksheet, uid } from "./worksheet_ui.js";

const SVG_NS = "http://www.w3.org/2000/svg";
const RANGE = 3.5; // the plane shows -RANGE..RANGE on both axes
const SIZE = 320; // viewBox units
const STEP = 0.1;
const BIG_STEP = 0.5;

function svg(tag, attrs = {}, ...children) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== null && v !== undefined) node.setAttribute(k, String(v));
  for (const c of children.flat()) if (c) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return node;
}

export function dot(a, b) {
  return a[0] * b[0] + a[1] * b[1];
}

// Softmax of the dot products (largest subtracted first only to avoid overflow).
export function softmax(xs) {
  const top = Math.max(...xs);
  const e = xs.map((x) => Math.exp(x - top));
  const total = e.reduce((s, x) => s + x, 0);
  return e.map((x) => x / total);
}

const clamp = (v) => Math.max(-RANGE, Math.min(RANGE, v));
const round = (v) => Math.round(v * 100) / 100;
const toX = (v) => SIZE / 2 + (v / RANGE) * (SIZE / 2 - 14);
const toY = (v) => SIZE / 2 - (v / RANGE) * (SIZE / 2 - 14);
const fromX = (x) => ((x - SIZE / 2) / (SIZE / 2 - 14)) * RANGE;
const fromY = (y) => -((y - SIZE / 2) / (SIZE / 2 - 14)) * RANGE;

const state = new Map();

// Two arrows that point nearly the same way put their labels on top of each other: each label
// after the first moves up or down, a line at a time, until it is clear of those placed before.
const LABEL_STEP = 17;
const labelY = (y) => Math.max(14, Math.min(SIZE - 6, y)); // a label's baseline, kept inside the plane
function separateLabels(texts) {
  const placed = [];
  const overlaps = (a, b) => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
  for (const text of texts) {
    const y0 = Number(text.getAttribute("y"));
    let box;
    for (const shift of [0, LABEL_STEP, -LABEL_STEP, 2 * LABEL_STEP, -2 * LABEL_STEP, 3 * LABEL_STEP]) {
      text.setAttribute("y", labelY(y0 + shift));
      box = text.getBBox();
      if (!placed.some((p) => overlaps(box, p))) break;
    }
    placed.push(box);
  }
}

function numbers(root) {
  const ints = (s) =>
    String(s)
      .split(",")
      .map((x) => Number.parseInt(x, 10))
      .filter((x) => Number.isInteger(x));
  return {
    head: Number.parseInt(root.dataset.head || "1", 10) - 1,
    receiver: root.dataset.receiver === undefined ? null : Number.parseInt(root.dataset.receiver, 10),
    sources: ints(root.dataset.sources || "1,5,6,7"),
  };
}

export async function mount(root) {
  const entry = claim(state, root);
  if (!entry) return;
  let ws;
  try {
    ws = await loadWorksheet();
  } catch (err) {
    root.replaceChildren(failedPanel("The query-and-keys picture could not get its numbers", err));
    return;
  }
  if (!holds(state, root, entry)) return;
  const { head, sources } = numbers(root);
  const receiver = numbers(root).receiver ?? ws.tokens.length - 1;
  const start = {
    query: ws.Q[head][receiver].map(round),
    keys: sources.map((j) => ws.K[head][j].map(round)),
  };
  const labels = sources.map((j) => `${ws.tokens[j]} (${j})`);
  const id = uid("mha-qk");
  const arrows = [
    { kind: "query", name: `query of “${ws.tokens[receiver]}” (${receiver})`, short: "query", v: [...start.query] },
    ...sources.map((j, i) => ({
      kind: "key",
      name: `key of ${labels[i]}`,
      short: labels[i],
      v: [...start.keys[i]],
      index: i,
    })),
  ];

  // ---- the plane
  const grid = [];
  for (let t = -3; t <= 3; t += 1) {
    grid.push(
      svg("line", {
        class: t === 0 ? "mha-qk__axis" : "mha-qk__grid",
        x1: toX(t),
        y1: toY(-RANGE),
        x2: toX(t),
        y2: toY(RANGE),
      }),
    );
    grid.push(
      svg("line", {
        class: t === 0 ? "mha-qk__axis" : "mha-qk__grid",
        x1: toX(-RANGE),
        y1: toY(t),
        x2: toX(RANGE),
        y2: toY(t),
      }),
    );
  }
  const defs = svg(
    "defs",
    {},
    // Fixed-size heads (userSpaceOnUse): a key's line grows with its weight, its head does not.
    svg(
      "marker",
      {
        id: `${id}-head-q`,
        viewBox: "0 0 10 10",
        refX: 7,
        refY: 5,
        markerWidth: 16,
        markerHeight: 16,
        markerUnits: "userSpaceOnUse",
        orient: "auto-start-reverse",
      },
      svg("path", { d: "M0,0 L10,5 L0,10 z", class: "mha-qk__tip--query" }),
    ),
    svg(
      "marker",
      {
        id: `${id}-head-k`,
        viewBox: "0 0 10 10",
        refX: 7,
        refY: 5,
        markerWidth: 13,
        markerHeight: 13,
        markerUnits: "userSpaceOnUse",
        orient: "auto-start-reverse",
      },
      svg("path", { d: "M0,0 L10,5 L0,10 z", class: "mha-qk__tip--key" }),
    ),
  );
  const lines = svg("g");
  const texts = svg("g");
  const handles = svg("g");
  const plane = svg(
    "svg",
    {
      class: "mha-qk__svg",
      viewBox: `0 0 ${SIZE} ${SIZE}`,
      role: "group",
      "aria-label": "Query and key arrows on a plane; drag an arrow's tip, or focus it and use the arrow keys",
    },
    defs,
    ...grid,
    lines,
    texts,
    handles,
  );

  for (const a of arrows) {
    a.line = svg("line", {
      class: `mha-qk__arrow mha-qk__arrow--${a.kind}`,
      x1: toX(0),
      y1: toY(0),
      "marker-end": `url(#${id}-head-${a.kind === "query" ? "q" : "k"})`,
    });
    a.label = svg("text", { class: `mha-qk__label mha-qk__label--${a.kind}` });
    a.handle = svg("circle", {
      class: `mha-qk__handle mha-qk__handle--${a.kind}`,
      r: 13,
      tabindex: 0,
      role: "button",
      "aria-roledescription": "draggable arrow",
      "data-arrow": a.kind === "query" ? "query" : String(a.index),
    });
  }
  // The query is drawn last (on top of any key along its direction); handles above every line and label.
  for (const a of [...arrows].reverse()) {
    lines.append(a.line);
    texts.append(a.label);
    handles.append(a.handle);
  }

  // ---- the text alternative: the numbers behind the picture, live
  const body = el("tbody");
  const rows = arrows.slice(1).map((a) => {
    const r = { key: el("td"), dot: el("td"), weight: el("td"), bar: el("span", { class: "mha-qk__bar" }) };
    r.weight.append(r.bar, el("span", { class: "mha-qk__pct" }));
    body.append(el("tr", {}, el("th", { scope: "row", text: a.short }), r.key, r.dot, r.weight));
    return r;
  });
  const queryCell = el("span", { class: "mha-qk__q" });
  const table = el(
    "table",
    { class: "mha-qk__table" },
    el("caption", {}, queryCell, ": each source\u2019s key, q · k and weight"),
    el(
      "thead",
      {},
      el(
        "tr",
        {},
        el("th", { scope: "col", text: "source" }),
        el("th", { scope: "col", text: "key k" }),
        el("th", { scope: "col", text: "q · k" }),
        el("th", { scope: "col", text: "weight" }),
      ),
    ),
    body,
  );
  const summary = el("p", { class: "mha-qk__summary", role: "status", "aria-live": "polite" });
  const reset = el("button", { type: "button", class: "md-button mha-qk__reset", text: "Reset the arrows" });

  function draw() {
    const q = arrows[0].v;
    const dots = arrows.slice(1).map((a) => dot(q, a.v));
    const w = softmax(dots);
    for (const a of arrows) {
      const [x, y] = a.v;
      a.line.setAttribute("x2", toX(x));
      a.line.setAttribute("y2", toY(y));
      a.handle.setAttribute("cx", toX(x));
      a.handle.setAttribute("cy", toY(y));
      a.handle.setAttribute("aria-label", `${a.name}: x ${fmt(x)}, y ${fmt(y)}`);
      // Labels sit just beyond the tip, pulled back inside the plane near its edge.
      const len = Math.hypot(x, y) || 1;
      // The query's label sits to the side of its tip, clear of a key that points the same way.
      const [ox, oy] = a.kind === "query" ? [(-y / len) * 24, (x / len) * 24] : [(x / len) * 20, (y / len) * 20];
      const lx = Math.max(30, Math.min(SIZE - 30, toX(x) + ox));
      const ly = labelY(toY(y) - oy + 4);
      a.label.setAttribute("x", lx);
      a.label.setAttribute("y", ly);
      a.label.textContent =
        a.kind === "query" ? "q" : `${ws.tokens[sources[a.index]]} ${Math.round(w[a.index] * 100)}%`;
      if (a.kind === "key") a.line.style.strokeWidth = String(1.5 + 7 * w[a.index]);
    }
    separateLabels(arrows.map((a) => a.label));
    queryCell.textContent = `q = (${fmt(q[0])}, ${fmt(q[1])})`;
    rows.forEach((r, i) => {
      r.key.textContent = `(${fmt(arrows[i + 1].v[0])}, ${fmt(arrows[i + 1].v[1])})`;
      r.dot.textContent = fmt(dots[i]);
      r.weight.lastChild.textContent = w[i].toFixed(2);
      r.bar.style.width = `${(2 * w[i]).toFixed(2)}rem`;
      r.weight.dataset.value = String(w[i]);
      r.dot.dataset.value = String(dots[i]);
    });
    const best = w.indexOf(Math.max(...w));
    summary.textContent = `Most weight: ${labels[best]}, ${w[best].toFixed(2)}. The weights add up to 1.`;
    root.dataset.weights = w.map((x) => x.toFixed(4)).join(",");
  }

  function move(a, v) {
    a.v = [round(clamp(v[0])), round(clamp(v[1]))];
    draw();
  }

  // ---- pointer: drag a tip anywhere on the plane
  let dragging = null;
  const toPlane = (event) => {
    const m = plane.getScreenCTM();
    if (!m) return null;
    const p = new DOMPoint(event.clientX, event.clientY).matrixTransform(m.inverse());
    return [fromX(p.x), fromY(p.y)];
  };
  for (const a of arrows) {
    a.handle.addEventListener("pointerdown", (event) => {
      event.preventDefault();
      dragging = a;
      a.handle.setPointerCapture(event.pointerId);
      a.handle.focus();
      a.handle.classList.add("is-dragging");
    });
    a.handle.addEventListener("pointermove", (event) => {
      if (dragging !== a) return;
      const p = toPlane(event);
      if (p) move(a, p);
    });
    const stop = () => {
      if (dragging === a) a.handle.classList.remove("is-dragging");
      dragging = null;
    };
    a.handle.addEventListener("pointerup", stop);
    a.handle.addEventListener("pointercancel", stop);
    // ---- keyboard: arrow keys move the focused tip
    a.handle.addEventListener("keydown", (event) => {
      const step = event.shiftKey ? BIG_STEP : STEP;
      const d = { ArrowLeft: [-step, 0], ArrowRight: [step, 0], ArrowUp: [0, step], ArrowDown: [0, -step] }[event.key];
      if (!d) return;
      event.preventDefault();
      move(a, [a.v[0] + d[0], a.v[1] + d[1]]);
    });
  }
  reset.addEventListener("click", () => {
    arrows[0].v = [...start.query];
    arrows.slice(1).forEach((a, i) => {
      a.v = [...start.keys[i]];
    });
    draw();
  });

  const help = el("p", {
    class: "mha-qk__help",
    id: `${id}-help`,
    text: "Drag a tip, or Tab to it and use the arrow keys (Shift: bigger steps).",
  });
  plane.setAttribute("aria-describedby", help.id);
  root.replaceChildren(
    el(
      "div",
      { class: "mha-qk" },
      el("div", { class: "mha-qk__plane" }, plane),
      el("div", { class: "mha-qk__side" }, help, el("div", { class: "mha-qk__scroll" }, table), summary, reset),
    ),
  );
  root.dataset.ready = "true";
  draw();
}

export function dispose(root) {
  release(state, root);
}
