// The exercise's Python workers before they take a job: the spare that boots
// in the background and waits, its start-up (the files it loads, the snapshot
// it is offered, what it downloads) and what the page shows meanwhile.
//
// PythonRunner (runner.js) builds on this class and runs the jobs: it sets
// `pending` (the job under way, whose worker is no longer the spare) and
// defines show, collected, finish and hardStop, which that worker's messages
// about its job reach.
//
// A spare boots only once the job before it has answered (or been stopped):
// a start takes seconds of busy processor in some browsers (1.6-5.8 s in
// WebKit), and beside a job it would eat into the job's time limit, which must
// measure the learner's code alone. For the same reason the page hashes and
// stores a new Python heap only between jobs (betweenJobs): a job waits for a
// store under way, and a store for the worker taken for a job or a series.
//
// Start-up: each worker is offered the memory snapshot this browser keeps
// (snapshot.js), made by the first worker that started Python the normal way
// and handed over before that worker was given any job; a worker restores it
// instead of starting Python, or starts normally if it does not fit.

import { OFFLINE_ADVICE, STALE_MESSAGE, liveBuild } from "../runtime/assets.js";
import { relayStalls } from "../runtime/download_watch.js";
import { downloads, tellServiceWorker } from "./worker_files.js";
import { SNAPSHOT_NEWS, snapshotNews, snapshotOffer } from "./snapshot.js";

const SLOW_START_MS = 60000;

export class SpareWorkers {
  // files: the workers' files (workerFiles() and the page's exercise file).
  constructor(files, callbacks = {}) {
    this.files = files;
    this.attach(callbacks);
    this.isolated = Boolean(globalThis.crossOriginIsolated && typeof SharedArrayBuffer === "function");
    this.pending = null; // the job under way
    this.taken = null; // the worker handed out for a job or a series, until it is retired
    this.spare = null;
    this.info = null;
    this.disposed = false;
    // What each new worker is offered (snapshot.js): `offer` while it is known,
    // `snapshot` a promise of it (pending while a new snapshot is being stored).
    this.offer = snapshotOffer();
    this.snapshot = Promise.resolve(this.offer);
    this.module = null; // Pyodide's compiled WebAssembly, from the first worker that was ready
    this.storing = null; // a heap being hashed and stored (betweenJobs), settled or not
    this.spawned = false; // whether a worker was started (the first one downloads differently)
  }

