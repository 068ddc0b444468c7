// What an exercise worker takes away from its own realm before any learner
// code runs there (python_start.js calls lockDown() just before "ready").
//
// Python gets an empty object as its `js` module, but code that reaches
// JavaScript anyway (pyodide_js) stands in this worker's realm, and from there
// it could reach what a dedicated worker can beyond its own job: storage this
// origin keeps across visits, and channels to its other pages and workers.
// Through them it could rewrite the service worker's caches (the precache
// holds verdict.js, the runtime cache Pyodide's files, pyodide-handoff what
// the service worker adopts) and so spoil every later verdict, across
// reloads; without them it can only spoil its own job, since the page
// terminates the worker after it. lockDown() removes them once this worker's
// own start-up is done with them (the handoff puts and the snapshot read).
// Attributes live on the prototypes (WorkerGlobalScope.prototype.caches,
// WorkerNavigator.prototype.storage), operations and constructors on the
// global itself, so each name goes from every object of both chains: no getter
// is left to call on self. Kept: postMessage (the page), fetch (what it
// fetches, the service worker stores only the server's own complete answers),
// WebAssembly, TextDecoder, crypto. Chromium's dedicated workers have no
// SharedWorker, cookieStore or navigator.serviceWorker; other browsers may.

const GLOBAL_CAPABILITIES = [
  "caches",
  "indexedDB",
  "cookieStore", // Cache Storage, IndexedDB, cookies
  "webkitRequestFileSystem",
  "webkitRequestFileSystemSync", // Chromium's old sandboxed file system
  "webkitResolveLocalFileSystemURL",
  "webkitResolveLocalFileSystemSyncURL",
  "Worker",
  "SharedWorker", // a new realm, with its own caches and indexedDB
  "BroadcastChannel", // messages to the site's other pages and workers
];
const NAVIGATOR_CAPABILITIES = [
  "storage", // StorageManager: the origin private file system (getDirectory), persist()
  "storageBuckets", // buckets with their own caches, indexedDB and file system
  "locks", // locks shared with the site's other pages and workers
  "serviceWorker", // the service worker itself
];

export function lockDown() {
  const scrub = (object, names) => {
    for (let o = object; o && o !== Object.prototype; o = Object.getPrototypeOf(o)) {
      for (const name of names) if (Object.hasOwn(o, name)) delete o[name];
    }
    return names.filter((name) => name in object);
  };
  const left = [...scrub(self, GLOBAL_CAPABILITIES), ...scrub(navigator, NAVIGATOR_CAPABILITIES)];
  if (left.length) throw new Error(`this browser does not let the exercise take ${left.join(", ")} away from its code`);
}
