// Module Web Worker that runs ONE job (a Run or a Check) of the learner's Python with Pyodide.
// Its jobs, one module each: this file starts Python and speaks the job
// protocol; downloads.js fetches (with progress and the service worker's
// handoff); heap_choice.js picks the heap Python starts from.
//
// The page (microgpt/runner.js) boots a worker ahead of time, hands it one job
// and then terminate()s it, so the next job starts in a worker whose
// JavaScript and Python the learner's earlier code never touched: whatever
// that code did (patched builtins, gc tricks, JavaScript reached through
// pyodide_js, files in /tmp), it went with the worker.
//
// Settings, in the worker's name (JSON, read as soon as this script runs):
//               {indexURL, modelURL, sandboxURL, diagnosisURL, floatsURL, sizesURL,
//                checkerURL?, exerciseURL?, count, handoff, prefetch, offer, module}   (count: no service worker serves this page yet;
//                offer: {key, digest, size, cache, url, failedKey, shipped}, the record ../snapshot.js
//                keeps and the heap the site ships ({url, digest, size}, or null), or null: then a
//                "snapshot" message brings it; module: whether the page has a compiled WebAssembly)
// Messages in:  {type: "init", interruptBuffer?, module?}   (at once: what a name cannot carry)
//               {type: "retry"}   (the learner's Retry of the downloads reported stalled)
//               {type: "snapshot", key, digest, size, cache, url, failedKey, shipped}   (when offer is null)
//               {type: "run", token, source} | {type: "check", token, source, inputs}
//               | {type: "call", token, source, inputs}   (a series: any number of calls, nothing else)
//               {type: "explain", token, expected?}   (after "collected": the page wants the explanation;
//                 expected: JSON of the graph's numbers, for an exercise of functions)
//
// Two kinds of Check share this worker and its Python heap: microgpt's two
// blanks (diagnosis.py) and an exercise of functions, a Check whose inputs
// name the function to call (checkerURL: pyodide/calls.py, imported beside
// sandbox and diagnosis before the guard's snapshot; exerciseURL: the
// exercise's one file, written for Python only when its explanation is asked
// for, with microgpt's floats). One worker serves both: the microgpt page's
// Level 1 and Level 2 (microgpt_multi_head.py) share its runner.
// Messages out: {type: "progress", text, loaded?, total?}
//               {type: "stalled", list: [{what, loaded, total}]}   (the downloads stalled now; [] when none)
//               {type: "snapshot-made", key, packed} | {type: "snapshot-missing", key, digest, reason}
//                 | {type: "snapshot-failed", key, reason} | {type: "heap-failed", digest, reason}
//                 (all before "ready")
//               {type: "ready", pyodide, python, ms, stages, start, module}  |  {type: "error", message}
//               {type: "output", token, stream, text}   (prints during a Run, already cut to the limit)
//               {type: "collected", token, result}       (Check: the numbers multi_head gave, and nothing else)
//               (a call: "done" with the numbers alone, as "collected" gives them)
//               {type: "done", token, result, health}   (health: "" or why Python misbehaved)
//
// A Check has two steps. The numbers are sent to the page as soon as the
// learner's code has given them ("collected"); the page decides the verdict
// from them alone. Only then, if the page asks, does this worker write
// microgpt's float arithmetic for Python and explain a wrong answer, so the
// learner's code never finds the reference implementation.
//
// Python gets an empty object as its `js` module. Code that reaches
// JavaScript anyway (pyodide_js) can only spoil its own job: before "ready"
// the worker removes from its realm whatever would outlive the job
// (lockDown: Cache Storage, IndexedDB, file systems, nested workers,
// channels to other contexts).
//
// Start-up from a memory snapshot, so a Run answers in well under a second: starting Python (Py_Initialize,
// importing the standard library from its zip, Pyodide's own modules, then
// sandbox.py and diagnosis.py) is nearly all of a worker's start. A worker
// restores a heap taken right after that instead, made by heap_recipe.js
// before any learner code existed, from one of two places:
// - the heap the site ships (vendor/pyodide-heap/heap.bin, made at build time
//   by site_src/hooks/python_heap.py), checked against this build's SHA-256;
//   on a first visit it is waited for only while it would arrive sooner than
//   Python could start (a slow line starts Python the normal way);
// - the heap a worker of this browser made itself after a normal start
//   (snapshot-made, before "ready", so before this worker can have a job),
//   which the page keeps (../snapshot.js) with its digest where no worker can
//   write. Only a heap made for the same files is restored (snapshotKey).
// The heap holds no files: the standard library and the exercise's modules and
// model are written again, the streams and interrupt buffer set again, the
// random generators reseeded, and sandbox.start() runs after the restore, as
// it does after a normal start. Any failure falls back to a normal start in
// the same worker.

