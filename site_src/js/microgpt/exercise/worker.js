// Module Web Worker that runs ONE job (a Run or a Check) of the learner's Python with Pyodide.
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
//               {type: "snapshot", key, digest, size, cache, url, failedKey, shipped}   (when offer is null)
//               {type: "run", token, source} | {type: "check", token, source, inputs}
//               {type: "explain", token, expected?}   (after "collected": the page wants the explanation;
//                 expected: JSON of the graph's numbers, for an exercise of functions)
//
// Two kinds of exercise share this worker and its Python heap: microgpt's
// multi_head (diagnosis.py, the default) and an exercise of functions
// (checkerURL: pyodide/calls.py, imported beside sandbox and diagnosis before
// the guard's snapshot; exerciseURL: the exercise's one file, written for
// Python only when its explanation is asked for, like microgpt's floats).
// Messages out: {type: "progress", text, loaded?, total?}
//               {type: "snapshot-made", key, packed} | {type: "snapshot-missing", key, digest, reason}
//                 | {type: "snapshot-failed", key, reason} | {type: "heap-failed", digest, reason}
//                 (all before "ready")
//               {type: "ready", pyodide, python, ms, stages, start, module}  |  {type: "error", message}
//               {type: "output", token, stream, text}   (prints during a Run, already cut to the limit)
//               {type: "collected", token, result}       (Check: the numbers multi_head gave, and nothing else)
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
// Start-up from a memory snapshot (issue 21): starting Python (Py_Initialize,
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

import { unpackHeap } from "./heap_pages.js";
import { HOME, MODEL_FILE, pyodideOptions, sha256Hex, snapshotKey, takeHeap, writeExerciseFiles } from "./heap_recipe.js";

// Characters of printed output passed on per job. sandbox.py already cuts
// prints at 20,000 (cheaply, in Python); this is the guard behind it.
const OUTPUT_LIMIT = 20500;
const MEMORY_LIMIT = 1024 * 1024 * 1024; // bytes of WebAssembly memory: more is reported as a memory problem
const REFERENCE = "/opt/reference/microgpt_floats.py"; // diagnosis.REFERENCE, outside sys.path
const EXERCISE_FILE = "/opt/reference/exercise.py"; // an exercise of functions' checks, outside sys.path
// The files loadPyodide needs; a missing one would leave it waiting for ever.
const RUNTIME_FILES = ["pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json"];
// Where a first visit leaves what it downloaded for the service worker (site_src/hooks/service_worker.js):
// the files Pyodide fetch()es. Its two module scripts come through import(), which
// the service worker finds in the HTTP cache (or serves itself, once it controls this worker).
const HANDOFF_CACHE = "pyodide-handoff";
const PYODIDE_FETCHED = ["pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json"];
const HANDED_OFF = [...PYODIDE_FETCHED, "heap.bin"];
// How long a worker waits for the shipped heap once everything else is ready
// to start Python: restoring saves ~3 s of a normal start on a slow laptop,
// and a line too slow to bring 15 MB in time starts Python the normal way.
const WAIT_FOR_HEAP_MS = 2000;
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
  "caches", "indexedDB", "cookieStore", // Cache Storage, IndexedDB, cookies
  "webkitRequestFileSystem", "webkitRequestFileSystemSync", // Chromium's old sandboxed file system
  "webkitResolveLocalFileSystemURL", "webkitResolveLocalFileSystemSyncURL",
  "Worker", "SharedWorker", // a new realm, with its own caches and indexedDB
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
let checker = null; // {run, collect, explain, healthy}
let floatsSource = null; // microgpt's float arithmetic: written for Python only after the learner's code ran
let exerciseSource = null; // an exercise of functions' checks: likewise
let job = null; // {token, type, shown, cut, decoder}
let used = false; // this worker has been given its one job
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

function post(message) {
  self.postMessage(message);
}

