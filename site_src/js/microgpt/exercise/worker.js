// Module Web Worker that runs ONE job (a Run or a Check) of the learner's Python with Pyodide.
//
// The page (microgpt/runner.js) boots a worker ahead of time, hands it one job
// and then terminate()s it, so the next job starts in a worker whose
// JavaScript and Python the learner's earlier code never touched: whatever
// that code did (patched builtins, gc tricks, JavaScript reached through
// pyodide_js, files in /tmp), it went with the worker.
//
// Messages in:  {type: "init", indexURL, modelURL, sandboxURL, diagnosisURL, floatsURL, sizesURL,
//                interruptBuffer?, handoff}
//               {type: "run", token, source} | {type: "check", token, source, inputs}
//               {type: "explain", token}   (after "collected": the page wants the explanation)
// Messages out: {type: "progress", text, loaded?, total?}
//               {type: "ready", pyodide, python, ms, stages}  |  {type: "error", message}
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
// JavaScript anyway (pyodide_js) can only spoil its own job.

// Characters of printed output passed on per job. sandbox.py already cuts
// prints at 20,000 (cheaply, in Python); this is the guard behind it.
const OUTPUT_LIMIT = 20500;
const MEMORY_LIMIT = 1024 * 1024 * 1024; // bytes of WebAssembly memory: more is reported as a memory problem
const HOME = "/home/pyodide";
const MODEL_FILE = "microgpt-trained.json";
const REFERENCE = "/opt/reference/microgpt_floats.py"; // diagnosis.REFERENCE, outside sys.path
// The files loadPyodide needs; a missing one would leave it waiting for ever.
const RUNTIME_FILES = ["pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json"];
// Where a first visit leaves what it downloaded for the service worker (site_src/hooks/service_worker.js):
// the files Pyodide fetch()es. Its two module scripts come through import(), which
// the service worker finds in the HTTP cache (or serves itself, once it controls this worker).
const HANDOFF_CACHE = "pyodide-handoff";
const HANDED_OFF = ["pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json"];

let pyodide = null;
let fs = null; // the file-system calls, kept before any learner code runs
let checker = null; // {run, collect, explain, healthy}
let floatsSource = null; // microgpt's float arithmetic: written for Python only after the learner's code ran
let job = null; // {token, type, shown, cut, decoder}
let used = false; // this worker has been given its one job

function post(message) {
  self.postMessage(message);
}

function fileName(url) {
  return decodeURIComponent(new URL(url).pathname.split("/").pop());
}

async function fetchOk(url) {
  let response;
  try {
    response = await fetch(url);
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
  let lastPost = 0;
  const tracker = {
    sizes(value) {
      sizes = value && typeof value === "object" ? value : null;
    },
    add(name, bytes) {
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

async function init({ indexURL, modelURL, sandboxURL, diagnosisURL, floatsURL, sizesURL, interruptBuffer, count, handoff }) {
  const t0 = performance.now();
  const stages = {};
  const realFetch = self.fetch.bind(self);
  const tracker = progressTracker();
  const pending = [];
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
    ]);
    files.catch(() => {});
    await checkRuntimeFiles(indexURL);
    if (count) watchModuleScripts(tracker);
    let loadPyodide;
    try {
      ({ loadPyodide } = await import(indexURL + "pyodide.mjs"));
    } catch (err) {
      throw new Error(`pyodide.mjs could not be loaded (${err.message})`);
    }
    stages.imported = performance.now() - t0;
    pyodide = await loadPyodide({ indexURL, env: { HOME }, jsglobals: Object.create(null) });
    stages.loaded = performance.now() - t0;
    const [model, sandboxSource, diagnosisSource, floats] = await files;
    self.fetch = realFetch;
    tracker.report();
    post({ type: "progress", text: "Loading the trained model…" });
    floatsSource = floats;
    const modelBytes = new Uint8Array(model);
    checkModel(modelBytes);
    const FS = pyodide.FS;
    fs = { mkdirTree: FS.mkdirTree.bind(FS), writeFile: FS.writeFile.bind(FS) };
    fs.mkdirTree("/opt/mha");
    fs.writeFile("/opt/mha/sandbox.py", sandboxSource);
    fs.writeFile("/opt/mha/diagnosis.py", diagnosisSource);
    fs.mkdirTree(HOME);
    fs.writeFile(`${HOME}/${MODEL_FILE}`, modelBytes);
    pyodide.setStdout(writer("stdout"));
    pyodide.setStderr(writer("stderr"));
    pyodide.setStdin({ stdin: () => null }); // sys.stdin reads nothing (sandbox.py words input())
    if (interruptBuffer) pyodide.setInterruptBuffer(interruptBuffer);
    pyodide.runPython(
      `import os, sys\nos.chdir(${JSON.stringify(HOME)})\nsys.path.append("/opt/mha")\n` +
        "import sandbox, diagnosis\nsandbox.start()\n",
    );
    const sandbox = pyodide.pyimport("sandbox");
    const diagnosis = pyodide.pyimport("diagnosis");
    checker = { run: sandbox.run, collect: diagnosis.collect, explain: diagnosis.explain_collected, healthy: sandbox.healthy };
    const python = pyodide.runPython("import sys; sys.version.split()[0]");
    await Promise.all(pending); // the handed-off copies are complete before the next worker looks for them
    post({ type: "ready", pyodide: pyodide.version, python, ms: performance.now() - t0, stages });
  } catch (err) {
    self.fetch = realFetch;
    post({ type: "error", message: oneLine(err) });
  }
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

function explain({ token }) {
  if (!job || job.token !== token || job.type !== "check" || job.explained) return;
  job.explained = true;
  let message;
  try {
    fs.mkdirTree("/opt/reference");
    fs.writeFile(REFERENCE, floatsSource);
    message = String(checker.explain());
  } catch (err) {
    message = failure(err).message;
  }
  post({ type: "done", token, result: { message }, health: health({}) });
}

self.onmessage = (event) => {
  const message = event.data || {};
  if (message.type === "init") {
    init(message);
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
