// "Check yourself" on the microgpt page: four multiple-choice questions.
// A click (or Enter/Space on a focused choice) answers; the feedback says why.
// Answers are saved with microgpt/progress.js.

import { getProgress, onProgress, updateProgress } from "./progress.js";
import { el, uid } from "./ui.js";

const QUESTIONS = [
  {
    id: "slices",
    text: "microgpt has n_embd = 16 and n_head = 4. What does each head work with?",
    choices: [
      ["All 16 numbers of the query, keys and values, through weights of its own.", "No: the heads share one q, one k and one v per position; they do not get their own 16-number copies."],
      ["Its own 4 of the 16 numbers: the same 4 positions of the query, of every key and of every value.", "Right. 16 / 4 = 4, so head h reads numbers 4h to 4h+3 of each vector and runs scores, softmax and blend on those alone."],
      ["One number each of the query, key and value.", "No: that would need 16 heads. With 4 heads, each one gets 16 / 4 = 4 numbers."],
      ["A new 16-number vector from an extra embedding table.", "No: there is no extra table. The heads only cut the existing q, k and v into slices."],
    ],
    answer: 1,
  },
  {
    id: "extend",
    text: "Start from out = [1, 2]. What is len(out) after out.append([3, 4])? And if you had called out.extend([3, 4]) instead?",
    choices: [
      ["4, and 4", "No: append adds its argument as one item, so the list [3, 4] becomes a single third element."],
      ["3, and 4", "Right. append puts the whole list in as one item: [1, 2, [3, 4]] has 3 items. extend adds 3 and 4 one by one: [1, 2, 3, 4]. That is why multi_head needs extend: four heads × four numbers = 16 numbers."],
      ["4, and 3", "The other way round: extend is the one that unpacks the list."],
      ["3, and 3", "extend adds each item of its argument separately, so it gives 4."],
    ],
    answer: 1,
  },
  {
    id: "why",
    text: "Why split attention into several heads instead of one big head over all 16 numbers?",
    choices: [
      ["It needs far fewer multiplications.", "No: the multiplications are the same (4 heads × 4 numbers = 16 numbers per dot product); only the softmaxes get smaller and more numerous."],
      ["Each head gets its own attention pattern, so a letter can look back for several things at once.", "Right. One head gives each letter one set of weights over the earlier positions; four heads give four, each computed from a different slice."],
      ["One head cannot work on vectors longer than 4 numbers.", "No: one head works on any length. The toggle in Watch shows exactly that: one head over all 16 numbers."],
      ["The heads' results are averaged, which removes noise.", "No: nothing is averaged. The four results are placed side by side and then mixed by attn_wo."],
    ],
    answer: 1,
  },
  {
    id: "wo",
    text: "What does attn_wo do?",
    choices: [
      ["It keeps the best head's result and drops the others.", "No: all four heads' numbers go in; none is dropped."],
      ["It scales the attention weights so that they add up to 1.", "No: the softmax already does that, inside each head."],
      ["It is a learned 16 × 16 matrix that mixes the glued-together heads, so every output number can use what any head found.", "Right. After extend, numbers 0–3 come only from head 1, 4–7 only from head 2, and so on; attn_wo (the output projection) blends them into one 16-number result."],
      ["It hides the letters that come later in the name.", "No: microgpt never sees later letters at all, because each position only has the keys and values computed so far."],
    ],
    answer: 2,
  },
];

export const QUIZ = QUESTIONS;
const mounted = new Map();

export function mount(root) {
  if (mounted.has(root)) return;
  const state = { off: null, blocks: [] };
  mounted.set(root, state);
  const list = el("ol", { class: "mgpt-quiz" });
  QUESTIONS.forEach((q, qi) => {
    const qid = uid("mgpt-q");
    const feedback = el("p", { class: "mgpt-quiz__feedback", "aria-live": "polite" });
    const buttons = q.choices.map(([text], ci) => {
      const button = el("button", { type: "button", class: "mgpt-quiz__choice", "aria-pressed": "false", "data-choice": String(ci) },
        el("span", { class: "mgpt-quiz__letter", "aria-hidden": "true", text: `${"ABCD"[ci]}` }), el("span", { text }));
      button.addEventListener("click", () => {
        const progress = getProgress();
        updateProgress({ quiz: { ...progress.quiz, [q.id]: { choice: ci, correct: ci === q.answer } } }, "quiz");
      });
      return button;
    });
    const block = el("li", { class: "mgpt-quiz__question", "data-question": q.id },
      el("p", { id: qid, class: "mgpt-quiz__text", text: q.text }),
      el("div", { class: "mgpt-quiz__choices", role: "group", "aria-labelledby": qid }, ...buttons),
      feedback);
    state.blocks.push({ q, buttons, feedback, block });
    list.append(block);
    void qi;
  });
  root.replaceChildren(list);
  const render = (progress) => {
    for (const { q, buttons, feedback, block } of state.blocks) {
      const answer = progress.quiz && progress.quiz[q.id];
      buttons.forEach((b, ci) => {
        const chosen = Boolean(answer) && answer.choice === ci;
        b.setAttribute("aria-pressed", String(chosen));
        b.dataset.state = chosen ? (ci === q.answer ? "right" : "wrong") : "";
      });
      if (answer && Number.isInteger(answer.choice) && q.choices[answer.choice]) {
        const right = answer.choice === q.answer;
        feedback.textContent = `${right ? "✓ " : "✗ Not quite. "}${q.choices[answer.choice][1]}`;
        feedback.dataset.correct = String(right);
        block.dataset.answered = right ? "right" : "wrong";
      } else {
        feedback.textContent = "";
        delete feedback.dataset.correct;
        delete block.dataset.answered;
      }
    }
  };
  render(getProgress());
  state.off = onProgress((progress) => render(progress));
}

export function dispose(root) {
  const state = mounted.get(root);
  if (state && state.off) state.off();
  mounted.delete(root);
}
