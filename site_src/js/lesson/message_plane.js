// Lesson page 1: the plane of messages for the two-source toy.
//
// Every message is a point (coordinate 1, coordinate 2). One head mixes the
// two value rows with one weight, so its messages lie on the segment between
// river and fisherman. Two heads each pick a point on that segment and the
// combined result takes coordinate 1 from the first and coordinate 2 from the
// second, so together they reach the whole rectangle the two points span. The
// learner drags the handles (mouse, touch or arrow keys) and the widget says
// when the target is reached. The numbers are two_source.js's (one source).

import { DEFAULTS, VALUES, message, twoHeads } from "./two_source.js";
import { fmt, vec } from "./worksheet_ui.js";
import { el, uid } from "../runtime/dom.js";
import { claim, release } from "../runtime/widget.js";

const SVG = "http://www.w3.org/2000/svg";
export const STEP = 0.05;
// The target: the two-head reading of the toy (0.8 on river for coordinate 1, 0.2 for coordinate 2).
export const TARGET = twoHeads(DEFAULTS.setting, DEFAULTS.person);

const R = VALUES.river;
const F = VALUES.fisherman;
const X_MAX = Math.ceil(Math.max(R[0], F[0]) + 1);
const Y_MAX = Math.ceil(Math.max(R[1], F[1]) + 1);
const BOX = { left: 44, right: 344, top: 14, bottom: 262 };
const sx = (x) => BOX.left + (x / X_MAX) * (BOX.right - BOX.left);
const sy = (y) => BOX.bottom - (y / Y_MAX) * (BOX.bottom - BOX.top);

export const snap = (w) => Math.min(1, Math.max(0, Math.round(w / STEP) * STEP));
const same = (a, b) => Math.abs(a[0] - b[0]) < 1e-9 && Math.abs(a[1] - b[1]) < 1e-9;

function svg(tag, attrs = {}, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== null && v !== undefined) node.setAttribute(k, String(v));
  for (const c of children) node.append(c);
  return node;
}

function label(x, y, text, cls = "", anchor = "start") {
  const t = svg("text", { x, y, class: `mha-mp__label ${cls}`, "text-anchor": anchor });
  t.textContent = text;
  return t;
}

// A handle's painted size: its dot (r 9) inside the ring that shows keyboard focus. Tags keep clear of
// the ring whether it shows or not, so a tag does not jump when its handle takes focus.
const RING = 14;
const MARK = RING + 2;
// Places for a head's tag around its handle (offset from the handle's centre, text anchor), in order of
// preference: beside it, then above or below, then a line further out (two handles on one spot).
const G = MARK + 4;
const NEAR = [
  [-G, 5, "end"],
  [G, 5, "start"],
  [-6, -G, "end"],
  [6, -G, "start"],
  [-6, G + 10, "end"],
  [6, G + 10, "start"],
  [0, -G - 2, "middle"],
  [0, G + 12, "middle"],
];
const FAR = [
  [-6, -G - 16, "end"],
  [6, -G - 16, "start"],
  [-6, G + 26, "end"],
  [6, G + 26, "start"],
  [0, -G - 18, "middle"],
  [0, G + 28, "middle"],
  [-G - 10, 5, "end"],
  [G + 10, 5, "start"],
  [-G - 10, -22, "end"],
  [-G - 10, 22, "end"],
  [-6, -G - 32, "end"],
  [12, -G - 16, "end"],
  [12, -G - 32, "end"],
  [-6, -G - 48, "end"],
  [12, -G - 48, "end"],
  [0, G + 44, "middle"],
];
const AROUND = [...NEAR, ...FAR];
const AROUND_PERSON = [
  [6, -G, "start"],
  [-6, -G, "end"],
  [G, 5, "start"],
  [-G, 5, "end"],
  [6, G + 10, "start"],
  [-6, G + 10, "end"],
  [0, -G - 2, "middle"],
  [0, G + 12, "middle"],
  ...FAR,
];
const VIEW = { width: 360, height: BOX.bottom + 42 };

function setTag(t, x, y, anchor) {
  t.setAttribute("x", x);
  t.setAttribute("y", y);
  t.setAttribute("text-anchor", anchor);
}

// getBBox throws in some engines for an element that is not drawn (a widget in a closed door).
function bbox(node) {
  try {
    return node.getBBox();
  } catch {
    return { x: 0, y: 0, width: 0, height: 0 };
  }
}

