// What every widget does around its own work (main.js mounts and disposes them; a test,
// tests/site_build/test_widget_contract.py, holds every widget module to this): it takes its
// slot (keeping what the slot held, so dispose can put it back when Material's instant
// navigation reuses the page), it says a file that did not come in one sentence, and on
// dispose it gives the slot back. A widget keeps its per-slot state in the entry, nowhere else.
//
//   const state = new Map();
//   export async function mount(root) { const entry = claim(state, root); if (!entry) return; ... }
//   export function dispose(root) { release(state, root, ["ready", "done"]); }

import { el } from "./dom.js";

// An error's message for a sentence (an Error's message, or whatever was thrown).
export function errorText(err) {
  return err && err.message ? err.message : String(err);
}

// The slot's entry: {saved, disposed: false, ...extra}, made on the first mount; null when the
// widget already holds it. copy: keep copies of what the slot held, for a widget that changes
// those very nodes (the quiz turns the page's own options into buttons).
export function claim(state, root, extra = {}, { copy = false } = {}) {
  if (state.has(root)) return null;
  const saved = [...root.childNodes].map((node) => (copy ? node.cloneNode(true) : node));
  const entry = { saved, disposed: false, ...extra };
  state.set(root, entry);
  return entry;
}

// The slot as it was before the widget, and the widget's data-* flags removed; the entry (now
// marked disposed, so work still under way can see it was left), or null.
export function release(state, root, flags = ["ready"]) {
  const entry = state.get(root);
  if (!entry) return null;
  state.delete(root);
  entry.disposed = true;
  root.replaceChildren(...entry.saved);
  for (const flag of flags) delete root.dataset[flag];
  return entry;
}

// Whether this entry still holds its slot on the page (not released, not left).
export function holds(state, root, entry) {
  return state.get(root) === entry && root.isConnected;
}

// claim, then wait for the widget's data: {entry, data}, or null when the slot was already held,
// when it was released or left while the data loaded, or when load failed: then the claim is
// dropped (a later mount tries again) and fail(root, err) says so in the slot.
export async function claimLoaded(state, root, load, { extra = {}, fail }) {
  const entry = claim(state, root, extra);
  if (!entry) return null;
  let data;
  try {
    data = await load();
  } catch (err) {
    if (state.get(root) === entry) state.delete(root);
    fail(root, err);
    return null;
  }
  return holds(state, root, entry) ? { entry, data } : null;
}

// "<what>: <the error>. Reload the page to try again." as the page's error panel (announced at once).
export function failedPanel(what, err) {
  return el("p", {
    class: "mha-panel mha-panel--error",
    role: "alert",
    text: `${what}: ${errorText(err)}. Reload the page to try again.`,
  });
}