import { HOME, MODEL_FILE, pyodideOptions, snapshotKey, takeHeap, writeExerciseFiles } from "./heap_recipe.js";
import {
  PYODIDE_FETCHED,
  checkRuntimeFiles,
  countingFetch,
  fetchOk,
  fromCacheStorage,
  oneLine,
  post,
  prefetching,
  progressTracker,
  watchModuleScripts,
} from "./downloads.js";
import { chooseHeap, downloadHeap, snapshotHeapBytes, watchInstantiate } from "./heap_choice.js";
import { onStalls, retryStalled } from "../../runtime/download_watch.js";

// Characters of printed output passed on per job. sandbox.py already cuts
// prints at 20,000 (cheaply, in Python); this is the guard behind it.
const OUTPUT_LIMIT = 20500;
const MEMORY_LIMIT = 1024 * 1024 * 1024; // bytes of WebAssembly memory: more is reported as a memory problem
const REFERENCE = "/opt/reference/microgpt_floats.py"; // diagnosis.REFERENCE, outside sys.path
const EXERCISE_FILE = "/opt/reference/exercise.py"; // an exercise of functions' checks, outside sys.path
// Runs in every worker after the heap is ready (restored or new), then the guard's snapshot is taken.
const SETUP = (home, checker) => `import os, sys
os.chdir(${JSON.stringify(home)})
sys.path[:] = list(dict.fromkeys(sys.path))   # (finalizeSetup adds "" again after a restore)
if "/opt/mha" not in sys.path:
    sys.path.append("/opt/mha")
import random, tempfile
random.seed()                                 # a restored heap holds the generator's state of the snapshot
tempfile._name_sequence = None
import sandbox, diagnosis${checker ? "\nimport calls" : ""}
sandbox.start()
`;

// What a dedicated worker can reach beyond its own job: storage this origin
// keeps across visits, and channels to its other pages and workers. Learner
// code that reaches JavaScript (pyodide_js) could rewrite the service
// worker's caches (the precache holds verdict.js, the runtime cache
// Pyodide's files, pyodide-handoff what the service worker adopts) and so
// spoil every later verdict, across reloads. lockDown() removes them once
// this worker's own start-up is done with them (the handoff puts and the
// snapshot read), before any learner code runs. Attributes live on the
// prototypes (WorkerGlobalScope.prototype.caches, WorkerNavigator.prototype
// .storage), operations and constructors on the global itself, so each name
// goes from every object of both chains: no getter is left to call on self.
// Kept: postMessage (the page), fetch (what it fetches, the service worker
// stores only the server's own complete answers), WebAssembly, TextDecoder,
// crypto. Chromium's dedicated workers have no SharedWorker, cookieStore or
// navigator.serviceWorker; other browsers may.
const GLOBAL_CAPABILITIES = [
  "caches",
  "indexedDB",
  "cookieStore", // Cache Storage, IndexedDB, cookies
  "webkitRequestFileSystem",
  "webkitRequestFileSystemSync", // Chromium's old sandboxed file system
  "webkitResolveLocalFileSystemURL",
  "webkitResolveLocalFileSystemSyncURL",
  "Worker",
  "SharedWorker", // a new realm, with its own caches and indexedDB
  "BroadcastChannel", // messages to the site's other pages and workers
];
const NAVIGATOR_CAPABILITIES = [
  "storage", // StorageManager: the origin private file system (getDirectory), persist()
  "storageBuckets", // buckets with their own caches, indexedDB and file system
  "locks", // locks shared with the site's other pages and workers
  "serviceWorker", // the service worker itself
];