// A label's box in the picture's units, through its own transform (the rotated axis title).
function boxInPicture(picture, node) {
  const b = bbox(node);
  const m = picture.getScreenCTM()?.inverse().multiply(node.getScreenCTM());
  if (!m) return b;
  const pts = [
    [b.x, b.y],
    [b.x + b.width, b.y],
    [b.x, b.y + b.height],
    [b.x + b.width, b.y + b.height],
  ].map(([x, y]) => new DOMPoint(x, y).matrixTransform(m));
  const xs = pts.map((q) => q.x),
    ys = pts.map((q) => q.y);
  return {
    x: Math.min(...xs),
    y: Math.min(...ys),
    width: Math.max(...xs) - Math.min(...xs),
    height: Math.max(...ys) - Math.min(...ys),
  };
}

function circleBox(cx, cy, r) {
  return { x: cx - r, y: cy - r, width: 2 * r, height: 2 * r };
}

// The area two boxes share (a little margin around the first), and how far one sticks out of the picture.
function overlap(a, b, pad = 2) {
  const w = Math.min(a.x + a.width + pad, b.x + b.width) - Math.max(a.x - pad, b.x);
  const h = Math.min(a.y + a.height + pad, b.y + b.height) - Math.max(a.y - pad, b.y);
  return w > 0 && h > 0 ? w * h : 0;
}

function outside(b) {
  const over =
    Math.max(0, -b.x) +
    Math.max(0, b.x + b.width - VIEW.width) +
    Math.max(0, -b.y) +
    Math.max(0, b.y + b.height - BOX.bottom);
  return over * 100;
}

const state = new Map();

