// Module Web Worker that runs the learner's Python with Pyodide.
//
// Messages in:  {type: "init", indexURL, modelURL, checkerURL, interruptBuffer?}
//               {type: "run" | "check", id, source}
// Messages out: {type: "progress", text}
//               {type: "ready", pyodide, python, ms}  |  {type: "error", message}
//               {type: "output", id, stream, text}    (prints during a job)
//               {type: "done", id, result}            (result: JSON from mha_checker)
//
// Pyodide is imported from the absolute indexURL the page computed (so the
// site works under any sub-path), the trained model is written to
// /home/pyodide/microgpt-trained.json, and the checker becomes the module
// mha_checker. With a shared interrupt buffer, the page stops runaway code by
// writing 2 (SIGINT) into it: Python raises KeyboardInterrupt and stays usable.

const OUTPUT_LIMIT = 100000; // characters of printed output passed on per job
const HOME = "/home/pyodide";

let pyodide = null;
let runFn = null;
let checkFn = null;
let job = null; // {id, sent}

function post(message) {
  self.postMessage(message);
}

function emit(stream, text) {
  if (!job) return;
  const line = text + "\n";
  if (job.sent >= OUTPUT_LIMIT) return;
  job.sent += line.length;
  post({ type: "output", id: job.id, stream, text: line });
  if (job.sent >= OUTPUT_LIMIT) {
    post({ type: "output", id: job.id, stream: "stderr", text: "[more output was cut here]\n" });
  }
}

async function fetchOk(url) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url} could not be loaded (HTTP ${response.status})`);
  return response;
}

async function init({ indexURL, modelURL, checkerURL, interruptBuffer }) {
  const t0 = performance.now();
  const stages = {};
  try {
    post({ type: "progress", text: "Downloading Python (Pyodide)…" });
    const modelBytes = fetchOk(modelURL).then((r) => r.arrayBuffer());
    const checkerSource = fetchOk(checkerURL).then((r) => r.text());
    // The checker grades with microgpt's own arithmetic, copied beside the model by the build.
    const microgptSource = fetchOk(new URL("microgpt.py", modelURL).href).then((r) => r.text());
    const { loadPyodide } = await import(indexURL + "pyodide.mjs");
    stages.imported = performance.now() - t0;
    pyodide = await loadPyodide({ indexURL, env: { HOME } });
    stages.loaded = performance.now() - t0;
    post({ type: "progress", text: "Loading the trained model…" });
    pyodide.setStdout({ batched: (text) => emit("stdout", text) });
    pyodide.setStderr({ batched: (text) => emit("stderr", text) });
    if (interruptBuffer) pyodide.setInterruptBuffer(interruptBuffer);
    pyodide.FS.mkdirTree(HOME);
    pyodide.FS.writeFile(`${HOME}/microgpt-trained.json`, new Uint8Array(await modelBytes));
    pyodide.FS.mkdirTree("/opt/mha");
    pyodide.FS.writeFile("/opt/mha/mha_checker.py", await checkerSource);
    pyodide.FS.writeFile("/opt/mha/microgpt.py", await microgptSource);
    pyodide.runPython(
      `import os, sys\nos.chdir(${JSON.stringify(HOME)})\nsys.path.append("/opt/mha")\n` +
        "import mha_checker\nmha_checker.cases()\n",
    );
    const checker = pyodide.pyimport("mha_checker");
    runFn = checker.run;
    checkFn = checker.check;
    const python = pyodide.runPython("import sys; sys.version.split()[0]");
    post({ type: "ready", pyodide: pyodide.version, python, ms: performance.now() - t0, stages });
  } catch (err) {
    post({ type: "error", message: String((err && err.message) || err) });
  }
}

function runJob({ type, id, source }) {
  job = { id, sent: 0 };
  let result;
  try {
    const text = (type === "check" ? checkFn : runFn)(source);
    result = JSON.parse(text);
  } catch (err) {
    // Only reached when Python failed outside the learner's code (or was
    // interrupted between two of its statements).
    const message = String((err && err.message) || err);
    const interrupted = /KeyboardInterrupt/.test(message);
    result = { ok: false, passed: false, interrupted, error: message, message };
  }
  try {
    pyodide.runPython("import sys\nsys.stdout.flush()\nsys.stderr.flush()");
  } catch (err) {
    // Flushing can only fail if the learner replaced the streams; ignore.
  }
  post({ type: "done", id, result });
  job = null;
}

self.onmessage = (event) => {
  const message = event.data || {};
  if (message.type === "init") {
    init(message);
  } else if (message.type === "run" || message.type === "check") {
    if (!runFn) {
      post({ type: "done", id: message.id, result: { ok: false, passed: false, error: "Python is not ready yet.", message: "Python is not ready yet." } });
      return;
    }
    runJob(message);
  }
};