function fileName(url) {
  return decodeURIComponent(new URL(url).pathname.split("/").pop());
}

async function fetchOk(url, options = undefined) {
  let response;
  try {
    response = await fetch(url, options);
  } catch (err) {
    throw new Error(`${fileName(url)} could not be downloaded (${err.message})`);
  }
  if (!response.ok) throw new Error(`${fileName(url)} could not be loaded (HTTP ${response.status})`);
  return response;
}

// HEAD requests for the runtime files, so a missing one is named within seconds.
// Only an answer counts: a HEAD that cannot reach the network at all (offline,
// where the service worker serves the files to GET requests only) proves
// nothing, and the load itself names any file it cannot get.
async function checkRuntimeFiles(indexURL) {
  await Promise.all(RUNTIME_FILES.map(async (name) => {
    const url = indexURL + name;
    let response;
    try {
      response = await fetch(url, { method: "HEAD" });
    } catch {
      return;
    }
    if (!response.ok && response.status !== 405 && response.status !== 501) {
      throw new Error(`${name} could not be loaded (HTTP ${response.status})`);
    }
  }));
}

// ---------------------------------------------------------------------------
// Downloads: bytes and percent of everything the exercise waits for.
// ---------------------------------------------------------------------------
function megabytes(bytes) {
  return (bytes / 1e6).toFixed(1);
}

function progressTracker() {
  const loaded = new Map(); // file name -> bytes received so far
  let sizes = null; // file name -> bytes (uncompressed), from pyodide/sizes.json
  const skipped = new Set(); // files no longer waited for (the shipped heap on a slow line)
  let lastPost = 0;
  const tracker = {
    sizes(value) {
      sizes = value && typeof value === "object" ? { ...value } : null;
      for (const name of skipped) if (sizes) delete sizes[name];
    },
    skip(name) {
      skipped.add(name);
      loaded.delete(name);
      if (sizes) delete sizes[name];
      tracker.report();
    },
    add(name, bytes) {
      if (skipped.has(name)) return;
      loaded.set(name, (loaded.get(name) || 0) + bytes);
      const now = performance.now();
      if (now - lastPost > 100) {
        lastPost = now;
        tracker.report();
      }
    },
    report() {
      let got = 0;
      for (const value of loaded.values()) got += value;
      if (!got) return;
      const total = sizes ? Object.values(sizes).reduce((a, b) => a + (Number(b) || 0), 0) : 0;
      if (total > 0) {
        const shown = Math.min(got, total);
        const percent = Math.floor((100 * shown) / total);
        post({ type: "progress", loaded: shown, total,
          text: shown < total
            ? `Downloading Python (Pyodide) and the model: ${megabytes(shown)} of ${megabytes(total)} MB (${percent} %)…`
            : `Downloaded ${megabytes(total)} MB (100 %); starting Python…` });
      } else {
        post({ type: "progress", loaded: got, text: `Downloading Python (Pyodide) and the model: ${megabytes(got)} MB so far…` });
      }
    },
  };
  return tracker;
}

// A fetch that counts the bytes of each body as they arrive and, on a first
// visit with a service worker on its way (handoff), keeps a copy of each
// runtime file in HANDOFF_CACHE, so the service worker stores it without
// downloading it again. Only while no service worker serves the files
// (count): from its cache they come at once, and a response rebuilt in
// JavaScript would lose the browser's compiled-WebAssembly cache.
function countingFetch(realFetch, tracker, handoff, pending) {
  return async (input, init) => {
    const response = await realFetch(input, init);
    const method = (init && init.method) || (input instanceof Request ? input.method : "GET");
    if (method !== "GET" || !response.ok || !response.body) return response;
    const url = input instanceof Request ? input.url : String(input); // (Pyodide passes URL objects)
    const name = fileName(url);
    const headers = new Headers(response.headers);
    headers.delete("content-encoding"); // the body below is already decoded
    headers.delete("content-length");
    const reader = response.body.getReader();
    const chunks = [];
    let size = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
      tracker.add(name, value.byteLength);
    }
    tracker.report();
    const bytes = new Uint8Array(size);
    let at = 0;
    for (const chunk of chunks) {
      bytes.set(chunk, at);
      at += chunk.byteLength;
    }
    if (handoff && HANDED_OFF.includes(name) && self.caches) {
      pending.push(caches.open(HANDOFF_CACHE)
        .then((cache) => cache.put(url, new Response(bytes, { status: 200, headers })))
        .catch(() => {}));
    }
    const copy = new Response(bytes, { status: response.status, statusText: response.statusText, headers });
    Object.defineProperty(copy, "url", { value: response.url }); // Pyodide resolves paths against it
    return copy;
  };
}

