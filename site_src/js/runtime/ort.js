// Loading onnxruntime-web, choosing a backend and running the lesson's models.
//
// Exactly one onnxruntime build is imported per page: ort.webgpu.min.mjs when
// WebGPU will be used (it runs the WebAssembly backend too), otherwise the
// smaller ort.wasm.min.mjs. Both come from <site>/vendor/ort/, and env.wasm.wasmPaths
// points there, so the site works from any static server and under a sub-path.
// Without cross-origin isolation WebAssembly runs on one thread.

import {
  AssetError,
  damagedError,
  damagedTwice,
  describeFile,
  explainFailure,
  fileSize,
  handOff,
  servedByWorker,
  siteUrl,
} from "./assets.js";
import { watchedFetch } from "./download_watch.js";
import { NonFiniteLogitsError } from "./generate.js";

export const ORT_DIR = "vendor/ort/";
const BUILD_FILES = { wasm: "ort.wasm.min.mjs", webgpu: "ort.webgpu.min.mjs" };
// The WebAssembly engine each build loads: its JavaScript glue and its binary.
const ENGINE_FILES = {
  wasm: ["ort-wasm-simd-threaded.mjs", "ort-wasm-simd-threaded.wasm"],
  webgpu: ["ort-wasm-simd-threaded.asyncify.mjs", "ort-wasm-simd-threaded.asyncify.wasm"],
};

// The error every runtime failure becomes: it names the file, and (as
// .advice) what the learner can do, since none of it is the model's fault.
export class RuntimeLoadError extends AssetError {
  constructor(message, { kind = "missing", url = "", advice = "" } = {}) {
    super(message, { kind, url });
    this.name = "RuntimeLoadError";
    this.advice =
      advice ||
      "Reload the page; if it keeps failing, tell the site's maintainer (run `npm ci` and build the site again).";
  }
}

async function importRuntimeFile(name) {
  const path = ORT_DIR + name;
  const url = siteUrl(path);
  try {
    return await import(url);
  } catch (err) {
    console.warn(err);
    throw await explainFailure(path, url, await importFailure(path, url));
  }
}

// import() says only "Failed to fetch dynamically imported module"; a
// request tells a missing file from a broken one (syntax, wrong MIME type).
async function importFailure(path, url) {
  let status = 0;
  try {
    status = (await fetch(url, { method: "HEAD" })).status;
  } catch {
    /* offline: say it could not be downloaded */
  }
  if (status === 404 || status === 410) {
    return new RuntimeLoadError(`${describeFile(path)} is missing on this site (HTTP ${status})`, { url });
  }
  if (status >= 200 && status < 300) {
    return new RuntimeLoadError(
      `${describeFile(path)} is damaged or was served with the wrong type: this browser could not run it`,
      { kind: "corrupt", url },
    );
  }
  return new RuntimeLoadError(`${describeFile(path)} could not be downloaded${status ? ` (HTTP ${status})` : ""}`, {
    kind: "network",
    url,
  });
}

// A 74-byte ONNX model (y = Identity(x), float [1], opset 13): starting a
// session on it starts onnxruntime's WebAssembly engine, so a missing or
// damaged engine file is reported as such here, before any lesson model
// (onnxruntime itself would fail inside the first model's session, with
// "Aborted(...) Build with -sASSERTIONS"). The engine still compiles from its
// URL while it downloads, and the browser keeps the compiled code for the next visit.
const PROBE_MODEL =
  "CAgSA21oYTo7ChAKAXgSAXkiCElkZW50aXR5EgVwcm9iZVoPCgF4EgoKCAgBEgQKAggBYg8KAXkSCgoICAESBAoCCAFCBAoAEA0=";

// ------------------------------------------------------------ engine download
//
// The WebAssembly engine is the largest file a page waits for (about 14 MB),
// so its bytes count in the page's progress. It is downloaded once, here, and
// that one download answers onnxruntime's own fetch() of the same URL (which
// compiles it as it streams in): two requests of one URL share a download only
// where the browser's HTTP cache keeps the file, and an uncompressed 14 MB
// engine is too large for it in a private window, so it came twice. Before a
// service worker serves the page, a copy is handed to it (handOff), which it
// stores for the next visit and for offline use instead of downloading it again.

