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

let counter = 0;
const state = new WeakMap(); // root -> { original: Node[] }

export function mount(root) {
  if (state.has(root)) return;
  const question = root.querySelector(".mha-quiz__question");
  const options = [...root.querySelectorAll(".mha-quiz__option")];
  const explanation = root.querySelector(".mha-quiz__explanation");
  if (!question || options.length < 2 || !explanation) return;
  state.set(root, { original: [...root.childNodes].map((n) => n.cloneNode(true)) });

  const id = `mha-quiz-${++counter}`;
  const form = document.createElement("form");
  form.className = "mha-quiz__form";
  form.noValidate = true;
  const fieldset = document.createElement("fieldset");
  const legend = document.createElement("legend");
  legend.className = "mha-quiz__question";
  legend.id = `${id}-q`;
  legend.innerHTML = question.innerHTML;
  fieldset.append(legend);

  const whys = [...root.querySelectorAll(".mha-quiz__whys > li")];
  const choices = options.map((li, i) => {
    const label = document.createElement("label");
    label.className = "mha-quiz__choice";
    const input = document.createElement("input");
    input.type = "radio";
    input.name = id;
    input.value = String(i);
    input.id = `${id}-${i}`;
    const letter = document.createElement("span");
    letter.className = "mha-quiz__letter";
    letter.setAttribute("aria-hidden", "true");
    letter.textContent = String.fromCharCode(65 + i);
    const text = document.createElement("span");
    text.className = "mha-quiz__text";
    text.innerHTML = li.innerHTML;
    const mark = document.createElement("span");
    mark.className = "mha-quiz__mark";
    const why = document.createElement("span");
    why.className = "mha-quiz__reason";
    why.id = `${id}-${i}-why`;
    why.hidden = true;
    if (whys[i]) why.innerHTML = whys[i].innerHTML;
    text.append(mark, why);
    label.append(input, letter, text);
    fieldset.append(label);
    return { input, label, mark, why, correct: li.dataset.correct === "true" };
  });

  const button = document.createElement("button");
  button.type = "submit";
  button.className = "md-button mha-quiz__check";
  button.textContent = "Check my answer";
  const feedback = document.createElement("p");
  feedback.className = "mha-quiz__feedback";
  feedback.setAttribute("role", "status");
  feedback.setAttribute("aria-live", "polite");
  const actions = document.createElement("div");
  actions.className = "mha-quiz__actions";
  actions.append(button, feedback);
  form.append(fieldset, actions);

  question.replaceWith(form);
  root.querySelector(".mha-quiz__options").remove();
  explanation.hidden = true;
  explanation.open = true;
  for (const el of explanation.querySelectorAll(".mha-quiz__whys, .mha-quiz__whys-title")) el.hidden = true;
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