function lockDown() {
  const scrub = (object, names) => {
    for (let o = object; o && o !== Object.prototype; o = Object.getPrototypeOf(o)) {
      for (const name of names) if (Object.hasOwn(o, name)) delete o[name];
    }
    return names.filter((name) => name in object);
  };
  const left = [...scrub(self, GLOBAL_CAPABILITIES), ...scrub(navigator, NAVIGATOR_CAPABILITIES)];
  if (left.length) throw new Error(`this browser does not let the exercise take ${left.join(", ")} away from its code`);
}

let pyodide = null;
let fs = null; // the file-system calls, kept before any learner code runs
let checker = null; // {run, healthy, blanks: {collect, explain}, functions: {collect, explain} | null}
let floatsSource = null; // microgpt's float arithmetic: written for Python only after the learner's code ran
let exerciseSource = null; // an exercise of functions' checks: likewise
let job = null; // {token, type, shown, cut, decoder, functions}
let used = false; // this worker has been given its one job (or a series' first call)
let series = false; // its jobs are a series' calls: more of them may follow
let offerSnapshot = null;
// What the page offers (in the settings, or its "snapshot" message): {key, digest, ..., shipped}.
const snapshotOffer = new Promise((resolve) => {
  offerSnapshot = resolve;
});
let handOver = null;
// The page's "init" message: {interruptBuffer, module}.
const handedOver = new Promise((resolve) => {
  handOver = resolve;
});

