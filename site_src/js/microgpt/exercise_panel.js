// One level of the microgpt exercise: its editor, Run, Check, Reset and
// "Show solution", its verdict with the hint's tiers, its output, and its own
// saved progress. The microgpt page has two (exercise.js): Level 1, the two
// blanks, and Level 2, the whole multi_head, sharing one Python runner.
//
// The verdict comes from the numbers alone (verdict.js judge, against
// microgpt's answers this page computes); the worker explains only a wrong
// answer, after the numbers are in. How a level hands its inputs to the worker
// and asks for the explanation is the level's `ask` (below).

import { siteUrl } from "../runtime/assets.js";
import { el } from "../runtime/dom.js";
import { TIME_LIMIT_MS } from "./runner.js";
import { failMessage, judge } from "./verdict.js";

const SHOW_SOLUTION_AFTER = 3;
// How the checkers join a hint's tiers (SEP in pyodide/diagnosis.py and calls.py).
export const HINT_SEP = "\x1e";

// [idea, where, code] of a hint, or null for a message that is not one.
export function splitHint(message) {
  if (typeof message !== "string" || !message.includes(HINT_SEP)) return null;
  const [idea = "", where = "", code = ""] = message.split(HINT_SEP);
  return [idea, where, code];
}

// CodeMirror, bundled as a classic script that leaves its createEditor here
// (exercise/editor_entry.js): Chrome keeps such a script compiled with the
// service worker's copy, where a module script is compiled again each visit.
const EDITOR_GLOBAL = "mhaCodeMirror";
const EDITOR_PATH = "vendor/codemirror/editor.js";
let editorScript = null;

export function loadEditor() {
  if (globalThis[EDITOR_GLOBAL]) return Promise.resolve(globalThis[EDITOR_GLOBAL]); // (a page visited again)
  if (editorScript) return editorScript;
  editorScript = new Promise((resolve, reject) => {
    const script = document.createElement("script");
    script.src = siteUrl(EDITOR_PATH);
    script.onload = () =>
      globalThis[EDITOR_GLOBAL]
        ? resolve(globalThis[EDITOR_GLOBAL])
        : reject(new Error(`${EDITOR_PATH} did not define the editor`));
    script.onerror = () => reject(new Error(`${EDITOR_PATH} could not be loaded`));
    document.head.append(script);
  });
  editorScript.catch(() => {
    editorScript = null;
  });
  return editorScript;
}

// A plain textarea with the editor's interface, used if the bundle cannot load.
function textareaEditor({ parent, doc, label, describedBy, onChange }) {
  const area = el("textarea", {
    class: "mgpt-ex__fallback",
    spellcheck: false,
    "aria-label": label,
    "aria-describedby": describedBy,
  });
  area.value = doc;
  area.rows = 30;
  area.addEventListener("input", () => onChange && onChange(area.value));
  parent.append(area);
  return {
    getValue: () => area.value,
    setValue: (text) => {
      area.value = text;
      if (onChange) onChange(text);
    },
    focus: () => area.focus(),
    destroy: () => area.remove(),
  };
}

// A failed check's hint comes in three tiers: the idea in words first;
// "Where?" adds the line and what is wrong in it; only "Show me the code" shows code.
// The build exercise (build/exercise.js) words and styles them its own way (look).
export function hintTiers(
  block,
  [idea, where, code],
  { whereLabel = "Where?", ideaClass = "mgpt-verdict__text mgpt-verdict__idea", codeNeedsWhere = false } = {},
) {
  const whereText = el("p", { class: "mgpt-verdict__where", text: where, hidden: true });
  const codeText = el("pre", { class: "mgpt-verdict__code", text: code, hidden: true });
  const whereButton = el("button", {
    type: "button",
    class: "md-button mgpt-verdict__more",
    text: whereLabel,
    hidden: !where,
  });
  const codeButton = el("button", {
    type: "button",
    class: "md-button mgpt-verdict__more",
    text: "Show me the code",
    hidden: !code || (codeNeedsWhere && !where),
  });
  whereButton.addEventListener("click", () => {
    whereText.hidden = false;
    whereButton.hidden = true;
    block.dataset.tier = "where";
  });
  codeButton.addEventListener("click", () => {
    whereText.hidden = !where;
    whereButton.hidden = true;
    codeText.hidden = false;
    codeButton.hidden = true;
    block.dataset.tier = "code";
  });
  block.dataset.tier = "idea";
  return [
    el("p", { class: ideaClass, text: idea }),
    whereText,
    codeText,
    el("div", { class: "mgpt-verdict__buttons" }, whereButton, codeButton),
  ];
}

