// Main-thread side of the exercise's Python: a fresh Pyodide worker for every job.
//
// A spare worker boots in the background and waits (spare_workers.js). Each
// job (Run or Check) is handed to the spare, and the used worker is
// terminate()d when the job ends, so no job ever sees what an earlier one did:
// not its Python (builtins, modules, files in /tmp) and not its JavaScript
// (code that reached it through pyodide_js). The next spare starts booting
// only once the job has answered (or been stopped), so that its start never
// counts against the job's time limit.
//
// Every job gets TIME_LIMIT_MS. If it takes longer:
// - cross-origin isolated pages write SIGINT into a SharedArrayBuffer that
//   Pyodide watches, so Python raises KeyboardInterrupt and the job ends with
//   a readable stop; if it still has not answered GRACE_MS later (code that
//   swallows KeyboardInterrupt), the worker is terminated;
// - other pages terminate the worker at once.
// Either way a fresh spare boots and takes the next job. Each worker
// gets its own interrupt buffer, so a new one never starts with the old one's
// signal. Every result says how the job ended.
//
// A series (series()) is the one exception to one job per worker: the
// continuation the learner's function drives calls it once per word, each
// call its own job with its own time limit, all in one fresh worker that
// nothing else ran in, retired when the series ends. No verdict comes from a
// series, so a call can only spoil the calls after it in the same series.
//
// A Check comes back in two steps (see exercise/jobs.js): the numbers
// ("collected"), which the page judges with needsExplanation(collected) before
// anything else runs in the worker, then, only when that says so, the
// worker's explanation of a wrong answer.

import { microgptFiles } from "./worker_files.js";
import { SpareWorkers } from "./spare_workers.js";

export { exerciseFiles, workerFiles } from "./worker_files.js";

export const TIME_LIMIT_MS = 5000;
// Characters shown per job, whatever the worker sends (Python cuts at 20,000
// and adds a line saying so; this leaves room for that line).
export const OUTPUT_LIMIT = 21000;
const GRACE_MS = 1000;

function token() {
  const bytes = new Uint32Array(4);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(36)).join("");
}

// A runner started by prestart.js from the page's head, before the page is
// parsed and its other scripts have run (~0.5 s): the exercise's widget claims
// it. prestart.js runs as a bundle of its own (site_src/hooks/python_prestart.py),
// with its own copy of this module, so the runner is handed over on the global object.
const EARLY = "mhaEarlyPythonRunner";

export function startEarly(files = null) {
  if (!globalThis[EARLY]) globalThis[EARLY] = new PythonRunner({}, files);
  return globalThis[EARLY];
}

// The exercise's runner: the one started early if it loads the same files, else a new one.
export function claimRunner(callbacks, files = microgptFiles()) {
  const runner = globalThis[EARLY];
  delete globalThis[EARLY];
  if (runner && (runner.files.exerciseURL || "") !== (files.exerciseURL || "")) runner.dispose();
  if (!runner || runner.disposed) return new PythonRunner(callbacks, files);
  runner.attach(callbacks);
  return runner;
}

