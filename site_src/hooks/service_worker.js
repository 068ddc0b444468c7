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
// A new worker waits until the page asks it to take over (main.js shows "a new
// version is ready" and sends SKIP_WAITING), so one page never mixes files of
// two builds.

import { cleanupOutdatedCaches, precacheAndRoute } from "workbox-precaching";
import { registerRoute } from "workbox-routing";
import { CacheFirst, NetworkFirst } from "workbox-strategies";
import { clientsClaim } from "workbox-core";

/* global RUNTIME_CACHE, OTHER_CACHE, RUNTIME_PATTERN, RUNTIME_FILES, BUILD_FILE */
const runtimePattern = new RegExp(RUNTIME_PATTERN);
const scope = new URL(self.registration.scope);

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
precacheAndRoute(self.__WB_MANIFEST, { directoryIndex: "index.html", cleanURLs: false, ignoreURLParametersMatching: [/.*/] });
cleanupOutdatedCaches();

// Only complete answers are stored: a 404 or a partial (206) response must not
// be replayed later as if it were the file.
const completeOnly = { cacheWillUpdate: async ({ response }) => (response && response.status === 200 ? response : null) };

// --- Pyodide handed off by the exercise's worker ---
// On a first visit the exercise's worker downloads Pyodide before this worker
// controls the page, and leaves a copy of each file in HANDOFF_CACHE
// (site_src/js/microgpt/exercise/worker.js). A file found there is moved into
// the runtime cache instead of being downloaded a second time.
const HANDOFF_CACHE = "pyodide-handoff";
const HANDED_OFF = ["pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json"]; // what the worker fetch()es

async function fromHandoff(request) {
  if (!(await caches.has(HANDOFF_CACHE))) return null;
  const handoff = await caches.open(HANDOFF_CACHE);
  const found = await handoff.match(request);
  if (!found) return null;
  const cache = await caches.open(RUNTIME_CACHE);
  await cache.put(request, found.clone());
  await handoff.delete(request);
  return found;
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

const handedOff = { cachedResponseWillBeUsed: async ({ request, cachedResponse }) => cachedResponse || fromHandoff(request) };
// --- end of the handoff block ---

registerRoute(({ url, request }) => request.method === "GET" && isRuntimeFile(url),
  new CacheFirst({ cacheName: RUNTIME_CACHE, plugins: [completeOnly, handedOff] }));

// Anything else of this site that is not precached (downloads, test vectors):
// the network first, the last copy when offline. Not BUILD_FILE: it says which
// build is live now, so it always comes from the network (or fails offline).
registerRoute(({ url, request }) => request.method === "GET" && sitePath(url) !== null && sitePath(url) !== BUILD_FILE,
  new NetworkFirst({ cacheName: OTHER_CACHE, plugins: [completeOnly] }));

self.addEventListener("activate", (event) => {
  event.waitUntil((async () => {
    const keep = new Set([RUNTIME_CACHE, OTHER_CACHE]);
    for (const name of await caches.keys()) {
      if (name.startsWith("mha-") && !keep.has(name)) await caches.delete(name);
    }
  })());
});

// Runtime files a page or its workers (Pyodide runs in one) downloaded before
// this worker controlled them: copied from the browser's HTTP cache, and only
// from there (only-if-cached never touches the network), so a file the learner
// never used is never downloaded.
async function copyFromHttpCache() {
  await adoptHandoff();
  const cache = await caches.open(RUNTIME_CACHE);
  for (const path of RUNTIME_FILES) {
    const url = new URL(path, scope).href;
    if (await cache.match(url)) continue;
    try {
      const response = await fetch(url, { cache: "only-if-cached", mode: "same-origin" });
      if (response.status === 200) await cache.put(url, response);
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
    if (!have.some(Boolean) || await caches.has(HANDOFF_CACHE)) continue; // (see adoptHandoff)
    for (const [i, url] of urls.entries()) {
      if (have[i]) continue;
      try {
        const response = await fetch(url);
        if (response.status === 200) await cache.put(url, response);
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
  // store the runtime ones now, from the HTTP cache when it still holds them.
  if (data.type === "CACHE_USED" && Array.isArray(data.urls)) {
    event.waitUntil((async () => {
      const cache = await caches.open(RUNTIME_CACHE);
      for (const href of data.urls) {
        let url;
        try {
          url = new URL(href);
        } catch {
          continue;
        }
        if (!isRuntimeFile(url) || await cache.match(url.href)) continue;
        try {
          const response = await fetch(url.href);
          if (response.status === 200) await cache.put(url.href, response);
        } catch {
          // offline or gone: it will be stored the next time a page uses it
        }
      }
    })());
  }
});

// The first worker takes over the open pages at once, so the files they load
// from now on are cached; later ones wait for SKIP_WAITING (see above).
self.addEventListener("install", () => {
  if (!self.registration.active) self.skipWaiting();
});
clientsClaim();
