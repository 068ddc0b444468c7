// "Build it yourself": the learner writes causal multi-head attention for the
// trained four-head model, one function at a time, each checked against the
// model's own teaching graph on the learner's prompt.
//
// The exercise is one file, named by the page's widget (data-exercise:
// pyodide/exercises/build_attention.py): its starter,
// its functions in unlocking order and its tolerance are read from it here;
// its checks' words run in Python only after the learner's numbers are in.
// Each Run and Check runs in a fresh Pyodide worker (microgpt/runner.js, the
// same runtime and Python heap as microgpt's exercise); the verdict is decided
// here from the graph's tensors (graph.js), never in the worker.
//
// Test hook: window.mhaBuild = {ready, check(name, source?), run(source),
// drive(source?), setPrompt(text), setCode(text), getCode(), progress()}.
// ready resolves with Python's start-up (runner.js info) and graphAt, when the
// graph's numbers for the prompt were in; check() resolves with {passed,
// message, hint, timedOut}; drive() with {top: {mine, model}, mine, model,
// same, question, timings} (drive.js).

import { siteUrl } from "../runtime/assets.js";
import { el } from "../runtime/dom.js";
import { functionsOf, rawText } from "../runtime/exercise_file.js";
import { claim, errorText, release } from "../runtime/widget.js";
import { TIME_LIMIT_MS, claimRunner, exerciseFiles } from "../microgpt/runner.js";
import { hintTiers, splitHint } from "../microgpt/exercise_panel.js";
import { agrees, basics, checkOf, promptIds, promptProblem, session, tailSession, tensorsFor } from "./graph.js";
import { driveBlock } from "./drive.js";

const STORAGE_KEY = "mha-build-exercise";
const DEFAULT_PROMPT = "once upon a time there was a little girl named lily";
const EDITOR_GLOBAL = "mhaCodeMirror";
const EDITOR_PATH = "vendor/codemirror/editor.js";
const mounted = new Map();

// STARTER, FUNCTIONS and TOLERANCE, as the exercise file states them.
export function readExercise(text, path) {
  const starter = rawText(text, "STARTER");
  const functions = functionsOf(text);
  const tolerance = Number((text.match(/^TOLERANCE = ([0-9.e-]+)$/m) || [])[1]);
  if (!starter || !functions.length || !(tolerance > 0))
    throw new Error(`${path} does not state its starter, functions and tolerance`);
  return { starter, functions, tolerance };
}

function loadProgress() {
  try {
    const saved = JSON.parse(localStorage.getItem(STORAGE_KEY) || "{}");
    return {
      code: typeof saved.code === "string" ? saved.code : null,
      passed: Array.isArray(saved.passed) ? saved.passed.map(String) : [],
      prompt: typeof saved.prompt === "string" ? saved.prompt : null,
    };
  } catch {
    return { code: null, passed: [], prompt: null };
  }
}

function saveProgress(progress) {
  try {
    localStorage.setItem(STORAGE_KEY, JSON.stringify(progress));
  } catch {
    // storage full or blocked: the exercise still works, only not remembered
  }
}

function loadEditor() {
  if (globalThis[EDITOR_GLOBAL]) return Promise.resolve(globalThis[EDITOR_GLOBAL]);
  return new Promise((resolve, reject) => {
    const script = el("script", { src: siteUrl(EDITOR_PATH) });
    script.onload = () =>
      globalThis[EDITOR_GLOBAL]
        ? resolve(globalThis[EDITOR_GLOBAL])
        : reject(new Error(`${EDITOR_PATH} did not define the editor`));
    script.onerror = () => reject(new Error(`${EDITOR_PATH} could not be loaded`));
    document.head.append(script);
  });
}

function textareaEditor({ parent, doc, label, describedBy, onChange }) {
  const area = el("textarea", {
    class: "mgpt-ex__fallback",
    spellcheck: false,
    "aria-label": label,
    "aria-describedby": describedBy,
    rows: 30,
  });
  area.value = doc;
  area.addEventListener("input", () => onChange && onChange(area.value));
  parent.append(area);
  return {
    getValue: () => area.value,
    setValue: (t) => {
      area.value = t;
      if (onChange) onChange(t);
    },
    destroy: () => area.remove(),
  };
}

