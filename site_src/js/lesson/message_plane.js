// Lesson page 1: the plane of messages for the two-source toy.
//
// Every message is a point (coordinate 1, coordinate 2). One head mixes the
// two value rows with one weight, so its messages lie on the segment between
// river and fisherman. Two heads each pick a point on that segment and the
// combined result takes coordinate 1 from the first and coordinate 2 from the
// second, so together they reach the whole rectangle the two points span. The
// learner drags the handles (mouse, touch or arrow keys) and the widget says
// when the target is reached. The numbers are two_source.js's (one source).
//
// This module holds what the learner does and reads: the mode, the weights,
// the pointer and the keys, and the words under the picture. Drawing is
// message_plane_draw.js's, positions message_plane_layout.js's.

import { DEFAULTS, VALUES, message } from "./two_source.js";
import { fmt, vec } from "./worksheet_ui.js";
import { el, uid } from "../runtime/dom.js";
import { claim, release } from "../runtime/widget.js";
import { drawPlane, drawPoints, sameSpot } from "./message_plane_draw.js";
import { TARGET, combinedWeights, weightOnSegment } from "./message_plane_layout.js";

export { TARGET };
export const STEP = 0.05;

const R = VALUES.river;
const F = VALUES.fisherman;

export const snap = (w) => Math.min(1, Math.max(0, Math.round(w / STEP) * STEP));
const same = (a, b) => Math.abs(a[0] - b[0]) < 1e-9 && Math.abs(a[1] - b[1]) < 1e-9;

const state = new Map();

export function mount(root) {
  const s = claim(state, root, { mode: "one", w: { one: DEFAULTS.one, setting: DEFAULTS.one, person: DEFAULTS.one } });
  if (!s) return;
  const id = uid("mha-mp");
  const parts = drawPlane(id);
  const { picture, legend, descId, target, combined, handles } = parts;

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

  function render() {
    const p = points();
    const two = s.mode === "two";
    root.dataset.mode = s.mode;
    drawPoints(parts, p, s.w, two);

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
      status.textContent =
        `Not yet: ${vec(result)}; ${part(dx, 1)}, ${part(dy, 2)}.` +
        (sameSpot(s.w)
          ? " Both heads sit on one spot for now (the rim is the setting head, the centre the person head): pull them apart."
          : "");
    } else {
      status.textContent =
        `Not reached: ${vec(result)}. Every weight keeps one head's message on the line, ` +
        `and the target ${vec(TARGET)} is not on it. Try two heads.`;
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
    drag(h, (pt) => setWeight(key, weightOnSegment(pt)));
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
  drag(combined, (pt) => {
    const w = combinedWeights(pt);
    s.w.setting = snap(w.setting);
    s.w.person = snap(w.person);
    render();
  });

  root.replaceChildren(
    el("div", { class: "mha-mp" }, modes, el("div", { class: "mha-mp__scroll" }, picture), legend, status, desc, hint),
  );
  render();
}

export function dispose(root) {
  release(state, root);
}
