// "Build" on the microgpt page: the multi_head exercise.
//
// A CodeMirror editor (bundled at build time into vendor/codemirror/editor.js)
// holds the starter code; Run and Check execute it in Pyodide in a module Web
// Worker (see microgpt/runner.js and exercise/worker.js). Check sends the
// inputs of every case to Python and gets back the numbers the learner's
// multi_head returned; the verdict is decided here by microgpt/verdict.js
// against microgpt's answers, which this page computes from the trained model. The code, the result and the number
// of failed checks are saved with microgpt/progress.js; after three failed
// checks a "Show solution" button appears.
//
// Test hook: window.mhaExercise = {ready, check(source), run(source),
// restart(), lastStop(), isolated, setCode(text), getCode(), cursorLine()}. check() resolves
// with {passed, message, hint, timedOut, notice}: the verdict the Check button
// shows, reached the same way (hint: {idea, where, code} of a failed check). The hook goes away with the page (dispose).

import { siteUrl } from "../runtime/assets.js";
import { el } from "../runtime/dom.js";
import { TIME_LIMIT_MS, claimRunner } from "./runner.js";
import { getProgress, onProgress, updateProgress } from "./progress.js";
import { exerciseCases, failMessage, inputsOf, judge, passMessage } from "./verdict.js";
import { loadModel } from "./ui.js";
import { claim, release } from "../runtime/widget.js";

const SHOW_SOLUTION_AFTER = 3;
// How pyodide/diagnosis.py joins a hint's tiers (SEP there).
export const HINT_SEP = "\x1e";

// [idea, where, code] of a hint, or null for a message that is not one.
export function splitHint(message) {
  if (typeof message !== "string" || !message.includes(HINT_SEP)) return null;
  const [idea = "", where = "", code = ""] = message.split(HINT_SEP);
  return [idea, where, code];
}
const mounted = new Map(); // root -> {runner, editor, off}

// CodeMirror, bundled as a classic script that leaves its createEditor here
// (exercise/editor_entry.js): Chrome keeps such a script compiled with the
// service worker's copy, where a module script is compiled again each visit.
const EDITOR_GLOBAL = "mhaCodeMirror";
const EDITOR_PATH = "vendor/codemirror/editor.js";

function loadEditor() {
  if (globalThis[EDITOR_GLOBAL]) return Promise.resolve(globalThis[EDITOR_GLOBAL]); // (a page visited again)
  return new Promise((resolve, reject) => {
    const script = document.createElement("script");
    script.src = siteUrl(EDITOR_PATH);
    script.onload = () => (globalThis[EDITOR_GLOBAL] ? resolve(globalThis[EDITOR_GLOBAL])
      : reject(new Error(`${EDITOR_PATH} did not define the editor`)));
    script.onerror = () => reject(new Error(`${EDITOR_PATH} could not be loaded`));
    document.head.append(script);
  });
}

async function fetchText(path) {
  const response = await fetch(siteUrl(path));
  if (!response.ok) throw new Error(`${path} is missing on this site (HTTP ${response.status})`);
  return response.text();
}