const engine = { loaded: 0, total: 0, done: false };
const engineEvents = new EventTarget();
const realFetch = globalThis.fetch ? globalThis.fetch.bind(globalThis) : null;
const answers = new Map(); // URL -> promise of the Response to give onnxruntime (null: fetch it)

// onnxruntime's glue calls the global fetch() for its engine; a URL waiting in
// `answers` is answered from the download below, once; everything else passes.
function answerEngineFetches() {
  if (!realFetch || globalThis.fetch.mhaEngine) return;
  const answered = function fetch(input, init) {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input && input.url;
    const method = (init && init.method) || (input && input.method) || "GET";
    const waiting = method === "GET" ? answers.get(url) : null;
    if (!waiting) return realFetch(input, init);
    answers.delete(url);
    return waitOnFailure(waiting.then((response) => response || realFetch(input, init)));
  };
  answered.mhaEngine = true;
  globalThis.fetch = answered;
}

// When onnxruntime's copy of the engine breaks off (a lost line, or the page being left, which
// cuts every download short, in Firefox before pagehide), its fetch is left waiting instead of
// failing: onnxruntime would retry it and log each failure as an error ("wasm streaming compile
// failed", "falling back to ArrayBuffer instantiation"). startEngine says what failed, in
// words, from `engineLost`; a page that is being left says nothing.
let loseEngine = () => {};
const engineLost = new Promise((resolve) => {
  loseEngine = resolve;
});
const never = () => new Promise(() => {});

function waitOnFailure(responsePromise) {
  return responsePromise.then(
    (response) => {
      if (!response.ok || !response.body) return response; // missing or refused: onnxruntime fails, startEngine names it
      const reader = response.body.getReader();
      const body = new ReadableStream({
        async pull(controller) {
          let part;
          try {
            part = await reader.read();
          } catch (err) {
            loseEngine(err);
            return never();
          }
          if (part.done) controller.close();
          else controller.enqueue(part.value);
        },
        cancel(reason) {
          return reader.cancel(reason);
        },
      });
      return new Response(body, {
        status: response.status,
        statusText: response.statusText,
        headers: response.headers,
      });
    },
    (err) => {
      loseEngine(err);
      return never();
    },
  );
}

function reportEngine(loaded, total, done = false) {
  Object.assign(engine, { loaded, total: Math.max(total, loaded), done });
  engineEvents.dispatchEvent(new Event("progress"));
}

// fn({loaded, total, done}) now and on every change of the engine's download; returns unsubscribe.
export function onEngineProgress(fn) {
  const listener = () => fn({ ...engine });
  engineEvents.addEventListener("progress", listener);
  listener();
  return () => engineEvents.removeEventListener("progress", listener);
}

// The bytes the engine of `build` will download (known before it starts).
export function engineBytes(build = "wasm") {
  return fileSize(ORT_DIR + ENGINE_FILES[build === "webgpu" ? "webgpu" : "wasm"][1]);
}

async function downloadEngine(build) {
  const path = ORT_DIR + ENGINE_FILES[build][1];
  const url = siteUrl(path);
  const total = fileSize(path);
  let answer = () => {};
  answers.set(
    url,
    new Promise((resolve) => {
      answer = resolve;
    }),
  ); // before any await: onnxruntime may ask soon
  answerEngineFetches();
  reportEngine(0, total);
  try {
    // Already in the service worker's cache (a repeat visit): nothing to wait
    // for, and onnxruntime fetches it from there (with its compiled code).
    if (globalThis.caches && (await caches.match(url))) {
      answer(null);
      reportEngine(total, total, true);
      return;
    }
  } catch {
    /* no Cache API here */
  }
  const controlled = servedByWorker();
  let response;
  try {
    // Watched: a stall says so and can be retried; the bytes count as they come (also while the
    // service worker checks them), and onnxruntime's copy reads on across a retry.
    response = await watchedFetch(url, {
      fetchFn: realFetch,
      what: describeFile(path),
      total,
      onProgress: ({ loaded }) => reportEngine(loaded, total),
    });
  } catch (err) {
    answer(null);
    reportEngine(0, total, true);
    throw await explainFailure(
      path,
      url,
      new RuntimeLoadError(`${describeFile(path)} could not be downloaded`, { kind: "network", url }),
    );
  }
  if (damagedTwice(response)) {
    answer(null);
    reportEngine(0, total, true);
    throw await explainFailure(path, url, damagedError(path, url)); // or a new build is live
  }
  if (!response.ok || !response.body) {
    answer(null);
    reportEngine(0, total, true);
    return; // startEngine below names the problem (missing, damaged) as before
  }
  const [forOrt, counted] = response.body.tee();
  const type = response.headers.get("Content-Type") || "application/wasm";
  answer(new Response(forOrt, { status: 200, headers: { "Content-Type": type } }));
  const reader = counted.getReader();
  const chunks = controlled ? null : [];
  let loaded = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      loaded += value.byteLength;
      if (chunks) chunks.push(value);
    }
  } catch (err) {
    reportEngine(loaded, total, true);
    throw await explainFailure(
      path,
      url,
      new RuntimeLoadError(`${describeFile(path)} could not be downloaded`, { kind: "network", url }),
    );
  }
  reportEngine(loaded, total, true);
  if (chunks) handOff(url, new Blob(chunks), type);
}

