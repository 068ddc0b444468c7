// The exercise worker's downloads: Pyodide's files and the exercise's, with
// progress in bytes, the first visit's handoff to the service worker, and the
// checks that name a missing file within seconds. (python_start.js starts Python
// from them; heap_choice.js picks the heap it starts from.)

import { watchedFetch } from "../../runtime/download_watch.js";
import { sha256Hex } from "./heap_recipe.js";

// Every message to the page goes through here.
export function post(message) {
  self.postMessage(message);
}

export function oneLine(err) {
  const text = String((err && err.message) || err);
  const last = text.trim().split("\n").filter(Boolean).pop() || text;
  return last.length > 300 ? `${last.slice(0, 300)}…` : last;
}

// The files loadPyodide needs; a missing one would leave it waiting for ever.
export const RUNTIME_FILES = [
  "pyodide.mjs",
  "pyodide.asm.mjs",
  "pyodide.asm.wasm",
  "python_stdlib.zip",
  "pyodide-lock.json",
];
// Where a first visit leaves what it downloaded for the service worker (site_src/hooks/service_worker.js):
// the files Pyodide fetch()es. Its two module scripts come through import(), which
// the service worker finds in the HTTP cache (or serves itself, once it controls this worker).
export const HANDOFF_CACHE = "pyodide-handoff";
export const PYODIDE_FETCHED = ["pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json"];
export const HANDED_OFF = [...PYODIDE_FETCHED, "heap.bin"];

export function fileName(url) {
  return decodeURIComponent(new URL(url).pathname.split("/").pop());
}

