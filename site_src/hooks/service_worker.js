// The site's service worker (bundled by site_src/hooks/service_worker.py).
//
// Two kinds of files, two caches:
//
// * the precache: pages, styles, scripts and the small data files, listed with
//   their revisions by workbox-build in self.__WB_MANIFEST. Installing a new
//   build downloads only what changed; workbox drops entries the new list no
//   longer holds.
// * the runtime cache: models, onnxruntime and Pyodide (RUNTIME_PATTERN). They
//   are stored the first time a page uses them, never ahead of time, so a
//   learner who only reads the lesson downloads none of them. The cache's name
//   carries a digest of exactly those files in this build (RUNTIME_CACHE), so a
//   build that changes one of them starts an empty cache, and activate deletes
//   the older ones.
//
// A new worker waits until the page asks it to take over (runtime/offline.js shows "a new
// version is ready" and sends SKIP_WAITING), so one page never mixes files of
// two builds.
//
// Every runtime copy is checked against its digest in build.json (RUNTIME_DIGESTS)
// before it is stored and again before it answers a request: a host or a line
// that answered with something else (a captive portal's page, a cut download),
// or another page of the same origin that rewrote a stored file, must not leave
// a copy that breaks the lesson, or passes every Check, for good. Only the
// exact URLs of this build are stored, so requests of learner code (any other
// query string) cannot grow the cache.

import { cleanupOutdatedCaches, precacheAndRoute } from "workbox-precaching";
import { registerRoute } from "workbox-routing";
import { NetworkFirst } from "workbox-strategies";
import { clientsClaim } from "workbox-core";

/* global RUNTIME_CACHE, OTHER_CACHE, RUNTIME_PATTERN, RUNTIME_FILES, RUNTIME_DIGESTS, BUILD_FILE */
const runtimePattern = new RegExp(RUNTIME_PATTERN);
const scope = new URL(self.registration.scope);
// URL -> the SHA-256 (hex) build.json gives it: whole for a package file, its first digits for a wasm_assets file.
const DIGESTS = new Map(Object.entries(RUNTIME_DIGESTS).map(([path, digest]) => [new URL(path, scope).href, digest]));

function sitePath(url) {
  return url.origin === scope.origin && url.pathname.startsWith(scope.pathname)
    ? url.pathname.slice(scope.pathname.length)
    : null;
}

function isRuntimeFile(url) {
  const path = sitePath(url);
  return path !== null && runtimePattern.test(path);
}

// Query strings only tell the page's scripts something (?threads=2), so any
// query still finds the precached page.
precacheAndRoute(self.__WB_MANIFEST, {
  directoryIndex: "index.html",
  cleanURLs: false,
  ignoreURLParametersMatching: [/.*/],
});
cleanupOutdatedCaches();

// Only complete answers are stored: a 404 or a partial (206) response must not
// be replayed later as if it were the file.
const completeOnly = {
  cacheWillUpdate: async ({ response }) => (response && response.status === 200 ? response : null),
};

// --- Pyodide handed off by the exercise's worker ---
// On a first visit the exercise's worker downloads Pyodide before this worker
// controls the page, and leaves a copy of each file in HANDOFF_CACHE
// (site_src/js/microgpt/exercise/worker.js). A file found there is moved into
// the runtime cache instead of being downloaded a second time.
const HANDOFF_CACHE = "pyodide-handoff";
const HANDED_OFF = ["pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json"]; // what the worker fetch()es

async function fromHandoff(request, cacheName = HANDOFF_CACHE) {
  if (!(await caches.has(cacheName))) return null;
  const handoff = await caches.open(cacheName);
  const found = await handoff.match(request);
  if (!found) return null;
  await handoff.delete(request);
  const url = typeof request === "string" ? request : request.url;
  return (await storeChecked(url, found)) ? found : null;
}