async function startEngine(ort, build, downloaded) {
  const [glue, binary] = ENGINE_FILES[build];
  await importRuntimeFile(glue); // stays in the module map; onnxruntime's own import reuses it
  const downloadError = downloaded.then(
    () => null,
    (err) => err,
  );
  const probe = Uint8Array.from(atob(PROBE_MODEL), (c) => c.charCodeAt(0));
  try {
    const lost = engineLost.then((err) => {
      throw err;
    });
    const session = await Promise.race([
      serial(() => ort.InferenceSession.create(probe, { executionProviders: ["wasm"] })),
      lost,
    ]);
    await serial(() => session.release());
    await downloaded.catch(() => {}); // the progress reaches the engine's last byte before "Ready"
  } catch (err) {
    const failed = await downloadError;
    if (failed) throw failed; // offline, or replaced by a new build: said in those words
    const path = ORT_DIR + binary;
    const url = siteUrl(path);
    let status = 0;
    try {
      status = (await (realFetch || fetch)(url)).status;
    } catch {
      /* offline */
    }
    console.warn(`onnxruntime did not start: ${err.message}`);
    if (status === 404 || status === 410) {
      throw await explainFailure(
        path,
        url,
        new RuntimeLoadError(`${describeFile(path)} is missing on this site (HTTP ${status})`, { url }),
      );
    }
    if (!status || status >= 300) {
      throw await explainFailure(
        path,
        url,
        new RuntimeLoadError(`${describeFile(path)} could not be downloaded${status ? ` (HTTP ${status})` : ""}`, {
          kind: "network",
          url,
        }),
      );
    }
    throw await explainFailure(
      path,
      url,
      new RuntimeLoadError(
        `onnxruntime's WebAssembly engine (${path}) did not start: the file is damaged, or this browser cannot run it`,
        {
          kind: "corrupt",
          url,
          advice:
            "Reload the page; if it keeps failing, try a current Chrome, Edge, Firefox or Safari, or tell the site's maintainer.",
        },
      ),
    );
  }
}

let loaded = null; // {build, promise}

// Every session creation and run goes through one queue. The WebGPU build is an
// asyncify WebAssembly instance, which must not be re-entered while a call is
// suspended; on the WebAssembly build the calls are serial anyway.
let queue = Promise.resolve();

export function serial(task) {
  const result = queue.then(task);
  queue = result.catch(() => {});
  return result;
}

export class BuildMismatchError extends Error {
  constructor() {
    super(
      "WebGPU needs the WebGPU build of onnxruntime, and this page already loaded the WebAssembly-only one; reload the page to switch.",
    );
    this.name = "BuildMismatchError";
  }
}

export function supportProblem() {
  if (typeof WebAssembly !== "object") return "this browser cannot run WebAssembly";
  if (typeof BigInt64Array !== "function") return "this browser lacks 64-bit integer arrays (BigInt64Array)";
  if (typeof fetch !== "function" || typeof Promise !== "function") return "this browser is too old for this page";
  return null;
}

let probe = null;

