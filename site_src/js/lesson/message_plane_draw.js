// Drawing page 1's plane of messages (message_plane.js): the picture as SVG
// and its legend, built once, then moved to the weights on every change.
// Positions come from message_plane_layout.js, so drawing and hit-testing
// share one scale.

import { VALUES } from "./two_source.js";
import { fmt, vec } from "./worksheet_ui.js";
import { el } from "../runtime/dom.js";
import { BOX, MARK, RING, TARGET, VIEW, X_MAX, Y_MAX, sx, sy, tagPlacer } from "./message_plane_layout.js";

const SVG = "http://www.w3.org/2000/svg";
const R = VALUES.river;
const F = VALUES.fisherman;

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

// The picture and its legend. id: the widget's, from which the picture's title and description
// (returned as descId, for the words the widget writes) get theirs.
export function drawPlane(id) {
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
  const fixedLabels = [...sources.querySelectorAll("text"), ...ticks.querySelectorAll("text")];
  const placeTags = tagPlacer({ picture, fixedLabels, target, targetLabels, headTags });
  return {
    picture,
    legend,
    descId,
    target,
    combined,
    handles,
    rect,
    rectKey,
    guides,
    guideV,
    guideH,
    headTags,
    placeTags,
  };
}

function place(g, p) {
  g.setAttribute("transform", `translate(${sx(p[0]).toFixed(2)} ${sy(p[1]).toFixed(2)})`);
}

// Two heads with the same weights (as they start) sit on one spot.
export const sameSpot = (w) => Math.abs(w.setting - w.person) < 1e-9;

// Everything that follows the weights w: the handles (and what a screen reader hears of them), the
// guides, the combined point and the tags. p: the messages (one, setting, person, combined).
export function drawPoints(parts, p, w, two) {
  const { handles, headTags, rect, rectKey, guides, guideV, guideH, combined, placeTags } = parts;
  for (const key of ["one", "setting", "person"]) {
    const h = handles[key];
    const visible = two ? key !== "one" : key === "one";
    h.style.display = visible ? "" : "none";
    headTags[key].style.display = visible ? "" : "none";
    h.setAttribute("tabindex", visible ? "0" : "-1");
    h.setAttribute("aria-valuenow", fmt(w[key]));
    h.setAttribute("aria-valuetext", `river ${fmt(w[key])}, fisherman ${fmt(1 - w[key])}: message ${vec(p[key])}`);
    h.dataset.w = String(w[key]);
    place(h, p[key]);
  }
  // Two heads with the same weights sit on one spot (as they start): the setting head's dot widens
  // into a rim around the person head's, so both show, and pressing the rim takes the setting head.
  const alike = two && sameSpot(w);
  handles.setting.querySelector(".mha-mp__dot").setAttribute("r", alike ? 13 : 9);
  handles.person.querySelector(".mha-mp__dot").setAttribute("r", alike ? 7 : 9);
  handles.person.querySelector(".mha-mp__hit").setAttribute("r", alike ? 8 : 20);
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
}
