// The context window, in one place: a model reads the last T tokens of a story, left-padded
// (export/windows.py's context_window cuts the training windows the same way). Generation,
// the compare page, the stepper, the home page's live model and the build exercise all crop
// through here.

// T, the model manifest's (the models were exported for it); vocab.json states it too.
export function contextLength(manifest, vocab) {
  return manifest.T ?? vocab.T;
}

// What is wrong with the context length the manifest and vocabulary give, or null.
export function contextProblem(manifest, vocab) {
  if (!Number.isInteger(vocab.T) || vocab.T < 1) return "vocab.json gives no context length T";
  if (manifest.T !== undefined && manifest.T !== vocab.T)
    return `the manifest says T = ${manifest.T}, vocab.json says T = ${vocab.T}`;
  return null;
}

// The last T items (all of them when there are fewer).
export function lastT(items, T) {
  return items.slice(Math.max(0, items.length - T));
}

// How many items fall off the front.
export function dropped(items, T) {
  return items.length - lastT(items, T).length;
}

// The last T items, left-padded with `pad` to exactly T (ids with PAD, words with null).
export function contextWindow(items, T, pad) {
  const visible = lastT(items, T);
  return [...new Array(T - visible.length).fill(pad), ...visible];
}