// What WebGPU offers here: {available, fallback, description, reason}.
export function probeWebGPU() {
  if (!probe) {
    probe = (async () => {
      if (!("gpu" in navigator) || !navigator.gpu) {
        return { available: false, fallback: false, reason: "this browser does not offer WebGPU" };
      }
      try {
        const adapter = await navigator.gpu.requestAdapter();
        if (!adapter) return { available: false, fallback: false, reason: "WebGPU found no graphics adapter" };
        const info = adapter.info || {};
        const fallback = Boolean(info.isFallbackAdapter ?? adapter.isFallbackAdapter);
        const description = [info.vendor, info.architecture, info.description].filter(Boolean).join(" ");
        return {
          available: true,
          fallback,
          description,
          reason: fallback ? "only a software (fallback) WebGPU adapter" : "",
        };
      } catch (err) {
        return { available: false, fallback: false, reason: `WebGPU adapter request failed (${err.message})` };
      }
    })();
  }
  return probe;
}

// The backend a preference ("auto" | "wasm" | "webgpu") resolves to, and why.
export async function resolveBackend(preference) {
  const gpu = await probeWebGPU();
  if (preference === "wasm") return { backend: "wasm", note: "" };
  if (preference === "webgpu") {
    if (gpu.available)
      return { backend: "webgpu", note: gpu.fallback ? "WebGPU runs on a software adapter here, which is slow." : "" };
    return { backend: "wasm", note: `WebGPU is not available (${gpu.reason}); using WebAssembly.` };
  }
  if (gpu.available && !gpu.fallback) return { backend: "webgpu", note: "" };
  return {
    backend: "wasm",
    note: gpu.available ? "Auto chose WebAssembly: WebGPU offers only a software adapter here." : "",
  };
}

export function loadedBuild() {
  return loaded ? loaded.build : null;
}

// Import onnxruntime once. The WebGPU build is only loaded when an adapter exists.
export async function loadOrt(backend) {
  const wanted = backend === "webgpu" ? "webgpu" : "wasm";
  if (loaded) {
    if (wanted === "webgpu" && loaded.build !== "webgpu") throw new BuildMismatchError();
    return loaded.promise;
  }
  if (wanted === "webgpu" && !(await probeWebGPU()).available) throw new Error("no WebGPU adapter");
  const downloaded = downloadEngine(wanted); // alongside the import of onnxruntime itself
  downloaded.catch(() => {});
  const promise = importRuntimeFile(BUILD_FILES[wanted]).then(async (ort) => {
    ort.env.wasm.wasmPaths = siteUrl(ORT_DIR);
    ort.env.wasm.proxy = false;
    ort.env.wasm.numThreads = threadCount();
    ort.env.logLevel = "error";
    await startEngine(ort, wanted, downloaded);
    // onnxruntime falls back to one thread where it cannot start more (it
    // writes that back into env), so the label says what runs, not what was asked.
    const running = Number(ort.env.wasm.numThreads);
    threadsRunning = Number.isInteger(running) && running >= 1 ? running : 1;
    return ort;
  });
  loaded = { build: wanted, promise };
  promise.catch(() => {
    if (loaded && loaded.promise === promise) loaded = null;
  });
  return promise;
}

let threadsRunning = null; // read back from onnxruntime once its engine started

// The WebAssembly threads onnxruntime runs on: what it reported after
// starting, or, before it started, what it will be asked for.
export function runningThreads() {
  return threadsRunning ?? threadCount();
}

// WebAssembly threads. Without cross-origin isolation there is no
// SharedArrayBuffer, so one thread. With it, two threads on machines with at
// least four cores: these models are so small (about a million multiply-adds a
// token) that more threads mostly add synchronisation; on a two-core machine one
// thread measured faster than two (bench/RESULTS.md). ?threads=N overrides.
export function threadCount() {
  // Some browsers say they are isolated but offer no SharedArrayBuffer (WebKitGTK).
  if (!globalThis.crossOriginIsolated || typeof SharedArrayBuffer !== "function") return 1;
  const asked = Number(new URLSearchParams(globalThis.location ? location.search : "").get("threads"));
  const cores = navigator.hardwareConcurrency || 1;
  if (Number.isInteger(asked) && asked >= 1) return Math.min(asked, cores, 16);
  return cores >= 4 ? 2 : 1;
}

