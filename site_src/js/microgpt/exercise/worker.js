// Module Web Worker that runs the learner's Python with Pyodide.
//
// Messages in:  {type: "init", indexURL, modelURL, sandboxURL, diagnosisURL, floatsURL, interruptBuffer?}
//               {type: "run", token, source} | {type: "check", token, source, inputs}
// Messages out: {type: "progress", text}
//               {type: "ready", pyodide, python, ms, stages}  |  {type: "error", message}
//               {type: "output", token, stream, text}   (prints during a Run, already cut to the limit)
//               {type: "done", token, result, health}   (health: "" or why Python must be replaced)
//
// Python gets an empty object as its `js` module, so the learner's code
// cannot reach postMessage, close() or this worker's state. Before every job
// the folder Python works in is emptied and the trained model written again;
// sandbox.restore() puts every module back as it was at the start. After
// the job, sandbox.healthy() and the memory size say whether this
// interpreter can be trusted with the next job; if not, the page replaces it.

// Characters of printed output passed on per job. The checker already cuts
// prints at 20,000 (cheaply, in Python); this is the guard behind it.
const OUTPUT_LIMIT = 20500;
const MEMORY_LIMIT = 1024 * 1024 * 1024; // bytes of WebAssembly memory before Python is replaced
const HOME = "/home/pyodide";
const MODEL_FILE = "microgpt-trained.json";
// The files loadPyodide fetches itself; a missing one would leave it waiting for ever.
const RUNTIME_FILES = ["pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json"];

let pyodide = null;
let fs = null; // the file-system calls, kept before any learner code runs
let modelBytes = null;
let checker = null; // {run, collect, explain, healthy}
let floatsSource = null; // microgpt's float arithmetic: written for Python only after the learner's code ran
let job = null; // {token, shown, cut, decoder}

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

async function init({ indexURL, modelURL, sandboxURL, diagnosisURL, floatsURL, interruptBuffer }) {
  const t0 = performance.now();
  const stages = {};
  try {
    post({ type: "progress", text: "Downloading Python (Pyodide)…" });
    const files = Promise.all([
      fetchOk(modelURL).then((r) => r.arrayBuffer()),
      fetchOk(sandboxURL).then((r) => r.text()),
      fetchOk(diagnosisURL).then((r) => r.text()),
      fetchOk(floatsURL).then((r) => r.text()),
    ]);
    files.catch(() => {});
    await checkRuntimeFiles(indexURL);
    let loadPyodide;
    try {
      ({ loadPyodide } = await import(indexURL + "pyodide.mjs"));
    } catch (err) {
      throw new Error(`pyodide.mjs could not be loaded (${err.message})`);
    }
    stages.imported = performance.now() - t0;
    pyodide = await loadPyodide({ indexURL, env: { HOME }, jsglobals: Object.create(null) });
    stages.loaded = performance.now() - t0;
    post({ type: "progress", text: "Loading the trained model…" });
    const [model, sandboxSource, diagnosisSource, floats] = await files;
    floatsSource = floats;
    modelBytes = new Uint8Array(model);
    checkModel(modelBytes);
    const FS = pyodide.FS;
    fs = {
      mkdirTree: FS.mkdirTree.bind(FS), readdir: FS.readdir.bind(FS), stat: FS.stat.bind(FS),
      isDir: FS.isDir.bind(FS), unlink: FS.unlink.bind(FS), rmdir: FS.rmdir.bind(FS), writeFile: FS.writeFile.bind(FS),
    };
    fs.mkdirTree("/opt/mha");
    fs.writeFile("/opt/mha/sandbox.py", sandboxSource);
    fs.writeFile("/opt/mha/diagnosis.py", diagnosisSource);
    cleanHome();
    pyodide.setStdout(writer("stdout"));
    pyodide.setStderr(writer("stderr"));
    if (interruptBuffer) pyodide.setInterruptBuffer(interruptBuffer);
    pyodide.runPython(
      `import os, sys\nos.chdir(${JSON.stringify(HOME)})\nsys.path.append("/opt/mha")\n` +
        "import sandbox, diagnosis\nsandbox.start()\n",
    );
    const sandbox = pyodide.pyimport("sandbox");
    const diagnosis = pyodide.pyimport("diagnosis");
    checker = {
      run: sandbox.run, collect: diagnosis.collect, explain: diagnosis.explain_collected, healthy: sandbox.healthy,
    };
    const python = pyodide.runPython("import sys; sys.version.split()[0]");
    post({ type: "ready", pyodide: pyodide.version, python, ms: performance.now() - t0, stages });
  } catch (err) {
    post({ type: "error", message: oneLine(err) });
  }
}

function oneLine(err) {
  const text = String((err && err.message) || err);
  const last = text.trim().split("\n").filter(Boolean).pop() || text;
  return last.length > 300 ? `${last.slice(0, 300)}…` : last;
}

// The folder the learner's code works in: emptied, then the model written again.
function cleanHome() {
  const remove = (path) => {
    if (fs.isDir(fs.stat(path).mode)) {
      for (const name of fs.readdir(path)) if (name !== "." && name !== "..") remove(`${path}/${name}`);
      if (path !== HOME) fs.rmdir(path);
    } else {
      fs.unlink(path);
    }
  };
  try {
    remove(HOME);
  } catch (err) {
    // The folder itself was removed: make it again below.
  }
  fs.mkdirTree(HOME);
  fs.writeFile(`${HOME}/${MODEL_FILE}`, modelBytes);
}

function memoryBytes() {
  try {
    return pyodide._module.HEAP8.buffer.byteLength;
  } catch (err) {
    return 0;
  }
}

function runJob({ type, token, source, inputs }) {
  job = { token, shown: 0, cut: false, decoder: new TextDecoder() };
  let result;
  let health = "";
  try {
    cleanHome();
    if (type === "check") {
      result = JSON.parse(checker.collect(source, JSON.stringify(inputs)));
      // microgpt's arithmetic reaches Python only now, after the learner's code has run.
      fs.mkdirTree("/opt/reference");
      fs.writeFile("/opt/reference/microgpt_floats.py", floatsSource);
      result.message = checker.explain();
    } else {
      result = JSON.parse(checker.run(source));
    }
  } catch (err) {
    // Python itself failed (not the learner's code, which the checker catches).
    const message = oneLine(err);
    result = { ok: false, outputs: [], error: message, message, stop: /KeyboardInterrupt/.test(message) ? "interrupt" : "" };
    health = "Python stopped working";
  }
  if (!health) {
    try {
      health = checker.healthy();
    } catch (err) {
      health = "Python stopped working";
    }
  }
  if (!health && result.stop === "memory") health = "your code used up Python's memory";
  if (!health && memoryBytes() > MEMORY_LIMIT) health = "your code made Python use a lot of memory";
  post({ type: "done", token, result, health });
  job = null;
}

self.onmessage = (event) => {
  const message = event.data || {};
  if (message.type === "init") {
    init(message);
  } else if (message.type === "run" || message.type === "check") {
    if (!checker) {
      const text = "Python is not ready yet.";
      post({ type: "done", token: message.token, result: { ok: false, outputs: [], error: text, message: text, stop: "" }, health: "" });
      return;
    }
    runJob(message);
  }
};