// A plain textarea with the editor's interface, used if the bundle cannot load.
function textareaEditor({ parent, doc, label, describedBy, onChange }) {
  const area = el("textarea", { class: "mgpt-ex__fallback", spellcheck: false, "aria-label": label, "aria-describedby": describedBy });
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

export function mount(root) {
  const state = claim(mounted, root, { runner: null, editor: null, off: null });
  if (!state) return;

  const uid = `mgpt-ex-${Math.random().toString(36).slice(2, 8)}`;
  const spinner = el("span", { class: "mgpt-spinner", "aria-hidden": "true" });
  const statusText = el("span", { text: "Starting Python (Pyodide)…" });
  const status = el("div", { class: "mgpt-ex__status", role: "status", "aria-live": "polite", "data-phase": "loading" }, spinner, statusText);
  const help = el("p", {
    class: "mgpt-ex__help", id: `${uid}-help`,
    text: "Python editor. New lines are indented for you; Ctrl+] indents a line more and Ctrl+[ less " +
      "(⌘ on a Mac), and Tab moves on to the buttons. " +
      `Run and Check stop code that runs longer than ${TIME_LIMIT_MS / 1000} seconds.`,
  });
  const editorBox = el("div", { class: "mgpt-ex__editor" });
  const runButton = el("button", { type: "button", class: "md-button md-button--primary", text: "Run", disabled: true });
  const checkButton = el("button", { type: "button", class: "md-button md-button--primary", text: "Check", disabled: true });
  const resetButton = el("button", { type: "button", class: "md-button", text: "Reset" });
  const solutionButton = el("button", { type: "button", class: "md-button", text: "Show solution", hidden: true });
  const restartButton = el("button", { type: "button", class: "md-button", text: "Restart Python" });
  const buttons = el("div", { class: "mgpt-ex__buttons" }, runButton, checkButton, resetButton, solutionButton, restartButton);
  const verdict = el("div", { class: "mgpt-ex__verdict", role: "status", "aria-live": "polite" });
  const outputLabel = el("p", { class: "mgpt-ex__label", id: `${uid}-out`, text: "Output" });
  const output = el("pre", { class: "mgpt-ex__output", tabIndex: 0, "aria-labelledby": `${uid}-out`, "aria-live": "polite" });
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
  let busy = false;
  let ready = false;
  const setButtons = () => {
    runButton.disabled = checkButton.disabled = busy || !ready;
    solutionButton.hidden = !(getProgress().failedChecks >= SHOW_SOLUTION_AFTER && solution);
  };

  // A failed check's hint comes in three tiers (pyodide/diagnosis.py): the idea
  // in words first; "Where?" adds the line and what is wrong in it; only
  // "Show me the code" shows code.
  const hintTiers = (block, tiers) => {
    const [idea, where, code] = tiers;
    const whereText = el("p", { class: "mgpt-verdict__where", text: where, hidden: true });
    const codeText = el("pre", { class: "mgpt-verdict__code", text: code, hidden: true });
    const whereButton = el("button", { type: "button", class: "md-button mgpt-verdict__more", text: "Where?", hidden: !where });
    const codeButton = el("button", { type: "button", class: "md-button mgpt-verdict__more", text: "Show me the code", hidden: !code });
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
    return [el("p", { class: "mgpt-verdict__text mgpt-verdict__idea", text: idea }), whereText, codeText,
      el("div", { class: "mgpt-verdict__buttons" }, whereButton, codeButton)];
  };

  const showVerdict = (result) => {
    const passed = Boolean(result.passed);
    const tiers = splitHint(result.message);
    delete verdict.dataset.tier;
    verdict.replaceChildren(
      el("p", { class: "mgpt-verdict__title", text: passed ? "✓ Passed" : (result.timedOut ? "⏱ Stopped" : "✗ Not yet") }),
      ...(tiers ? hintTiers(verdict, tiers) : [el("pre", { class: "mgpt-verdict__text", text: result.message })]),
      ...(result.notice ? [el("p", { class: "mgpt-ex__notice", text: result.notice })] : []),
    );
    verdict.dataset.passed = String(passed);
    verdict.className = `mgpt-ex__verdict mha-panel ${passed ? "mgpt-ex__verdict--pass" : "mha-panel--error"}`;
  };

  const runner = claimRunner({
    onState: (s) => {
      status.dataset.phase = s.phase;
      statusText.textContent = s.text;
      ready = s.phase === "ready" || s.phase === "busy";
      if (s.phase === "loading" || s.phase === "error") ready = false;
      setButtons();
    },
    onOutput: (stream, text) => {
      if (stream === "stderr") output.append(el("span", { class: "mgpt-ex__stderr", text }));
      else output.append(text);
    },
  });
  const cases = loadModel().then((model) => exerciseCases(model)); // microgpt's answers, computed here
  cases.catch(() => {});
  state.runner = runner;

  const code = () => (state.editor ? state.editor.getValue() : getProgress().code ?? starter);

  async function doRun(source) {
    busy = true;
    setButtons();
    output.textContent = "";
    showPrintsOf(source);
    // A verdict belongs to the code it judged: after a Run the editor may hold other code.
    delete verdict.dataset.passed;
    verdict.className = "mgpt-ex__verdict";
    verdict.textContent = "Run only runs your code; press Check to test it.";
    try {
      const result = await runner.run(source);
      if (state.disposed) return result;
      if (result.error) output.append(el("span", { class: "mgpt-ex__stderr", text: (output.textContent ? "\n" : "") + result.error + "\n" }));
      if (!output.textContent) output.textContent = "(Your code printed nothing.)";
      if (result.notice) output.append(el("span", { class: "mgpt-ex__notice", text: `\n${result.notice}\n` }));
      return result;
    } finally {
      busy = false;
      setButtons();
    }
  }

  async function doCheck(source, { fromEditor = true } = {}) {
    busy = true;
    setButtons();
    verdict.className = "mgpt-ex__verdict";
    verdict.textContent = "Checking…";
    // Check runs the code quietly: what an earlier Run printed stays, labelled as such.
    if (printedBy === null) output.textContent = "Check runs your code without showing its prints; press Run to see them.";
    else outputLabel.textContent = printedBy === source ? "Output of your last Run (Check shows no prints)"
      : "Output of your last Run, of your code as it was then (Check shows no prints)";
    try {
      const doc = await cases;
      // The verdict comes from the numbers alone; the worker explains only a wrong answer.
      const result = await runner.check(source, inputsOf(doc), (collected) => !judge(doc, collected).passed);
      const decided = result.timedOut ? { passed: false } : judge(doc, result);
      const verdictResult = {
        passed: decided.passed,
        message: result.timedOut ? String(result.message) : decided.passed ? passMessage(doc) : failMessage(doc, result, decided),
        notice: String(result.notice || ""),
      };
      if (!state.disposed) {
        showVerdict({ ...verdictResult, timedOut: result.timedOut });
        const progress = getProgress();
        const patch = fromEditor ? { code: source === starter ? null : source } : {};
        if (verdictResult.passed) updateProgress({ ...patch, solved: true, solvedCode: source }, "solved");
        else updateProgress({ ...patch, failedChecks: progress.failedChecks + 1 }, "failed");
      }
      const tiers = splitHint(verdictResult.message);
      const hint = tiers ? { idea: tiers[0], where: tiers[1], code: tiers[2] } : null;
      return { ...verdictResult, hint, timedOut: Boolean(result.timedOut) };
    } catch (err) {
      const message = `The check could not run: ${err.message}`;
      if (!state.disposed) showVerdict({ passed: false, message });
      return { passed: false, message, timedOut: false, notice: "" };
    } finally {
      busy = false;
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
    updateProgress({ code: null }, "reset");
    verdict.className = "mgpt-ex__verdict";
    verdict.textContent = "The starter code is back.";
  });
  solutionButton.addEventListener("click", () => {
    if (state.editor) state.editor.setValue(solution);
    updateProgress({ revealed: true }, "revealed");
    verdict.className = "mgpt-ex__verdict mha-panel mha-panel--info";
    verdict.textContent = "The solution is in the editor: read the lines under BLANK 1 and BLANK 2, then press Check. (Ctrl+Z brings your own code back.)";
  });

  let saveTimer = null;
  const onChange = (text) => {
    clearTimeout(saveTimer);
    saveTimer = setTimeout(() => {
      if (!state.disposed) updateProgress({ code: text === starter ? null : text }, "code");
    }, 300);
  };

  state.off = onProgress((progress, reason) => {
    if (reason === "clear") {
      if (state.editor) state.editor.setValue(starter);
      clearTimeout(saveTimer);
      verdict.className = "mgpt-ex__verdict";
      verdict.textContent = "";
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
    [starter, solution] = await Promise.all([fetchText("pyodide/starter.py"), fetchText("pyodide/solution.py")]);
    const { createEditor } = await editor;
    if (state.disposed) return;
    const saved = getProgress();
    state.editor = createEditor({
      parent: editorBox, doc: saved.code ?? starter, label: "Python code of the multi_head exercise",
      describedBy: `${uid}-help`, onChange,
    });
    if (saved.solved) {
      verdict.className = "mgpt-ex__verdict mha-panel mgpt-ex__verdict--pass";
      verdict.textContent = "You solved this exercise earlier (saved in this browser). Press Check to grade it again.";
    }
    setButtons();
  })();
  loaded.catch((err) => {
    verdict.className = "mgpt-ex__verdict mha-panel mha-panel--error";
    verdict.textContent = `The exercise could not load: ${err.message}`;
  });

  const hook = {
    isolated: runner.isolated,
    get ready() {
      return Promise.all([runner.ready, loaded, cases]).then(() => ({ ...runner.info, isolated: runner.isolated }));
    },
    check: (source) => doCheck(String(source), { fromEditor: false }),
    run: (source) => doRun(String(source)),
    restart: () => restartButton.click(),
    lastStop: () => runner.lastStop,
    getCode: () => code(),
    setCode: (text) => state.editor && state.editor.setValue(String(text)),
    // The line (1-based) the cursor is on, so a test can walk to a line with the arrow keys over wrapped lines.
    cursorLine: () => (state.editor && state.editor.view
      ? state.editor.view.state.doc.lineAt(state.editor.view.state.selection.main.head).number : null),
    starter: () => starter,
    solution: () => solution,
  };
  state.hook = hook;
  window.mhaExercise = hook;
}

export function dispose(root) {
  const state = release(mounted, root);
  if (!state) return;
  if (state.off) state.off();
  if (state.runner) state.runner.dispose();
  if (state.editor) state.editor.destroy();
  if (window.mhaExercise === state.hook) delete window.mhaExercise;
}