// One model on one backend. run(window, headMask?) -> {logits: Float32Array, attention: Float32Array|null}.
// The attention models take a head_mask input (float32 [heads]: 1 keeps a head,
// 0 knocks it out); it is required by the graph, so every run feeds it, ones by default.
export class ModelRunner {
  constructor(ort, session, { name, backend, T, heads = 0 }) {
    if (!Number.isInteger(T) || T < 1) throw new Error(`model ${name}: no context length T was given`);
    this.ort = ort;
    this.session = session;
    this.name = name;
    this.backend = backend;
    this.T = T;
    this.heads = heads;
    this.inputName = session.inputNames.includes("ids") ? "ids" : session.inputNames[0];
    this.hasAttention = session.outputNames.includes("attention");
    this.hasHeadMask = session.inputNames.includes("head_mask");
  }

  static async create(ort, bytes, meta, backend) {
    // logSeverityLevel 3: only errors from the native runtime reach the console.
    // disable_quant_qdq lets constant folding turn the stored int8 weights into
    // float32 once, when the session starts, instead of dequantising them on
    // every token (the arithmetic is the same, so the logits do not change).
    const options = {
      executionProviders: [backend],
      graphOptimizationLevel: "all",
      logSeverityLevel: 3,
      extra: { session: { disable_quant_qdq: "1" } },
    };
    if (backend === "webgpu") options.preferredOutputLocation = "cpu";
    // A copy: the cached download may be used again for another backend.
    let createMs = 0;
    const session = await serial(async () => {
      const t0 = performance.now();
      const created = await ort.InferenceSession.create(bytes.slice(), options);
      createMs = performance.now() - t0; // the time this session took, not the wait for the queue
      return created;
    });
    const runner = new ModelRunner(ort, session, { ...meta, backend });
    runner.createMs = createMs;
    return runner;
  }

  // Runs are queued (see serial), so no two calls into onnxruntime overlap.
  run(window, headMask = null) {
    return serial(() => this._run([window], headMask));
  }

  runBatch(windows, headMask = null) {
    return serial(() => this._run(windows, headMask));
  }

  headMaskTensor(headMask) {
    const mask = headMask ? Float32Array.from(headMask) : new Float32Array(this.heads).fill(1);
    if (mask.length !== this.heads)
      throw new RangeError(`a head mask must have ${this.heads} numbers, got ${mask.length}`);
    return new this.ort.Tensor("float32", mask, [this.heads]);
  }

  async _run(windows, headMask = null) {
    if (!this.session) throw new Error(`${this.name} was closed`);
    const B = windows.length;
    const ids = new BigInt64Array(B * this.T);
    windows.forEach((w, b) => {
      if (w.length !== this.T) throw new RangeError(`a window must have ${this.T} ids, got ${w.length}`);
      for (let i = 0; i < this.T; i++) ids[b * this.T + i] = BigInt(w[i]);
    });
    const input = new this.ort.Tensor("int64", ids, [B, this.T]);
    const feeds = { [this.inputName]: input };
    if (this.hasHeadMask) feeds.head_mask = this.headMaskTensor(headMask);
    else if (headMask) throw new Error(`${this.name} has no heads to switch off`);
    const out = await this.session.run(feeds);
    const logits = await tensorData(out.logits ?? out[this.session.outputNames[0]]);
    for (let i = 0; i < logits.length; i++) {
      if (!Number.isFinite(logits[i])) throw new NonFiniteLogitsError(`${this.name} on ${this.backend}`);
    }
    const attention = this.hasAttention && out.attention ? await tensorData(out.attention) : null;
    for (const tensor of Object.values(out))
      if (tensor && tensor.location !== "cpu" && tensor.dispose) tensor.dispose();
    return { logits, attention };
  }

  async release() {
    const session = this.session;
    this.session = null;
    if (session) {
      try {
        await serial(() => session.release());
      } catch (err) {
        console.warn(`could not release ${this.name}`, err);
      }
    }
  }
}

async function tensorData(tensor) {
  if (tensor.location && tensor.location !== "cpu" && tensor.getData) return new Float32Array(await tensor.getData());
  return tensor.data;
}
