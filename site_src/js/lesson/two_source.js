// Lesson page 1: the two-source toy, computed live.
//
// Two source tokens with invented two-number values. One head has a single
// weight pair (river, fisherman) that applies to both coordinates of its
// message; two heads each have their own pair and each supply one coordinate.
// Sliders change the weights; every result and every step of the arithmetic
// is computed here from the values below, never typed in.

import { claim, release } from "../runtime/widget.js";
import { el, fmt, uid, vec } from "./worksheet_ui.js";

// Authored toy numbers (not measured): value rows of the two sources.
export const VALUES = { river: [10, 1], fisherman: [2, 8] };
export const DEFAULTS = { one: 0.8, setting: 0.8, person: 0.2 };

// The message a head sends when it puts weight w on river and 1 - w on fisherman.
export function message(wRiver) {
  const wFisher = 1 - wRiver;
  return VALUES.river.map((r, k) => wRiver * r + wFisher * VALUES.fisherman[k]);
}

// The two-head result: coordinate 1 from the setting head, coordinate 2 from the person head.
export function twoHeads(wSetting, wPerson) {
  return [message(wSetting)[0], message(wPerson)[1]];
}

const state = new Map();

function weightText(w) {
  return `river ${fmt(w)}, fisherman ${fmt(1 - w)}`;
}

function slider({ label, hint, value, onInput }) {
  const id = uid("mha-ts-slider");
  const hintId = `${id}-hint`;
  const input = el("input", {
    type: "range",
    id,
    min: "0",
    max: "1",
    step: "0.05",
    value: String(value),
    "aria-describedby": hintId,
    "aria-valuetext": weightText(value),
  });
  const shown = el("span", { class: "mha-ts__weights", "aria-hidden": "true", text: weightText(value) });
  input.addEventListener("input", () => {
    const w = Number(input.value);
    input.setAttribute("aria-valuetext", weightText(w));
    shown.textContent = weightText(w);
    onInput(w);
  });
  return {
    input,
    node: el(
      "div",
      { class: "mha-ts__field" },
      el("label", { for: id, text: label }),
      input,
      shown,
      el("small", { id: hintId, text: hint }),
    ),
  };
}

// "0.8 × 10 + 0.2 × 2 = 8 + 0.4 = 8.4" for coordinate k.
function sumText(w, k) {
  const a = w * VALUES.river[k];
  const b = (1 - w) * VALUES.fisherman[k];
  return (
    `${fmt(w)} \u00d7 ${fmt(VALUES.river[k])} + ${fmt(1 - w)} \u00d7 ${fmt(VALUES.fisherman[k])} = ` +
    `${fmt(a)} + ${fmt(b)} = ${fmt(a + b)}`
  );
}

export function mount(root) {
  const s = claim(state, root);
  if (!s) return;

  // One head: one weight pair for both coordinates.
  const oneResult = el("output", { class: "mha-ts__result", "data-ts": "one-head", "aria-live": "polite" });
  const oneSteps = el("ul", { class: "mha-ts__steps" });
  const oneNote = el("p", { class: "mha-ts__note" });
  const one = slider({
    label: "One head: weight on \u201criver\u201d",
    hint: "The weight on \u201cfisherman\u201d is whatever is left, so the two add up to 1.",
    value: DEFAULTS.one,
    onInput: () => update(),
  });

  // Two heads: one weight pair each.
  const twoResult = el("output", { class: "mha-ts__result", "data-ts": "two-heads", "aria-live": "polite" });
  const settingSteps = el("p", { class: "mha-ts__step", "data-ts": "setting-sum" });
  const personSteps = el("p", { class: "mha-ts__step", "data-ts": "person-sum" });
  const setting = slider({
    label: "Setting head: weight on \u201criver\u201d",
    hint: "This head supplies coordinate 1 of the combined result.",
    value: DEFAULTS.setting,
    onInput: () => update(),
  });
  const person = slider({
    label: "Person head: weight on \u201criver\u201d",
    hint: "This head supplies coordinate 2 of the combined result.",
    value: DEFAULTS.person,
    onInput: () => update(),
  });
  const reset = el("button", { type: "button", class: "md-button mha-ts__reset", text: "Back to 0.8 / 0.8 / 0.2" });
  reset.addEventListener("click", () => {
    one.input.value = String(DEFAULTS.one);
    setting.input.value = String(DEFAULTS.setting);
    person.input.value = String(DEFAULTS.person);
    for (const sl of [one, setting, person]) sl.input.dispatchEvent(new Event("input"));
  });

  function update() {
    const w = Number(one.input.value);
    const m = message(w);
    oneResult.textContent = `One head\u2019s message: ${vec(m)}`;
    oneResult.dataset.values = JSON.stringify(m);
    oneSteps.replaceChildren(
      el("li", { text: `coordinate 1: ${sumText(w, 0)}` }),
      el("li", { text: `coordinate 2: ${sumText(w, 1)}` }),
    );
    const target = twoHeads(DEFAULTS.setting, DEFAULTS.person);
    oneNote.textContent =
      Math.abs(w - DEFAULTS.setting) < 1e-9
        ? `Coordinate 1 is ${fmt(target[0])}, as the setting reading wants, but coordinate 2 is then ${fmt(m[1])}, not ${fmt(target[1])}: the same 0.8 on river also dilutes the person information.`
        : Math.abs(w - DEFAULTS.person) < 1e-9
          ? `Coordinate 2 is ${fmt(target[1])}, as the person reading wants, but coordinate 1 is then ${fmt(m[0])}, not ${fmt(target[0])}.`
          : `Both coordinates move together: one slider sets the mixture for the whole message.`;

    const ws = Number(setting.input.value);
    const wp = Number(person.input.value);
    const t = twoHeads(ws, wp);
    twoResult.textContent = `Two heads combined: ${vec(t)}`;
    twoResult.dataset.values = JSON.stringify(t);
    settingSteps.textContent = `Setting head, coordinate 1: ${sumText(ws, 0)}`;
    personSteps.textContent = `Person head, coordinate 2: ${sumText(wp, 1)}`;
  }

  const table = el(
    "table",
    { class: "mha-ts__values" },
    el("caption", { text: "Invented value rows" }),
    el(
      "thead",
      {},
      el(
        "tr",
        {},
        el("th", { scope: "col", text: "source" }),
        el("th", { scope: "col", text: "coordinate 1" }),
        el("th", { scope: "col", text: "coordinate 2" }),
      ),
    ),
    el(
      "tbody",
      {},
      ...Object.entries(VALUES).map(([name, v]) =>
        el(
          "tr",
          {},
          el("th", { scope: "row", text: name }),
          el("td", { text: fmt(v[0]) }),
          el("td", { text: fmt(v[1]) }),
        ),
      ),
    ),
  );

  root.replaceChildren(
    el(
      "div",
      { class: "mha-ts" },
      table,
      el(
        "section",
        { class: "mha-ts__part", "aria-label": "One head" },
        el("h4", { text: "One head" }),
        one.node,
        oneResult,
        oneSteps,
        oneNote,
      ),
      el(
        "section",
        { class: "mha-ts__part", "aria-label": "Two heads" },
        el("h4", { text: "Two heads" }),
        setting.node,
        settingSteps,
        person.node,
        personSteps,
        twoResult,
      ),
      reset,
    ),
  );
  update();
}

export function dispose(root) {
  release(state, root);
}
