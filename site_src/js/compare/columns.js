// What one model's column shows of a run: the opening as read, the generated
// tokens (buttons that open the inspector), the timing and the saved
// continuation of the preset.

import { el } from "../runtime/dom.js";
import { detokenize } from "../runtime/tokenizer.js";
import { formatMs, tokenText } from "./format.js";

const SHOWN_PROMPT_TOKENS = 40;

// The opening as the learner wrote it (tokenized); words outside the
// vocabulary are marked, since the models read them as unknown.
export function showPrompt(col, promptTokens, vocab) {
  const cut = Math.max(0, promptTokens.length - SHOWN_PROMPT_TOKENS);
  const prompt = el("span", { class: "mha-col__prompt" });
  if (cut) prompt.append(el("span", { class: "mha-token--cut", text: `… (${cut} earlier tokens) ` }));
  promptTokens.slice(cut).forEach((tok, i) => {
    if (i) prompt.append(" ");
    prompt.append(vocab.stoi.has(tok)
      ? tok
      : el("span", { class: "mha-token--unk", title: "outside the vocabulary: the models read it as unknown", text: tok }));
  });
  col.live.replaceChildren(prompt);
  col.timing.textContent = "";
  col.saved.replaceChildren();
}

// One generated token, as a button that opens the inspector for its step.
export function showToken(col, step, vocab, onSelect) {
  if (step.eos) {
    col.live.append(el("span", { class: "mha-token mha-token--end", text: " [end of story]" }));
    return;
  }
  const text = tokenText(vocab, step.id);
  col.live.append(" ", el("button", {
    type: "button", class: "mha-token", "data-step": step.index, text,
    "aria-label": `${text}: generated token ${step.index + 1} of ${col.label}; show what the models saw`,
    onclick: () => onSelect(col.name, step.index),
  }));
}

export function showTiming(col, { steps, totalMs, endedWithEos }, finished) {
  const n = steps;
  if (!n) return;
  col.timing.textContent = finished
    ? `${n} step${n === 1 ? "" : "s"} · ${formatMs(totalMs / n)} per token · ${formatMs(totalMs)} in all` +
      (endedWithEos ? " · ended the story" : "")
    : `${n} tokens · ${formatMs(totalMs / n)} per token`;
}

// The continuation saved with the preset, and whether this run reproduced it.
// match: true/false when the run used the preset's settings, null otherwise.
export function showSaved(col, { saved, vocab, maxNewTokens, seed, match }) {
  col.saved.replaceChildren();
  if (!saved) return;
  const savedTokens = saved.tokens || vocab.decode(saved.ids || []);
  const box = el("div", { class: "mha-saved" },
    el("h4", { class: "mha-col__label", text: `Saved, seed-${seed} checkpoint (greedy, ${maxNewTokens} tokens)` }),
    el("p", { class: "mha-saved__text", text: detokenize(savedTokens) + (saved.ended_with_eos ? " [end of story]" : "") }));
  if (match === true || match === false) {
    box.append(el("p", {
      class: `mha-match mha-match--${match ? "yes" : "no"}`, "data-match": match ? "yes" : "no",
      text: match ? "✓ live = saved: this device reproduced the saved output exactly." : "✗ live ≠ saved: the live output differs from the saved one.",
    }));
  } else {
    box.append(el("p", { class: "mha-match mha-match--na", "data-match": "na", text: `The saved output belongs to the preset opening with greedy decoding and ${maxNewTokens} tokens.` }));
  }
  col.saved.append(box);
}
