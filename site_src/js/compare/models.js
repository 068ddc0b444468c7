// The compare page's models: download them (with progress), start one
// onnxruntime session each on the chosen backend, and fall back to
// WebAssembly, with a visible notice, wherever WebGPU does not work.

import { AssetError, loadBytes } from "../runtime/assets.js";
import {
  BuildMismatchError,
  ModelRunner,
  loadOrt,
  loadedBuild,
  onEngineProgress,
  probeWebGPU,
  resolveBackend,
  runningThreads,
} from "../runtime/ort.js";
import { formatBytes, learnerMessage } from "./format.js";

const BACKEND_LABELS = { wasm: "WebAssembly", webgpu: "WebGPU" };

export function backendText(backend) {
  if (backend === "wasm") {
    const n = runningThreads();
    return `${BACKEND_LABELS.wasm} (${n} thread${n > 1 ? "s" : ""})`;
  }
  return BACKEND_LABELS[backend] || backend;
}

// Why WebAssembly runs on `n` threads here, in words: what the browser or the host
// lacks, or, where nothing is missing, why no more threads are used.
export function threadsReason(n) {
  const cores = (globalThis.navigator && navigator.hardwareConcurrency) || 1;
  if (!globalThis.crossOriginIsolated) {
    return (
      "WebAssembly runs on one thread: this page is not cross-origin isolated (its host does not send the " +
      "Cross-Origin-Opener-Policy and Cross-Origin-Embedder-Policy headers), and threads need that."
    );
  }
  if (typeof SharedArrayBuffer !== "function") {
    return "WebAssembly runs on one thread: this browser offers no SharedArrayBuffer, which threads need.";
  }
  if (n > 1) return `WebAssembly runs on ${n} threads of this device's ${cores} cores.`;
  return `WebAssembly runs on one thread: on ${cores} core${cores > 1 ? "s" : ""}, a second thread does not make these small models faster.`;
}

// What the learner reads when Auto found no WebGPU: which engine runs instead, and why.
function noWebGPUText(gpu) {
  return `WebGPU is not available here (${gpu.reason}), so the models run on WebAssembly, on the processor.`;
}

export class ModelSet {
  // models: the manifest's entries ({name, label, file, bytes, sha256, heads}); T and pad from the vocabulary.
  constructor(view, { models, T, pad, bos }) {
    this.view = view;
    this.models = models;
    // No prototype: a name from the address such as "constructor" finds nothing.
    this.byName = Object.assign(Object.create(null), Object.fromEntries(models.map((m) => [m.name, m])));
    this.T = T;
    this.pad = pad;
    this.bos = bos;
    this.runners = {}; // name -> ModelRunner (the active backend)
    this.extraRunners = new Map(); // "backend:name" -> Promise<ModelRunner> (test hook)
    this.errors = {};
    this.timings = {}; // name -> {download_ms, session_ms, warmup_ms}
    this.readyMs = null;
    this.openId = 0;
    this.closed = false;
  }

  label(name) {
    return this.byName[name]?.label ?? name;
  }

  meta(name) {
    const m = this.byName[name];
    return { name, T: this.T, heads: m?.heads ?? 0 };
  }

  // The window that only holds BOS: a warm-up run.
  warmupWindow() {
    return [...new Array(this.T - 1).fill(this.pad), this.bos];
  }

  download(name, onProgress) {
    const m = this.byName[name];
    return loadBytes(`wasm_assets/${m.file}`, { bytes: m.bytes, sha256: m.sha256, onProgress });
  }

  isCurrent(openId) {
    return !this.closed && openId === this.openId;
  }