export function mount(root) {
  const state = claim(mounted, root, { runner: null, editor: null });
  if (!state) return;
  // The graph's session starts now: the first Check waits for it as much as for Python.
  session().catch(() => {});
  const exercisePath = root.dataset.exercise || "";
  const uid = `mha-build-${Math.random().toString(36).slice(2, 8)}`;
  const progress = loadProgress();

  const promptInput = el("input", {
    type: "text",
    class: "mha-build__prompt",
    id: `${uid}-prompt`,
    value: progress.prompt ?? DEFAULT_PROMPT,
    spellcheck: false,
    autocomplete: "off",
  });
  const promptButton = el("button", { type: "button", class: "md-button", text: "Use this prompt" });
  const promptNote = el("p", {
    class: "mha-build__note mha-build__prompt-note",
    role: "status",
    "aria-live": "polite",
  });
  const tokenRow = el("ol", { class: "mha-build__tokens", start: "0", "aria-label": "The prompt's rows, from 0" });
  const steps = el("ol", { class: "mha-build__steps", "aria-label": "The functions, in the order they unlock" });
  const status = el(
    "div",
    { class: "mgpt-ex__status", role: "status", "aria-live": "polite", "data-phase": "loading" },
    el("span", { text: "Starting Python (Pyodide)…" }),
  );
  const help = el("p", {
    class: "mgpt-ex__help",
    id: `${uid}-help`,
    text: `Python editor. Tab moves on to the buttons; Ctrl+] and Ctrl+[ indent a line. Run and Check stop code that runs longer than ${TIME_LIMIT_MS / 1000} seconds.`,
  });
  const editorBox = el("div", { class: "mgpt-ex__editor" });
  const target = el("select", { class: "mha-build__target", "aria-label": "Function to check" });
  const checkButton = el("button", {
    type: "button",
    class: "md-button md-button--primary",
    text: "Check",
    disabled: true,
  });
  const runButton = el("button", { type: "button", class: "md-button", text: "Run", disabled: true });
  const resetButton = el("button", { type: "button", class: "md-button", text: "Reset the code" });
  const verdict = el("div", { class: "mgpt-ex__verdict", role: "status", "aria-live": "polite" });
  const outputLabel = el("p", { class: "mgpt-ex__label", id: `${uid}-out`, text: "Output" });
  const output = el("pre", { class: "mgpt-ex__output", tabIndex: 0, "aria-labelledby": `${uid}-out` });
  output.textContent = "Press Run to see what your code prints.";
  root.replaceChildren(
    el(
      "div",
      { class: "mha-build__promptbox" },
      el("label", { for: `${uid}-prompt`, text: "Your prompt (words from the stories, up to 15):" }),
      el("div", { class: "mha-build__promptrow" }, promptInput, promptButton),
    ),
    promptNote,
    tokenRow,
    steps,
    status,
    help,
    editorBox,
    el("div", { class: "mgpt-ex__buttons" }, target, checkButton, runButton, resetButton),
    verdict,
    outputLabel,
    output,
  );
  const driver = driveBlock({
    runner: { series: (...args) => state.runner.series(...args) },
    code: () => code(),
    prompt: () => prompt,
    tolerance: () => exercise.tolerance,
    isOpen: () => passed.has("multi_head_attention"),
    onBusy: (on) => {
      busy = on;
      setButtons();
    },
  });
  root.append(driver.block);

  let exercise = null;
  let prompt = null; // {text, ids, tokens, graph}
  let busy = false;
  let ready = false;
  const passed = new Set(progress.passed);

  const unlocked = () => {
    const names = exercise ? exercise.functions.map((f) => f.name) : [];
    const first = names.findIndex((n) => !passed.has(n));
    return first < 0 ? names : names.slice(0, first + 1);
  };
  const save = (patch = {}) =>
    saveProgress({
      code: state.editor ? state.editor.getValue() : progress.code,
      passed: [...passed],
      prompt: prompt ? prompt.text : null,
      ...patch,
    });
  const setButtons = () => {
    checkButton.disabled = runButton.disabled = busy || !ready || !prompt || !exercise;
  };
  const drawSteps = () => {
    if (!exercise) return;
    const open = unlocked();
    steps.replaceChildren(
      ...exercise.functions.map(({ name, compares }) => {
        const mark = passed.has(name) ? "✓" : open.includes(name) ? "→" : "○";
        const what = passed.has(name) ? "passed" : open.includes(name) ? "to do" : "locked";
        return el(
          "li",
          { class: `mha-build__step mha-build__step--${what}` },
          el("span", { class: "mha-build__mark", "aria-hidden": "true", text: mark }),
          el("code", { text: name }),
          ` (${what}): checked against ${compares}.`,
        );
      }),
    );
    const chosen = target.value;
    target.replaceChildren(...open.map((name) => el("option", { value: name, text: `Check ${name}` })));
    target.value = open.includes(chosen) ? chosen : open[open.length - 1];
    driver.refresh();
  };

  // Python started from the page's head (prestart.js) with this exercise's files, if it was.
  const runner = claimRunner(
    {
      onState: (s) => {
        status.dataset.phase = s.phase;
        status.firstChild.textContent = s.text;
        ready = s.phase === "ready" || s.phase === "busy";
        setButtons();
      },
      onOutput: (stream, text) => {
        if (stream === "stderr") output.append(el("span", { class: "mgpt-ex__stderr", text }));
        else output.append(text);
      },
    },
    exerciseFiles(exercisePath),
  );
  state.runner = runner;

  async function usePrompt(text) {
    const { vocab } = await basics();
    const problem = promptProblem(vocab, text);
    if (problem) {
      promptNote.textContent = problem;
      promptNote.className = "mha-build__note mha-build__prompt-note mha-panel mha-panel--error";
      return false;
    }
    promptNote.className = "mha-build__note mha-build__prompt-note";
    promptNote.textContent = "Running the model's teaching graph on your prompt…";
    const { ids, tokens } = promptIds(vocab, text);
    const graph = await tensorsFor(ids);
    if (state.disposed) return false;
    prompt = { text: String(text), ids, tokens, graph };
    tokenRow.replaceChildren(...tokens.map((t) => el("li", { text: t })));
    promptNote.textContent = `${ids.length} rows (BOS included): E is ${ids.length} × ${graph.d}. Each Check compares your numbers with the model's on them.`;
    save();
    setButtons();
    driver.refresh();
    return true;
  }

  // The microgpt exercise's three tiers of a hint, in this page's words.
  const hintLook = { whereLabel: "Which line?", codeNeedsWhere: true };
  const showVerdict = (result, name) => {
    const tiers = splitHint(result.message);
    delete verdict.dataset.tier;
    const title = result.passed ? `✓ ${name} matches the model` : result.timedOut ? "⏱ Stopped" : `✗ ${name}: not yet`;
    verdict.replaceChildren(
      el("p", { class: "mgpt-verdict__title", text: title }),
      ...(tiers
        ? hintTiers(verdict, tiers, hintLook)
        : [el("p", { class: "mgpt-verdict__text mgpt-verdict__idea", text: result.message })]),
    );
    verdict.dataset.passed = String(Boolean(result.passed));
    verdict.className = `mgpt-ex__verdict mha-panel ${result.passed ? "mgpt-ex__verdict--pass" : "mha-panel--error"}`;
  };

  async function doCheck(name, source) {
    busy = true;
    setButtons();
    verdict.className = "mgpt-ex__verdict";
    verdict.textContent = `Checking ${name}…`;
    output.textContent = "Check runs your code without showing its prints; press Run to see them.";
    try {
      const { weights } = await basics();
      const { inputs, expected } = checkOf(name, prompt.graph, weights, prompt.tokens);
      const judge = (collected) =>
        !collected.failed && !collected.stop && agrees(collected.outputs, expected, exercise.tolerance);
      // The graph's numbers go to the worker only after its numbers are in, and only to explain them.
      const result = await runner.check(source, inputs, (collected) =>
        judge(collected) ? false : { expected: JSON.stringify({ outputs: expected }) },
      );
      const ok = !result.timedOut && judge(result);
      const message = result.timedOut
        ? String(result.message)
        : ok
          ? `Your ${name} gives the model's numbers on all ${prompt.ids.length} rows (within ${exercise.tolerance} of the float32 graph).`
          : String(result.message || "Your numbers differ from the model's.");
      if (!state.disposed) {
        if (ok && !passed.has(name)) passed.add(name);
        showVerdict({ passed: ok, message, timedOut: result.timedOut }, name);
        save();
        drawSteps();
        if (ok) {
          const next = unlocked().find((n) => !passed.has(n));
          if (next) target.value = next;
        }
      }
      const tiers = splitHint(message);
      return {
        passed: ok,
        message,
        timedOut: Boolean(result.timedOut),
        hint: tiers ? { idea: tiers[0], where: tiers[1], code: tiers[2] } : null,
      };
    } catch (err) {
      const message = `The check could not run: ${errorText(err)}`;
      if (!state.disposed) showVerdict({ passed: false, message }, name);
      return { passed: false, message, timedOut: false, hint: null };
    } finally {
      busy = false;
      setButtons();
    }
  }

  async function doRun(source) {
    busy = true;
    setButtons();
    output.textContent = "";
    try {
      const result = await runner.run(source);
      if (result.error) output.append(el("span", { class: "mgpt-ex__stderr", text: `${result.error}\n` }));
      if (!output.textContent) output.textContent = "(Your code printed nothing.)";
      return result;
    } finally {
      busy = false;
      setButtons();
    }
  }

  const code = () => (state.editor ? state.editor.getValue() : (progress.code ?? exercise?.starter ?? ""));
  checkButton.addEventListener("click", () => doCheck(target.value, code()));
  runButton.addEventListener("click", () => doRun(code()));
  resetButton.addEventListener("click", () => {
    if (state.editor && exercise) state.editor.setValue(exercise.starter);
    verdict.className = "mgpt-ex__verdict";
    verdict.textContent = "The starter code is back (the functions you passed stay passed).";
  });
  const submitPrompt = () =>
    usePrompt(promptInput.value).catch((err) => {
      promptNote.className = "mha-build__note mha-build__prompt-note mha-panel mha-panel--error";
      promptNote.textContent = `The model could not run: ${errorText(err)}`;
    });
  promptButton.addEventListener("click", submitPrompt);
  promptInput.addEventListener("keydown", (event) => {
    if (event.key === "Enter") submitPrompt();
  });

  let saveTimer = null;
  const loaded = (async () => {
    const editorLib = loadEditor().catch(() => ({ createEditor: textareaEditor }));
    if (!exercisePath) throw new Error("the page's widget names no exercise file (data-exercise)");
    const response = await fetch(siteUrl(exercisePath));
    if (!response.ok) throw new Error(`${exercisePath} is missing on this site (HTTP ${response.status})`);
    exercise = readExercise(await response.text(), exercisePath);
    const { createEditor } = await editorLib;
    if (state.disposed) return;
    state.editor = createEditor({
      parent: editorBox,
      doc: progress.code ?? exercise.starter,
      label: "Python code of the build exercise",
      describedBy: `${uid}-help`,
      onChange: () => {
        clearTimeout(saveTimer);
        saveTimer = setTimeout(() => !state.disposed && save(), 300);
      },
    });
    drawSteps();
    await usePrompt(promptInput.value);
    return performance.now(); // the graph's numbers for the prompt are in
  })();
  // Once the first Check can answer: the rest of the model, for the continuation
  // (its file is then kept for offline visits too, though no continuation ran yet).
  Promise.all([runner.ready, loaded])
    .then(() => tailSession())
    .catch(() => {});
  loaded.catch((err) => {
    verdict.className = "mgpt-ex__verdict mha-panel mha-panel--error";
    verdict.textContent = `The exercise could not load: ${errorText(err)}`;
  });

  const hook = {
    get ready() {
      return Promise.all([runner.ready, loaded]).then(([, graphAt]) => ({ ...runner.info, graphAt }));
    },
    check: (name, source) => doCheck(String(name), source === undefined ? code() : String(source)),
    run: (source) => doRun(String(source)),
    drive: (source) => driver.run(source === undefined ? code() : String(source)),
    setPrompt: (text) => {
      promptInput.value = String(text);
      return usePrompt(String(text));
    },
    setCode: (text) => state.editor && state.editor.setValue(String(text)),
    getCode: () => code(),
    progress: () => ({ passed: [...passed], unlocked: unlocked() }),
    starter: () => exercise && exercise.starter,
  };
  state.hook = hook;
  window.mhaBuild = hook;
}

export function dispose(root) {
  const state = release(mounted, root);
  if (!state) return;
  if (state.runner) state.runner.dispose();
  if (state.editor) state.editor.destroy();
  if (window.mhaBuild === state.hook) delete window.mhaBuild;
}
