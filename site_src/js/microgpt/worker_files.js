// The files an exercise's Python worker loads (exercise/worker.js settings),
// and how its first downloads are counted and handed to the service worker.

import { fileDigest, siteUrl } from "../runtime/assets.js";

// No service worker serves this page yet (a first visit): the worker counts
// what it downloads (progress) and, where a service worker is on its way,
// leaves it a copy of each Pyodide file (so it is not downloaded twice).
export function downloads() {
  const container = globalThis.navigator && navigator.serviceWorker;
  const count = !(container && container.controller);
  return { count, handoff: Boolean(count && container && globalThis.isSecureContext && globalThis.caches) };
}

// The files an exercise worker loads (exercise/worker.js settings).
export function workerFiles() {
  return {
    indexURL: siteUrl("vendor/pyodide/"),
    modelURL: siteUrl("wasm_assets/microgpt-trained.json"),
    sandboxURL: siteUrl("pyodide/sandbox.py"),
    diagnosisURL: siteUrl("pyodide/diagnosis.py"),
    floatsURL: siteUrl("wasm_assets/microgpt_floats.py"),
    sizesURL: siteUrl("pyodide/sizes.json"),
    // The Check of an exercise of functions (the page's exercise file is its exerciseURL).
    checkerURL: siteUrl("pyodide/calls.py"),
    // What the worker checks a copy it reads from Cache Storage against (build.json's digests).
    digests: Object.fromEntries(
      ["pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json"].map((name) => [
        name,
        fileDigest(`vendor/pyodide/${name}`),
      ]),
    ),
  };
}

// The handed-off files are complete: the service worker may store them now
// (without a controller yet, runtime/offline.js asks it again once it takes over).
export function tellServiceWorker() {
  const controller = globalThis.navigator && navigator.serviceWorker && navigator.serviceWorker.controller;
  if (controller) controller.postMessage({ type: "CACHE_FROM_HTTP_CACHE" });
}

// The files of an exercise of functions: its one file (`path`, relative to
// the site) beside the shared checker and Python's own.
export function exerciseFiles(path) {
  return { ...workerFiles(), exerciseURL: siteUrl(path) };
}

// The microgpt page's: its Level 1 (diagnosis.py) and its Level 2, an exercise of functions.
export function microgptFiles() {
  return exerciseFiles("pyodide/exercises/microgpt_multi_head.py");
}