  // Start every model on the backend `preference` resolves to. Resolves when
  // each model runs or has its problem shown; true if at least one runs.
  async open(preference) {
    const openId = ++this.openId;
    const view = this.view;
    view.generateButton.disabled = true;
    await this.release();
    this.errors = {};
    for (const col of Object.values(view.columns)) col.problem.replaceChildren();
    const names = this.models.map((m) => m.name);
    const loadedBytes = Object.fromEntries(names.map((n) => [n, 0]));
    const totalBytes = Object.fromEntries(names.map((n) => [n, this.byName[n].bytes || 0]));
    // Every byte the page waits for: the models and onnxruntime's WebAssembly
    // engine. 100% is said only once the models run (see "Ready" below).
    let engine = { loaded: 0, total: 0 };
    const updateProgress = () => {
      if (!this.isCurrent(openId) || view.failed) return; // a failure message stays up
      const loaded = Object.values(loadedBytes).reduce((a, b) => a + b, 0) + engine.loaded;
      const total = Object.values(totalBytes).reduce((a, b) => a + b, 0) + engine.total;
      const pct = total ? Math.min(99, Math.floor((100 * loaded) / total)) : 0;
      const what = loaded >= total ? "Starting the models" : "Downloading the models and onnxruntime";
      view.setStatus(`${what}: ${formatBytes(loaded)} of ${formatBytes(total)} (${pct}%)`, pct);
    };
    const stopEngineProgress = onEngineProgress((state) => {
      engine = state;
      updateProgress();
    });
    updateProgress();
    // Downloads start before (and run alongside) the runtime import.
    const downloads = Object.fromEntries(
      names.map((name) => {
        const col = view.columns[name];
        col.progress.hidden = false;
        col.backend.textContent = "Backend: starting…";
        const t0 = performance.now();
        this.timings[name] = {};
        const promise = this.download(name, ({ loaded, total }) => {
          loadedBytes[name] = loaded;
          if (total) totalBytes[name] = total;
          col.progress.value = total ? (100 * loaded) / total : 0;
          updateProgress();
        }).then((bytes) => {
          this.timings[name].download_ms = performance.now() - t0;
          return bytes;
        });
        promise.catch(() => {});
        return [name, promise];
      }),
    );
    const opened = await this.loadRuntime(preference);
    if (!opened || !this.isCurrent(openId)) {
      stopEngineProgress();
      return false;
    }
    const { ort, backend } = opened;
    const startErrors = {};
    await Promise.all(
      names.map(async (name) => {
        const col = view.columns[name];
        const label = this.label(name);
        let bytes;
        try {
          bytes = await downloads[name];
        } catch (err) {
          const what = err instanceof AssetError && err.kind === "corrupt" ? "is damaged" : "could not be downloaded";
          this.problem(
            name,
            learnerMessage(
              err,
              `The ${label} model ${what}: ${err.message}. Reload the page; if you built the site, run \`make models\` and rebuild.`,
            ),
          );
          return;
        }
        if (!this.isCurrent(openId)) return;
        try {
          const runner = await this.createRunner(ort, bytes, name, backend);
          if (!this.isCurrent(openId)) {
            await runner.release();
            return;
          }
          this.runners[name] = runner;
          col.backend.textContent = `Backend: ${backendText(runner.backend)}`;
        } catch (err) {
          startErrors[name] = err;
          this.problem(
            name,
            learnerMessage(
              err,
              `The ${label} model could not start: ${err.message}. It may be damaged; reload the page or rebuild the site.`,
            ),
          );
        } finally {
          col.progress.hidden = true;
        }
      }),
    );
    stopEngineProgress();
    if (!this.isCurrent(openId)) return false;
    const started = Object.keys(this.runners).length;
    if (started) {
      if (Object.values(this.runners).some((r) => r.backend === "wasm"))
        view.addNotice(threadsReason(runningThreads()));
      const used = [...new Set(Object.values(this.runners).map((r) => backendText(r.backend)))].join(" and ");
      view.setStatus(`Ready: ${started} of ${names.length} models running on ${used}.`, 100);
      this.readyMs = performance.now();
      // One untimed run per model, so the first generated token is timed fairly
      // (runs are queued, so a Generate click simply waits for these).
      for (const [name, runner] of Object.entries(this.runners)) {
        if (this.timings[name].warmup_ms !== undefined) continue;
        const t = performance.now();
        runner.run(this.warmupWindow()).then(
          () => {
            this.timings[name].warmup_ms = performance.now() - t;
          },
          () => {},
        );
      }
    } else {
      const messages = new Set(Object.values(startErrors).map((e) => e.message));
      if (Object.keys(startErrors).length === names.length && messages.size === 1) {
        // One cause (the runtime itself, not a model): say it once, not in every column.
        const err = Object.values(startErrors)[0];
        for (const name of names) {
          this.errors[name] = err.message;
          view.columnProblem(name, "Not running: see the message above.");
        }
        view.fail(
          "The models could not start",
          learnerMessage(
            err,
            `onnxruntime could not start a model here (${err.message}). Reload the page; if it keeps failing, try a current Chrome, Edge, Firefox or Safari.`,
          ),
        );
      } else {
        view.setStatus("No model could start; each model's column says why.", 0);
      }
    }
    view.progress.hidden = Boolean(started);
    return started > 0;
  }