// Printed bytes -> text, cut so that at most OUTPUT_LIMIT characters are passed on,
// however long one print is (the bytes past the limit are never decoded).
function writer(stream) {
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

function checkModel(bytes) {
  let model;
  try {
    model = JSON.parse(new TextDecoder().decode(bytes));
  } catch (err) {
    throw new Error(`${MODEL_FILE} is damaged: it is not valid JSON`);
  }
  if (!model || model.format !== "microgpt-trained/1" || !model.weights) {
    throw new Error(`${MODEL_FILE} is not a trained microgpt (format microgpt-trained/1)`);
  }
}

async function init({
  indexURL,
  modelURL,
  sandboxURL,
  diagnosisURL,
  floatsURL,
  sizesURL,
  checkerURL,
  exerciseURL,
  digests,
  count,
  handoff,
  prefetch,
  module,
}) {
  const t0 = performance.now();
  // Milliseconds after t0; origin and t0 place them on the page's clock (bench/site_visits.py).
  const stages = { origin: performance.timeOrigin, t0 };
  const realFetch = self.fetch.bind(self);
  const tracker = progressTracker();
  const pending = [];
  let download = null; // the shipped heap's, once started
  try {
    post({ type: "progress", text: "Starting Python (Pyodide)…" });
    if (count) self.fetch = countingFetch(realFetch, tracker, Boolean(handoff), pending, digests || {});
    // A download that stalls is said on the page, whose Retry comes back as a "retry" message.
    onStalls((list) =>
      post({ type: "stalled", list: list.map(({ what, loaded, total }) => ({ what, loaded, total })) }),
    );
    if (count && sizesURL) {
      realFetch(sizesURL)
        .then((r) => (r.ok ? r.json() : null))
        .then(
          (s) => tracker.sizes(s),
          () => {},
        );
    }
    const files = Promise.all([
      fetchOk(modelURL).then((r) => r.arrayBuffer()),
      fetchOk(sandboxURL).then((r) => r.text()),
      fetchOk(diagnosisURL).then((r) => r.text()),
      fetchOk(floatsURL).then((r) => r.text()),
      checkerURL ? fetchOk(checkerURL).then((r) => r.text()) : null,
      exerciseURL ? fetchOk(exerciseURL).then((r) => r.text()) : null,
    ]);
    files.catch(() => {});
    if (count && prefetch) {
      self.fetch = prefetching(
        self.fetch,
        PYODIDE_FETCHED.map((name) => new URL(name, indexURL).href),
      );
    }
    // The page's offer is in the settings (or follows soon). Without a heap of
    // this browser's, the shipped one downloads while the rest loads.
    const startDownload = (offer) =>
      download ||
      (download =
        offer.shipped && self.crypto && crypto.subtle ? downloadHeap(offer.shipped, count ? tracker : null) : null);
    snapshotOffer.then((offer) => offer.key || startDownload(offer));
    if (!count && self.caches) {
      self.fetch = fromCacheStorage(
        realFetch,
        PYODIDE_FETCHED.map((name) => new URL(name, indexURL).href),
        digests || {},
      );
    }
    // Served by the service worker (a repeat visit), the WebAssembly compiles
    // now, beside the imports and the heap's read, instead of after them; a
    // spare is handed the module an earlier worker compiled (with "init").
    const compiled = module
      ? handedOver.then((given) => given.module)
      : count
        ? Promise.resolve(null)
        : WebAssembly.compileStreaming(self.fetch(new URL("pyodide.asm.wasm", indexURL).href));
    compiled.catch(() => {});
    if (count) watchModuleScripts(tracker);
    // The HEAD checks, pyodide.mjs and the large pyodide.asm.mjs (which loadPyodide
    // imports later, by the same URL, and then finds loaded) all at once; a
    // missing file is named by its check rather than by a failed import.
    const asm = import(indexURL + "pyodide.asm.mjs");
    asm.catch(() => {});
    // (Served by the service worker, the files are in its cache: no checks to wait for.)
    const checks = count ? checkRuntimeFiles(indexURL) : Promise.resolve();
    const [checked, imported] = await Promise.allSettled([checks, import(indexURL + "pyodide.mjs")]);
    if (checked.status === "rejected") throw checked.reason;
    if (imported.status === "rejected") throw new Error(`pyodide.mjs could not be loaded (${imported.reason.message})`);
    const { loadPyodide } = imported.value;
    stages.imported = performance.now() - t0;
    const [model, sandboxSource, diagnosisSource, floats, checkerSource, exercise] = await files;
    const modelBytes = new Uint8Array(model);
    checkModel(modelBytes);
    floatsSource = floats;
    exerciseSource = exercise;
    const sources = { sandboxSource, diagnosisSource };
    const usable = Boolean(self.caches && self.crypto && crypto.subtle);
    const key = usable ? await snapshotKey(indexURL, sandboxSource, diagnosisSource).catch(() => "") : "";
    const offer = await snapshotOffer;
    const heap = self.crypto && crypto.subtle ? await chooseHeap(offer, key, startDownload) : {};
    stages.read = performance.now() - t0;
    if (heap.missing && heap.from === "shipped")
      post({ type: "heap-failed", digest: offer.shipped.digest, reason: heap.missing });
    let compiledModule = null;
    const watch = {
      stages,
      t0,
      compiled,
      keep: (m) => {
        compiledModule = m;
      },
    };
    let start = "normal";
    if (heap.bytes) {
      post({
        type: "progress",
        text:
          heap.from === "saved"
            ? "Starting Python from the copy saved in this browser…"
            : "Starting Python from its saved start-up…",
      });
      const unwatch = watchInstantiate({ ...watch, heapBytes: snapshotHeapBytes(heap.bytes) });
      try {
        pyodide = await loadPyodide({ ...pyodideOptions(indexURL), _loadSnapshot: heap.bytes });
        stages.loaded = performance.now() - t0;
        setUp(pyodide, { ...sources, checkerSource, modelBytes, interruptBuffer: (await handedOver).interruptBuffer });
        start = heap.from === "saved" ? "snapshot" : "shipped";
      } catch (err) {
        // Whatever went wrong, this worker starts Python the normal way,
        // and the page stops offering this heap.
        pyodide = null;
        if (heap.from === "saved") post({ type: "snapshot-failed", key, reason: oneLine(err) });
        else post({ type: "heap-failed", digest: offer.shipped.digest, reason: oneLine(err) });
        start = "normal after a failed restore";
      } finally {
        unwatch();
      }
    }
    if (!pyodide) {
      // A heap of this browser's own is made only where none is shipped or the shipped one failed.
      const make = Boolean(key) && offer.failedKey !== key && !(heap.from === "saved" && start !== "normal");
      const unwatch = watchInstantiate(watch);
      try {
        pyodide = await loadPyodide({ ...pyodideOptions(indexURL), ...(make ? { _makeSnapshot: true } : {}) });
      } finally {
        unwatch();
      }
      stages.loaded = performance.now() - t0;
      self.fetch = realFetch;
      tracker.report();
      if (make) makeSnapshot(pyodide, key, sources);
      setUp(pyodide, { ...sources, checkerSource, modelBytes, interruptBuffer: (await handedOver).interruptBuffer });
    }
    self.fetch = realFetch;
    stages.setUp = performance.now() - t0;
    const sandbox = pyodide.pyimport("sandbox");
    const diagnosis = pyodide.pyimport("diagnosis");
    const calls = checkerSource ? pyodide.pyimport("calls") : null;
    checker = {
      run: sandbox.run,
      healthy: sandbox.healthy,
      blanks: { collect: diagnosis.collect, explain: diagnosis.explain_collected },
      functions: calls ? { collect: calls.collect, explain: calls.explain } : null,
    };
    const python = pyodide.runPython("import sys; sys.version.split()[0]");
    await Promise.all(pending); // the handed-off copies are complete before the next worker looks for them
    lockDown();
    // The compiled module goes to the page with "ready" (before any job), for the next workers.
    post({
      type: "ready",
      pyodide: pyodide.version,
      python,
      ms: performance.now() - t0,
      stages,
      start,
      module: compiledModule,
    });
  } catch (err) {
    self.fetch = realFetch;
    if (download) download.abort(); // nothing more to count or wait for
    post({ type: "error", message: oneLine(err) });
  }
}

// The heap right after sandbox and diagnosis are imported, before anything
// else has run in it (heap_recipe.js): handed to the page before "ready", so
// no job can have touched it. A failure here only means no snapshot this time.
function makeSnapshot(py, key, sources) {
  try {
    const packed = takeHeap(py, sources);
    self.postMessage({ type: "snapshot-made", key, packed }, [packed.buffer]);
  } catch (err) {
    console.warn(`No Python snapshot this time: ${oneLine(err)}`);
  }
}

// Everything a worker needs besides the heap: files, streams, the interrupt
// buffer, then sandbox.start() (the per-job guard's own snapshot, taken after
// the files exist, since it records them).
function setUp(py, { sandboxSource, diagnosisSource, checkerSource, modelBytes, interruptBuffer }) {
  const FS = py.FS;
  fs = { mkdirTree: FS.mkdirTree.bind(FS), writeFile: FS.writeFile.bind(FS) };
  writeExerciseFiles(FS, { sandboxSource, diagnosisSource, modelBytes });
  if (checkerSource) FS.writeFile("/opt/mha/calls.py", checkerSource);
  py.setStdout(writer("stdout"));
  py.setStderr(writer("stderr"));
  py.setStdin({ stdin: () => null }); // sys.stdin reads nothing (sandbox.py words input())
  if (interruptBuffer) py.setInterruptBuffer(interruptBuffer);
  py.runPython(SETUP(HOME, Boolean(checkerSource)));
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

function explain({ token, expected }) {
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

// The page's description of the shipped heap, or null.
function shippedHeap(value) {
  if (!value || typeof value.url !== "string" || typeof value.digest !== "string" || !Number.isInteger(value.size))
    return null;
  return { url: value.url, digest: value.digest, size: value.size };
}

// The page's offer, as the worker uses it.
function snapshotFrom(value) {
  return {
    key: String(value.key || ""),
    digest: String(value.digest || ""),
    size: Number(value.size) || 0,
    cache: String(value.cache || ""),
    url: String(value.url || ""),
    failedKey: String(value.failedKey || ""),
    shipped: shippedHeap(value.shipped),
  };
}

// The settings runner.js gives this worker in its name.
function settingsFromName() {
  let settings = null;
  try {
    settings = JSON.parse(self.name);
  } catch {
    // not JSON: said below
  }
  return settings && typeof settings === "object" && typeof settings.indexURL === "string" ? settings : null;
}

const settings = settingsFromName();
if (!settings) {
  post({
    type: "error",
    message: "the Python worker was started without its settings (runner.js gives them in its name)",
  });
} else {
  if (settings.offer && typeof settings.offer === "object") offerSnapshot(snapshotFrom(settings.offer));
  init(settings);
}

self.onmessage = (event) => {
  const message = event.data || {};
  if (message.type === "init") {
    handOver({
      interruptBuffer: message.interruptBuffer || null,
      module: message.module instanceof WebAssembly.Module ? message.module : null,
    });
  } else if (message.type === "snapshot") {
    offerSnapshot(snapshotFrom(message));
  } else if (message.type === "run" || message.type === "check" || message.type === "call") {
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
  } else if (message.type === "explain") {
    explain(message);
  } else if (message.type === "retry") {
    retryStalled();
  }
};
