// Main-thread side of the exercise's Python: one Pyodide worker, one job at a time.
//
// The worker starts as soon as a PythonRunner is made. Every job (Run or
// Check) gets TIME_LIMIT_MS. If it takes longer:
// - cross-origin isolated pages write SIGINT into a SharedArrayBuffer that
//   Pyodide watches, so Python raises KeyboardInterrupt and the interpreter
//   survives; if it still has not answered GRACE_MS later (code that swallows
//   KeyboardInterrupt), the worker is replaced as below;
// - other pages cannot share memory with the worker, so it is terminated and a
//   fresh one started.

import { siteUrl } from "./runtime/assets.js";

export const TIME_LIMIT_MS = 5000;
const GRACE_MS = 1000;

function stoppedMessage(how) {
  const seconds = TIME_LIMIT_MS / 1000;
  return how === "interrupt"
    ? `Stopped: your code ran for more than ${seconds} seconds (a loop that never ends?). ` +
        "Python is still running, so you can fix the code and try again."
    : `Stopped: your code ran for more than ${seconds} seconds (a loop that never ends?). ` +
        "Python had to be restarted; it will be ready again in a few seconds.";
}

export class PythonRunner {
  constructor({ onState = () => {}, onOutput = () => {} } = {}) {
    this.onState = onState;
    this.onOutput = onOutput;
    this.isolated = Boolean(globalThis.crossOriginIsolated && typeof SharedArrayBuffer === "function");
    this.interrupt = this.isolated ? new Uint8Array(new SharedArrayBuffer(1)) : null;
    this.queue = Promise.resolve();
    this.nextId = 1;
    this.pending = null;
    this.lastStop = null;
    this.info = null;
    this.disposed = false;
    this.startWorker();
  }

  setState(state) {
    this.state = state;
    try {
      this.onState(state);
    } catch (err) {
      console.warn(err);
    }
  }

  startWorker() {
    const started = performance.now();
    let resolve;
    let reject;
    this.ready = new Promise((res, rej) => {
      resolve = res;
      reject = rej;
    });
    this.ready.catch(() => {});
    const worker = new Worker(new URL("./exercise/worker.js", import.meta.url), { type: "module", name: "pyodide-exercise" });
    this.worker = worker;
    this.setState({ phase: "loading", text: "Starting Python (Pyodide)…" });
    worker.onmessage = (event) => {
      if (worker !== this.worker) return;
      const msg = event.data;
      if (msg.type === "progress") {
        this.setState({ phase: "loading", text: msg.text });
      } else if (msg.type === "ready") {
        this.info = {
          pyodide: msg.pyodide, python: msg.python, workerMs: msg.ms, stages: msg.stages,
          startedAt: started, readyMs: performance.now() - started, readyAt: performance.now(),
        };
        this.setState({ phase: "ready", text: `Python ${msg.python} is ready (Pyodide ${msg.pyodide}, in this page).`, ...this.info });
        resolve(this.info);
      } else if (msg.type === "error") {
        this.setState({ phase: "error", text: `Python could not start: ${msg.message}` });
        reject(new Error(msg.message));
      } else if (msg.type === "output") {
        if (this.pending && this.pending.id === msg.id) this.onOutput(msg.stream, msg.text);
      } else if (msg.type === "done") {
        this.finish(msg.id, msg.result);
      }
    };
    worker.onerror = (event) => {
      if (worker !== this.worker) return;
      event.preventDefault();
      const text = event.message || "the Python worker failed to load";
      this.setState({ phase: "error", text: `Python could not start: ${text}` });
      reject(new Error(text));
    };
    worker.postMessage({
      type: "init",
      indexURL: siteUrl("vendor/pyodide/"),
      modelURL: siteUrl("wasm_assets/microgpt-trained.json"),
      checkerURL: siteUrl("js/exercise/checker.py"),
      interruptBuffer: this.interrupt,
    });
  }

  // Queue a job; resolves with the worker's result plus timedOut / restarted.
  submit(type, source) {
    const task = this.queue.then(() => this.execute(type, String(source)));
    this.queue = task.catch(() => {});
    return task;
  }

  run(source) {
    return this.submit("run", source);
  }

  check(source) {
    return this.submit("check", source);
  }

  async execute(type, source) {
    if (this.disposed) throw new Error("the exercise was closed");
    await this.ready;
    const id = this.nextId++;
    if (this.interrupt) Atomics.store(this.interrupt, 0, 0);
    return new Promise((resolve) => {
      const job = { id, type, resolve, started: performance.now() };
      this.pending = job;
      this.setState({ ...this.state, phase: "busy", text: type === "check" ? "Checking your code…" : "Running your code…" });
      job.timer = setTimeout(() => this.overrun(job), TIME_LIMIT_MS);
      this.worker.postMessage({ type, id, source });
    });
  }

  overrun(job) {
    if (this.pending !== job) return;
    job.limitAt = performance.now();
    if (this.interrupt) {
      Atomics.store(this.interrupt, 0, 2); // SIGINT -> KeyboardInterrupt in Python
      job.grace = setTimeout(() => this.hardStop(job), GRACE_MS);
    } else {
      this.hardStop(job);
    }
  }

  hardStop(job) {
    if (this.pending !== job) return;
    this.pending = null;
    clearTimeout(job.timer);
    clearTimeout(job.grace);
    this.worker.terminate();
    const stop = { how: "restart", limitAt: job.limitAt, answeredAt: performance.now(), readyAt: null };
    this.lastStop = stop;
    job.resolve(this.stoppedResult(job.type, "restart"));
    if (this.disposed) return;
    this.startWorker();
    this.ready.then(() => {
      stop.readyAt = performance.now();
    }, () => {});
  }

  finish(id, result) {
    const job = this.pending;
    if (!job || job.id !== id) return;
    this.pending = null;
    clearTimeout(job.timer);
    clearTimeout(job.grace);
    this.setState({ ...this.info, phase: "ready", text: `Python ${this.info.python} is ready (Pyodide ${this.info.pyodide}, in this page).` });
    if (result && result.interrupted) {
      const now = performance.now();
      this.lastStop = { how: "interrupt", limitAt: job.limitAt ?? now, answeredAt: now, readyAt: now };
      job.resolve(this.stoppedResult(job.type, "interrupt"));
      return;
    }
    job.resolve({ ...result, timedOut: false, restarted: false, ms: performance.now() - job.started });
  }

  stoppedResult(type, how) {
    const message = stoppedMessage(how);
    return type === "check"
      ? { passed: false, message, timedOut: true, restarted: how === "restart" }
      : { ok: false, error: message, timedOut: true, restarted: how === "restart" };
  }

  dispose() {
    this.disposed = true;
    if (this.pending) {
      const job = this.pending;
      this.pending = null;
      clearTimeout(job.timer);
      clearTimeout(job.grace);
      job.resolve(this.stoppedResult(job.type, "restart"));
    }
    if (this.worker) this.worker.terminate();
    this.worker = null;
  }
}
