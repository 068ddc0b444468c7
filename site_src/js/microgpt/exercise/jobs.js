// The one job of an exercise worker (worker.js): a Run, a Check, or a
// series' calls, run in the Python the start-up handed over (usePython), with
// its printed output passed on and cut, and Python's health said after it.
//
// Two kinds of Check share this worker and its Python heap: microgpt's two
// blanks (diagnosis.py) and an exercise of functions, a Check whose inputs
// name the function to call (calls.py, imported beside sandbox and diagnosis
// before the guard's snapshot; the exercise's one file is written for Python
// only when its explanation is asked for, with microgpt's floats). One worker
// serves both: the microgpt page's Level 1 and Level 2
// (microgpt_multi_head.py) share its runner.
//
// A Check has two steps. The numbers are sent to the page as soon as the
// learner's code has given them ("collected"); the page decides the verdict
// from them alone. Only then, if the page asks, does this worker write
// microgpt's float arithmetic for Python and explain a wrong answer, so the
// learner's code never finds the reference implementation.

import { oneLine, post } from "./downloads.js";

// Characters of printed output passed on per job. sandbox.py already cuts
// prints at 20,000 (cheaply, in Python); this is the guard behind it.
const OUTPUT_LIMIT = 20500;
const MEMORY_LIMIT = 1024 * 1024 * 1024; // bytes of WebAssembly memory: more is reported as a memory problem
const REFERENCE = "/opt/reference/microgpt_floats.py"; // diagnosis.REFERENCE, outside sys.path
const EXERCISE_FILE = "/opt/reference/exercise.py"; // an exercise of functions' checks, outside sys.path

// Set once, by the start-up, before "ready" (usePython): until then no job is taken.
let pyodide = null;
let fs = null; // the file-system calls, kept before any learner code runs
let checker = null; // {run, healthy, blanks: {collect, explain}, functions: {collect, explain} | null}
let floatsSource = null; // microgpt's float arithmetic: written for Python only after the learner's code ran
let exerciseSource = null; // an exercise of functions' checks: likewise

let job = null; // {token, type, shown, cut, decoder, functions}
let used = false; // this worker has been given its one job (or a series' first call)
let series = false; // its jobs are a series' calls: more of them may follow

// The Python the start-up made, once it can take a job: {pyodide, fs, checker,
// floatsSource, exerciseSource}.
export function usePython(ready) {
  ({ pyodide, fs, checker, floatsSource, exerciseSource } = ready);
}

// Printed bytes -> text, cut so that at most OUTPUT_LIMIT characters are passed on,
// however long one print is (the bytes past the limit are never decoded).
export function writer(stream) {
  return {
    write(buffer) {
      const n = buffer.length;
      if (!job || job.cut) return n;
      const room = OUTPUT_LIMIT - job.shown;
      const bytes = buffer.subarray(0, Math.min(n, room * 4 + 4));
      let text = job.decoder.decode(bytes, { stream: true });
      if (text.length >= room || bytes.length < n) {
        text = text.slice(0, room);
        job.cut = true;
      }
      job.shown += text.length;
      if (text) post({ type: "output", token: job.token, stream, text });
      if (job.cut) {
        post({
          type: "output",
          token: job.token,
          stream: "stderr",
          text: `\n[output cut here: only the first ${OUTPUT_LIMIT.toLocaleString("en")} characters are shown]\n`,
        });
      }
      return n;
    },
    isatty: false,
  };
}

function memoryBytes() {
  try {
    return pyodide._module.HEAP8.buffer.byteLength;
  } catch (err) {
    return 0;
  }
}

// Python itself failed (not the learner's code, which sandbox.py catches):
// e.g. recursion deep enough to overflow the browser's own stack.
function failure(err) {
  const why = oneLine(err);
  const message = /KeyboardInterrupt/.test(why)
    ? why
    : `Python crashed while running your code (${why}). Deep recursion does this when sys.setrecursionlimit ` +
      "is raised; the next Run or Check gets a fresh Python.";
  return {
    ok: false,
    outputs: [],
    failed: true,
    error: message,
    message,
    stop: /KeyboardInterrupt/.test(why) ? "interrupt" : "",
  };
}

function health(result) {
  let said;
  try {
    said = checker.healthy();
  } catch (err) {
    said = "Python stopped working";
  }
  if (!said && result.stop === "memory") said = "your code used up Python's memory";
  if (!said && memoryBytes() > MEMORY_LIMIT) said = "your code made Python use a lot of memory";
  return said;
}

function startJob({ type, token, source, inputs }) {
  used = true;
  series = type === "call";
  // A series' call, or a Check that names its function, is an exercise of functions'
  // (calls.py); any other Check is microgpt's blanks'.
  const functions =
    type === "call" ||
    (type === "check" && Boolean(checker.functions && inputs && typeof inputs.function === "string"));
  job = { token, type, shown: 0, cut: false, decoder: new TextDecoder(), functions };
  let result;
  try {
    const collect = functions ? checker.functions.collect : checker.blanks.collect;
    result = JSON.parse(type === "run" ? checker.run(source) : collect(source, JSON.stringify(inputs)));
  } catch (err) {
    result = failure(err);
  }
  if (type === "call") {
    const numbers = { outputs: result.outputs, failed: Boolean(result.failed), stop: String(result.stop || "") };
    post({ type: "done", token, result: numbers, health: health(result) });
  } else if (type === "check") {
    // The numbers go to the page before anything else runs here.
    post({
      type: "collected",
      token,
      result: { outputs: result.outputs, failed: Boolean(result.failed), stop: String(result.stop || "") },
    });
  } else {
    post({ type: "done", token, result, health: health(result) });
  }
}

// The page's "run", "check" or "call": taken only once per worker (a series'
// calls excepted), and only once Python is ready.
export function takeJob(message) {
  const taken = used && !(series && message.type === "call");
  if (!checker || taken) {
    const text = taken ? "This Python has already run a job." : "Python is not ready yet.";
    post({
      type: "done",
      token: message.token,
      result: { ok: false, outputs: [], failed: true, error: text, message: text, stop: "" },
      health: "",
    });
    return;
  }
  startJob(message);
}

export function explain({ token, expected }) {
  if (!job || job.token !== token || job.type !== "check" || job.explained) return;
  job.explained = true;
  let message;
  try {
    fs.mkdirTree("/opt/reference");
    fs.writeFile(REFERENCE, floatsSource);
    if (job.functions) {
      if (!exerciseSource) throw new Error("this page gave the worker no exercise file");
      fs.writeFile(EXERCISE_FILE, exerciseSource);
      message = String(checker.functions.explain(EXERCISE_FILE, String(expected || "{}")));
    } else {
      message = String(checker.blanks.explain());
    }
  } catch (err) {
    message = failure(err).message;
  }
  post({ type: "done", token, result: { message }, health: health({}) });
}
