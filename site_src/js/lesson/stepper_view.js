// The stepper's page furniture (page 4), built once when it mounts: the prompt form with its
// model choice, the status and problem lines, and the panel a step is drawn into. Nothing
// here knows a step or a run; stepper.js fills these elements and handles what they report.

import { el, uid } from "../runtime/dom.js";
import { MAX_PROMPT_CHARS } from "./stepper_run.js";

const DEFAULT_PROMPT = "Lily found a";

// models: [[name, label], ...], most heads first; defaultModel: the one checked at first.
// on: {open(), move(delta), key(event)}. Returns the elements the stepper writes into, by name.
export function buildView(root, models, defaultModel, on) {
  const id = uid("mha-st");
  const prompt = root.dataset.prompt || DEFAULT_PROMPT;
  const input = el("input", {
    id: `${id}-prompt`,
    class: "mha-st__input",
    type: "text",
    value: prompt,
    maxlength: MAX_PROMPT_CHARS,
    spellcheck: false,
    autocomplete: "off",
  });
  const modelBox = el("fieldset", { class: "mha-st__models" }, el("legend", { text: "Model" }));
  for (const [name, label] of models) {
    const rid = `${id}-${name}`;
    modelBox.append(
      el(
        "span",
        { class: "mha-st__model" },
        el("input", {
          type: "radio",
          name: `${id}-model`,
          id: rid,
          value: name,
          checked: name === defaultModel,
        }),
        el("label", { for: rid, text: label }),
      ),
    );
  }
  const go = el("button", { type: "submit", class: "md-button md-button--primary", text: "Step through it" });
  const form = el(
    "form",
    {
      class: "mha-st__form",
      onsubmit: (e) => {
        e.preventDefault();
        on.open();
      },
    },
    el("label", { for: input.id, text: "Your prompt" }),
    input,
    modelBox,
    go,
  );
  const view = {
    input,
    modelBox,
    go,
    status: el("p", { class: "mha-st__status", role: "status", "aria-live": "polite" }),
    problem: el("div", { class: "mha-st__problem" }),
    title: el("h3", { class: "mha-st__title", tabindex: "-1", id: `${id}-title` }),
    back: el("button", { type: "button", class: "md-button", text: "← Back", onclick: () => on.move(-1) }),
    next: el("button", {
      type: "button",
      class: "md-button md-button--primary",
      text: "Next →",
      onclick: () => on.move(1),
    }),
    counter: el("span", { class: "mha-st__counter" }),
    map: el("div", { class: "mha-st__map", "aria-hidden": "true" }),
    shape: el("p", { class: "mha-st__shape" }),
    sentence: el("p", { class: "mha-st__sentence", "aria-live": "polite" }),
    numbers: el("dl", { class: "mha-st__numbers" }),
    predict: el("div", { class: "mha-st__predict" }),
    picture: el("figure", { class: "mha-st__picture", role: "img" }),
    actions: el("div", { class: "mha-st__actions" }),
    code: el("div", { class: "mha-st__code" }),
  };
  view.panel = el(
    "section",
    {
      class: "mha-st__panel",
      hidden: true,
      tabindex: "0",
      "aria-labelledby": view.title.id,
      onkeydown: (e) => on.key(e),
    },
    el("div", { class: "mha-st__nav" }, view.back, view.counter, view.next),
    view.title,
    el(
      "div",
      { class: "mha-st__body" },
      view.map,
      el(
        "div",
        { class: "mha-st__main" },
        view.shape,
        view.sentence,
        view.numbers,
        view.predict,
        view.picture,
        view.actions,
        view.code,
      ),
    ),
    el("p", { class: "mha-st__keys", text: "Keys: ← and → move between the steps while the stepper has the focus." }),
  );
  root.replaceChildren(el("div", { class: "mha-st" }, form, view.status, view.problem, view.panel));
  return view;
}
