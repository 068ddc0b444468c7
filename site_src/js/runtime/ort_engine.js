// onnxruntime's WebAssembly engine: fetching it (its bytes count in the page's
// progress), starting it, and saying in words which file is missing or damaged
// when it does not start. Every file comes from <site>/vendor/ort/ (see ort.js).

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
import { serial } from "./ort_session.js";

export const ORT_DIR = "vendor/ort/";
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

export async function importRuntimeFile(name) {
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

export async function downloadEngine(build) {
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

export async function startEngine(ort, build, downloaded) {
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
