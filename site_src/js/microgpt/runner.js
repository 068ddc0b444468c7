// Main-thread side of the exercise's Python: one Pyodide worker, one job at a time.
//
// Every job (Run or Check) gets TIME_LIMIT_MS. If it takes longer:
// - cross-origin isolated pages write SIGINT into a SharedArrayBuffer that
//   Pyodide watches, so Python raises KeyboardInterrupt and the interpreter
//   survives; if it still has not answered GRACE_MS later (code that swallows
//   KeyboardInterrupt), the worker is replaced as below;
// - other pages cannot share memory with the worker, so it is terminated and
//   replaced by a standby worker that started loading once the job had run
//   for STANDBY_AFTER_MS (dropped again when the job ends in time).
// Each worker gets its own interrupt buffer, so a new one never starts with
// the old one's signal. When the worker says after a job that its Python can
// no longer be trusted (health), it is replaced at once, and the job's result
// carries a line that says why. Every result says how the job ended.

import { siteUrl } from "../runtime/assets.js";

export const TIME_LIMIT_MS = 5000;
// Characters shown per job, whatever the worker sends (Python cuts at 20,000
// and adds a line saying so; this leaves room for that line).
export const OUTPUT_LIMIT = 21000;
const GRACE_MS = 1000;
const STANDBY_AFTER_MS = 1000;
const SLOW_START_MS = 60000;

function token() {
  const bytes = new Uint32Array(4);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(36)).join("");
}

export class PythonRunner {
  constructor({ onState = () => {}, onOutput = () => {} } = {}) {
    this.onState = onState;
    this.onOutput = onOutput;
    this.isolated = Boolean(globalThis.crossOriginIsolated && typeof SharedArrayBuffer === "function");
    this.queue = Promise.resolve();
    this.pending = null;
    this.standby = null;
    this.lastStop = null;
    this.info = null;
    this.disposed = false;
    this.promote();
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
    slot.interrupt = this.isolated ? new Uint8Array(new SharedArrayBuffer(1)) : null;
    slot.ready = new Promise((resolve, reject) => {
      slot.resolve = resolve;
      slot.reject = reject;
    });
    slot.ready.catch(() => {});
    const worker = new Worker(new URL("./exercise/worker.js", import.meta.url), { type: "module", name: "pyodide-exercise" });
    slot.worker = worker;
    const current = () => slot === this.slot;
    const fail = (text) => {
      if (slot.failed || slot.info) return;
      slot.failed = text;
      clearTimeout(slot.slowTimer);
      if (current()) this.setState({ phase: "error", text: `Python could not start: ${text}.` });
      slot.reject(new Error(text));
    };
    slot.slowTimer = setTimeout(() => {
      if (current() && !slot.info && !slot.failed) {
        this.setState({ phase: "loading", text: "Python is taking more than a minute to start; it may be a slow connection. Still waiting…" });
      }
    }, SLOW_START_MS);
    worker.onmessage = (event) => {
      const msg = event.data || {};
      if (msg.type === "progress") {
        if (current() && !slot.info) this.setState({ phase: "loading", text: msg.text });
      } else if (msg.type === "ready") {
        clearTimeout(slot.slowTimer);
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
        fail(String(msg.message));
      } else if (msg.type === "output") {
        const job = this.pending;
        if (current() && job && job.token === msg.token) this.show(job, msg.stream, String(msg.text));
      } else if (msg.type === "done") {
        if (current()) this.finish(msg.token, msg.result, msg.health);
      }
    };
    worker.onerror = (event) => {
      event.preventDefault();
      if (!slot.info) fail(event.message || "the Python worker failed to load");
      else if (current() && this.pending) this.hardStop(this.pending, "crash");
    };
    worker.postMessage({
      type: "init",
      indexURL: siteUrl("vendor/pyodide/"),
      modelURL: siteUrl("wasm_assets/microgpt-trained.json"),
      sandboxURL: siteUrl("pyodide/sandbox.py"),
      diagnosisURL: siteUrl("pyodide/diagnosis.py"),
      floatsURL: siteUrl("wasm_assets/microgpt_floats.py"),
      interruptBuffer: slot.interrupt,
    });
    return slot;
  }

  // Cap what one job shows, whatever arrives.
  show(job, stream, text) {
    if (job.shown >= OUTPUT_LIMIT) return;
    const room = OUTPUT_LIMIT - job.shown;
    const part = text.length > room ? text.slice(0, room) : text;
    job.shown += part.length;
    this.onOutput(stream, part);
    if (text.length > room) this.onOutput("stderr", "\n[output cut here]\n");
  }