export function mount(root) {
  const s = claim(state, root, { mode: "one", w: { one: DEFAULTS.one, setting: DEFAULTS.one, person: DEFAULTS.one } });
  if (!s) return;
  const id = uid("mha-mp");

  // --- the picture -------------------------------------------------------
  const grid = svg("g", { class: "mha-mp__grid", "aria-hidden": "true" });
  for (let x = 0; x <= X_MAX; x++) grid.append(svg("line", { x1: sx(x), x2: sx(x), y1: sy(0), y2: sy(Y_MAX) }));
  for (let y = 0; y <= Y_MAX; y++) grid.append(svg("line", { x1: sx(0), x2: sx(X_MAX), y1: sy(y), y2: sy(y) }));
  const ticks = svg("g", { class: "mha-mp__ticks", "aria-hidden": "true" });
  for (let x = 0; x <= X_MAX; x += 2) ticks.append(label(sx(x), sy(0) + 15, String(x), "", "middle"));
  for (let y = 0; y <= Y_MAX; y += 2) ticks.append(label(sx(0) - 7, sy(y) + 4, String(y), "", "end"));
  ticks.append(label((BOX.left + BOX.right) / 2, BOX.bottom + 32, "coordinate 1 (setting)", "mha-mp__axis", "middle"));
  const yAxis = label(0, 0, "coordinate 2 (person)", "mha-mp__axis", "middle");
  yAxis.setAttribute("transform", `translate(12 ${(BOX.top + BOX.bottom) / 2}) rotate(-90)`);
  ticks.append(yAxis);

  const lo = [Math.min(R[0], F[0]), Math.min(R[1], F[1])];
  const hi = [Math.max(R[0], F[0]), Math.max(R[1], F[1])];
  const rect = svg("rect", {
    class: "mha-mp__rect",
    x: sx(lo[0]),
    y: sy(hi[1]),
    width: sx(hi[0]) - sx(lo[0]),
    height: sy(lo[1]) - sy(hi[1]),
    "aria-hidden": "true",
  });
  const segment = svg("line", {
    class: "mha-mp__segment",
    x1: sx(F[0]),
    y1: sy(F[1]),
    x2: sx(R[0]),
    y2: sy(R[1]),
    "aria-hidden": "true",
  });

  const sources = svg(
    "g",
    { "aria-hidden": "true" },
    svg("circle", { class: "mha-mp__source", cx: sx(R[0]), cy: sy(R[1]), r: 5 }),
    // Below river and above fisherman, clear of the ring of a handle that sits on either and of the
    // combined point, which runs along the rectangle's top edge.
    label(sx(R[0]), sy(R[1]) + MARK + 11, `river ${vec(R)}`, "", "middle"),
    svg("circle", { class: "mha-mp__source", cx: sx(F[0]), cy: sy(F[1]), r: 5 }),
    label(sx(F[0]) - 6, sy(F[1]) - MARK - 6, `fisherman ${vec(F)}`),
  );
  const tx = sx(TARGET[0]),
    ty = sy(TARGET[1]);
  const target = svg(
    "g",
    { class: "mha-mp__target", "aria-hidden": "true" },
    svg("circle", { cx: tx, cy: ty, r: 11 }),
    svg("line", { x1: tx - 16, x2: tx + 16, y1: ty, y2: ty }),
    svg("line", { x1: tx, x2: tx, y1: ty - 16, y2: ty + 16 }),
    // Beside the mark, on two lines: to its right, or to its left while the combined point is there.
    label(tx + 17, ty - 4, "target", "mha-mp__target-label"),
    label(tx + 17, ty + 12, vec(TARGET), "mha-mp__target-label"),
  );
  const targetLabels = [...target.querySelectorAll("text")];

  const guides = svg("g", { class: "mha-mp__guides", "aria-hidden": "true" });
  const guideV = svg("line", { class: "mha-mp__guide h0-stroke" });
  const guideH = svg("line", { class: "mha-mp__guide h1-stroke" });
  guides.append(guideV, guideH);
  const combined = svg("circle", { class: "mha-mp__combined", r: 8, "data-mp": "combined", "aria-hidden": "true" });

  function handle(key, name, colour) {
    const g = svg("g", {
      class: `mha-mp__handle ${colour}`,
      tabindex: 0,
      role: "slider",
      "data-handle": key,
      "aria-label": name,
      "aria-valuemin": 0,
      "aria-valuemax": 1,
      "aria-orientation": "horizontal",
    });
    g.append(
      svg("circle", { class: "mha-mp__hit", r: 20 }),
      svg("circle", { class: "mha-mp__ring", r: RING }),
      svg("circle", { class: "mha-mp__dot", r: 9 }),
    );
    return g;
  }
  const handles = {
    one: handle("one", "One head: weight on river", "h0"),
    setting: handle("setting", "Setting head: weight on river (supplies coordinate 1)", "h0"),
    person: handle("person", "Person head: weight on river (supplies coordinate 2)", "h1"),
  };
  const headTags = {
    setting: label(0, 0, "setting head", "mha-mp__tag h0-text"),
    person: label(0, 0, "person head", "mha-mp__tag h1-text"),
    one: label(0, 0, "one head", "mha-mp__tag h0-text"),
  };

  const titleId = `${id}-title`;
  const descId = `${id}-desc`;
  const picture = svg("svg", {
    class: "mha-mp__svg",
    viewBox: `0 0 ${VIEW.width} ${VIEW.height}`,
    role: "group",
    "aria-labelledby": titleId,
    "aria-describedby": descId,
  });
  const title = svg("title", { id: titleId });
  title.textContent = "The plane of messages: the two value rows, the target and the head handles";
  picture.append(
    title,
    grid,
    ticks,
    rect,
    segment,
    sources,
    target,
    guides,
    combined,
    headTags.one,
    headTags.setting,
    headTags.person,
    handles.one,
    handles.setting,
    handles.person,
  );

  // --- the controls and the words ------------------------------------------
  const modeName = `${id}-mode`;
  const radios = {};
  const modes = el(
    "fieldset",
    { class: "mha-mp__modes" },
    el("legend", { text: "How many heads?" }),
    ...[
      ["one", "One head"],
      ["two", "Two heads"],
    ].map(([value, text]) => {
      radios[value] = el("input", {
        type: "radio",
        name: modeName,
        value,
        checked: value === s.mode,
        "data-mode": value,
      });
      radios[value].addEventListener("change", () => setMode(value));
      return el("label", { class: "mha-mp__mode" }, radios[value], ` ${text}`);
    }),
  );
  // The line and the rectangle are named in a legend under the picture: written inside it, their words
  // sat where the handles and their tags move.
  const rectKey = el(
    "li",
    { class: "mha-mp__key" },
    el("span", { class: "mha-mp__swatch mha-mp__swatch--rect" }),
    "two heads reach this rectangle",
  );
  const legend = el(
    "ul",
    { class: "mha-mp__legend", "data-mp": "legend" },
    el(
      "li",
      { class: "mha-mp__key" },
      el("span", { class: "mha-mp__swatch mha-mp__swatch--line" }),
      "one head reaches this line",
    ),
    rectKey,
  );
  const desc = el("p", { class: "mha-mp__desc", id: descId, "data-mp": "positions" });
  const status = el("p", { class: "mha-mp__status", role: "status", "aria-live": "polite", "data-mp": "status" });
  const hint = el("p", {
    class: "mha-mp__hint",
    text:
      "Drag a coloured handle along the line, or focus it " +
      "(Tab) and use the arrow keys. With two heads you can also drag the combined point.",
  });

  function points() {
    const one = message(s.w.one);
    const setting = message(s.w.setting);
    const person = message(s.w.person);
    return { one, setting, person, combined: [setting[0], person[1]] };
  }

  function place(g, p) {
    g.setAttribute("transform", `translate(${sx(p[0]).toFixed(2)} ${sy(p[1]).toFixed(2)})`);
  }

  function render() {
    const p = points();
    const two = s.mode === "two";
    root.dataset.mode = s.mode;
    for (const key of ["one", "setting", "person"]) {
      const w = s.w[key];
      const h = handles[key];
      const visible = two ? key !== "one" : key === "one";
      h.style.display = visible ? "" : "none";
      headTags[key].style.display = visible ? "" : "none";
      h.setAttribute("tabindex", visible ? "0" : "-1");
      h.setAttribute("aria-valuenow", fmt(w));
      h.setAttribute("aria-valuetext", `river ${fmt(w)}, fisherman ${fmt(1 - w)}: message ${vec(p[key])}`);
      h.dataset.w = String(w);
      place(h, p[key]);
    }
    for (const n of [rect, rectKey, guides, combined]) n.style.display = two ? "" : "none";
    guideV.setAttribute("x1", sx(p.setting[0]));
    guideV.setAttribute("y1", sy(p.setting[1]));
    guideV.setAttribute("x2", sx(p.combined[0]));
    guideV.setAttribute("y2", sy(p.combined[1]));
    guideH.setAttribute("x1", sx(p.person[0]));
    guideH.setAttribute("y1", sy(p.person[1]));
    guideH.setAttribute("x2", sx(p.combined[0]));
    guideH.setAttribute("y2", sy(p.combined[1]));
    combined.setAttribute("cx", sx(p.combined[0]));
    combined.setAttribute("cy", sy(p.combined[1]));
    placeTags(p, two);

    const result = two ? p.combined : p.one;
    const reached = same(result, TARGET);
    root.dataset.reached = String(reached);
    root.dataset.message = JSON.stringify(result);
    target.classList.toggle("mha-mp__target--reached", reached);

    desc.textContent =
      `River's value row is the point ${vec(R)}, fisherman's ${vec(F)}; the target is ` +
      `${vec(TARGET)}. ` +
      (two
        ? `The setting head's message is ${vec(p.setting)} (river ${fmt(s.w.setting)}) and the person head's ` +
          `${vec(p.person)} (river ${fmt(s.w.person)}), both on the line between the two rows; the combined result ` +
          `takes coordinate 1 from the first and coordinate 2 from the second: ${vec(p.combined)}.`
        : `One head's message is ${vec(p.one)} (river ${fmt(s.w.one)}, fisherman ${fmt(1 - s.w.one)}), on the ` +
          `line between the two rows.`);
    if (reached) {
      status.textContent =
        `Target reached: ${vec(result)}, with river ${fmt(s.w.setting)} for coordinate 1 and ` +
        `river ${fmt(s.w.person)} for coordinate 2.`;
    } else if (two) {
      const dx = TARGET[0] - result[0],
        dy = TARGET[1] - result[1];
      const part = (d, k) =>
        Math.abs(d) < 1e-9
          ? `coordinate ${k} is right`
          : `coordinate ${k} is ${fmt(Math.abs(d))} too ${d > 0 ? "small" : "large"}`;
      status.textContent = `Not yet: ${vec(result)}; ${part(dx, 1)}, ${part(dy, 2)}.`;
    } else {
      status.textContent =
        `Not reached: ${vec(result)}. Every weight keeps one head's message on the line, ` +
        `and the target ${vec(TARGET)} is not on it. Try two heads.`;
    }
  }

  // Each visible head's tag goes to the first place around its handle where it meets no other label,
  // no handle, no combined point and no target, inside the picture: the one or setting head's tag
  // prefers its left, the person head's above right.
  function placeTags(p, two) {
    const keys = two ? ["setting", "person"] : ["one"];
    const marks = keys.map((key) => circleBox(sx(p[key][0]), sy(p[key][1]), MARK));
    if (two) marks.push(circleBox(sx(p.combined[0]), sy(p.combined[1]), 11));
    // The sources and ticks never move: their boxes are measured once the picture is drawn.
    if (!fixedBoxes.some((b) => b.width)) fixedBoxes = fixedLabels.map((t) => boxInPicture(picture, t));
    for (const side of [1, -1]) {
      for (const t of targetLabels) setTag(t, tx + side * 17, t.getAttribute("y"), side > 0 ? "start" : "end");
      if (!targetLabels.some((t) => marks.some((m) => overlap(bbox(t), m)))) break;
    }
    const taken = [...fixedBoxes, bbox(target), ...marks];
    for (const key of keys) {
      const [hx, hy] = [sx(p[key][0]), sy(p[key][1])];
      const order = key === "person" ? AROUND_PERSON : AROUND;
      let best = null;
      for (const [dx, dy, anchor] of order) {
        setTag(headTags[key], hx + dx, hy + dy, anchor);
        const b = bbox(headTags[key]);
        const cost = taken.reduce((sum, o) => sum + overlap(b, o), 0) + outside(b);
        if (!best || cost < best.cost) best = { cost, at: [hx + dx, hy + dy, anchor] };
        if (cost === 0) break;
      }
      setTag(headTags[key], ...best.at);
      taken.push(bbox(headTags[key]));
    }
  }

  function setMode(mode) {
    if (mode === s.mode) return;
    // The two heads start where the one head was: alike, until the learner moves them apart.
    if (mode === "two") s.w.setting = s.w.person = s.w.one;
    s.mode = mode;
    radios[mode].checked = true;
    render();
  }

  function setWeight(key, w) {
    const v = snap(w);
    if (Math.abs(v - s.w[key]) < 1e-12) return;
    s.w[key] = v;
    render();
  }

  function local(event) {
    const pt = picture.createSVGPoint();
    pt.x = event.clientX;
    pt.y = event.clientY;
    const q = pt.matrixTransform(picture.getScreenCTM().inverse());
    return [q.x, q.y];
  }

  // The weight whose point on the segment is closest to where the pointer is (screen geometry).
  function projectOnSegment([x, y]) {
    const ax = sx(F[0]),
      ay = sy(F[1]),
      bx = sx(R[0]),
      by = sy(R[1]);
    const t = ((x - ax) * (bx - ax) + (y - ay) * (by - ay)) / ((bx - ax) ** 2 + (by - ay) ** 2);
    return t; // t = 0 at fisherman, 1 at river: the weight on river
  }

  function drag(node, onMove) {
    node.addEventListener("pointerdown", (event) => {
      if (event.button !== 0) return;
      event.preventDefault();
      node.setPointerCapture(event.pointerId);
      if (node.focus) node.focus({ preventScroll: true });
      onMove(local(event));
      const move = (e) => onMove(local(e));
      const up = () => {
        node.removeEventListener("pointermove", move);
        node.removeEventListener("pointerup", up);
        node.removeEventListener("pointercancel", up);
      };
      node.addEventListener("pointermove", move);
      node.addEventListener("pointerup", up);
      node.addEventListener("pointercancel", up);
    });
  }

  for (const key of Object.keys(handles)) {
    const h = handles[key];
    drag(h, (pt) => setWeight(key, projectOnSegment(pt)));
    h.addEventListener("keydown", (event) => {
      // Along the line: right and down go towards river (bottom right), left and up towards fisherman.
      const steps = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1, PageDown: 4, PageUp: -4 };
      let w = null;
      if (event.key in steps) w = s.w[key] + steps[event.key] * STEP;
      else if (event.key === "Home") w = 0;
      else if (event.key === "End") w = 1;
      if (w === null) return;
      event.preventDefault();
      setWeight(key, w);
    });
  }
  // The combined point: its x sets the setting head, its y the person head.
  drag(combined, ([x, y]) => {
    const ux = (BOX.right - BOX.left) / X_MAX,
      uy = (BOX.bottom - BOX.top) / Y_MAX;
    const dataX = (x - BOX.left) / ux,
      dataY = (BOX.bottom - y) / uy;
    s.w.setting = snap((dataX - F[0]) / (R[0] - F[0]));
    s.w.person = snap((dataY - F[1]) / (R[1] - F[1]));
    render();
  });

  const fixedLabels = [...sources.querySelectorAll("text"), ...ticks.querySelectorAll("text")];
  let fixedBoxes = [];
  root.replaceChildren(
    el("div", { class: "mha-mp" }, modes, el("div", { class: "mha-mp__scroll" }, picture), legend, status, desc, hint),
  );
  render();
}

export function dispose(root) {
  release(state, root);
}