// The whole set at once, when the worker has handed off every Pyodide file;
// while the cache exists, a download is (or was) under way, so nothing below
// fetches those files a second time.
async function adoptHandoff() {
  if (!(await caches.has(HANDOFF_CACHE))) return;
  const requests = await (await caches.open(HANDOFF_CACHE)).keys();
  const handed = new Set(requests.map((r) => sitePath(new URL(r.url)).split("/").pop()));
  if (!HANDED_OFF.every((name) => handed.has(name))) return;
  for (const request of requests) await fromHandoff(request);
  await caches.delete(HANDOFF_CACHE);
}

// --- end of the handoff block ---

// A page that downloaded a runtime file itself before this worker served it
// (onnxruntime's engine, a model: runtime/assets.js handOff()) leaves a copy in
// PAGE_HANDOFF; it is stored from there once checked, never downloaded again.
const PAGE_HANDOFF = "page-handoff";

async function adoptPageHandoff() {
  if (!(await caches.has(PAGE_HANDOFF))) return;
  const handoff = await caches.open(PAGE_HANDOFF);
  for (const request of await handoff.keys()) await fromHandoff(request, PAGE_HANDOFF);
}

// ------------------------------------------------------------ checked copies

async function sha256Hex(buffer) {
  const digest = await crypto.subtle.digest("SHA-256", buffer);
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

// A file coming from the network is read whole here before the page gets a
// byte of it; meanwhile the page hears how much has come (runtime/download_watch.js),
// so its progress moves and a slow file is not taken for a stalled one.
const progress = typeof BroadcastChannel === "function" ? new BroadcastChannel("mha-download-progress") : null;

async function bodyOf(url, response, told) {
  if (!told || !progress || !response.body) return response.clone().arrayBuffer();
  const reader = response.clone().body.getReader();
  const chunks = [];
  let loaded = 0;
  let said = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    loaded += value.byteLength;
    if (Date.now() - said > 100) {
      said = Date.now();
      progress.postMessage({ url, loaded });
    }
  }
  progress.postMessage({ url, loaded });
  const bytes = new Uint8Array(loaded);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return bytes;
}

// Whether `response` (a complete 200 answer; a clone of it is read) holds this build's `url`.
// told: the page is waiting for it (its progress is sent on).
async function isThisBuilds(url, response, told = false) {
  const expected = DIGESTS.get(url);
  if (!expected || !response || response.status !== 200) return false;
  try {
    return (await sha256Hex(await bodyOf(url, response, told))).startsWith(expected);
  } catch {
    return false; // the body broke off: not the file either
  }
}

// Stores `response` as `url` when it is this build's file; true when stored.
async function storeChecked(url, response, told = false) {
  if (!(await isThisBuilds(url, response, told))) return false;
  await (await caches.open(RUNTIME_CACHE)).put(url, response.clone());
  return true;
}

// What a page gets when a file came damaged twice: an answer that says so,
// which runtime/assets.js and the exercise's worker put in words.
const DAMAGED_HEADER = "X-Mha-Damaged";

function damagedAnswer(url) {
  return new Response(`${sitePath(new URL(url))} arrived damaged twice: it does not match this build's digest.`, {
    status: 502,
    statusText: "Damaged in transit",
    headers: { "Content-Type": "text/plain; charset=utf-8", [DAMAGED_HEADER]: "1" },
  });
}

// A runtime file: the stored copy when it checks out, otherwise the network's,
// checked before it is stored or handed over; a damaged answer is asked for
// once more, past the browser's HTTP cache. A file this build does not list
// (another query string: learner code, a test) goes to the network and is not stored.
async function runtimeAnswer(request) {
  const url = request.url;
  if (!DIGESTS.has(url)) return fetch(request);
  const cache = await caches.open(RUNTIME_CACHE);
  const stored = (await cache.match(url)) || (await fromHandoff(url)) || (await fromHandoff(url, PAGE_HANDOFF));
  if (stored) {
    if (await isThisBuilds(url, stored)) return stored;
    await cache.delete(url);
  }
  for (const init of [undefined, { cache: "reload" }]) {
    const response = await (init ? fetch(url, { ...init, credentials: "same-origin" }) : fetch(request));
    if (response.status !== 200) return response; // missing, partial: as it is, never stored
    if (await storeChecked(url, response, true)) return response;
  }
  return damagedAnswer(url);
}