// Answers a GET from `answer(url)` (a promise of the response, or of null:
// then it is fetched after all) where that gives one; the rest is fetched.
function answering(fetchFn, answer) {
  return (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    const method = (init && init.method) || (input instanceof Request ? input.method : "GET");
    const response = method === "GET" ? answer(url) : null;
    if (!response) return fetchFn(input, init);
    return response.then((found) => found || fetchFn(input, init));
  };
}

// On a first visit, Pyodide's own downloads start at once instead of when
// loadPyodide asks for them (after the heap is chosen): each file's first GET
// is answered from the download started here.
function prefetching(fetchFn, urls) {
  const early = new Map(urls.map((url) => {
    const response = fetchFn(url);
    response.catch(() => {});
    return [url, response];
  }));
  return answering(fetchFn, (url) => {
    const response = early.get(url);
    early.delete(url);
    return response;
  });
}

// Served by the service worker (a repeat visit), Pyodide's files are read
// straight from Cache Storage, from the start, instead of through the service
// worker when loadPyodide asks for them (which took twice as long: 15 MB in
// 96-108 ms against 41-54 ms, bench/RESULTS.md); a file not found there is
// fetched. Each later GET of them (Pyodide's own request for the WebAssembly
// compiled ahead, whose body it never reads) is answered from there too.
function fromCacheStorage(fetchFn, urls) {
  const stored = (url) => caches.match(url).catch(() => null);
  const early = new Map(urls.map((url) => [url, stored(url)]));
  return answering(fetchFn, (url) => {
    if (!urls.includes(url)) return null;
    const response = early.get(url) || stored(url);
    early.delete(url);
    return response;
  });
}

// Module scripts (pyodide.mjs, pyodide.asm.mjs) arrive through import(), which
// no fetch wrapper sees: their sizes are counted from this worker's resource timing.
function watchModuleScripts(tracker) {
  if (typeof PerformanceObserver !== "function") return;
  const counted = new Set();
  try {
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) {
        const name = fileName(entry.name);
        if (name.endsWith(".mjs") && !counted.has(name) && entry.decodedBodySize) {
          counted.add(name);
          tracker.add(name, entry.decodedBodySize);
          tracker.report();
        }
      }
    }).observe({ type: "resource", buffered: true });
  } catch {
    // no resource timing here: the percent then stops short of 100 until Python is ready
  }
}

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
        post({ type: "output", token: job.token, stream: "stderr",
          text: `\n[output cut here: only the first ${OUTPUT_LIMIT.toLocaleString("en")} characters are shown]\n` });
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

// The heap this browser keeps (../snapshot.js), read and checked here, where
// no learner code has run yet: {bytes} when its digest matches the record,
// {missing} when it is absent or does not match.
async function readSavedHeap(offer) {
  try {
    const response = await (await caches.open(offer.cache)).match(offer.url);
    if (!response) return { missing: "no saved copy" };
    const packed = new Uint8Array(await response.arrayBuffer());
    if (packed.byteLength !== offer.size || await sha256Hex(packed) !== offer.digest) {
      return { missing: "the saved copy does not match its digest" };
    }
    return { bytes: unpackHeap(packed) };
  } catch (err) {
    return { missing: oneLine(err) };
  }
}

