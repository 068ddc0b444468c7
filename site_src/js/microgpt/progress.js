// The learner's progress on the microgpt page, kept in localStorage, and the
// small "microgpt-progress" widget that summarises it and clears it.
//
// Stored under one key as JSON: {version, code, solved, failedChecks, quiz}.
// Widgets on the page read it with getProgress(), change it with
// updateProgress(patch) and hear about changes through onProgress(fn).

import { el } from "../runtime/dom.js";
import { QUIZ } from "./quiz.js"; // read only inside functions: quiz.js imports this module too

export const STORAGE_KEY = "mha-microgpt-progress";
const VERSION = 1;
const events = new EventTarget();

function blank() {
  return { version: VERSION, code: null, solved: false, failedChecks: 0, quiz: {} };
}

function storage() {
  try {
    return window.localStorage;
  } catch (err) {
    return null; // blocked (e.g. some private modes): progress lives only in this page
  }
}

let memory = null;

export function getProgress() {
  if (memory) return memory;
  memory = blank();
  const store = storage();
  if (store) {
    try {
      const saved = JSON.parse(store.getItem(STORAGE_KEY) || "null");
      if (saved && saved.version === VERSION) {
        memory = {
          ...memory,
          code: typeof saved.code === "string" ? saved.code : null,
          solved: saved.solved === true,
          failedChecks: Number.isInteger(saved.failedChecks) ? saved.failedChecks : 0,
          quiz: savedQuiz(saved.quiz),
        };
      }
    } catch (err) {
      // unreadable: start afresh
    }
  }
  return memory;
}

// The saved quiz answers that belong to this page's questions: an unknown
// question, a choice that is not one of its answers, or a "correct" flag that
// disagrees with the question is dropped; whether an answer is right is
// decided here again, never read from storage.
export function savedQuiz(saved) {
  const quiz = {};
  if (!saved || typeof saved !== "object" || Array.isArray(saved)) return quiz;
  for (const q of QUIZ) {
    if (!Object.hasOwn(saved, q.id)) continue;
    const answer = saved[q.id];
    const choice = answer && typeof answer === "object" ? answer.choice : undefined;
    if (!Number.isInteger(choice) || choice < 0 || choice >= q.choices.length) continue;
    quiz[q.id] = { choice, correct: choice === q.answer };
  }
  return quiz;
}

function persist(reason) {
  const store = storage();
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
  if (roots.has(root)) return;
  const summary = el("p", { class: "mgpt-progress__summary", "aria-live": "polite" });
  const button = el("button", { type: "button", class: "md-button", text: "Clear my progress", onclick: () => clearProgress() });
  const note = el("p", { class: "mgpt-progress__note",
    text: "Your code, the exercise result and your quiz answers are saved in this browser only (localStorage); nothing is sent anywhere." });
  const render = (progress) => {
    const quiz = savedQuiz(progress.quiz);
    const answered = Object.keys(quiz).length;
    const right = Object.values(quiz).filter((a) => a.correct).length;
    summary.textContent = `Exercise: ${progress.solved ? "solved" : "not solved yet"}. ` +
      `Quiz: ${right} of ${QUIZ.length} right (${answered} answered). ` +
      `Code: ${progress.code === null ? "starter code" : "your own version saved"}.`;
  };
  root.replaceChildren(summary, button, note);
  render(getProgress());
  const off = onProgress((progress, reason) => {
    render(progress);
    if (reason === "clear") summary.textContent += " Progress cleared.";
  });
  roots.set(root, off);
}

export function dispose(root) {
  const off = roots.get(root);
  if (off) off();
  roots.delete(root);
}