registerRoute(
  ({ url, request }) => request.method === "GET" && isRuntimeFile(url),
  ({ request }) => runtimeAnswer(request),
);

// Anything else of this site that is not precached (downloads, test vectors):
// the network first, the last copy when offline. Not BUILD_FILE: it says which
// build is live now, so it always comes from the network (or fails offline).
registerRoute(
  ({ url, request }) => request.method === "GET" && sitePath(url) !== null && sitePath(url) !== BUILD_FILE,
  new NetworkFirst({ cacheName: OTHER_CACHE, plugins: [completeOnly] }),
);

self.addEventListener("activate", (event) => {
  event.waitUntil(
    (async () => {
      const keep = new Set([RUNTIME_CACHE, OTHER_CACHE]);
      for (const name of await caches.keys()) {
        if (name.startsWith("mha-") && !keep.has(name)) await caches.delete(name);
      }
    })(),
  );
});

// Runtime files a page or its workers (Pyodide runs in one) downloaded before
// this worker controlled them: copied from the browser's HTTP cache, and only
// from there (only-if-cached never touches the network), so a file the learner
// never used is never downloaded.
async function copyFromHttpCache() {
  await adoptHandoff();
  await adoptPageHandoff();
  const cache = await caches.open(RUNTIME_CACHE);
  for (const path of RUNTIME_FILES) {
    const url = new URL(path, scope).href;
    if (await cache.match(url)) continue;
    try {
      await storeChecked(url, await fetch(url, { cache: "only-if-cached", mode: "same-origin" }));
    } catch {
      // not in the HTTP cache: not used yet
    }
  }
  // Pyodide's core files are loaded together, by the exercise's worker, and a
  // browser may keep a large one (pyodide.asm.wasm) out of its HTTP cache: once
  // any of them was used, the others were too, so they are fetched if missing.
  for (const group of ["vendor/pyodide/"]) {
    const urls = RUNTIME_FILES.filter((path) => path.startsWith(group)).map((path) => new URL(path, scope).href);
    const have = await Promise.all(urls.map((url) => cache.match(url)));
    if (!have.some(Boolean) || (await caches.has(HANDOFF_CACHE))) continue; // (see adoptHandoff)
    for (const [i, url] of urls.entries()) {
      if (have[i]) continue;
      try {
        await storeChecked(url, await fetch(url));
      } catch {
        // offline: tried again the next time a page asks
      }
    }
  }
}

self.addEventListener("message", (event) => {
  const data = event.data || {};
  if (data.type === "SKIP_WAITING") self.skipWaiting();
  if (data.type === "CACHE_FROM_HTTP_CACHE") event.waitUntil(copyFromHttpCache());
  // Files a page loaded before this worker controlled it (the first visit):
  // store the runtime ones now, from the page's handoff or the HTTP cache, and
  // only from there: downloading one again here, while the page's own download
  // may still be on its way, fetched onnxruntime's 14 MB engine twice where the
  // HTTP cache does not keep a file that large. One it holds in neither place is
  // stored the next time a page uses it.
  if (data.type === "CACHE_USED" && Array.isArray(data.urls)) {
    event.waitUntil(
      (async () => {
        await adoptPageHandoff();
        const cache = await caches.open(RUNTIME_CACHE);
        for (const href of data.urls) {
          let url;
          try {
            url = new URL(href);
          } catch {
            continue;
          }
          if (!DIGESTS.has(url.href) || (await cache.match(url.href))) continue;
          try {
            await storeChecked(url.href, await fetch(url.href, { cache: "only-if-cached", mode: "same-origin" }));
          } catch {
            // not in the HTTP cache
          }
        }
      })(),
    );
  }
});

// The first worker takes over the open pages at once, so the files they load
// from now on are cached; later ones wait for SKIP_WAITING (see above).
self.addEventListener("install", () => {
  if (!self.registration.active) self.skipWaiting();
});
clientsClaim();
