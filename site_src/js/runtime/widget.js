// What every lesson widget does around its own work: it takes its slot (keeping what the slot
// held, so dispose can put it back when Material's instant navigation reuses the page), it
// says a file that did not come in one sentence, and on dispose it gives the slot back.
//
//   const state = new Map();
//   export async function mount(root) { const entry = claim(state, root); if (!entry) return; ... }
//   export function dispose(root) { release(state, root, ["ready", "done"]); }

import { el } from "./dom.js";

// An error's message for a sentence (an Error's message, or whatever was thrown).
export function errorText(err) {
  return err && err.message ? err.message : String(err);
}

// The slot's entry: {saved, ...extra}, made on the first mount; null when the widget already holds it.
export function claim(state, root, extra = {}) {
  if (state.has(root)) return null;
  const entry = { saved: [...root.childNodes], ...extra };
  state.set(root, entry);
  return entry;
}

// The slot as it was before the widget, and the widget's data-* flags removed; the entry, or null.
export function release(state, root, flags = ["ready"]) {
  const entry = state.get(root);
  if (!entry) return null;
  state.delete(root);
  root.replaceChildren(...entry.saved);
  for (const flag of flags) delete root.dataset[flag];
  return entry;
}

// "<what>: <the error>. Reload the page to try again." as the page's error panel (announced at once).
export function failedPanel(what, err) {
  return el("p", { class: "mha-panel mha-panel--error", role: "alert",
    text: `${what}: ${errorText(err)}. Reload the page to try again.` });
}