// The heap the site ships ({url, digest, size}), downloaded now; chooseHeap()
// gives up on one that is slow to come (tracker: the progress line, on a first visit).
function downloadHeap(shipped, tracker) {
  const controller = new AbortController();
  const bytes = (async () => {
    // Straight from Cache Storage when the service worker has stored it (a repeat
    // visit): 15 MB that need not stream through the service worker's thread.
    const stored = self.caches ? await caches.match(shipped.url).catch(() => null) : null;
    const response = stored || await fetchOk(shipped.url, { priority: "low", signal: controller.signal });
    const packed = new Uint8Array(await response.arrayBuffer());
    if (packed.byteLength !== shipped.size || await sha256Hex(packed) !== shipped.digest) {
      throw new Error("the downloaded heap does not match this build's digest");
    }
    return unpackHeap(packed);
  })();
  bytes.catch(() => {});
  return {
    bytes,
    abort() {
      controller.abort();
      if (tracker) tracker.skip(fileName(shipped.url));
    },
  };
}

// Which heap this worker starts from: {bytes, from: "saved"|"shipped"},
// {missing, from} when one was offered and is not usable, or {} for none
// (a normal start). A heap of this browser made for these files comes first;
// the shipped one if it comes within WAIT_FOR_HEAP_MS.
// startDownload(offer): the shipped heap's download (started at most once), or null.
async function chooseHeap(offer, key, startDownload) {
  if (key && offer.key === key && offer.digest && offer.cache) {
    const saved = await readSavedHeap(offer);
    if (saved.bytes) return { ...saved, from: "saved" };
    post({ type: "snapshot-missing", key, digest: offer.digest, reason: saved.missing });
  }
  const download = startDownload(offer);
  if (!download) return {};
  let timer = null;
  const late = new Promise((resolve) => {
    timer = setTimeout(() => resolve(null), WAIT_FOR_HEAP_MS);
  });
  try {
    const bytes = await Promise.race([download.bytes, late]);
    if (bytes) return { bytes, from: "shipped" };
    download.abort();
    return {};
  } catch (err) {
    return { missing: oneLine(err), from: "shipped" };
  } finally {
    clearTimeout(timer);
  }
}

// The heap size a snapshot holds (Pyodide's header: word 1 is the header's length).
function snapshotHeapBytes(bytes) {
  const header = new Uint32Array(bytes.buffer, bytes.byteOffset, 2);
  return bytes.byteLength - header[1];
}

