// "Build" on the microgpt page: the multi_head exercise, in two levels.
//
// Level 1 fills in two blanks of multi_head (pyodide/starter.py); once its
// Check has passed, Level 2 is offered: the whole function, from its
// signature, docstring and the file's helpers (level2.js, on the exercise
// file pyodide/exercises/microgpt_multi_head.py). Each level is an
// exercise_panel.js (editor, Run, Check, tiered hints, saved progress of its
// own: progress.js); both run their code in one Python runner (runner.js: a
// fresh Pyodide worker for every job) and both are judged here by
// verdict.js, against microgpt's answers this page computes from the trained
// model. After three failed checks a level offers its solution.
//
// Test hook: window.mhaExercise = {ready, check(source), run(source),
// restart(), lastStop(), isolated, setCode(text), getCode(), cursorLine(),
// level2}, Level 1's; level2 = {open(), isOpen(), offered(), check, run,
// setCode, getCode, starter(), solution(), ready}. check() resolves with
// {passed, message, hint, timedOut, notice}: the verdict the Check button
// shows, reached the same way (hint: {idea, where, code} of a failed check).
// The hook goes away with the page (dispose).

import { fetchText, level2, passMessage as level2Pass, passExtra as level2Extra } from "./level2.js";
import { el } from "../runtime/dom.js";
import { claimRunner } from "./runner.js";
import { getProgress, level2 as level2Store, onProgress, updateProgress } from "./progress.js";
import { exerciseCases, inputsOf, judge, passMessage } from "./verdict.js";
import { exercisePanel } from "./exercise_panel.js";
import { loadModel } from "./ui.js";
import { claim, release } from "../runtime/widget.js";

export { HINT_SEP, splitHint } from "./exercise_panel.js";

const mounted = new Map(); // root -> state

const LEVEL1 = {
  name: "this exercise",
  editorLabel: "Python code of the multi_head exercise",
  store: { getProgress, updateProgress, onProgress },
  texts: async () => {
    const [starter, solution] = await Promise.all([fetchText("pyodide/starter.py"), fetchText("pyodide/solution.py")]);
    return { starter, solution };
  },
  ask: (doc) => ({ inputs: inputsOf(doc), explain: (collected) => !judge(doc, collected).passed }),
  passMessage,
  passExtra: () => [
    el(
      "p",
      { class: "mgpt-level2__next" },
      "Next: Level 2, just below, where you write the whole of multi_head yourself.",
    ),
  ],
  solutionNote:
    "The solution is in the editor: read the lines under BLANK 1 and BLANK 2, then press Check. (Ctrl+Z brings your own code back.)",
};

const LEVEL2 = {
  ...level2,
  store: level2Store,
  passMessage: level2Pass,
  passExtra: level2Extra,
};

export function mount(root) {
  const state = claim(mounted, root, { runner: null, panels: [], offs: [] });
  if (!state) return;
  const levelOne = el("div", { class: "mgpt-ex__level" });
  const levelTwo = el("section", { class: "mgpt-level2", "aria-labelledby": `${root.id || "mgpt"}-level2-title` });
  root.replaceChildren(levelOne, levelTwo);

  // One runner for both levels: its state goes to every panel, its output to the panel whose job it is.
  let outputTarget = () => {};
  const runner = claimRunner({
    onState: (s) => state.panels.forEach((p) => p.onState(s)),
    onOutput: (stream, text) => outputTarget(stream, text),
  });
  state.runner = runner;
  const cases = loadModel().then((model) => exerciseCases(model)); // microgpt's answers, computed here
  cases.catch(() => {});
  const shared = {
    runner,
    cases,
    setOutputTarget: (fn) => {
      outputTarget = fn;
    },
  };
  const addPanel = (box, level) => {
    const panel = exercisePanel(box, level, shared);
    state.panels.push(panel);
    if (runner.state) panel.onState(runner.state);
    return panel;
  };
  const one = addPanel(levelOne, LEVEL1);

  // Level 2: offered once Level 1 has passed (or already begun); built when the learner opens it.
  const titleId = levelTwo.getAttribute("aria-labelledby");
  const title = el("h3", { id: titleId, class: "mgpt-level2__title", text: "Level 2: write the whole multi_head" });
  const intro = el("p", { class: "mgpt-level2__intro" });
  const openButton = el("button", { type: "button", class: "md-button md-button--primary", text: "Start Level 2" });
  const panelBox = el("div", { class: "mgpt-level2__panel" });
  levelTwo.replaceChildren(title, intro, openButton, panelBox);
  let two = null;
  const offered = () =>
    getProgress().solved || level2Store.getProgress().solved || level2Store.getProgress().code !== null;
  const open = () => {
    if (!two && !state.disposed) {
      two = addPanel(panelBox, LEVEL2);
      levelTwo.dataset.open = "true";
    }
    draw();
    return two.loaded;
  };
  const draw = () => {
    const ready = offered();
    levelTwo.dataset.offered = String(ready);
    openButton.hidden = !ready || Boolean(two);
    intro.textContent = !ready
      ? "Opens once your Check of the two blanks passes: then you write the whole function yourself."
      : "Now the whole function: the starter keeps the signature, the docstring and the file's helpers " +
        "(dot, matvec, softmax), and the body is yours: slice the query, the keys and the values per head, " +
        "score, softmax, blend, and glue the heads side by side. The same Check and hints as Level 1; " +
        "its progress is saved on its own.";
  };
  openButton.addEventListener("click", () => {
    open().then(
      () => panelBox.querySelector(".cm-content, textarea")?.focus(),
      () => {},
    );
  });
  draw();
  if (level2Store.getProgress().solved || level2Store.getProgress().code !== null) open();
  state.offs.push(onProgress(draw), level2Store.onProgress(draw));

  const ready = () =>
    Promise.all([runner.ready, one.loaded, cases]).then(() => ({ ...runner.info, isolated: runner.isolated }));
  const hook = {
    isolated: runner.isolated,
    get ready() {
      return ready();
    },
    check: one.check,
    run: one.run,
    restart: one.restart,
    lastStop: () => runner.lastStop,
    getCode: one.getCode,
    setCode: one.setCode,
    cursorLine: one.cursorLine,
    starter: one.starter,
    solution: one.solution,
    level2: {
      offered,
      isOpen: () => Boolean(two),
      open,
      get ready() {
        return open().then(ready);
      },
      check: (source) => open().then(() => two.check(source)),
      run: (source) => open().then(() => two.run(source)),
      getCode: () => (two ? two.getCode() : null),
      setCode: (text) => two && two.setCode(text),
      starter: () => (two ? two.starter() : null),
      solution: () => (two ? two.solution() : null),
    },
  };
  state.hook = hook;
  window.mhaExercise = hook;
}

export function dispose(root) {
  const state = release(mounted, root);
  if (!state) return;
  state.offs.forEach((off) => off());
  state.panels.forEach((panel) => panel.dispose());
  if (state.runner) state.runner.dispose();
  if (window.mhaExercise === state.hook) delete window.mhaExercise;
}