  // Who hears of this runner's state and output; told the current state at once.
  attach({ onState = () => {}, onOutput = () => {} } = {}) {
    this.onState = onState;
    this.onOutput = onOutput;
    if (this.state) this.setState(this.state);
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

  // State of the spare, unless a job is running (then the job's "busy" stands).
  showSpare(loadingText) {
    if (this.pending || this.disposed) return;
    const slot = this.spare;
    if (!slot) return;
    if (slot.info) {
      this.info = slot.info;
      this.setState({ phase: "ready", text: this.readyText(slot.info), ...slot.info });
    } else if (slot.failed) {
      this.setState({ phase: "error", text: `Python could not start: ${slot.failed}.` });
    } else {
      this.setState({ phase: "loading", text: loadingText || slot.loadingText });
    }
  }

  // A change of the stored snapshot under way: workers started meanwhile wait for its offer.
  changeOffer(promise) {
    this.offer = null;
    this.snapshot = promise;
    promise.then(
      (offer) => {
        if (this.snapshot === promise) this.offer = offer;
      },
      () => {},
    );
  }

  // Runs task() once no worker is taken; a job asked for meanwhile starts its clock after it.
  // Both sides decide synchronously (takeSpare marks a worker taken in the same step that
  // hands it out, and this sets `storing` in the step that starts the task), so no job and
  // store can both find the other absent: with a gap between the two, a job taken just as
  // the first Python was ready once shared the processor with the store.
  async betweenJobs(task) {
    while (this.taken) await this.taken.freed;
    const work = task();
    const storing = Promise.resolve(work).catch(() => {});
    this.storing = storing;
    try {
      return await work;
    } finally {
      if (this.storing === storing) this.storing = null;
    }
  }

  // Start the next spare worker; this.ready resolves when it can take a job.
  boot(loadingText = "Starting Python (Pyodide)…") {
    if (this.disposed) return null;
    const slot = this.spawn();
    slot.loadingText = loadingText;
    this.spare = slot;
    this.ready = slot.ready;
    this.showSpare(loadingText);
    return slot;
  }

  // A worker and its readiness.
  spawn() {
    const slot = { started: performance.now(), info: null, failed: null };
    slot.interrupt = this.isolated ? new Uint8Array(new SharedArrayBuffer(1)) : null;
    slot.ready = new Promise((resolve, reject) => {
      slot.resolve = resolve;
      slot.reject = reject;
    });
    slot.ready.catch(() => {});
    // Only the page's first worker hands its downloads to the service worker and
    // starts Pyodide's downloads early: a spare booting while no service worker
    // serves the page yet would put a second copy in the handoff cache, racing
    // the service worker that moves the first one out of it.
    const how = { ...downloads(), prefetch: false };
    if (this.spawned) how.handoff = false;
    else how.prefetch = how.count;
    this.spawned = true;
    slot.handoff = how.handoff;
    // The worker's settings travel in its name, which it reads as soon as its
    // script runs: a message would wait for this page's thread, which is busy
    // building the page while the first worker starts (~80 ms on a repeat
    // visit). What a name cannot carry follows in the "init" message.
    const settings = {
      ...this.files,
      ...how,
      offer: this.offer, // null while it is being changed: then a "snapshot" message brings it
      module: Boolean(this.module),
    };
    const worker = new Worker(new URL("./exercise/worker.js", import.meta.url), {
      type: "module",
      name: JSON.stringify(settings),
    });
    slot.worker = worker;
    const isSpare = () => slot === this.spare;
    const fail = async (reason) => {
      if (slot.failed || slot.info) return;
      slot.failed = reason;
      clearTimeout(slot.slowTimer);
      relayStalls(slot, [], null);
      // A file that did not come: offline, or replaced by a new build (runtime/assets.js liveBuild).
      const live = await liveBuild();
      const text =
        live === "new"
          ? `${STALE_MESSAGE} (${reason})`
          : live === "offline"
            ? `${reason.replace(/\s*\(.*\)$/, "")}. ${OFFLINE_ADVICE.replace(/\.$/, "")}`
            : reason;
      slot.failed = text;
      if (isSpare()) this.showSpare();
      slot.reject(new Error(text));
    };
    slot.slowTimer = setTimeout(() => {
      if (isSpare() && !slot.info && !slot.failed) {
        slot.loadingText = "Python is taking more than a minute to start; it may be a slow connection. Still waiting…";
        this.showSpare();
      }
    }, SLOW_START_MS);
    worker.onmessage = (event) => {
      const msg = event.data || {};
      const job = this.pending && this.pending.slot === slot ? this.pending : null;
      if (msg.type === "progress") {
        if (isSpare() && !slot.info && !slot.failed) {
          slot.loadingText = String(msg.text);
          slot.progress = { loaded: msg.loaded, total: msg.total };
          if (!this.pending)
            this.setState({ phase: "loading", text: slot.loadingText, loaded: msg.loaded, total: msg.total });
        }
      } else if (msg.type === "stalled") {
        // Said by the page's stall notice (runtime/stall_notice.js), whose Retry the worker hears.
        relayStalls(slot, Array.isArray(msg.list) && !slot.info && !slot.failed ? msg.list : [], () =>
          worker.postMessage({ type: "retry" }),
        );
      } else if (SNAPSHOT_NEWS.has(msg.type)) {
        // Only from a worker that has not said "ready": one no job has reached yet.
        const next =
          slot.info || slot.failed
            ? null
            : snapshotNews(msg, this.snapshot, slot.ready, (task) => this.betweenJobs(task));
        if (next) this.changeOffer(next);
      } else if (msg.type === "ready") {
        if (slot.info || slot.failed) return;
        clearTimeout(slot.slowTimer);
        relayStalls(slot, [], null);
        if (!this.module && msg.module instanceof WebAssembly.Module) this.module = msg.module;
        const now = performance.now();
        slot.info = {
          pyodide: msg.pyodide,
          python: msg.python,
          workerMs: msg.ms,
          stages: msg.stages,
          start: String(msg.start || ""),
          startedAt: slot.started,
          readyMs: now - slot.started,
          readyAt: now,
        };
        if (isSpare()) this.showSpare();
        if (slot.handoff) tellServiceWorker();
        slot.resolve(slot.info);
      } else if (msg.type === "error") {
        fail(String(msg.message));
      } else if (job && job.token === msg.token) {
        if (msg.type === "output") this.show(job, msg.stream, String(msg.text));
        else if (msg.type === "collected") this.collected(job, msg.result);
        else if (msg.type === "done") this.finish(job, msg.result, msg.health);
      }
    };
    worker.onerror = (event) => {
      event.preventDefault();
      if (!slot.info) fail(event.message || "the Python worker failed to load");
      else if (this.pending && this.pending.slot === slot) this.hardStop(this.pending, "crash");
    };
    worker.postMessage({ type: "init", interruptBuffer: slot.interrupt, module: this.module });
    // An offer not known yet follows when it is; the worker waits for it before it starts Python.
    if (!settings.offer) {
      this.snapshot.then((offer) => {
        if (!this.disposed && !slot.failed) worker.postMessage({ type: "snapshot", ...offer });
      });
    }
    return slot;
  }

  dropSpare() {
    if (this.spare) {
      clearTimeout(this.spare.slowTimer);
      this.spare.worker.terminate();
      relayStalls(this.spare, [], null);
    }
    this.spare = null;
  }

  // The spare, once it is ready; no spare is booted until its job ends.
  async takeSpare() {
    if (this.disposed) throw new Error("the exercise was closed");
    let slot = null;
    while (!slot) {
      await this.ready; // (a Restart Python meanwhile puts a new spare in its place)
      if (this.disposed) throw new Error("the exercise was closed");
      if (this.storing) {
        await this.storing; // a heap being stored finishes first: the clock measures the job alone
        continue;
      }
      if (this.spare && this.spare.info) slot = this.spare;
    }
    this.spare = null;
    this.taken = slot; // until release(slot): every job of it, or its series, is over
    slot.freed = new Promise((resolve) => {
      slot.free = resolve;
    });
    return slot;
  }

  // The worker that was taken is gone (retired): a store may run.
  release(slot) {
    if (this.taken !== slot) return;
    this.taken = null;
    slot.free();
  }
}
