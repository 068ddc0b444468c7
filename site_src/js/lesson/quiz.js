// Check-yourself question. The page holds (see site_src/hooks/evidence_macros.py, quiz()):
//
//   div.mha-quiz[data-mha-widget=quiz]
//     p.mha-quiz__question
//     ol.mha-quiz__options > li.mha-quiz__option[data-correct="true"|"false"]
//     details.mha-quiz__explanation   (the answer and why; the no-JavaScript fallback)
//       ol.mha-quiz__whys > li         (one sentence per option, in the order shown)
//
// The options arrive already shuffled (a fixed order per question, chosen at
// build time), so this module keeps the DOM order. mount() turns the list
// into a radio group inside a form. The explanation stays hidden until the
// learner submits a choice; then the feedback line (a polite live region)
// says whether the choice was right, every option shows its own one-sentence
// reason, and the explanation opens. Everything is reachable with Tab, arrow
// keys and Enter.

import { el, uid } from "../runtime/dom.js";

const state = new WeakMap(); // root -> { original: Node[] }

export function mount(root) {
  if (state.has(root)) return;
  const question = root.querySelector(".mha-quiz__question");
  const options = [...root.querySelectorAll(".mha-quiz__option")];
  const explanation = root.querySelector(".mha-quiz__explanation");
  if (!question || options.length < 2 || !explanation) return;
  state.set(root, { original: [...root.childNodes].map((n) => n.cloneNode(true)) });

  const id = uid("mha-quiz");
  // Markup copied from the page is the build's own (evidence_macros.quiz), never learner text.
  const withHtml = (node, markup) => {
    node.innerHTML = markup;
    return node;
  };
  const fieldset = el("fieldset", {},
    withHtml(el("legend", { class: "mha-quiz__question", id: `${id}-q` }), question.innerHTML));
  const form = el("form", { class: "mha-quiz__form", novalidate: true }, fieldset);

  const whys = [...root.querySelectorAll(".mha-quiz__whys > li")];
  const choices = options.map((li, i) => {
    const input = el("input", { type: "radio", name: id, value: String(i), id: `${id}-${i}` });
    const mark = el("span", { class: "mha-quiz__mark" });
    const why = withHtml(el("span", { class: "mha-quiz__reason", id: `${id}-${i}-why`, hidden: true }),
      whys[i] ? whys[i].innerHTML : "");
    const text = withHtml(el("span", { class: "mha-quiz__text" }), li.innerHTML);
    text.append(mark, why);
    const label = el("label", { class: "mha-quiz__choice" },
      input, el("span", { class: "mha-quiz__letter", "aria-hidden": "true", text: String.fromCharCode(65 + i) }), text);
    fieldset.append(label);
    return { input, label, mark, why, correct: li.dataset.correct === "true" };
  });

  const button = el("button", { type: "submit", class: "md-button mha-quiz__check", text: "Check my answer" });
  const feedback = el("p", { class: "mha-quiz__feedback", role: "status", "aria-live": "polite" });
  form.append(el("div", { class: "mha-quiz__actions" }, button, feedback));

  question.replaceWith(form);
  root.querySelector(".mha-quiz__options").remove();
  explanation.hidden = true;
  explanation.open = true;
  for (const node of explanation.querySelectorAll(".mha-quiz__whys, .mha-quiz__whys-title")) node.hidden = true;
  const summary = explanation.querySelector("summary");
  if (summary) summary.textContent = "Why";

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const picked = choices.find((c) => c.input.checked);
    if (!picked) {
      feedback.textContent = "Pick one of the answers first.";
      feedback.dataset.result = "none";
      choices[0].input.focus();
      return;
    }
    for (const c of choices) {
      c.label.classList.toggle("is-correct", c.correct && c.input.checked);
      c.label.classList.toggle("is-wrong", !c.correct && c.input.checked);
      c.label.classList.toggle("is-answer", c.correct);
      c.mark.textContent = c.input.checked ? (c.correct ? " (your answer: correct)" : " (your answer: not correct)")
        : (c.correct ? " (the correct answer)" : "");
      c.why.hidden = !c.why.innerHTML;
      if (c.why.innerHTML) c.input.setAttribute("aria-describedby", c.why.id);
    }
    const right = choices.find((c) => c.correct);
    const letter = String.fromCharCode(65 + choices.indexOf(right));
    feedback.dataset.result = picked.correct ? "correct" : "wrong";
    feedback.textContent = picked.correct
      ? "Correct. Here is why."
      : `Not quite: the answer is ${letter}. Here is why.`;
    explanation.hidden = false;
    explanation.open = true;
    button.textContent = "Check again";
  });
}

export function dispose(root) {
  const saved = state.get(root);
  if (!saved) return;
  state.delete(root);
  root.replaceChildren(...saved.original);
}
