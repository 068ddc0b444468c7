// Where things go on page 1's plane of messages (message_plane.js): the
// scale from messages to the picture, the pointer's position back to head
// weights, and the head tags' places. A tag is placed by measuring rather than
// by fixed offsets because the handles move anywhere, the two heads' handles
// can sit on one spot, and a tag must never cover another label or a handle.

import { DEFAULTS, VALUES, twoHeads } from "./two_source.js";

// The target: the two-head reading of the toy (0.8 on river for coordinate 1, 0.2 for coordinate 2).
export const TARGET = twoHeads(DEFAULTS.setting, DEFAULTS.person);

const R = VALUES.river;
const F = VALUES.fisherman;
export const X_MAX = Math.ceil(Math.max(R[0], F[0]) + 1);
export const Y_MAX = Math.ceil(Math.max(R[1], F[1]) + 1);
export const BOX = { left: 44, right: 344, top: 14, bottom: 262 };
export const sx = (x) => BOX.left + (x / X_MAX) * (BOX.right - BOX.left);
export const sy = (y) => BOX.bottom - (y / Y_MAX) * (BOX.bottom - BOX.top);

// A handle's painted size: its dot (r 9) inside the ring that shows keyboard focus. Tags keep clear of
// the ring whether it shows or not, so a tag does not jump when its handle takes focus.
export const RING = 14;
export const MARK = RING + 2;
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
export const VIEW = { width: 360, height: BOX.bottom + 42 };

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

// placeTags(p, two) for one drawn picture (message_plane_draw.js's parts). Each visible head's tag
// goes to the first place around its handle where it meets no other label, no handle, no combined
// point and no target, inside the picture: the one or setting head's tag prefers its left, the
// person head's above right.
export function tagPlacer({ picture, fixedLabels, target, targetLabels, headTags }) {
  const tx = sx(TARGET[0]);
  let fixedBoxes = [];
  return function placeTags(p, two) {
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
  };
}

// The weight whose point on the segment is closest to [x, y] in the picture (screen geometry).
export function weightOnSegment([x, y]) {
  const ax = sx(F[0]),
    ay = sy(F[1]),
    bx = sx(R[0]),
    by = sy(R[1]);
  const t = ((x - ax) * (bx - ax) + (y - ay) * (by - ay)) / ((bx - ax) ** 2 + (by - ay) ** 2);
  return t; // t = 0 at fisherman, 1 at river: the weight on river
}

// The weights (not yet snapped) of the combined point at [x, y]: its x sets the setting head, its y the person head.
export function combinedWeights([x, y]) {
  const ux = (BOX.right - BOX.left) / X_MAX,
    uy = (BOX.bottom - BOX.top) / Y_MAX;
  const dataX = (x - BOX.left) / ux,
    dataY = (BOX.bottom - y) / uy;
  return { setting: (dataX - F[0]) / (R[0] - F[0]), person: (dataY - F[1]) / (R[1] - F[1]) };
}