// Pyodide instantiates its WebAssembly through WebAssembly.instantiate(Streaming);
// wrapped here, before any learner code runs (they only ever instantiate
// Pyodide's own module), to
// - use the module an earlier worker compiled (`compiled`, handed on by the
//   page): the browser shares its compiled code between workers, so this one
//   neither compiles it again nor compiles, function by function, the code
//   the earlier one already ran (Chrome compiles WebAssembly lazily); or the
//   one this worker began to compile when it started (a repeat visit);
// - grow the memory to a snapshot's heap first: Pyodide 314 restores into a
//   heap of the default size and fails ("offset is out of bounds") when the
//   snapshot's heap had grown past it;
// - note when it was done (stages);
// - compile each of the tiny modules Pyodide makes to put a JavaScript function
//   into its function table (~260 while it starts, of ~30 distinct signatures)
//   once per signature: a module's bytes depend only on the signature, and one
//   compiled module can be instantiated with any function.
function watchInstantiate({ stages, t0, compiled = null, heapBytes = 0, keep }) {
  const done = (result) => {
    const memory = result && result.instance && result.instance.exports.memory;
    if (memory && memory.buffer.byteLength < heapBytes) {
      memory.grow(Math.ceil((heapBytes - memory.buffer.byteLength) / 65536));
    }
    if (result && result.module instanceof WebAssembly.Module) keep(result.module);
    stages.instantiated = performance.now() - t0;
    return result;
  };
  const streaming = WebAssembly.instantiateStreaming;
  const plain = WebAssembly.instantiate;
  const RealModule = WebAssembly.Module;
  const tiny = new Map(); // the bytes of a small module (as a string) -> its compiled module
  WebAssembly.Module = new Proxy(RealModule, {
    construct(target, args, newTarget) {
      const bytes = args[0];
      if (!(bytes instanceof Uint8Array) || bytes.byteLength > 128 || newTarget !== WebAssembly.Module) {
        return Reflect.construct(target, args, newTarget === WebAssembly.Module ? target : newTarget);
      }
      const key = String.fromCharCode(...bytes);
      let module = tiny.get(key);
      if (!module) tiny.set(key, (module = new RealModule(bytes)));
      return module;
    },
  });
  // The module compiled ahead (a promise of it, or of null): instantiated from
  // it when there is one, else (or if that fails) from Pyodide's own source.
  const ahead = async (imports) => {
    const module = await compiled;
    if (!(module instanceof WebAssembly.Module)) throw new Error("no module compiled ahead");
    return { module, instance: await plain.call(WebAssembly, module, imports) };
  };
  WebAssembly.instantiateStreaming = (source, imports) => {
    stages.instantiating = performance.now() - t0;
    return ahead(imports).then((result) => {
      Promise.resolve(source).then((r) => r.body && r.body.cancel(), () => {}); // Pyodide's own download, not needed
      return result;
    }, () => streaming.call(WebAssembly, source, imports)).then(done);
  };
  WebAssembly.instantiate = (source, imports) => {
    stages.instantiating = performance.now() - t0;
    return ahead(imports).catch(() => plain.call(WebAssembly, source, imports)).then(done);
  };
  return () => {
    WebAssembly.instantiateStreaming = streaming;
    WebAssembly.instantiate = plain;
    WebAssembly.Module = RealModule;
  };
}