// level: {name, editorLabel, texts() -> Promise<{starter, solution}>, store (progress.js),
//   ask(doc) -> {inputs, explain(collected)}, passMessage(doc), passExtra() -> nodes, solutionNote}
// shared: {runner, cases: Promise<doc>, setOutputTarget(fn)}
export function exercisePanel(root, level, shared) {
  const { runner, cases } = shared;
  const { store } = level;
  const state = { editor: null, disposed: false, busy: false, ready: false };
  const uid = `mgpt-ex-${Math.random().toString(36).slice(2, 8)}`;
  const spinner = el("span", { class: "mgpt-spinner", "aria-hidden": "true" });
  const statusText = el("span", { text: "Starting Python (Pyodide)…" });
  const status = el(
    "div",
    { class: "mgpt-ex__status", role: "status", "aria-live": "polite", "data-phase": "loading" },
    spinner,
    statusText,
  );
  const help = el("p", {
    class: "mgpt-ex__help",
    id: `${uid}-help`,
    text:
      "Python editor. New lines are indented for you; Ctrl+] indents a line more and Ctrl+[ less " +
      "(⌘ on a Mac), and Tab moves on to the buttons. " +
      `Run and Check stop code that runs longer than ${TIME_LIMIT_MS / 1000} seconds.`,
  });
  const editorBox = el("div", { class: "mgpt-ex__editor" });
  const runButton = el("button", {
    type: "button",
    class: "md-button md-button--primary",
    text: "Run",
    disabled: true,
  });
  const checkButton = el("button", {
    type: "button",
    class: "md-button md-button--primary",
    text: "Check",
    disabled: true,
  });
  const resetButton = el("button", { type: "button", class: "md-button", text: "Reset" });
  const solutionButton = el("button", { type: "button", class: "md-button", text: "Show solution", hidden: true });
  const restartButton = el("button", { type: "button", class: "md-button", text: "Restart Python" });
  const buttons = el(
    "div",
    { class: "mgpt-ex__buttons" },
    runButton,
    checkButton,
    resetButton,
    solutionButton,
    restartButton,
  );
  const verdict = el("div", { class: "mgpt-ex__verdict", role: "status", "aria-live": "polite" });
  const outputLabel = el("p", { class: "mgpt-ex__label", id: `${uid}-out`, text: "Output" });
  const output = el("pre", {
    class: "mgpt-ex__output",
    tabIndex: 0,
    "aria-labelledby": `${uid}-out`,
    "aria-live": "polite",
  });
  output.textContent = "Press Run to see what your code prints.";
  root.replaceChildren(status, help, editorBox, buttons, verdict, outputLabel, output);

  let starter = "";
  let solution = "";
  // The code whose prints the output box holds (null: none). Check prints nothing, so it leaves
  // them in place and the box's label says whose they are.
  let printedBy = null;
  const showPrintsOf = (source) => {
    printedBy = source;
    outputLabel.textContent = "Output";
  };
  const setButtons = () => {
    runButton.disabled = checkButton.disabled = state.busy || !state.ready;
    solutionButton.hidden = !(store.getProgress().failedChecks >= SHOW_SOLUTION_AFTER && solution);
  };
  const plain = (text, kind = "") => {
    delete verdict.dataset.passed;
    verdict.className = `mgpt-ex__verdict${kind ? ` mha-panel ${kind}` : ""}`;
    verdict.textContent = text;
  };

  const showVerdict = (result) => {
    const passed = Boolean(result.passed);
    const tiers = splitHint(result.message);
    delete verdict.dataset.tier;
    verdict.replaceChildren(
      el("p", {
        class: "mgpt-verdict__title",
        text: passed ? "✓ Passed" : result.timedOut ? "⏱ Stopped" : "✗ Not yet",
      }),
      ...(tiers ? hintTiers(verdict, tiers) : [el("pre", { class: "mgpt-verdict__text", text: result.message })]),
      ...(passed && level.passExtra ? level.passExtra() : []),
      ...(result.notice ? [el("p", { class: "mgpt-ex__notice", text: result.notice })] : []),
    );
    verdict.dataset.passed = String(passed);
    verdict.className = `mgpt-ex__verdict mha-panel ${passed ? "mgpt-ex__verdict--pass" : "mha-panel--error"}`;
  };

  const onState = (s) => {
    status.dataset.phase = s.phase;
    statusText.textContent = s.text;
    state.ready = s.phase === "ready" || s.phase === "busy";
    setButtons();
  };
  const onOutput = (stream, text) => {
    if (stream === "stderr") output.append(el("span", { class: "mgpt-ex__stderr", text }));
    else output.append(text);
  };

  const code = () => (state.editor ? state.editor.getValue() : (store.getProgress().code ?? starter));

  async function doRun(source) {
    state.busy = true;
    setButtons();
    shared.setOutputTarget(onOutput);
    output.textContent = "";
    showPrintsOf(source);
    // A verdict belongs to the code it judged: after a Run the editor may hold other code.
    plain("Run only runs your code; press Check to test it.");
    try {
      const result = await runner.run(source);
      if (state.disposed) return result;
      if (result.error)
        output.append(
          el("span", { class: "mgpt-ex__stderr", text: (output.textContent ? "\n" : "") + result.error + "\n" }),
        );
      if (!output.textContent) output.textContent = "(Your code printed nothing.)";
      if (result.notice) output.append(el("span", { class: "mgpt-ex__notice", text: `\n${result.notice}\n` }));
      return result;
    } finally {
      state.busy = false;
      setButtons();
    }
  }

  async function doCheck(source, { fromEditor = true } = {}) {
    state.busy = true;
    setButtons();
    plain("Checking…");
    // Check runs the code quietly. What a Run of this same code printed stays, labelled as such; what
    // other code printed would sit under this code's verdict as if it were its own, so it goes.
    if (printedBy === source) outputLabel.textContent = "Output of your last Run (Check shows no prints)";
    else {
      showPrintsOf(null);
      output.textContent = "Check runs your code without showing its prints; press Run to see what this code prints.";
    }
    try {
      const doc = await cases;
      const { inputs, explain } = level.ask(doc);
      // The verdict comes from the numbers alone; the worker explains only a wrong answer.
      const result = await runner.check(source, inputs, explain);
      const decided = result.timedOut ? { passed: false } : judge(doc, result);
      const verdictResult = {
        passed: decided.passed,
        message: result.timedOut
          ? String(result.message)
          : decided.passed
            ? level.passMessage(doc)
            : failMessage(doc, result, decided),
        notice: String(result.notice || ""),
      };
      if (!state.disposed) {
        showVerdict({ ...verdictResult, timedOut: result.timedOut });
        const patch = fromEditor ? { code: source === starter ? null : source } : {};
        if (verdictResult.passed) store.updateProgress({ ...patch, solved: true, solvedCode: source }, "solved");
        else store.updateProgress({ ...patch, failedChecks: store.getProgress().failedChecks + 1 }, "failed");
      }
      const tiers = splitHint(verdictResult.message);
      const hint = tiers ? { idea: tiers[0], where: tiers[1], code: tiers[2] } : null;
      return { ...verdictResult, hint, timedOut: Boolean(result.timedOut) };
    } catch (err) {
      const message = `The check could not run: ${err.message}`;
      if (!state.disposed) showVerdict({ passed: false, message });
      return { passed: false, message, timedOut: false, notice: "" };
    } finally {
      state.busy = false;
      setButtons();
    }
  }

  restartButton.addEventListener("click", () => {
    runner.restart();
    showPrintsOf(null);
    output.textContent = "Python is restarting: a fresh interpreter, with nothing left from earlier runs.";
  });
  runButton.addEventListener("click", () => doRun(code()));
  checkButton.addEventListener("click", () => doCheck(code()));
  resetButton.addEventListener("click", () => {
    if (state.editor) state.editor.setValue(starter);
    store.updateProgress({ code: null }, "reset");
    plain("The starter code is back.");
  });
  solutionButton.addEventListener("click", () => {
    if (state.editor) state.editor.setValue(solution);
    store.updateProgress({ revealed: true }, "revealed");
    plain(level.solutionNote, "mha-panel--info");
  });

  let saveTimer = null;
  const onChange = (text) => {
    clearTimeout(saveTimer);
    saveTimer = setTimeout(() => {
      if (!state.disposed) store.updateProgress({ code: text === starter ? null : text }, "code");
    }, 300);
  };

  const off = store.onProgress((progress, reason) => {
    if (reason === "clear") {
      if (state.editor) state.editor.setValue(starter);
      clearTimeout(saveTimer);
      plain("");
      showPrintsOf(null);
      output.textContent = "Press Run to see what your code prints.";
    }
    setButtons();
  });

  const loaded = (async () => {
    const editor = loadEditor().catch((err) => {
      console.warn("code editor bundle unavailable, using a plain text box", err);
      return { createEditor: textareaEditor };
    });
    ({ starter, solution } = await level.texts());
    const { createEditor } = await editor;
    if (state.disposed) return;
    const saved = store.getProgress();
    state.editor = createEditor({
      parent: editorBox,
      doc: saved.code ?? starter,
      label: level.editorLabel,
      describedBy: `${uid}-help`,
      onChange,
    });
    if (saved.solved)
      plain(
        `You solved ${level.name} earlier (saved in this browser). Press Check to grade it again.`,
        "mgpt-ex__verdict--pass",
      );
    setButtons();
  })();
  loaded.catch((err) => plain(`The exercise could not load: ${err.message}`, "mha-panel--error"));

  return {
    onState,
    loaded,
    check: (source) => doCheck(String(source), { fromEditor: false }),
    run: (source) => doRun(String(source)),
    restart: () => restartButton.click(),
    getCode: () => code(),
    setCode: (text) => state.editor && state.editor.setValue(String(text)),
    // The line (1-based) the cursor is on, so a test can walk to a line with the arrow keys over wrapped lines.
    cursorLine: () =>
      state.editor && state.editor.view
        ? state.editor.view.state.doc.lineAt(state.editor.view.state.selection.main.head).number
        : null,
    starter: () => starter,
    solution: () => solution,
    dispose() {
      state.disposed = true;
      clearTimeout(saveTimer);
      off();
      if (state.editor) state.editor.destroy();
    },
  };
}
