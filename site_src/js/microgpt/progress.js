// The learner's progress on the microgpt page, kept in localStorage, and the
// small "microgpt-progress" widget that summarises it and clears it.
//
// Stored under one key as JSON: {version, code, solved, failedChecks, revealed,
// solvedCode}: revealed is true once the learner asked for the solution;
// solvedCode is the code that passed, which "Unlocked" shows beside microgpt.py.
// (The check-yourself questions are the lesson's quiz, which keeps no answers.)
// Widgets on the page read it with getProgress(), change it with
// updateProgress(patch) and hear about changes through onProgress(fn).

import { el } from "../runtime/dom.js";
import { claim, release } from "../runtime/widget.js";

export const STORAGE_KEY = "mha-microgpt-progress";
const VERSION = 1;
const events = new EventTarget();

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

let memory = null;

// What is stored now (another tab may have written it), or null.
function readStored() {
  const store = storage();
  if (!store) return null;
  try {
    const saved = JSON.parse(store.getItem(STORAGE_KEY) || "null");
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

export function getProgress() {
  if (!memory) memory = readStored() || blank();
  return memory;
}

function persist(reason) {
  const store = storage();
  memory = merged(memory, readStored());
  if (store) {
    try {
      store.setItem(STORAGE_KEY, JSON.stringify(memory));
    } catch (err) {
      // full or blocked: keep it in memory
    }
  }
  events.dispatchEvent(new CustomEvent("change", { detail: { progress: memory, reason } }));
}

export function updateProgress(patch, reason = "update") {
  memory = { ...getProgress(), ...patch };
  persist(reason);
  return memory;
}

// Another tab wrote (or cleared) the progress: this tab takes it in, keeping its own code.
if (typeof window !== "undefined" && window.addEventListener) {
  window.addEventListener("storage", (event) => {
    if (!memory || (event.key !== STORAGE_KEY && event.key !== null)) return;
    const stored = readStored();
    memory = stored ? merged(memory, stored) : { ...blank(), code: memory.code };
    events.dispatchEvent(new CustomEvent("change", { detail: { progress: memory, reason: "other-tab" } }));
  });
}

export function clearProgress() {
  const store = storage();
  if (store) {
    try {
      store.removeItem(STORAGE_KEY);
    } catch (err) {
      // ignore
    }
  }
  memory = blank();
  events.dispatchEvent(new CustomEvent("change", { detail: { progress: memory, reason: "clear" } }));
}

// Subscribe; returns a function that unsubscribes.
export function onProgress(fn) {
  const listener = (event) => fn(event.detail.progress, event.detail.reason);
  events.addEventListener("change", listener);
  return () => events.removeEventListener("change", listener);
}

const roots = new Map();

export function mount(root) {
  const entry = claim(roots, root, { off: null });
  if (!entry) return;
  const summary = el("p", { class: "mgpt-progress__summary", "aria-live": "polite" });
  const button = el("button", { type: "button", class: "md-button", text: "Clear my progress", onclick: () => clearProgress() });
  const note = el("p", { class: "mgpt-progress__note",
    text: "Your code and the exercise result are saved in this browser only (localStorage); nothing is sent anywhere." });
  const render = (progress) => {
    const result = progress.solved ? "solved" : progress.revealed ? "solution shown, not solved yet" : "not solved yet";
    summary.textContent = `Exercise: ${result}. ` +
      `Code: ${progress.code === null ? "starter code" : "your own version saved"}.`;
  };
  root.replaceChildren(summary, button, note);
  render(getProgress());
  const off = onProgress((progress, reason) => {
    render(progress);
    if (reason === "clear") summary.textContent += " Progress cleared.";
  });
  entry.off = off;
}

export function dispose(root) {
  const entry = release(roots, root);
  if (entry && entry.off) entry.off();
}