async function init({ indexURL, modelURL, sandboxURL, diagnosisURL, floatsURL, sizesURL, checkerURL, exerciseURL, count, handoff, prefetch, module }) {
  const t0 = performance.now();
  // Milliseconds after t0; origin and t0 place them on the page's clock (bench/site_visits.py).
  const stages = { origin: performance.timeOrigin, t0 };
  const realFetch = self.fetch.bind(self);
  const tracker = progressTracker();
  const pending = [];
  let download = null; // the shipped heap's, once started
  try {
    post({ type: "progress", text: "Starting Python (Pyodide)…" });
    if (count) self.fetch = countingFetch(realFetch, tracker, Boolean(handoff), pending);
    if (count && sizesURL) {
      realFetch(sizesURL).then((r) => (r.ok ? r.json() : null)).then((s) => tracker.sizes(s), () => {});
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
      self.fetch = prefetching(self.fetch, PYODIDE_FETCHED.map((name) => new URL(name, indexURL).href));
    }
    // The page's offer is in the settings (or follows soon). Without a heap of
    // this browser's, the shipped one downloads while the rest loads.
    const startDownload = (offer) => download
      || (download = offer.shipped && self.crypto && crypto.subtle ? downloadHeap(offer.shipped, count ? tracker : null) : null);
    snapshotOffer.then((offer) => offer.key || startDownload(offer));
    if (!count && self.caches) {
      self.fetch = fromCacheStorage(realFetch, PYODIDE_FETCHED.map((name) => new URL(name, indexURL).href));
    }
    // Served by the service worker (a repeat visit), the WebAssembly compiles
    // now, beside the imports and the heap's read, instead of after them; a
    // spare is handed the module an earlier worker compiled (with "init").
    const compiled = module ? handedOver.then((given) => given.module)
      : count ? Promise.resolve(null) : WebAssembly.compileStreaming(self.fetch(new URL("pyodide.asm.wasm", indexURL).href));
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
    if (heap.missing && heap.from === "shipped") post({ type: "heap-failed", digest: offer.shipped.digest, reason: heap.missing });
    let compiledModule = null;
    const watch = { stages, t0, compiled, keep: (m) => { compiledModule = m; } };
    let start = "normal";
    if (heap.bytes) {
      post({ type: "progress", text: heap.from === "saved" ? "Starting Python from the copy saved in this browser…" : "Starting Python from its saved start-up…" });
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
    checker = checkerSource
      ? { run: sandbox.run, collect: pyodide.pyimport("calls").collect, explain: pyodide.pyimport("calls").explain, healthy: sandbox.healthy }
      : { run: sandbox.run, collect: diagnosis.collect, explain: diagnosis.explain_collected, healthy: sandbox.healthy };
    const python = pyodide.runPython("import sys; sys.version.split()[0]");
    await Promise.all(pending); // the handed-off copies are complete before the next worker looks for them
    lockDown();
    // The compiled module goes to the page with "ready" (before any job), for the next workers.
    post({ type: "ready", pyodide: pyodide.version, python, ms: performance.now() - t0, stages, start, module: compiledModule });
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

function oneLine(err) {
  const text = String((err && err.message) || err);
  const last = text.trim().split("\n").filter(Boolean).pop() || text;
  return last.length > 300 ? `${last.slice(0, 300)}…` : last;
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
  const message = /KeyboardInterrupt/.test(why) ? why
    : `Python crashed while running your code (${why}). Deep recursion does this when sys.setrecursionlimit ` +
      "is raised; the next Run or Check gets a fresh Python.";
  return { ok: false, outputs: [], failed: true, error: message, message, stop: /KeyboardInterrupt/.test(why) ? "interrupt" : "" };
}

function health(result) {
  let said = "";
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
  job = { token, type, shown: 0, cut: false, decoder: new TextDecoder() };
  let result;
  try {
    result = JSON.parse(type === "check" ? checker.collect(source, JSON.stringify(inputs)) : checker.run(source));
  } catch (err) {
    result = failure(err);
  }
  if (type === "check") {
    // The numbers go to the page before anything else runs here.
    post({ type: "collected", token, result: { outputs: result.outputs, failed: Boolean(result.failed), stop: String(result.stop || "") } });
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
    if (exerciseSource) {
      fs.writeFile(EXERCISE_FILE, exerciseSource);
      message = String(checker.explain(EXERCISE_FILE, String(expected || "{}")));
    } else {
      fs.writeFile(REFERENCE, floatsSource);
      message = String(checker.explain());
    }
  } catch (err) {
    message = failure(err).message;
  }
  post({ type: "done", token, result: { message }, health: health({}) });
}

// The page's description of the shipped heap, or null.
function shippedHeap(value) {
  if (!value || typeof value.url !== "string" || typeof value.digest !== "string" || !Number.isInteger(value.size)) return null;
  return { url: value.url, digest: value.digest, size: value.size };
}

// The page's offer, as the worker uses it.
function snapshotFrom(value) {
  return {
    key: String(value.key || ""), digest: String(value.digest || ""), size: Number(value.size) || 0,
    cache: String(value.cache || ""), url: String(value.url || ""), failedKey: String(value.failedKey || ""),
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
  post({ type: "error", message: "the Python worker was started without its settings (runner.js gives them in its name)" });
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
  } else if (message.type === "run" || message.type === "check") {
    if (!checker || used) {
      const text = used ? "This Python has already run a job." : "Python is not ready yet.";
      post({ type: "done", token: message.token, result: { ok: false, outputs: [], failed: true, error: text, message: text, stop: "" }, health: "" });
      return;
    }
    startJob(message);
  } else if (message.type === "explain") {
    explain(message);
  }
};
