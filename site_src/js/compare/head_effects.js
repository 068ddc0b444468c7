// What each head did to one prediction: the probability of the model's guess
// with all heads and with each head switched off alone, as bars on one scale
// (0 to a little above the largest, so 20 % is never a sliver). The same
// markup as page 5's build-time figure (site_src/hooks/page_macros/running.py);
// the head colours are the palette's CSS variables (wasm_assets/palette.css).

import { el } from "../runtime/dom.js";
import { headColourVar } from "../runtime/palette.js";
import { probabilities, topK } from "../runtime/generate.js";
import { tokenText } from "./format.js";

function percent(p) {
  return `${(p * 100).toFixed(1)}%`;
}

// runner: a ModelRunner with heads; window: the step's ids; full: its output with every head on.
// Resolves to {guess, pAll, without: [{head, p, guess}]} (guess: the most probable id).
export async function measureHeadEffects(runner, window, full, excluded) {
  const pAll = probabilities(full.logits, excluded);
  const [guess] = topK(pAll, 1);
  const without = [];
  for (let h = 0; h < runner.heads; h++) {
    const mask = Array.from({ length: runner.heads }, (_, k) => (k === h ? 0 : 1));
    const p = probabilities((await runner.run(window, mask)).logits, excluded);
    const [instead] = topK(p, 1);
    without.push({ head: h + 1, p: p[guess], guess: instead });
  }
  return { guess, pAll: pAll[guess], without };
}

// The figure for measureHeadEffects' result; context: the text the model read (optional).
export function headEffectBars(effects, vocab, context = "") {
  const word = tokenText(vocab, effects.guess);
  const top = Math.max(effects.pAll, ...effects.without.map((w) => w.p)) * 1.1;
  const row = (label, p, style, extra) =>
    el(
      "li",
      { style },
      el("span", { class: "mha-effect__label", text: label }),
      el(
        "span",
        { class: "mha-effect__track", "aria-hidden": "true" },
        el("span", { class: "mha-effect__bar", style: `width:${((100 * p) / top).toFixed(1)}%` }),
      ),
      el("span", { class: "mha-effect__p", text: percent(p) }),
      extra,
    );
  const changed = effects.without.filter((w) => w.guess !== effects.guess);
  const notes = changed.map((w) => `without head ${w.head} it guesses “${tokenText(vocab, w.guess)}” instead`);
  return el(
    "figure",
    { class: "mha-effect", "data-guess": effects.guess },
    el("p", {
      class: "mha-effect__title",
      text: context ? `Probability of “${word}” after “${context}”` : `Probability of “${word}”`,
    }),
    el(
      "ol",
      { class: "mha-effect__bars" },
      row("all heads", effects.pAll, null),
      effects.without.map((w) => row(`without head ${w.head}`, w.p, `--head:${headColourVar(w.head - 1)}`)),
    ),
    el("figcaption", {
      text:
        `What each head did to this prediction: the probability of the model's guess “${word}” with all heads and ` +
        "with one head switched off (nothing retrained), on one scale from 0 to a little above the largest." +
        (notes.length
          ? ` W${notes.join("; ").slice(1)}.`
          : " Switching off any one head alone leaves the guess as it is."),
    }),
  );
}
