// Main-thread side of the exercise's Python: one Pyodide worker, one job at a time.
//
// The worker starts as soon as a PythonRunner is made. Every job (Run or
// Check) gets TIME_LIMIT_MS. If it takes longer:
// - cross-origin isolated pages write SIGINT into a SharedArrayBuffer that
//   Pyodide watches, so Python raises KeyboardInterrupt and the interpreter
//   survives; if it still has not answered GRACE_MS later (code that swallows
//   KeyboardInterrupt), the worker is replaced as below;
// - other pages cannot share memory with the worker, so it is terminated and
//   replaced by a standby worker that started loading once the job had run
//   for STANDBY_AFTER_MS (dropped again when the job ends in time).

import { siteUrl } from "../runtime/assets.js";

export const TIME_LIMIT_MS = 5000;
const GRACE_MS = 1000;
const STANDBY_AFTER_MS = 1000;

function stoppedMessage(how) {
  const seconds = TIME_LIMIT_MS / 1000;
  return how === "interrupt"
    ? `Stopped: your code ran for more than ${seconds} seconds (a loop that never ends?). ` +
        "Python is still running, so you can fix the code and try again."
    : `Stopped: your code ran for more than ${seconds} seconds (a loop that never ends?). ` +
        "Python had to be restarted, which can take a few seconds.";
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
    this.standby = null;
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

  readyText(info) {
    return `Python ${info.python} is ready (Pyodide ${info.pyodide}, in this page).`;
  }

  // A worker and its readiness. Only the current slot (this.slot) reports
  // state and results; a standby slot loads quietly until it is promoted.
  spawn() {
    const slot = { started: performance.now(), info: null, failed: null };
    slot.ready = new Promise((resolve, reject) => {
      slot.resolve = resolve;
      slot.reject = reject;
    });
    slot.ready.catch(() => {});
    const worker = new Worker(new URL("./exercise/worker.js", import.meta.url), { type: "module", name: "pyodide-exercise" });
    slot.worker = worker;
    const current = () => slot === this.slot;
    const fail = (text) => {
      slot.failed = text;
      if (current()) this.setState({ phase: "error", text: `Python could not start: ${text}` });
      slot.reject(new Error(text));
    };
    worker.onmessage = (event) => {
      const msg = event.data;
      if (msg.type === "progress") {
        if (current()) this.setState({ phase: "loading", text: msg.text });
      } else if (msg.type === "ready") {
        const now = performance.now();
        slot.info = {
          pyodide: msg.pyodide, python: msg.python, workerMs: msg.ms, stages: msg.stages,
          startedAt: slot.started, readyMs: now - slot.started, readyAt: now,
        };
        if (current()) {
          this.info = slot.info;
          this.setState({ phase: "ready", text: this.readyText(slot.info), ...slot.info });
        }
        slot.resolve(slot.info);
      } else if (msg.type === "error") {
        fail(msg.message);
      } else if (msg.type === "output") {
        if (current() && this.pending && this.pending.id === msg.id) this.onOutput(msg.stream, msg.text);
      } else if (msg.type === "done") {
        if (current()) this.finish(msg.id, msg.result);
      }
    };
    worker.onerror = (event) => {
      event.preventDefault();
      fail(event.message || "the Python worker failed to load");
    };
    worker.postMessage({
      type: "init",
      indexURL: siteUrl("vendor/pyodide/"),
      modelURL: siteUrl("wasm_assets/microgpt-trained.json"),
      checkerURL: siteUrl("js/microgpt/exercise/checker.py"),
      interruptBuffer: this.interrupt,
    });
    return slot;
  }

  // Make `slot` (or a new worker) the one that runs the jobs.
  promote(slot = this.spawn()) {
    this.slot = slot;
    this.worker = slot.worker;
    this.ready = slot.ready;
    if (slot.info) {
      this.info = slot.info;
      this.setState({ phase: "ready", text: this.readyText(slot.info), ...slot.info });
    } else if (slot.failed) {
      this.setState({ phase: "error", text: `Python could not start: ${slot.failed}` });
    } else {
      this.setState({ phase: "loading", text: "Starting Python (Pyodide)…" });
    }
  }

  startWorker() {
    this.promote();
  }

  dropStandby() {
    if (this.standby) this.standby.worker.terminate();
    this.standby = null;
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
      if (!this.isolated) {
        // Without an interrupt buffer a runaway job costs a whole new worker:
        // start loading one early, so it is (nearly) ready when the limit hits.
        job.standbyTimer = setTimeout(() => {
          if (this.pending === job && !this.standby && !this.disposed) this.standby = this.spawn();
        }, STANDBY_AFTER_MS);
      }
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
    this.clearTimers(job);
    this.worker.terminate();
    const stop = { how: "restart", limitAt: job.limitAt, answeredAt: performance.now(), readyAt: null };
    this.lastStop = stop;
    job.resolve(this.stoppedResult(job.type, "restart"));
    if (this.disposed) return;
    const standby = this.standby;
    this.standby = null;
    this.promote(standby || undefined);
    stop.usedStandby = Boolean(standby);
    this.ready.then(() => {
      stop.readyAt = Math.max(performance.now(), stop.answeredAt);
    }, () => {});
  }

  clearTimers(job) {
    clearTimeout(job.timer);
    clearTimeout(job.grace);
    clearTimeout(job.standbyTimer);
  }

  finish(id, result) {
    const job = this.pending;
    if (!job || job.id !== id) return;
    this.pending = null;
    this.clearTimers(job);
    this.dropStandby();
    this.setState({ ...this.info, phase: "ready", text: this.readyText(this.info) });
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
      this.clearTimers(job);
      job.resolve(this.stoppedResult(job.type, "restart"));
    }
    this.dropStandby();
    if (this.worker) this.worker.terminate();
    this.worker = null;
  }
}
