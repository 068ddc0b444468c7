// The learner's progress on the microgpt page, kept in localStorage, and the
// small "microgpt-progress" widget that summarises it and clears it.
//
// Each level of the exercise keeps its own record under its own key, as JSON:
// {version, code, solved, failedChecks, revealed, solvedCode}: revealed is
// true once the learner asked for the solution; solvedCode is the code that
// passed, which "Unlocked" shows beside microgpt.py. Level 1 (the two blanks)
// is the module's own getProgress/updateProgress/onProgress; Level 2 (the
// whole function) is `level2`, with the same methods.
// (The check-yourself questions are the lesson's quiz, which keeps no answers.)

import { el } from "../runtime/dom.js";
import { claim, release } from "../runtime/widget.js";

export const STORAGE_KEY = "mha-microgpt-progress";
export const LEVEL2_KEY = "mha-microgpt-level2-progress";
const VERSION = 1;

function blank() {
  return { version: VERSION, code: null, solved: false, failedChecks: 0, revealed: false, solvedCode: null };
}

function storage() {
  try {
    return window.localStorage;
  } catch (err) {
    return null; // blocked (e.g. some private modes): progress lives only in this page
  }
}

// This tab's progress joined with what another tab stored: solved, revealed
// and the solved code, once there, stay (only "Clear my progress" removes
// them); the code in the editor is this tab's own.
function merged(mine, stored) {
  if (!stored) return mine;
  return {
    ...mine,
    solved: mine.solved || stored.solved,
    revealed: mine.revealed || stored.revealed,
    failedChecks: Math.max(mine.failedChecks, stored.failedChecks),
    solvedCode: mine.solvedCode ?? stored.solvedCode,
  };
}

// One level's record: {getProgress, updateProgress, clearProgress, onProgress}.
function progressStore(key) {
  const events = new EventTarget();
  let memory = null;

  // What is stored now (another tab may have written it), or null.
  const readStored = () => {
    const store = storage();
    if (!store) return null;
    try {
      const saved = JSON.parse(store.getItem(key) || "null");
      if (!saved || saved.version !== VERSION) return null;
      return {
        ...blank(),
        code: typeof saved.code === "string" ? saved.code : null,
        solved: saved.solved === true,
        failedChecks: Number.isInteger(saved.failedChecks) ? saved.failedChecks : 0,
        revealed: saved.revealed === true,
        solvedCode: typeof saved.solvedCode === "string" ? saved.solvedCode : null,
      };
    } catch (err) {
      return null; // unreadable: start afresh
    }
  };
  const tell = (reason) => events.dispatchEvent(new CustomEvent("change", { detail: { progress: memory, reason } }));
  const getProgress = () => {
    if (!memory) memory = readStored() || blank();
    return memory;
  };
  const updateProgress = (patch, reason = "update") => {
    memory = merged({ ...getProgress(), ...patch }, readStored());
    const store = storage();
    if (store) {
      try {
        store.setItem(key, JSON.stringify(memory));
      } catch (err) {
        // full or blocked: keep it in memory
      }
    }
    tell(reason);
    return memory;
  };
  const clearProgress = () => {
    const store = storage();
    if (store) {
      try {
        store.removeItem(key);
      } catch (err) {
        // ignore
      }
    }
    memory = blank();
    tell("clear");
  };
  // Subscribe; returns a function that unsubscribes.
  const onProgress = (fn) => {
    const listener = (event) => fn(event.detail.progress, event.detail.reason);
    events.addEventListener("change", listener);
    return () => events.removeEventListener("change", listener);
  };
  // Another tab wrote (or cleared) the progress: this tab takes it in, keeping its own code.
  if (typeof window !== "undefined" && window.addEventListener) {
    window.addEventListener("storage", (event) => {
      if (!memory || (event.key !== key && event.key !== null)) return;
      const stored = readStored();
      memory = stored ? merged(memory, stored) : { ...blank(), code: memory.code };
      tell("other-tab");
    });
  }
  return { getProgress, updateProgress, clearProgress, onProgress };
}

const level1 = progressStore(STORAGE_KEY);
export const level2 = progressStore(LEVEL2_KEY);
export const { getProgress, updateProgress, onProgress } = level1;

// "Clear my progress": both levels.
export function clearProgress() {
  level1.clearProgress();
  level2.clearProgress();
}

const roots = new Map();

export function mount(root) {
  const entry = claim(roots, root, { off: null });
  if (!entry) return;
  const summary = el("p", { class: "mgpt-progress__summary", "aria-live": "polite" });
  const button = el("button", {
    type: "button",
    class: "md-button",
    text: "Clear my progress",
    onclick: () => clearProgress(),
  });
  const note = el("p", {
    class: "mgpt-progress__note",
    text: "Your code and the exercise results are saved in this browser only (localStorage); nothing is sent anywhere.",
  });
  const result = (progress) =>
    progress.solved ? "solved" : progress.revealed ? "solution shown, not solved yet" : "not solved yet";
  const render = () => {
    const one = getProgress();
    const two = level2.getProgress();
    summary.textContent =
      `Exercise: ${result(one)}. ` +
      `Code: ${one.code === null ? "starter code" : "your own version saved"}. ` +
      `Level 2 (the whole multi_head): ${result(two)}` +
      (two.code === null ? "." : ", your own version saved.");
  };
  root.replaceChildren(summary, button, note);
  render();
  const onChange = (progress, reason) => {
    render();
    if (reason === "clear") summary.textContent += " Progress cleared.";
  };
  const offs = [onProgress(onChange), level2.onProgress(onChange)];
  entry.off = () => offs.forEach((off) => off());
}

export function dispose(root) {
  const entry = release(roots, root);
  if (entry && entry.off) entry.off();
}
