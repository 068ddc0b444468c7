// Predict, then reveal (page 4's stepper, at the softmax step): before the weights A show,
// the learner guesses, for each head, the source it weighs most at the final slot; the
// reveal says for each head whether the guess was right and by how much it missed.

import { el, uid } from "../runtime/dom.js";
import { f2 } from "./stepper_format.js";
import { heaviest } from "./stepper_steps_attention.js";

// state: {revealed, picks: one source index or null per head}, kept by the stepper across
// redraws; redraw() draws the step again from it.
export function showPredict(host, r, state, redraw) {
  const box = el("div", { class: "mha-st__guess" });
  for (let h = 0; h < r.H; h++) {
    const sid = uid("mha-st-pick");
    const select = el(
      "select",
      {
        id: sid,
        disabled: state.revealed,
        onchange: () => {
          state.picks[h] = select.value === "" ? null : Number(select.value);
        },
      },
      el("option", { value: "", text: "choose a source" }),
      r.labels.map((label, i) =>
        el("option", { value: String(i), text: `${label} (slot ${r.real[i]})`, selected: state.picks[h] === i }),
      ),
    );
    box.append(
      el(
        "span",
        { class: `mha-st__pick mha-st__pick--h${h}` },
        el("label", { for: sid, text: r.H === 1 ? "The head weighs most" : `Head ${h + 1} weighs most` }),
        select,
      ),
    );
  }
  if (!state.revealed) {
    const reveal = el("button", {
      type: "button",
      class: "md-button md-button--primary",
      text: "Reveal the weights",
      onclick: () => {
        state.revealed = true;
        redraw();
        host.querySelector(".mha-st__verdicts")?.focus();
      },
    });
    box.append(reveal);
    host.append(el("p", { class: "mha-st__ask", text: "Your guess (the last row of A, at the final slot):" }), box);
    return;
  }
  const verdicts = el("ul", { class: "mha-st__verdicts", tabindex: "-1" });
  for (let h = 0; h < r.H; h++) {
    const top = heaviest(r, h);
    const pick = state.picks[h];
    const who = r.H === 1 ? "The head" : `Head ${h + 1}`;
    let text;
    if (pick === null) text = `${who}: no guess; it weighs “${top.label}” most (${f2(top.w)}).`;
    else if (pick === top.index) text = `${who}: right, “${top.label}” gets the most weight (${f2(top.w)}).`;
    else {
      const w = r.t.A(h, r.final, r.real[pick]);
      // the gap of the two shown (rounded) weights, so the sentence adds up as printed
      const gap = (Math.round(top.w * 100) - Math.round(w * 100)) / 100;
      text = `${who}: you picked “${r.labels[pick]}”, which gets ${f2(w)}; the heaviest is “${top.label}” with ${f2(top.w)} (${f2(gap)} more).`;
    }
    const kind = pick === null ? "none" : pick === top.index ? "right" : "wrong";
    verdicts.append(
      el("li", {
        class: `mha-st__verdict mha-st__verdict--${kind}`,
        "data-head": String(h),
        "data-verdict": kind,
        text,
      }),
    );
  }
  host.append(box, verdicts);
}