export class PythonRunner extends SpareWorkers {
  // files: the worker's files (workerFiles() and the page's exercise file; microgpt's by default).
  constructor(callbacks = {}, files = null) {
    super(files || microgptFiles(), callbacks);
    this.queue = Promise.resolve();
    this.lastStop = null;
    this.boot("Starting Python (Pyodide)…");
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

  // A fresh interpreter now: the learner's "Restart Python".
  restart(why = "") {
    if (this.disposed) return;
    const text = why ? `Restarting Python: ${why}…` : "Restarting Python…";
    if (this.pending) {
      this.hardStop(this.pending, "restart"); // which boots a fresh spare: no job has reached it
      if (this.spare && !this.spare.info) {
        this.spare.loadingText = text;
        this.showSpare();
        return;
      }
    }
    this.dropSpare();
    this.boot(text);
  }
  // Queue a job; resolves with the worker's result plus timedOut, restarted, notice, ms.
  submit(type, source, inputs, needsExplanation) {
    const task = this.queue.then(() => this.execute(type, String(source), inputs, needsExplanation));
    this.queue = task.catch(() => {});
    return task;
  }

  run(source) {
    return this.submit("run", source);
  }

  // needsExplanation(collected) -> boolean, or {expected} (JSON text handed to the
  // explanation of an exercise of functions): called with {outputs, failed, stop}
  // as soon as the numbers arrive; the explanation is asked for only when it says so.
  check(source, inputs, needsExplanation = () => true) {
    return this.submit("check", source, inputs, needsExplanation);
  }
  // task(call) with call(inputs) -> the numbers {outputs, failed, stop} of one
  // call of the learner's function (calls.py collect, a Check's first step),
  // every call in the same fresh worker, each with its own time limit. After a
  // call that does not end cleanly (time, crash, Python unwell) the worker is
  // gone, and the calls after it answer at once with that call's stop.
  series(source, task) {
    const work = this.queue.then(async () => {
      const slot = await this.takeSpare();
      const call = (inputs) => this.call(slot, String(source), inputs);
      try {
        return await task(call);
      } finally {
        if (!slot.retired) this.retire({ slot });
      }
    });
    this.queue = work.catch(() => {});
    return work;
  }

  call(slot, source, inputs) {
    if (slot.retired || this.disposed)
      return Promise.resolve(slot.stopped || { outputs: [], failed: true, stop: "restart", message: "" });
    return new Promise((resolve) => {
      const job = { token: token(), type: "call", resolve, slot, shown: 0, started: performance.now(), keep: true };
      this.pending = job;
      this.setState({ ...this.state, phase: "busy", text: "Running your code…" });
      job.timer = setTimeout(() => this.overrun(job), TIME_LIMIT_MS);
      slot.worker.postMessage({ type: "call", token: job.token, source, inputs });
    });
  }

  async execute(type, source, inputs, needsExplanation) {
    const slot = await this.takeSpare();
    return new Promise((resolve) => {
      const job = { token: token(), type, resolve, slot, shown: 0, started: performance.now(), needsExplanation };
      this.pending = job;
      this.setState({
        ...this.state,
        phase: "busy",
        text: type === "check" ? "Checking your code…" : "Running your code…",
      });
      job.timer = setTimeout(() => this.overrun(job), TIME_LIMIT_MS);
      slot.worker.postMessage({ type, token: job.token, source, inputs });
    });
  }

  // A Check's numbers: decide now whether the worker should explain them.
  collected(job, result) {
    if (job.collected) return;
    job.collected = result && typeof result === "object" ? result : { outputs: [], failed: true, stop: "" };
    let explain = true;
    try {
      explain = job.needsExplanation(job.collected);
    } catch (err) {
      console.warn(err);
    }
    const expected = explain && typeof explain === "object" ? { expected: String(explain.expected) } : {};
    if (explain) job.slot.worker.postMessage({ type: "explain", token: job.token, ...expected });
    else this.finish(job, { message: "" }, "");
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

  // The used worker goes; a fresh spare boots for the next job.
  retire(job, stop) {
    clearTimeout(job.timer);
    clearTimeout(job.grace);
    job.slot.worker.terminate();
    job.slot.retired = true;
    this.pending = null;
    this.release(job.slot); // (a series ending retires its slot with no job)
    if (this.disposed) return;
    if (!this.spare) this.boot("Starting a fresh Python…");
    this.showSpare();
    if (stop) {
      this.lastStop = stop;
      this.ready.then(
        () => {
          stop.readyAt = Math.max(performance.now(), stop.answeredAt);
        },
        () => {},
      );
    }
  }

  // End `job` without Python's answer.
  hardStop(job, why) {
    if (this.pending !== job) return;
    const now = performance.now();
    const stop = { how: "restart", why, limitAt: job.limitAt ?? now, answeredAt: now, readyAt: null };
    this.retire(job, why === "restart" ? null : stop);
    if (why === "restart") this.lastStop = stop;
    job.slot.stopped = this.stoppedResult(job, why);
    job.resolve(job.slot.stopped);
  }

  finish(job, result, health) {
    if (this.pending !== job) return;
    const now = performance.now();
    result = result && typeof result === "object" ? result : {};
    if (job.type === "check") {
      // The verdict's numbers are the ones collected first; nothing sent later replaces them.
      const first = job.collected || { outputs: [], failed: true, stop: "" };
      result = {
        message: String(result.message || ""),
        outputs: first.outputs,
        failed: first.failed,
        stop: first.stop,
      };
    }
    const interruptedByUs = job.limitAt !== undefined && result.stop === "interrupt";
    if (job.keep && !health && !interruptedByUs) {
      // a series' call: its worker takes the next call
      clearTimeout(job.timer);
      this.pending = null;
      job.resolve({ ...result, timedOut: false, ms: now - job.started });
      return;
    }
    const stop = interruptedByUs
      ? { how: "interrupt", why: "time", limitAt: job.limitAt, answeredAt: now, readyAt: null }
      : null;
    this.retire(job, stop);
    const notice = health
      ? `Python was restarted: ${health}. The next Run or Check starts in a fresh interpreter.`
      : "";
    if (job.keep) job.slot.stopped = { outputs: [], failed: true, stop: "restart", message: notice };
    if (interruptedByUs) {
      job.slot.stopped = { ...this.stoppedResult(job, "time", "interrupt"), notice };
      job.resolve(job.slot.stopped);
      return;
    }
    job.resolve({ ...result, timedOut: false, restarted: Boolean(health), notice, ms: now - job.started });
  }

  stoppedResult(job, why, how = "restart") {
    const seconds = TIME_LIMIT_MS / 1000;
    const message = {
      time:
        how === "interrupt"
          ? `Stopped: your code ran for more than ${seconds} seconds (a loop that never ends?). Python is still running, so you can fix the code and try again.`
          : `Stopped: your code ran for more than ${seconds} seconds (a loop that never ends?). Python was restarted (a fresh one takes over), so you can fix the code and try again.`,
      crash: "Stopped: Python crashed while running your code (out of memory?). A fresh Python takes over.",
      restart: "Stopped: you restarted Python while your code was running.",
    }[why];
    const base = { timedOut: why === "time", restarted: how === "restart", stop: why, outputs: [], failed: true };
    return job.type === "run" ? { ...base, ok: false, error: message } : { ...base, passed: false, message };
  }

  dispose() {
    this.disposed = true;
    if (this.pending) {
      const job = this.pending;
      clearTimeout(job.timer);
      clearTimeout(job.grace);
      job.slot.worker.terminate();
      this.pending = null;
      this.release(job.slot);
      job.resolve(this.stoppedResult(job, "restart"));
    }
    this.dropSpare();
  }
}
