// The opening as the models will read it: how much of it is used, how it
// splits into tokens, which words they read as unknown and how many ids fit
// the window. The learner sees this under the box while typing, and again as
// the run's notes, so nothing about the input is cut or changed unsaid.

import { contextWindow } from "../runtime/context.js";
import { tokenize } from "../runtime/tokenizer.js";
import { tokenText } from "./format.js";

// Far more than any window holds: only a huge paste is cut, before it is tokenized.
const MAX_PROMPT_CHARS = 100000;

// The line under the opening's box.
export function describeOpening(text, vocab, T) {
  if (text.length > MAX_PROMPT_CHARS) {
    return `The opening has ${text.length.toLocaleString()} characters; only the first ${MAX_PROMPT_CHARS.toLocaleString()} are used (and the models read just the last ${T} tokens of those).`;
  }
  const tokens = tokenize(text);
  const unknown = tokens.filter((t) => !vocab.stoi.has(t)).length;
  const parts = [];
  if (!tokens.length) parts.push("No tokens: the models will start a story from the beginning marker.");
  else parts.push(`${tokens.length} token${tokens.length === 1 ? "" : "s"}`);
  if (unknown) parts.push(`${unknown} outside the vocabulary (read as unknown)`);
  if (tokens.length + 1 > T) parts.push(`the models read only the last ${T} ids`);
  return parts.join("; ") + (tokens.length ? "." : "");
}

// What a run reads: {text: the part used, tokens, notes: sentences for the
// message line, words: how each slot of the history reads}.
export function readOpening(typed, vocab, T) {
  let text = typed;
  const notes = [];
  if (text.length > MAX_PROMPT_CHARS) {
    text = text.slice(0, MAX_PROMPT_CHARS);
    notes.push(`Only the first ${MAX_PROMPT_CHARS.toLocaleString()} characters were used.`);
  }
  const tokens = tokenize(text);
  if (!tokens.length) notes.push("The opening has no words, so each model starts a story from scratch.");
  if (tokens.length + 1 > T)
    notes.push(`The opening has ${tokens.length} tokens; each model reads only the last ${T} ids.`);
  // BOS, then the words as typed (an unknown word keeps its spelling for the
  // inspector); the new tokens follow in the inspector's window.
  const words = [
    { text: tokenText(vocab, vocab.special.BOS), unknown: false },
    ...tokens.map((tok) => ({ text: tok, unknown: !vocab.stoi.has(tok) })),
  ];
  return { text, tokens, notes, words };
}

// The words in the window of one step, slot by slot (null for padding): the
// opening's words, then the tokens generated before the step.
export function stepWords(words, ids, vocab, T) {
  const full = [...words, ...ids.map((id) => ({ text: tokenText(vocab, id), unknown: false }))];
  return contextWindow(full, T, null);
}
