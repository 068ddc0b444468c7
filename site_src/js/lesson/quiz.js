// Check-yourself question. The page holds (see site_src/hooks/evidence_macros.py, quiz()):
//
//   div.mha-quiz[data-mha-widget=quiz]
//     p.mha-quiz__question
//     ol.mha-quiz__options > li.mha-quiz__option[data-correct="true"|"false"]
//     p.mha-quiz__hint                 (one sentence pointing at the idea; optional)
//     details.mha-quiz__explanation   (the answer and why; the no-JavaScript fallback)
//       ol.mha-quiz__whys > li         (one sentence per option, in the order shown)
//
// The options arrive already shuffled (a fixed order per question, chosen at
// build time), so this module keeps the DOM order. mount() turns the list
// into a radio group inside a form. The learner gets to think twice: a first
// wrong choice says "not yet" with the hint and lets them choose again; the
// answer, every option's one-sentence reason and the explanation appear after
// a right choice, a second wrong one, or "Show the answer". The feedback line
// is a polite live region. Everything is reachable with Tab, arrow keys and Enter.

import { el, uid } from "../runtime/dom.js";
import { claim, release } from "../runtime/widget.js";

const state = new Map();

export function mount(root) {
  const question = root.querySelector(".mha-quiz__question");
  const options = [...root.querySelectorAll(".mha-quiz__option")];
  const explanation = root.querySelector(".mha-quiz__explanation");
  if (!question || options.length < 2 || !explanation) return;
  if (!claim(state, root, {}, { copy: true })) return;

  const id = uid("mha-quiz");
  // Markup copied from the page is the build's own (evidence_macros.quiz), never learner text.
  const withHtml = (node, markup) => {
    node.innerHTML = markup;
    return node;
  };
  const fieldset = el(
    "fieldset",
    {},
    withHtml(el("legend", { class: "mha-quiz__question", id: `${id}-q` }), question.innerHTML),
  );
  const form = el("form", { class: "mha-quiz__form", novalidate: true }, fieldset);

  const whys = [...root.querySelectorAll(".mha-quiz__whys > li")];
  const choices = options.map((li, i) => {
    const input = el("input", { type: "radio", name: id, value: String(i), id: `${id}-${i}` });
    const mark = el("span", { class: "mha-quiz__mark" });
    const why = withHtml(
      el("span", { class: "mha-quiz__reason", id: `${id}-${i}-why`, hidden: true }),
      whys[i] ? whys[i].innerHTML : "",
    );
    const text = withHtml(el("span", { class: "mha-quiz__text" }), li.innerHTML);
    text.append(mark, why);
    const label = el(
      "label",
      { class: "mha-quiz__choice" },
      input,
      el("span", { class: "mha-quiz__letter", "aria-hidden": "true", text: String.fromCharCode(65 + i) }),
      text,
    );
    fieldset.append(label);
    return { input, label, mark, why, correct: li.dataset.correct === "true" };
  });

  const button = el("button", { type: "submit", class: "md-button mha-quiz__check", text: "Check my answer" });
  const reveal = el("button", { type: "button", class: "md-button mha-quiz__reveal", text: "Show the answer" });
  const feedback = el("p", { class: "mha-quiz__feedback", role: "status", "aria-live": "polite" });
  const hintSource = root.querySelector(".mha-quiz__hint");
  const hint = hintSource ? hintSource.innerHTML.replace(/^\s*<strong>Hint:<\/strong>\s*/, "") : "";
  if (hintSource) hintSource.remove();
  form.append(el("div", { class: "mha-quiz__actions" }, button, reveal, feedback));

  question.replaceWith(form);
  root.querySelector(".mha-quiz__options").remove();
  explanation.hidden = true;
  explanation.open = true;
  for (const node of explanation.querySelectorAll(".mha-quiz__whys, .mha-quiz__whys-title")) node.hidden = true;
  const summary = explanation.querySelector("summary");
  if (summary) summary.textContent = "Why";

  const right = choices.find((c) => c.correct);
  const letter = String.fromCharCode(65 + choices.indexOf(right));
  let wrongTries = 0;

  // The answer, every option's reason and the explanation.
  const showAnswer = () => {
    for (const c of choices) {
      c.label.classList.toggle("is-correct", c.correct && c.input.checked);
      c.label.classList.toggle("is-wrong", !c.correct && (c.input.checked || c.tried));
      c.label.classList.toggle("is-answer", c.correct);
      c.mark.textContent = c.input.checked
        ? c.correct
          ? " (your answer: correct)"
          : " (your answer: not correct)"
        : c.correct
          ? " (the correct answer)"
          : "";
      c.why.hidden = !c.why.innerHTML;
      if (c.why.innerHTML) c.input.setAttribute("aria-describedby", c.why.id);
    }
    explanation.hidden = false;
    explanation.open = true;
    reveal.hidden = true;
    button.textContent = "Check again";
    root.dataset.state = "answered";
  };

  const say = (result, markup) => {
    feedback.dataset.result = result;
    feedback.innerHTML = markup;
  };

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const picked = choices.find((c) => c.input.checked);
    if (!picked) {
      say("none", "Pick one of the answers first.");
      choices[0].input.focus();
      return;
    }
    if (picked.correct) {
      showAnswer();
      say("correct", "Correct. Here is why.");
      return;
    }
    if (root.dataset.state === "answered") {
      showAnswer();
      say("wrong", `Not quite: the answer is ${letter}. Here is why.`);
      return;
    }
    wrongTries += 1;
    picked.tried = true;
    if (wrongTries === 1) {
      // Not yet: mark this choice as tried, point at the idea, let them choose again.
      picked.label.classList.add("is-tried");
      picked.mark.textContent = " (tried: not this one)";
      say("not-yet", `Not yet.${hint ? ` <span class="mha-quiz__hint">Hint: ${hint}</span>` : ""} Choose again.`);
      button.textContent = "Check again";
      return;
    }
    showAnswer();
    say("wrong", `Not quite: the answer is ${letter}. Here is why.`);
  });

  reveal.addEventListener("click", () => {
    showAnswer();
    say("shown", `The answer is ${letter}. Here is why.`);
  });
}

export function dispose(root) {
  release(state, root);
}