  // onnxruntime for the backend `preference` resolves to, or WebAssembly when
  // the WebGPU build cannot load. Resolves to {ort, backend} or null (shown).
  async loadRuntime(preference) {
    const view = this.view;
    let { backend, note } = await resolveBackend(preference);
    if (!note && preference === "auto" && backend === "wasm") {
      const gpu = await probeWebGPU();
      if (!gpu.available) note = noWebGPUText(gpu);
    }
    view.addNotice(note);
    try {
      return { ort: await loadOrt(backend), backend };
    } catch (err) {
      let ort = err;
      if (err instanceof BuildMismatchError) {
        this.onBuildMismatch(preference);
        backend = "wasm";
        ort = await loadOrt("wasm").catch((e) => e);
      } else if (backend === "webgpu") {
        view.addNotice(`The WebGPU runtime did not load (${err.message}); using WebAssembly.`);
        backend = "wasm";
        ort = await loadOrt("wasm").catch((e) => e);
      }
      if (ort instanceof Error) {
        view.fail(
          "The runtime did not load",
          learnerMessage(
            ort,
            `${ort.message}. Reload the page; if it keeps failing, your browser may block WebAssembly.`,
          ),
        );
        return null;
      }
      return { ort, backend };
    }
  }

  onBuildMismatch() {
    /* compare.js offers a reload */
  }

  // A session on `backend`; a WebGPU session must also pass one test run,
  // otherwise the model falls back to WebAssembly with a visible notice.
  async createRunner(ort, bytes, name, backend) {
    const meta = this.meta(name);
    const timing = this.timings[name] || (this.timings[name] = {});
    if (backend === "webgpu") {
      let runner = null;
      try {
        runner = await ModelRunner.create(ort, bytes, meta, "webgpu");
        timing.session_ms = runner.createMs;
        const t = performance.now();
        await runner.run(this.warmupWindow());
        timing.warmup_ms = performance.now() - t;
        return runner;
      } catch (err) {
        if (runner) await runner.release();
        this.view.addNotice(`WebGPU failed for ${this.label(name)} (${err.message}); it runs on WebAssembly instead.`);
      }
    }
    const runner = await ModelRunner.create(ort, bytes, meta, "wasm");
    timing.session_ms = runner.createMs;
    return runner;
  }

  // WebGPU failed while generating: the same model again, on WebAssembly.
  async switchToWasm(name) {
    const old = this.runners[name];
    const ort = await loadOrt("webgpu"); // the WebGPU build also runs WebAssembly
    const bytes = await this.download(name);
    const fresh = await ModelRunner.create(ort, bytes, this.meta(name), "wasm");
    this.runners[name] = fresh;
    if (old) old.release();
    this.view.columns[name].backend.textContent = `Backend: ${backendText("wasm")}`;
    return fresh;
  }

  problem(name, message) {
    this.errors[name] = message;
    this.view.columnProblem(name, message);
  }

  // The runner of `name` on `backend` (the active one when not given); other
  // backends start on demand, for the test hook's comparisons.
  async runnerFor(name, backend) {
    if (!this.byName[name]) throw new Error(`unknown model ${name}`);
    const active = this.runners[name];
    if (!backend || (active && active.backend === backend)) {
      if (!active) throw new Error(`${name} is not running`);
      return active;
    }
    const key = `${backend}:${name}`;
    if (!this.extraRunners.has(key)) {
      const promise = (async () => {
        const ort = await loadOrt(backend === "webgpu" ? "webgpu" : loadedBuild() || "wasm");
        return ModelRunner.create(ort, await this.download(name), this.meta(name), backend);
      })();
      promise.catch(() => this.extraRunners.delete(key));
      this.extraRunners.set(key, promise);
    }
    return this.extraRunners.get(key);
  }

  backends() {
    return Object.fromEntries(Object.entries(this.runners).map(([n, r]) => [n, r.backend]));
  }

  async release() {
    const runners = Object.values(this.runners);
    this.runners = {};
    const extras = [...this.extraRunners.values()];
    this.extraRunners.clear();
    await Promise.all([
      ...runners.map((r) => r.release()),
      ...extras.map((p) =>
        p.then(
          (r) => r.release(),
          () => {},
        ),
      ),
    ]);
  }

  async close() {
    this.closed = true;
    this.openId++;
    await this.release();
  }
}
