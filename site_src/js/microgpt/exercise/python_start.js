// An exercise worker's start-up: its files and Pyodide's downloaded, Python
// started (from a memory snapshot where it can), set up for the job, handed to
// jobs.js, and the worker locked down (lock_down.js) before it says "ready".
//
// Python starts from a memory snapshot, so a Run answers in well under a
// second: starting Python (Py_Initialize,
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
import { onStalls } from "../../runtime/download_watch.js";
import { lockDown } from "./lock_down.js";
import { usePython, writer } from "./jobs.js";

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

// settings: the worker's, from its name (worker.js); snapshotOffer: a promise of
// the page's offer; handedOver: a promise of its "init" message.
export async function startPython(
  {
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
  },
  snapshotOffer,
  handedOver,
) {
  const t0 = performance.now();
  // Milliseconds after t0; origin and t0 place them on the page's clock (bench/site_visits.py).
  const stages = { origin: performance.timeOrigin, t0 };
  const realFetch = self.fetch.bind(self);
  const tracker = progressTracker();
  const pending = [];
  let download = null; // the shipped heap's, once started
  let pyodide = null;
  let fs = null; // the file-system calls, kept before any learner code runs
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
        fs = setUp(pyodide, {
          ...sources,
          checkerSource,
          modelBytes,
          interruptBuffer: (await handedOver).interruptBuffer,
        });
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
      fs = setUp(pyodide, {
        ...sources,
        checkerSource,
        modelBytes,
        interruptBuffer: (await handedOver).interruptBuffer,
      });
    }
    self.fetch = realFetch;
    stages.setUp = performance.now() - t0;
    const sandbox = pyodide.pyimport("sandbox");
    const diagnosis = pyodide.pyimport("diagnosis");
    const calls = checkerSource ? pyodide.pyimport("calls") : null;
    const checker = {
      run: sandbox.run,
      healthy: sandbox.healthy,
      blanks: { collect: diagnosis.collect, explain: diagnosis.explain_collected },
      functions: calls ? { collect: calls.collect, explain: calls.explain } : null,
    };
    usePython({ pyodide, fs, checker, floatsSource: floats, exerciseSource: exercise });
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
// the files exist, since it records them). Returns the file-system calls that
// the Check's explanation uses, taken before any learner code can replace them.
function setUp(py, { sandboxSource, diagnosisSource, checkerSource, modelBytes, interruptBuffer }) {
  const FS = py.FS;
  const fs = { mkdirTree: FS.mkdirTree.bind(FS), writeFile: FS.writeFile.bind(FS) };
  writeExerciseFiles(FS, { sandboxSource, diagnosisSource, modelBytes });
  if (checkerSource) FS.writeFile("/opt/mha/calls.py", checkerSource);
  py.setStdout(writer("stdout"));
  py.setStderr(writer("stderr"));
  py.setStdin({ stdin: () => null }); // sys.stdin reads nothing (sandbox.py words input())
  if (interruptBuffer) py.setInterruptBuffer(interruptBuffer);
  py.runPython(SETUP(HOME, Boolean(checkerSource)));
  return fs;
}