export async function fetchOk(url, options = undefined) {
  let response;
  try {
    response = await fetch(url, options);
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
export async function checkRuntimeFiles(indexURL) {
  await Promise.all(
    RUNTIME_FILES.map(async (name) => {
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
    }),
  );
}

// ---------------------------------------------------------------------------
// Downloads: bytes and percent of everything the exercise waits for.
// ---------------------------------------------------------------------------
function megabytes(bytes) {
  return (bytes / 1e6).toFixed(1);
}

export function progressTracker() {
  const loaded = new Map(); // file name -> bytes received so far
  let sizes = null; // file name -> bytes (uncompressed), from pyodide/sizes.json
  const skipped = new Set(); // files no longer waited for (the shipped heap on a slow line)
  let lastPost = 0;
  const tracker = {
    sizes(value) {
      sizes = value && typeof value === "object" ? { ...value } : null;
      for (const name of skipped) if (sizes) delete sizes[name];
    },
    skip(name) {
      skipped.add(name);
      loaded.delete(name);
      if (sizes) delete sizes[name];
      tracker.report();
    },
    add(name, bytes) {
      if (skipped.has(name)) return;
      loaded.set(name, (loaded.get(name) || 0) + bytes);
      const now = performance.now();
      if (now - lastPost > 100) {
        lastPost = now;
        tracker.report();
      }
    },
    // The bytes of `name` (0 while sizes.json has not come).
    size(name) {
      return sizes ? Number(sizes[name]) || 0 : 0;
    },
    report() {
      let got = 0;
      for (const value of loaded.values()) got += value;
      if (!got) return;
      const total = sizes ? Object.values(sizes).reduce((a, b) => a + (Number(b) || 0), 0) : 0;
      if (total > 0) {
        const shown = Math.min(got, total);
        const percent = Math.floor((100 * shown) / total);
        post({
          type: "progress",
          loaded: shown,
          total,
          text:
            shown < total
              ? `Downloading Python (Pyodide) and the model: ${megabytes(shown)} of ${megabytes(total)} MB (${percent} %)…`
              : `Downloaded ${megabytes(total)} MB (100 %); starting Python…`,
        });
      } else {
        post({
          type: "progress",
          loaded: got,
          text: `Downloading Python (Pyodide) and the model: ${megabytes(got)} MB so far…`,
        });
      }
    },
  };
  return tracker;
}

// A fetch that counts the bytes of each body as they arrive and, on a first
// visit with a service worker on its way (handoff), keeps a copy of each
// runtime file in HANDOFF_CACHE, so the service worker stores it without
// downloading it again. Only while no service worker serves the files
// (count): from its cache they come at once, and a response rebuilt in
// JavaScript would lose the browser's compiled-WebAssembly cache.
// A file build.json gives a digest for (digests) is checked as it arrives: one
// that does not match (a captive portal's page, a cut download) is asked for
// once more past the HTTP cache, and a second mismatch is said in words
// instead of leaving Pyodide to fail on it without a word.
// Each GET is watched (runtime/download_watch.js): one that stalls is reported
// to the page (worker.js), which offers a retry.
export function countingFetch(realFetch, tracker, handoff, pending, digests = {}) {
  return async (input, init) => {
    const method = (init && init.method) || (input instanceof Request ? input.method : "GET");
    const url = input instanceof Request ? input.url : String(input); // (Pyodide passes URL objects)
    const name = fileName(url);
    const watched = (options) =>
      watchedFetch(url, {
        fetchFn: realFetch,
        init: options,
        what: `${name} (part of Python)`,
        total: () => tracker.size(name),
      });
    let response =
      method === "GET" && !(input instanceof Request) ? await watched(init || {}) : await realFetch(input, init);
    if (method !== "GET" || !response.ok || !response.body) return response;
    let bytes = null;
    for (let attempt = 0; ; attempt++) {
      bytes = await countedBody(response, name, tracker);
      if (!digests[name] || (await sha256Hex(bytes)) === digests[name]) break;
      if (attempt === 1) {
        const message =
          `${name} arrived damaged twice (it does not match this build's digest): something between you and the site ` +
          "changed it (a Wi-Fi sign-in page, a proxy, a broken connection). Sign in to the network if it asks, then reload the page";
        post({ type: "error", message });
        throw new Error(message);
      }
      response = await watched({ cache: "reload" });
      if (!response.ok || !response.body) return response;
    }
    const headers = new Headers(response.headers);
    headers.delete("content-encoding"); // the body is already decoded
    headers.delete("content-length");
    if (handoff && HANDED_OFF.includes(name) && self.caches) {
      pending.push(
        caches
          .open(HANDOFF_CACHE)
          .then((cache) => cache.put(url, new Response(bytes, { status: 200, headers })))
          .catch(() => {}),
      );
    }
    const copy = new Response(bytes, { status: response.status, statusText: response.statusText, headers });
    Object.defineProperty(copy, "url", { value: response.url }); // Pyodide resolves paths against it
    return copy;
  };
}

async function countedBody(response, name, tracker) {
  const reader = response.body.getReader();
  const chunks = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    size += value.byteLength;
    tracker.add(name, value.byteLength);
  }
  tracker.report();
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return bytes;
}

// Answers a GET from `answer(url)` (a promise of the response, or of null:
// then it is fetched after all) where that gives one; the rest is fetched.
export function answering(fetchFn, answer) {
  return (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    const method = (init && init.method) || (input instanceof Request ? input.method : "GET");
    const response = method === "GET" ? answer(url) : null;
    if (!response) return fetchFn(input, init);
    return response.then((found) => found || fetchFn(input, init));
  };
}

// On a first visit, Pyodide's own downloads start at once instead of when
// loadPyodide asks for them (after the heap is chosen): each file's first GET
// is answered from the download started here.
export function prefetching(fetchFn, urls) {
  const early = new Map(
    urls.map((url) => {
      const response = fetchFn(url);
      response.catch(() => {});
      return [url, response];
    }),
  );
  return answering(fetchFn, (url) => {
    const response = early.get(url);
    early.delete(url);
    return response;
  });
}

// Served by the service worker (a repeat visit), Pyodide's files are read
// straight from Cache Storage, from the start, instead of through the service
// worker when loadPyodide asks for them (which took twice as long: 15 MB in
// 96-108 ms against 41-54 ms, bench/RESULTS.md); a file not found there is
// fetched. Each later GET of them (Pyodide's own request for the WebAssembly
// compiled ahead, whose body it never reads) is answered from there too.
// A copy whose digest is not build.json's (another page of this origin may
// have rewritten it) is not used: it is asked of the service worker instead,
// which drops it and downloads the file again.
export function fromCacheStorage(fetchFn, urls, digests = {}) {
  const checked = async (url, response) => {
    const expected = digests[fileName(url)];
    if (!response || !expected) return response || null;
    return (await sha256Hex(new Uint8Array(await response.clone().arrayBuffer()))) === expected ? response : null;
  };
  const stored = (url) =>
    caches
      .match(url)
      .then((response) => checked(url, response))
      .catch(() => null);
  const early = new Map(urls.map((url) => [url, stored(url)]));
  return answering(fetchFn, (url) => {
    if (!urls.includes(url)) return null;
    const response = early.get(url) || stored(url);
    early.delete(url);
    return response;
  });
}

// Module scripts (pyodide.mjs, pyodide.asm.mjs) arrive through import(), which
// no fetch wrapper sees: their sizes are counted from this worker's resource timing.
export function watchModuleScripts(tracker) {
  if (typeof PerformanceObserver !== "function") return;
  const counted = new Set();
  try {
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) {
        const name = fileName(entry.name);
        if (name.endsWith(".mjs") && !counted.has(name) && entry.decodedBodySize) {
          counted.add(name);
          tracker.add(name, entry.decodedBodySize);
          tracker.report();
        }
      }
    }).observe({ type: "resource", buffered: true });
  } catch {
    // no resource timing here: the percent then stops short of 100 until Python is ready
  }
}
