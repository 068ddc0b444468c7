// What one model's column shows: its card (size, perplexity), and of a run the
// opening as read, the generated tokens (buttons that open the inspector), the
// timing and the saved continuation of the preset. Tokens are joined the way the saved text is
// (runtime/tokenizer.js's detokenize): "radio. he", not "radio . he".

import { el } from "../runtime/dom.js";
import { detokenize } from "../runtime/tokenizer.js";
import { formatBytes, formatMs, tokenText } from "./format.js";

const SHOWN_PROMPT_TOKENS = 40;

// The card under the model's name: its size, the test perplexity of the very
// checkpoint running here (the preset's seed) and the mean ± SD over the
// seeds, all from the evidence.
export function showFacts(col, m, evidence, seed) {
  const size = [];
  if (Number.isFinite(m.parameters)) size.push(`${(m.parameters / 1e6).toFixed(2)} M parameters`);
  if (Number.isFinite(m.bytes)) size.push(formatBytes(m.bytes));
  const quality = [];
  const run = (evidence?.runs || []).find((r) => r.model === m.name && r.seed === seed);
  if (run && Number.isFinite(run.test_perplexity)) {
    quality.push(`Test perplexity ${run.test_perplexity.toFixed(2)} (this seed-${run.seed} model)`);
  }
  const agg = evidence?.aggregates?.[m.name];
  if (agg && Number.isFinite(agg.perplexity_mean)) {
    const n = agg.runs ?? agg.seeds?.length;
    const sd = Number.isFinite(agg.perplexity_sd) ? ` ± ${agg.perplexity_sd.toFixed(1)}` : "";
    quality.push(`${agg.perplexity_mean.toFixed(1)}${sd} over ${n ?? "all"} seeds (mean${sd ? " ± SD" : ""})`);
  }
  col.facts.replaceChildren(
    ...[size, quality].filter((p) => p.length).map((p) => el("span", { class: "mha-col__fact", text: p.join("; ") })),
  );
}

// "" when tok is written straight after prev (closing punctuation, after "("), else " ".
export function separator(prev, tok) {
  if (prev === null || prev === undefined) return "";
  return detokenize([prev, tok]) === prev + tok ? "" : " ";
}

// The opening as the learner wrote it (tokenized); words outside the
// vocabulary are marked, since the models read them as unknown.
export function showPrompt(col, promptTokens, vocab) {
  const cut = Math.max(0, promptTokens.length - SHOWN_PROMPT_TOKENS);
  const prompt = el("span", { class: "mha-col__prompt" });
  if (cut) prompt.append(el("span", { class: "mha-token--cut", text: `… (${cut} earlier tokens) ` }));
  let prev = null;
  for (const tok of promptTokens.slice(cut)) {
    prompt.append(
      separator(prev, tok),
      vocab.stoi.has(tok)
        ? tok
        : el("span", {
            class: "mha-token--unk",
            title: "outside the vocabulary: the models read it as unknown",
            text: tok,
          }),
    );
    prev = tok;
  }
  col.lastToken = prev;
  col.live.replaceChildren(prompt);
  col.timing.textContent = "";
}

// One generated token, as a button that opens the inspector for its step.
export function showToken(col, step, vocab, onSelect) {
  if (step.eos) {
    col.live.append(el("span", { class: "mha-token mha-token--end", text: " [end of story]" }));
    return;
  }
  const tok = vocab.itos[step.id];
  const text = tokenText(vocab, step.id);
  col.live.append(
    separator(col.lastToken, tok),
    el("button", {
      type: "button",
      class: "mha-token",
      "data-step": step.index,
      text,
      "aria-label": `${text}: generated token ${step.index + 1} of ${col.label}; show what the models saw`,
      onclick: () => onSelect(col.name, step.index),
    }),
  );
  col.lastToken = tok;
}

export function showTiming(col, { steps, totalMs, endedWithEos }, finished) {
  const n = steps;
  if (!n) return;
  col.timing.textContent = finished
    ? `${n} step${n === 1 ? "" : "s"} · ${formatMs(totalMs / n)} per token · ${formatMs(totalMs)} in all` +
      (endedWithEos ? " · ended the story" : "")
    : `${n} tokens · ${formatMs(totalMs / n)} per token`;
}

// Whether a run's result for one model is the saved continuation, token for token, ending alike.
export function reproduces(result, saved) {
  return (
    Boolean(result) &&
    JSON.stringify(result.ids) === JSON.stringify(saved.ids) &&
    result.ended_with_eos === Boolean(saved.ended_with_eos)
  );
}

// The continuation saved with the preset (null: none shown), and whether a run
// reproduced it. match: true/false after a run with the preset's settings,
// "other" after the preset opening with other settings, "pending" before a run.
export function showSaved(col, { saved, vocab, maxNewTokens, seed, match }) {
  col.saved.replaceChildren();
  if (!saved) return;
  const savedTokens = saved.tokens || vocab.decode(saved.ids || []);
  const box = el(
    "div",
    { class: "mha-saved" },
    el("h3", { class: "mha-col__label", text: `Saved, seed-${seed} checkpoint (greedy, ${maxNewTokens} tokens)` }),
    el("p", {
      class: "mha-saved__text",
      text: detokenize(savedTokens) + (saved.ended_with_eos ? " [end of story]" : ""),
    }),
  );
  if (match === true || match === false) {
    box.append(
      el("p", {
        class: `mha-match mha-match--${match ? "yes" : "no"}`,
        "data-match": match ? "yes" : "no",
        text: match
          ? "✓ live = saved: this device reproduced the saved output exactly."
          : "✗ live ≠ saved: the live output differs from the saved one.",
      }),
    );
  } else if (match === "pending") {
    box.append(
      el("p", {
        class: "mha-match mha-match--na",
        "data-match": "pending",
        text: `Press Generate with temperature 0 and ${maxNewTokens} new tokens to check whether this device reproduces it.`,
      }),
    );
  } else {
    box.append(
      el("p", {
        class: "mha-match mha-match--na",
        "data-match": "na",
        text: `The saved output belongs to greedy decoding (temperature 0) and ${maxNewTokens} tokens, so this run is not compared with it.`,
      }),
    );
  }
  col.saved.append(box);
}