  // Make `slot` (or a new worker) the one that runs the jobs.
  promote(slot = this.spawn(), loadingText = "Starting Python (Pyodide)…") {
    if (this.slot && this.slot !== slot) {
      clearTimeout(this.slot.slowTimer);
      this.slot.worker.terminate();
    }
    this.slot = slot;
    this.ready = slot.ready;
    if (slot.info) {
      this.info = slot.info;
      this.setState({ phase: "ready", text: this.readyText(slot.info), ...slot.info });
    } else if (slot.failed) {
      this.setState({ phase: "error", text: `Python could not start: ${slot.failed}.` });
    } else {
      this.setState({ phase: "loading", text: loadingText });
    }
  }

  // A fresh interpreter: the learner's "Restart Python", or after an untrusted job.
  restart(why = "") {
    if (this.disposed) return;
    if (this.pending) this.hardStop(this.pending, "restart");
    this.dropStandby();
    this.promote(undefined, why ? `Restarting Python: ${why}…` : "Restarting Python…");
  }

  dropStandby() {
    if (this.standby) this.standby.worker.terminate();
    this.standby = null;
  }

  // Queue a job; resolves with the worker's result plus timedOut, restarted, notice.
  submit(type, source, inputs) {
    const task = this.queue.then(() => this.execute(type, String(source), inputs));
    this.queue = task.catch(() => {});
    return task;
  }

  run(source) {
    return this.submit("run", source);
  }

  check(source, inputs) {
    return this.submit("check", source, inputs);
  }

  async execute(type, source, inputs) {
    if (this.disposed) throw new Error("the exercise was closed");
    await this.ready;
    const slot = this.slot;
    if (slot.interrupt) Atomics.store(slot.interrupt, 0, 0);
    return new Promise((resolve) => {
      const job = { token: token(), type, resolve, slot, shown: 0, started: performance.now() };
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
      slot.worker.postMessage({ type, token: job.token, source, inputs });
    });
  }

  overrun(job) {
    if (this.pending !== job) return;
    job.limitAt = performance.now();
    if (job.slot.interrupt) {
      Atomics.store(job.slot.interrupt, 0, 2); // SIGINT -> KeyboardInterrupt in Python
      job.grace = setTimeout(() => this.hardStop(job, "time"), GRACE_MS);
    } else {
      this.hardStop(job, "time");
    }
  }

  // End `job` without Python's answer and put a new interpreter in place.
  hardStop(job, why) {
    if (this.pending !== job) return;
    this.pending = null;
    this.clearTimers(job);
    const stop = { how: "restart", why, limitAt: job.limitAt ?? performance.now(), answeredAt: performance.now(), readyAt: null };
    this.lastStop = stop;
    job.resolve(this.stoppedResult(job, why));
    if (this.disposed) return;
    const standby = this.standby;
    this.standby = null;
    if (why !== "restart") this.promote(standby || undefined, "Restarting Python…");
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

  finish(tokenValue, result, health) {
    const job = this.pending;
    if (!job || job.token !== tokenValue) return;
    this.pending = null;
    this.clearTimers(job);
    this.dropStandby();
    const now = performance.now();
    result = result && typeof result === "object" ? result : {};
    const interruptedByUs = job.limitAt !== undefined && result.stop === "interrupt";
    const notice = health ? `Python was restarted: ${health}. The next Run or Check starts in a fresh interpreter.` : "";
    if (health) {
      this.promote(undefined, `Restarting Python: ${health}…`);
    } else {
      this.setState({ ...this.info, phase: "ready", text: this.readyText(this.info) });
    }
    if (interruptedByUs) {
      this.lastStop = { how: "interrupt", why: "time", limitAt: job.limitAt, answeredAt: now, readyAt: health ? null : now };
      job.resolve({ ...this.stoppedResult(job, "time", "interrupt"), notice });
      return;
    }
    job.resolve({ ...result, timedOut: false, restarted: Boolean(health), notice, ms: now - job.started });
  }

  stoppedResult(job, why, how = "restart") {
    const seconds = TIME_LIMIT_MS / 1000;
    const message = {
      time: how === "interrupt"
        ? `Stopped: your code ran for more than ${seconds} seconds (a loop that never ends?). Python is still running, so you can fix the code and try again.`
        : `Stopped: your code ran for more than ${seconds} seconds (a loop that never ends?). Python had to be restarted, which can take a few seconds.`,
      crash: "Stopped: Python crashed while running your code (out of memory?). It is being restarted, which can take a few seconds.",
      restart: "Stopped: you restarted Python while your code was running.",
    }[why];
    const base = { timedOut: why === "time", restarted: how === "restart", stop: why, outputs: [] };
    return job.type === "check" ? { ...base, passed: false, message } : { ...base, ok: false, error: message };
  }

  dispose() {
    this.disposed = true;
    if (this.pending) {
      const job = this.pending;
      this.pending = null;
      this.clearTimers(job);
      job.resolve(this.stoppedResult(job, "restart"));
    }
    this.dropStandby();
    if (this.slot) {
      clearTimeout(this.slot.slowTimer);
      this.slot.worker.terminate();
    }
    this.slot = null;
  }
}
